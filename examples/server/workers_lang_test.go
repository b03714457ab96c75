package main

import (
	"bufio"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/client"
	"github.com/settleflow/settleflow/settlement"
)

// Workers in Python and Node.js, each a process of its own, against the
// reference server in a process of its own over HTTPS, settling on its
// embedded chain, with the products declared in
// testdata/worker-products.json (-products): one of each pricing model,
// all remote. Each language's worker (testdata/workers/plan_worker.py,
// plan_worker.mjs: the client libraries' Worker, one handler told by a plan
// what to spend and return) serves all four:
//
//   - each workflow is Settled with the charge its model gives (fixed: the
//     quote; capped: cost plus markup; success_fee: the quote, or nothing
//     when the outcome fails; hybrid: the quote, or its base), and the
//     chain holds exactly those charges: each customer's balance in the
//     contract fell by its charge, and reconciling the charges against the
//     contract's debits finds nothing;
//   - a worker reporting spend past its budget is answered 409
//     margin_floor_exceeded and the workflow fails with nothing charged;
//   - a worker SIGKILLed in the middle of a task loses it when its lease
//     passes; a new worker process completes it, once, as attempt 2; the
//     first one's completion, sent late with its task id, is 409 lease_lost
//     and changes nothing; the customer is charged once;
//   - worker keys (checkWorkerKeys) reach the task endpoints only, and one
//     limited to a product is never handed another's task.
//
// (That a test worker key never sees a live task is httpapi's
// TestTaskKeyScoping: the reference server refuses a dev chain for live.)
func TestWorkersInPythonAndNode(t *testing.T) {
	need := func(tool string) {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not on PATH; this test runs workers in it (see README, Set up)", tool)
		}
	}
	need("python3")
	need("node")
	dir := t.TempDir()
	key := regexp.MustCompile(`sk_test_[0-9A-Za-z]+`).FindString(cli(t, dir, "keys", "create", "--env", "test", "--name", "langs",
		"--plan", "enterprise", "--per-minute", "100000", "--per-day", "1000000"))
	products := langProducts
	file, err := filepath.Abs(filepath.Join("testdata", "worker-products.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := startProcessServer(t, dir, "-products", file, "-task-lease", "2s")

	expected := map[string]int64{}  // a Settled workflow's charge
	customers := map[string]int64{} // what each customer was charged
	checkWorkerKeys(t, s, dir, key, products, expected, customers)
	for _, lang := range []string{"python", "node"} {
		t.Run(lang, func(t *testing.T) {
			runLanguage(t, s, dir, key, lang, products, expected, customers)
		})
	}
	if t.Failed() {
		return
	}

	// The chain holds exactly the charges.
	s.kill()
	ctx := context.Background()
	db, err := readLedger(ctx, config{dataDir: dir}, settleflow.Test)
	if err != nil {
		t.Fatal(err)
	}
	charged := 0
	for _, c := range expected {
		if c > 0 {
			charged++
		}
	}
	if len(db.records) != charged {
		t.Fatalf("the ledger holds %d charges, want %d", len(db.records), charged)
	}
	for _, r := range db.records {
		if r.Amount != expected[r.WorkflowID] {
			t.Errorf("ledger: %s charged %d, want %d", r.WorkflowID, r.Amount, expected[r.WorkflowID])
		}
	}
	chain, err := settlement.NewSimulated(ctx, settlement.SimulatedOptions{DataDir: filepath.Join(dir, "chain"), ManualCommit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer chain.Close()
	for customer, c := range customers {
		if got := contractBalance(t, chain.Backend.Client(), chain.Addresses.Contract, chain.CustomerRefSecret, customer); got != settleflow.DefaultTestFaucet-c {
			t.Errorf("the contract holds %d for %s; want %d less its charge %d", got, customer, settleflow.DefaultTestFaucet, c)
		}
	}
	head, err := chain.Backend.Client().BlockNumber(ctx)
	if err != nil {
		t.Fatal(err)
	}
	info, err := settlement.Inspect(ctx, chain.Backend.Client(), chain.Addresses.Contract)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := settlement.Reconcile(ctx, chain.Backend.Client(), db.records, settlement.ReconcileOptions{Contract: chain.Addresses.Contract,
		Decimals: info.Decimals, FromBlock: info.DeployedAt, ToBlock: head,
		RefOf: func(id string) [32]byte { return settlement.CustomerRef(chain.CustomerRefSecret, settleflow.Test, id) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Discrepancies) > 0 || rep.OnChain != charged {
		t.Errorf("reconcile: %d debits on chain for %d charges; discrepancies %+v", rep.OnChain, charged, rep.Discrepancies)
	}
}

// checkWorkerKeys: a worker key can neither create a workflow nor read a
// customer; an ordinary key cannot claim; a worker key limited to the fixed
// product is never handed the capped product's task, even while it waits
// with that task ready, and may not ask for it.
func checkWorkerKeys(t *testing.T, s *processServer, dir, key string, products modelProducts, expected, customers map[string]int64) {
	t.Helper()
	ctx := context.Background()
	fixed, capped := products[settleflow.PricingFixed], products[settleflow.PricingCapped]
	unlimited := workerKey(t, dir, nil)
	if status, body := call(t, s, unlimited, "POST", "/v1/workflows", fmt.Sprintf(`{"product":%q,"customerId":"cus_keys","payload":{"ticketId":"T-0"}}`, fixed), ""); status != 403 || code(body) != "worker_key_forbidden" {
		t.Fatalf("a worker key's create: %d %v", status, body)
	}
	if status, body := call(t, s, unlimited, "GET", "/v1/customers/cus_keys", "", ""); status != 403 || code(body) != "worker_key_forbidden" {
		t.Fatalf("a worker key reading a customer: %d %v", status, body)
	}
	if status, body := call(t, s, key, "POST", "/v1/tasks/claim", fmt.Sprintf(`{"products":[%q]}`, fixed), ""); status != 403 || code(body) != "worker_key_required" {
		t.Fatalf("an ordinary key's claim: %d %v", status, body)
	}
	// capped, one clean page: estimate 14, quote max(ceil(14 / 0.7), 25) =
	// 25; no cost, charged the minimum, 25.
	waiting := createOver(t, s, key, capped, "cus_keys", `{"documentId":"D-k","pages":1}`)
	limited := langClient(t, s, dir, workerKey(t, dir, nil, "--products", fixed))
	if tasks, err := limited.Tasks.Claim(ctx, &client.TaskClaimParams{Products: []string{fixed}, Max: 10, WaitSeconds: 1}); err != nil || len(tasks) != 0 {
		t.Fatalf("the key limited to %s claimed %v, %v", fixed, tasks, err)
	}
	_, err := limited.Tasks.Claim(ctx, &client.TaskClaimParams{Products: []string{capped}})
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 403 || apiErr.Code != "product_not_allowed" {
		t.Fatalf("the key limited to %s claiming %s: %v", fixed, capped, err)
	}
	w := langClient(t, s, dir, unlimited)
	tasks, err := w.Tasks.Claim(ctx, &client.TaskClaimParams{Products: []string{fixed, capped}, Max: 10, WaitSeconds: 10})
	if err != nil || len(tasks) != 1 || tasks[0].WorkflowID != waiting {
		t.Fatalf("claimed %v, %v; want the task of %s", tasks, err, waiting)
	}
	if _, err := w.Tasks.Complete(ctx, tasks[0].ID, map[string]any{"fields": 0}, nil); err != nil {
		t.Fatal(err)
	}
	if got := waitTerminal(t, s, key, waiting); got["status"] != "Settled" || num(got["charged"].(map[string]any)["amount"]) != 25 {
		t.Fatalf("%v; want Settled, charged 25", got)
	}
	expected[waiting] = 25
	customers["cus_keys"] = 25
}

// modelProducts names the remote product of each pricing model the test
// serves.
type modelProducts map[settleflow.PricingModel]string

func (m modelProducts) names() []string {
	return []string{m[settleflow.PricingFixed], m[settleflow.PricingCapped], m[settleflow.PricingSuccessFee], m[settleflow.PricingHybrid]}
}

// langProducts: the declared products of testdata/worker-products.json,
// one of each model, remote.
var langProducts = modelProducts{
	settleflow.PricingFixed:      "support-triage",
	settleflow.PricingCapped:     "ocr-extraction",
	settleflow.PricingSuccessFee: "kb-answer",
	settleflow.PricingHybrid:     "lead-lookup",
}

// langCase is one workflow a worker runs and what it must come to.
type langCase struct {
	name    string
	model   settleflow.PricingModel
	payload string
	plan    map[string]any // what the worker's handler does (plan_worker.py)
	quote   int64          // by hand from the product's pricing
	cost    int64          // what the worker reported
	// charged is the charge; -1: it fails margin_floor_exceeded, nothing
	// charged.
	charged int64
}

func item(category, provider string, units, amount int64) map[string]any {
	return map[string]any{"category": category, "provider": provider, "units": units, "amount": amount}
}

// langCases: the arithmetic of each is in its comment (the products'
// prices in testdata/worker-products.json).
var langCases = []langCase{
	// fixed, margin 30 %: estimate 200 + 50 × 2 = 300, quote ceil(300 /
	// 0.7) = 429, charged whatever the cost.
	{name: "fixed", model: settleflow.PricingFixed, payload: `{"ticketId":"T-1","subject":"Refund","attachments":2}`,
		plan: map[string]any{"spend": []any{item("model", "chat-model", 400, 120)}, "costItems": []any{item("tools", "attachment-scanner", 2, 30)},
			"result": map[string]any{"queue": "billing"}},
		quote: 429, cost: 150, charged: 429},
	// capped, markup 30 %: estimate 10 + 4 × 10 = 50, quote ceil(50 / 0.7)
	// = 72; cost 40, charged ceil(40 × 1.3) = 52.
	{name: "capped", model: settleflow.PricingCapped, payload: `{"documentId":"D-1","pages":10}`,
		plan: map[string]any{"spend": []any{item("model", "ocr", 10, 25)}, "costItems": []any{item("compute", "worker", 1, 15)},
			"result": map[string]any{"fields": 7}},
		quote: 72, cost: 40, charged: 52},
	// capped, margin floor 10 %: budget floor(72 × 0.9) = 64; 30 then 35
	// is 65, past it: stopped at the second report.
	{name: "capped past its budget", model: settleflow.PricingCapped, payload: `{"documentId":"D-2","pages":10}`,
		plan:  map[string]any{"spend": []any{item("model", "ocr", 10, 30), item("model", "ocr", 10, 35)}, "result": map[string]any{"fields": 1}},
		quote: 72, cost: 65, charged: -1},
	// success_fee, margin 60 %, minimum 100: estimate 20 + 1 = 21, quote
	// max(ceil(21 / 0.4), 100) = 100, charged on a resolution with
	// confidence of at least 0.8 ...
	{name: "success fee earned", model: settleflow.PricingSuccessFee, payload: `{"ticketId":"T-2","question":"How do I reset my password?"}`,
		plan:  map[string]any{"costItems": []any{item("model", "kb-model", 300, 12)}, "result": map[string]any{"status": "resolved", "confidence": 0.9}},
		quote: 100, cost: 12, charged: 100},
	// ... and nothing when the outcome fails: Settled, charged 0.
	{name: "success fee, outcome failed", model: settleflow.PricingSuccessFee, payload: `{"ticketId":"T-3","question":"How do I reset my password?"}`,
		plan:  map[string]any{"costItems": []any{item("model", "kb-model", 300, 12)}, "result": map[string]any{"status": "escalated", "confidence": 0.3}},
		quote: 100, cost: 12, charged: 0},
	// hybrid, base share 30 %: estimate 23, quote ceil(23 / 0.6) = 39,
	// charged in full when found ...
	{name: "hybrid found", model: settleflow.PricingHybrid, payload: `{"email":"jane@acme.example"}`,
		plan: map[string]any{"spend": []any{item("tools", "people-directory", 1, 8)},
			"result": map[string]any{"found": true, "contact": map[string]any{"name": "Jane", "title": "CTO", "company": "Acme"}}},
		quote: 39, cost: 8, charged: 39},
	// ... and its base, ceil(39 × 0.3) = 12, when not.
	{name: "hybrid not found", model: settleflow.PricingHybrid, payload: `{"email":"someone@mail.example"}`,
		plan:  map[string]any{"spend": []any{item("tools", "people-directory", 1, 8)}, "result": map[string]any{"found": false}},
		quote: 39, cost: 8, charged: 12},
}

// runLanguage runs the SIGKILL scenario, then langCases, with worker
// processes in lang, recording each Settled workflow's charge in expected
// and each customer's in customers.
func runLanguage(t *testing.T, s *processServer, dir, key, lang string, products modelProducts, expected, customers map[string]int64) {
	prefix := map[string]string{"python": "py", "node": "js"}[lang]
	plans := map[string]any{}
	for i, c := range langCases {
		plans[fmt.Sprintf("cus_%s_%d", prefix, i)] = c.plan
	}
	killCustomer := "cus_" + prefix + "_killed"
	plans[killCustomer] = map[string]any{"hang": true, "costItems": []any{item("model", "chat-model", 100, 100)}, "result": map[string]any{"queue": "general"}}
	planFile := filepath.Join(t.TempDir(), "plan.json")
	b, _ := json.Marshal(plans)
	if err := os.WriteFile(planFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	workerKey := workerKey(t, dir, nil, "--products", strings.Join(products.names(), ","))

	// SIGKILL in the middle of a task: fixed, estimate 200, quote ceil(200
	// / 0.7) = 286.
	first := startLangWorker(t, lang, s, dir, workerKey, planFile, products.names())
	killed := createOver(t, s, key, products[settleflow.PricingFixed], killCustomer, `{"ticketId":"T-9","subject":"Lost parcel"}`)
	started := first.await(t, func(e map[string]any) bool { return e["event"] == "started" && e["workflow"] == killed })
	if started["attempt"] != 1.0 {
		t.Fatalf("the first worker started %v", started)
	}
	time.Sleep(time.Second) // heartbeats hold the lease (2 s) while the process lives
	if wf := s.get(t, key, "/v1/workflows/"+killed); wf["status"] != "Running" {
		t.Fatalf("while the first worker runs it: %v", wf)
	}
	first.kill()
	second := startLangWorker(t, lang, s, dir, workerKey, planFile, products.names())
	got := waitTerminal(t, s, key, killed)
	if got["status"] != "Settled" || num(got["charged"].(map[string]any)["amount"]) != 286 || got["result"].(map[string]any)["queue"] != "general" {
		t.Fatalf("the killed worker's workflow: %v; want Settled, charged 286", got)
	}
	var runs []float64
	for _, e := range second.all() {
		if e["event"] == "started" && e["workflow"] == killed {
			runs = append(runs, e["attempt"].(float64))
		}
	}
	if len(runs) != 1 || runs[0] != 2 {
		t.Fatalf("the second worker ran the task as attempts %v, want [2]", runs)
	}
	late := langClient(t, s, dir, workerKey)
	_, err := late.Tasks.Complete(context.Background(), started["task"].(string), map[string]any{"queue": "late"}, nil)
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 409 || apiErr.Code != settleflow.CodeLeaseLost {
		t.Fatalf("the killed worker's late completion: %v; want 409 lease_lost", err)
	}
	if again := s.get(t, key, "/v1/workflows/"+killed); again["result"].(map[string]any)["queue"] != "general" ||
		num(again["charged"].(map[string]any)["amount"]) != 286 || again["status"] != "Settled" {
		t.Fatalf("after the late completion: %v", again)
	}
	expected[killed] = 286
	customers[killCustomer] = 286

	// One product of each model, served by the second worker process.
	for i, c := range langCases {
		customer := fmt.Sprintf("cus_%s_%d", prefix, i)
		id := createOver(t, s, key, products[c.model], customer, c.payload)
		got := waitTerminal(t, s, key, id)
		if got["pricing"].(map[string]any)["model"] != string(c.model) || num(got["quoted"].(map[string]any)["amount"]) != c.quote {
			t.Errorf("%s: priced %v, quoted %v; want %s at %d", c.name, got["pricing"], got["quoted"], c.model, c.quote)
		}
		cost := got["cost"].(map[string]any)
		if num(cost["amount"]) != c.cost {
			t.Errorf("%s: cost %v, want %d", c.name, cost, c.cost)
		}
		if c.charged < 0 {
			if f, _ := got["failure"].(map[string]any); got["status"] != "Failed" || f["code"] != "margin_floor_exceeded" || got["charged"] != nil {
				t.Errorf("%s: %v; want Failed margin_floor_exceeded, nothing charged", c.name, got)
			}
			stop := second.await(t, func(e map[string]any) bool {
				return e["event"] == "stopped" && e["task"] != nil && workflowOf(second, e["task"]) == id
			})
			if stop["reason"] != "margin_floor_exceeded" || stop["status"] != 409.0 || stop["code"] != "margin_floor_exceeded" {
				t.Errorf("%s: the worker saw %v; want 409 margin_floor_exceeded", c.name, stop)
			}
			customers[customer] += 0
			continue
		}
		ch, _ := got["charged"].(map[string]any)
		if got["status"] != "Settled" || ch == nil || num(ch["amount"]) != c.charged {
			t.Errorf("%s: %v; want Settled, charged %d", c.name, got, c.charged)
			continue
		}
		if c.charged == 0 && got["settlement"] != nil {
			t.Errorf("%s: charged nothing but settled %v", c.name, got["settlement"])
		}
		if c.charged > 0 {
			if st, _ := got["settlement"].(map[string]any); st == nil || !regexp.MustCompile(`^0x[0-9a-f]{64}$`).MatchString(fmt.Sprint(st["txHash"])) {
				t.Errorf("%s: settlement %v", c.name, got["settlement"])
			}
		}
		expected[id] = c.charged
		customers[customer] += c.charged
	}
	second.stop(t)
}

// createOver creates a workflow over s with key and waits for nothing.
func createOver(t *testing.T, s *processServer, key, product, customer, payload string) string {
	t.Helper()
	status, wf := call(t, s, key, "POST", "/v1/workflows", fmt.Sprintf(`{"product":%q,"customerId":%q,"payload":%s}`, product, customer, payload), "")
	if status != 201 {
		t.Fatalf("create %s for %s: %d %v", product, customer, status, wf)
	}
	return wf["id"].(string)
}

// langClient is a Go client of s with key.
func langClient(t *testing.T, s *processServer, dir, key string) *client.Client {
	t.Helper()
	pem, err := os.ReadFile(filepath.Join(dir, "tls", "cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	return client.New(key, client.WithBaseURL(s.url), client.WithRootCAs(pool))
}

// langWorker is a worker process in Python or Node.js (plan_worker.*) and
// the JSON lines it printed.
type langWorker struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	events []map[string]any
	more   chan struct{} // closed and replaced at each event
	done   chan struct{}
	output *syncBuffer // stderr
}

// startLangWorker starts plan_worker.py or plan_worker.mjs serving products
// on s with key, told what to do by the plan file, and waits until it is
// ready.
func startLangWorker(t *testing.T, lang string, s *processServer, dir, key, plan string, products []string) *langWorker {
	t.Helper()
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	scripts, _ := filepath.Abs(filepath.Join("testdata", "workers"))
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SETTLEFLOW_") {
			env = append(env, kv)
		}
	}
	env = append(env, "SETTLEFLOW_API_KEY="+key, "SETTLEFLOW_BASE_URL="+s.url, "SETTLEFLOW_TEST_CA="+filepath.Join(dir, "tls", "cert.pem"),
		"SETTLEFLOW_TEST_PLAN="+plan, "SETTLEFLOW_TEST_PRODUCTS="+strings.Join(products, ","))
	var cmd *exec.Cmd
	switch lang {
	case "python":
		cmd = exec.Command("python3", "-X", "dev", "-W", "error", filepath.Join(scripts, "plan_worker.py"))
		env = append(env, "PYTHONPATH="+filepath.Join(repo, "sdk", "python"))
	case "node":
		// As a user has it: the package installed in node_modules.
		app := t.TempDir()
		if err := os.MkdirAll(filepath.Join(app, "node_modules"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(repo, "sdk", "node"), filepath.Join(app, "node_modules", "settleflow")); err != nil {
			t.Fatal(err)
		}
		src, err := os.ReadFile(filepath.Join(scripts, "plan_worker.mjs"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(app, "worker.mjs"), src, 0o600); err != nil {
			t.Fatal(err)
		}
		cmd = exec.Command("node", "worker.mjs")
		cmd.Dir = app
	}
	cmd.Env = env
	w := &langWorker{cmd: cmd, more: make(chan struct{}), done: make(chan struct{}), output: &syncBuffer{}}
	cmd.Stderr = w.output
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var e map[string]any
			if json.Unmarshal(sc.Bytes(), &e) != nil {
				e = map[string]any{"event": "line", "text": sc.Text()}
			}
			w.mu.Lock()
			w.events = append(w.events, e)
			close(w.more)
			w.more = make(chan struct{})
			w.mu.Unlock()
		}
		cmd.Wait()
		close(w.done)
	}()
	t.Cleanup(func() {
		w.kill()
		if t.Failed() {
			t.Logf("%s worker %d printed %v\nstderr:\n%s", lang, cmd.Process.Pid, w.all(), w.output.String())
		}
	})
	w.await(t, func(e map[string]any) bool { return e["event"] == "ready" })
	return w
}

func (w *langWorker) all() []map[string]any {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]map[string]any(nil), w.events...)
}

// await returns the first event that matches, waiting up to a minute.
func (w *langWorker) await(t *testing.T, match func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.After(time.Minute)
	for seen := 0; ; {
		w.mu.Lock()
		events, more := w.events, w.more
		w.mu.Unlock()
		for ; seen < len(events); seen++ {
			if match(events[seen]) {
				return events[seen]
			}
		}
		select {
		case <-more:
		case <-w.done:
			if len(w.all()) == seen {
				t.Fatalf("the worker exited (%v) without the event awaited; it printed %v\n%s", w.cmd.ProcessState, events, w.output.String())
			}
		case <-deadline:
			t.Fatalf("the event awaited did not come within a minute; the worker printed %v\n%s", events, w.output.String())
		}
	}
}

// workflowOf is the workflow of the task the worker started.
func workflowOf(w *langWorker, task any) any {
	for _, e := range w.all() {
		if e["event"] == "started" && e["task"] == task {
			return e["workflow"]
		}
	}
	return nil
}

// kill ends the worker with SIGKILL.
func (w *langWorker) kill() {
	_ = w.cmd.Process.Signal(syscall.SIGKILL)
	<-w.done
}

// stop sends SIGTERM: the worker drains and exits 0.
func (w *langWorker) stop(t *testing.T) {
	t.Helper()
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the worker did not exit within 30 s of SIGTERM")
	}
	if code := w.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("the worker exited %d after SIGTERM\n%s", code, w.output.String())
	}
}
