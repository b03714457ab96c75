package main

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/settleflow/settleflow/httpapi"
)

// Tests of the reference server's edges (issue 10): slow clients, the plain
// HTTP redirect, failed authentications and metric labels, all through real
// TLS on loopback. Slow clients dial from other loopback addresses
// (127.0.0.2, ...), so the per-address caps see them as other clients.

// dialFrom opens a TCP connection to addr from the loopback address local
// ("" for any).
func dialFrom(t *testing.T, local, addr string) (net.Conn, error) {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second}
	if local != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(local)}
	}
	return d.Dial("tcp", addr)
}

// dialTLS opens an HTTP/1.1 TLS connection to the server from local.
func (s *server) dialTLS(local string) (*tls.Conn, error) {
	c, err := dialFrom(s.t, local, s.https)
	if err != nil {
		return nil, err
	}
	tc := tls.Client(c, &tls.Config{RootCAs: s.client.Transport.(*http.Transport).TLSClientConfig.RootCAs, ServerName: "127.0.0.1"})
	tc.SetDeadline(time.Now().Add(5 * time.Second))
	if err := tc.Handshake(); err != nil {
		c.Close()
		return nil, err
	}
	tc.SetDeadline(time.Time{})
	return tc, nil
}

// clientFrom is an HTTPS client of the server whose connections come from
// local.
func (s *server) clientFrom(local string) *http.Client {
	tr := s.client.Transport.(*http.Transport).Clone()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	tr.DialContext = d.DialContext
	return &http.Client{Timeout: 30 * time.Second, Transport: tr}
}

// trickled sends head (request line and headers) on conn, then trickles the
// body one byte every gap until stop is closed or a write fails, and reads
// the answer, giving up after wait.
func trickled(conn net.Conn, head string, gap, wait time.Duration, stop <-chan struct{}) (*http.Response, map[string]any, time.Duration, error) {
	start := time.Now()
	if _, err := io.WriteString(conn, head); err != nil {
		return nil, nil, 0, err
	}
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(gap):
			}
			if _, err := conn.Write([]byte(" ")); err != nil {
				return
			}
		}
	}()
	conn.SetReadDeadline(time.Now().Add(wait))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return nil, nil, time.Since(start), err
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		return resp, nil, time.Since(start), fmt.Errorf("body is not JSON: %w", err)
	}
	return resp, m, time.Since(start), nil
}

func postHead(key string, contentLength int) string {
	h := "POST /v1/workflows HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
		fmt.Sprintf("Content-Length: %d\r\n", contentLength)
	if key != "" {
		h += "Authorization: Bearer " + key + "\r\n"
	}
	return h + "\r\n{"
}

// checkEnvelope checks the API's error envelope: the code, and a requestId
// that is the Request-Id header.
func checkEnvelope(t *testing.T, what string, h http.Header, body map[string]any, code string) {
	t.Helper()
	e, _ := body["error"].(map[string]any)
	if e == nil || e["code"] != code || e["type"] == nil || e["message"] == nil || e["requestId"] == nil ||
		h.Get("Request-Id") == "" || e["requestId"] != h.Get("Request-Id") {
		t.Fatalf("%s: want the error envelope with code %s and Request-Id, got %v (Request-Id %q)", what, code, body, h.Get("Request-Id"))
	}
}

// Finding 4: a body trickled past the request deadline is cut at the
// deadline with 408 body_timeout, and a request without a key is answered
// 401 at once instead of after draining its trickled body.
func TestEdgeSlowBodyCutAtDeadline(t *testing.T) {
	s := startServerWith(t, t.TempDir(), "-request-timeout", "2s")
	stop := make(chan struct{})
	defer close(stop)
	type result struct {
		resp    *http.Response
		body    map[string]any
		elapsed time.Duration
		err     error
	}
	results := make([]result, 2)
	var wg sync.WaitGroup
	for i, key := range []string{s.firstKey, ""} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := s.dialTLS("")
			if err != nil {
				results[i].err = err
				return
			}
			defer conn.Close()
			r := &results[i]
			r.resp, r.body, r.elapsed, r.err = trickled(conn, postHead(key, 4096), 100*time.Millisecond, 8*time.Second, stop)
		}()
	}
	wg.Wait()
	authed, anon := results[0], results[1]
	if authed.err != nil || anon.err != nil {
		t.Fatalf("no answer to a trickled body: with key after %v: %v; without after %v: %v", authed.elapsed, authed.err, anon.elapsed, anon.err)
	}
	if authed.resp.StatusCode != http.StatusRequestTimeout || authed.elapsed < 1500*time.Millisecond || authed.elapsed > 4*time.Second {
		t.Fatalf("trickled body with a key: %d after %v, want 408 at the 2 s deadline", authed.resp.StatusCode, authed.elapsed)
	}
	checkEnvelope(t, "trickled body", authed.resp.Header, authed.body, "body_timeout")
	if anon.resp.StatusCode != http.StatusUnauthorized || anon.elapsed > time.Second || !anon.resp.Close {
		t.Fatalf("trickled body without a key: %d after %v (close %v), want 401 at once, closing", anon.resp.StatusCode, anon.elapsed, anon.resp.Close)
	}
	checkEnvelope(t, "401", anon.resp.Header, anon.body, "api_key_missing")
}

// Finding 4 over HTTP/2, which the HTTPS listener also speaks: a trickled
// body is cut at the deadline with 408 body_timeout on its stream, and a
// request without a key is answered 401 at once.
func TestEdgeSlowBodyHTTP2(t *testing.T) {
	s := startServerWith(t, t.TempDir(), "-request-timeout", "2s")
	tr := s.client.Transport.(*http.Transport).Clone()
	tr.ForceAttemptHTTP2 = true
	client := &http.Client{Transport: tr, Timeout: 8 * time.Second}
	defer tr.CloseIdleConnections()
	stop := make(chan struct{})
	defer close(stop)
	for _, c := range []struct {
		key         string
		status      int
		code        string
		early, late time.Duration
	}{
		{s.firstKey, http.StatusRequestTimeout, "body_timeout", 1500 * time.Millisecond, 4 * time.Second},
		{"", http.StatusUnauthorized, "api_key_missing", 0, time.Second},
	} {
		pr, pw := io.Pipe()
		go func() {
			defer pw.Close()
			io.WriteString(pw, "{")
			for {
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
				if _, err := io.WriteString(pw, " "); err != nil {
					return
				}
			}
		}()
		req, _ := http.NewRequest("POST", "https://"+s.https+"/v1/workflows", pr)
		req.ContentLength = 4096
		req.Header.Set("Content-Type", "application/json")
		if c.key != "" {
			req.Header.Set("Authorization", "Bearer "+c.key)
		}
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("key %v: no answer to a trickled body after %v: %v", c.key != "", time.Since(start), err)
		}
		var body map[string]any
		err = json.NewDecoder(resp.Body).Decode(&body)
		elapsed := time.Since(start)
		resp.Body.Close()
		pr.CloseWithError(io.ErrClosedPipe)
		if err != nil || resp.ProtoMajor != 2 || resp.StatusCode != c.status || elapsed < c.early || elapsed > c.late {
			t.Fatalf("key %v: %s %d after %v (%v), want HTTP/2 %d within [%v, %v]", c.key != "", resp.Proto, resp.StatusCode, elapsed, err, c.status, c.early, c.late)
		}
		checkEnvelope(t, c.code, resp.Header, body, c.code)
	}
}

// Finding 6: the 308 goes to the configured HTTPS address whatever Host the
// client sent, and its body is the error envelope, valid JSON however the
// URL is spelt.
func TestEdgeRedirectEnvelope(t *testing.T) {
	s := startServer(t, t.TempDir())
	conn, err := dialFrom(t, "", s.http)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	uri := `/v1/workflows?a="},"x":1&b=\`
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: evil.example:8443\r\n\r\n", uri)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	want := "https://" + s.https + uri
	if resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Location") != want {
		t.Fatalf("redirect: %d to %q, want 308 to %q", resp.StatusCode, resp.Header.Get("Location"), want)
	}
	var body map[string]map[string]any
	if err := json.Unmarshal(raw, &body); err != nil || len(body) != 1 || body["error"] == nil {
		t.Fatalf("308 body is not the error envelope: %v: %s", err, raw)
	}
	e := body["error"]
	if _, injected := e["x"]; injected || len(e) != 4 || e["message"] != "Use HTTPS: "+want {
		t.Fatalf("308 body: %s", raw)
	}
	checkEnvelope(t, "308", resp.Header, map[string]any{"error": e}, "https_required")
	if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("308 without X-Content-Type-Options: nosniff: %v", resp.Header)
	}
}

// waitOffMinuteEdge keeps a test counting in a minute window away from the
// window's end, where its count would start again.
func waitOffMinuteEdge() {
	if sec := time.Now().Second(); sec >= 50 {
		time.Sleep(time.Duration(61-sec) * time.Second)
	}
}

// Finding 8: failed authentications are limited per client address with the
// headers and 429 of key limits; a valid key from the same address and bad
// keys from another address are not held back.
func TestEdgeAuthFailuresLimited(t *testing.T) {
	s := startServerWith(t, t.TempDir(), "-auth-failures-per-minute", "5")
	waitOffMinuteEdge()
	bad := "sk_test_" + strings.Repeat("x", 40)
	for i := 1; i <= 5; i++ {
		status, h, body := s.do("GET", "/v1/products", bad, "")
		if status != 401 || h.Get("X-RateLimit-Limit") != "5" || h.Get("X-RateLimit-Remaining") != fmt.Sprint(5-i) ||
			h.Get("RateLimit-Policy") != `"minute";q=5;w=60` || h.Get("RateLimit") == "" || h.Get("X-RateLimit-Reset") == "" {
			t.Fatalf("failure %d: %d %v, limit headers %v", i, status, body, h)
		}
	}
	status, h, body := s.do("GET", "/v1/products", bad, "")
	if status != 429 || h.Get("Retry-After") == "" || h.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("6th failure: %d %v %v, want 429 with Retry-After", status, body, h)
	}
	checkEnvelope(t, "429", h, body, "rate_limit_exceeded")
	if body["error"].(map[string]any)["type"] != "rate_limit_error" {
		t.Fatalf("429 type: %v", body)
	}
	if status, _, body := s.do("GET", "/v1/products", s.firstKey, ""); status != 200 {
		t.Fatalf("a valid key from the limited address: %d %v", status, body)
	}
	req, _ := http.NewRequest("GET", "https://"+s.https+"/v1/products", nil)
	req.Header.Set("Authorization", "Bearer "+bad)
	resp, err := s.clientFrom("127.0.0.2").Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || resp.Header.Get("X-RateLimit-Remaining") != "4" {
		t.Fatalf("another address: %d remaining %s, want 401 with its own budget", resp.StatusCode, resp.Header.Get("X-RateLimit-Remaining"))
	}
}

// freePort returns a loopback address nothing listens on (for -metrics).
func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

var metricLine = regexp.MustCompile(`^settleflow_http_request(?:s_total|_duration_seconds_count)\{(.*)\} `)

// Finding 11: made-up methods and paths add no metric series: every label
// takes its value from a closed set.
func TestEdgeMetricLabelsBounded(t *testing.T) {
	metrics := freePort(t)
	s := startServerWith(t, t.TempDir(), "-metrics", metrics)
	for i := 0; i < 20; i++ {
		for _, m := range []string{fmt.Sprintf("FOO%d", i), "GET"} {
			req, _ := http.NewRequest(m, fmt.Sprintf("https://%s/v1/made-up-%d/x", s.https, i), nil)
			resp, err := s.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
	}
	s.do("GET", "/v1/workflows/wf_nope", s.firstKey, "")
	s.do("GET", "/v1/products", s.firstKey, "")
	resp, err := http.Get("http://" + metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	methods := map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true, "OPTIONS": true, "other": true}
	routes := map[string]bool{"other": true}
	for _, p := range openAPIPaths(t) {
		routes[p] = true
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(string(raw), "\n") {
		m := metricLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for _, kv := range strings.Split(m[1], ",") {
			k, v, _ := strings.Cut(kv, "=")
			v = strings.Trim(v, `"`)
			seen[k+"="+v] = true
			if (k == "method" && !methods[v]) || (k == "route" && !routes[v]) {
				t.Fatalf("unbounded label %s=%q in %s", k, v, line)
			}
		}
	}
	for _, want := range []string{"method=other", "route=other", "route=/v1/workflows/{id}", "route=/v1/products", "code=404"} {
		if !seen[want] {
			t.Fatalf("metrics miss %s:\n%s", want, raw)
		}
	}
}

// openAPIPaths are the API's route patterns, as its OpenAPI document lists
// them.
func openAPIPaths(t *testing.T) []string {
	t.Helper()
	var doc struct {
		Paths map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(httpapi.OpenAPI(), &doc); err != nil || len(doc.Paths) == 0 {
		t.Fatalf("OpenAPI paths: %v", err)
	}
	var paths []string
	for p := range doc.Paths {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths
}

// A connection over the per-address cap is closed at accept; other
// addresses are served.
func TestEdgeConnectionCapPerAddress(t *testing.T) {
	s := startServerWith(t, t.TempDir(), "-max-conns-per-ip", "3")
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for i := 0; i < 3; i++ {
		c, err := s.dialTLS("127.0.0.2")
		if err != nil {
			t.Fatalf("connection %d under the cap: %v", i+1, err)
		}
		held = append(held, c)
	}
	if c, err := s.dialTLS("127.0.0.2"); err == nil {
		c.Close()
		t.Fatal("a 4th connection from one address completed its handshake")
	}
	if status, _, _ := s.do("GET", "/v1/products", s.firstKey, ""); status != 200 {
		t.Fatalf("another address: %d", status)
	}
	held[0].Close()
	held = held[1:]
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := s.dialTLS("127.0.0.2")
		if err == nil {
			held = append(held, c)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a slot was not given back: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func p99(d []time.Duration) time.Duration {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[(len(d)*99+99)/100-1]
}

// 50 connections trickling bodies and 50 trickling headers do not delay
// normal requests beyond twice their usual p99, and shutdown completes
// within its grace period while they still trickle. The timeouts (5 s) are
// longer than the measurement, so that it sees the trickling only, not the
// slow clients' handshakes: the measurement starts once every one of them
// has sent its head, and none is cut and reconnects before it ends.
func TestEdgeSlowClients(t *testing.T) {
	dir := t.TempDir()
	key := strings.Fields(cli(t, dir, "keys", "create", "--env", "test", "--name", "load", "--plan", "pro"))[1]
	const grace = time.Second
	s := startServerWith(t, dir, "-request-timeout", "5s", "-read-header-timeout", "5s", "-shutdown-grace", grace.String())
	// 200 samples, so that p99 (the third slowest) does not rest on one or
	// two requests a busy machine happened to stall.
	const samples = 200
	measure := func(n int) []time.Duration {
		var d []time.Duration
		for i := 0; i < n; i++ {
			start := time.Now()
			if status, _, body := s.do("GET", "/v1/products", key, ""); status != 200 {
				t.Fatalf("normal request: %d %v", status, body)
			}
			d = append(d, time.Since(start))
		}
		return d
	}
	measure(10) // warm up the connection and the key cache
	base := p99(measure(samples))
	limit := 2 * max(base, 50*time.Millisecond)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	// trickling counts the slow connections that have sent their head and
	// are trickling the rest; rounds counts those answered or cut.
	var trickling, rounds atomic.Int64
	slow := func(local, head string) {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			c, err := dialFrom(t, local, s.https)
			if err != nil {
				return // the server has shut down
			}
			tc := tls.Client(c, &tls.Config{RootCAs: s.client.Transport.(*http.Transport).TLSClientConfig.RootCAs, ServerName: "127.0.0.1"})
			if tc.Handshake() != nil {
				c.Close()
				continue
			}
			if _, err := io.WriteString(tc, head); err != nil {
				tc.Close()
				continue
			}
			trickling.Add(1)
			// The answer (408, or EOF at the header timeout) ends a round.
			trickled(tc, "", 100*time.Millisecond, 10*time.Second, stop)
			trickling.Add(-1)
			rounds.Add(1)
			tc.Close()
		}
	}
	for i := 0; i < 50; i++ {
		wg.Add(2)
		go slow("127.0.0.2", postHead(key, 1<<16))
		go slow("127.0.0.3", "GET /v1/products HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
	}
	for deadline := time.Now().Add(10 * time.Second); trickling.Load() < 100; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of 100 slow connections are trickling", trickling.Load())
		}
	}
	loaded := p99(measure(samples))
	if n, r := trickling.Load(), rounds.Load(); n < 100 || r != 0 {
		t.Fatalf("%d slow connections trickling and %d ended during the measurement, want 100 and 0", n, r)
	}
	t.Logf("normal requests' p99: %v alone, %v beside 100 slow connections (limit %v)", base, loaded, limit)
	if loaded > limit {
		t.Fatalf("p99 %v beside slow clients, over %v (twice the %v baseline, floor 50ms)", loaded, limit, base)
	}

	// Shutdown while they still trickle.
	start := time.Now()
	s.stop()
	select {
	case err := <-s.done:
		s.done <- err
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("shutdown held by slow clients")
	}
	took := time.Since(start)
	if took > grace+time.Second {
		t.Fatalf("shutdown took %v, grace %v", took, grace)
	}
	// The server closed the slow connections at the end of the grace, rather
	// than leaving them to their own timeouts (5 s) after run returned.
	for trickling.Load() > 0 {
		if time.Since(start) > grace+time.Second {
			t.Fatalf("%d slow connections still open %v after shutdown began (grace %v)", trickling.Load(), time.Since(start), grace)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("shutdown took %v (grace %v); every slow connection closed after %v", took, grace, time.Since(start))
	close(stop)
	wg.Wait()
}
