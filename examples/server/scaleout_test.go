package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/pgtest"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/settlement/contracts/bindings"
	"github.com/settleflow/settleflow/webhook"
)

// scaleoutN is how many workflows TestScaleOutOnGethDev works: -scaleout-n,
// else $SETTLEFLOW_SCALEOUT_N, else 5000.
var scaleoutN = flag.Int("scaleout-n", envInt("SETTLEFLOW_SCALEOUT_N", 5000), "how many workflows TestScaleOutOnGethDev creates")

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// execLogEnv, set in a server child's environment, names a file the child
// appends a line to when a demo product starts executing a workflow and
// one when it ends: "start|end WORKFLOW_ID PID UNIX_NANOS".
const execLogEnv = "SETTLEFLOW_TEST_EXEC_LOG"

// recordExecutions, in a server child (TestMain), installs the recorder of
// execLogEnv around the demo products, if that is set. Each line is one
// write(2) on an O_APPEND file, so lines of several processes do not mix,
// and none is lost to a SIGKILL once written.
func recordExecutions() {
	path := os.Getenv(execLogEnv)
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child: execution log:", err)
		os.Exit(2)
	}
	pid := os.Getpid()
	executeAround = func(ctx context.Context, _ string, execute func() (settleflow.Execution, error)) (settleflow.Execution, error) {
		id := settleflow.WorkflowID(ctx)
		fmt.Fprintf(f, "start %s %d %d\n", id, pid, time.Now().UnixNano())
		defer func() { fmt.Fprintf(f, "end %s %d %d\n", id, pid, time.Now().UnixNano()) }()
		return execute()
	}
}

// fleet is three server processes on one Postgres database and one chain.
// A process that is down (being killed or restarted) gets no new requests.
type fleet struct {
	t     *testing.T
	flags []string

	mu    sync.Mutex
	insts [3]*fleetInstance
}

type fleetInstance struct {
	dir  string
	s    *processServer
	up   bool
	runs []*procRun // every process started on dir, oldest first
}

// procRun is one server process: its pid, where its lines start in the
// data directory's server.log, and when it ended (zero while it runs).
type procRun struct {
	inst   int
	pid    int
	from   int64
	ended  time.Time
	killed bool
}

func (f *fleet) start(t *testing.T, k int) {
	t.Helper()
	in := f.insts[k]
	var from int64
	if fi, err := os.Stat(filepath.Join(in.dir, "server.log")); err == nil {
		from = fi.Size()
	}
	s := startProcessServer(t, in.dir, f.flags...)
	f.mu.Lock()
	defer f.mu.Unlock()
	in.s, in.up = s, true
	in.runs = append(in.runs, &procRun{inst: k, pid: s.cmd.Process.Pid, from: from})
}

// stop ends instance k's process: with SIGKILL (nothing of it runs after),
// or SIGTERM (it finishes its requests and hands its work back).
func (f *fleet) stop(t *testing.T, k int, kill bool) {
	t.Helper()
	f.mu.Lock()
	in := f.insts[k]
	in.up = false
	s, run := in.s, in.runs[len(in.runs)-1]
	f.mu.Unlock()
	if kill {
		s.kill()
	} else {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(time.Minute):
			t.Fatalf("instance %d (pid %d) did not stop within a minute of SIGTERM", k, run.pid)
		}
	}
	f.mu.Lock()
	run.ended, run.killed = time.Now(), kill
	f.mu.Unlock()
}

// server returns the first instance up from k on (round-robin), or nil.
func (f *fleet) server(k int) (int, *processServer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range 3 {
		j := (k + i) % 3
		if f.insts[j].up {
			return j, f.insts[j].s
		}
	}
	return -1, nil
}

func (f *fleet) isUp(k int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.insts[k].up
}

func (f *fleet) allRuns() []*procRun {
	f.mu.Lock()
	defer f.mu.Unlock()
	var rs []*procRun
	for _, in := range f.insts {
		rs = append(rs, in.runs...)
	}
	return rs
}

// logLine is what the tests read of a server's JSON log lines.
type logLine struct {
	TS     float64 `json:"ts"`
	Level  string  `json:"level"`
	Logger string  `json:"logger"`
	Msg    string  `json:"msg"`
	Nonce  *uint64 `json:"nonce"`
	Term   uint64  `json:"term"`
}

func (l logLine) time() time.Time {
	sec := int64(l.TS)
	return time.Unix(sec, int64((l.TS-float64(sec))*1e9))
}

// segment returns what process r wrote to its server.log (complete lines).
func (f *fleet) segment(r *procRun) []byte {
	f.t.Helper()
	f.mu.Lock()
	in := f.insts[r.inst]
	to := int64(-1)
	for i, x := range in.runs {
		if x == r && i+1 < len(in.runs) {
			to = in.runs[i+1].from
		}
	}
	f.mu.Unlock()
	b, err := os.ReadFile(filepath.Join(in.dir, "server.log"))
	if err != nil {
		f.t.Error(err) // not Fatal: called from subtests too
		return nil
	}
	if to >= 0 {
		b = b[:to]
	}
	b = b[r.from:]
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return b[:i+1]
	}
	return nil
}

// lines returns the log lines of process r.
func (f *fleet) lines(r *procRun) []logLine {
	f.t.Helper()
	b := f.segment(r)
	var out []logLine
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l logLine
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.TS != 0 {
			out = append(out, l)
		}
	}
	return out
}

// dumpLogs shows, after a failure, what each process logged about the
// lease and settlement, and its warnings and errors (the last 300 lines).
func (f *fleet) dumpLogs(t *testing.T) {
	for _, r := range f.allRuns() {
		var keep []string
		for _, line := range strings.Split(string(f.segment(r)), "\n") {
			var l logLine
			if json.Unmarshal([]byte(line), &l) == nil && (l.Level != "info" || l.Logger == "lease" || strings.HasPrefix(l.Logger, "settlement")) {
				keep = append(keep, line)
			}
		}
		t.Logf("instance %d, pid %d:\n%s", r.inst, r.pid, strings.Join(keep[max(0, len(keep)-300):], "\n"))
	}
}

// holding is one process's holding of the settlement lease, from its
// "lease held" to its "lease lost" or "lease given up", or to the end of
// the process (open: still held).
type holding struct {
	run      *procRun
	from, to time.Time
	open     bool
}

// holdings reads the settlement lease's holdings from every process's log,
// and its "settlement sent" lines; it reports a process that logs holding
// it twice without letting it go between.
func (f *fleet) holdings(t *testing.T) (hs []holding, sends []sentLine) {
	t.Helper()
	for _, r := range f.allRuns() {
		var cur *holding
		for _, l := range f.lines(r) {
			switch {
			case l.Logger == "lease" && l.Msg == "lease held":
				if cur != nil {
					t.Errorf("pid %d logged %q at %s while holding the lease since %s", r.pid, l.Msg, l.time().Format(time.RFC3339Nano), cur.from.Format(time.RFC3339Nano))
					continue
				}
				cur = &holding{run: r, from: l.time(), open: true}
			case l.Logger == "lease" && (l.Msg == "lease lost" || l.Msg == "lease given up"):
				if cur == nil {
					t.Errorf("pid %d logged %q at %s without holding the lease", r.pid, l.Msg, l.time().Format(time.RFC3339Nano))
					continue
				}
				cur.to, cur.open = l.time(), false
				hs = append(hs, *cur)
				cur = nil
			case strings.HasPrefix(l.Logger, "settlement") && (l.Msg == "settlement sent" || l.Msg == "settlement sending"):
				if l.Nonce == nil {
					t.Errorf("pid %d: %q without a nonce", r.pid, l.Msg)
					continue
				}
				sends = append(sends, sentLine{run: r, at: l.time(), nonce: *l.Nonce, attempt: l.Msg == "settlement sending"})
			}
		}
		if cur != nil {
			f.mu.Lock()
			cur.to = r.ended
			f.mu.Unlock()
			hs = append(hs, *cur)
		}
	}
	return hs, sends
}

type sentLine struct {
	run   *procRun
	at    time.Time
	nonce uint64
	// attempt: logged just before the transaction left ("settlement
	// sending"), not after the node took it ("settlement sent"): a process
	// killed in between leaves only the attempt.
	attempt bool
}

// holder waits for the process that holds the settlement lease now (an open
// holding in a process that is up) and returns its instance.
func (f *fleet) holder(t *testing.T, after time.Time) int {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		hs, _ := f.holdings(t)
		var open []holding
		for _, h := range hs {
			if h.open && h.run.ended.IsZero() && h.from.After(after) {
				open = append(open, h)
			}
		}
		if len(open) == 1 {
			return open[0].run.inst
		}
		if len(open) > 1 {
			t.Fatalf("%d processes hold the settlement lease at once: %+v", len(open), open)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no process took the settlement lease (after %s) within a minute", after.Format(time.RFC3339Nano))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitSent waits until instance k's process logs "settlement sent" after
// the time given.
func (f *fleet) waitSent(t *testing.T, k int, after time.Time) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		_, sends := f.holdings(t)
		for _, s := range sends {
			if s.run.inst == k && s.run.ended.IsZero() && s.at.After(after) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("instance %d sent no settlement transaction within a minute", k)
		}
	}
}

func (f *fleet) pid(k int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	runs := f.insts[k].runs
	return runs[len(runs)-1].pid
}

// waitExecuting waits up to timeout for the execution log to show pid
// executing a workflow (a start without its end yet), so that a kill cuts
// an execution short; it reports whether it saw one.
func waitExecuting(path string, pid int, timeout time.Duration) bool {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		b, _ := os.ReadFile(path)
		open := map[string]bool{}
		suffix := " " + strconv.Itoa(pid) + " "
		for _, line := range strings.Split(string(b), "\n") {
			if what, rest, ok := strings.Cut(line, " "); ok && strings.Contains(rest, suffix) {
				id, _, _ := strings.Cut(rest, " ")
				open[id] = what == "start"
			}
		}
		for _, o := range open {
			if o {
				return true
			}
		}
	}
	return false
}

// flagValue returns the value of flag name in args (as `chain deploy`
// prints them), or "".
func flagValue(args []string, name string) string {
	for i, a := range args {
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// Three reference-server processes on one Postgres database settle on one
// shared chain, a `geth --dev` node: the contract is deployed by `chain
// deploy`, the key and the webhook endpoint are made by the command line.
//
// limiter: one key's per-minute limit holds across the three (admitted
// requests never exceed it, the remaining counts agree).
//
// workflows: -scaleout-n workflows (5000) are created round-robin over
// HTTPS; midway the holder of the settlement lease is killed with SIGKILL,
// and later the new holder is stopped with SIGTERM and started again.
// Every workflow is Settled, each charged once on chain for its quoted
// amount (a scan of the contract's events, and `chain reconcile`), each
// workflow.completed arrives at least once, verified under both signature
// schemes; no workflow executes in two processes at once (the processes
// record their executions), and the lease's holdings never overlap, every
// settlement transaction is sent within its sender's holding, and no
// nonce is sent by two processes.
func TestScaleOutOnGethDev(t *testing.T) {
	rpcURL, opKey := startGethDev(t)
	pg := pgtest.Connect(t)
	dsn := pg.SchemaDSN(t, "scaleout")
	ctx := context.Background()

	f := &fleet{t: t}
	for k := range f.insts {
		f.insts[k] = &fleetInstance{dir: t.TempDir()}
	}
	chainFlags := deployOnGeth(t, rpcURL, opKey)

	// The receiver: every delivery verified under both schemes; the
	// workflow ids of workflow.completed counted.
	var (
		mu        sync.Mutex
		secret    string
		completed = map[string]int{}
		bad       []string
	)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		sec := secret
		mu.Unlock()
		ev, err := webhook.ConstructEvent(body, r.Header.Get("service-signature"), sec)
		if err == nil {
			err = webhook.VerifyStandard(body, r.Header, sec)
		}
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			bad = append(bad, err.Error())
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if ev.Type == settleflow.EventWorkflowCompleted {
			completed[ev.Data.WorkflowID]++
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer recv.Close()
	adminDir := t.TempDir()
	sec := addEndpoint(t, adminDir, recv.URL, "-postgres", dsn)
	mu.Lock()
	secret = sec
	mu.Unlock()

	execLog := filepath.Join(t.TempDir(), "executions.log")
	t.Setenv(execLogEnv, execLog)
	f.flags = append(append([]string{}, chainFlags...), "-postgres", dsn, "-log-level", "info", "-log-format", "json",
		// A dead instance's claimed workflows go to the others after 12 s.
		"-execution-timeout", "10s",
		"-webhook-retry-schedule", "0s,200ms,500ms,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s")
	for k := range f.insts {
		f.start(t, k)
	}
	t.Cleanup(func() {
		if t.Failed() {
			f.dumpLogs(t)
		}
	})

	t.Run("limiter", func(t *testing.T) {
		testLimiterAcrossInstances(t, f, adminDir, dsn)
	})

	// Another deployment on the same database (its own schema, its own
	// embedded chain) settles while the three settle on theirs: the
	// settlement lease is theirs, not the database's.
	t.Run("neighbor", func(t *testing.T) {
		f.holder(t, time.Time{})
		dir := t.TempDir()
		other := pg.SchemaDSN(t, "neighbor")
		key := strings.Fields(cli(t, dir, "-postgres", other, "keys", "create", "--env", "test", "--name", "neighbor", "--plan", "enterprise", "--per-minute", "100000", "--per-day", "1000000"))[1]
		s := startServerWith(t, dir, "-postgres", other)
		status, _, wf := s.do("POST", "/v1/workflows", key, `{"product":"ticket-triage","customerId":"cus_n","payload":{"ticketId":"T-1"}}`)
		if status != 201 {
			t.Fatalf("create: %d %v", status, wf)
		}
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			_, _, got := s.do("GET", "/v1/workflows/"+wf["id"].(string), key, "")
			if got["status"] == "Settled" {
				break
			}
			if got["status"] == "Failed" || time.Now().After(deadline) {
				t.Fatalf("a workflow of another deployment on the database, 30 s after its creation: %v", got)
			}
		}
	})

	t.Run("workflows", func(t *testing.T) {
		n := *scaleoutN
		began := time.Now()
		out := cli(t, adminDir, "-postgres", dsn, "keys", "create", "--env", "test", "--name", "scaleout", "--plan", "enterprise",
			"--per-minute", "1000000", "--per-day", "100000000")
		key := strings.Fields(out)[1]
		ids := make([]string, n)
		var replayed atomic.Int64
		var created atomic.Int64
		createOne := func(i int) {
			body := fmt.Sprintf(`{"product":"image-moderation","customerId":"cus_%d","payload":{"imageUrls":["https://example.com/%d.png"]}}`, i%7, i)
			var last string
			for attempt := 0; attempt < 100; attempt++ {
				k, s := f.server(i + attempt)
				if s == nil {
					time.Sleep(50 * time.Millisecond)
					continue
				}
				req, _ := http.NewRequest("POST", s.url+"/v1/workflows", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Idempotency-Key", fmt.Sprint("scaleout-", i))
				resp, err := s.client.Do(req)
				if err != nil {
					// Killed or stopping: the same request, with the same
					// idempotency key, to the next instance.
					last = fmt.Sprintf("instance %d: %v", k, err)
					time.Sleep(20 * time.Millisecond)
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				var wf struct {
					ID string `json:"id"`
				}
				switch {
				case resp.StatusCode == http.StatusCreated && json.Unmarshal(b, &wf) == nil && wf.ID != "":
					ids[i] = wf.ID
					if resp.Header.Get("Idempotent-Replayed") == "true" {
						replayed.Add(1)
					}
					created.Add(1)
					return
				case resp.StatusCode >= 500:
					last = fmt.Sprintf("instance %d: HTTP %d %s", k, resp.StatusCode, b)
					time.Sleep(20 * time.Millisecond)
				default:
					t.Errorf("create %d on instance %d: HTTP %d %s", i, k, resp.StatusCode, b)
					return
				}
			}
			t.Errorf("create %d: not created after 100 attempts; last: %s", i, last)
		}
		// createRange creates workflows from..to-1 over 24 connections
		// round-robin; wait returns when all are.
		createRange := func(from, to int) (wait func()) { return goRange(from, to, 24, createOne) }
		waitCreated := func(c int64) {
			for deadline := time.Now().Add(3 * time.Minute); created.Load() < c; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) || t.Failed() {
					t.Fatalf("%d workflows created, waiting for %d", created.Load(), c)
				}
			}
		}

		// The first half; the holder of the lease settles for all three.
		createRange(0, n/2)()
		if t.Failed() {
			return
		}
		firstHolder := f.holder(t, time.Time{})
		t.Logf("%v: %d created; instance %d holds the settlement lease", time.Since(began).Round(time.Millisecond), n/2, firstHolder)

		// Midway through the second quarter, once the holder has sent a
		// settlement transaction since (not confirmed yet: that takes two
		// blocks), the holder is killed.
		wait := createRange(n/2, 3*n/4)
		waitCreated(int64(n/2 + n/20))
		f.waitSent(t, firstHolder, time.Now())
		executing := waitExecuting(execLog, f.pid(firstHolder), time.Second)
		killedAt := time.Now()
		f.stop(t, firstHolder, true)
		atKill := created.Load()
		wait()
		if t.Failed() {
			return
		}
		second := f.holder(t, killedAt)
		t.Logf("%v: instance %d killed (SIGKILL) with %d created, executing a workflow: %v; instance %d took the lease over",
			time.Since(began).Round(time.Millisecond), firstHolder, atKill, executing, second)

		// Midway through the last quarter, the new holder is stopped with
		// SIGTERM and started again on its data directory.
		wait = createRange(3*n/4, n)
		waitCreated(int64(3*n/4 + n/20))
		stoppedAt := time.Now()
		f.stop(t, second, false)
		f.start(t, second)
		wait()
		if t.Failed() {
			return
		}
		third := f.holder(t, stoppedAt)
		t.Logf("%v: all %d created (%d answered as replays after a retry); instance %d restarted (SIGTERM); instance %d holds the lease",
			time.Since(began).Round(time.Millisecond), n, replayed.Load(), second, third)
		if len(uniq(ids)) != n {
			t.Fatalf("%d distinct workflow ids for %d workflows", len(uniq(ids)), n)
		}

		// Every workflow Settled (read over HTTPS) and its workflow.completed
		// received.
		want := map[string]bool{}
		for _, id := range ids {
			want[id] = true
		}
		var final map[string]wireWorkflow
		deadline := time.Now().Add(5 * time.Minute)
		for lastLog := time.Now(); ; time.Sleep(time.Second) {
			_, s := f.server(0)
			all := listWorkflows(t, s, key)
			settled := 0
			for id := range want {
				w, ok := all[id]
				if ok && w.Status == "Settled" {
					settled++
				}
				if ok && (w.Status == "Failed" || w.Status == "Canceled") {
					t.Fatalf("workflow %s is %s: %s", id, w.Status, w.Failure)
				}
			}
			mu.Lock()
			delivered := 0
			for id := range want {
				if completed[id] > 0 {
					delivered++
				}
			}
			mu.Unlock()
			if settled == n && delivered == n {
				final = all
				break
			}
			if time.Since(lastLog) > 10*time.Second {
				t.Logf("%v: %d of %d Settled, %d workflow.completed received", time.Since(began).Round(time.Millisecond), settled, n, delivered)
				lastLog = time.Now()
			}
			if time.Now().After(deadline) {
				t.Fatalf("after 5 minutes: %d of %d Settled, %d of %d workflow.completed received", settled, n, delivered, n)
			}
		}
		t.Logf("%v: all %d Settled and their workflow.completed received", time.Since(began).Round(time.Millisecond), n)
		for k := range f.insts {
			if f.isUp(k) {
				f.stop(t, k, false)
			}
		}

		mu.Lock()
		if len(bad) > 0 {
			t.Errorf("%d deliveries failed verification, e.g. %s", len(bad), bad[0])
		}
		again := 0
		for id := range want {
			if completed[id] > 1 {
				again++
			}
		}
		mu.Unlock()
		t.Logf("%d workflow.completed delivered more than once", again)

		checkExecutions(t, f, execLog)
		sentNonces := checkLeaseLogs(t, f)
		checkChain(t, ctx, rpcURL, opKey, chainFlags, dsn, final, sentNonces)

		out, errOut, code := runCmd(t, adminDir, append(append([]string{"-postgres", dsn}, chainFlags...), "chain", "reconcile", "--env", "test")...)
		if code != 0 || !strings.Contains(out, "no discrepancy") || !strings.Contains(out, fmt.Sprintf("%d charges", n)) {
			t.Errorf("chain reconcile: exit %d\n%s%s", code, out, errOut)
		}
		t.Logf("%v: checked", time.Since(began).Round(time.Millisecond))
	})
}

func uniq(ids []string) map[string]bool {
	m := map[string]bool{}
	for _, id := range ids {
		if id != "" {
			m[id] = true
		}
	}
	return m
}

// wireWorkflow is what the test reads of a workflow on the wire.
type wireWorkflow struct {
	ID         string `json:"id"`
	CustomerID string `json:"customerId"`
	Status     string `json:"status"`
	Quoted     struct {
		Amount int64 `json:"amount"`
	} `json:"quoted"`
	Settlement *struct {
		TxHash      string `json:"txHash"`
		BlockNumber uint64 `json:"blockNumber"`
	} `json:"settlement"`
	Failure json.RawMessage `json:"failure"`
}

// listWorkflows reads every workflow of the key's environment, page by page.
func listWorkflows(t *testing.T, s *processServer, key string) map[string]wireWorkflow {
	t.Helper()
	return listWorkflowsAs(t, s, key, func(w wireWorkflow) string { return w.ID })
}

// listWorkflowsAs reads every workflow of the key's environment, page by
// page, decoded as W and keyed by id.
func listWorkflowsAs[W any](t *testing.T, s *processServer, key string, id func(W) string) map[string]W {
	t.Helper()
	all := map[string]W{}
	for after := ""; ; {
		path := "/v1/workflows?limit=100"
		if after != "" {
			path += "&startingAfter=" + after
		}
		req, _ := http.NewRequest("GET", s.url+path, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := s.client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		var page struct {
			Data    []W  `json:"data"`
			HasMore bool `json:"hasMore"`
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: HTTP %d %v", path, resp.StatusCode, err)
		}
		for _, w := range page.Data {
			all[id(w)] = w
		}
		if !page.HasMore || len(page.Data) == 0 {
			return all
		}
		after = id(page.Data[len(page.Data)-1])
	}
}

// checkExecutions reads the execution log: no workflow executed by two
// processes (or twice in one) at the same time.
func checkExecutions(t *testing.T, f *fleet, path string) {
	t.Helper()
	ended := map[int]time.Time{}
	for _, r := range f.allRuns() {
		ended[r.pid] = r.ended
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	problems, summary := executionOverlaps(b, ended)
	for _, p := range problems {
		t.Error(p)
	}
	t.Log(summary)
}

// executionOverlaps reads an execution log (execLogEnv) and returns what is
// wrong with it: two executions of one workflow at the same time, an end
// without a start, a start without an end in a process that did not end
// (ended, by pid). An execution a kill cut short lasts until the process
// ended.
func executionOverlaps(log []byte, ended map[int]time.Time) (problems []string, summary string) {
	type interval struct {
		pid      int
		from, to int64
		cut      bool
	}
	type key struct {
		id  string
		pid int
	}
	byID := map[string][]interval{}
	open := map[key]int64{}
	for _, line := range strings.Split(strings.TrimSuffix(string(log), "\n"), "\n") {
		var (
			what, id string
			pid      int
			at       int64
		)
		if _, err := fmt.Sscanf(line, "%s %s %d %d", &what, &id, &pid, &at); err != nil {
			problems = append(problems, fmt.Sprintf("execution log line %q: %v", line, err))
			continue
		}
		k := key{id, pid}
		switch what {
		case "start":
			if _, ok := open[k]; ok {
				problems = append(problems, fmt.Sprintf("pid %d started %s again while executing it", pid, id))
			}
			open[k] = at
		case "end":
			from, ok := open[k]
			if !ok {
				problems = append(problems, fmt.Sprintf("pid %d ended %s without starting it", pid, id))
				continue
			}
			delete(open, k)
			byID[id] = append(byID[id], interval{pid: pid, from: from, to: at})
		}
	}
	for k, from := range open {
		end := ended[k.pid]
		if end.IsZero() {
			problems = append(problems, fmt.Sprintf("pid %d: execution of %s started and never ended, in a process that did not end", k.pid, k.id))
			continue
		}
		byID[k.id] = append(byID[k.id], interval{pid: k.pid, from: from, to: end.UnixNano(), cut: true})
	}
	executions, twice, cut := 0, 0, 0
	perPid := map[int]int{}
	for id, ivs := range byID {
		executions += len(ivs)
		if len(ivs) > 1 {
			twice++
		}
		slices.SortFunc(ivs, func(a, b interval) int { return cmp.Compare(a.from, b.from) })
		for i, iv := range ivs {
			perPid[iv.pid]++
			if iv.cut {
				cut++
			}
			for _, before := range ivs[:i] {
				if iv.from < before.to {
					problems = append(problems, fmt.Sprintf("workflow %s executed by pid %d from %s to %s and by pid %d from %s: at the same time", id,
						before.pid, time.Unix(0, before.from).Format(time.RFC3339Nano), time.Unix(0, before.to).Format(time.RFC3339Nano),
						iv.pid, time.Unix(0, iv.from).Format(time.RFC3339Nano)))
				}
			}
		}
	}
	return problems, fmt.Sprintf("executions: %d of %d workflows (per pid %v), %d workflows executed more than once, %d executions cut short by a kill",
		executions, len(byID), perPid, twice, cut)
}

// The execution log's checker finds two executions of a workflow at once,
// in two processes or one, counting an execution a kill cut short as
// lasting until the kill; executions one after the other pass.
func TestExecutionOverlaps(t *testing.T) {
	killed := map[int]time.Time{7: time.Unix(0, 500)}
	for _, c := range []struct {
		log  string
		want string // in the one problem; "" for none
	}{
		{"start wf_a 1 100\nend wf_a 1 200\nstart wf_a 2 200\nend wf_a 2 300\n", ""},
		{"start wf_a 1 100\nstart wf_a 2 150\nend wf_a 1 200\nend wf_a 2 300\n", "at the same time"},
		{"start wf_a 7 100\nstart wf_a 2 400\nend wf_a 2 450\n", "at the same time"}, // pid 7 killed at 500
		{"start wf_a 7 100\nstart wf_a 2 600\nend wf_a 2 650\n", ""},
		{"start wf_a 1 100\nstart wf_a 1 150\nend wf_a 1 200\n", "again while executing it"},
		{"start wf_a 1 100\n", "never ended"},
		{"end wf_a 1 100\n", "without starting it"},
	} {
		problems, _ := executionOverlaps([]byte(c.log), killed)
		if c.want == "" && len(problems) != 0 || c.want != "" && (len(problems) != 1 || !strings.Contains(problems[0], c.want)) {
			t.Errorf("log\n%s: problems %q; want %q", c.log, problems, c.want)
		}
	}
}

// checkLeaseLogs reads every process's log: the settlement lease's
// holdings do not overlap, each "settlement sent" lies within its process's
// holding, and no nonce was sent by two processes. It returns the nonces
// attempted ("settlement sending", logged before a transaction leaves, so
// that a process killed right after sending has logged it).
func checkLeaseLogs(t *testing.T, f *fleet) map[uint64]bool {
	t.Helper()
	hs, sends := f.holdings(t)
	slices.SortFunc(hs, func(a, b holding) int { return a.from.Compare(b.from) })
	for i, h := range hs {
		if h.to.IsZero() {
			t.Errorf("pid %d holds the lease since %s and never ended", h.run.pid, h.from.Format(time.RFC3339Nano))
		}
		t.Logf("holding %d: instance %d pid %d from %s to %s (killed: %v)", i, h.run.inst, h.run.pid,
			h.from.Format("15:04:05.000000"), h.to.Format("15:04:05.000000"), h.run.killed && h.open)
		if i > 0 && h.from.Before(hs[i-1].to) {
			t.Errorf("pid %d held the settlement lease from %s, before pid %d's holding ended at %s", h.run.pid,
				h.from.Format(time.RFC3339Nano), hs[i-1].run.pid, hs[i-1].to.Format(time.RFC3339Nano))
		}
	}
	if len(hs) < 3 {
		t.Errorf("%d holdings of the settlement lease; want at least 3 (the first, the takeover after the kill, after the restart)", len(hs))
	}
	byNonce := map[uint64]sentLine{}
	attempted := map[uint64]bool{}
	perPid := map[int]int{}
	for _, s := range sends {
		if !s.attempt {
			perPid[s.run.pid]++
		}
		in := false
		for _, h := range hs {
			if h.run == s.run && !s.at.Before(h.from) && !s.at.After(h.to) {
				in = true
			}
		}
		if !in {
			t.Errorf("pid %d sent nonce %d at %s, outside its holdings of the settlement lease", s.run.pid, s.nonce, s.at.Format(time.RFC3339Nano))
		}
		attempted[s.nonce] = true
		if s.attempt {
			continue
		}
		if o, ok := byNonce[s.nonce]; ok {
			t.Errorf("nonce %d sent by pid %d at %s and by pid %d at %s", s.nonce, o.run.pid, o.at.Format(time.RFC3339Nano), s.run.pid, s.at.Format(time.RFC3339Nano))
		}
		byNonce[s.nonce] = s
	}
	t.Logf("settlement transactions sent per pid: %v (%d nonces attempted, %d sent)", perPid, len(attempted), len(byNonce))
	return attempted
}

// checkChain scans the chain: each workflow Settled exactly once in the
// contract's events, under its own sequence, for its quoted amount and
// customer, in the transaction its settlement names; no other Settled
// event; every settle transaction of the operator mined after the
// deployment carries a nonce some process logged as sent.
func checkChain(t *testing.T, ctx context.Context, rpcURL string, opKey []byte, chainFlags []string, dsn string, wfs map[string]wireWorkflow, sent map[uint64]bool) {
	t.Helper()
	client, err := ethclient.Dial(rpcURL)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	contract := common.HexToAddress(flagValue(chainFlags, "-test-contract"))
	token := common.HexToAddress(flagValue(chainFlags, "-test-token"))
	sabi, tabi := bindings.NewSettleflowSettlement(), bindings.NewTestUSD()
	call := func(to common.Address, data []byte) []byte {
		out, err := client.CallContract(ctx, ethereum.CallMsg{To: &to, Data: data}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	deployed, err := sabi.UnpackDeployedAt(call(contract, sabi.PackDeployedAt()))
	if err != nil {
		t.Fatal(err)
	}
	decimals, err := tabi.UnpackDecimals(call(token, tabi.PackDecimals()))
	if err != nil {
		t.Fatal(err)
	}

	// The sequences the database gave the workflows.
	db, err := openDB(ctx, config{postgres: dsn})
	if err != nil {
		t.Fatal(err)
	}
	seqs := map[string]uint64{}
	rows, err := db.Bun().QueryContext(ctx, "SELECT id, sequence FROM settleflow_workflows")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var seq uint64
		if err := rows.Scan(&id, &seq); err != nil {
			t.Fatal(err)
		}
		seqs[id] = seq
	}
	rows.Close()
	db.Close()

	// Reconcile: every workflow debited once, for its quoted amount, under
	// its sequence, from its customer, in the transaction it names; every
	// customer's balance on chain what its deposits and charges add up to,
	// and what the database's ledger says; the contract holding exactly
	// its customers' balances and what the payee is owed.
	secret, err := readSecretFile(flagValue(chainFlags, "-test-customer-ref-secret-file"))
	if err != nil {
		t.Fatal(err)
	}
	ledger, err := readLedger(ctx, config{postgres: dsn}, settleflow.Test)
	if err != nil {
		t.Fatal(err)
	}
	head, err := client.BlockNumber(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := settlement.Reconcile(ctx, client, ledger.records, settlement.ReconcileOptions{Contract: contract, Decimals: decimals,
		FromBlock: deployed.Uint64(), ToBlock: head, Accounts: ledger.accounts, State: client,
		RefOf: func(id string) [32]byte { return settlement.CustomerRef(secret, settleflow.Test, id) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Discrepancies) > 0 || rep.OnChain != len(wfs) || rep.Declined != 0 {
		t.Errorf("reconcile: %d debits on chain for %d workflows, %d declined; discrepancies: %+v", rep.OnChain, len(wfs), rep.Declined, rep.Discrepancies)
	}
	var sum int64
	for id, w := range wfs {
		sum += w.Quoted.Amount
		if w.Settlement == nil || seqs[id] == 0 {
			t.Errorf("workflow %s: settlement %+v, sequence %d", id, w.Settlement, seqs[id])
		}
	}
	info, err := settlement.Inspect(ctx, client, contract)
	if err != nil {
		t.Fatal(err)
	}
	if owed, _ := settlement.BaseUnits(sum, decimals); info.PayeeOwed.Cmp(owed) != 0 || rep.TotalOnChain != sum {
		t.Errorf("the payee is owed %s base units and %d cents were debited; the workflows were quoted %d cents", info.PayeeOwed, rep.TotalOnChain, sum)
	}
	alreadyID := sabi.GetABI().Events["AlreadySettled"].ID
	logs, err := client.FilterLogs(ctx, ethereum.FilterQuery{FromBlock: deployed, Addresses: []common.Address{contract}, Topics: [][]common.Hash{{alreadyID}}})
	if err != nil {
		t.Fatal(err)
	}
	already := len(logs)

	// The operator's settle transactions, block by block.
	chainID, err := client.ChainID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	signer := types.LatestSignerForChainID(chainID)
	op, _ := crypto.ToECDSA(opKey)
	from := crypto.PubkeyToAddress(op.PublicKey)
	settleSel := sabi.GetABI().Methods["settle"].ID
	mined := 0
	for n := deployed.Uint64(); n <= head; n++ {
		b, err := client.BlockByNumber(ctx, new(big.Int).SetUint64(n))
		if err != nil {
			t.Fatal(err)
		}
		for _, tx := range b.Transactions() {
			if s, err := types.Sender(signer, tx); err != nil || s != from || tx.To() == nil || *tx.To() != contract || !bytes.HasPrefix(tx.Data(), settleSel) {
				continue
			}
			mined++
			if !sent[tx.Nonce()] {
				t.Errorf("settle transaction %s (nonce %d, block %d) was sent by no process that logged sending it", tx.Hash(), tx.Nonce(), n)
			}
		}
	}
	t.Logf("chain: %d debits, %d AlreadySettled (charges submitted again, skipped at no charge), %d settle transactions mined, %d sent",
		rep.OnChain, already, mined, len(sent))
}

// The per-minute limit of one key holds across three instances on one
// database, and their rate-limit headers count the same requests: asked
// one after the other, round-robin, each instance's X-RateLimit-Remaining
// is one less than the previous instance's; asked all at once, exactly
// the limit is admitted, their remaining counts are limit-1 … 0, each
// once, and every refusal says 0 remaining and when to retry.
func testLimiterAcrossInstances(t *testing.T, f *fleet, adminDir, dsn string) {
	const limit = 20
	type answer struct {
		inst      int
		status    int
		limit     string
		remaining int
		reset     int64
		retry     string
		rateLimit string
	}
	ask := func(k int, key string) answer {
		_, s := f.server(k)
		req, _ := http.NewRequest("GET", s.url+"/v1/products", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := s.client.Do(req)
		if err != nil {
			t.Errorf("instance %d: %v", k, err)
			return answer{inst: k}
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		a := answer{inst: k, status: resp.StatusCode, limit: resp.Header.Get("X-RateLimit-Limit"),
			retry: resp.Header.Get("Retry-After"), rateLimit: resp.Header.Get("RateLimit")}
		var err1, err2 error
		a.remaining, err1 = strconv.Atoi(resp.Header.Get("X-RateLimit-Remaining"))
		a.reset, err2 = strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64)
		if err1 != nil || err2 != nil {
			t.Errorf("instance %d: HTTP %d without usable X-RateLimit-Remaining/Reset: %v", k, resp.StatusCode, resp.Header)
		}
		return a
	}
	newKey := func(name string) string {
		out := cli(t, adminDir, "-postgres", dsn, "keys", "create", "--env", "test", "--name", name, "--plan", "enterprise",
			"--per-minute", strconv.Itoa(limit), "--per-day", "100000")
		return strings.Fields(out)[1]
	}
	// inWindowStart waits, if the minute ends within 10 s, for the next one:
	// each round below takes about a second and must stay in one window
	// (if it does not, it is done again with a new key).
	inWindowStart := func() {
		if now := time.Now(); now.Second() >= 50 {
			time.Sleep(now.Truncate(time.Minute).Add(time.Minute).Sub(now))
		}
	}
	oneWindow := func(as []answer) bool {
		for _, a := range as {
			if a.reset != as[0].reset {
				return false
			}
		}
		return true
	}
	checkHeaders := func(a answer) {
		if a.limit != strconv.Itoa(limit) {
			t.Errorf("instance %d: X-RateLimit-Limit %q, want %d", a.inst, a.limit, limit)
		}
		if want := fmt.Sprintf(`"minute";r=%d;`, a.remaining); !strings.HasPrefix(a.rateLimit, want) {
			t.Errorf("instance %d: RateLimit %q, want it to start %s (as X-RateLimit-Remaining)", a.inst, a.rateLimit, want)
		}
		switch a.status {
		case http.StatusOK:
			if a.retry != "" {
				t.Errorf("instance %d: admitted with Retry-After %s", a.inst, a.retry)
			}
		case http.StatusTooManyRequests:
			if r, err := strconv.Atoi(a.retry); err != nil || r < 1 || r > 60 || a.remaining != 0 {
				t.Errorf("instance %d: refused with Retry-After %q and %d remaining; want 1-60 s and 0", a.inst, a.retry, a.remaining)
			}
		default:
			t.Errorf("instance %d: HTTP %d; want 200 or 429", a.inst, a.status)
		}
	}

	// One after the other, round-robin over the three.
	for attempt := 1; ; attempt++ {
		key := newKey(fmt.Sprint("serial-", attempt))
		inWindowStart()
		var as []answer
		for i := range limit + 2 {
			as = append(as, ask(i%3, key))
		}
		if !oneWindow(as) {
			if attempt == 3 {
				t.Fatalf("the minute turned during the serial round three times")
			}
			t.Logf("the minute turned during the serial round; again with a new key")
			continue
		}
		for i, a := range as {
			checkHeaders(a)
			wantStatus, wantRemaining := http.StatusOK, limit-1-i
			if i >= limit {
				wantStatus, wantRemaining = http.StatusTooManyRequests, 0
			}
			if a.status != wantStatus || a.remaining != wantRemaining {
				t.Errorf("request %d of one key, on instance %d: HTTP %d with %d remaining; want %d with %d remaining",
					i+1, a.inst, a.status, a.remaining, wantStatus, wantRemaining)
			}
		}
		break
	}

	// All at once: 3 × limit requests, each instance a third of them.
	for attempt := 1; ; attempt++ {
		key := newKey(fmt.Sprint("burst-", attempt))
		inWindowStart()
		as := make([]answer, 3*limit)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range as {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				as[i] = ask(i%3, key)
			}()
		}
		close(start)
		wg.Wait()
		if t.Failed() {
			return
		}
		if !oneWindow(as) {
			if attempt == 3 {
				t.Fatalf("the minute turned during the burst three times")
			}
			t.Logf("the minute turned during the burst; again with a new key")
			continue
		}
		var remaining []int
		admittedBy := [3]int{}
		for _, a := range as {
			checkHeaders(a)
			if a.status == http.StatusOK {
				remaining = append(remaining, a.remaining)
				admittedBy[a.inst]++
			}
		}
		slices.Sort(remaining)
		want := make([]int, limit)
		for i := range want {
			want[i] = i
		}
		if len(remaining) > limit {
			t.Errorf("%d of %d concurrent requests admitted for a key limited to %d a minute", len(remaining), len(as), limit)
		}
		if !slices.Equal(remaining, want) {
			t.Errorf("remaining counts of the admitted requests %v; want each of 0 … %d once", remaining, limit-1)
		}
		t.Logf("burst of %d: %d admitted (per instance %v), %d refused", len(as), len(remaining), admittedBy, len(as)-len(remaining))
		break
	}
}
