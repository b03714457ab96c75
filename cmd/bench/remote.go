package main

// -suite workers -postgres DSN: the no-op product of -suite workers left to
// -python Python worker processes (cmd/bench/workers.py), served by
// reference servers in processes of their own on one Postgres database (a
// fresh one per side, dropped after) settling on a geth --dev chain (-geth),
// as -suite pipeline -postgres runs them: one instance on one side, three
// (-instances) on the other, the two sides one after the other in each
// round (their order alternating). Worker i is given instance i mod k's
// address; creates go round-robin over the instances.
//
// Per side: a warm-up of 64 workflows, then a burst of -n creates over
// -connections connections: verified webhooks per second = n over the time
// from the first create to the last distinct webhook. Then, on the side
// with two instances or more, before the Python workers start: -probes
// idle cross-instance claims: a claim (POST /v1/tasks/claim, waitSeconds 20)
// waits on instance B while a workflow is created on instance A; measured
// from the create's 201 (and from its sending) to the claim's answer. The
// claimant then completes the task through B.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// remoteProducts is noopProducts with the product left to workers.
var remoteProducts = strings.Replace(noopProducts, `"estimate": {"base": 1}`, `"estimate": {"base": 1},
  "remote": true`, 1)

type remoteSide struct {
	instances   int
	hooksPerSec float64
	wake        []time.Duration // create's 201 → the idle claim on another instance answered
	wakeSend    []time.Duration // create sent → the same
}

func runWorkersPostgres(c workersConfig, pg pipelineConfig) error {
	ctx := context.Background()
	if c.python < 1 {
		return fmt.Errorf("-python %d: want at least 1 worker process", c.python)
	}
	if pg.instances < 2 {
		return fmt.Errorf("-instances %d: want at least 2 for the side with several", pg.instances)
	}
	sdk, work, script, err := pythonWorkDir("settleflow-workers-pg-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	productsFile := filepath.Join(work, "noop.json")
	if err := os.WriteFile(productsFile, []byte(remoteProducts), 0o600); err != nil {
		return err
	}
	bin := pg.serverBin
	if bin == "" {
		bin = filepath.Join(work, "settleflow-server")
		fmt.Fprintln(os.Stderr, "building ./examples/server ...")
		cmd := exec.Command("go", "build", "-o", bin, "./examples/server")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("build the server (run from the repository root): %w", err)
		}
	}
	fmt.Printf("workers on Postgres: n=%d per side, %d connections, %d Python worker processes (concurrency %d each), %d idle cross-instance claims; servers %s on one Postgres database, geth --dev\n",
		c.n, c.connections, c.python, c.concurrency, c.probes, bin)
	fmt.Printf("%-6s %-11s %10s %9s %12s %12s %12s\n", "round", "side", "hooks/s", "ratio", "wake p50 ms", "wake p99 ms", "(sent) p50")
	type round struct{ one, many remoteSide }
	var rs []round
	var allWake, allWakeSend []time.Duration
	for r := 0; r < c.rounds; r++ {
		var rd round
		order := []int{1, pg.instances}
		if r%2 == 1 {
			order = []int{pg.instances, 1}
		}
		for _, k := range order {
			dir := filepath.Join(work, fmt.Sprintf("round%d-%d", r+1, k))
			s, err := workersPostgresRound(ctx, c, pg, bin, dir, script, sdk, productsFile, k)
			if err != nil {
				return fmt.Errorf("round %d, %d instance(s): %w (its files are in %s)", r+1, k, err, dir)
			}
			if k == 1 {
				rd.one = s
			} else {
				rd.many = s
			}
		}
		for _, s := range []remoteSide{rd.one, rd.many} {
			w, ws := sorted(s.wake), sorted(s.wakeSend)
			wake := fmt.Sprintf("%12s %12s %12s", "-", "-", "-") // one instance: no other to wake
			if len(w) > 0 {
				wake = fmt.Sprintf("%12.1f %12.1f %12.1f", ms(pct(w, 50)), ms(pct(w, 99)), ms(pct(ws, 50)))
			}
			fmt.Printf("%-6d %-11s %10.0f %9.2f %s\n", r+1, fmt.Sprintf("%d inst.", s.instances), s.hooksPerSec,
				s.hooksPerSec/rd.one.hooksPerSec, wake)
		}
		allWake, allWakeSend = append(allWake, rd.many.wake...), append(allWakeSend, rd.many.wakeSend...)
		rs = append(rs, rd)
	}
	allWake, allWakeSend = sorted(allWake), sorted(allWakeSend)
	fmt.Printf("verified webhooks/s: 1 instance median %.0f, %d instances median %.0f; %d ÷ 1, median of the rounds' ratios: %.2f\n",
		medianOf(rs, func(r round) float64 { return r.one.hooksPerSec }), pg.instances,
		medianOf(rs, func(r round) float64 { return r.many.hooksPerSec }), pg.instances,
		medianOf(rs, func(r round) float64 { return r.many.hooksPerSec / r.one.hooksPerSec }))
	fmt.Printf("idle claim on instance B answered with a task created on instance A, over all rounds (%d): from the 201 p50 %.1f ms, p99 %.1f ms; from sending the create p50 %.1f ms, p99 %.1f ms\n",
		len(allWake), ms(pct(allWake, 50)), ms(pct(allWake, 99)), ms(pct(allWakeSend, 50)), ms(pct(allWakeSend, 99)))
	return nil
}

func workersPostgresRound(ctx context.Context, c workersConfig, pg pipelineConfig, bin, dir, script, sdk, productsFile string, k int) (remoteSide, error) {
	res := remoteSide{instances: k}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return res, err
	}
	rc, hook, caFile, err := startReceiver(dir)
	if err != nil {
		return res, err
	}
	defer hook.Close()
	flags, key, secret, cleanup, err := setUpScaleOut(ctx, pg, bin, dir, hook.URL+"/hook")
	if err != nil {
		return res, err
	}
	defer cleanup()
	rc.secret.Store(&secret)
	out, err := exec.Command(bin, append(append([]string{"-data", filepath.Join(dir, "cli")}, flags...),
		"keys", "create", "--env", "test", "--name", "bench workers", "--kind", "worker",
		"--plan", "enterprise", "--per-minute", "100000000", "--per-day", "1000000000")...).CombinedOutput()
	if err != nil {
		return res, fmt.Errorf("keys create --kind worker: %v: %s", err, out)
	}
	wkey := regexp.MustCompile(`rk_test_[A-Za-z0-9]+`).FindString(string(out))
	if wkey == "" {
		return res, fmt.Errorf("keys create --kind worker printed no key: %s", out)
	}
	var srvs []*server
	defer func() {
		for _, s := range srvs {
			s.stop()
		}
	}()
	var clients []*http.Client
	for i := range k {
		s, err := startServer(bin, filepath.Join(dir, fmt.Sprintf("instance%d", i+1)), caFile, append(slicesClone(flags), "-products", productsFile)...)
		if err != nil {
			return res, err
		}
		srvs = append(srvs, s)
		cl, err := s.client(c.connections)
		if err != nil {
			return res, err
		}
		clients = append(clients, cl)
	}
	post := func(i int, path, auth, body string) (int, []byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srvs[i].url+path, strings.NewReader(body))
		if err != nil {
			return 0, nil, err
		}
		req.Header.Set("Authorization", "Bearer "+auth)
		req.Header.Set("Content-Type", "application/json")
		resp, err := clients[i].Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, err = b.ReadFrom(resp.Body)
		return resp.StatusCode, b.Bytes(), err
	}
	var next atomic.Int64
	create := func(payload string, on int) (sent, error) {
		if on < 0 {
			on = int(next.Add(1) % int64(k))
		}
		due := time.Now()
		status, b, err := post(on, "/v1/workflows", key, `{"product":"noop","customerId":"cus_bench","payload":`+payload+`}`)
		if err != nil {
			return sent{}, err
		}
		var wf struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(b, &wf); err != nil || status != http.StatusCreated {
			return sent{}, fmt.Errorf("create: HTTP %d (%v) %s", status, err, b)
		}
		return sent{id: wf.ID, due: due, latency: time.Since(due)}, nil
	}

	// The customer's faucet deposit, before anything is timed.
	if _, err := create(`{}`, 0); err != nil {
		return res, err
	}
	// Idle cross-instance claims: no worker yet but the claimant on B.
	if k > 1 {
		type claimed struct {
			at     time.Time
			ids    []string
			wfs    []string
			status int
			err    error
			body   []byte
		}
		claim := func() claimed {
			status, b, err := post(1, "/v1/tasks/claim", wkey, `{"products":["noop"],"max":10,"waitSeconds":20}`)
			cl := claimed{at: time.Now(), status: status, err: err, body: b}
			var got struct {
				Data []struct {
					ID         string `json:"id"`
					WorkflowID string `json:"workflowId"`
				} `json:"data"`
			}
			if err == nil && json.Unmarshal(b, &got) == nil {
				for _, t := range got.Data {
					cl.ids, cl.wfs = append(cl.ids, t.ID), append(cl.wfs, t.WorkflowID)
				}
			}
			return cl
		}
		complete := func(ids []string) error {
			for _, id := range ids {
				status, b, err := post(1, "/v1/tasks/"+id+"/complete", wkey, `{"result":{},"costItems":[]}`)
				if err != nil || status != http.StatusOK {
					return fmt.Errorf("complete %s: HTTP %d %v %s", id, status, err, b)
				}
			}
			return nil
		}
		// The warm-up's task, taken and completed.
		for done := 0; done < 1; {
			cl := claim()
			if cl.err != nil || cl.status != http.StatusOK || len(cl.ids) == 0 {
				return res, fmt.Errorf("claim: HTTP %d %v %s", cl.status, cl.err, cl.body)
			}
			if err := complete(cl.ids); err != nil {
				return res, err
			}
			done += len(cl.ids)
		}
		for range c.probes {
			ch := make(chan claimed, 1)
			go func() { ch <- claim() }()
			time.Sleep(200 * time.Millisecond) // the claim is waiting on B
			s, err := create(`{"probe":true}`, 0)
			if err != nil {
				return res, err
			}
			cl := <-ch
			if cl.err != nil || cl.status != http.StatusOK || len(cl.wfs) != 1 || cl.wfs[0] != s.id {
				return res, fmt.Errorf("the idle claim on instance 2 answered HTTP %d %v %s; want the task of %s", cl.status, cl.err, cl.body, s.id)
			}
			res.wake = append(res.wake, max(cl.at.Sub(s.due.Add(s.latency)), 0))
			res.wakeSend = append(res.wakeSend, cl.at.Sub(s.due))
			if err := complete(cl.ids); err != nil {
				return res, err
			}
		}
	}

	// The Python workers, worker i on instance i mod k.
	st := &started{at: map[string]time.Time{}, ch: make(chan struct{}, 1)}
	var pys []*pyWorker
	defer func() {
		for _, p := range pys {
			p.stop()
		}
	}()
	for i := range c.python {
		s := srvs[i%k]
		p, err := startPyWorker(script, sdk, filepath.Join(dir, fmt.Sprintf("python%d.log", i+1)),
			[]string{"BENCH_KEY=" + wkey, "BENCH_URL=" + s.url, "BENCH_CA=" + s.certFile,
				"BENCH_CONCURRENCY=" + strconv.Itoa(c.concurrency), "BENCH_PROFILE=" + c.pyprofile}, st)
		if err != nil {
			return res, err
		}
		pys = append(pys, p)
	}
	warm, err := closedLoop(64, min(c.connections, 64), func() (sent, error) { return create(`{}`, -1) })
	if err != nil {
		return res, err
	}
	if err := waitArrived(rc, warm, 2*time.Minute); err != nil {
		return res, err
	}
	start := time.Now()
	burst, err := closedLoop(c.n, c.connections, func() (sent, error) { return create(`{}`, -1) })
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
	res.hooksPerSec = float64(c.n) / last.Sub(start).Seconds()
	if bad := rc.bad.Load(); bad > 0 {
		return res, fmt.Errorf("%d deliveries failed verification", bad)
	}
	return res, nil
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }
