package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/apikey"
	"github.com/settleflow/settleflow/client"
	"github.com/settleflow/settleflow/criteria"
	"github.com/settleflow/settleflow/httpapi"
	"github.com/settleflow/settleflow/internal/fundstest"
	"github.com/settleflow/settleflow/ratelimit"
	"github.com/settleflow/settleflow/storage/sqlite"
)

// triageCriteria holds for what ticket-triage makes of ticketParams'
// ticket ({"ticketId": "T-42", "queue": "billing"}).
const triageCriteria = `{"type":"all_of","criteria":[{"type":"exact","path":"/queue","value":"billing"},{"type":"regex","path":"/ticketId","pattern":"^T-"}]}`

// TestOutcomePricing runs success criteria and a margin floor through the
// reference server: the quote shows them with the budget, the workflow
// keeps them, and once it ran it has its charge, its cost and the
// criteria's verdict, in the workflow and in its event. ticket-triage is
// priced fixed, so the verdict is recorded and the charge is the quote.
func TestOutcomePricing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newClient(t)
	customer := uniqueCustomer(t)

	p, err := c.Products.Fetch(ctx, "ticket-triage")
	if err != nil {
		t.Fatal(err)
	}
	if p.Pricing.Model != settleflow.PricingFixed || string(p.SuccessCriteria) != "null" || p.MarginFloor != nil {
		t.Fatalf("ticket-triage: pricing %+v criteria %s floor %v", p.Pricing, p.SuccessCriteria, p.MarginFloor)
	}

	params := ticketParams(customer)
	params.SuccessCriteria = json.RawMessage(triageCriteria)
	params.MarginFloor = bp(2500)
	q, err := c.Quotes.Create(ctx, &client.QuoteCreateParams{Product: params.Product, CustomerID: customer, Payload: params.Payload,
		SuccessCriteria: criteria.MustParse(triageCriteria), MarginFloor: bp(2500)})
	if err != nil {
		t.Fatal(err)
	}
	// 1 attachment: an estimated cost of 250, quoted 358 at 30 %; a floor
	// of 25 % leaves floor(358 × 0.75) = 268 to spend.
	if q.Quoted.Amount != 358 || q.Pricing.Model != settleflow.PricingFixed || !sameJSON(t, string(q.SuccessCriteria), triageCriteria) ||
		q.MarginFloor == nil || *q.MarginFloor != 2500 || q.Budget == nil || *q.Budget != (settleflow.Money{Amount: 268, Currency: "usd"}) {
		t.Fatalf("quote %+v criteria %s", q, q.SuccessCriteria)
	}
	// Without criteria nor floor there are none, and no budget.
	bare, err := c.Quotes.Create(ctx, &client.QuoteCreateParams{Product: params.Product, CustomerID: customer, Payload: params.Payload})
	if err != nil {
		t.Fatal(err)
	}
	if bare.Quoted != q.Quoted || string(bare.SuccessCriteria) != "null" || bare.MarginFloor != nil || bare.Budget != nil {
		t.Fatalf("bare quote %+v criteria %s", bare, bare.SuccessCriteria)
	}

	wf, err := c.Workflows.Create(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if wf.Quoted != q.Quoted || wf.Pricing.Model != settleflow.PricingFixed || !sameJSON(t, string(wf.SuccessCriteria), triageCriteria) ||
		wf.MarginFloor == nil || *wf.MarginFloor != 2500 || wf.Charged != nil || wf.Cost != nil || wf.Outcome != nil {
		t.Fatalf("created %+v", wf)
	}
	// A criterion that does not hold: recorded, and (fixed pricing) the
	// charge is the quote all the same.
	miss := ticketParams(customer)
	miss.SuccessCriteria = map[string]any{"type": "exact", "path": "/queue", "value": "general"}
	missed, err := c.Workflows.Create(ctx, miss)
	if err != nil {
		t.Fatal(err)
	}

	done := waitTerminal(t, c, wf.ID)
	if done.Status != settleflow.Settled || done.Charged == nil || *done.Charged != done.Quoted {
		t.Fatalf("settled %+v charged %v", done, done.Charged)
	}
	// ticket-triage costs 170 of model plus 45 per attachment scanned, as items.
	if done.Cost == nil || done.Cost.Amount != 215 || done.Cost.Currency != "usd" || !slices.Equal(done.Cost.Items, []settleflow.CostItem{
		{Category: settleflow.CostModel, Provider: "chat-model", Units: 400, Amount: 170},
		{Category: settleflow.CostTools, Provider: "attachment-scanner", Units: 1, Amount: 45}}) {
		t.Fatalf("cost %+v", done.Cost)
	}
	if o := done.Outcome; o == nil || !o.Success || len(o.Trace) != 3 || o.Trace[0].Type != "all_of" || !o.Trace[0].Matched ||
		o.Trace[1].Node != "criteria[0]" || o.Trace[1].Path != "/queue" || !o.Trace[1].Matched || o.Trace[2].Type != "regex" || o.Trace[2].Reason == "" {
		t.Fatalf("outcome %+v", done.Outcome)
	}
	events, err := c.Events.List(ctx, &client.EventListParams{WorkflowID: wf.ID})
	if err != nil || len(events.Data) != 1 {
		t.Fatalf("events %+v %v", events, err)
	}
	if d := events.Data[0].Data; events.Data[0].Type != settleflow.EventWorkflowCompleted || d.Pricing == nil || d.Pricing.Model != settleflow.PricingFixed ||
		d.Charged == nil || *d.Charged != *done.Charged || d.Cost == nil || d.Cost.Amount != 215 || d.Outcome == nil || !d.Outcome.Success {
		t.Fatalf("event data %+v", d)
	}

	m := waitTerminal(t, c, missed.ID)
	if m.Status != settleflow.Settled || m.Outcome == nil || m.Outcome.Success || len(m.Outcome.Trace) != 1 || m.Outcome.Trace[0].Matched ||
		m.Charged == nil || *m.Charged != m.Quoted || m.MarginFloor != nil {
		t.Fatalf("missed criteria: %+v outcome %+v", m, m.Outcome)
	}
}

// The errors of outcome pricing, from the reference server.
func TestOutcomePricingErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newClient(t)
	customer := uniqueCustomer(t)
	for _, tc := range []struct {
		name        string
		criteria    any
		floor       *settleflow.BasisPoints
		code        settleflow.ErrorCode
		paramPrefix string
	}{
		// 358 on an estimated 250 keeps 30 %: a floor of 50 % is refused.
		{"floor above the quote's margin", nil, bp(5000), settleflow.CodeMarginBelowFloor, "marginFloor"},
		{"floor of 1", nil, bp(10000), settleflow.CodeParameterInvalid, "marginFloor"},
		{"unknown operator", json.RawMessage(`{"type":"numeric_threshold","path":"/x","op":"~","value":1}`), nil, settleflow.CodeParameterInvalid, "successCriteria"},
		{"bad child", json.RawMessage(`{"type":"any_of","criteria":[{"type":"exact","path":"/queue","value":"billing"},{"type":"regex","path":"/x","pattern":"("}]}`),
			nil, settleflow.CodeParameterInvalid, "successCriteria.criteria[1]"},
	} {
		for _, op := range []string{"quote", "create"} {
			var err error
			params := ticketParams(customer)
			if op == "quote" {
				_, err = c.Quotes.Create(ctx, &client.QuoteCreateParams{Product: params.Product, CustomerID: customer, Payload: params.Payload,
					SuccessCriteria: tc.criteria, MarginFloor: tc.floor})
			} else {
				params.SuccessCriteria, params.MarginFloor = tc.criteria, tc.floor
				_, err = c.Workflows.Create(ctx, params)
			}
			var inv *client.InvalidRequestError
			if !errors.As(err, &inv) || inv.Status != 400 || inv.Code != tc.code || !strings.HasPrefix(inv.Param, tc.paramPrefix) {
				t.Errorf("%s, %s: %v (code %v param %q)", tc.name, op, err, tc.code, tc.paramPrefix)
			}
		}
	}
	// The floor is part of what an idempotency key stands for.
	params := ticketParams(customer)
	params.IdempotencyKey = "outcome-" + customer
	params.MarginFloor = bp(2000)
	if _, err := c.Workflows.Create(ctx, params); err != nil {
		t.Fatal(err)
	}
	params.MarginFloor = bp(2100)
	var idem *client.IdempotencyError
	if _, err := c.Workflows.Create(ctx, params); !errors.As(err, &idem) {
		t.Fatalf("same key, another floor: %v", err)
	}
}

// resolution is the payload of the success-fee product of
// TestSuccessFeeThroughTheAPI.
type resolution struct {
	TicketID string `json:"ticketId"`
	// Resolve says whether the product resolves the ticket; Spend is what
	// it reports spending on the model as it runs.
	Resolve bool  `json:"resolve"`
	Spend   int64 `json:"spend"`
	// Review is what the human review it reports when done costs, above
	// its base of 20.
	Review int64 `json:"review"`
}

// TestSuccessFeeThroughTheAPI runs a success-fee product with a margin floor
// through the real HTTP handler and engine (the fundstest double settles):
// a resolved ticket is charged its quote, an unresolved one nothing, an
// execution that spends past its budget fails margin_floor_exceeded, one
// whose final cost passes it is flagged by workflow.margin_below_floor, and
// the client reads the pricing, the cost items and the outcome of each.
func TestSuccessFeeThroughTheAPI(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "api.db"), sqlite.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	products := settleflow.NewProducts()
	if err := settleflow.Register(products, settleflow.Product[resolution]{
		Name: "ticket-resolution", Description: "Resolves a ticket; charged only when it is.", PricingSummary: "4.00 USD per resolved ticket",
		Price:           settleflow.Price{Model: settleflow.PricingSuccessFee, TargetMargin: 3000, MinimumCharge: 50},
		SuccessCriteria: criteria.MustParse(`{"type":"exact","path":"/status","value":"resolved"}`),
		MarginFloor:     1000,
		Estimate:        func(resolution) (int64, error) { return 280, nil },
		Execute: func(ctx context.Context, r resolution) (settleflow.Execution, error) {
			if err := settleflow.ReportSpend(ctx, settleflow.CostItem{Category: settleflow.CostModel, Provider: "openai", Units: 1000, Amount: r.Spend}); err != nil {
				return settleflow.Execution{}, err
			}
			status := "open"
			if r.Resolve {
				status = "resolved"
			}
			return settleflow.Execution{CostItems: []settleflow.CostItem{{Category: settleflow.CostHuman, Provider: "reviewer", Units: 1, Amount: 20 + r.Review}},
				Result: map[string]any{"ticketId": r.TicketID, "status": status}}, nil
		},
	}); err != nil {
		t.Fatal(err)
	}
	engine, err := settleflow.New(settleflow.Options{Store: store, Settler: fundstest.New(), Products: products,
		Notifier:     settleflow.NotifierFunc(func(context.Context, []settleflow.Event) error { return nil }),
		PollInterval: 10 * time.Millisecond, SettlementPollInterval: 10 * time.Millisecond, FundsPollInterval: 10 * time.Millisecond,
		TestFaucet: 100_000})
	if err != nil {
		t.Fatal(err)
	}
	if err := engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engine.Stop(context.Background()) })
	keys, err := apikey.New(store.DB(), apikey.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := keys.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { keys.Close() })
	_, key, err := keys.Create(ctx, apikey.CreateParams{Environment: settleflow.Test, Name: "outcome", Plan: apikey.Pro})
	if err != nil {
		t.Fatal(err)
	}
	h, err := httpapi.New(httpapi.Options{Engine: engine, Keys: httpapi.APIKeys(keys), Limiter: ratelimit.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(h)
	t.Cleanup(srv.Close)
	c := client.New(key, client.WithBaseURL(srv.URL), client.WithHTTPClient(srv.Client()))

	p, err := c.Products.Fetch(ctx, "ticket-resolution")
	if err != nil {
		t.Fatal(err)
	}
	if p.Pricing.Model != settleflow.PricingSuccessFee || !sameJSON(t, string(p.SuccessCriteria), `{"type":"exact","path":"/status","value":"resolved"}`) ||
		p.MarginFloor == nil || *p.MarginFloor != 1000 {
		t.Fatalf("product %+v", p)
	}
	// 280 at 30 % is quoted 400; the product's floor of 10 % leaves 360.
	q, err := c.Quotes.Create(ctx, &client.QuoteCreateParams{Product: "ticket-resolution", CustomerID: "cus_outcome", Payload: resolution{TicketID: "T-1"}})
	if err != nil {
		t.Fatal(err)
	}
	if q.Quoted.Amount != 400 || q.Pricing.Model != settleflow.PricingSuccessFee || q.MarginFloor == nil || *q.MarginFloor != 1000 ||
		q.Budget == nil || q.Budget.Amount != 360 {
		t.Fatalf("quote %+v", q)
	}
	// A request may raise the floor (the budget shrinks), never lower it.
	q, err = c.Quotes.Create(ctx, &client.QuoteCreateParams{Product: "ticket-resolution", CustomerID: "cus_outcome", Payload: resolution{TicketID: "T-1"},
		MarginFloor: bp(2500)})
	if err != nil || *q.MarginFloor != 2500 || q.Budget.Amount != 300 {
		t.Fatalf("raised floor: %+v %v", q, err)
	}
	var inv *client.InvalidRequestError
	if _, err := c.Quotes.Create(ctx, &client.QuoteCreateParams{Product: "ticket-resolution", CustomerID: "cus_outcome", Payload: resolution{TicketID: "T-1"},
		MarginFloor: bp(500)}); !errors.As(err, &inv) || inv.Param != "marginFloor" {
		t.Fatalf("lowered floor: %v", err)
	}

	create := func(r resolution) *settleflow.Workflow {
		t.Helper()
		wf, err := c.Workflows.Create(ctx, &client.WorkflowCreateParams{Product: "ticket-resolution", CustomerID: "cus_outcome", Payload: r})
		if err != nil {
			t.Fatal(err)
		}
		return wf
	}
	resolved, open, overspent := create(resolution{TicketID: "T-1", Resolve: true, Spend: 200}),
		create(resolution{TicketID: "T-2", Spend: 200}), create(resolution{TicketID: "T-3", Resolve: true, Spend: 361})
	lateCost := create(resolution{TicketID: "T-4", Resolve: true, Spend: 300, Review: 50})

	wf := waitTerminal(t, c, resolved.ID)
	if wf.Status != settleflow.Settled || wf.Charged == nil || *wf.Charged != wf.Quoted || wf.Outcome == nil || !wf.Outcome.Success ||
		wf.Cost == nil || wf.Cost.Amount != 220 || len(wf.Cost.Items) != 2 ||
		wf.Cost.Items[0] != (settleflow.CostItem{Category: settleflow.CostModel, Provider: "openai", Units: 1000, Amount: 200}) ||
		wf.Cost.Items[1] != (settleflow.CostItem{Category: settleflow.CostHuman, Provider: "reviewer", Units: 1, Amount: 20}) {
		t.Fatalf("resolved: %+v charged %v cost %+v outcome %+v", wf, wf.Charged, wf.Cost, wf.Outcome)
	}
	wf = waitTerminal(t, c, open.ID)
	if wf.Status != settleflow.Settled || wf.Charged == nil || wf.Charged.Amount != 0 || wf.Settlement != nil ||
		wf.Outcome == nil || wf.Outcome.Success || wf.Cost == nil || wf.Cost.Amount != 220 {
		t.Fatalf("unresolved: %+v charged %v outcome %+v", wf, wf.Charged, wf.Outcome)
	}
	wf = waitTerminal(t, c, overspent.ID)
	if wf.Status != settleflow.Failed || wf.Failure == nil || wf.Failure.Code != settleflow.FailureMarginFloorExceeded || wf.Charged != nil ||
		wf.Cost == nil || wf.Cost.Amount != 361 {
		t.Fatalf("overspent: %+v failure %+v cost %+v", wf, wf.Failure, wf.Cost)
	}
	events, err := c.Events.List(ctx, &client.EventListParams{WorkflowID: overspent.ID})
	if err != nil || len(events.Data) != 1 || events.Data[0].Type != settleflow.EventWorkflowFailed || events.Data[0].Data.Cost == nil {
		t.Fatalf("overspent events %+v %v", events, err)
	}
	// 300 reported on the way, 70 at the end: 370 is past the budget of
	// 360, too late to stop; flagged, and charged as any resolved ticket.
	wf = waitTerminal(t, c, lateCost.ID)
	if wf.Status != settleflow.Settled || wf.Charged == nil || *wf.Charged != wf.Quoted || wf.Cost == nil || wf.Cost.Amount != 370 {
		t.Fatalf("late cost: %+v charged %v cost %+v", wf, wf.Charged, wf.Cost)
	}
	flagged, err := c.Events.List(ctx, &client.EventListParams{WorkflowID: lateCost.ID, Type: settleflow.EventWorkflowMarginBelowFloor})
	if err != nil || len(flagged.Data) != 1 || flagged.Data[0].Data.Cost == nil || flagged.Data[0].Data.Cost.Amount != 370 ||
		flagged.Data[0].Data.Charged == nil || flagged.Data[0].Data.Charged.Amount != wf.Quoted.Amount {
		t.Fatalf("margin_below_floor events %+v %v", flagged, err)
	}
}
