package client_test

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill the reference server if the test
// process dies first (a timeout's panic, a kill), so no server outlives the
// suite.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
