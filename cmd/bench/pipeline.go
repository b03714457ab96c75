package main

// -suite pipeline: the whole pipeline as a user's system sees it. The
// reference server runs in a process of its own, built from this tree (or
// -server-bin); this command is the load generator (-connections keep-alive
// HTTPS/1.1 connections) and the webhook receiver (HTTPS on loopback,
// offering HTTP/2, verifying both signature schemes of every delivery and
// counting distinct workflow.completed events). Each round:
//
//  1. burst: -n creates as fast as the connections go; create throughput and
//     p50/p99, verified webhooks per second (n over the time from the first
//     create to the last distinct webhook) and create→webhook p50/p99;
//  2. steady: -rate creates per second for -steady (open loop: each request
//     leaves at its scheduled time, and latencies count from that time, so a
//     stalled server cannot hide its queue); create→webhook p50/p99 over the
//     whole run and p99 of its first and last thirds, which show growth;
//  3. the baseline: the engine alone end to end (no-op product, instant
//     settlement, in this process, the server stopped), as -suite engine.
//
// The server's product is the demo catalogue's image-moderation (30 ms of
// pretend work) with -workers 1000, and its test settlement runs on the
// embedded simulated chain, as `go run ./examples/server` does.

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/benchmark"
	"github.com/settleflow/settleflow/storage/sqlite"
	"github.com/settleflow/settleflow/webhook"
)

type pipelineConfig struct {
	n, rounds, connections int
	rate                   int
	steady                 time.Duration
	serverBin              string
	keep                   bool
	// instances, pgDSN, geth: with pgDSN, the servers run on Postgres (a
	// fresh database each round) and settle on a geth --dev chain; that many
	// of them share it (scaleout.go).
	instances int
	pgDSN     string
	geth      string
}

type pipelineResult struct {
	createPerSec, createP50, createP99 float64 // burst; latencies in ms
	hooksPerSec, hookP50, hookP99      float64 // burst; create→webhook in ms
	steadyP50, steadyP99               float64 // steady, ms
	steadyFirstP99, steadyLastP99      float64
	steadyCreateP99                    float64
	engineE2E                          float64
	h2Share                            float64
	maxInflight                        int64
	duplicates                         int64
	serverCPU, clientCPU               float64 // CPU per workflow, µs: the server's, and this process's (load and receiver) in the burst
}

func runPipeline(c pipelineConfig) error {
	ctx := context.Background()
	work, err := os.MkdirTemp("", "settleflow-pipeline-")
	if err != nil {
		return err
	}
	if !c.keep {
		defer os.RemoveAll(work)
	}
	bin := c.serverBin
	if bin == "" {
		bin = filepath.Join(work, "settleflow-server")
		fmt.Fprintln(os.Stderr, "building ./examples/server ...")
		cmd := exec.Command("go", "build", "-o", bin, "./examples/server")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("build the server (run from the repository root): %w", err)
		}
	}
	where := "SQLite, the embedded chain"
	if c.pgDSN != "" {
		where = fmt.Sprintf("%d instance(s) on one Postgres database, geth --dev", c.instances)
	}
	fmt.Printf("pipeline: n=%d, %d connections, steady %d/s for %v; server %s; %s\n", c.n, c.connections, c.rate, c.steady, bin, where)
	fmt.Printf("%-6s %9s %8s %8s %9s %8s %8s | %8s %8s %8s %8s %8s | %9s %6s %5s | %7s %7s\n",
		"round", "create/s", "p50ms", "p99ms", "hooks/s", "c→w p50", "c→w p99",
		"st p50", "st p99", "1st p99", "3rd p99", "cr p99", "engine/s", "ratio", "h2", "srv µs", "load µs")
	var rs []pipelineResult
	for r := 0; r < c.rounds; r++ {
		dir := filepath.Join(work, fmt.Sprintf("round%d", r+1))
		res, err := pipelineRound(ctx, c, bin, dir)
		if err != nil {
			return fmt.Errorf("round %d: %w (its files are in %s)", r+1, err, dir)
		}
		printPipeline(fmt.Sprint(r+1), res)
		rs = append(rs, res)
	}
	med := func(get func(pipelineResult) float64) float64 { return medianOf(rs, get) }
	printPipeline("median", pipelineResult{
		createPerSec:    med(func(r pipelineResult) float64 { return r.createPerSec }),
		createP50:       med(func(r pipelineResult) float64 { return r.createP50 }),
		createP99:       med(func(r pipelineResult) float64 { return r.createP99 }),
		hooksPerSec:     med(func(r pipelineResult) float64 { return r.hooksPerSec }),
		hookP50:         med(func(r pipelineResult) float64 { return r.hookP50 }),
		hookP99:         med(func(r pipelineResult) float64 { return r.hookP99 }),
		steadyP50:       med(func(r pipelineResult) float64 { return r.steadyP50 }),
		steadyP99:       med(func(r pipelineResult) float64 { return r.steadyP99 }),
		steadyFirstP99:  med(func(r pipelineResult) float64 { return r.steadyFirstP99 }),
		steadyLastP99:   med(func(r pipelineResult) float64 { return r.steadyLastP99 }),
		steadyCreateP99: med(func(r pipelineResult) float64 { return r.steadyCreateP99 }),
		engineE2E:       med(func(r pipelineResult) float64 { return r.engineE2E }),
		h2Share:         med(func(r pipelineResult) float64 { return r.h2Share }),
		serverCPU:       med(func(r pipelineResult) float64 { return r.serverCPU }),
		clientCPU:       med(func(r pipelineResult) float64 { return r.clientCPU }),
	})
	fmt.Printf("ratio: verified webhooks/s ÷ engine-only end-to-end/s of the same round, median %.2f\n",
		med(func(r pipelineResult) float64 { return r.hooksPerSec / r.engineE2E }))
	return nil
}

func printPipeline(label string, r pipelineResult) {
	fmt.Printf("%-6s %9.0f %8.1f %8.1f %9.0f %8.0f %8.0f | %8.0f %8.0f %8.0f %8.0f %8.1f | %9.0f %6.2f %5.2f | %7.0f %7.0f\n",
		label, r.createPerSec, r.createP50, r.createP99, r.hooksPerSec, r.hookP50, r.hookP99,
		r.steadyP50, r.steadyP99, r.steadyFirstP99, r.steadyLastP99, r.steadyCreateP99,
		r.engineE2E, r.hooksPerSec/r.engineE2E, r.h2Share, r.serverCPU, r.clientCPU)
}

// receiver is the webhook endpoint: it verifies every delivery with both
// schemes and records when each workflow's workflow.completed first arrived.
type receiver struct {
	secret   atomic.Pointer[string]
	mu       sync.Mutex
	arrived  map[string]time.Time
	dups     atomic.Int64
	bad      atomic.Int64
	requests atomic.Int64
	h2       atomic.Int64
	inflight atomic.Int64
	maxIn    atomic.Int64
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := rc.inflight.Add(1)
	defer rc.inflight.Add(-1)
	for m := rc.maxIn.Load(); n > m && !rc.maxIn.CompareAndSwap(m, n); m = rc.maxIn.Load() {
	}
	rc.requests.Add(1)
	if r.ProtoMajor == 2 {
		rc.h2.Add(1)
	}
	body, err := io.ReadAll(r.Body)
	secret := rc.secret.Load()
	if err != nil || secret == nil {
		http.Error(w, "not ready", http.StatusServiceUnavailable)
		return
	}
	ev, err := webhook.ConstructEvent(body, r.Header.Get(webhook.DefaultSignatureHeader), *secret)
	if err == nil {
		err = webhook.VerifyStandard(body, r.Header, *secret)
	}
	if err != nil {
		rc.bad.Add(1)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if ev.Type == settleflow.EventWorkflowCompleted {
		now := time.Now()
		rc.mu.Lock()
		if _, dup := rc.arrived[ev.Data.WorkflowID]; dup {
			rc.dups.Add(1)
		} else {
			rc.arrived[ev.Data.WorkflowID] = now
		}
		rc.mu.Unlock()
	}
	w.WriteHeader(http.StatusNoContent)
}

// sent is one acknowledged create: when it was due to leave, and how long
// the server took to acknowledge it.
type sent struct {
	id      string
	due     time.Time
	latency time.Duration
}

func pipelineRound(ctx context.Context, c pipelineConfig, bin, dir string) (pipelineResult, error) {
	var res pipelineResult
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return res, err
	}
	rc, hook, caFile, err := startReceiver(dir)
	if err != nil {
		return res, err
	}
	defer hook.Close()

	var (
		key, secret string
		flags       []string
	)
	if c.pgDSN != "" {
		var cleanup func()
		var err error
		if flags, key, secret, cleanup, err = setUpScaleOut(ctx, c, bin, dir, hook.URL+"/hook"); err != nil {
			return res, err
		}
		defer cleanup()
	} else {
		out, err := exec.Command(bin, "-data", dir, "keys", "create", "--env", "test", "--name", "bench",
			"--plan", "enterprise", "--per-minute", "100000000", "--per-day", "1000000000").CombinedOutput()
		if err != nil {
			return res, fmt.Errorf("keys create: %v: %s", err, out)
		}
		if key = regexp.MustCompile(`sk_test_[A-Za-z0-9]+`).FindString(string(out)); key == "" {
			return res, fmt.Errorf("keys create printed no key: %s", out)
		}
		out, err = exec.Command(bin, "-data", dir, "webhooks", "add", "--env", "test", "--url", hook.URL+"/hook").CombinedOutput()
		if err != nil {
			return res, fmt.Errorf("webhooks add: %v: %s", err, out)
		}
		if secret = regexp.MustCompile(`whsec_[A-Za-z0-9+/=]+`).FindString(string(out)); secret == "" {
			return res, fmt.Errorf("webhooks add printed no secret: %s", out)
		}
	}
	rc.secret.Store(&secret)

	var (
		srvs    []*server
		clients []*http.Client
	)
	defer func() {
		for _, srv := range srvs {
			srv.stop()
		}
	}()
	for i := range max(c.instances, 1) {
		sdir := dir
		if c.pgDSN != "" {
			sdir = filepath.Join(dir, fmt.Sprintf("instance%d", i+1))
		}
		srv, err := startServer(bin, sdir, caFile, flags...)
		if err != nil {
			return res, err
		}
		srvs = append(srvs, srv)
		client, err := srv.client(max(c.connections/len(srvs), 1))
		if err != nil {
			return res, err
		}
		clients = append(clients, client)
	}
	var next atomic.Uint64
	create := func(due time.Time) (sent, error) {
		i := int(next.Add(1) % uint64(len(srvs)))
		srv, client := srvs[i], clients[i]
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.url+"/v1/workflows",
			strings.NewReader(`{"product":"image-moderation","customerId":"cus_bench","payload":{"imageUrls":["https://example.com/a.png"]}}`))
		if err != nil {
			return sent{}, err
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return sent{}, err
		}
		defer resp.Body.Close()
		var wf struct {
			ID string `json:"id"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&wf); err != nil || resp.StatusCode != http.StatusCreated {
			return sent{}, fmt.Errorf("create: HTTP %d (%v)", resp.StatusCode, err)
		}
		return sent{id: wf.ID, due: due, latency: time.Since(due)}, nil
	}

	// 1. Burst: closed loop.
	cpu0 := selfCPU()
	start := time.Now()
	burst, err := closedLoop(c.n, c.connections, func() (sent, error) { return create(time.Now()) })
	if err != nil {
		return res, err
	}
	lastAck := time.Now()
	if err := waitArrived(rc, burst, 2*time.Minute); err != nil {
		return res, err
	}
	hooks := sorted(delays(rc, burst))
	lastHook := start
	rc.mu.Lock()
	for _, s := range burst {
		lastHook = later(lastHook, rc.arrived[s.id])
	}
	rc.mu.Unlock()
	res.clientCPU = float64((selfCPU() - cpu0).Microseconds()) / float64(c.n)
	lat := latencies(burst)
	res.createPerSec = float64(c.n) / lastAck.Sub(start).Seconds()
	res.createP50, res.createP99 = ms(pct(lat, 50)), ms(pct(lat, 99))
	res.hooksPerSec = float64(c.n) / lastHook.Sub(start).Seconds()
	res.hookP50, res.hookP99 = ms(pct(hooks, 50)), ms(pct(hooks, 99))

	// 2. Steady: open loop at c.rate for c.steady.
	if c.rate > 0 && c.steady > 0 {
		steady, err := openLoop(c.rate, c.steady, c.connections, create)
		if err != nil {
			return res, err
		}
		if err := waitArrived(rc, steady, 2*time.Minute); err != nil {
			return res, err
		}
		all := delays(rc, steady) // in schedule order
		third := len(steady) / 3
		res.steadyFirstP99 = ms(pct(sorted(all[:third]), 99))
		res.steadyLastP99 = ms(pct(sorted(all[len(all)-third:]), 99))
		all = sorted(all)
		res.steadyP50, res.steadyP99 = ms(pct(all, 50)), ms(pct(all, 99))
		res.steadyCreateP99 = ms(pct(latencies(steady), 99))
	}
	res.h2Share = float64(rc.h2.Load()) / float64(max(rc.requests.Load(), 1))
	res.maxInflight = rc.maxIn.Load()
	res.duplicates = rc.dups.Load()
	if bad := rc.bad.Load(); bad > 0 {
		return res, fmt.Errorf("%d deliveries failed verification", bad)
	}
	total := c.n + c.rate*int(c.steady.Seconds())
	for _, srv := range srvs {
		if err := srv.stop(); err != nil {
			return res, err
		}
		if st := srv.cmd.ProcessState; st != nil {
			res.serverCPU += float64((st.UserTime() + st.SystemTime()).Microseconds()) / float64(total)
		}
	}

	// 3. The engine alone, the server stopped.
	e, err := benchmark.OpenEngine(filepath.Join(dir, "engine-only.db"), sqlite.SyncFull)
	if err != nil {
		return res, err
	}
	res.engineE2E, err = measure(c.n, func() error { return benchmark.EndToEnd(ctx, e, c.n, 64) })
	e.Close()
	return res, err
}

// closedLoop runs n calls over conns goroutines, each calling again as soon
// as its last call returned.
func closedLoop(n, conns int, call func() (sent, error)) ([]sent, error) {
	jobs := make(chan int, n)
	for i := range n {
		jobs <- i
	}
	close(jobs)
	return pool(n, conns, jobs, func(int) (sent, error) { return call() })
}

// openLoop sends rate calls per second for d, each due at its scheduled
// time whether or not earlier calls have returned (as long as one of conns
// connections is free: a call that has to wait for one is late, and its
// latency counts from when it was due).
func openLoop(rate int, d time.Duration, conns int, call func(due time.Time) (sent, error)) ([]sent, error) {
	n := int(d.Seconds() * float64(rate))
	interval := time.Second / time.Duration(rate)
	start := time.Now().Add(50 * time.Millisecond)
	dueAt := func(i int) time.Time { return start.Add(time.Duration(i) * interval) }
	jobs := make(chan int, n)
	go func() {
		for i := range n {
			time.Sleep(time.Until(dueAt(i)))
			jobs <- i
		}
		close(jobs)
	}()
	return pool(n, conns, jobs, func(i int) (sent, error) { return call(dueAt(i)) })
}

// pool runs call for each job on conns goroutines and returns the results
// by job, with the first error.
func pool(n, conns int, jobs <-chan int, call func(i int) (sent, error)) ([]sent, error) {
	out := make([]sent, n)
	var wg sync.WaitGroup
	var first error
	var once sync.Once
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				s, err := call(i)
				if err != nil {
					once.Do(func() { first = err })
					continue
				}
				out[i] = s
			}
		}()
	}
	wg.Wait()
	return out, first
}

func waitArrived(rc *receiver, ss []sent, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		missing := 0
		rc.mu.Lock()
		for _, s := range ss {
			if _, ok := rc.arrived[s.id]; !ok {
				missing++
			}
		}
		rc.mu.Unlock()
		if missing == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d workflow.completed webhooks did not arrive within %v", missing, len(ss), timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// delays are create→webhook times, in the order of ss.
func delays(rc *receiver, ss []sent) []time.Duration {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make([]time.Duration, len(ss))
	for i, s := range ss {
		out[i] = rc.arrived[s.id].Sub(s.due)
	}
	return out
}

func latencies(ss []sent) []time.Duration {
	out := make([]time.Duration, len(ss))
	for i, s := range ss {
		out[i] = s.latency
	}
	return sorted(out)
}

func sorted(d []time.Duration) []time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	return d
}

func pct(sortedD []time.Duration, p int) time.Duration {
	if len(sortedD) == 0 {
		return 0
	}
	return sortedD[min(len(sortedD)-1, len(sortedD)*p/100)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// selfCPU is this process's CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// server is the reference server in its own process.
type server struct {
	cmd      *exec.Cmd
	url      string
	certFile string
	done     chan error
	stopped  bool
}

func startServer(bin, dir, caFile string, extra ...string) (*server, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, append([]string{"-data", dir, "-https", "127.0.0.1:0", "-http", "",
		"-max-conns-per-ip", "0", "-auth-failures-per-minute", "0", "-workers", "1000", "-log-level", "warn"}, extra...)...)
	// The deliverer trusts the receiver's certificate as a receiver's users
	// would arrange it: through the system's certificate file.
	cmd.Env = append(os.Environ(), "SSL_CERT_FILE="+caFile)
	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		return nil, err
	}
	cmd.Stderr = logf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, done: make(chan error, 1)}
	listening := regexp.MustCompile(`listening on (https://\S+) \(certificate (.+)\)`)
	found := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				found <- m
			}
		}
		s.done <- cmd.Wait()
		logf.Close()
	}()
	select {
	case m := <-found:
		s.url, s.certFile = m[1], m[2]
		return s, nil
	case err := <-s.done:
		s.stopped = true
		return nil, fmt.Errorf("server exited at start (%v); see %s", err, logf.Name())
	case <-time.After(time.Minute):
		s.stop()
		return nil, errors.New("server did not start within a minute")
	}
}

// client is a load generator with conns keep-alive HTTP/1.1 connections
// that trusts the server's certificate.
func (s *server) client(conns int) (*http.Client, error) {
	pemBytes, err := os.ReadFile(s.certFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemBytes) {
		return nil, fmt.Errorf("no certificate in %s", s.certFile)
	}
	return &http.Client{Timeout: time.Minute, Transport: &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: pool},
		MaxIdleConnsPerHost: conns,
		MaxConnsPerHost:     conns,
		IdleConnTimeout:     time.Minute,
	}}, nil
}

// stop ends the server with SIGTERM, as an operator would.
func (s *server) stop() error {
	if s.stopped {
		return nil
	}
	s.stopped = true
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		return err
	case <-time.After(90 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
		return errors.New("server did not stop within 90 s of SIGTERM")
	}
}

// startReceiver starts a webhook receiver over TLS (HTTP/2) and writes its
// certificate to dir/receiver-ca.pem: the receiver, its server (the caller
// closes it) and the certificate file's path.
func startReceiver(dir string) (*receiver, *httptest.Server, string, error) {
	rc := &receiver{arrived: map[string]time.Time{}}
	hook := httptest.NewUnstartedServer(rc)
	hook.EnableHTTP2 = true
	hook.StartTLS()
	caFile := filepath.Join(dir, "receiver-ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hook.Certificate().Raw}), 0o600); err != nil {
		hook.Close()
		return nil, nil, "", err
	}
	return rc, hook, caFile, nil
}
