package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/client"
	"github.com/settleflow/settleflow/internal/pgtest"
)

// multiInstanceN is how many workflows TestRemoteWorkOnThreeInstances
// creates: -multi-instance-n, else $SETTLEFLOW_MULTI_INSTANCE_N, else 2000.
var multiInstanceN = flag.Int("multi-instance-n", envInt("SETTLEFLOW_MULTI_INSTANCE_N", 2000), "how many workflows TestRemoteWorkOnThreeInstances creates")

// deployOnGeth runs `chain deploy` on a geth --dev node with the dev
// account's key and returns the flags it printed (every instance is started
// with them, and `chain reconcile` reads them).
func deployOnGeth(t *testing.T, rpcURL string, opKey []byte) []string {
	t.Helper()
	keyFile := filepath.Join(t.TempDir(), "operator.key")
	if err := os.WriteFile(keyFile, []byte(common.Bytes2Hex(opKey)), 0o600); err != nil {
		t.Fatal(err)
	}
	payee := crypto.PubkeyToAddress(mustKey(t).PublicKey).Hex()
	out, errOut, code := runCmd(t, t.TempDir(), "chain", "deploy", "--env", "test", "--rpc", rpcURL, "--chain-id", "1337",
		"--key-file", keyFile, "--payee", payee, "--confirmations", "2")
	if code != 0 || !strings.HasPrefix(out, "-test-rpc ") {
		t.Fatalf("chain deploy: exit %d\n%s%s", code, out, errOut)
	}
	return strings.Fields(out)
}

// workerProductsFile is testdata/worker-products.json, absolute.
func workerProductsFile(t *testing.T) string {
	t.Helper()
	file, err := filepath.Abs(filepath.Join("testdata", "worker-products.json"))
	if err != nil {
		t.Fatal(err)
	}
	return file
}

// instanceID is the engine id (Options.WorkerID) the instance on dir runs
// as: the attempts record names it.
func instanceID(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "worker-id"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// proxyCall is one request the balancing proxy passed on.
type proxyCall struct {
	method, path string
	inst         int // -1: no instance was up
	status       int // 502: the instance did not answer
}

// balancer is an HTTPS reverse proxy in front of a fleet: each request goes
// to an instance chosen at random among those up, and is recorded.
type balancer struct {
	srv *httptest.Server
	dir string // holds tls/cert.pem, the proxy's certificate

	mu    sync.Mutex
	calls []proxyCall
}

type instKey struct{}

func newBalancer(t *testing.T, f *fleet) *balancer {
	t.Helper()
	pool := x509.NewCertPool()
	for _, in := range f.insts {
		b, err := os.ReadFile(filepath.Join(in.dir, "tls", "cert.pem"))
		if err != nil {
			t.Fatal(err)
		}
		pool.AppendCertsFromPEM(b)
	}
	b := &balancer{dir: t.TempDir()}
	rp := &httputil.ReverseProxy{
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, MaxIdleConnsPerHost: 32,
			ResponseHeaderTimeout: time.Minute},
		Rewrite: func(r *httputil.ProxyRequest) {
			k := r.In.Context().Value(instKey{}).(*int)
			u, _ := url.Parse(f.insts[*k].s.url)
			r.SetURL(u)
		},
		ModifyResponse: func(resp *http.Response) error {
			k := resp.Request.Context().Value(instKey{}).(*int)
			b.record(proxyCall{method: resp.Request.Method, path: resp.Request.URL.Path, inst: *k, status: resp.StatusCode})
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			k := r.Context().Value(instKey{}).(*int)
			b.record(proxyCall{method: r.Method, path: r.URL.Path, inst: *k, status: http.StatusBadGateway})
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	b.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k, s := f.server(rand.IntN(3))
		if s == nil {
			b.record(proxyCall{method: r.Method, path: r.URL.Path, inst: -1, status: http.StatusServiceUnavailable})
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), instKey{}, &k)))
	}))
	b.srv.StartTLS()
	t.Cleanup(b.srv.Close)
	if err := os.MkdirAll(filepath.Join(b.dir, "tls"), 0o700); err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: b.srv.Certificate().Raw})
	if err := os.WriteFile(filepath.Join(b.dir, "tls", "cert.pem"), certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return b
}

func (b *balancer) record(c proxyCall) {
	b.mu.Lock()
	b.calls = append(b.calls, c)
	b.mu.Unlock()
}

func (b *balancer) all() []proxyCall {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.calls)
}

// server is the balancer as a processServer, for startLangWorker.
func (b *balancer) server() *processServer { return &processServer{url: b.srv.URL} }

// attemptRow is one row of settleflow_attempts.
type attemptRow struct {
	task, workflow, instance string
	number                   int
	claimed, ended           int64 // micros
	outcome, message         string
}

// readAttempts reads the attempts record of the test environment.
func readAttempts(t *testing.T, dsn string) map[string][]attemptRow {
	t.Helper()
	ctx := context.Background()
	db, err := openDB(ctx, config{postgres: dsn})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Bun().QueryContext(ctx, `SELECT task_id, workflow_id, instance, number, claimed_at, ended_at, outcome, message
		FROM settleflow_attempts WHERE livemode = false`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][]attemptRow{}
	for rows.Next() {
		var a attemptRow
		if err := rows.Scan(&a.task, &a.workflow, &a.instance, &a.number, &a.claimed, &a.ended, &a.outcome, &a.message); err != nil {
			t.Fatal(err)
		}
		out[a.workflow] = append(out[a.workflow], a)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, as := range out {
		slices.SortFunc(as, func(a, b attemptRow) int { return int(a.claimed - b.claimed) })
	}
	return out
}

// attemptProblems checks one workflow's attempts: one task at a time (each
// attempt claimed after the one before it ended: a task taken from its
// worker ends when its lease passed, and only then may another worker
// claim the workflow's next task), attempt numbers never going back, every
// attempt but the last lost its lease or failed (to be retried), and the
// last ended as want.
func attemptProblems(id string, as []attemptRow, want string) []string {
	var out []string
	if len(as) == 0 {
		return []string{fmt.Sprintf("%s: no attempt recorded", id)}
	}
	for i, a := range as {
		if a.ended < a.claimed {
			out = append(out, fmt.Sprintf("%s: attempt %s ended (%d) before it was claimed (%d)", id, a.task, a.ended, a.claimed))
		}
		if i == 0 {
			continue
		}
		p := as[i-1]
		if a.claimed < p.ended {
			out = append(out, fmt.Sprintf("%s: task %s (attempt %d) claimed at %s while task %s (attempt %d) was held until %s: two workers at once",
				id, a.task, a.number, time.UnixMicro(a.claimed).UTC().Format(time.RFC3339Nano), p.task, p.number, time.UnixMicro(p.ended).UTC().Format(time.RFC3339Nano)))
		}
		if a.number < p.number {
			out = append(out, fmt.Sprintf("%s: attempt %d after attempt %d", id, a.number, p.number))
		}
		if p.outcome != string(settleflow.AttemptLeaseLost) && p.outcome != string(settleflow.AttemptFailed) {
			out = append(out, fmt.Sprintf("%s: attempt %d ended %s, and another was run after it", id, p.number, p.outcome))
		}
	}
	if last := as[len(as)-1]; last.outcome != want {
		out = append(out, fmt.Sprintf("%s: the last attempt (%d, task %s) ended %s; want %s", id, last.number, last.task, last.outcome, want))
	}
	return out
}

// Attempts one after the other pass; a claim before the previous task
// ended, an attempt after the completed one, a wrong last outcome do not.
func TestAttemptProblems(t *testing.T) {
	a := func(task string, n int, claimed, ended int64, outcome string) attemptRow {
		return attemptRow{task: task, number: n, claimed: claimed, ended: ended, outcome: outcome}
	}
	for _, c := range []struct {
		as   []attemptRow
		want string // in the one problem; "" for none
	}{
		{[]attemptRow{a("t1", 1, 10, 20, "completed")}, ""},
		{[]attemptRow{a("t1", 1, 10, 20, "lease_lost"), a("t2", 2, 20, 30, "completed")}, ""},
		{[]attemptRow{a("t1", 1, 10, 25, "lease_lost"), a("t2", 2, 20, 30, "completed")}, "two workers at once"},
		{[]attemptRow{a("t1", 1, 10, 20, "completed"), a("t2", 2, 21, 30, "completed")}, "and another was run after it"},
		{[]attemptRow{a("t1", 1, 10, 20, "failed")}, "want completed"},
		{nil, "no attempt"},
	} {
		problems := attemptProblems("wf", c.as, "completed")
		if c.want == "" && len(problems) != 0 || c.want != "" && (len(problems) != 1 || !strings.Contains(problems[0], c.want)) {
			t.Errorf("%v: problems %q; want %q", c.as, problems, c.want)
		}
	}
}

// miWorkflow is what the test reads of a workflow on the wire.
type miWorkflow struct {
	wireWorkflow
	Charged *struct {
		Amount int64 `json:"amount"`
	} `json:"charged"`
}

// Remote work on three reference-server instances on one Postgres database,
// settling on one geth --dev chain, served by six Python worker processes
// (testdata/workers/plan_worker.py) whose every request goes through a
// proxy to an instance chosen at random: -multi-instance-n workflows (2000)
// over the declared products of every pricing model (langCases: fixed;
// capped, and capped past its budget; success fee earned and not; hybrid
// found and not), created round-robin on the instances. During the run the
// settlement lease's holder is SIGKILLed and started again, and so is one
// worker. Then:
//
//   - every workflow ended as its case says, charged what its model gives
//     (margin_floor_exceeded: Failed, nothing charged);
//   - the attempts record shows no task held by two workers at once, and
//     each workflow's last attempt ended as its outcome says;
//   - every completion answered 2xx is the completion of the workflow's
//     completed attempt, and completions sent through an instance other
//     than the one that created the workflow counted (and some tasks
//     claimed through the killed instance were completed after the kill);
//   - the chain holds exactly the charges: each charged workflow debited
//     once for its charge (a scan of the contract's events) and `chain
//     reconcile` finds nothing.
//
// It takes minutes: set SETTLEFLOW_TEST_MULTI_INSTANCE=1 (.ci/run does, in
// a step of its own); SETTLEFLOW_MULTI_INSTANCE_N=200 for a quick run.
func TestRemoteWorkOnThreeInstances(t *testing.T) {
	if os.Getenv("SETTLEFLOW_TEST_MULTI_INSTANCE") == "" {
		t.Skip("set SETTLEFLOW_TEST_MULTI_INSTANCE=1 to run 2,000 remote workflows on three instances and geth --dev (.ci/run does)")
	}
	n := *multiInstanceN
	rpcURL, opKey := startGethDev(t)
	pg := pgtest.Connect(t)
	dsn := pg.SchemaDSN(t, "multiinstance")
	ctx := context.Background()
	chainFlags := deployOnGeth(t, rpcURL, opKey)

	f := &fleet{t: t}
	for k := range f.insts {
		f.insts[k] = &fleetInstance{dir: t.TempDir()}
	}
	f.flags = append(append([]string{}, chainFlags...), "-postgres", dsn, "-log-level", "info", "-log-format", "json",
		"-products", workerProductsFile(t), "-task-lease", "3s", "-execution-timeout", "20s")
	adminDir := t.TempDir()
	pgFlags := []string{"-postgres", dsn}
	key := strings.Fields(cli(t, adminDir, append(pgFlags, "keys", "create", "--env", "test", "--name", "multi", "--plan", "enterprise",
		"--per-minute", "1000000", "--per-day", "100000000")...))[1]
	products := langProducts
	wkey := workerKey(t, adminDir, pgFlags, "--products", strings.Join(products.names(), ","),
		"--plan", "enterprise", "--per-minute", "1000000", "--per-day", "100000000")
	for k := range f.insts {
		f.start(t, k)
	}
	t.Cleanup(func() {
		if t.Failed() {
			f.dumpLogs(t)
		}
	})
	insts := make([]string, 3)
	for k, in := range f.insts {
		insts[k] = instanceID(t, in.dir)
	}
	bal := newBalancer(t, f)

	// Each case's workflows go to customers of their own, 60 a customer
	// (the test faucet gives each 1,000 USD; the dearest quote is 4.29).
	caseOf := func(i int) int { return i % len(langCases) }
	customerOf := func(i int) string { return fmt.Sprintf("cus_mi_%d_%d", caseOf(i), i/(60*len(langCases))) }
	plans := map[string]any{}
	for i := range n {
		plans[customerOf(i)] = langCases[caseOf(i)].plan
	}
	planFile := filepath.Join(t.TempDir(), "plan.json")
	pb, _ := json.Marshal(plans)
	if err := os.WriteFile(planFile, pb, 0o600); err != nil {
		t.Fatal(err)
	}
	workers := make([]*langWorker, 6)
	for i := range workers {
		workers[i] = startLangWorker(t, "python", bal.server(), bal.dir, wkey, planFile, products.names())
	}

	began := time.Now()
	ids := make([]string, n)
	creator := map[string]int{} // workflow → the instance that answered its create first (not a replay)
	var cmu sync.Mutex
	var created atomic.Int64
	createOne := func(i int) {
		c := langCases[caseOf(i)]
		// A distinct ticket per workflow, for reading the logs.
		payload := strings.Replace(c.payload, `"ticketId":"T-`, fmt.Sprintf(`"ticketId":"MI%d-`, i), 1)
		body := fmt.Sprintf(`{"product":%q,"customerId":%q,"payload":%s}`, products[c.model], customerOf(i), payload)
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
			req.Header.Set("Idempotency-Key", fmt.Sprint("multi-", i))
			resp, err := s.client.Do(req)
			if err != nil {
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
				if resp.Header.Get("Idempotent-Replayed") != "true" {
					cmu.Lock()
					creator[wf.ID] = k
					cmu.Unlock()
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
	waitCreated := func(c int64) {
		for deadline := time.Now().Add(3 * time.Minute); created.Load() < c; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) || t.Failed() {
				t.Fatalf("%d workflows created, waiting for %d", created.Load(), c)
			}
		}
	}
	wait := goRange(0, n, 16, createOne)

	// A third in: the holder of the settlement lease is SIGKILLed, with
	// tasks claimed through it in the workers' hands; started again 3 s
	// later. Halfway: a worker is SIGKILLed, a new one started.
	waitCreated(int64(n / 3))
	victim := f.holder(t, time.Time{})
	killedAt := time.Now()
	f.stop(t, victim, true)
	t.Logf("%v: %d created; instance %d (the settlement lease's holder) SIGKILLed", time.Since(began).Round(time.Millisecond), created.Load(), victim)
	time.Sleep(3 * time.Second)
	f.start(t, victim)
	waitCreated(int64(n / 2))
	killedWorker := workers[0]
	killedWorker.kill()
	// The tasks the killed worker started (one it returned may not have
	// been completed yet: its handler prints "returned" before completing).
	held := map[string]bool{}
	for _, e := range killedWorker.all() {
		if id, ok := e["task"].(string); ok && e["event"] == "started" {
			held[id] = true
		}
	}
	workers[0] = startLangWorker(t, "python", bal.server(), bal.dir, wkey, planFile, products.names())
	t.Logf("%v: %d created; instance %d restarted, worker 0 SIGKILLed and replaced", time.Since(began).Round(time.Millisecond), created.Load(), victim)
	wait()
	if t.Failed() {
		return
	}
	if len(uniq(ids)) != n {
		t.Fatalf("%d distinct workflow ids for %d workflows", len(uniq(ids)), n)
	}
	t.Logf("%v: all %d created", time.Since(began).Round(time.Millisecond), n)

	// Every workflow terminal (read through an instance).
	var final map[string]miWorkflow
	for deadline, lastLog := time.Now().Add(4*time.Minute), time.Now(); ; time.Sleep(time.Second) {
		_, s := f.server(0)
		all := listMIWorkflows(t, s, key)
		done := 0
		for _, id := range ids {
			if w, ok := all[id]; ok && (w.Status == "Settled" || w.Status == "Failed" || w.Status == "Canceled") {
				done++
			}
		}
		if done == n {
			final = all
			break
		}
		if time.Since(lastLog) > 10*time.Second {
			t.Logf("%v: %d of %d ended", time.Since(began).Round(time.Millisecond), done, n)
			lastLog = time.Now()
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 4 minutes: %d of %d workflows ended", done, n)
		}
	}
	t.Logf("%v: all %d ended", time.Since(began).Round(time.Millisecond), n)
	for _, w := range workers {
		w.stop(t)
	}

	// Each as its case says.
	charges := map[string]wireWorkflow{} // the charged workflows, Quoted set to the charge (checkChain)
	for i, id := range ids {
		c, w := langCases[caseOf(i)], final[id]
		if c.charged < 0 {
			var fail struct {
				Code string `json:"code"`
			}
			_ = json.Unmarshal(w.Failure, &fail)
			if w.Status != "Failed" || fail.Code != "margin_floor_exceeded" || w.Charged != nil {
				t.Errorf("%s (%s, workflow %d): %s %s, charged %v; want Failed margin_floor_exceeded, nothing charged", id, c.name, i, w.Status, w.Failure, w.Charged)
			}
			continue
		}
		if w.Status != "Settled" || w.Charged == nil || w.Charged.Amount != c.charged {
			t.Errorf("%s (%s, workflow %d): %s, charged %+v, failure %s; want Settled, charged %d", id, c.name, i, w.Status, w.Charged, w.Failure, c.charged)
			continue
		}
		if c.charged > 0 {
			ww := w.wireWorkflow
			ww.Quoted.Amount = c.charged
			charges[id] = ww
		}
	}
	if t.Failed() {
		return
	}

	// The attempts record: one worker at a time; the proxy's record: every
	// completion that counted was the completed attempt's, and those through
	// another instance than the creator's counted.
	attempts := readAttempts(t, dsn)
	taskOf := map[string]attemptRow{}
	numbers := map[int]int{}
	earlier := map[string]int{} // the outcomes (and messages) of the attempts run again
	startedAny := map[string]bool{}
	for _, w := range append(slices.Clone(workers), killedWorker) {
		for _, e := range w.all() {
			if id, ok := e["task"].(string); ok && e["event"] == "started" {
				startedAny[id] = true
			}
		}
	}
	lostAnswers := 0 // tasks handed out in a claim whose answer was lost
	for i, id := range ids {
		want := string(settleflow.AttemptCompleted)
		if langCases[caseOf(i)].charged < 0 {
			want = string(settleflow.AttemptMarginFloorExceeded)
		}
		for _, p := range attemptProblems(id, attempts[id], want) {
			t.Error(p)
		}
		for j, a := range attempts[id] {
			taskOf[a.task] = a
			if j < len(attempts[id])-1 {
				earlier[a.outcome+": "+a.message]++
			}
			// A task is taken from its worker only when its own lease
			// passes: the SIGKILLed worker's, or one handed out in a claim
			// whose answer a kill lost (no worker ever started it); never
			// because an instance died or restarted.
			if a.outcome == string(settleflow.AttemptLeaseLost) && !held[a.task] {
				if startedAny[a.task] {
					t.Errorf("%s: task %s (attempt %d) lost its lease (%s), but the SIGKILLed worker never started it", id, a.task, a.number, a.message)
				}
				lostAnswers++
			}
		}
		if as := attempts[id]; len(as) > 0 {
			numbers[as[len(as)-1].number]++
		}
	}
	instOf := map[string]int{}
	for k, id := range insts {
		instOf[id] = k
	}
	completedVia := map[string]int{}  // task → instance of its first 2xx completion
	completeSent := map[string]bool{} // tasks whose completion reached an instance (its answer may have been lost to a kill)
	var cross, same, viaOther, claimedBeforeKill, proxied, failed502 int
	statusCounts := map[string]int{} // "claim 200", "heartbeat 409", …
	for _, c := range bal.all() {
		proxied++
		statusCounts[fmt.Sprint(c.path[strings.LastIndexByte(c.path, '/')+1:], " ", c.status)]++
		if c.status == http.StatusBadGateway {
			failed502++
		}
		task, ok := strings.CutSuffix(strings.TrimPrefix(c.path, "/v1/tasks/"), "/complete")
		if !ok || c.method != "POST" {
			continue
		}
		if c.inst >= 0 {
			completeSent[task] = true
		}
		if c.status/100 != 2 {
			continue
		}
		a, ok := taskOf[task]
		if !ok {
			t.Errorf("a completion of task %s was answered %d through instance %d, but no attempt records the task", task, c.status, c.inst)
			continue
		}
		if a.outcome != string(settleflow.AttemptCompleted) {
			t.Errorf("a completion of task %s (workflow %s, attempt %d) was answered %d, but the attempt ended %s", task, a.workflow, a.number, c.status, a.outcome)
		}
		if _, seen := completedVia[task]; seen {
			continue // an idempotent retry of the completion
		}
		completedVia[task] = c.inst
		if k, ok := creator[a.workflow]; ok {
			if k != c.inst {
				cross++
			} else {
				same++
			}
		}
		if a.instance == insts[victim] && a.claimed < killedAt.UnixMicro() && c.inst != victim {
			claimedBeforeKill++
		}
		if instOf[a.instance] != c.inst {
			viaOther++
		}
	}
	for id, as := range attempts {
		if last := as[len(as)-1]; last.outcome == string(settleflow.AttemptCompleted) {
			if !completeSent[last.task] {
				t.Errorf("workflow %s: attempt %d (task %s) completed, but the proxy passed on no completion of it", id, last.number, last.task)
			}
		}
	}
	t.Logf("proxy: %d requests (by status %v); completions: %d through an instance other than the workflow's creator, %d through the creator; %d through another instance than the claim's; %d of tasks claimed through instance %d before its SIGKILL, completed through another",
		proxied, statusCounts, cross, same, viaOther, claimedBeforeKill, victim)
	t.Logf("workflows by the number of their last attempt: %v; the attempts run again ended %v (%d of them tasks no worker started: handed out in a claim whose answer a kill lost)", numbers, earlier, lostAnswers)
	if lostAnswers > statusCounts["claim 502"]*4 {
		t.Errorf("%d tasks no worker started lost their lease, but only %d claims (of at most 4 tasks) lost their answer", lostAnswers, statusCounts["claim 502"])
	}
	if cross == 0 {
		t.Error("no completion went through an instance other than the workflow's creator")
	}
	if t.Failed() {
		return
	}

	// The chain: each charge once, nothing else.
	for k := range f.insts {
		if f.isUp(k) {
			f.stop(t, k, false)
		}
	}
	_, sends := f.holdings(t)
	sent := map[uint64]bool{}
	for _, s := range sends {
		sent[s.nonce] = true
	}
	checkChain(t, ctx, rpcURL, opKey, chainFlags, dsn, charges, sent)
	out, errOut, code := runCmd(t, adminDir, append(append(slices.Clone(pgFlags), chainFlags...), "chain", "reconcile", "--env", "test")...)
	if code != 0 || !strings.Contains(out, "no discrepancy") || !strings.Contains(out, fmt.Sprintf("%d charges", len(charges))) {
		t.Errorf("chain reconcile: exit %d\n%s%s", code, out, errOut)
	}
	t.Logf("%v: checked (%d charged on chain)", time.Since(began).Round(time.Millisecond), len(charges))
}

// listMIWorkflows reads every workflow of the key's environment, with its
// charge.
func listMIWorkflows(t *testing.T, s *processServer, key string) map[string]miWorkflow {
	t.Helper()
	return listWorkflowsAs(t, s, key, func(w miWorkflow) string { return w.ID })
}

// A worker holding a task when the instance that handed it out is
// SIGKILLed completes it through the other instance: the workflow settles
// with that result, on attempt 1, the task the worker was given (two
// instances on one Postgres database, settling on geth --dev: the
// simulated chain lives in one process).
func TestCompleteAfterHandingInstanceKilled(t *testing.T) {
	rpcURL, opKey := startGethDev(t)
	pg := pgtest.Connect(t)
	dsn := pg.SchemaDSN(t, "handedout")
	chainFlags := deployOnGeth(t, rpcURL, opKey)
	pgFlags := []string{"-postgres", dsn}
	adminDir := t.TempDir()
	key := strings.Fields(cli(t, adminDir, append(pgFlags, "keys", "create", "--env", "test", "--name", "handed", "--plan", "enterprise",
		"--per-minute", "100000", "--per-day", "1000000")...))[1]
	fixed := langProducts[settleflow.PricingFixed]
	wkey := workerKey(t, adminDir, pgFlags, "--products", fixed)
	// A's execution of the workflow, if it had it, is taken over by B 12 s
	// after the kill (1.1 × the execution timeout + 1 s).
	flags := append(append(slices.Clone(chainFlags), pgFlags...), "-products", workerProductsFile(t), "-task-lease", "30s", "-execution-timeout", "10s")
	dirA, dirB := t.TempDir(), t.TempDir()
	a := startProcessServer(t, dirA, flags...)
	b := startProcessServer(t, dirB, flags...)
	instA := instanceID(t, dirA)

	// Created on B, claimed on A.
	id := createOver(t, b, key, fixed, "cus_handed", `{"ticketId":"T-h","subject":"Handed out","attachments":1}`)
	ctx := context.Background()
	wa := langClient(t, a, dirA, wkey)
	var tasks []client.Task
	for deadline := time.Now().Add(time.Minute); len(tasks) == 0; {
		var err error
		tasks, err = wa.Tasks.Claim(ctx, &client.TaskClaimParams{Products: []string{fixed}, WaitSeconds: 10})
		if err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("no task within a minute")
		}
	}
	task := tasks[0]
	if task.WorkflowID != id || task.Attempt != 1 {
		t.Fatalf("claimed %+v; want attempt 1 of %s", task, id)
	}
	a.kill()

	// Through B, which neither handed the task out nor holds its execution.
	wb := langClient(t, b, dirB, wkey)
	if _, err := wb.Tasks.Complete(ctx, task.ID, map[string]any{"queue": "after-kill"}, []client.CostItem{{Category: "model", Provider: "chat-model", Units: 10, Amount: 40}}); err != nil {
		t.Fatalf("the completion through the other instance: %v", err)
	}
	// Sent again (a worker whose connection broke does): idempotent.
	if _, err := wb.Tasks.Complete(ctx, task.ID, map[string]any{"queue": "after-kill"}, []client.CostItem{{Category: "model", Provider: "chat-model", Units: 10, Amount: 40}}); err != nil {
		var apiErr *client.APIError
		if !errors.As(err, &apiErr) || apiErr.Status >= 500 {
			t.Fatalf("the completion sent again: %v", err)
		}
	}
	// fixed: estimate 200 + 50 = 250, quote ceil(250 / 0.7) = 358.
	got := waitTerminal(t, b, key, id)
	if got["status"] != "Settled" || got["result"].(map[string]any)["queue"] != "after-kill" || num(got["charged"].(map[string]any)["amount"]) != 358 {
		t.Fatalf("%v; want Settled with the worker's result, charged 358", got)
	}
	if st, _ := got["settlement"].(map[string]any); st == nil || st["txHash"] == nil {
		t.Fatalf("settlement %v", got["settlement"])
	}
	as := readAttempts(t, dsn)[id]
	if len(as) != 1 || as[0].task != task.ID || as[0].number != 1 || as[0].outcome != string(settleflow.AttemptCompleted) || as[0].instance != instA {
		t.Fatalf("attempts %+v; want one: task %s, attempt 1, completed, claimed through instance %s", as, task.ID, instA)
	}
}
