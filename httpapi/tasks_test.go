package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/fundstest"
)

// echo is the payload of the remote products of these tests.
type echo struct {
	N int `json:"n"`
}

// taskEnv is an API whose engine runs, with two remote products:
// remote-echo (quoted 200 for an estimate of 100, margin floor 0.2: a
// budget of 160) and remote-other (no floor), and the keys to call it.
type taskEnv struct {
	*env
	funds *fundstest.Settler
	// secret is an ordinary test key; worker a test worker key for every
	// product, other one limited to remote-other; liveSecret and
	// liveWorker are live keys.
	secret, worker, other, liveSecret, liveWorker string
}

func newTaskEnv(t *testing.T, adjust func(*settleflow.Options)) *taskEnv {
	t.Helper()
	funds := fundstest.New()
	funds.LiveUnfunded = true
	e := newEnv(t, envOptions{live: true, funds: funds, faucet: 100_000, engine: adjust,
		register: func(t *testing.T, ps *settleflow.Products) {
			for _, p := range []settleflow.Product[echo]{
				{Name: "remote-echo", Price: settleflow.Price{TargetMargin: 5000, MinimumCharge: 100}, MarginFloor: 2000,
					Estimate: func(echo) (int64, error) { return 100, nil }, Remote: true},
				{Name: "remote-other", Price: settleflow.Price{TargetMargin: 5000, MinimumCharge: 100},
					Estimate: func(echo) (int64, error) { return 100, nil }, Remote: true},
			} {
				if err := settleflow.Register(ps, p); err != nil {
					t.Fatal(err)
				}
			}
		}})
	return &taskEnv{env: e, funds: funds,
		secret: e.keys.create(t, settleflow.Test, "pro"), worker: e.keys.createWorker(t, settleflow.Test),
		other: e.keys.createWorker(t, settleflow.Test, "remote-other"), liveSecret: e.keys.create(t, settleflow.Live, "pro"),
		liveWorker: e.keys.createWorker(t, settleflow.Live)}
}

// newWorkflow creates a workflow of product for customer with key.
func (e *taskEnv) newWorkflow(key, product, customer string) string {
	e.t.Helper()
	r := e.create(key, fmt.Sprintf(`{"product":%q,"customerId":%q,"payload":{"n":1}}`, product, customer))
	if r.status != 201 {
		e.t.Fatalf("create %s: %d %s", product, r.status, r.body)
	}
	return r.json(e.t)["id"].(string)
}

// claim claims with key and returns the tasks.
func (e *taskEnv) claim(key, body string) []map[string]any {
	e.t.Helper()
	r := e.do("POST", "/v1/tasks/claim", key, body)
	if r.status != 200 {
		e.t.Fatalf("claim %s: %d %s", body, r.status, r.body)
	}
	var l struct {
		Data []map[string]any `json:"data"`
	}
	if err := json.Unmarshal(r.body, &l); err != nil {
		e.t.Fatal(err)
	}
	return l.Data
}

// claimOne claims the one task of product that must be there.
func (e *taskEnv) claimOne(key, product string) map[string]any {
	e.t.Helper()
	got := e.claim(key, fmt.Sprintf(`{"products":[%q],"max":5,"waitSeconds":10}`, product))
	if len(got) != 1 {
		e.t.Fatalf("claimed %d tasks of %s, want 1: %v", len(got), product, got)
	}
	return got[0]
}

// expect sends a call about a task and checks its status and error code.
func (e *taskEnv) expect(key, path, body string, status int, code string) response {
	e.t.Helper()
	r := e.do("POST", path, key, body)
	if r.status != status {
		e.t.Fatalf("POST %s %s: %d %s, want %d %s", path, body, r.status, r.body, status, code)
	}
	if code != "" {
		if got := r.errorObject(e.t)["code"]; got != code {
			e.t.Fatalf("POST %s %s: code %v, want %s", path, body, got, code)
		}
	}
	return r
}

// waitWorkflow waits for the workflow to reach status.
func (e *taskEnv) waitWorkflow(id, status string) map[string]any {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		wf := e.do("GET", "/v1/workflows/"+id, e.secret, "").json(e.t)
		if wf["status"] == status {
			return wf
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("workflow %s is %v, want %s: %v", id, wf["status"], status, wf)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Worker keys call the task endpoints only, in their environment, for
// their products; ordinary keys cannot call them.
func TestTaskKeyScoping(t *testing.T) {
	e := newTaskEnv(t, nil)
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/v1/products", ""},
		{"POST", "/v1/workflows", `{"product":"remote-echo","customerId":"cus_1","payload":{"n":1}}`},
		{"GET", "/v1/customers/cus_1", ""},
		{"GET", "/v1/workflows", ""},
	} {
		r := e.do(c.method, c.path, e.worker, c.body)
		if r.status != 403 || r.errorObject(t)["code"] != "worker_key_forbidden" {
			t.Errorf("worker key %s %s: %d %s, want 403 worker_key_forbidden", c.method, c.path, r.status, r.body)
		}
	}
	if n := len(e.do("GET", "/v1/workflows", e.secret, "").json(t)["data"].([]any)); n != 0 {
		t.Fatalf("the worker key's create made %d workflows", n)
	}
	e.expect(e.secret, "/v1/tasks/claim", `{"products":["remote-echo"]}`, 403, "worker_key_required")
	r := e.expect(e.other, "/v1/tasks/claim", `{"products":["remote-other","remote-echo"]}`, 403, "product_not_allowed")
	if r.errorObject(t)["param"] != "products[1]" {
		t.Fatalf("product_not_allowed names %v", r.errorObject(t)["param"])
	}

	// A live task: the test worker key never sees it, the live one does.
	live := e.newWorkflow(e.liveSecret, "remote-echo", "cus_live")
	if got := e.claim(e.worker, `{"products":["remote-echo"],"max":10,"waitSeconds":1}`); len(got) != 0 {
		t.Fatalf("a test worker key claimed %v", got)
	}
	lt := e.claimOne(e.liveWorker, "remote-echo")
	if lt["workflowId"] != live || lt["livemode"] != true {
		t.Fatalf("the live worker claimed %v, want workflow %s", lt, live)
	}
	// Neither can the test key touch it by id.
	e.expect(e.worker, "/v1/tasks/"+lt["id"].(string)+"/complete", `{"result":{}}`, 404, "resource_missing")

	// A key limited to remote-other never gets remote-echo, even asking
	// for its own product while remote-echo waits, nor touches its task.
	echoID := e.newWorkflow(e.secret, "remote-echo", "cus_scope")
	if got := e.claim(e.other, `{"products":["remote-other"],"max":10,"waitSeconds":1}`); len(got) != 0 {
		t.Fatalf("the key limited to remote-other claimed %v", got)
	}
	et := e.claimOne(e.worker, "remote-echo")
	if et["workflowId"] != echoID {
		t.Fatalf("claimed %v, want workflow %s", et, echoID)
	}
	e.expect(e.other, "/v1/tasks/"+et["id"].(string)+"/heartbeat", `{}`, 404, "resource_missing")
	// Nor does another worker key of the same scope touch a task it did
	// not claim.
	another := e.keys.createWorker(t, settleflow.Test)
	e.expect(another, "/v1/tasks/"+et["id"].(string)+"/complete", `{"result":{}}`, 404, "resource_missing")
	otherID := e.newWorkflow(e.secret, "remote-other", "cus_scope")
	ot := e.claimOne(e.other, "remote-other")
	if ot["workflowId"] != otherID {
		t.Fatalf("the limited key claimed %v, want %s", ot, otherID)
	}
	// Finish them, so that the engine's Stop need not wait for the leases.
	e.expect(e.liveWorker, "/v1/tasks/"+lt["id"].(string)+"/complete", `{"result":{}}`, 200, "")
	e.expect(e.worker, "/v1/tasks/"+et["id"].(string)+"/complete", `{"result":{}}`, 200, "")
	e.expect(e.other, "/v1/tasks/"+ot["id"].(string)+"/complete", `{"result":{}}`, 200, "")
}

// Every bad input to the task endpoints is a 4xx that changes nothing; a
// good completion settles the workflow at its price, and repeating it is
// 200 while anything else after it is 409 task_ended.
func TestTaskBadInputsChangeNothing(t *testing.T) {
	e := newTaskEnv(t, nil)
	for _, c := range []struct{ body, code, param string }{
		{`{"products":[]}`, "parameter_missing", "products"},
		{`{}`, "parameter_missing", "products"},
		{`{"products":["ticket-triage"]}`, "parameter_invalid", "products[0]"},
		{`{"products":["nope"]}`, "parameter_invalid", "products[0]"},
		{`{"products":["remote-echo"],"max":0}`, "parameter_invalid", "max"},
		{`{"products":["remote-echo"],"max":101}`, "parameter_invalid", "max"},
		{`{"products":["remote-echo"],"waitSeconds":31}`, "parameter_invalid", "waitSeconds"},
		{`{"products":["remote-echo"],"waitSeconds":-1}`, "parameter_invalid", "waitSeconds"},
		{`{"products":["remote-echo"],"waitSeconds":1.5}`, "parameter_invalid", "waitSeconds"},
		{`{"products":["remote-echo"],"Max":1}`, "parameter_unknown", "Max"},
		{`{"products":["remote-echo"],"worker":{"host":"` + strings.Repeat("h", 256) + `"}}`, "parameter_invalid", "worker.host"},
		{`{"products":["remote-echo"],"worker":{"name":"pid\n1"}}`, "parameter_invalid", "worker.name"},
		{`{"products":["remote-echo"],"worker":{"sdk":"` + strings.Repeat("s", 65) + `"}}`, "parameter_invalid", "worker.sdk"},
		{`{"products":["remote-echo"],"worker":{"host":7}}`, "parameter_invalid", "worker.host"},
		{`{"products":["remote-echo"],"worker":{"pid":7}}`, "parameter_unknown", "worker.pid"},
		{`{"products":["remote-echo"],"worker":"box-7"}`, "parameter_invalid", "worker"},
	} {
		r := e.expect(e.worker, "/v1/tasks/claim", c.body, 400, c.code)
		if p := r.errorObject(t)["param"]; p != c.param {
			t.Errorf("claim %s: param %v, want %s", c.body, p, c.param)
		}
	}
	if ws, err := e.engine.Workers(context.Background(), settleflow.Test); err != nil || len(ws) != 0 {
		t.Fatalf("refused claims registered workers: %+v", ws)
	}
	// A good identity is taken as given.
	e.expect(e.worker, "/v1/tasks/claim", `{"products":["remote-echo"],"worker":{"host":"box-7","name":"pid-42","sdk":"settleflow-test/1"}}`, 200, "")
	if ws, err := e.engine.Workers(context.Background(), settleflow.Test); err != nil || len(ws) != 1 || ws[0].Host != "box-7" || ws[0].Name != "pid-42" || ws[0].SDK != "settleflow-test/1" || ws[0].KeyID == "" {
		t.Fatalf("workers after a claim: %+v", ws)
	}
	wf := e.newWorkflow(e.secret, "remote-echo", "cus_bad")
	task := e.claimOne(e.worker, "remote-echo")
	if task["attempt"] != 1.0 || task["status"] != "claimed" || task["customerId"] != "cus_bad" ||
		task["budget"].(map[string]any)["amount"] != 160.0 || !strings.HasPrefix(task["id"].(string), "task_") {
		t.Fatalf("task %v", task)
	}
	base := "/v1/tasks/" + task["id"].(string)
	e.expect(e.worker, "/v1/tasks/task_01JD3Q6Y6F8Q2W9T4M5N7P8R0S/heartbeat", `{}`, 404, "resource_missing")
	e.expect(e.worker, "/v1/tasks/nope/complete", `{"result":{}}`, 404, "resource_missing")
	item := func(amount string) string {
		return `{"costItems":[{"category":"model","provider":"p","units":1,"amount":` + amount + `}]}`
	}
	if r := e.expect(e.worker, base+"/heartbeat", item("10"), 200, ""); r.json(t)["spent"].(map[string]any)["amount"] != 10.0 {
		t.Fatalf("heartbeat: %s", r.body)
	}
	for _, c := range []struct{ path, body, code, param string }{
		{"/heartbeat", item("-1"), "parameter_invalid", "costItems[0]"},
		{"/heartbeat", item("1.5"), "parameter_invalid", "costItems.0.amount"},
		{"/heartbeat", `{"costItems":[{"category":"food","provider":"","units":0,"amount":1}]}`, "parameter_invalid", "costItems[0]"},
		{"/heartbeat", `{"costItems":[{"category":"model","provider":"","units":-1,"amount":1}]}`, "parameter_invalid", "costItems[0]"},
		{"/heartbeat", `{"spend":1}`, "parameter_unknown", "spend"},
		{"/complete", `{"result":[1]}`, "parameter_invalid", "result"},
		{"/complete", `{"result":"done"}`, "parameter_invalid", "result"},
		{"/complete", `{"result":null}`, "parameter_invalid", "result"},
		{"/complete", `{}`, "parameter_missing", "result"},
		{"/complete", `{"result":{"big":"` + strings.Repeat("x", settleflow.MaxTaskResultBytes) + `"}}`, "parameter_invalid", "result"},
		{"/complete", `{"result":{},"costItems":[{"category":"model","provider":"","units":0,"amount":-5}]}`, "parameter_invalid", "costItems[0]"},
		{"/fail", `{"retry":true}`, "parameter_missing", "message"},
		{"/fail", `{"message":"` + strings.Repeat("x", 1025) + `"}`, "parameter_invalid", "message"},
	} {
		r := e.expect(e.worker, base+c.path, c.body, 400, c.code)
		if p := r.errorObject(t)["param"]; p != c.param {
			t.Errorf("%s %.80s: param %v, want %s", c.path, c.body, p, c.param)
		}
	}
	// Nothing changed: the spend is what the good heartbeat reported, and
	// the task is still held.
	if r := e.expect(e.worker, base+"/heartbeat", `{}`, 200, ""); r.json(t)["spent"].(map[string]any)["amount"] != 10.0 || r.json(t)["status"] != "claimed" {
		t.Fatalf("after the refusals: %s", r.body)
	}
	if s := e.do("GET", "/v1/workflows/"+wf, e.secret, "").json(t)["status"]; s != "Running" {
		t.Fatalf("workflow %s after the refusals", s)
	}
	done := `{"result":{"echo":1},"costItems":[{"category":"compute","provider":"worker","units":1,"amount":30}]}`
	if r := e.expect(e.worker, base+"/complete", done, 200, ""); r.json(t)["status"] != "completed" {
		t.Fatalf("complete: %s", r.body)
	}
	e.expect(e.worker, base+"/complete", done, 200, "")
	e.expect(e.worker, base+"/complete", `{"result":{"echo":2}}`, 200, "")
	e.expect(e.worker, base+"/fail", `{"message":"late"}`, 409, "task_ended")
	e.expect(e.worker, base+"/heartbeat", item("1"), 409, "task_ended")
	got := e.waitWorkflow(wf, "Settled")
	if got["charged"].(map[string]any)["amount"] != 200.0 || got["cost"].(map[string]any)["amount"] != 40.0 ||
		got["result"].(map[string]any)["echo"] != 1.0 {
		t.Fatalf("settled workflow: %v", got)
	}
}

// Spend past the budget is 409 margin_floor_exceeded and fails the
// workflow with nothing charged, as for a product in process.
func TestTaskMarginFloorExceeded(t *testing.T) {
	e := newTaskEnv(t, nil)
	wf := e.newWorkflow(e.secret, "remote-echo", "cus_floor")
	base := "/v1/tasks/" + e.claimOne(e.worker, "remote-echo")["id"].(string)
	e.expect(e.worker, base+"/heartbeat", `{"costItems":[{"category":"model","provider":"p","units":1,"amount":160}]}`, 200, "")
	e.expect(e.worker, base+"/heartbeat", `{"costItems":[{"category":"model","provider":"p","units":1,"amount":1}]}`, 409, "margin_floor_exceeded")
	e.expect(e.worker, base+"/complete", `{"result":{}}`, 409, "margin_floor_exceeded")
	e.expect(e.worker, base+"/heartbeat", `{}`, 409, "margin_floor_exceeded")
	got := e.waitWorkflow(wf, "Failed")
	if got["failure"].(map[string]any)["code"] != "margin_floor_exceeded" || got["charged"] != nil ||
		got["cost"].(map[string]any)["amount"] != 161.0 {
		t.Fatalf("failed workflow: %v", got)
	}
	c := e.do("GET", "/v1/customers/cus_floor", e.secret, "").json(t)
	if b := c["balance"].(map[string]any); b["available"] != 100_000.0 || b["reserved"] != 0.0 {
		t.Fatalf("customer after the failure: %v", c)
	}
}

// A worker that stops heartbeating loses its lease: the task is claimed
// again as the next attempt and completes once; the first worker's late
// calls are 409 lease_lost and change nothing. A failure with retry is
// attempted again; one without fails the workflow.
func TestTaskLeaseLostAndFailures(t *testing.T) {
	e := newTaskEnv(t, func(o *settleflow.Options) {
		o.TaskLease = 200 * time.Millisecond
		o.Retry.Base, o.Retry.Max = 10*time.Millisecond, 20*time.Millisecond
	})
	wf := e.newWorkflow(e.secret, "remote-echo", "cus_lease")
	first := e.claimOne(e.worker, "remote-echo")
	second := e.claimOne(e.worker, "remote-echo") // after the first lease ended
	if second["workflowId"] != wf || second["attempt"] != 2.0 || second["id"] == first["id"] {
		t.Fatalf("claimed again: %v after %v", second, first)
	}
	a, b := "/v1/tasks/"+first["id"].(string), "/v1/tasks/"+second["id"].(string)
	e.expect(e.worker, a+"/heartbeat", `{}`, 409, "lease_lost")
	e.expect(e.worker, a+"/complete", `{"result":{"by":"first"}}`, 409, "lease_lost")
	e.expect(e.worker, b+"/complete", `{"result":{"by":"second"}}`, 200, "")
	e.expect(e.worker, a+"/complete", `{"result":{"by":"first"}}`, 409, "lease_lost")
	got := e.waitWorkflow(wf, "Settled")
	if got["result"].(map[string]any)["by"] != "second" || got["charged"].(map[string]any)["amount"] != 200.0 {
		t.Fatalf("settled: %v", got)
	}
	if bal := e.funds.Balance(settleflow.Test, "cus_lease"); bal != 100_000-200 {
		t.Fatalf("the customer holds %d on chain, want one charge of 200 taken", bal)
	}

	retried := e.newWorkflow(e.secret, "remote-other", "cus_fail")
	t1 := e.claimOne(e.worker, "remote-other")
	e.expect(e.worker, "/v1/tasks/"+t1["id"].(string)+"/fail", `{"message":"flaky","retry":true}`, 200, "")
	e.expect(e.worker, "/v1/tasks/"+t1["id"].(string)+"/fail", `{"message":"flaky","retry":true}`, 200, "")
	e.expect(e.worker, "/v1/tasks/"+t1["id"].(string)+"/complete", `{"result":{}}`, 409, "task_ended")
	t2 := e.claimOne(e.worker, "remote-other")
	if t2["workflowId"] != retried || t2["attempt"] != 2.0 {
		t.Fatalf("retried: %v", t2)
	}
	e.expect(e.worker, "/v1/tasks/"+t2["id"].(string)+"/fail", `{"message":"the document is unreadable"}`, 200, "")
	got = e.waitWorkflow(retried, "Failed")
	if f := got["failure"].(map[string]any); f["code"] != "execution_failed" || !strings.Contains(f["message"].(string), "the document is unreadable") {
		t.Fatalf("failed: %v", got)
	}
}

// A claim waiting when its worker key is revoked takes no task: the task
// queued after the revocation is answered 401 to it and stays for a key
// still valid.
func TestClaimWaitingAtRevocationTakesNothing(t *testing.T) {
	e := newTaskEnv(t, nil)
	doomed := e.keys.createWorker(t, settleflow.Test)
	answered := make(chan response, 1)
	go func() {
		answered <- e.do("POST", "/v1/tasks/claim", doomed, `{"products":["remote-echo"],"max":5,"waitSeconds":20}`)
	}()
	time.Sleep(500 * time.Millisecond) // the claim is waiting (were it not, it is refused at once: the test still holds)
	e.keys.revoke(t, doomed)
	id := e.newWorkflow(e.secret, "remote-echo", "cus_revoked")
	var r response
	select {
	case r = <-answered:
	case <-time.After(30 * time.Second):
		t.Fatal("the revoked key's claim did not answer")
	}
	if r.status != 401 || r.errorObject(t)["code"] != "api_key_revoked" {
		t.Fatalf("the revoked key's waiting claim answered %d %s, want 401 api_key_revoked", r.status, r.body)
	}
	task := e.claimOne(e.worker, "remote-echo")
	if task["workflowId"] != id || task["attempt"].(float64) != 1 {
		t.Fatalf("the valid key claimed %v, want attempt 1 of %s", task, id)
	}
	e.expect(e.worker, "/v1/tasks/"+task["id"].(string)+"/complete", `{"result":{}}`, 200, "")
}
