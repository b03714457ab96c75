package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"github.com/settleflow/settleflow/storage"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/storage/sqlite"
	"go.uber.org/zap/zaptest"
)

// openDB opens the database the tests run on: SQLite in a temporary file,
// or Postgres while TestPostgres runs the suite again.
func openDB(t testing.TB) *storage.DB {
	t.Helper()
	if pgOpen != nil {
		return pgOpen(t)
	}
	db, err := sqlite.OpenDB(filepath.Join(t.TempDir(), "webhooks.db"), sqlite.OpenOptions{Synchronous: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// pgOpen, when set, opens a fresh Postgres schema instead of SQLite.
var pgOpen func(t testing.TB) *storage.DB

// fastConfig retries quickly so tests run in well under a second per retry.
func fastConfig(t testing.TB) Config {
	return Config{
		Logger:       zaptest.NewLogger(t),
		Retry:        RetryPolicy{Schedule: []time.Duration{0, 50 * time.Millisecond, 50 * time.Millisecond, 50 * time.Millisecond}},
		Timeout:      2 * time.Second,
		PollInterval: 20 * time.Millisecond,
	}
}

// newService returns a started Service that is stopped at cleanup.
func newService(t testing.TB, db *storage.DB, cfg Config) *Service {
	t.Helper()
	s, err := New(context.Background(), db, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return s
}

// newSerialService returns a Service, not started, on a database of its
// own, that sends one attempt at a time (fastConfig otherwise).
func newSerialService(t testing.TB) *Service {
	t.Helper()
	cfg := fastConfig(t)
	cfg.MaxConcurrency, cfg.MaxPerEndpoint = 1, 1
	s, err := New(context.Background(), openDB(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// captured is one request a receiver got.
type captured struct {
	Header http.Header
	Body   []byte
	At     time.Time
}

// receiver is a loopback HTTP server that records every request and answers
// with respond (200 by default). n counts requests from 1.
type receiver struct {
	*httptest.Server
	mu      sync.Mutex
	reqs    []captured
	respond func(w http.ResponseWriter, r *http.Request, n int)
}

func newReceiver(t testing.TB, respond func(w http.ResponseWriter, r *http.Request, n int)) *receiver {
	rc := newUnstartedReceiver(t, respond)
	rc.Start()
	return rc
}

// newUnstartedReceiver is newReceiver without Start, to choose the listener.
func newUnstartedReceiver(t testing.TB, respond func(w http.ResponseWriter, r *http.Request, n int)) *receiver {
	rc := &receiver{respond: respond}
	rc.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.reqs = append(rc.reqs, captured{Header: r.Header.Clone(), Body: body, At: time.Now()})
		n := len(rc.reqs)
		rc.mu.Unlock()
		if rc.respond != nil {
			r.Body = io.NopCloser(bytes.NewReader(body))
			rc.respond(w, r, n)
			return
		}
		w.Write([]byte(`{"received": true}`))
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) requests() []captured {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]captured(nil), rc.reqs...)
}

func (rc *receiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.reqs)
}

func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func testEvent(livemode bool) settleflow.Event {
	now := time.Now().UTC()
	achieved := settleflow.BasisPoints(2875)
	return settleflow.Event{
		ID:        ids.New(ids.Event, now),
		Object:    "event",
		Type:      settleflow.EventWorkflowCompleted,
		Livemode:  livemode,
		CreatedAt: now,
		Data: settleflow.EventData{
			WorkflowID: ids.New(ids.Workflow, now),
			Status:     "Settled",
			Quoted:     settleflow.Money{Amount: 1250, Currency: "usd"},
			Margin:     settleflow.Margin{Target: 3000, Achieved: &achieved},
			Result:     json.RawMessage(`{"priority":"high"}`),
		},
	}
}

func createEndpoint(t testing.TB, s *Service, env settleflow.Environment, url string) (*Endpoint, string) {
	t.Helper()
	ep, secret, err := s.CreateEndpoint(context.Background(), EndpointParams{Environment: env, URL: url})
	if err != nil {
		t.Fatal(err)
	}
	return ep, secret
}

// Independent verification, written from docs/api.md §9 without the package's
// signing code: key = base64 after "whsec_".

func testKey(t testing.TB, secret string) []byte {
	t.Helper()
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("secret %q lacks whsec_", secret)
	}
	key, err := base64.StdEncoding.DecodeString(secret[len("whsec_"):])
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// independentServiceSigs returns the v1 values of a service-signature header
// that match secret, checking the header's shape on the way.
func independentServiceMatches(t testing.TB, header string, body []byte, secret string) int {
	t.Helper()
	parts := strings.Split(header, ",")
	if !strings.HasPrefix(parts[0], "t=") {
		t.Fatalf("signature header %q does not start with t=", header)
	}
	ts := parts[0][2:]
	m := hmac.New(sha256.New, testKey(t, secret))
	m.Write([]byte(ts + "." + string(body)))
	want := hex.EncodeToString(m.Sum(nil))
	matches := 0
	for _, p := range parts[1:] {
		if !strings.HasPrefix(p, "v1=") {
			t.Fatalf("signature header part %q is not v1=", p)
		}
		if p[3:] == want {
			matches++
		}
	}
	return matches
}

func independentStandardMatches(t testing.TB, h http.Header, body []byte, secret string) int {
	t.Helper()
	m := hmac.New(sha256.New, testKey(t, secret))
	m.Write([]byte(h.Get("webhook-id") + "." + h.Get("webhook-timestamp") + "." + string(body)))
	want := "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
	matches := 0
	for _, f := range strings.Split(h.Get("webhook-signature"), " ") {
		if !strings.HasPrefix(f, "v1,") {
			t.Fatalf("webhook-signature part %q is not v1,", f)
		}
		if f == want {
			matches++
		}
	}
	return matches
}
