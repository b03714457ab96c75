package main

import (
	"strings"
	"testing"
	"time"

	"github.com/settleflow/settleflow/internal/pgtest"
)

// The reference server on Postgres: keys made by the command line on the
// same database work, a workflow settles and its key's last use shows, the
// limits live in the database; a second instance on the database with its
// own embedded chain is refused at start, so no charge is settled on two
// chains.
func TestServerOnPostgres(t *testing.T) {
	pg := pgtest.Connect(t)
	dsn := pg.SchemaDSN(t, "server_test")
	dir := t.TempDir()
	out := cli(t, dir, "-postgres", dsn, "keys", "create", "--env", "test", "--name", "pg", "--plan", "enterprise", "--per-minute", "3", "--per-day", "1000")
	key := strings.Fields(out)[1]
	poller := strings.Fields(cli(t, dir, "-postgres", dsn, "keys", "create", "--env", "test", "--name", "poller"))[1]
	s := startServerWith(t, dir, "-postgres", dsn)
	status, _, wf := s.do("POST", "/v1/workflows", key, `{"product":"ticket-triage","customerId":"cus_pg","payload":{"ticketId":"T-9"}}`)
	if status != 201 {
		t.Fatalf("create: %d %v", status, wf)
	}
	id := wf["id"].(string)
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, _, got := s.do("GET", "/v1/workflows/"+id, poller, "")
		if got["status"] == "Settled" {
			break
		}
		if got["status"] == "Failed" || time.Now().After(deadline) {
			t.Fatalf("workflow: %v", got)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The only instance holds the settlement lease, and says so.
	if status, _, h := s.do("GET", "/healthz", "", ""); status != 200 || h["settlementSender"] != true {
		t.Fatalf("GET /healthz: %d %v; want settlementSender true", status, h)
	}
	// Three requests a minute, kept in the database: the create and two
	// more pass, the fourth is refused (unless the minute turned between).
	var limited bool
	for range 7 {
		if status, h, _ := s.do("GET", "/v1/workflows/"+id, key, ""); status == 429 && h.Get("Retry-After") != "" {
			limited = true
			break
		}
	}
	if !limited {
		t.Fatal("a key allowed 3 requests a minute was never answered 429")
	}
	keyID := strings.Fields(out)[0]
	list := cli(t, dir, "-postgres", dsn, "keys", "list")
	var line string
	for _, l := range strings.Split(list, "\n") {
		if strings.HasPrefix(l, keyID) {
			line = l
		}
	}
	if line == "" || strings.Contains(line, "never") {
		t.Fatalf("keys list on Postgres: want %s with its last use:\n%s", keyID, list)
	}
	// A second instance on the same database, with its own data directory
	// and so its own embedded chain: refused.
	err := run(t.Context(), []string{"-data", t.TempDir(), "-postgres", dsn, "-https", "127.0.0.1:0", "-http", "", "-log-level", "error"}, &syncBuffer{}, &syncBuffer{})
	if err == nil || !strings.Contains(err.Error(), "embedded chain") {
		t.Fatalf("a second instance with an embedded chain: %v; want it refused", err)
	}
}
