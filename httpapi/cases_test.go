package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/apikey"
	"github.com/settleflow/settleflow/httpapi"
	"github.com/settleflow/settleflow/ratelimit"
	"github.com/settleflow/settleflow/wire"
)

const body1 = `{"product":"ticket-triage","customerId":"cus_123","payload":{"ticketId":"T-42"}}`

func TestCreateFetchList(t *testing.T) {
	e := newEnv(t, envOptions{})
	key := e.keys.create(t, settleflow.Test, "starter")
	r := e.create(key, body1)
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	wf := r.json(t)
	id, _ := wf["id"].(string)
	if !strings.HasPrefix(id, "wf_") || wf["status"] != "Pending" || wf["livemode"] != false || wf["object"] != "workflow" {
		t.Fatalf("created: %s", r.body)
	}
	if q := wf["quoted"].(map[string]any); q["amount"] != float64(286) || q["currency"] != "usd" {
		t.Fatalf("quoted: %v", q)
	}
	if m := wf["margin"].(map[string]any); m["target"] != 0.3 || m["achieved"] != nil {
		t.Fatalf("margin: %v", m)
	}
	if loc := r.header.Get("Location"); loc != "/v1/workflows/"+id {
		t.Fatalf("Location %q", loc)
	}
	for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit-Policy", "RateLimit"} {
		if r.header.Get(h) == "" {
			t.Fatalf("authenticated response lacks %s", h)
		}
	}
	got := e.do("GET", "/v1/workflows/"+id, key, "")
	if got.status != 200 || string(got.body) != string(r.body) {
		t.Fatalf("fetch of an untouched workflow differs from the create answer: %d\n%s\n%s", got.status, got.body, r.body)
	}
	list := e.do("GET", "/v1/workflows?status=Pending&limit=5&customerId=cus_123&product=ticket-triage", key, "")
	l := list.json(t)
	if list.status != 200 || l["object"] != "list" || l["url"] != "/v1/workflows" || l["hasMore"] != false || len(l["data"].([]any)) != 1 {
		t.Fatalf("list: %d %s", list.status, list.body)
	}
	products := e.do("GET", "/v1/products", key, "")
	if products.status != 200 || !strings.Contains(string(products.body), `"name":"ticket-triage"`) {
		t.Fatalf("products: %d %s", products.status, products.body)
	}
	doc := e.do("GET", "/v1/openapi.json", "", "")
	if doc.status != 200 || doc.json(t)["openapi"] != "3.1.0" {
		t.Fatalf("openapi: %d", doc.status)
	}
}

// Every row of docs/api.md §6's error table, with its type and code.
func TestErrorTable(t *testing.T) {
	e := newEnv(t, envOptions{})
	key := e.keys.create(t, settleflow.Test, "starter")
	live := e.keys.create(t, settleflow.Live, "starter")
	wfID := e.create(key, body1).json(t)["id"].(string)
	cases := []struct {
		name           string
		method, path   string
		key, body      string
		header         []string
		status         int
		typ, code, par string
	}{
		{"bad json", "POST", "/v1/workflows", key, `{"product":`, nil, 400, "invalid_request_error", "body_invalid", ""},
		{"not an object", "POST", "/v1/workflows", key, `[1,2]`, nil, 400, "invalid_request_error", "body_invalid", ""},
		{"trailing data", "POST", "/v1/workflows", key, body1 + `{}`, nil, 400, "invalid_request_error", "body_invalid", ""},
		{"missing product", "POST", "/v1/workflows", key, `{"customerId":"cus_1","payload":{}}`, nil, 400, "invalid_request_error", "parameter_missing", "product"},
		{"missing customer", "POST", "/v1/workflows", key, `{"product":"ticket-triage","payload":{}}`, nil, 400, "invalid_request_error", "parameter_missing", "customerId"},
		{"missing payload", "POST", "/v1/workflows", key, `{"product":"ticket-triage","customerId":"cus_1"}`, nil, 400, "invalid_request_error", "parameter_missing", "payload"},
		{"null payload", "POST", "/v1/workflows", key, `{"product":"ticket-triage","customerId":"cus_1","payload":null}`, nil, 400, "invalid_request_error", "parameter_missing", "payload"},
		{"payload not object", "POST", "/v1/workflows", key, `{"product":"ticket-triage","customerId":"cus_1","payload":"x"}`, nil, 400, "invalid_request_error", "parameter_invalid", "payload"},
		{"unknown field", "POST", "/v1/workflows", key, `{"product":"ticket-triage","customerId":"cus_1","payload":{},"amount":5}`, nil, 400, "invalid_request_error", "parameter_unknown", "amount"},
		{"wrong type", "POST", "/v1/workflows", key, `{"product":7,"customerId":"cus_1","payload":{}}`, nil, 400, "invalid_request_error", "parameter_invalid", "product"},
		{"bad customer", "POST", "/v1/workflows", key, `{"product":"ticket-triage","customerId":"123","payload":{"ticketId":"x"}}`, nil, 400, "invalid_request_error", "parameter_invalid", "customerId"},
		{"unknown product", "POST", "/v1/workflows", key, `{"product":"nope","customerId":"cus_1","payload":{}}`, nil, 400, "invalid_request_error", "product_not_found", "product"},
		{"payload field", "POST", "/v1/workflows", key, `{"product":"ticket-triage","customerId":"cus_1","payload":{}}`, nil, 400, "invalid_request_error", "parameter_invalid", "payload.ticketId"},
		{"payload field type", "POST", "/v1/workflows", key, `{"product":"ticket-triage","customerId":"cus_1","payload":{"ticketId":1}}`, nil, 400, "invalid_request_error", "parameter_invalid", "payload.ticketId"},
		{"margin below floor", "POST", "/v1/workflows", key, `{"product":"ticket-triage","customerId":"cus_1","payload":{"ticketId":"T"},"marginFloor":0.5}`, nil, 400, "invalid_request_error", "margin_below_floor", "marginFloor"},
		{"bad margin floor", "POST", "/v1/workflows", key, `{"product":"ticket-triage","customerId":"cus_1","payload":{"ticketId":"T"},"marginFloor":0.00001}`, nil, 400, "invalid_request_error", "parameter_invalid", "marginFloor"},
		{"bad criteria node", "POST", "/v1/workflows", key, `{"product":"ticket-triage","customerId":"cus_1","payload":{"ticketId":"T"},"successCriteria":{"type":"any_of","criteria":[{"type":"exact","path":"/q","value":1},{"type":"regex","path":"/q","pattern":"("}]}}`, nil, 400, "invalid_request_error", "parameter_invalid", "successCriteria.criteria[1].pattern"},
		{"bad status filter", "GET", "/v1/workflows?status=Done", key, "", nil, 400, "invalid_request_error", "parameter_invalid", "status"},
		{"bad limit", "GET", "/v1/workflows?limit=101", key, "", nil, 400, "invalid_request_error", "parameter_invalid", "limit"},
		{"limit not a number", "GET", "/v1/workflows?limit=ten", key, "", nil, 400, "invalid_request_error", "parameter_invalid", "limit"},
		{"both cursors", "GET", "/v1/workflows?startingAfter=" + wfID + "&endingBefore=" + wfID, key, "", nil, 400, "invalid_request_error", "parameter_invalid", "endingBefore"},
		{"bad cursor", "GET", "/v1/workflows?startingAfter=wf_nope", key, "", nil, 400, "invalid_request_error", "parameter_invalid", "startingAfter"},
		{"retired snake_case cursor", "GET", "/v1/workflows?starting_after=" + wfID, key, "", nil, 400, "invalid_request_error", "parameter_unknown", "starting_after"},
		{"retired snake_case cursor (before)", "GET", "/v1/workflows?ending_before=" + wfID, key, "", nil, 400, "invalid_request_error", "parameter_unknown", "ending_before"},
		{"unknown query", "GET", "/v1/workflows?color=red", key, "", nil, 400, "invalid_request_error", "parameter_unknown", "color"},
		{"long idempotency key", "POST", "/v1/workflows", key, body1, []string{"Idempotency-Key", strings.Repeat("k", 256)}, 400, "invalid_request_error", "parameter_invalid", "Idempotency-Key"},
		{"missing key", "GET", "/v1/workflows", "", "", nil, 401, "authentication_error", string(apikey.ErrMissing.Code), ""},
		{"malformed key", "GET", "/v1/workflows", "sk_test_short", "", nil, 401, "authentication_error", string(apikey.ErrMalformed.Code), ""},
		{"not bearer", "GET", "/v1/workflows", "", "", []string{"Authorization", "Basic Zm9vOmJhcg=="}, 401, "authentication_error", string(apikey.ErrMalformed.Code), ""},
		{"unknown key", "GET", "/v1/workflows", "sk_test_" + strings.Repeat("A", 40), "", nil, 401, "authentication_error", string(apikey.ErrUnknown.Code), ""},
		{"live not configured", "GET", "/v1/workflows", live, "", nil, 403, "permission_error", "livemode_not_configured", ""},
		{"missing workflow", "GET", "/v1/workflows/wf_01JD3Q6Y6F8Q2W9T4M5N7P8R0S", key, "", nil, 404, "invalid_request_error", "resource_missing", ""},
		{"malformed workflow id", "GET", "/v1/workflows/nope", key, "", nil, 404, "invalid_request_error", "resource_missing", ""},
		{"unknown path", "GET", "/v1/customers", key, "", nil, 404, "invalid_request_error", "resource_missing", ""},
		{"wrong method", "DELETE", "/v1/workflows", key, "", nil, 405, "invalid_request_error", "method_not_allowed", ""},
		{"wrong method on one", "POST", "/v1/workflows/" + wfID, key, "", nil, 405, "invalid_request_error", "method_not_allowed", ""},
		{"too large", "POST", "/v1/workflows", key, `{"product":"ticket-triage","customerId":"cus_1","payload":{"ticketId":"` + strings.Repeat("x", 1<<20) + `"}}`, nil, 413, "invalid_request_error", "body_too_large", ""},
		{"not json", "POST", "/v1/workflows", key, body1, []string{"Content-Type", "text/plain"}, 415, "invalid_request_error", "unsupported_media_type", ""},
		{"no content type", "POST", "/v1/workflows", key, body1, []string{"Content-Type", ""}, 415, "invalid_request_error", "unsupported_media_type", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := countWorkflows(t, e)
			r := e.do(c.method, c.path, c.key, c.body, c.header...)
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
			}
			eo := r.errorObject(t)
			param, _ := eo["param"].(string)
			if eo["type"] != c.typ || eo["code"] != c.code || param != c.par || eo["requestId"] != r.header.Get("Request-Id") {
				t.Fatalf("error %v, want type %s code %s param %q", eo, c.typ, c.code, c.par)
			}
			if msg, _ := eo["message"].(string); msg == "" {
				t.Fatal("empty message")
			}
			if c.status == 405 && r.header.Get("Allow") == "" {
				t.Fatal("405 without Allow")
			}
			if after := countWorkflows(t, e); after != before {
				t.Fatalf("a refused request changed the data: %d → %d workflows", before, after)
			}
		})
	}
}

func countWorkflows(t *testing.T, e *env) int {
	var n int
	if err := e.store.DB().Bun().QueryRowContext(context.Background(), `SELECT count(*) FROM settleflow_workflows`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// 401 for revoked and expired keys; rotation keeps the old key until its expiry.
func TestKeyStates(t *testing.T) {
	e := newEnv(t, envOptions{})
	key := e.keys.create(t, settleflow.Test, "starter")
	if r := e.do("GET", "/v1/workflows", key, ""); r.status != 200 {
		t.Fatalf("fresh key: %d", r.status)
	}
	// Rotation with an overlap: both work.
	newKey := e.keys.rotate(t, key, time.Hour)
	for _, k := range []string{key, newKey} {
		if r := e.do("GET", "/v1/workflows", k, ""); r.status != 200 {
			t.Fatalf("during the rotation overlap: %d %s", r.status, r.body)
		}
	}
	// Rotation expiring now: the old key is expired at once.
	newer := e.keys.rotate(t, newKey, 0)
	r := e.do("GET", "/v1/workflows", newKey, "")
	if r.status != 401 || r.errorObject(t)["code"] != string(apikey.ErrExpired.Code) {
		t.Fatalf("rotated-out key: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v1/workflows", newer, ""); r.status != 200 {
		t.Fatalf("new key: %d", r.status)
	}
	e.keys.revoke(t, newer)
	r = e.do("GET", "/v1/workflows", newer, "")
	if r.status != 401 || r.errorObject(t)["code"] != string(apikey.ErrRevoked.Code) {
		t.Fatalf("revoked key: %d %s", r.status, r.body)
	}
}

// A test key never sees live data, and the other way round.
func TestEnvironmentsAreIsolated(t *testing.T) {
	e := newEnv(t, envOptions{live: true})
	test := e.keys.create(t, settleflow.Test, "starter")
	live := e.keys.create(t, settleflow.Live, "starter")
	lw := e.create(live, body1)
	tw := e.create(test, body1)
	if lw.status != 201 || tw.status != 201 || lw.json(t)["livemode"] != true || tw.json(t)["livemode"] != false {
		t.Fatalf("creates: %d %d", lw.status, tw.status)
	}
	lid, tid := lw.json(t)["id"].(string), tw.json(t)["id"].(string)
	if r := e.do("GET", "/v1/workflows/"+lid, test, ""); r.status != 404 {
		t.Fatalf("test key fetched a live workflow: %d", r.status)
	}
	if r := e.do("GET", "/v1/workflows/"+tid, live, ""); r.status != 404 {
		t.Fatalf("live key fetched a test workflow: %d", r.status)
	}
	for key, want := range map[string]string{test: tid, live: lid} {
		l := e.do("GET", "/v1/workflows", key, "").json(t)["data"].([]any)
		if len(l) != 1 || l[0].(map[string]any)["id"] != want {
			t.Fatalf("list shows the other environment: %v", l)
		}
	}
	// Same idempotency key, two environments: two workflows.
	a := e.create(test, body1, "Idempotency-Key", "same")
	b := e.create(live, body1, "Idempotency-Key", "same")
	if a.json(t)["id"] == b.json(t)["id"] || b.header.Get("Idempotent-Replayed") != "" {
		t.Fatal("an idempotency key crossed environments")
	}
}

func TestIdempotency(t *testing.T) {
	e := newEnv(t, envOptions{})
	key := e.keys.create(t, settleflow.Test, "pro")
	first := e.create(key, body1, "Idempotency-Key", "order-1")
	if first.status != 201 || first.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first: %d %v", first.status, first.header)
	}
	again := e.create(key, body1, "Idempotency-Key", "order-1")
	if again.status != 201 || again.header.Get("Idempotent-Replayed") != "true" || string(again.body) != string(first.body) {
		t.Fatalf("replay: %d %s\nfirst: %s", again.status, again.body, first.body)
	}
	other := e.create(key, `{"product":"ticket-triage","customerId":"cus_123","payload":{"ticketId":"T-43"}}`, "Idempotency-Key", "order-1")
	if other.status != 409 || other.errorObject(t)["code"] != "idempotency_key_reused" || other.errorObject(t)["type"] != "idempotency_error" {
		t.Fatalf("reuse: %d %s", other.status, other.body)
	}
	// 20 concurrent requests with one new key: one workflow.
	var wg sync.WaitGroup
	ids := make([]string, 20)
	for i := range ids {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := e.create(key, body1, "Idempotency-Key", "order-2")
			if r.status != 201 {
				t.Errorf("concurrent create: %d %s", r.status, r.body)
				return
			}
			var m map[string]any
			json.Unmarshal(r.body, &m)
			ids[i], _ = m["id"].(string)
		}(i)
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("one key made several workflows: %v", ids)
		}
	}
	if n := countWorkflows(t, e); n != 2 {
		t.Fatalf("%d workflows, want 2", n)
	}
}

// Pagination over 250 workflows in both directions: no duplicate, no gap.
func TestPagination(t *testing.T) {
	e := newEnv(t, envOptions{})
	key := e.keys.create(t, settleflow.Test, "pro")
	var created []string
	for i := 0; i < 250; i++ {
		r := e.create(key, fmt.Sprintf(`{"product":"ticket-triage","customerId":"cus_%d","payload":{"ticketId":"T-%d"}}`, i%7, i))
		if r.status != 201 {
			t.Fatalf("create %d: %d %s", i, r.status, r.body)
		}
		created = append(created, r.json(t)["id"].(string))
	}
	page := func(q string) ([]string, bool) {
		t.Helper()
		r := e.do("GET", "/v1/workflows?"+q, key, "")
		if r.status != 200 {
			t.Fatalf("list %s: %d %s", q, r.status, r.body)
		}
		var l struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
			HasMore bool `json:"hasMore"`
		}
		json.Unmarshal(r.body, &l)
		var out []string
		for _, d := range l.Data {
			out = append(out, d.ID)
		}
		return out, l.HasMore
	}
	var forward []string
	cursor := ""
	for {
		q := "limit=33"
		if cursor != "" {
			q += "&startingAfter=" + cursor
		}
		ids, more := page(q)
		forward = append(forward, ids...)
		if !more {
			break
		}
		cursor = ids[len(ids)-1]
	}
	if len(forward) != 250 {
		t.Fatalf("forward: %d workflows", len(forward))
	}
	for i, id := range forward {
		if id != created[249-i] {
			t.Fatalf("forward %d: %s, want %s (newest first)", i, id, created[249-i])
		}
	}
	var backward []string
	cursor = created[0]
	for {
		ids, more := page("limit=33&endingBefore=" + cursor)
		backward = append(ids, backward...)
		if !more {
			break
		}
		cursor = ids[0]
	}
	if len(backward) != 249 {
		t.Fatalf("backward: %d workflows, want 249", len(backward))
	}
	for i, id := range backward {
		if id != created[249-i] {
			t.Fatalf("backward %d: %s, want %s", i, id, created[249-i])
		}
	}
	if ids, more := page(""); len(ids) != 10 || !more {
		t.Fatalf("default page: %d, hasMore %v", len(ids), more)
	}
}

// 64 goroutines hammer one key: admitted requests never exceed the limit,
// and the headers stay consistent with what was admitted.
func TestRateLimitUnderConcurrency(t *testing.T) {
	start := time.Now().Unix()
	e := newEnv(t, envOptions{})
	key := e.keys.createLimits(t, settleflow.Test, 100, 100000)
	var admitted, refused atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	// Per window (its reset time): a run that crosses a minute boundary
	// sees each remaining count once in each window.
	seenRemaining := map[[2]int64]bool{}
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 4; i++ {
				r := e.do("GET", "/v1/products", key, "")
				lim, _ := strconv.Atoi(r.header.Get("X-RateLimit-Limit"))
				rem, err := strconv.Atoi(r.header.Get("X-RateLimit-Remaining"))
				reset, _ := strconv.ParseInt(r.header.Get("X-RateLimit-Reset"), 10, 64)
				if lim != 100 || err != nil || rem < 0 || reset < start {
					t.Errorf("headers: limit %q remaining %q reset %q", r.header.Get("X-RateLimit-Limit"), r.header.Get("X-RateLimit-Remaining"), r.header.Get("X-RateLimit-Reset"))
				}
				switch r.status {
				case 200:
					admitted.Add(1)
					mu.Lock()
					if seenRemaining[[2]int64{reset, int64(rem)}] {
						t.Errorf("remaining %d reported twice for admitted requests in the window ending %d", rem, reset)
					}
					seenRemaining[[2]int64{reset, int64(rem)}] = true
					mu.Unlock()
				case 429:
					refused.Add(1)
					if rem != 0 || r.header.Get("Retry-After") == "" || r.errorObject(t)["code"] != "rate_limit_exceeded" {
						t.Errorf("429: remaining %d retry-after %q", rem, r.header.Get("Retry-After"))
					}
				default:
					t.Errorf("status %d", r.status)
				}
			}
		}()
	}
	wg.Wait()
	// 256 requests against 100/minute; a minute boundary during the test
	// could admit up to 100 more, so check against the windows actually seen.
	if admitted.Load() > 200 || admitted.Load() < 100 || admitted.Load()+refused.Load() != 256 {
		t.Fatalf("admitted %d, refused %d", admitted.Load(), refused.Load())
	}
	if admitted.Load() == 100 && len(seenRemaining) != 100 {
		t.Fatalf("remaining values not distinct: %d", len(seenRemaining))
	}
}

// Past the deadline the answer is 504 request_timeout.
func TestRequestTimeout(t *testing.T) {
	slow := authFunc(func(ctx context.Context, h string) (httpapi.Principal, error) {
		<-ctx.Done()
		time.Sleep(10 * time.Millisecond)
		return httpapi.Principal{}, ctx.Err()
	})
	e := newEnv(t, envOptions{timeout: 50 * time.Millisecond, auth: slow})
	r := e.do("GET", "/v1/workflows", "sk_test_x", "")
	if r.status != 504 || r.errorObject(t)["code"] != "request_timeout" || r.errorObject(t)["type"] != "api_error" {
		t.Fatalf("%d %s", r.status, r.body)
	}
}

// An internal failure is a 500 that says nothing of the internals.
func TestInternalErrorLeaksNothing(t *testing.T) {
	broken := authFunc(func(ctx context.Context, h string) (httpapi.Principal, error) {
		return httpapi.Principal{}, errors.New("pq: connection to 10.1.2.3 refused; password=hunter2")
	})
	e := newEnv(t, envOptions{auth: broken})
	r := e.do("GET", "/v1/workflows", "sk_test_x", "")
	if r.status != 500 || r.errorObject(t)["type"] != "api_error" || strings.Contains(string(r.body), "hunter2") || strings.Contains(string(r.body), "10.1.2.3") {
		t.Fatalf("%d %s", r.status, r.body)
	}
}

type authFunc func(ctx context.Context, h string) (httpapi.Principal, error)

func (f authFunc) Authenticate(ctx context.Context, h string) (httpapi.Principal, error) {
	return f(ctx, h)
}

var _ ratelimit.Limiter

// A 401 names its scheme (WWW-Authenticate) and says how to send a key.
func TestUnauthorizedNamesTheScheme(t *testing.T) {
	e := newEnv(t, envOptions{})
	r := e.do("GET", "/v1/workflows", "", "")
	if r.status != 401 || r.header.Get("WWW-Authenticate") != `Bearer realm="settleflow"` {
		t.Fatalf("missing key: %d, WWW-Authenticate %q", r.status, r.header.Get("WWW-Authenticate"))
	}
	if msg := r.errorObject(t)["message"].(string); !strings.Contains(msg, "Authorization: Bearer sk_test_…") {
		t.Fatalf("missing key: message %q", msg)
	}
	if r := e.do("GET", "/v1/workflows", e.keys.create(t, settleflow.Test, "starter"), ""); r.header.Get("WWW-Authenticate") != "" {
		t.Fatalf("WWW-Authenticate on a %d", r.status)
	}
}

// What a client sent comes back in error messages with <, > and & escaped
// (\u003c, \u003e, \u0026), so that no client showing a message as HTML
// runs it; decoded, the message reads as sent.
func TestErrorsEscapeHTML(t *testing.T) {
	e := newEnv(t, envOptions{})
	key := e.keys.create(t, settleflow.Test, "starter")
	for _, c := range []struct{ method, path, body, echo string }{
		{"POST", "/v1/workflows", `{"product":"<img src=x onerror=alert(1)>","customerId":"cus_1","payload":{}}`, "<img src=x onerror=alert(1)>"},
		{"POST", "/v1/quotes", `{"product":"ticket-triage","customerId":"cus_1","payload":{"<b>":1}}`, "<b>"},
		{"GET", "/v1/workflows?%3Cscript%3E=1", "", "<script>"},
		{"GET", "/v1/nope/%3Cscript%3E&amp;", "", "<script>&amp;"},
	} {
		r := e.do(c.method, c.path, key, c.body)
		if r.status < 400 {
			t.Fatalf("%s %s: %d", c.method, c.path, r.status)
		}
		for _, raw := range []string{"<", ">", "&"} {
			if strings.Contains(string(r.body), raw) {
				t.Errorf("%s %s: %q unescaped in %s", c.method, c.path, raw, r.body)
			}
		}
		eo := r.errorObject(t)
		if m, p := eo["message"].(string), eo["param"]; !strings.Contains(m, c.echo) && p != c.echo && p != "payload."+c.echo {
			t.Errorf("%s %s: the decoded error %v does not quote %q", c.method, c.path, eo, c.echo)
		}
	}
}

// Every answer of the API carries X-Content-Type-Options: nosniff: success
// and error, authenticated or not, the OpenAPI document, unknown paths and
// methods, and errors written by WriteError outside the handler.
func TestEveryAnswerIsNosniff(t *testing.T) {
	e := newEnv(t, envOptions{})
	key := e.keys.create(t, settleflow.Test, "starter")
	for _, c := range []struct{ method, path, key, body string }{
		{"GET", "/v1/products", key, ""},
		{"POST", "/v1/workflows", key, body1},
		{"POST", "/v1/workflows", key, `{"product":`},
		{"GET", "/v1/workflows", "", ""},
		{"GET", "/v1/workflows/wf_01JD3Q6Y6F8Q2W9T4M5N7P8R0S", key, ""},
		{"GET", "/v1/customers/cus_1", key, ""},
		{"GET", "/v1/refunds", key, ""},
		{"DELETE", "/v1/workflows", key, ""},
		{"GET", "/v1/nope", key, ""},
		{"GET", "/v1/openapi.json", "", ""},
		{"HEAD", "/v1/products", key, ""},
	} {
		r := e.do(c.method, c.path, c.key, c.body)
		if got := r.header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s %s → %d: X-Content-Type-Options %q", c.method, c.path, r.status, got)
		}
	}
	rec := httptest.NewRecorder()
	httpapi.WriteError(rec, httptest.NewRequest("GET", "/", nil), &httpapi.Error{Status: 308, Type: httpapi.TypeInvalidRequest, Code: wire.CodeHTTPSRequired, Message: "Use HTTPS"})
	if rec.Header().Get("X-Content-Type-Options") != "nosniff" || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("WriteError: %v", rec.Header())
	}
}
