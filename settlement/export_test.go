package settlement

// FreePort is freePort for the external tests (engine_crash_test.go).
var FreePort = freePort
