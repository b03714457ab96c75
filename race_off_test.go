//go:build !race

package settleflow_test

// raceSlowdown widens timing bounds under the race detector (1: off).
const raceSlowdown = 1
