//go:build race

package settleflow_test

// raceSlowdown widens timing bounds under the race detector, which slows
// the pure-Go SQLite driver and every goroutine hand-off unevenly.
const raceSlowdown = 3
