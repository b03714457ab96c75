package dbcount

// Kind is kind, for tests.
var Kind = kind
