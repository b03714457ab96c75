//go:build !linux

package client_test

import "os/exec"

// dieWithParent has no portable equivalent off Linux; TestMain's cleanup
// stops the server when the suite ends normally.
func dieWithParent(*exec.Cmd) {}
