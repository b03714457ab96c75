package main

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/client"
	"github.com/settleflow/settleflow/internal/pgtest"
	"github.com/settleflow/settleflow/settlement"
)

// workerKey makes a worker key with the keys command (the server may be
// running) and returns its secret.
func workerKey(t *testing.T, dir string, global []string, args ...string) string {
	t.Helper()
	out := cli(t, dir, append(append(global, "keys", "create", "--env", "test", "--name", "worker", "--kind", "worker"), args...)...)
	key := regexp.MustCompile(`rk_test_[0-9A-Za-z]+`).FindString(out)
	if key == "" {
		t.Fatalf("keys create --kind worker printed %q", out)
	}
	return key
}

// apiClient is a Go client of s with key.
func (s *server) apiClient(t *testing.T, key string) *client.Client {
	t.Helper()
	pem, err := os.ReadFile(filepath.Join(s.dir, "tls", "cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	return client.New(key, client.WithBaseURL("https://"+s.https), client.WithRootCAs(pool))
}

// waitFor polls the workflow until it is Settled or Failed.
func (s *server) waitFor(t *testing.T, id string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, _, wf := s.do("GET", "/v1/workflows/"+id, s.firstKey, "")
		if wf["status"] == "Settled" || wf["status"] == "Failed" {
			return wf
		}
		if time.Now().After(deadline) {
			t.Fatalf("workflow %s: %v", id, wf)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *server) createWorkflow(t *testing.T, product, customer, payload string) string {
	t.Helper()
	status, _, wf := s.do("POST", "/v1/workflows", s.firstKey, fmt.Sprintf(`{"product":%q,"customerId":%q,"payload":%s}`, product, customer, payload))
	if status != 201 {
		t.Fatalf("create %s: %d %v", product, status, wf)
	}
	return wf["id"].(string)
}

// Remote products over HTTPS on the reference server, served by the Go
// worker: a capped product settles at the charge its pricing gives on the
// cost the worker reported, read back from the chain; a worker spending
// past its budget is stopped (409 margin_floor_exceeded) and nothing is
// charged; a worker that stops heartbeating loses its task to another,
// which completes it once, and the first one's late completion is 409;
// worker keys are scoped. It also measures how soon an idle worker gets a
// task after its create.
func TestRemoteProductsWithGoWorker(t *testing.T) {
	dir := t.TempDir()
	s := startServerWith(t, dir, "-remote", "document-extraction,lead-enrichment,ticket-triage,image-moderation", "-task-lease", "1s")
	worker := workerKey(t, dir, nil)
	triageOnly := workerKey(t, dir, nil, "--products", "ticket-triage")
	c := s.apiClient(t, worker)

	// Keys: a worker key reaches the task endpoints only, an ordinary key
	// never does, a key limited to one product claims no other.
	if status, _, body := s.do("POST", "/v1/workflows", worker, `{"product":"ticket-triage","customerId":"cus_w","payload":{"ticketId":"T-1"}}`); status != 403 || code(body) != "worker_key_forbidden" {
		t.Fatalf("a worker key's create: %d %v", status, body)
	}
	if status, _, body := s.do("GET", "/v1/customers/cus_w", worker, ""); status != 403 || code(body) != "worker_key_forbidden" {
		t.Fatalf("a worker key reading a customer: %d %v", status, body)
	}
	if status, _, body := s.do("POST", "/v1/tasks/claim", s.firstKey, `{"products":["ticket-triage"]}`); status != 403 || code(body) != "worker_key_required" {
		t.Fatalf("an ordinary key's claim: %d %v", status, body)
	}
	if status, _, body := s.do("POST", "/v1/tasks/claim", triageOnly, `{"products":["document-extraction"]}`); status != 403 || code(body) != "product_not_allowed" {
		t.Fatalf("a triage-only key claiming extraction: %d %v", status, body)
	}

	// The Go worker serves extraction and lead enrichment.
	var budgetSeen sync.Map
	w := c.NewWorker(client.WorkerOptions{Concurrency: 4, HeartbeatInterval: 300 * time.Millisecond, Wait: 5 * time.Second})
	w.Handle("document-extraction", func(ctx context.Context, task *client.Task) (client.TaskResult, error) {
		b, ok := client.SpendBudget(ctx)
		budgetSeen.Store(task.WorkflowID, [2]any{b, ok})
		if err := client.ReportSpend(ctx, client.CostItem{Category: "model", Provider: "ocr", Units: 12, Amount: 41}); err != nil {
			return client.TaskResult{}, err
		}
		time.Sleep(700 * time.Millisecond) // past a heartbeat or two
		return client.TaskResult{Result: map[string]any{"documentId": "INV-1", "fields": 7},
			CostItems: []client.CostItem{{Category: "compute", Provider: "worker", Units: 1, Amount: 9}}}, nil
	})
	stopped := make(chan error, 1)
	w.Handle("lead-enrichment", func(ctx context.Context, task *client.Task) (client.TaskResult, error) {
		b, _ := client.SpendBudget(ctx)
		err := client.ReportSpend(ctx, client.CostItem{Category: "tools", Provider: "people-directory", Units: 1, Amount: b + 1})
		<-ctx.Done()
		stopped <- errors.Join(err, context.Cause(ctx))
		return client.TaskResult{}, err
	})
	wctx, stopWorker := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- w.Run(wctx) }()
	defer func() {
		stopWorker()
		select {
		case err := <-ran:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("the worker's Run returned %v", err)
			}
		case <-time.After(40 * time.Second):
			t.Error("the worker did not stop")
		}
	}()

	ext := s.createWorkflow(t, "document-extraction", "cus_worker", `{"documentId":"INV-1","pages":40,"quality":"scanned"}`)
	got := s.waitFor(t, ext)
	quoted := int64(got["quoted"].(map[string]any)["amount"].(float64))
	price := settleflow.Price{Model: settleflow.PricingCapped, TargetMargin: 3000, MinimumCharge: 25, Markup: 3000}
	wantCharge := price.Charge(quoted, 50, true)
	if got["status"] != "Settled" || int64(got["charged"].(map[string]any)["amount"].(float64)) != wantCharge ||
		got["cost"].(map[string]any)["amount"] != 50.0 || got["result"].(map[string]any)["fields"] != 7.0 {
		t.Fatalf("extraction workflow: %v; want Settled, charged %d for a cost of 50", got, wantCharge)
	}
	if v, _ := budgetSeen.Load(ext); v.([2]any)[1] != true || v.([2]any)[0].(int64) != settleflow.Budget(quoted, 1000) {
		t.Fatalf("the handler saw the budget %v, want %d", v, settleflow.Budget(quoted, 1000))
	}

	lead := s.createWorkflow(t, "lead-enrichment", "cus_lead", `{"email":"jane@acme.example","company":"Acme"}`)
	select {
	case err := <-stopped:
		if !errors.Is(err, client.ErrMarginFloorExceeded) {
			t.Fatalf("the lead handler was stopped with %v, want ErrMarginFloorExceeded", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the lead handler was never stopped")
	}
	if got := s.waitFor(t, lead); got["status"] != "Failed" || got["failure"].(map[string]any)["code"] != "margin_floor_exceeded" || got["charged"] != nil {
		t.Fatalf("lead workflow: %v", got)
	}

	// A worker that claims a triage task and goes silent loses it; a
	// second worker completes it; the first one's late completion is 409
	// and changes nothing.
	tri := s.createWorkflow(t, "ticket-triage", "cus_worker", `{"ticketId":"T-7","subject":"Refund"}`)
	silent := s.apiClient(t, triageOnly)
	tasks, err := silent.Tasks.Claim(context.Background(), &client.TaskClaimParams{Products: []string{"ticket-triage"}, WaitSeconds: 10})
	if err != nil || len(tasks) != 1 || tasks[0].WorkflowID != tri {
		t.Fatalf("the silent worker claimed %v, %v", tasks, err)
	}
	w2 := silent.NewWorker(client.WorkerOptions{HeartbeatInterval: 200 * time.Millisecond, Wait: 5 * time.Second})
	var served sync.Map
	w2.Handle("ticket-triage", func(ctx context.Context, task *client.Task) (client.TaskResult, error) {
		served.Store(task.ID, task.Attempt)
		return client.TaskResult{Result: map[string]any{"queue": "billing", "by": "second"}}, nil
	})
	w2ctx, stopW2 := context.WithCancel(context.Background())
	w2done := make(chan error, 1)
	go func() { w2done <- w2.Run(w2ctx) }()
	got = s.waitFor(t, tri)
	stopW2()
	<-w2done
	if got["status"] != "Settled" || got["result"].(map[string]any)["by"] != "second" {
		t.Fatalf("triage workflow: %v", got)
	}
	var attempts []int
	served.Range(func(_, v any) bool { attempts = append(attempts, v.(int)); return true })
	if len(attempts) != 1 || attempts[0] != 2 {
		t.Fatalf("the second worker served attempts %v, want [2]", attempts)
	}
	_, err = silent.Tasks.Complete(context.Background(), tasks[0].ID, map[string]any{"by": "first"}, nil)
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 409 || apiErr.Code != settleflow.CodeLeaseLost {
		t.Fatalf("the silent worker's late completion: %v, want 409 lease_lost", err)
	}
	if _, _, again := s.do("GET", "/v1/workflows/"+tri, s.firstKey, ""); again["result"].(map[string]any)["by"] != "second" || again["charged"].(map[string]any)["amount"] != got["charged"].(map[string]any)["amount"] {
		t.Fatalf("after the late completion: %v", again)
	}

	// How soon an idle worker gets a task after its create: the claim is
	// already waiting when the create is sent.
	fromSend, fromAnswer := measureHandover(t, s, c, 25)
	for _, l := range [][]time.Duration{fromSend, fromAnswer} {
		slices.Sort(l)
	}
	n := len(fromSend)
	report := fmt.Sprintf("task handover to an idle worker over %d creates: p50 %v (p90 %v, max %v) after the create was sent; p50 %v after its 201 arrived",
		n, fromSend[n/2], fromSend[n*9/10], fromSend[n-1], fromAnswer[n/2])
	t.Log(report)
	fmt.Println(report)

	// The chain agrees: the customer paid the extraction's and the
	// triage's charges once each, from the faucet's deposit.
	charged := int64(0)
	for _, id := range []string{ext, tri} {
		_, _, wf := s.do("GET", "/v1/workflows/"+id, s.firstKey, "")
		charged += int64(wf["charged"].(map[string]any)["amount"].(float64))
	}
	stopWorker()
	<-ran
	ran <- context.Canceled
	if err := s.shutdown(); err != nil {
		t.Fatal(err)
	}
	chain, err := settlement.NewSimulated(context.Background(), settlement.SimulatedOptions{DataDir: filepath.Join(dir, "chain"), ManualCommit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer chain.Close()
	if got := contractBalance(t, chain.Backend.Client(), chain.Addresses.Contract, chain.CustomerRefSecret, "cus_worker"); got != settleflow.DefaultTestFaucet-charged {
		t.Fatalf("the contract holds %d for cus_worker, want %d less the charges %d", got, settleflow.DefaultTestFaucet, charged)
	}
	if got := contractBalance(t, chain.Backend.Client(), chain.Addresses.Contract, chain.CustomerRefSecret, "cus_lead"); got != settleflow.DefaultTestFaucet {
		t.Fatalf("the contract holds %d for cus_lead, want the untouched %d", got, settleflow.DefaultTestFaucet)
	}
}

// measureHandover creates n image-moderation workflows, one at a time,
// each while a claim waits, and returns how long after sending the create
// the claim answered with its task.
func measureHandover(t *testing.T, s *server, c *client.Client, n int) (fromSend, fromAnswer []time.Duration) {
	t.Helper()
	for i := range n + 1 {
		type claimed struct {
			at    time.Time
			tasks []client.Task
			err   error
		}
		ch := make(chan claimed, 1)
		go func() {
			tasks, err := c.Tasks.Claim(context.Background(), &client.TaskClaimParams{Products: []string{"image-moderation"}, WaitSeconds: 10})
			ch <- claimed{time.Now(), tasks, err}
		}()
		time.Sleep(50 * time.Millisecond) // the claim is waiting
		start := time.Now()
		// The first create of a customer waits for its faucet deposit: it
		// is not counted.
		id := s.createWorkflow(t, "image-moderation", "cus_latency", fmt.Sprintf(`{"imageUrls":["https://example.com/%d.jpg"]}`, i))
		answered := time.Now()
		got := <-ch
		if got.err != nil || len(got.tasks) != 1 || got.tasks[0].WorkflowID != id {
			t.Fatalf("claim: %v, %v; want the task of %s", got.tasks, got.err, id)
		}
		if i > 0 {
			fromSend = append(fromSend, got.at.Sub(start))
			fromAnswer = append(fromAnswer, max(got.at.Sub(answered), 0))
		}
		if _, err := c.Tasks.Complete(context.Background(), got.tasks[0].ID, map[string]any{"verdicts": []string{"allowed"}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	return fromSend, fromAnswer
}

func code(body map[string]any) any {
	e, _ := body["error"].(map[string]any)
	return e["code"]
}

// On Postgres, remote products no longer keep a second instance off the
// database (issue 42: tasks are kept in it; two engines sharing a task are
// tested in storage/postgres, TestRemoteTaskAcrossEngines): a second
// instance with remote products is refused only for the embedded test
// chain, which one instance alone may use, and names that reason.
func TestRemoteProductsServedOnPostgres(t *testing.T) {
	pg := pgtest.Connect(t)
	dsn := pg.SchemaDSN(t, "workers_test")
	dir := t.TempDir()
	worker := workerKey(t, dir, []string{"-postgres", dsn})
	secret := strings.Fields(cli(t, dir, "-postgres", dsn, "keys", "create", "--env", "test", "--name", "pg"))[1]
	s := startServerWith(t, dir, "-postgres", dsn, "-remote", "ticket-triage", "-task-lease", "2s")
	s.firstKey = secret
	c := s.apiClient(t, worker)
	id := s.createWorkflow(t, "ticket-triage", "cus_pg_worker", `{"ticketId":"T-3"}`)
	tasks, err := c.Tasks.Claim(context.Background(), &client.TaskClaimParams{Products: []string{"ticket-triage"}, WaitSeconds: 10})
	if err != nil || len(tasks) != 1 || tasks[0].WorkflowID != id {
		t.Fatalf("claim on Postgres: %v, %v", tasks, err)
	}
	if _, err := c.Tasks.Complete(context.Background(), tasks[0].ID, map[string]any{"queue": "billing"}, nil); err != nil {
		t.Fatal(err)
	}
	if got := s.waitFor(t, id); got["status"] != "Settled" {
		t.Fatalf("workflow on Postgres: %v", got)
	}
	err = run(t.Context(), []string{"-data", t.TempDir(), "-postgres", dsn, "-remote", "ticket-triage", "-https", "127.0.0.1:0", "-http", "", "-log-level", "error"}, &syncBuffer{}, &syncBuffer{})
	if err == nil || strings.Contains(err.Error(), "remote products") || !strings.Contains(err.Error(), "embedded chain") {
		t.Fatalf("a second instance with remote products on the embedded chain: %v; want it refused for the chain only", err)
	}
}

// The Go worker: a Permanent error or a panic fails the workflow for good;
// another error is retried as the next attempt; at shutdown a task in
// flight finishes within the drain timeout, and one that does not is
// stopped (ErrWorkerStopped) and handed back, to be run again by the next
// worker.
func TestGoWorkerFailuresAndDrain(t *testing.T) {
	dir := t.TempDir()
	s := startServerWith(t, dir, "-remote", "ticket-triage", "-task-lease", "2s")
	c := s.apiClient(t, workerKey(t, dir, nil))
	started := make(chan string, 16)
	var stuckCause sync.Map
	handler := func(ctx context.Context, task *client.Task) (client.TaskResult, error) {
		var p struct {
			TicketID string `json:"ticketId"`
		}
		if err := json.Unmarshal(task.Payload, &p); err != nil {
			return client.TaskResult{}, client.Permanent(err)
		}
		started <- p.TicketID
		switch p.TicketID {
		case "T-perm":
			return client.TaskResult{}, client.Permanent(errors.New("the ticket is closed"))
		case "T-panic":
			panic("boom")
		case "T-retry":
			if task.Attempt == 1 {
				return client.TaskResult{}, errors.New("the model timed out")
			}
		case "T-slow":
			time.Sleep(800 * time.Millisecond)
		case "T-stuck":
			if task.Attempt == 1 {
				<-ctx.Done()
				stuckCause.Store(task.ID, context.Cause(ctx))
				return client.TaskResult{}, ctx.Err()
			}
		}
		return client.TaskResult{Result: map[string]any{"ticketId": p.TicketID, "attempt": task.Attempt}}, nil
	}
	runWorker := func(drain time.Duration) (context.CancelFunc, chan error) {
		w := c.NewWorker(client.WorkerOptions{HeartbeatInterval: 300 * time.Millisecond, Wait: 5 * time.Second, DrainTimeout: drain})
		w.Handle("ticket-triage", handler)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		return cancel, done
	}
	stop, done := runWorker(10 * time.Second)
	ids := map[string]string{}
	for _, ticket := range []string{"T-perm", "T-panic", "T-retry"} {
		ids[ticket] = s.createWorkflow(t, "ticket-triage", "cus_go_worker", `{"ticketId":"`+ticket+`"}`)
	}
	for ticket, want := range map[string]string{"T-perm": "the ticket is closed", "T-panic": "handler panicked: boom"} {
		got := s.waitFor(t, ids[ticket])
		if f, _ := got["failure"].(map[string]any); got["status"] != "Failed" || f["code"] != "execution_failed" || !strings.Contains(f["message"].(string), want) {
			t.Fatalf("%s: %v; want Failed execution_failed %q", ticket, got, want)
		}
	}
	if got := s.waitFor(t, ids["T-retry"]); got["status"] != "Settled" || got["result"].(map[string]any)["attempt"] != 2.0 {
		t.Fatalf("T-retry: %v; want Settled on attempt 2", got)
	}

	// A slow task in flight at shutdown finishes and is completed.
	slow := s.createWorkflow(t, "ticket-triage", "cus_go_worker", `{"ticketId":"T-slow"}`)
	for tk := range started {
		if tk == "T-slow" {
			break
		}
	}
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	if got := s.waitFor(t, slow); got["status"] != "Settled" {
		t.Fatalf("T-slow after a drained shutdown: %v", got)
	}

	// A stuck task is stopped at the drain timeout and handed back.
	stop, done = runWorker(300 * time.Millisecond)
	stuck := s.createWorkflow(t, "ticket-triage", "cus_go_worker", `{"ticketId":"T-stuck"}`)
	for tk := range started {
		if tk == "T-stuck" {
			break
		}
	}
	stop()
	began := time.Now()
	<-done
	if d := time.Since(began); d > 5*time.Second {
		t.Fatalf("Run took %v to stop with a drain timeout of 300ms", d)
	}
	causes := 0
	stuckCause.Range(func(_, v any) bool {
		causes++
		if !errors.Is(v.(error), client.ErrWorkerStopped) {
			t.Errorf("the stuck handler was stopped with %v", v)
		}
		return true
	})
	if causes != 1 {
		t.Fatalf("the stuck handler returned %d times, want once", causes)
	}
	stop, done = runWorker(10 * time.Second)
	defer func() { stop(); <-done }()
	if got := s.waitFor(t, stuck); got["status"] != "Settled" || got["result"].(map[string]any)["attempt"] != 2.0 {
		t.Fatalf("T-stuck: %v; want Settled by the next worker on attempt 2", got)
	}
}

// At shutdown a worker's waiting claim is answered at once (empty), rather
// than holding the server's listeners for the rest of its wait.
func TestShutdownAnswersWaitingClaims(t *testing.T) {
	dir := t.TempDir()
	s := startServerWith(t, dir, "-remote", "ticket-triage")
	c := s.apiClient(t, workerKey(t, dir, nil))
	type answer struct {
		tasks []client.Task
		err   error
	}
	ch := make(chan answer, 1)
	go func() {
		tasks, err := c.Tasks.Claim(context.Background(), &client.TaskClaimParams{Products: []string{"ticket-triage"}, WaitSeconds: 28})
		ch <- answer{tasks, err}
	}()
	time.Sleep(300 * time.Millisecond) // the claim waits
	began := time.Now()
	if err := s.shutdown(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(began); d > 10*time.Second {
		t.Fatalf("shutdown took %v with a claim waiting", d)
	}
	select {
	case a := <-ch:
		if a.err != nil || len(a.tasks) != 0 {
			t.Fatalf("the waiting claim: %v, %v; want an empty answer", a.tasks, a.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting claim was not answered at shutdown")
	}
}
