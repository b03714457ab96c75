package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/client"
	"github.com/settleflow/settleflow/criteria"
)

// Outcome pricing on the wire, against a scripted server: what the client
// sends for successCriteria and marginFloor on a create and a quote, and
// what it reads of pricing, successCriteria, marginFloor, charged, cost,
// outcome and budget in the answers. TestOutcomePricing (outcome_e2e_test.go)
// runs the same against the reference server.

const (
	outcomeCriteria = `{"type":"all_of","criteria":[{"type":"exact","path":"/status","value":"resolved"},{"type":"numeric_threshold","path":"/confidence","op":">=","value":0.8}]}`

	outcomeWorkflowJSON = `{"id":"wf_01JD3Q6Y6F8Q2W9T4M5N7P8R0S","object":"workflow","livemode":false,"product":"ticket-resolution",` +
		`"customerId":"cus_1","payload":{"ticketId":"T-42"},"quoted":{"amount":400,"currency":"usd"},` +
		`"pricing":{"model":"success_fee"},"successCriteria":` + outcomeCriteria + `,"marginFloor":0.25,` +
		`"margin":{"target":0.3,"achieved":0.2875},"status":"Settled","result":{"status":"resolved","confidence":0.9},` +
		`"settlement":null,"failure":null,"charged":{"amount":400,"currency":"usd"},` +
		`"cost":{"amount":285,"currency":"usd","items":[{"category":"model","provider":"openai","units":12000,"amount":240},` +
		`{"category":"human","provider":"reviewer","units":1,"amount":45}]},` +
		`"outcome":{"success":true,"trace":[{"node":"","path":"","type":"all_of","matched":true,"reason":"2 of 2 criteria matched"},` +
		`{"node":"criteria[0]","path":"/status","type":"exact","matched":true,"reason":"status is \"resolved\""},` +
		`{"node":"criteria[1]","path":"/confidence","type":"numeric_threshold","matched":true,"reason":"confidence 0.9 >= 0.8"}]},` +
		`"refunded":{"amount":0,"currency":"usd"},"createdAt":"2026-11-25T10:00:00Z","updatedAt":"2026-11-25T10:00:01Z"}`

	outcomeQuoteJSON = `{"object":"quote","livemode":false,"product":"ticket-resolution","customerId":"cus_1","payload":{"ticketId":"T-42"},` +
		`"quoted":{"amount":400,"currency":"usd"},"pricing":{"model":"capped","markup":0.2,"minimumCharge":{"amount":50,"currency":"usd"}},` +
		`"successCriteria":` + outcomeCriteria + `,"marginFloor":0.25,"budget":{"amount":300,"currency":"usd"},"margin":{"target":0.3}}`

	outcomeProductJSON = `{"object":"product","name":"ticket-resolution","description":"d","targetMargin":0.3,` +
		`"minimumCharge":{"amount":50,"currency":"usd"},"pricingSummary":"s","pricing":{"model":"hybrid","baseShare":0.3},` +
		`"successCriteria":` + outcomeCriteria + `,"marginFloor":0.2,"payloadSchema":{"type":"object"},"example":null}`

	outcomeEventJSON = `{"id":"evt_01JD3Q6Y6F8Q2W9T4M5N7P8R0S","object":"event","type":"workflow.margin_below_floor","livemode":false,` +
		`"createdAt":"2026-11-25T10:00:01Z","data":{"workflowId":"wf_01JD3Q6Y6F8Q2W9T4M5N7P8R0S","status":"Settling",` +
		`"quoted":{"amount":400,"currency":"usd"},"margin":{"target":0.3,"achieved":0.1},"pricing":{"model":"fixed"},` +
		`"charged":{"amount":400,"currency":"usd"},"cost":{"amount":360,"currency":"usd","items":[]},` +
		`"outcome":{"success":false,"trace":[{"node":"","path":"/status","type":"exact","matched":false,"reason":"status is missing"}]}}}`
)

// scripted is a server that records the bodies it is sent and answers each
// path with a canned body.
type scripted struct {
	srv    *httptest.Server
	mu     sync.Mutex
	bodies map[string][]string // by "METHOD /path"
}

func newScripted(t *testing.T, answers map[string]string) *scripted {
	t.Helper()
	s := &scripted{bodies: map[string][]string{}}
	s.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		route := r.Method + " " + r.URL.Path
		s.mu.Lock()
		s.bodies[route] = append(s.bodies[route], string(b))
		s.mu.Unlock()
		if strings.Contains(string(b), `"marginFloor":0.9`) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			io.WriteString(w, `{"error":{"type":"invalid_request_error","code":"margin_below_floor","param":"marginFloor",`+
				`"message":"the quote of 400 on an estimated cost of 280 keeps a margin of 0.3, below the margin floor of 0.9","requestId":"req_1"}}`)
			return
		}
		body, ok := answers[route]
		if !ok {
			answer(w, 404, "invalid_request_error", "resource_missing")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost {
			w.WriteHeader(201)
		}
		io.WriteString(w, body)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *scripted) client() *client.Client {
	return client.New("sk_test_"+"0123456789abcdefghijABCDEFGHIJ0123456789", client.WithBaseURL(s.srv.URL),
		client.WithHTTPClient(s.srv.Client()), client.WithBackoff(time.Millisecond, time.Millisecond, time.Second))
}

func (s *scripted) sent(route string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bodies[route]...)
}

func bp(b settleflow.BasisPoints) *settleflow.BasisPoints { return &b }

func TestOutcomeParamsOnTheWire(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newScripted(t, map[string]string{
		"POST /v1/workflows": outcomeWorkflowJSON,
		"POST /v1/quotes":    outcomeQuoteJSON,
	})
	c := s.client()
	payload := map[string]string{"ticketId": "T-42"}
	parsed := criteria.MustParse(outcomeCriteria)
	var asMap map[string]any
	if err := json.Unmarshal([]byte(outcomeCriteria), &asMap); err != nil {
		t.Fatal(err)
	}
	// The three ways to give a tree send the same JSON; MarginFloor is a
	// ratio on the wire; neither is sent when nil.
	for _, sc := range []any{json.RawMessage(outcomeCriteria), parsed, asMap} {
		if _, err := c.Workflows.Create(ctx, &client.WorkflowCreateParams{Product: "ticket-resolution", CustomerID: "cus_1", Payload: payload,
			SuccessCriteria: sc, MarginFloor: bp(2500)}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Quotes.Create(ctx, &client.QuoteCreateParams{Product: "ticket-resolution", CustomerID: "cus_1", Payload: payload,
			SuccessCriteria: sc, MarginFloor: bp(2500)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Workflows.Create(ctx, &client.WorkflowCreateParams{Product: "ticket-resolution", CustomerID: "cus_1", Payload: payload}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Quotes.Create(ctx, &client.QuoteCreateParams{Product: "ticket-resolution", CustomerID: "cus_1", Payload: payload,
		MarginFloor: bp(1234)}); err != nil {
		t.Fatal(err)
	}
	with := func(sc string) string {
		return `{"product":"ticket-resolution","customerId":"cus_1","payload":{"ticketId":"T-42"},"successCriteria":` + sc + `,"marginFloor":0.25}`
	}
	plain := `{"product":"ticket-resolution","customerId":"cus_1","payload":{"ticketId":"T-42"}}`
	for route, want := range map[string][]string{
		"POST /v1/workflows": {with(outcomeCriteria), with(outcomeCriteria), with(outcomeCriteria), plain},
		"POST /v1/quotes": {with(outcomeCriteria), with(outcomeCriteria), with(outcomeCriteria),
			`{"product":"ticket-resolution","customerId":"cus_1","payload":{"ticketId":"T-42"},"marginFloor":0.1234}`},
	} {
		got := s.sent(route)
		if len(got) != len(want) {
			t.Fatalf("%s: sent %d bodies, want %d: %q", route, len(got), len(want), got)
		}
		for i := range want {
			if !sameJSON(t, got[i], want[i]) {
				t.Errorf("%s #%d:\n sent %s\n want %s", route, i, got[i], want[i])
			}
		}
	}

	// A floor the quote does not keep: margin_below_floor, naming marginFloor.
	_, err := c.Quotes.Create(ctx, &client.QuoteCreateParams{Product: "ticket-resolution", CustomerID: "cus_1", Payload: payload, MarginFloor: bp(9000)})
	var inv *client.InvalidRequestError
	if !errors.As(err, &inv) || inv.Status != 400 || inv.Code != settleflow.CodeMarginBelowFloor || inv.Param != "marginFloor" {
		t.Fatalf("floor above the quote's margin: %v", err)
	}
}

func TestOutcomeFieldsParse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newScripted(t, map[string]string{
		"GET /v1/workflows/wf_01JD3Q6Y6F8Q2W9T4M5N7P8R0S": outcomeWorkflowJSON,
		"POST /v1/quotes":                                  outcomeQuoteJSON,
		"GET /v1/products/ticket-resolution":               outcomeProductJSON,
		"GET /v1/events/evt_01JD3Q6Y6F8Q2W9T4M5N7P8R0S":    outcomeEventJSON,
		"GET /v1/workflows":                                `{"object":"list","url":"/v1/workflows","hasMore":false,"data":[` + outcomeWorkflowJSON + `]}`,
		"GET /v1/products":                                 `{"object":"list","url":"/v1/products","hasMore":false,"data":[` + outcomeProductJSON + `]}`,
		"POST /v1/workflows/wf_01JD3Q6Y6F8Q2W9T4M5N7P8R0S": outcomeWorkflowJSON,
	})
	c := s.client()

	wf, err := c.Workflows.Fetch(ctx, "wf_01JD3Q6Y6F8Q2W9T4M5N7P8R0S")
	if err != nil {
		t.Fatal(err)
	}
	checkOutcomeWorkflow(t, wf)
	page, err := c.Workflows.List(ctx, nil)
	if err != nil || len(page.Data) != 1 {
		t.Fatalf("list: %+v %v", page, err)
	}
	checkOutcomeWorkflow(t, page.Data[0])

	q, err := c.Quotes.Create(ctx, &client.QuoteCreateParams{Product: "ticket-resolution", CustomerID: "cus_1", Payload: map[string]string{"ticketId": "T-42"}})
	if err != nil {
		t.Fatal(err)
	}
	if q.Pricing.Model != settleflow.PricingCapped || q.Pricing.Markup == nil || *q.Pricing.Markup != 2000 ||
		q.Pricing.MinimumCharge == nil || *q.Pricing.MinimumCharge != (settleflow.Money{Amount: 50, Currency: "usd"}) || q.Pricing.BaseShare != nil {
		t.Errorf("quote pricing %+v", q.Pricing)
	}
	if string(q.SuccessCriteria) != outcomeCriteria || q.MarginFloor == nil || *q.MarginFloor != 2500 ||
		q.Budget == nil || *q.Budget != (settleflow.Money{Amount: 300, Currency: "usd"}) || q.Quoted.Amount != 400 || q.Margin.Target != 3000 {
		t.Errorf("quote %+v criteria %s", q, q.SuccessCriteria)
	}
	// Without criteria nor floor: null on the wire, nil here.
	var bare client.Quote
	if err := json.Unmarshal([]byte(`{"object":"quote","pricing":{"model":"fixed"},"successCriteria":null,"marginFloor":null,"budget":null}`), &bare); err != nil {
		t.Fatal(err)
	}
	if string(bare.SuccessCriteria) != "null" || bare.MarginFloor != nil || bare.Budget != nil || bare.Pricing.Model != settleflow.PricingFixed {
		t.Errorf("bare quote %+v criteria %q", bare, bare.SuccessCriteria)
	}

	p, err := c.Products.Fetch(ctx, "ticket-resolution")
	if err != nil {
		t.Fatal(err)
	}
	if p.Pricing.Model != settleflow.PricingHybrid || p.Pricing.BaseShare == nil || *p.Pricing.BaseShare != 3000 ||
		string(p.SuccessCriteria) != outcomeCriteria || p.MarginFloor == nil || *p.MarginFloor != 2000 {
		t.Errorf("product %+v", p)
	}
	products, err := c.Products.List(ctx)
	if err != nil || len(products.Data) != 1 || products.Data[0].Pricing.Model != settleflow.PricingHybrid {
		t.Fatalf("products %+v %v", products, err)
	}

	ev, err := c.Events.Fetch(ctx, "evt_01JD3Q6Y6F8Q2W9T4M5N7P8R0S")
	if err != nil {
		t.Fatal(err)
	}
	d := ev.Data
	if ev.Type != settleflow.EventWorkflowMarginBelowFloor || !ev.Type.Valid() || d.Pricing == nil || d.Pricing.Model != settleflow.PricingFixed ||
		d.Charged == nil || d.Charged.Amount != 400 || d.Cost == nil || d.Cost.Amount != 360 || d.Cost.Items == nil || len(d.Cost.Items) != 0 ||
		d.Outcome == nil || d.Outcome.Success || len(d.Outcome.Trace) != 1 || d.Outcome.Trace[0].Reason != "status is missing" {
		t.Errorf("event %+v data %+v", ev, d)
	}
}

// sameJSON reports whether a and b are the same JSON value (numbers
// compared as written: 0.25 is not 0.250).
func sameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	decode := func(s string) any {
		d := json.NewDecoder(strings.NewReader(s))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		return v
	}
	return reflect.DeepEqual(decode(a), decode(b))
}

// checkOutcomeWorkflow checks wf is outcomeWorkflowJSON.
func checkOutcomeWorkflow(t *testing.T, wf *settleflow.Workflow) {
	t.Helper()
	if wf.Pricing.Model != settleflow.PricingSuccessFee || wf.Pricing.Markup != nil || string(wf.SuccessCriteria) != outcomeCriteria ||
		wf.MarginFloor == nil || *wf.MarginFloor != 2500 {
		t.Errorf("terms: pricing %+v criteria %s floor %v", wf.Pricing, wf.SuccessCriteria, wf.MarginFloor)
	}
	if wf.Charged == nil || *wf.Charged != (settleflow.Money{Amount: 400, Currency: "usd"}) || wf.ChargeAmount() != 400 {
		t.Errorf("charged %v", wf.Charged)
	}
	wantItems := []settleflow.CostItem{
		{Category: settleflow.CostModel, Provider: "openai", Units: 12000, Amount: 240},
		{Category: settleflow.CostHuman, Provider: "reviewer", Units: 1, Amount: 45},
	}
	if wf.Cost == nil || wf.Cost.Amount != 285 || wf.Cost.Currency != "usd" || len(wf.Cost.Items) != 2 ||
		wf.Cost.Items[0] != wantItems[0] || wf.Cost.Items[1] != wantItems[1] {
		t.Errorf("cost %+v", wf.Cost)
	}
	if o := wf.Outcome; o == nil || !o.Success || len(o.Trace) != 3 ||
		o.Trace[0] != (settleflow.OutcomeStep{Node: "", Path: "", Type: "all_of", Matched: true, Reason: "2 of 2 criteria matched"}) ||
		o.Trace[2] != (settleflow.OutcomeStep{Node: "criteria[1]", Path: "/confidence", Type: "numeric_threshold", Matched: true, Reason: "confidence 0.9 >= 0.8"}) {
		t.Errorf("outcome %+v", wf.Outcome)
	}
}
