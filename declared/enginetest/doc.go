// Package enginetest holds the test of declared products on a real engine
// (SQLite, the simulated chain, the HTTP API). It is apart from package
// declared so that the parser's fuzz target is built without the engine's
// dependencies, which would slow every fuzz execution.
package enginetest
