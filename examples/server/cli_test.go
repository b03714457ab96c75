package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// runCLI runs the command line as main does, returning stdout, stderr and
// the exit code main would give.
func runCmd(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), append([]string{"-data", dir}, args...), &out, &errOut)
	code := 0
	if err != nil {
		code = 1
		if isUsage(err) {
			code = 2
		}
		errOut.WriteString("server: " + err.Error() + "\n") // as main prints it
	}
	return out.String(), errOut.String(), code
}

// Every command and subcommand answers -h, --help and help with its usage
// on stdout and exit 0, without touching anything.
func TestHelpEverywhere(t *testing.T) {
	dir := t.TempDir()
	check := func(args []string, want string) {
		t.Helper()
		out, errOut, code := runCmd(t, dir, args...)
		if code != 0 || !strings.HasPrefix(out, "usage: server") || !strings.Contains(out, want) || errOut != "" {
			t.Errorf("server %s: exit %d, stdout %q, stderr %q; want usage naming %q on stdout, exit 0",
				strings.Join(args, " "), code, firstLine(out), errOut, want)
		}
	}
	for _, h := range []string{"-h", "--help", "help"} {
		check([]string{h}, "Commands:")
		for _, g := range groups() {
			check([]string{g.name, h}, g.summary)
			for _, s := range g.subs {
				check([]string{g.name, s.name, h}, s.summary)
				if s.nargs > 0 && h != "help" {
					// Help after the id, too: "keys revoke KEY_ID -h".
					check([]string{g.name, s.name, "key_x", h}, s.summary)
				}
			}
		}
	}
	check([]string{"help", "keys"}, "keys COMMAND")
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

func TestVersion(t *testing.T) {
	for _, arg := range []string{"version", "-version", "--version"} {
		out, _, code := runCmd(t, t.TempDir(), arg)
		if code != 0 || !strings.HasPrefix(out, "settleflow server ") || !strings.Contains(out, "go1.") {
			t.Errorf("server %s: exit %d, %q", arg, code, out)
		}
	}
}

// Usage errors exit 2 with the usage on stderr and the reason last, in one
// sentence; other errors exit 1 in one sentence, without stutter.
func TestCommandErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"keys"}, 2, "missing command"},
		{[]string{"keys", "bogus"}, 2, `unknown command "bogus"`},
		{[]string{"bogus"}, 2, `unknown command "bogus"`},
		{[]string{"keys", "revoke"}, 2, "keys revoke takes KEY_ID"},
		{[]string{"keys", "create", "--nope"}, 2, "flag provided but not defined: -nope"},
		{[]string{"webhooks", "deliveries", "--status", "done"}, 2, `--status "done"`},
		{[]string{"keys", "revoke", "key_nope"}, 1, "no such key"},
		{[]string{"webhooks", "remove", "we_nope"}, 1, "endpoint not found"},
		{[]string{"chain", "status", "--env", "live"}, 2, "chain status --env live needs -live-rpc and -live-contract"},
		{[]string{"chain", "reconcile", "--env", "live"}, 2, "chain reconcile --env live needs -live-rpc and -live-contract"},
		{[]string{"chain", "status", "--env", "prod"}, 2, `chain status --env "prod": want test or live`},
	} {
		_, errOut, code := runCmd(t, dir, c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("server %s: exit %d, stderr %q; want exit %d and %q", strings.Join(c.args, " "), code, errOut, c.code, c.want)
		}
	}
}

// keys rotate refuses a key rotated already, naming its successor, and
// makes no second successor; lists print JSON with --json.
func TestRotatedKeyHasOneSuccessor(t *testing.T) {
	dir := t.TempDir()
	out, _, code := runCmd(t, dir, "keys", "create", "--env", "test", "--name", "ci")
	if code != 0 {
		t.Fatalf("create: exit %d", code)
	}
	first := strings.Fields(out)[0]
	out, _, code = runCmd(t, dir, "keys", "rotate", first, "--expire-in", "1h")
	if code != 0 {
		t.Fatalf("rotate: exit %d", code)
	}
	second := strings.Fields(out)[0]
	_, errOut, code := runCmd(t, dir, "keys", "rotate", first)
	if code != 1 || !strings.Contains(errOut, "already rotated into "+second) || strings.Count(errOut, "apikey:") != 1 {
		t.Fatalf("rotating %s again: exit %d, %q; want refused naming %s, in one sentence", first, code, errOut, second)
	}
	out, _, code = runCmd(t, dir, "keys", "list", "--json")
	var keys []map[string]any
	if err := json.Unmarshal([]byte(out), &keys); err != nil || code != 0 {
		t.Fatalf("keys list --json: exit %d, %v\n%s", code, err, out)
	}
	if len(keys) != 2 {
		t.Fatalf("%d keys after a refused rotation, want 2", len(keys))
	}
	for _, k := range keys {
		if k["id"] == first && k["successorId"] != second {
			t.Errorf("%s: successorId %v, want %s", first, k["successorId"], second)
		}
		if strings.Contains(out, "sk_test_") && !strings.Contains(k["display"].(string), "…") {
			t.Errorf("a secret in keys list --json: %v", k)
		}
	}
	if out, _, code := runCmd(t, dir, "webhooks", "list", "--json"); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("webhooks list --json: exit %d, %q", code, out)
	}
}

// The webhook commands: add, disable, enable, rotate-secret, deliveries,
// attempts and resend on a delivery recorded for the endpoint.
func TestWebhookCommands(t *testing.T) {
	dir := t.TempDir()
	out, _, code := runCmd(t, dir, "webhooks", "add", "--env", "test", "--url", "http://127.0.0.1:9/hook")
	if code != 0 {
		t.Fatalf("add: exit %d", code)
	}
	id := strings.Fields(out)[1]
	for _, step := range [][]string{{"disable", id}, {"enable", id}} {
		if _, errOut, code := runCmd(t, dir, append([]string{"webhooks"}, step...)...); code != 0 {
			t.Fatalf("webhooks %v: exit %d %s", step, code, errOut)
		}
	}
	out, _, code = runCmd(t, dir, "webhooks", "rotate-secret", id, "--overlap", "1h")
	if code != 0 || !strings.Contains(out, "whsec_") {
		t.Fatalf("rotate-secret: exit %d %q", code, out)
	}
	out, _, code = runCmd(t, dir, "webhooks", "deliveries", "--endpoint", id, "--json")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("deliveries of a new endpoint: exit %d %q", code, out)
	}
	if _, errOut, code := runCmd(t, dir, "webhooks", "resend", "wd_nope"); code != 1 || !strings.Contains(errOut, "no finished delivery") {
		t.Fatalf("resend of an unknown delivery: exit %d %q", code, errOut)
	}
	if _, errOut, code := runCmd(t, dir, "webhooks", "attempts", "wd_nope"); code == 2 {
		t.Fatalf("attempts of an unknown delivery: a usage error: %q", errOut)
	}
}

// With the server running, it holds the embedded test chain: chain status
// and chain reconcile each fail (exit 1) with one sentence naming the command
// that was run, never another one.
func TestChainCommandsWhileServerRuns(t *testing.T) {
	dir := t.TempDir()
	startServer(t, dir)
	for _, c := range []struct{ cmd, other string }{{"status", "reconcile"}, {"reconcile", "status"}} {
		out, errOut, code := runCmd(t, dir, "chain", c.cmd, "--env", "test")
		want := "stop the server to run chain " + c.cmd
		if code != 1 || !strings.Contains(errOut, "chain "+c.cmd+" --env test: the embedded test chain is open in the running server") ||
			!strings.Contains(errOut, want) || strings.Contains(errOut, c.other) || out != "" {
			t.Errorf("chain %s with the server running: exit %d, stdout %q, stderr %q; want exit 1 and %q, without %q",
				c.cmd, code, out, errOut, want, c.other)
		}
	}
}
