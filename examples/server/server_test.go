package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/webhook"
)

// server is the reference server running in-process on loopback ports.
type server struct {
	t         *testing.T
	dir       string
	https     string
	http      string
	client    *http.Client
	firstKey  string
	stop      context.CancelFunc
	done      chan error
	stdoutBuf *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var (
	listenLine   = regexp.MustCompile(`listening on https://(\S+)`)
	redirectLine = regexp.MustCompile(`redirecting http://(\S+) to HTTPS`)
	keyLine      = regexp.MustCompile(`(?m)^\s+(sk_test_[0-9A-Za-z]+)$`)
)

// cli runs a subcommand on the data directory and returns its stdout.
func cli(t *testing.T, dir string, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := run(context.Background(), append([]string{"-data", dir}, args...), &out, &errOut); err != nil {
		t.Fatalf("server %v: %v\n%s", args, err, errOut.String())
	}
	return out.String()
}

func startServer(t *testing.T, dir string) *server {
	t.Helper()
	return startServerWith(t, dir)
}

// startServerWith starts the server with extra flags (short timeouts, small
// limits) after the defaults startServer uses.
func startServerWith(t *testing.T, dir string, extraArgs ...string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	s := &server{t: t, dir: dir, stop: cancel, done: make(chan error, 1), stdoutBuf: &syncBuffer{}}
	go func() {
		args := append([]string{"-data", dir, "-https", "127.0.0.1:0", "-http", "127.0.0.1:0", "-log-level", "warn"}, extraArgs...)
		err := run(ctx, args, pw, io.Discard)
		pw.Close()
		s.done <- err
	}()
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		line := sc.Text()
		s.stdoutBuf.Write([]byte(line + "\n"))
		if m := keyLine.FindStringSubmatch(line); m != nil {
			s.firstKey = m[1]
		}
		if m := listenLine.FindStringSubmatch(line); m != nil {
			s.https = m[1]
		}
		if m := redirectLine.FindStringSubmatch(line); m != nil {
			s.http = m[1]
			break
		}
	}
	go io.Copy(io.Discard, pr)
	if s.https == "" || s.http == "" {
		t.Fatalf("server did not start: %s", s.stdoutBuf.String())
	}
	pem, err := os.ReadFile(filepath.Join(dir, "tls", "cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	s.client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	t.Cleanup(func() { s.shutdown() })
	return s
}

func (s *server) shutdown() error {
	s.stop()
	select {
	case err := <-s.done:
		s.done <- err
		return err
	case <-time.After(60 * time.Second):
		s.t.Fatal("server did not shut down")
		return nil
	}
}

func (s *server) do(method, path, key, body string) (int, http.Header, map[string]any) {
	s.t.Helper()
	status, header, b := s.send(method, path, key, body)
	var m map[string]any
	json.Unmarshal(b, &m)
	return status, header, m
}

// raw sends a request and returns the status and the exact response bytes,
// so a test can check them with a parser stricter than encoding/json's
// lenient defaults.
func (s *server) raw(method, path, key, body string) (int, []byte) {
	s.t.Helper()
	status, _, b := s.send(method, path, key, body)
	return status, b
}

func (s *server) send(method, path, key, body string) (int, http.Header, []byte) {
	s.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, "https://"+s.https+path, rd)
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// The README's path: first start prints a test key; a workflow created over
// HTTPS settles on the simulated chain and its signed workflow.completed
// webhook reaches a receiver, verified with ConstructEvent.
func TestReferenceServerEndToEnd(t *testing.T) {
	dir := t.TempDir()
	// A webhook receiver, registered before the server starts.
	var mu sync.Mutex
	var secret string
	events := make(chan settleflow.Event, 10)
	bodies := map[string][]byte{} // by webhook-id: what each delivery carried
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies[r.Header.Get("webhook-id")] = body
		mu.Unlock()
		mu.Lock()
		sec := secret
		mu.Unlock()
		ev, err := webhook.ConstructEvent(body, r.Header.Get("service-signature"), sec)
		if err != nil {
			http.Error(w, `{"error":"bad signature"}`, 400)
			return
		}
		events <- ev
		w.Write([]byte(`{"received": true}`))
	}))
	defer recv.Close()
	sec := addEndpoint(t, dir, recv.URL)
	mu.Lock()
	secret = sec
	mu.Unlock()
	if list := cli(t, dir, "webhooks", "list"); !strings.Contains(list, recv.URL) || strings.Contains(list, "whsec_") {
		t.Fatalf("webhooks list: %s", list)
	}

	s := startServer(t, dir)
	if s.firstKey == "" {
		t.Fatalf("first start printed no test key: %s", s.stdoutBuf.String())
	}
	status, h, wf := s.do("POST", "/v1/workflows", s.firstKey, `{"product":"ticket-triage","customerId":"cus_42","payload":{"ticketId":"T-1","subject":"Refund please","attachments":2}}`)
	if status != 201 || wf["status"] != "Pending" || h.Get("Request-Id") == "" {
		t.Fatalf("create: %d %v", status, wf)
	}
	id := wf["id"].(string)
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, _, got := s.do("GET", "/v1/workflows/"+id, s.firstKey, "")
		if got["status"] == "Settled" {
			settlement, _ := got["settlement"].(map[string]any)
			margin, _ := got["margin"].(map[string]any)
			if settlement["chainId"] != float64(1337) || settlement["txHash"] == "" || margin["achieved"] == nil {
				t.Fatalf("settled workflow: %v", got)
			}
			break
		}
		if got["status"] == "Failed" || time.Now().After(deadline) {
			t.Fatalf("workflow ended %v", got)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The faucet's customer.funded comes first; then the workflow's.
	var ev settleflow.Event
	for ev.Type != settleflow.EventWorkflowCompleted {
		select {
		case ev = <-events:
			if ev.Type == settleflow.EventCustomerFunded && ev.Data.CustomerID != wf["customerId"] {
				t.Fatalf("customer.funded for another customer: %+v", ev)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("no workflow.completed webhook within 30 s")
		}
	}
	{
		if ev.Type != settleflow.EventWorkflowCompleted || ev.Data.WorkflowID != id || ev.Data.Margin.Achieved == nil {
			t.Fatalf("event: %+v", ev)
		}
		// A receiver that was down reads the same event back, byte for byte.
		mu.Lock()
		delivered := bodies[ev.ID]
		mu.Unlock()
		status, read := s.raw("GET", "/v1/events/"+ev.ID, s.firstKey, "")
		if status != 200 || !bytes.Equal(bytes.TrimSuffix(read, []byte("\n")), delivered) {
			t.Fatalf("GET /v1/events/%s: %d\n%s\nthe delivery carried\n%s", ev.ID, status, read, delivered)
		}
		status, listed := s.raw("GET", "/v1/events?workflowId="+id, s.firstKey, "")
		if status != 200 || !bytes.Contains(listed, delivered) {
			t.Fatalf("GET /v1/events?workflowId=%s: %d %s", id, status, listed)
		}
	}
	// Live is not configured: 403.
	liveKey := strings.Fields(cli(t, dir, "keys", "create", "--env", "live", "--name", "live"))[1]
	if status, _, body := s.do("GET", "/v1/workflows", liveKey, ""); status != 403 || body["error"].(map[string]any)["code"] != "livemode_not_configured" {
		t.Fatalf("live key: %d %v", status, body)
	}
}

// keys subcommands on the data directory of a running server take effect
// within seconds.
func TestKeysCommandsWhileRunning(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	created := strings.Fields(cli(t, dir, "keys", "create", "--env", "test", "--name", "ci", "--plan", "pro"))
	if len(created) != 2 || !strings.HasPrefix(created[0], "key_") || !strings.HasPrefix(created[1], "sk_test_") {
		t.Fatalf("keys create printed %v", created)
	}
	id, secret := created[0], created[1]
	if status, h, _ := s.do("GET", "/v1/products", secret, ""); status != 200 || h.Get("X-RateLimit-Limit") != "1000" {
		t.Fatalf("new pro key: %d limit %s", status, h.Get("X-RateLimit-Limit"))
	}
	list := cli(t, dir, "keys", "list")
	if !strings.Contains(list, id) || strings.Contains(list, secret) || strings.Contains(list, s.firstKey) {
		t.Fatalf("keys list shows a secret or misses the key:\n%s", list)
	}
	rotated := strings.Fields(cli(t, dir, "keys", "rotate", id, "--expire-in", "now"))
	next := rotated[1]
	cli(t, dir, "keys", "revoke", rotated[0])
	want := map[string]string{secret: "api_key_expired", next: "api_key_revoked"}
	deadline := time.Now().Add(10 * time.Second)
	for key, code := range want {
		for {
			status, _, body := s.do("GET", "/v1/products", key, "")
			if status == 401 && body["error"].(map[string]any)["code"] == code {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("key still answered %d %v, want 401 %s", status, body, code)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// A second server on a data directory in use fails at start, naming the
// cause, and leaves the first one serving.
func TestSecondServerOnSameDataDirRefused(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	var errOut bytes.Buffer
	err := run(context.Background(), []string{"-data", dir, "-https", "127.0.0.1:0", "-http", "127.0.0.1:0", "-log-level", "warn"}, io.Discard, &errOut)
	if err == nil || !strings.Contains(err.Error(), "another store has it open") {
		t.Fatalf("second server: %v; want refused because the database is in use", err)
	}
	if status, _, _ := s.do("GET", "/v1/products", s.firstKey, ""); status != 200 {
		t.Fatalf("first server after the refusal: %d", status)
	}
}

// Plain HTTP is redirected with 308 to the same path over HTTPS; TLS below
// 1.2 is refused.
func TestRedirectAndTLSVersions(t *testing.T) {
	s := startServer(t, t.TempDir())
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Post("http://"+s.http+"/v1/workflows?x=1", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	_, port, _ := strings.Cut(s.https, ":")
	if resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Location") != fmt.Sprintf("https://127.0.0.1:%s/v1/workflows?x=1", port) {
		t.Fatalf("redirect: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	for _, v := range []uint16{tls.VersionTLS10, tls.VersionTLS11} {
		conn, err := tls.Dial("tcp", s.https, &tls.Config{InsecureSkipVerify: true, MinVersion: v, MaxVersion: v})
		if err == nil {
			conn.Close()
			t.Fatalf("a TLS %x handshake succeeded", v)
		}
		// The server refused it, not our client.
		if !strings.Contains(err.Error(), "remote error") {
			t.Fatalf("TLS %x failed on the client side, not refused by the server: %v", v, err)
		}
	}
	for v, name := range map[uint16]string{tls.VersionTLS12: "1.2", tls.VersionTLS13: "1.3"} {
		conn, err := tls.Dial("tcp", s.https, &tls.Config{RootCAs: s.client.Transport.(*http.Transport).TLSClientConfig.RootCAs, MinVersion: v, MaxVersion: v, ServerName: "127.0.0.1"})
		if err != nil {
			t.Fatalf("TLS %s refused: %v", name, err)
		}
		conn.Close()
	}
	// Graceful shutdown returns cleanly.
	if err := s.shutdown(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

// addEndpoint registers a test webhook endpoint at url with the command line
// (global flags first) and returns the signing secret it printed once.
func addEndpoint(t *testing.T, dir, url string, global ...string) string {
	t.Helper()
	out := cli(t, dir, append(global, "webhooks", "add", "--env", "test", "--url", url)...)
	m := regexp.MustCompile(`(whsec_\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("webhooks add printed no secret: %s", out)
	}
	return m[1]
}
