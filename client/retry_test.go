package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/client"
	"github.com/settleflow/settleflow/wire"
)

// fast makes retries wait milliseconds, for tests of what is retried.
var fast = client.WithBackoff(time.Millisecond, 5*time.Millisecond, time.Minute)

// onlyWorkflow checks that customer has exactly one workflow, id.
func onlyWorkflow(t *testing.T, customer, id string) {
	t.Helper()
	page, err := newClient(t).Workflows.List(context.Background(), &client.WorkflowListParams{CustomerID: customer})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 || page.Data[0].ID != id {
		var ids []string
		for _, w := range page.Data {
			ids = append(ids, w.ID)
		}
		t.Fatalf("customer %s has workflows %v, want exactly %s", customer, ids, id)
	}
}

// sameKey checks that the requests carried one generated Idempotency-Key.
func sameKey(t *testing.T, reqs []seenRequest) {
	t.Helper()
	key := reqs[0].idempotencyKey
	if !strings.HasPrefix(key, "sfgo_") || len(key) < 25 {
		t.Fatalf("generated Idempotency-Key %q", key)
	}
	for _, r := range reqs {
		if r.idempotencyKey != key {
			t.Fatalf("Idempotency-Key %q, then %q", key, r.idempotencyKey)
		}
	}
}

func TestRetry429ThenSuccess(t *testing.T) {
	t.Parallel()
	p := newProxy(t, func(p *proxy, n int, w http.ResponseWriter, r *http.Request, body []byte) {
		if n == 0 {
			answer(w, http.StatusTooManyRequests, "rate_limit_error", "rate_limit_exceeded", "Retry-After", "1")
			return
		}
		p.forward(n, w, r, body)
	})
	customer := uniqueCustomer(t)
	start := time.Now()
	wf, err := p.client().Workflows.Create(context.Background(), ticketParams(customer))
	if err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < time.Second {
		t.Fatalf("retried after %v; Retry-After said 1 s", waited)
	}
	reqs := p.requests()
	if len(reqs) != 2 || reqs[1].status != http.StatusCreated {
		t.Fatalf("requests %+v", reqs)
	}
	sameKey(t, reqs)
	onlyWorkflow(t, customer, wf.ID)
}

func TestRetry429WithoutRetryAfterWaitsForReset(t *testing.T) {
	t.Parallel()
	var reset time.Time
	p := newProxy(t, func(p *proxy, n int, w http.ResponseWriter, r *http.Request, body []byte) {
		if n == 0 {
			reset = time.Now().Truncate(time.Second).Add(2 * time.Second)
			answer(w, http.StatusTooManyRequests, "rate_limit_error", "rate_limit_exceeded",
				"X-RateLimit-Limit", "2", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
			return
		}
		p.forward(n, w, r, body)
	})
	if _, err := p.client().Products.List(context.Background()); err != nil {
		t.Fatal(err)
	}
	reqs := p.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if now := time.Now(); now.Before(reset) {
		t.Fatalf("retried %v before X-RateLimit-Reset", reset.Sub(now))
	}
	if reqs[0].idempotencyKey != "" {
		t.Fatalf("a GET carried Idempotency-Key %q", reqs[0].idempotencyKey)
	}
}

func TestRetry5xxAndConnectionErrors(t *testing.T) {
	t.Parallel()
	// 503, a dropped connection, 500, then the answer.
	p := newProxy(t, func(p *proxy, n int, w http.ResponseWriter, r *http.Request, body []byte) {
		switch n {
		case 0:
			answer(w, http.StatusServiceUnavailable, "api_error", "service_unavailable")
		case 1:
			drop(w)
		case 2:
			answer(w, http.StatusBadGateway, "", "")
		default:
			p.forward(n, w, r, body)
		}
	})
	customer := uniqueCustomer(t)
	wf, err := p.client(fast, client.WithMaxRetries(3)).Workflows.Create(context.Background(), ticketParams(customer))
	if err != nil {
		t.Fatal(err)
	}
	reqs := p.requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	sameKey(t, reqs)
	onlyWorkflow(t, customer, wf.ID)
}

func TestRetriesAreBounded(t *testing.T) {
	t.Parallel()
	p := newProxy(t, func(p *proxy, n int, w http.ResponseWriter, r *http.Request, body []byte) {
		answer(w, http.StatusInternalServerError, "api_error", "internal_error")
	})
	for _, tc := range []struct {
		opts []client.Option
		want int
	}{
		{[]client.Option{fast}, 1 + client.DefaultMaxRetries},
		{[]client.Option{fast, client.WithMaxRetries(0)}, 1},
		{[]client.Option{fast, client.WithMaxRetries(4)}, 5},
	} {
		before := len(p.requests())
		_, err := p.client(tc.opts...).Workflows.Fetch(context.Background(), "wf_01KAQ0Q2ZZ8X7C6V5B4N3M2K1J")
		var se *client.ServerError
		if !errors.As(err, &se) || se.Status != 500 || se.Code != wire.CodeInternalError || se.RequestID != "req_PROXY" {
			t.Fatalf("error %v", err)
		}
		if n := len(p.requests()) - before; n != tc.want {
			t.Fatalf("%d requests, want %d", n, tc.want)
		}
	}
}

func TestClientErrorsAreNotRetried(t *testing.T) {
	t.Parallel()
	p := newProxy(t, func(p *proxy, n int, w http.ResponseWriter, r *http.Request, body []byte) { p.forward(n, w, r, body) })
	c := p.client(fast)
	_, err := c.Workflows.Create(context.Background(), &client.WorkflowCreateParams{Product: "ticket-triage", Payload: map[string]any{}})
	var inv *client.InvalidRequestError
	if !errors.As(err, &inv) || inv.Status != 400 {
		t.Fatalf("error %v", err)
	}
	_, err = c.Workflows.Fetch(context.Background(), "wf_01KAQ0Q2ZZ8X7C6V5B4N3M2K1J")
	if !errors.As(err, &inv) || inv.Status != 404 {
		t.Fatalf("error %v", err)
	}
	if n := len(p.requests()); n != 2 {
		t.Fatalf("%d requests for two 4xx", n)
	}
}

// TestCreateDroppedAfterCommit: the proxy forwards the create, the server
// commits it and answers, and the proxy closes the connection instead of
// passing the answer on. The client retries with the same Idempotency-Key and
// gets the same workflow: one create, one workflow.
func TestCreateDroppedAfterCommit(t *testing.T) {
	t.Parallel()
	p := newProxy(t, func(p *proxy, n int, w http.ResponseWriter, r *http.Request, body []byte) {
		if n == 0 {
			if _, _, err := p.roundTrip(n, r, body); err != nil {
				panic(err)
			}
			drop(w)
			return
		}
		p.forward(n, w, r, body)
	})
	customer := uniqueCustomer(t)
	wf, err := p.client().Workflows.Create(context.Background(), ticketParams(customer))
	if err != nil {
		t.Fatal(err)
	}
	reqs := p.requests()
	if len(reqs) != 2 || reqs[0].status != http.StatusCreated || reqs[1].status != http.StatusCreated || reqs[1].replayed != "true" {
		t.Fatalf("requests %+v", reqs)
	}
	sameKey(t, reqs)
	var first settleflow.Workflow
	if err := json.Unmarshal(reqs[0].answer, &first); err != nil || first.ID != wf.ID {
		t.Fatalf("the lost answer was %s (%v); the client got %s", reqs[0].answer, err, wf.ID)
	}
	onlyWorkflow(t, customer, wf.ID)
}

// TestCancelDroppedAfterCommit: a cancel whose answer is lost is retried;
// the retry finds the workflow Canceled, and Cancel returns it rather than
// the workflow_canceled error.
func TestCancelDroppedAfterCommit(t *testing.T) {
	t.Parallel()
	p := newProxy(t, func(p *proxy, n int, w http.ResponseWriter, r *http.Request, body []byte) {
		if strings.HasSuffix(r.URL.Path, "/cancel") {
			resp, answer, err := p.roundTrip(n, r, body)
			if err != nil {
				panic(err)
			}
			if resp.StatusCode == http.StatusOK {
				drop(w) // the cancel happened; its answer is lost
				return
			}
			w.WriteHeader(resp.StatusCode)
			w.Write(answer)
			return
		}
		p.forward(n, w, r, body)
	})
	c := p.client(fast)
	ids := backlog(t, newClient(t), uniqueCustomer(t), 8)
	for i := len(ids) - 1; i >= 0; i-- {
		before := len(p.requests())
		wf, err := c.Workflows.Cancel(context.Background(), ids[i])
		reqs := p.requests()[before:]
		if reqs[0].status != http.StatusOK {
			continue // lost the race to a worker; try an older one
		}
		if err != nil || wf.ID != ids[i] || wf.Status != settleflow.Canceled {
			t.Fatalf("cancel after a lost answer: %+v, %v (requests %+v)", wf, err, reqs)
		}
		if len(reqs) < 2 || reqs[1].status != http.StatusConflict {
			t.Fatalf("requests %+v", reqs)
		}
		return
	}
	t.Fatal("no cancel of a backlog of 8 won the race")
}

func TestRetryWaitsNoLongerThanAllowed(t *testing.T) {
	t.Parallel()
	p := newProxy(t, func(p *proxy, n int, w http.ResponseWriter, r *http.Request, body []byte) {
		answer(w, http.StatusTooManyRequests, "rate_limit_error", "rate_limit_exceeded", "Retry-After", "3600")
	})
	// A Retry-After over the client's maximum wait is answered at once.
	start := time.Now()
	_, err := p.client().Products.List(context.Background())
	var rl *client.RateLimitError
	if !errors.As(err, &rl) || rl.RetryAfter != time.Hour || len(p.requests()) != 1 || time.Since(start) > time.Second {
		t.Fatalf("error %v after %d requests, %v", err, len(p.requests()), time.Since(start))
	}

	// A wait the context's deadline does not leave room for is not begun.
	p2 := newProxy(t, func(p *proxy, n int, w http.ResponseWriter, r *http.Request, body []byte) {
		answer(w, http.StatusServiceUnavailable, "api_error", "service_unavailable", "Retry-After", "20")
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start = time.Now()
	_, err = p2.client().Products.List(ctx)
	var se *client.ServerError
	if !errors.As(err, &se) || len(p2.requests()) != 1 || time.Since(start) > time.Second {
		t.Fatalf("error %v after %d requests, %v", err, len(p2.requests()), time.Since(start))
	}
}

func TestContextCanceledDuringBackoff(t *testing.T) {
	t.Parallel()
	p := newProxy(t, func(p *proxy, n int, w http.ResponseWriter, r *http.Request, body []byte) {
		answer(w, http.StatusServiceUnavailable, "api_error", "service_unavailable", "Retry-After", "30")
	})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, err := p.client().Workflows.Create(ctx, ticketParams(uniqueCustomer(t)))
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Fatalf("returned %v after the cancel", elapsed)
	}
	var se *client.ServerError
	if !errors.Is(err, context.Canceled) || !errors.As(err, &se) || len(p.requests()) != 1 {
		t.Fatalf("error %v, %d requests", err, len(p.requests()))
	}
}

func TestPerRequestTimeout(t *testing.T) {
	t.Parallel()
	// The first attempt hangs; the client gives up on it after its timeout
	// and the retry (same Idempotency-Key) goes through.
	p := newProxy(t, func(p *proxy, n int, w http.ResponseWriter, r *http.Request, body []byte) {
		if n == 0 {
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
			return
		}
		p.forward(n, w, r, body)
	})
	customer := uniqueCustomer(t)
	start := time.Now()
	wf, err := p.client(fast, client.WithTimeout(time.Second)).Workflows.Create(context.Background(), ticketParams(customer))
	if err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Fatalf("took %v", elapsed)
	}
	sameKey(t, p.requests())
	onlyWorkflow(t, customer, wf.ID)

	// Without retries, the timeout is a ConnectionError that says so.
	hang := newProxy(t, func(p *proxy, n int, w http.ResponseWriter, r *http.Request, body []byte) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	_, err = hang.client(client.WithTimeout(200*time.Millisecond), client.WithMaxRetries(0)).Products.List(context.Background())
	var ce *client.ConnectionError
	if !errors.As(err, &ce) || !ce.Timeout() || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v", err)
	}
}

func TestConnectionRefused(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var log strings.Builder
	c := client.New(ref.key, client.WithBaseURL("http://"+addr), fast, client.WithLogger(newTextLogger(&log)))
	_, err = c.Workflows.Create(context.Background(), ticketParams("cus_refused"))
	var ce *client.ConnectionError
	if !errors.As(err, &ce) || ce.Method != "POST" || ce.Path != "/v1/workflows" || ce.Timeout() {
		t.Fatalf("error %v", err)
	}
	if n := strings.Count(log.String(), "settleflow: retrying"); n != client.DefaultMaxRetries {
		t.Fatalf("%d retries logged:\n%s", n, log.String())
	}
}

func TestCertificateErrorsAreNotRetried(t *testing.T) {
	t.Parallel()
	var log strings.Builder
	// No WithRootCAs: the self-signed certificate is refused.
	c := client.New(ref.key, client.WithBaseURL(ref.baseURL), client.WithLogger(newTextLogger(&log)))
	_, err := c.Products.List(context.Background())
	var ce *client.ConnectionError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("error %v", err)
	}
	if log.Len() != 0 {
		t.Fatalf("retried:\n%s", log.String())
	}
}

func TestHeaders(t *testing.T) {
	t.Parallel()
	p := newProxy(t, func(p *proxy, n int, w http.ResponseWriter, r *http.Request, body []byte) { p.forward(n, w, r, body) })
	customer := uniqueCustomer(t)
	params := ticketParams(customer)
	params.IdempotencyKey = "order-" + customer
	c := p.client(client.WithUserAgent("suite/1.0"))
	first, err := c.Workflows.Create(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Workflows.Create(context.Background(), params)
	if err != nil || again.ID != first.ID {
		t.Fatalf("the same key answered %v, %v; first %s", again, err, first.ID)
	}
	reqs := p.requests()
	want := regexp.MustCompile(`^settleflow-go/` + regexp.QuoteMeta(client.Version) + ` go/` + regexp.QuoteMeta(runtime.Version()) + ` suite/1\.0$`)
	for _, r := range reqs {
		if r.idempotencyKey != params.IdempotencyKey || !want.MatchString(r.userAgent) || r.authorization != "Bearer "+ref.key {
			t.Fatalf("request %+v", r)
		}
	}
	if reqs[1].replayed != "true" {
		t.Fatalf("second create not replayed: %+v", reqs[1])
	}
	onlyWorkflow(t, customer, first.ID)
}

func TestRedirectsAreNotFollowed(t *testing.T) {
	t.Parallel()
	// As the plain-HTTP listener answers: 308 to HTTPS, with the envelope.
	p := newProxy(t, func(p *proxy, n int, w http.ResponseWriter, r *http.Request, body []byte) {
		answer(w, http.StatusPermanentRedirect, "invalid_request_error", "https_required", "Location", p.srv.URL+"/elsewhere"+r.URL.Path)
	})
	_, err := p.client().Workflows.Create(context.Background(), ticketParams("cus_redirect"))
	var inv *client.InvalidRequestError
	if !errors.As(err, &inv) || inv.Status != http.StatusPermanentRedirect || inv.Code != "https_required" {
		t.Fatalf("error %v", err)
	}
	if reqs := p.requests(); len(reqs) != 1 {
		t.Fatalf("requests %v", reqs)
	}
}

func TestBadKeysAreRefusedBeforeSending(t *testing.T) {
	t.Parallel()
	p := newProxy(t, func(p *proxy, n int, w http.ResponseWriter, r *http.Request, body []byte) { p.forward(n, w, r, body) })
	for i, key := range []string{"", ref.key + "\n", " " + ref.key, ref.key + "\u00a0"} {
		_, err := client.New(key, client.WithBaseURL(p.srv.URL)).Products.List(context.Background())
		var apiErr *client.APIError
		var ce *client.ConnectionError
		if err == nil || errors.As(err, &apiErr) || errors.As(err, &ce) || !strings.Contains(err.Error(), "API key") {
			t.Errorf("bad key %d: %v", i, err)
		}
	}
	if reqs := p.requests(); len(reqs) != 0 {
		t.Fatalf("requests %v", reqs)
	}
}

func TestPathsAreEscaped(t *testing.T) {
	t.Parallel()
	p := newProxy(t, func(p *proxy, n int, w http.ResponseWriter, r *http.Request, body []byte) {
		answer(w, http.StatusNotFound, "invalid_request_error", "resource_missing")
	})
	c := p.client()
	ctx := context.Background()
	c.Workflows.Fetch(ctx, "wf_1/cancel?x=1")
	c.Workflows.Cancel(ctx, "../../v1/quotes")
	c.Products.Fetch(ctx, "a b#c")
	c.Events.Fetch(ctx, "evt_%2F")
	c.Workflows.List(ctx, &client.WorkflowListParams{CustomerID: "cus_a&limit=1", Status: "Settled"})
	var got []string
	for _, r := range p.requests() {
		got = append(got, r.method+" "+r.escapedPath+"?"+r.query)
	}
	want := []string{
		"GET /v1/workflows/wf_1%2Fcancel%3Fx=1?",
		"POST /v1/workflows/..%2F..%2Fv1%2Fquotes/cancel?",
		"GET /v1/products/a%20b%23c?",
		"GET /v1/events/evt_%252F?",
		"GET /v1/workflows?customerId=cus_a%26limit%3D1&status=Settled",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A base URL with a path keeps it.
	before := len(p.requests())
	client.New(ref.key, client.WithBaseURL(p.srv.URL+"/api/")).Products.List(ctx)
	if r := p.requests()[before]; r.escapedPath != "/api/v1/products" {
		t.Fatalf("with a base path: %s", r.escapedPath)
	}
	want = append(want, "GET /api/v1/products?")
	// An empty id is refused before sending.
	if _, err := c.Workflows.Fetch(ctx, ""); err == nil || len(p.requests()) != len(want) {
		t.Fatalf("empty id: %v", err)
	}
}
