package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/fundstest"
)

// The quote of body1's ticket-triage payload: ceil(200 / 0.7).
const quote1 = 286

// newFundsEnv is an API whose engine charges customer balances (the
// fundstest double) and runs, so workflows settle.
func newFundsEnv(t *testing.T, o envOptions) (*env, *fundstest.Settler) {
	t.Helper()
	fs := fundstest.New()
	fs.Live = o.live
	o.funds = fs
	return newEnv(t, o), fs
}

// deposit credits a test customer on the double's chain and has the engine
// apply it at once.
func (e *env) deposit(fs *fundstest.Settler, customerID string, amount int64) {
	e.t.Helper()
	fs.Deposit(settleflow.Test, customerID, amount)
	if err := e.engine.SyncFunds(context.Background(), settleflow.Test); err != nil {
		e.t.Fatal(err)
	}
}

// waitWorkflow polls the workflow until it has status want.
func (e *env) waitWorkflow(key, id string, want settleflow.Status) map[string]any {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := e.do("GET", "/v1/workflows/"+id, key, "")
		wf := r.json(e.t)
		if wf["status"] == string(want) {
			return wf
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("workflow %s: %s, want %s", id, r.body, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *env) waitRefund(key, id string, want settleflow.RefundStatus) map[string]any {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := e.do("GET", "/v1/refunds/"+id, key, "")
		if r.status != 200 {
			e.t.Fatalf("refund %s: %d %s", id, r.status, r.body)
		}
		rf := r.json(e.t)
		if rf["status"] == string(want) {
			return rf
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("refund %s: %s, want %s", id, r.body, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitEvents lists the events of type typ until there are n (events are
// listed once dispatched to the notifier).
func (e *env) waitEvents(key, typ string, n int) (response, []settleflow.Event) {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := e.do("GET", "/v1/events?type="+typ, key, "")
		var l struct {
			Data []settleflow.Event `json:"data"`
		}
		if err := json.Unmarshal(r.body, &l); err != nil || r.status != 200 {
			e.t.Fatalf("events of type %s: %d %s", typ, r.status, r.body)
		}
		if len(l.Data) >= n || time.Now().After(deadline) {
			return r, l.Data
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func countRows(t *testing.T, e *env, table string) int {
	t.Helper()
	var n int
	if err := e.store.DB().Bun().QueryRowContext(context.Background(), `SELECT count(*) FROM `+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func keysOf(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// GET /v1/customers/{customerId}: the wire shape of issue 25, a customer
// never seen answering 200 with zeros, and the refusals.
func TestCustomer(t *testing.T) {
	e, fs := newFundsEnv(t, envOptions{})
	key := e.keys.create(t, settleflow.Test, "starter")
	e.deposit(fs, "cus_a", 10_000)
	r := e.do("GET", "/v1/customers/cus_a", key, "")
	if r.status != 200 {
		t.Fatalf("customer: %d %s", r.status, r.body)
	}
	c := r.json(t)
	if got, want := keysOf(c), []string{"balance", "deposit", "id", "livemode", "object", "owner", "ownerChange"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("customer names %v, want %v", got, want)
	}
	bal := c["balance"].(map[string]any)
	if got, want := keysOf(bal), []string{"available", "currency", "onChain", "pendingWithdrawal", "reserved"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("balance names %v, want %v", got, want)
	}
	dep := c["deposit"].(map[string]any)
	if got, want := keysOf(dep), []string{"chainId", "contract", "customerRef", "network", "token"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("deposit names %v, want %v", got, want)
	}
	ref, _ := fs.CustomerRef(settleflow.Test, "cus_a")
	if c["object"] != "customer" || c["id"] != "cus_a" || c["livemode"] != false ||
		bal["onChain"] != float64(10_000) || bal["available"] != float64(10_000) || bal["reserved"] != float64(0) ||
		bal["pendingWithdrawal"] != float64(0) || bal["currency"] != "usd" ||
		dep["customerRef"] != ref || dep["contract"] != fundstest.Contract || dep["chainId"] != float64(fundstest.ChainID) {
		t.Fatalf("customer %s", r.body)
	}
	// A workflow reserves its quote.
	if r := e.create(key, `{"product":"ticket-triage","customerId":"cus_a","payload":{"ticketId":"T-hold"}}`); r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	bal = e.do("GET", "/v1/customers/cus_a", key, "").json(t)["balance"].(map[string]any)
	if bal["reserved"] != float64(quote1) || bal["available"] != float64(10_000-quote1) {
		t.Fatalf("balance with a workflow running: %v", bal)
	}
	// Never seen: 200 with zeros.
	r = e.do("GET", "/v1/customers/cus_never_seen", key, "")
	if r.status != 200 {
		t.Fatalf("a customer never seen: %d %s", r.status, r.body)
	}
	if bal := r.json(t)["balance"].(map[string]any); bal["onChain"] != float64(0) || bal["available"] != float64(0) || bal["reserved"] != float64(0) {
		t.Fatalf("a customer never seen: %s", r.body)
	}
	for _, c := range []struct{ path, code, param string }{
		{"/v1/customers/123", "parameter_invalid", "customerId"},
		{"/v1/customers/cus_a%20b", "parameter_invalid", "customerId"},
		{"/v1/customers/cus_" + strings.Repeat("x", 256), "parameter_invalid", "customerId"},
		{"/v1/customers/cus_a?expand=all", "parameter_unknown", "expand"},
	} {
		r := e.do("GET", c.path, key, "")
		if eo := r.errorObject(t); r.status != 400 || eo["code"] != c.code || eo["param"] != c.param {
			t.Errorf("GET %s: %d %s; want 400 %s naming %s", c.path, r.status, r.body, c.code, c.param)
		}
	}
	if r := e.do("POST", "/v1/customers/cus_a", key, "{}"); r.status != 405 || r.header.Get("Allow") != "GET" {
		t.Fatalf("POST a customer: %d %v", r.status, r.header)
	}
}

// Without a settler that charges customer balances: a customer is zeros
// with no deposit instructions, and refunds and funding are refused.
func TestCustomerFundsNotSupported(t *testing.T) {
	e := newEnv(t, envOptions{})
	key := e.keys.create(t, settleflow.Test, "starter")
	r := e.do("GET", "/v1/customers/cus_a", key, "")
	if c := r.json(t); r.status != 200 || c["deposit"] != nil || c["balance"].(map[string]any)["available"] != float64(0) {
		t.Fatalf("customer: %d %s", r.status, r.body)
	}
	wfID := e.create(key, body1).json(t)["id"].(string)
	for _, c := range []struct{ path, body string }{
		{"/v1/workflows/" + wfID + "/refunds", ""},
		{"/v1/test_helpers/customers/cus_a/fund", `{"amount":100}`},
	} {
		r := e.do("POST", c.path, key, c.body)
		if eo := r.errorObject(t); r.status != 409 || eo["code"] != "refunds_not_supported" || eo["type"] != "invalid_request_error" {
			t.Errorf("POST %s: %d %s", c.path, r.status, r.body)
		}
	}
}

// Refunds over HTTP: partial with an idempotency key, its replay, the rest
// with no body, one cent more, the refusals (each changing nothing), the
// settled outcome on the refund, the workflow and the balance, the list and
// the events.
func TestRefunds(t *testing.T) {
	e, fs := newFundsEnv(t, envOptions{})
	key := e.keys.create(t, settleflow.Test, "pro")
	e.deposit(fs, "cus_123", 10*quote1)
	wfID := e.create(key, body1).json(t)["id"].(string)
	e.waitWorkflow(key, wfID, settleflow.Settled)
	held := e.create(key, `{"product":"ticket-triage","customerId":"cus_123","payload":{"ticketId":"T-hold"}}`).json(t)["id"].(string)
	e.waitWorkflow(key, held, settleflow.Running)
	path := "/v1/workflows/" + wfID + "/refunds"

	first := e.do("POST", path, key, `{"amount":100,"reason":"late <answer> & more"}`, "Idempotency-Key", "refund-1")
	if first.status != 201 {
		t.Fatalf("refund: %d %s", first.status, first.body)
	}
	rf := first.json(t)
	r1, _ := rf["id"].(string)
	if !strings.HasPrefix(r1, "re_") || rf["object"] != "refund" || rf["workflowId"] != wfID || rf["amount"] != float64(100) ||
		rf["currency"] != "usd" || rf["reason"] != "late <answer> & more" || rf["status"] != "Pending" || rf["livemode"] != false {
		t.Fatalf("refund %s", first.body)
	}
	if got, want := keysOf(rf), []string{"amount", "createdAt", "currency", "failure", "id", "livemode", "object", "reason", "settlement", "status", "updatedAt", "workflowId"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("refund names %v, want %v", got, want)
	}
	if first.header.Get("Location") != "/v1/refunds/"+r1 || first.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("headers %v", first.header)
	}
	again := e.do("POST", path, key, `{"amount":100,"reason":"late <answer> & more"}`, "Idempotency-Key", "refund-1")
	if again.status != 201 || again.header.Get("Idempotent-Replayed") != "true" || again.json(t)["id"] != r1 {
		t.Fatalf("replay: %d %v %s", again.status, again.header, again.body)
	}
	if r := e.do("POST", path, key, `{"amount":101}`, "Idempotency-Key", "refund-1"); r.status != 409 || r.errorObject(t)["code"] != "idempotency_key_reused" {
		t.Fatalf("key reused: %d %s", r.status, r.body)
	}

	refunds := countRows(t, e, "settleflow_refunds")
	for _, c := range []struct {
		name, path, body string
		header           []string
		status           int
		code, param      string
	}{
		{"amount 0", path, `{"amount":0}`, nil, 400, "parameter_invalid", "amount"},
		{"negative amount", path, `{"amount":-5}`, nil, 400, "parameter_invalid", "amount"},
		{"fractional amount", path, `{"amount":1.5}`, nil, 400, "parameter_invalid", "amount"},
		{"amount as a string", path, `{"amount":"5"}`, nil, 400, "parameter_invalid", "amount"},
		{"null amount", path, `{"amount":null}`, nil, 400, "parameter_invalid", "amount"},
		{"amount too large", path, `{"amount":100000000000001}`, nil, 400, "parameter_invalid", "amount"},
		{"more than is left", path, fmt.Sprintf(`{"amount":%d}`, quote1-100+1), nil, 400, "amount_exceeds_refundable", "amount"},
		{"reason not a string", path, `{"reason":5}`, nil, 400, "parameter_invalid", "reason"},
		{"reason too long", path, `{"reason":"` + strings.Repeat("x", 501) + `"}`, nil, 400, "parameter_invalid", "reason"},
		{"unknown name", path, `{"amount":1,"currency":"usd"}`, nil, 400, "parameter_unknown", "currency"},
		{"case variant", path, `{"Amount":1}`, nil, 400, "parameter_unknown", "Amount"},
		{"name twice", path, `{"amount":1,"amount":2}`, nil, 400, "parameter_invalid", "amount"},
		{"not an object", path, `[1]`, nil, 400, "body_invalid", ""},
		{"bad json", path, `{"amount":`, nil, 400, "body_invalid", ""},
		{"query", path + "?amount=1", "", nil, 400, "parameter_unknown", "amount"},
		{"not json", path, `{"amount":1}`, []string{"Content-Type", "text/plain"}, 415, "unsupported_media_type", ""},
		{"empty idempotency key", path, `{"amount":1}`, []string{"Idempotency-Key", " "}, 400, "parameter_invalid", "Idempotency-Key"},
		{"not settled", "/v1/workflows/" + held + "/refunds", "", nil, 409, "workflow_not_settled", ""},
		{"unknown workflow", "/v1/workflows/wf_01JD3Q6Y6F8Q2W9T4M5N7P8R0S/refunds", "", nil, 404, "resource_missing", ""},
		{"malformed workflow id", "/v1/workflows/nope/refunds", "", nil, 404, "resource_missing", ""},
	} {
		r := e.do("POST", c.path, key, c.body, c.header...)
		eo := r.errorObject(t)
		param, _ := eo["param"].(string)
		if r.status != c.status || eo["code"] != c.code || param != c.param {
			t.Errorf("%s: %d %s; want %d %s naming %q", c.name, r.status, r.body, c.status, c.code, c.param)
		}
		if msg, _ := eo["message"].(string); msg == "" {
			t.Errorf("%s: no message", c.name)
		}
	}
	if n := countRows(t, e, "settleflow_refunds"); n != refunds {
		t.Fatalf("refused refunds changed the data: %d → %d refunds", refunds, n)
	}
	if r := e.do("GET", path, key, ""); r.status != 405 || r.header.Get("Allow") != "POST" {
		t.Fatalf("GET refunds of a workflow: %d %v", r.status, r.header)
	}

	// No body: all that is left.
	rest := e.do("POST", path, key, "")
	if rest.status != 201 || rest.json(t)["amount"] != float64(quote1-100) || rest.json(t)["reason"] != "" {
		t.Fatalf("refund of the rest: %d %s", rest.status, rest.body)
	}
	r2 := rest.json(t)["id"].(string)
	if r := e.do("POST", path, key, `{}`); r.status != 400 || r.errorObject(t)["code"] != "amount_exceeds_refundable" {
		t.Fatalf("a refund of nothing left: %d %s", r.status, r.body)
	}
	for _, id := range []string{r1, r2} {
		rf := e.waitRefund(key, id, settleflow.RefundSucceeded)
		if rf["settlement"] == nil || rf["failure"] != nil {
			t.Fatalf("refund %s succeeded: %v", id, rf)
		}
	}
	wf := e.do("GET", "/v1/workflows/"+wfID, key, "").json(t)
	if rd := wf["refunded"].(map[string]any); rd["amount"] != float64(quote1) || rd["currency"] != "usd" {
		t.Fatalf("workflow refunded %v", wf["refunded"])
	}
	bal := e.do("GET", "/v1/customers/cus_123", key, "").json(t)["balance"].(map[string]any)
	if bal["onChain"] != float64(10*quote1) || bal["reserved"] != float64(quote1) {
		t.Fatalf("balance after the charge and its full refund (one workflow held): %v", bal)
	}
	if got := fs.Balance(settleflow.Test, "cus_123"); got != 10*quote1 {
		t.Fatalf("chain balance %d", got)
	}

	// Fetch and list.
	if r := e.do("GET", "/v1/refunds/"+r1, key, ""); r.status != 200 || r.json(t)["status"] != "Succeeded" {
		t.Fatalf("fetch: %d %s", r.status, r.body)
	}
	list := func(q string) ([]string, bool) {
		t.Helper()
		r := e.do("GET", "/v1/refunds"+q, key, "")
		if r.status != 200 {
			t.Fatalf("list %s: %d %s", q, r.status, r.body)
		}
		var l struct {
			Object, URL string
			Data        []struct{ ID string }
			HasMore     bool
		}
		json.Unmarshal(r.body, &l)
		if l.Object != "list" || l.URL != "/v1/refunds" {
			t.Fatalf("list envelope %s", r.body)
		}
		var ids []string
		for _, d := range l.Data {
			ids = append(ids, d.ID)
		}
		return ids, l.HasMore
	}
	if ids, more := list(""); !slices.Equal(ids, []string{r2, r1}) || more {
		t.Fatalf("list: %v %v", ids, more)
	}
	if ids, more := list("?workflowId=" + wfID + "&status=Succeeded&limit=1"); !slices.Equal(ids, []string{r2}) || !more {
		t.Fatalf("first page of 1: %v %v", ids, more)
	}
	if ids, more := list("?limit=1&startingAfter=" + r2); !slices.Equal(ids, []string{r1}) || more {
		t.Fatalf("second page: %v %v", ids, more)
	}
	if ids, _ := list("?endingBefore=" + r1); !slices.Equal(ids, []string{r2}) {
		t.Fatalf("endingBefore: %v", ids)
	}
	if ids, _ := list("?status=Failed"); len(ids) != 0 {
		t.Fatalf("Failed refunds: %v", ids)
	}
	if ids, _ := list("?workflowId=" + held); len(ids) != 0 {
		t.Fatalf("refunds of the held workflow: %v", ids)
	}
	for _, c := range []struct{ q, code, param string }{
		{"?status=Done", "parameter_invalid", "status"},
		{"?status=succeeded", "parameter_invalid", "status"},
		{"?limit=0", "parameter_invalid", "limit"},
		{"?limit=101", "parameter_invalid", "limit"},
		{"?workflowId=", "parameter_invalid", "workflowId"},
		{"?workflowId=nope", "parameter_invalid", "workflowId"},
		{"?workflowId=a&workflowId=b", "parameter_invalid", "workflowId"},
		{"?startingAfter=" + wfID, "parameter_invalid", "startingAfter"},
		{"?startingAfter=" + r1 + "&endingBefore=" + r2, "parameter_invalid", "endingBefore"},
		{"?customerId=cus_123", "parameter_unknown", "customerId"},
		{"?starting_after=" + r1, "parameter_unknown", "starting_after"},
	} {
		r := e.do("GET", "/v1/refunds"+c.q, key, "")
		if eo := r.errorObject(t); r.status != 400 || eo["code"] != c.code || eo["param"] != c.param {
			t.Errorf("list %s: %d %s; want %s naming %s", c.q, r.status, r.body, c.code, c.param)
		}
	}
	for _, id := range []string{"re_01JD3Q6Y6F8Q2W9T4M5N7P8R0S", "nope", strings.ToLower(r1)} {
		if r := e.do("GET", "/v1/refunds/"+id, key, ""); r.status != 404 || r.errorObject(t)["code"] != "resource_missing" {
			t.Errorf("fetch %s: %d %s", id, r.status, r.body)
		}
	}

	// The events, through the type filter.
	ev, evs := e.waitEvents(key, "refund.succeeded", 2)
	if len(evs) != 2 {
		t.Fatalf("refund.succeeded events: %s", ev.body)
	}
	if d := evs[0].Data; d.Refund == nil || d.Refund.ID != r2 || d.WorkflowID != wfID || d.Refund.Status != settleflow.RefundSucceeded {
		t.Fatalf("newest refund.succeeded: %s", ev.body)
	}
	for _, typ := range []string{"refund.failed", "customer.funded"} {
		if r := e.do("GET", "/v1/events?type="+typ, key, ""); r.status != 200 {
			t.Fatalf("events of type %s: %d %s", typ, r.status, r.body)
		}
	}
	if r := e.do("GET", "/v1/events?type=refund.created", key, ""); r.status != 400 || !strings.Contains(r.errorObject(t)["message"].(string), "customer.funded") {
		t.Fatalf("unknown event type: %d %s", r.status, r.body)
	}
}

// A test key's refund never reaches a live workflow, and the other way.
func TestRefundsAreIsolatedByEnvironment(t *testing.T) {
	e, fs := newFundsEnv(t, envOptions{live: true})
	test := e.keys.create(t, settleflow.Test, "starter")
	live := e.keys.create(t, settleflow.Live, "starter")
	e.deposit(fs, "cus_123", quote1)
	wfID := e.create(test, body1).json(t)["id"].(string)
	e.waitWorkflow(test, wfID, settleflow.Settled)
	if r := e.do("POST", "/v1/workflows/"+wfID+"/refunds", live, ""); r.status != 404 {
		t.Fatalf("a live key refunded a test workflow: %d %s", r.status, r.body)
	}
	id := e.do("POST", "/v1/workflows/"+wfID+"/refunds", test, "").json(t)["id"].(string)
	if r := e.do("GET", "/v1/refunds/"+id, live, ""); r.status != 404 {
		t.Fatalf("a live key fetched a test refund: %d", r.status)
	}
	if r := e.do("GET", "/v1/refunds", live, ""); r.status != 200 || len(r.json(t)["data"].([]any)) != 0 {
		t.Fatalf("a live key listed test refunds: %s", r.body)
	}
	if r := e.do("GET", "/v1/customers/cus_123", live, ""); r.json(t)["livemode"] != true || r.json(t)["balance"].(map[string]any)["onChain"] != float64(0) {
		t.Fatalf("the live customer shows test funds: %s", r.body)
	}
}

// POST /v1/test_helpers/customers/{customerId}/fund: a test deposit, applied
// before the answer, announced by customer.funded; refused for live keys and
// bad amounts, changing nothing.
func TestFundTestCustomer(t *testing.T) {
	e, fs := newFundsEnv(t, envOptions{live: true})
	key := e.keys.create(t, settleflow.Test, "starter")
	live := e.keys.create(t, settleflow.Live, "starter")
	const path = "/v1/test_helpers/customers/cus_f/fund"
	r := e.do("POST", path, key, `{"amount":5000}`)
	if r.status != 200 {
		t.Fatalf("fund: %d %s", r.status, r.body)
	}
	c := r.json(t)
	if bal := c["balance"].(map[string]any); c["object"] != "customer" || c["id"] != "cus_f" || bal["onChain"] != float64(5000) || bal["available"] != float64(5000) {
		t.Fatalf("funded customer %s", r.body)
	}
	if r := e.do("POST", path, key, `{"amount":1}`); r.json(t)["balance"].(map[string]any)["available"] != float64(5001) {
		t.Fatalf("a second deposit: %s", r.body)
	}
	if fs.Faucets() != 2 {
		t.Fatalf("%d faucet deposits", fs.Faucets())
	}
	ev, evs := e.waitEvents(key, "customer.funded", 2)
	if len(evs) != 2 || evs[1].Data.CustomerID != "cus_f" ||
		evs[1].Data.Deposit == nil || evs[1].Data.Deposit.Amount.Amount != 5000 || evs[0].Data.Balance.Available != 5001 {
		t.Fatalf("customer.funded events: %s", ev.body)
	}
	for _, c := range []struct {
		name, path, key, body string
		header                []string
		status                int
		typ, code, param      string
	}{
		{"live key", path, live, `{"amount":5000}`, nil, 403, "permission_error", "test_mode_only", ""},
		{"no body", path, key, "", nil, 415, "invalid_request_error", "unsupported_media_type", ""},
		{"empty object", path, key, `{}`, nil, 400, "invalid_request_error", "parameter_missing", "amount"},
		{"amount 0", path, key, `{"amount":0}`, nil, 400, "invalid_request_error", "parameter_invalid", "amount"},
		{"negative", path, key, `{"amount":-1}`, nil, 400, "invalid_request_error", "parameter_invalid", "amount"},
		{"fraction", path, key, `{"amount":0.5}`, nil, 400, "invalid_request_error", "parameter_invalid", "amount"},
		{"too large", path, key, `{"amount":100000000000001}`, nil, 400, "invalid_request_error", "parameter_invalid", "amount"},
		{"unknown name", path, key, `{"amount":1,"currency":"usd"}`, nil, 400, "invalid_request_error", "parameter_unknown", "currency"},
		{"bad customer", "/v1/test_helpers/customers/123/fund", key, `{"amount":1}`, nil, 400, "invalid_request_error", "parameter_invalid", "customerId"},
		{"query", path + "?amount=1", key, `{"amount":1}`, nil, 400, "invalid_request_error", "parameter_unknown", "amount"},
	} {
		r := e.do("POST", c.path, c.key, c.body, c.header...)
		eo := r.errorObject(t)
		param, _ := eo["param"].(string)
		if r.status != c.status || eo["type"] != c.typ || eo["code"] != c.code || param != c.param {
			t.Errorf("%s: %d %s; want %d %s %s naming %q", c.name, r.status, r.body, c.status, c.typ, c.code, c.param)
		}
	}
	if fs.Faucets() != 2 {
		t.Fatalf("refused requests deposited: %d faucet deposits", fs.Faucets())
	}
	if r := e.do("GET", path, key, ""); r.status != 405 || r.header.Get("Allow") != "POST" {
		t.Fatalf("GET the fund helper: %d %v", r.status, r.header)
	}
}

// A create the balance cannot cover is 402 payment_error insufficient_funds
// with the amounts in the error object, and stores nothing; the test
// customer cus_insufficient_funds is never funded by the faucet.
func TestCreateInsufficientFunds(t *testing.T) {
	e, fs := newFundsEnv(t, envOptions{faucet: 100_000})
	key := e.keys.create(t, settleflow.Test, "starter")
	// A new test customer is funded by the faucet on its first create.
	if r := e.create(key, body1); r.status != 201 {
		t.Fatalf("a new test customer's first create: %d %s", r.status, r.body)
	}
	before := countWorkflows(t, e)
	r := e.create(key, `{"product":"ticket-triage","customerId":"cus_insufficient_funds","payload":{"ticketId":"T-1"}}`, "Idempotency-Key", "k-402")
	if r.status != http.StatusPaymentRequired {
		t.Fatalf("create for %s: %d %s", settleflow.TestCustomerInsufficientFunds, r.status, r.body)
	}
	eo := r.errorObject(t)
	if eo["type"] != "payment_error" || eo["code"] != "insufficient_funds" || eo["available"] != float64(0) || eo["amount"] != float64(quote1) ||
		eo["currency"] != "usd" || eo["customerId"] != "cus_insufficient_funds" || eo["requestId"] != r.header.Get("Request-Id") {
		t.Fatalf("402 error %s", r.body)
	}
	if msg := eo["message"].(string); !strings.Contains(msg, "0 usd available") || !strings.Contains(msg, fmt.Sprint(quote1)) {
		t.Fatalf("402 message %q: want the available amount and the quote", msg)
	}
	if n := countWorkflows(t, e); n != before {
		t.Fatalf("a refused create stored a workflow: %d → %d", before, n)
	}
	// A deposit makes the same create (same key) go through.
	e.deposit(fs, "cus_insufficient_funds", quote1-1)
	r = e.create(key, `{"product":"ticket-triage","customerId":"cus_insufficient_funds","payload":{"ticketId":"T-1"}}`, "Idempotency-Key", "k-402")
	if eo := r.errorObject(t); r.status != 402 || eo["available"] != float64(quote1-1) {
		t.Fatalf("one cent short: %d %s", r.status, r.body)
	}
	e.deposit(fs, "cus_insufficient_funds", 1)
	r = e.create(key, `{"product":"ticket-triage","customerId":"cus_insufficient_funds","payload":{"ticketId":"T-1"}}`, "Idempotency-Key", "k-402")
	if r.status != 201 {
		t.Fatalf("after a deposit: %d %s", r.status, r.body)
	}
	if fs.Faucets() != 1 {
		t.Fatalf("faucet deposits: %d, want 1 (never for %s)", fs.Faucets(), settleflow.TestCustomerInsufficientFunds)
	}
	// A quote is not gated: it stores and reserves nothing.
	e.waitWorkflow(key, r.json(t)["id"].(string), settleflow.Settled)
	if r := e.do("POST", "/v1/quotes", key, `{"product":"ticket-triage","customerId":"cus_insufficient_funds","payload":{"ticketId":"T-2"}}`); r.status != 200 {
		t.Fatalf("quote without funds: %d %s", r.status, r.body)
	}
}

// A new test customer's first create whose faucet deposit is sent but never
// confirmed (a chain that makes no more blocks: geth --dev without
// --dev.period) is 503 api_error funds_unconfirmed with Retry-After, before
// the request's deadline (not 504 request_timeout), naming the customer and
// the deposit, and stores nothing; so is a test funding.
func TestCreateFundsUnconfirmed(t *testing.T) {
	fs := fundstest.New()
	fs.HoldFaucet = true
	e := newEnv(t, envOptions{funds: fs, faucet: 100_000, timeout: 2 * time.Second})
	key := e.keys.create(t, settleflow.Test, "starter")
	before := countWorkflows(t, e)
	began := time.Now()
	r := e.create(key, body1, "Idempotency-Key", "k-unconfirmed")
	took := time.Since(began)
	if r.status != http.StatusServiceUnavailable {
		t.Fatalf("a first create whose faucet deposit never confirms: %d %s (after %s)", r.status, r.body, took)
	}
	eo := r.errorObject(t)
	msg, _ := eo["message"].(string)
	if eo["type"] != "api_error" || eo["code"] != "funds_unconfirmed" || eo["customerId"] != "cus_123" || eo["requestId"] != r.header.Get("Request-Id") ||
		!strings.Contains(msg, "confirmation depth") || !strings.Contains(msg, "--dev.period") || !strings.Contains(msg, "transaction 0x") {
		t.Fatalf("503 error %s", r.body)
	}
	if ra := r.header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Fatalf("Retry-After %q", ra)
	}
	if took >= 2*time.Second {
		t.Fatalf("answered after %s, past the request's deadline of 2s", took)
	}
	if n := countWorkflows(t, e); n != before {
		t.Fatalf("a refused create stored a workflow: %d → %d", before, n)
	}
	// The same key again: the deposit is still on its way, nothing sent twice.
	if r := e.create(key, body1, "Idempotency-Key", "k-unconfirmed"); r.status != 503 || r.errorObject(t)["code"] != "funds_unconfirmed" {
		t.Fatalf("the same create again: %d %s", r.status, r.body)
	}
	if fs.Faucets() != 1 {
		t.Fatalf("faucet deposits: %d, want 1", fs.Faucets())
	}
	r = e.do("POST", "/v1/test_helpers/customers/cus_f/fund", key, `{"amount":5000}`)
	if eo := r.errorObject(t); r.status != 503 || eo["code"] != "funds_unconfirmed" || eo["customerId"] != "cus_f" || r.header.Get("Retry-After") == "" {
		t.Fatalf("a test funding that never confirms: %d %s", r.status, r.body)
	}
}
