package server_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/oklog/ulid/v2"
	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/client"
	"github.com/settleflow/settleflow/server"
)

// echo is the test catalogue's payload.
type echo struct {
	Text string `json:"text"`
}

// products is a catalogue of one fixed-price product, "echo", whose
// executions wait for gate (closed: at once) or their ctx.
func products(t testing.TB, gate <-chan struct{}) *settleflow.Products {
	t.Helper()
	ps := settleflow.NewProducts()
	err := settleflow.Register(ps, settleflow.Product[echo]{
		Name: "echo", Description: "Says the text again.",
		Price:    settleflow.Price{TargetMargin: 2000, MinimumCharge: 10},
		Estimate: func(e echo) (int64, error) { return 100, nil },
		Execute: func(ctx context.Context, e echo) (settleflow.Execution, error) {
			select {
			case <-gate:
				return settleflow.Execution{ActualCost: 90, Result: map[string]any{"text": e.Text}}, nil
			case <-ctx.Done():
				return settleflow.Execution{}, ctx.Err()
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// open is a gate that is open.
func open() <-chan struct{} { c := make(chan struct{}); close(c); return c }

// settle waits until every workflow of ids is Settled on the embedded
// chain (chain id 1337), reading it over the API.
func settle(t *testing.T, c *client.Client, ids ...string) {
	t.Helper()
	ctx := t.Context()
	deadline := time.Now().Add(60 * time.Second)
	for _, id := range ids {
		for {
			wf, err := c.Workflows.Fetch(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if wf.Status == settleflow.Settled {
				if wf.Settlement == nil || wf.Settlement.ChainID != 1337 || wf.Settlement.TxHash == "" {
					t.Fatalf("%s settled without its transaction: %+v", id, wf.Settlement)
				}
				break
			}
			if wf.Status.Terminal() || time.Now().After(deadline) {
				t.Fatalf("%s: %s, want Settled", id, wf.Status)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// A Config of products, a data directory and a free port builds the whole
// server with every other default: SQLite and a self-signed certificate in
// the data directory, the embedded chain, no redirect or metrics listener.
// A workflow created with the Go client over real TLS on loopback settles
// on the chain; Stop ends it all and frees the data directory.
func TestDefaultsServeOverTLS(t *testing.T) {
	dir := t.TempDir()
	// New and Start write Output before they return: a Buffer will do.
	var out bytes.Buffer
	s, err := server.New(t.Context(), server.Config{Products: products(t, open()), DataDir: dir, Addr: "127.0.0.1:0",
		Output: &out, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if s.Addr() != "" || s.URL() != "" {
		t.Fatalf("before Start: Addr %q, URL %q; want none", s.Addr(), s.URL())
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(context.Background()) })
	if err := s.Start(t.Context()); !errors.Is(err, server.ErrStarted) {
		t.Fatalf("a second Start: %v, want ErrStarted", err)
	}
	for _, f := range []string{"settleflow.db", "worker-id", "chain", filepath.Join("tls", "cert.pem"), filepath.Join("tls", "key.pem")} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the data directory has no %s: %v", f, err)
		}
	}
	key := s.FirstStartKey()
	if !strings.HasPrefix(key, "sk_test_") || s.CertFile() != filepath.Join(dir, "tls", "cert.pem") ||
		s.URL() != "https://"+s.Addr() || s.RedirectAddr() != "" || s.MetricsAddr() != "" {
		t.Fatalf("key %q, cert %s, URL %s, Addr %s, redirect %q, metrics %q", key, s.CertFile(), s.URL(), s.Addr(), s.RedirectAddr(), s.MetricsAddr())
	}
	for _, want := range []string{"created test API key", key, "test settlement: chain 1337",
		"listening on https://" + s.Addr() + " (certificate " + s.CertFile() + ")", "dashboard: sign in at " + s.URL() + "/dashboard/"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("Output misses %q:\n%s", want, out.String())
		}
	}

	c := client.New(key, client.WithBaseURL(s.URL()), client.WithRootCAs(s.RootCAs()))
	wf, err := c.Workflows.Create(t.Context(), &client.WorkflowCreateParams{Product: "echo", CustomerID: "cus_1", Payload: map[string]any{"text": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	settle(t, c, wf.ID)
	// Health, over the same TLS.
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: s.RootCAs()}}}
	resp, err := hc.Get(s.URL() + "/healthz")
	if err != nil || resp.StatusCode != 200 || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("GET /healthz: %v %v", resp, err)
	}
	resp.Body.Close()
	// The customer portal: a link from the API, under the server's URL,
	// opens the portal's sign-in page.
	req, _ := http.NewRequest("POST", s.URL()+"/v1/customers/cus_1/portal_sessions", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err = hc.Do(req)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST portal_sessions: %v %v", resp, err)
	}
	var ps struct{ URL string }
	json.NewDecoder(resp.Body).Decode(&ps)
	resp.Body.Close()
	if !strings.HasPrefix(ps.URL, s.URL()+"/portal/signin?token=") {
		t.Fatalf("portal link %q", ps.URL)
	}
	resp, err = hc.Get(ps.URL)
	if err != nil || resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Fatalf("GET the portal link: %v %v", resp, err)
	}
	resp.Body.Close()

	if err := s.Stop(t.Context()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if conn, err := net.DialTimeout("tcp", s.Addr(), time.Second); err == nil {
		conn.Close()
		t.Fatal("the HTTPS port still accepts connections after Stop")
	}
	if err := s.Start(t.Context()); !errors.Is(err, server.ErrStopped) {
		t.Fatalf("Start after Stop: %v, want ErrStopped", err)
	}
	// Stop closed the database: another server opens it, and its start is
	// not the first.
	out.Reset()
	again, err := server.New(t.Context(), server.Config{Products: products(t, open()), DataDir: dir, Output: &out})
	if err != nil {
		t.Fatalf("New on the data directory after Stop: %v", err)
	}
	defer again.Stop(context.Background())
	if again.FirstStartKey() != "" || out.String() != "" {
		t.Fatalf("the second start made a key: %q %q", again.FirstStartKey(), out.String())
	}
}

// A Config value New refuses is a *ConfigError naming the field, and New
// opens nothing: the data directory is not even made.
func TestConfigErrors(t *testing.T) {
	ps := products(t, open())
	for _, c := range []struct {
		name  string
		cfg   func(*server.Config)
		field string
		want  string
	}{
		{"no products", func(c *server.Config) { c.Products = nil }, "Products", "is required"},
		{"addr without port", func(c *server.Config) { c.Addr = "127.0.0.1" }, "Addr", `"127.0.0.1": want host:port`},
		{"redirect addr", func(c *server.Config) { c.RedirectAddr = "localhost" }, "RedirectAddr", "want host:port"},
		{"metrics addr", func(c *server.Config) { c.MetricsAddr = "http://x:1" }, "MetricsAddr", "want host:port"},
		{"public addr with a scheme", func(c *server.Config) { c.PublicAddr = "https://api.example.com" }, "PublicAddr", "without scheme or path"},
		{"cert without key", func(c *server.Config) { c.TLSCert = "cert.pem" }, "TLSCert", "and Config.TLSKey go together"},
		{"key without cert", func(c *server.Config) { c.TLSKey = "key.pem" }, "TLSCert", "and Config.TLSKey go together"},
		{"faucet over the maximum", func(c *server.Config) { c.TestFaucet = settleflow.MaxAmount + 1 }, "TestFaucet", fmt.Sprintf("want at most %d", settleflow.MaxAmount)},
		{"negative workers", func(c *server.Config) { c.Workers = -1 }, "Workers", "want a positive number"},
		{"negative execution timeout", func(c *server.Config) { c.ExecutionTimeout = -time.Second }, "ExecutionTimeout", "want a positive duration"},
		{"negative request timeout", func(c *server.Config) { c.RequestTimeout = -time.Second }, "RequestTimeout", "want a positive duration"},
		{"negative read header timeout", func(c *server.Config) { c.ReadHeaderTimeout = -time.Second }, "ReadHeaderTimeout", "want a positive duration"},
		{"negative idle timeout", func(c *server.Config) { c.IdleTimeout = -time.Second }, "IdleTimeout", "want a positive duration"},
		{"negative shutdown grace", func(c *server.Config) { c.ShutdownGrace = -time.Second }, "ShutdownGrace", "want a positive duration"},
		{"negative ready lag", func(c *server.Config) { c.ReadyMaxLag = -time.Second }, "ReadyMaxLag", "want a positive duration"},
		{"explorer over http", func(c *server.Config) {
			c.Explorers = map[settleflow.Environment]string{settleflow.Test: "http://explorer.example/tx/"}
		}, "Explorers", `[test] "http://explorer.example/tx/": want an https:// URL prefix`},
		{"explorer of no environment", func(c *server.Config) {
			c.Explorers = map[settleflow.Environment]string{"prod": "https://explorer.example/tx/"}
		}, "Explorers", `has environment "prod": want test or live`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			cfg := server.Config{Products: ps, DataDir: dir, Addr: "127.0.0.1:0"}
			c.cfg(&cfg)
			s, err := server.New(t.Context(), cfg)
			var ce *server.ConfigError
			if s != nil || !errors.As(err, &ce) || ce.Field != c.field || !strings.Contains(err.Error(), c.want) ||
				!strings.HasPrefix(err.Error(), "server: Config."+c.field+" ") {
				t.Fatalf("New: %v, %v; want a ConfigError of %s saying %q", s, err, c.field, c.want)
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("New refused the Config but made the data directory: %v", err)
			}
		})
	}
}

// A New or a Start that fails midway closes what it opened: the data
// directory's database is free for the next server.
func TestFailedStartsLeaveNothingOpen(t *testing.T) {
	dir := t.TempDir()
	ps := products(t, open())
	_, err := server.New(t.Context(), server.Config{Products: ps, DataDir: dir, TLSCert: filepath.Join(dir, "none.pem"), TLSKey: filepath.Join(dir, "none.key")})
	if err == nil || !strings.HasPrefix(err.Error(), "tls: ") || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("New with a missing certificate: %v", err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	s, err := server.New(t.Context(), server.Config{Products: ps, DataDir: dir, Addr: busy.Addr().String()})
	if err != nil {
		t.Fatalf("New after a failed New: %v", err)
	}
	if err := s.Run(t.Context()); err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("Run on a port in use: %v", err)
	}
	if err := s.Start(t.Context()); !errors.Is(err, server.ErrStopped) {
		t.Fatalf("Start after a failed Run: %v, want ErrStopped", err)
	}
	s, err = server.New(t.Context(), server.Config{Products: ps, DataDir: dir, Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatalf("New after a failed Run: %v", err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// Stop with a ctx that ends while executions hang cuts them short — Stop
// returns soon after, with ctx's error — and loses nothing the API
// acknowledged: the next server on the data directory runs and settles
// every workflow created.
func TestStopCutShortLosesNothing(t *testing.T) {
	dir := t.TempDir()
	s, err := server.New(t.Context(), server.Config{Products: products(t, make(chan struct{})), DataDir: dir, Addr: "127.0.0.1:0",
		Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	key := s.FirstStartKey()
	c := client.New(key, client.WithBaseURL(s.URL()), client.WithRootCAs(s.RootCAs()))
	var ids []string
	for i := range 20 {
		wf, err := c.Workflows.Create(t.Context(), &client.WorkflowCreateParams{Product: "echo", CustomerID: fmt.Sprintf("cus_%d", i%3),
			Payload: map[string]any{"text": fmt.Sprint(i)}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, wf.ID)
	}
	// Every one is claimed, none can finish.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		wf, err := c.Workflows.Fetch(t.Context(), ids[0])
		if err != nil {
			t.Fatal(err)
		}
		if wf.Status == settleflow.Running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still %s", ids[0], wf.Status)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := s.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Stop with hanging executions: %v, want the deadline's error", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("Stop took %v past a 300ms ctx", took)
	}

	again, err := server.New(t.Context(), server.Config{Products: products(t, open()), DataDir: dir, Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := again.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer again.Stop(context.Background())
	settle(t, client.New(key, client.WithBaseURL(again.URL()), client.WithRootCAs(again.RootCAs())), ids...)
}

// offsetClock is the wall clock moved by d: a clock no part of the server
// could agree with by reading the wall clock itself.
type offsetClock struct{ d time.Duration }

func (c offsetClock) Now() time.Time { return time.Now().Add(c.d).UTC() }

// ulidTime is the time of the ULID that ends id (after its last '_').
func ulidTime(t *testing.T, id string) time.Time {
	t.Helper()
	u, err := ulid.ParseStrict(id[strings.LastIndexByte(id, '_')+1:])
	if err != nil {
		t.Fatalf("%q does not end in a ULID: %v", id, err)
	}
	return ulid.Time(u.Time()).UTC()
}

// Config.Clock is the one clock of the whole server: the engine's
// timestamps, the API's request ids, the health check's time and the
// worker id all read it, not the wall clock.
func TestConfigClockIsTheOneClock(t *testing.T) {
	const d = 400 * 24 * time.Hour
	dir := t.TempDir()
	s, err := server.New(t.Context(), server.Config{Products: products(t, open()), DataDir: dir, Addr: "127.0.0.1:0",
		Logger: zaptest.NewLogger(t), Clock: offsetClock{d}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(context.Background()) })
	// within reports whether at is on the offset clock between from and to
	// (wall times), to the millisecond of a ULID.
	within := func(what string, at, from, to time.Time) {
		t.Helper()
		lo, hi := from.Add(d).Truncate(time.Millisecond), to.Add(d)
		if at.Before(lo) || at.After(hi) {
			t.Errorf("%s is %s, want it on Config.Clock, between %s and %s", what, at, lo, hi)
		}
	}
	started := time.Now()

	c := client.New(s.FirstStartKey(), client.WithBaseURL(s.URL()), client.WithRootCAs(s.RootCAs()))
	before := time.Now()
	wf, err := c.Workflows.Create(t.Context(), &client.WorkflowCreateParams{Product: "echo", CustomerID: "cus_1", Payload: map[string]any{"text": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	within("the workflow's createdAt", wf.CreatedAt, before, after)
	within("the workflow id's time", ulidTime(t, wf.ID), before, after)

	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: s.RootCAs()}}}
	before = time.Now()
	resp, err := hc.Get(s.URL() + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	var health struct {
		CheckedAt time.Time `json:"checkedAt"`
	}
	err = json.NewDecoder(resp.Body).Decode(&health)
	resp.Body.Close()
	after = time.Now()
	if err != nil {
		t.Fatal(err)
	}
	within("/readyz's checkedAt", health.CheckedAt, before, after)

	before = time.Now()
	resp, err = hc.Get(s.URL() + "/v1/workflows") // no key: 401, with its Request-Id
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	after = time.Now()
	within("the API's Request-Id time", ulidTime(t, resp.Header.Get("Request-Id")), before, after)

	worker, err := os.ReadFile(filepath.Join(dir, "worker-id"))
	if err != nil {
		t.Fatal(err)
	}
	within("the worker id's time", ulidTime(t, strings.TrimSpace(string(worker))), started.Add(-time.Minute), after)
}
