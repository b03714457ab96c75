package httpapi_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	libopenapi "github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/httpapi"
	"github.com/settleflow/settleflow/internal/fundstest"
	"github.com/settleflow/settleflow/ratelimit"
	"github.com/settleflow/settleflow/storage/bunstore"
	"github.com/settleflow/settleflow/storage/sqlite"
)

// idleSettler is never called: these tests do not Start the engine, so
// workflows stay Pending. The full stack, settlement included, runs in the
// reference server's tests.
type idleSettler struct{}

// Configured says yes to both environments: whether live is served is
// these tests' LiveConfigured option.
func (idleSettler) Configured(settleflow.Environment) bool { return true }

func (idleSettler) Submit(context.Context, []settleflow.Charge) error {
	return errors.New("idleSettler: not for use")
}
func (idleSettler) Status(context.Context, []settleflow.Charge) ([]settleflow.SettlementStatus, error) {
	return nil, errors.New("idleSettler: not for use")
}

type ticket struct {
	TicketID    string `json:"ticketId"`
	Attachments int    `json:"attachments"`
}

func (t ticket) Validate() error {
	if t.TicketID == "" {
		return &settleflow.FieldError{Field: "ticketId", Message: "is required"}
	}
	return nil
}

// env is one API under test: a TLS server on loopback, its store and keys,
// and a client whose every response is validated against the OpenAPI
// document the API serves.
type env struct {
	t       *testing.T
	srv     *httptest.Server
	store   *bunstore.Store
	engine  *settleflow.Engine
	keys    *testKeys
	client  *http.Client
	checker *openAPIChecker
}

type envOptions struct {
	live bool
	// funds, when set, is the engine's settler (one that charges customer
	// balances), and the engine is started so that workflows settle;
	// faucet is then Options.TestFaucet (0: off).
	funds   *fundstest.Settler
	faucet  int64
	timeout time.Duration
	auth    httpapi.Authenticator
	limiter ratelimit.Limiter
	logger  *zap.Logger
	// register, when set, registers more products next to ticket-triage.
	register func(t *testing.T, p *settleflow.Products)
	// engine, when set, adjusts the engine's options last.
	engine func(o *settleflow.Options)
}

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "api.db"), sqlite.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	products := settleflow.NewProducts()
	hold := make(chan struct{})
	if err := settleflow.Register(products, settleflow.Product[ticket]{
		Name: "ticket-triage", Description: "Triage.", PricingSummary: "2.00 USD per ticket",
		Price:    settleflow.Price{TargetMargin: 3000, MinimumCharge: 50},
		Estimate: func(t ticket) (int64, error) { return 200 + 50*int64(t.Attachments), nil },
		// Only an env with funds starts its engine and executes. Ticket
		// "T-hold" runs until the test ends: its workflow stays Running.
		Execute: func(ctx context.Context, t ticket) (settleflow.Execution, error) {
			if t.TicketID == "T-hold" {
				select {
				case <-hold:
				case <-ctx.Done():
				}
				return settleflow.Execution{}, errors.New("held until the test ended")
			}
			return settleflow.Execution{ActualCost: 150, Result: map[string]any{"queue": "billing"}}, nil
		},
	}); err != nil {
		t.Fatal(err)
	}
	if o.register != nil {
		o.register(t, products)
	}
	eo := settleflow.Options{Store: store, Settler: idleSettler{}, Products: products,
		Notifier: settleflow.NotifierFunc(func(context.Context, []settleflow.Event) error { return nil })}
	if o.funds != nil {
		eo.Settler = o.funds
		eo.PollInterval, eo.SettlementPollInterval, eo.FundsPollInterval = 10*time.Millisecond, 10*time.Millisecond, 10*time.Millisecond
		eo.TestFaucet, eo.FaucetWait = o.faucet, 10*time.Second
		if o.faucet == 0 {
			eo.TestFaucet = -1
		}
	}
	if o.engine != nil {
		o.engine(&eo)
	}
	engine, err := settleflow.New(eo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engine.Stop(context.Background()) })
	t.Cleanup(func() { close(hold) })
	if o.funds != nil {
		if err := engine.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	keys := newTestKeys(t, store)
	auth := o.auth
	if auth == nil {
		auth = keys.authenticator()
	}
	limiter := o.limiter
	if limiter == nil {
		limiter = ratelimit.NewMemory()
	}
	h, err := httpapi.New(httpapi.Options{Engine: engine, Keys: auth, Limiter: limiter,
		LiveConfigured: func() bool { return o.live }, RequestTimeout: o.timeout, Logger: o.logger})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", h)
	srv := httptest.NewUnstartedServer(mux)
	srv.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	e := &env{t: t, srv: srv, store: store, engine: engine, keys: keys, checker: newOpenAPIChecker(t)}
	e.client = srv.Client()
	return e
}

// response is a decoded answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, r.body)
	}
	return m
}

func (r response) errorObject(t *testing.T) map[string]any {
	t.Helper()
	e, ok := r.json(t)["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error object in %s", r.body)
	}
	return e
}

// do sends a request; header pairs are name, value.
func (e *env) do(method, path, key string, body string, header ...string) response {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] == "" {
			req.Header.Del(header[i])
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	var sent []byte
	if body != "" {
		sent = []byte(body)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	e.checker.check(e.t, req, sent, resp, b)
	if resp.Header.Get("Request-Id") == "" {
		e.t.Fatalf("%s %s: no Request-Id header", method, path)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

func (e *env) create(key, body string, header ...string) response {
	e.t.Helper()
	return e.do("POST", "/v1/workflows", key, body, header...)
}

// openAPIChecker validates every request and response against the OpenAPI
// document the API serves, with libopenapi-validator.
type openAPIChecker struct {
	mu sync.Mutex
	v  validator.Validator
	n  int
}

func newOpenAPIChecker(t *testing.T) *openAPIChecker {
	doc, err := libopenapi.NewDocument(httpapi.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("OpenAPI document: %v", errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		for _, ve := range verrs {
			t.Errorf("OpenAPI document invalid: %s: %s", ve.Message, ve.Reason)
		}
		t.FailNow()
	}
	return &openAPIChecker{v: v}
}

// check validates one exchange. Requests the API must refuse (bad bodies,
// unknown paths) are not valid by the document, so only the response is
// checked against it.
func (c *openAPIChecker) check(t *testing.T, req *http.Request, sent []byte, resp *http.Response, body []byte) {
	t.Helper()
	if resp.StatusCode == http.StatusNotFound && !strings.HasPrefix(req.URL.Path, "/v1/workflows/") {
		return // an unknown path has no operation in the document to check against
	}
	if resp.StatusCode == http.StatusMethodNotAllowed {
		return
	}
	r2 := req.Clone(context.Background())
	if sent != nil {
		r2.Body = io.NopCloser(bytes.NewReader(sent))
	}
	resp2 := *resp
	resp2.Body = io.NopCloser(bytes.NewReader(body))
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	if ok, errs := c.v.ValidateHttpResponse(r2, &resp2); !ok {
		var msgs []string
		for _, e := range errs {
			msg := e.Message + ": " + e.Reason
			for _, se := range e.SchemaValidationErrors {
				msg += " [" + se.FieldPath + ": " + se.Reason + "]"
			}
			msgs = append(msgs, msg)
		}
		t.Fatalf("%s %s → %d does not match the OpenAPI document:\n%s\nbody: %s", req.Method, req.URL.Path, resp.StatusCode, strings.Join(msgs, "\n"), body)
	}
}

// The request log names the key that authenticated the request, and never
// its secret.
func TestRequestLogNamesKey(t *testing.T) {
	core, logs := observer.New(zap.InfoLevel)
	e := newEnv(t, envOptions{logger: zap.New(core)})
	secret := e.keys.create(t, settleflow.Test, "starter")
	if r := e.do("GET", "/v1/products", secret, ""); r.status != 200 {
		t.Fatalf("products: %d", r.status)
	}
	entries := logs.FilterMessage("request").All()
	if len(entries) != 1 {
		t.Fatalf("%d request log lines, want 1", len(entries))
	}
	fields := entries[0].ContextMap()
	if id, _ := fields["key_id"].(string); !strings.HasPrefix(id, "key_") {
		t.Fatalf("key_id = %q, want the key's id; fields %v", fields["key_id"], fields)
	}
	for k, v := range fields {
		if s, ok := v.(string); ok && strings.Contains(s, secret) {
			t.Fatalf("log field %s holds the secret", k)
		}
	}
}
