// Package sdk_test runs the Node.js and Python client libraries' own test
// suites from `go test ./...`, so that the README's one test command (and
// CI) covers all three clients. Each suite builds the reference server from
// this repository and runs against it on loopback. That server charges
// customer balances (its embedded test chain), so the suites run with
// SETTLEFLOW_TEST_FUNDS=require unless the environment sets it otherwise:
// a test of customer funds or refunds that would skip fails instead.
package sdk_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// fundsEnv, "require", makes the suites fail where a test of customer funds
// would skip for a server that does not charge customer balances.
const fundsEnv = "SETTLEFLOW_TEST_FUNDS"

func run(t *testing.T, dir string, timeout time.Duration, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	if _, set := os.LookupEnv(fundsEnv); !set {
		cmd.Env = append(cmd.Env, fundsEnv+"=require")
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v in %s: %v\n%s", name, args, dir, err, out)
	}
	if testing.Verbose() {
		t.Logf("%s %v:\n%s", name, args, out)
	}
}

func need(t *testing.T, tool string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		t.Fatalf("%s is not on PATH; the client suites need it (see README, Set up)", tool)
	}
}

// TestNode runs sdk/node's suite (`node --test`) and type-checks its
// declarations and a typed usage file with tsc, which `npm ci` in sdk/node
// installs (.ci/run does).
func TestNode(t *testing.T) {
	need(t, "node")
	t.Run("suite", func(t *testing.T) {
		run(t, "node", 5*time.Minute, "node", "--test")
	})
	t.Run("types", func(t *testing.T) {
		if _, err := os.Stat(filepath.Join("node", "node_modules", ".bin", "tsc")); err != nil {
			t.Skip("skipping the TypeScript check: sdk/node/node_modules is absent; run `npm ci` in sdk/node (.ci/run does)")
		}
		run(t, "node", 2*time.Minute, "npm", "run", "--silent", "typecheck")
	})
}

// TestPython runs sdk/python's suite with warnings as errors.
func TestPython(t *testing.T) {
	need(t, "python3")
	run(t, "python", 5*time.Minute, "python3", "-X", "dev", "-W", "error", "-m", "unittest", "discover", "-s", "tests", "-t", ".")
}
