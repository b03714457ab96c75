package main

// -suite workers: a no-op declared product run in process beside the same
// product served remotely by Python worker processes (issue 38). Each round
// runs both sides, one after the other (their order alternates from round
// to round), each on a server of its own:
//
//   - the reference server's composition (package server: SQLite
//     synchronous=FULL, the embedded simulated chain, HTTPS on loopback,
//     signed webhooks), in this process, selling one product declared in a
//     products file (package declared): "noop", a fixed price, an estimate
//     of one cent; in process its Executor returns at once, remote it is
//     left to workers (settleflow.Product.Remote, its estimate the declared
//     one, its payload checked by the declared schema as RegisterRaw does);
//   - remote: -python processes running cmd/bench/workers.py, the Python
//     SDK's Worker (concurrency -python-concurrency) with a handler that
//     returns at once, claiming over HTTPS with a worker key;
//   - the webhook receiver of -suite pipeline (HTTPS on loopback, both
//     signature schemes verified, distinct workflow.completed counted) and
//     the load (-connections keep-alive HTTPS connections), in this process.
//
// Per side: a warm-up of 64 workflows (the customer's faucet deposit, the
// workers' connections), then a burst of -n creates as fast as the
// connections go: verified webhooks per second = n over the time from the
// first create to the last distinct webhook. The ratio remote ÷ in process
// is taken per round. Then -probes workflows one at a time on idle workers
// (each created once the last one's webhook arrived and 20 ms more passed):
// the time from sending the create (and from its 201) to the handler's
// start, in the Python process (its "started" line) or in process.
//
// Each side's CPU per workflow in the burst is printed too: this process's
// (server, load and receiver) and the Python workers' (/proc/PID/stat).
// "cpu ratio" is in process ÷ remote of their sums: the rate ratio to
// expect where the CPU is all there is (the rates' own ratio depends on the
// share of a busy machine each side gets: four more processes get more).

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	_ "embed"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/apikey"
	"github.com/settleflow/settleflow/declared"
	sfserver "github.com/settleflow/settleflow/server"
	"github.com/settleflow/settleflow/webhook"
)

//go:embed workers.py
var workerScript []byte

// noopProducts is the bench's products file: one no-op product.
const noopProducts = `{"products": [{
  "name": "noop",
  "description": "Does nothing: the bench's product.",
  "payloadSchema": {"type": "object", "properties": {"probe": {"type": "boolean"}}, "additionalProperties": false},
  "example": {},
  "pricing": {"model": "fixed", "targetMargin": 0},
  "pricingSummary": "1 cent",
  "estimate": {"base": 1}
}]}`

type workersConfig struct {
	n, rounds, connections int
	python, concurrency    int
	probes                 int
	cpuprofile             string
	// pyprofile, set, profiles the Python workers (cProfile, every
	// thread) into pyprofile.PID.
	pyprofile string
}

type workersSide struct {
	hooksPerSec  float64
	fromSend     []time.Duration // create sent → handler started
	fromAnswer   []time.Duration // create's 201 → handler started
	goCPU, pyCPU float64         // CPU per workflow in the burst, µs: this process's, the Python workers'
}

func runWorkers(c workersConfig) error {
	ctx := context.Background()
	if c.python < 1 {
		return fmt.Errorf("-python %d: want at least 1 worker process", c.python)
	}
	sdk, work, script, err := pythonWorkDir("settleflow-workers-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	products, err := declared.Parse("noop.json", []byte(noopProducts))
	if err != nil {
		return err
	}
	// The deliverer trusts the receiver's certificate through the system's
	// certificate file, as -suite pipeline arranges it; httptest's
	// certificate is the same for every receiver, and the system roots are
	// read once, at the first delivery.
	probe := httptest.NewUnstartedServer(http.NotFoundHandler())
	probe.StartTLS()
	caFile := filepath.Join(work, "receiver-ca.pem")
	err = os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: probe.Certificate().Raw}), 0o600)
	probe.Close()
	if err != nil {
		return err
	}
	os.Setenv("SSL_CERT_FILE", caFile)

	fmt.Printf("workers: n=%d per side, %d connections, %d Python worker processes (concurrency %d each), %d idle probes; server in process, SQLite FULL, the embedded chain\n",
		c.n, c.connections, c.python, c.concurrency, c.probes)
	fmt.Printf("%-6s %-11s %10s %9s %9s %9s %9s %9s %9s %9s\n", "round", "side", "hooks/s", "ratio", "send p50", "send p95", "201 p50", "go µs/wf", "py µs/wf", "cpu ratio")
	type round struct{ in, remote workersSide }
	var rs []round
	var allIn, allRemote, allRemoteAnswer, allInAnswer []time.Duration
	for r := 0; r < c.rounds; r++ {
		var rd round
		sides := []bool{false, true}
		if r%2 == 1 {
			sides = []bool{true, false}
		}
		for _, remote := range sides {
			dir := filepath.Join(work, fmt.Sprintf("round%d-%s", r+1, sideName(remote)))
			s, err := workersRound(ctx, c, products, dir, script, sdk, remote)
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", r+1, sideName(remote), err)
			}
			if remote {
				rd.remote = s
			} else {
				rd.in = s
			}
		}
		for _, remote := range []bool{false, true} {
			s := rd.in
			if remote {
				s = rd.remote
			}
			fs, fa := sorted(s.fromSend), sorted(s.fromAnswer)
			fmt.Printf("%-6d %-11s %10.0f %9.2f %9.1f %9.1f %9.1f %9.0f %9.0f %9.2f\n", r+1, sideName(remote), s.hooksPerSec,
				s.hooksPerSec/rd.in.hooksPerSec, ms(pct(fs, 50)), ms(pct(fs, 95)), ms(pct(fa, 50)), s.goCPU, s.pyCPU, rd.in.cpu()/s.cpu())
		}
		allIn, allInAnswer = append(allIn, rd.in.fromSend...), append(allInAnswer, rd.in.fromAnswer...)
		allRemote, allRemoteAnswer = append(allRemote, rd.remote.fromSend...), append(allRemoteAnswer, rd.remote.fromAnswer...)
		rs = append(rs, rd)
	}
	ratio := medianOf(rs, func(r round) float64 { return r.remote.hooksPerSec / r.in.hooksPerSec })
	fmt.Printf("verified webhooks/s: in process median %.0f, remote (%d Python workers) median %.0f; remote ÷ in process, median of the rounds' ratios: %.2f\n",
		medianOf(rs, func(r round) float64 { return r.in.hooksPerSec }), c.python,
		medianOf(rs, func(r round) float64 { return r.remote.hooksPerSec }), ratio)
	fmt.Printf("CPU per workflow in the burst (this process, and the Python workers): in process median %.0f µs, remote median %.0f + %.0f µs; in process ÷ remote (the rate ratio when the CPU is all there is), median of the rounds': %.2f\n",
		medianOf(rs, func(r round) float64 { return r.in.goCPU }), medianOf(rs, func(r round) float64 { return r.remote.goCPU }),
		medianOf(rs, func(r round) float64 { return r.remote.pyCPU }), medianOf(rs, func(r round) float64 { return r.in.cpu() / r.remote.cpu() }))
	allIn, allRemote, allInAnswer, allRemoteAnswer = sorted(allIn), sorted(allRemote), sorted(allInAnswer), sorted(allRemoteAnswer)
	fmt.Printf("create sent → handler started, idle, over all rounds (%d probes each): Python worker p50 %.1f ms, p95 %.1f ms (from the 201: p50 %.1f ms); in process p50 %.1f ms, p95 %.1f ms (from the 201: p50 %.1f ms)\n",
		len(allRemote), ms(pct(allRemote, 50)), ms(pct(allRemote, 95)), ms(pct(allRemoteAnswer, 50)),
		ms(pct(allIn, 50)), ms(pct(allIn, 95)), ms(pct(allInAnswer, 50)))
	return nil
}

// cpu is the side's CPU per workflow in the burst, µs: everything it ran.
func (s workersSide) cpu() float64 { return s.goCPU + s.pyCPU }

func sideName(remote bool) string {
	if remote {
		return "remote"
	}
	return "in process"
}

// started records when handlers started the probe workflows, by workflow id.
type started struct {
	mu sync.Mutex
	at map[string]time.Time
	ch chan struct{} // signalled at each record
}

func (s *started) record(id string, t time.Time) {
	s.mu.Lock()
	s.at[id] = t
	s.mu.Unlock()
	select {
	case s.ch <- struct{}{}:
	default:
	}
}

func (s *started) wait(id string, timeout time.Duration) (time.Time, error) {
	deadline := time.After(timeout)
	for {
		s.mu.Lock()
		t, ok := s.at[id]
		s.mu.Unlock()
		if ok {
			return t, nil
		}
		select {
		case <-s.ch:
		case <-time.After(5 * time.Millisecond):
		case <-deadline:
			return time.Time{}, fmt.Errorf("the handler of %s did not start within %v", id, timeout)
		}
	}
}

func workersRound(ctx context.Context, c workersConfig, products []*declared.Product, dir, script, sdk string, remote bool) (workersSide, error) {
	var res workersSide
	st := &started{at: map[string]time.Time{}, ch: make(chan struct{}, 1)}
	reg := settleflow.NewProducts()
	if remote {
		// The same declared product, left to workers ("remote": true).
		p := *products[0]
		p.Remote = true
		if err := declared.Register(reg, []*declared.Product{&p}, nil); err != nil {
			return res, err
		}
	} else {
		probe := []byte(`"probe":true`)
		if err := declared.Register(reg, products, declared.ExecutorFunc(func(ctx context.Context, _ string, payload json.RawMessage) (settleflow.Execution, error) {
			if bytes.Contains(payload, probe) {
				st.record(settleflow.WorkflowID(ctx), time.Now())
			}
			return settleflow.Execution{}, nil
		})); err != nil {
			return res, err
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return res, err
	}
	rc := &receiver{arrived: map[string]time.Time{}}
	hook := httptest.NewUnstartedServer(rc)
	hook.EnableHTTP2 = true
	hook.StartTLS()
	defer hook.Close()

	srv, err := sfserver.New(ctx, sfserver.Config{Products: reg, DataDir: dir, Addr: "127.0.0.1:0", Workers: 1000,
		MaxConnsPerAddr: -1, AuthFailuresPerMinute: -1})
	if err != nil {
		return res, err
	}
	if err := srv.Start(ctx); err != nil {
		srv.Stop(ctx)
		return res, err
	}
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		return srv.Stop(sctx)
	}
	defer stop()
	_, key, err := srv.Keys().Create(ctx, apikey.CreateParams{Environment: settleflow.Test, Name: "bench",
		Plan: apikey.Enterprise, PerMinute: 100_000_000, PerDay: 1_000_000_000})
	if err != nil {
		return res, err
	}
	_, secret, err := srv.Webhooks().CreateEndpoint(ctx, webhook.EndpointParams{Environment: settleflow.Test, URL: hook.URL + "/hook"})
	if err != nil {
		return res, err
	}
	rc.secret.Store(&secret)

	pool := x509.NewCertPool()
	pemBytes, err := os.ReadFile(srv.CertFile())
	if err != nil {
		return res, err
	}
	pool.AppendCertsFromPEM(pemBytes)
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool}, MaxIdleConnsPerHost: c.connections, MaxConnsPerHost: c.connections, IdleConnTimeout: time.Minute,
	}}
	defer client.CloseIdleConnections()
	create := func(payload string) (sent, error) {
		due := time.Now()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL()+"/v1/workflows",
			strings.NewReader(`{"product":"noop","customerId":"cus_bench","payload":`+payload+`}`))
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

	var pys []*pyWorker
	defer func() {
		for _, p := range pys {
			p.stop()
		}
	}()
	if remote {
		_, wkey, err := srv.Keys().Create(ctx, apikey.CreateParams{Environment: settleflow.Test, Name: "bench workers",
			Plan: apikey.Enterprise, PerMinute: 100_000_000, PerDay: 1_000_000_000, Kind: apikey.Worker})
		if err != nil {
			return res, err
		}
		for i := range c.python {
			p, err := startPyWorker(script, sdk, filepath.Join(dir, fmt.Sprintf("python%d.log", i+1)),
				[]string{"BENCH_KEY=" + wkey, "BENCH_URL=" + srv.URL(), "BENCH_CA=" + srv.CertFile(),
					"BENCH_CONCURRENCY=" + strconv.Itoa(c.concurrency), "BENCH_PROFILE=" + c.pyprofile}, st)
			if err != nil {
				return res, err
			}
			pys = append(pys, p)
		}
	}

	// Warm-up: the customer's first create waits for its faucet deposit;
	// the workers open their connections.
	warm, err := closedLoop(64, min(c.connections, 64), func() (sent, error) { return create(`{}`) })
	if err != nil {
		return res, err
	}
	if err := waitArrived(rc, warm, 2*time.Minute); err != nil {
		return res, err
	}

	// The burst, under a CPU profile of its own when asked (the last
	// round's is kept).
	if c.cpuprofile != "" {
		f, err := os.Create(c.cpuprofile + "." + strings.ReplaceAll(sideName(remote), " ", ""))
		if err != nil {
			return res, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return res, err
		}
	}
	cpu0, py0 := selfCPU(), pyCPU(pys)
	start := time.Now()
	burst, err := closedLoop(c.n, c.connections, func() (sent, error) { return create(`{}`) })
	if err != nil {
		return res, err
	}
	if err := waitArrived(rc, burst, 5*time.Minute); err != nil {
		return res, err
	}
	last := start
	rc.mu.Lock()
	for _, s := range burst {
		last = later(last, rc.arrived[s.id])
	}
	rc.mu.Unlock()
	if c.cpuprofile != "" {
		pprof.StopCPUProfile()
	}
	res.goCPU = float64((selfCPU() - cpu0).Microseconds()) / float64(c.n)
	res.pyCPU = float64((pyCPU(pys) - py0).Microseconds()) / float64(c.n)
	res.hooksPerSec = float64(c.n) / last.Sub(start).Seconds()

	// Idle probes: one at a time, each once the last one's webhook arrived
	// and the workers are back waiting in their claims.
	for range c.probes {
		time.Sleep(20 * time.Millisecond)
		s, err := create(`{"probe":true}`)
		if err != nil {
			return res, err
		}
		answered := s.due.Add(s.latency)
		at, err := st.wait(s.id, 30*time.Second)
		if err != nil {
			return res, err
		}
		res.fromSend = append(res.fromSend, at.Sub(s.due))
		res.fromAnswer = append(res.fromAnswer, max(at.Sub(answered), 0))
		if err := waitArrived(rc, []sent{s}, time.Minute); err != nil {
			return res, err
		}
	}
	if bad := rc.bad.Load(); bad > 0 {
		return res, fmt.Errorf("%d deliveries failed verification", bad)
	}
	for _, p := range pys {
		if err := p.stop(); err != nil {
			return res, err
		}
	}
	return res, stop()
}

// pyWorker is one Python worker process.
type pyWorker struct {
	cmd  *exec.Cmd
	done chan error
	log  *os.File
}

func startPyWorker(script, sdk, logPath string, env []string, st *started) (*pyWorker, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("python3", script)
	cmd.Env = append(os.Environ(), append(env, "PYTHONPATH="+sdk)...)
	cmd.Stderr = logf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("python3: %w", err)
	}
	p := &pyWorker{cmd: cmd, done: make(chan error, 1), log: logf}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) == 3 && f[0] == "started" {
				if ns, err := strconv.ParseInt(f[2], 10, 64); err == nil {
					st.record(f[1], time.Unix(0, ns))
				}
			}
		}
		p.done <- cmd.Wait()
		logf.Close()
	}()
	return p, nil
}

// stop ends the worker with SIGTERM (it drains) and waits for it.
func (p *pyWorker) stop() error {
	if p.cmd == nil {
		return nil
	}
	cmd := p.cmd
	p.cmd = nil
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		if err != nil {
			return fmt.Errorf("python worker: %v (see %s)", err, p.log.Name())
		}
		return nil
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("python worker did not stop within 30 s of SIGTERM (see %s)", p.log.Name())
	}
}

// pyCPU is the CPU time the Python workers used so far (user + system, from
// /proc/PID/stat).
func pyCPU(ps []*pyWorker) time.Duration {
	var total time.Duration
	for _, p := range ps {
		if p.cmd == nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
		if err != nil {
			continue
		}
		// Fields after the command name in parentheses; utime and stime
		// are the 14th and 15th fields, in clock ticks (100 per second).
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		k, _ := strconv.ParseInt(f[12], 10, 64)
		total += time.Duration(u+k) * 10 * time.Millisecond
	}
	return total
}

// pythonWorkDir checks that the Python SDK is at sdk/python (the bench
// runs from the repository root) and makes a directory, prefix*, holding
// the worker script: the SDK's path, the directory (the caller removes it)
// and the script's path.
func pythonWorkDir(prefix string) (sdk, work, script string, err error) {
	sdk, err = filepath.Abs(filepath.Join("sdk", "python"))
	if err == nil {
		_, err = os.Stat(filepath.Join(sdk, "settleflow", "_worker.py"))
	}
	if err != nil {
		return "", "", "", fmt.Errorf("the Python SDK (run from the repository root): %w", err)
	}
	if work, err = os.MkdirTemp("", prefix); err != nil {
		return "", "", "", err
	}
	script = filepath.Join(work, "workers.py")
	if err := os.WriteFile(script, workerScript, 0o600); err != nil {
		os.RemoveAll(work)
		return "", "", "", err
	}
	return sdk, work, script, nil
}
