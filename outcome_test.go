package settleflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/criteria"
)

// outcomeJob is the payload of the outcome-pricing test products: the
// result it reports (status, confidence), what it spends, and how it
// reports the spend.
type outcomeJob struct {
	Status     string  `json:"status"`
	Confidence float64 `json:"confidence"`
	// Cost is what the run spends, in minor units.
	Cost int64 `json:"cost"`
	// Stream reports the spend through ReportSpend in four equal model
	// items as it goes (stopping when told to); otherwise the cost comes
	// back in Execution, as items when Items is set.
	Stream bool `json:"stream"`
	Items  bool `json:"items"`
	// Fail fails the run for good after reporting its spend.
	Fail bool `json:"fail"`
	// BadItem reports an item of an unknown category and returns the
	// error ReportSpend gives.
	BadItem bool `json:"badItem"`
	// Huge reports an item of 100, then one of MaxAmount: their sum is
	// beyond any amount.
	Huge bool `json:"huge"`
}

// outcomeEstimate is every outcome product's estimate: its quote is
// ceil(1000 / 0.7) = 1429.
const (
	outcomeEstimate = 1000
	outcomeQuote    = 1429
)

const resolved = `{"type":"all_of","criteria":[
	{"type":"exact","path":"/status","value":"resolved"},
	{"type":"numeric_threshold","path":"/confidence","op":">=","value":0.8}]}`

func outcomeProducts(t testing.TB) *settleflow.Products {
	t.Helper()
	ps := settleflow.NewProducts()
	criteriaResolved := criteria.MustParse(resolved)
	execute := func(ctx context.Context, p outcomeJob) (settleflow.Execution, error) {
		result := map[string]any{"status": p.Status, "confidence": p.Confidence}
		switch {
		case p.Huge:
			for _, amount := range []int64{100, settleflow.MaxAmount} {
				if err := settleflow.ReportSpend(ctx, settleflow.CostItem{Category: settleflow.CostCompute, Amount: amount}); err != nil {
					return settleflow.Execution{}, err
				}
			}
			return settleflow.Execution{Result: result}, nil
		case p.BadItem:
			err := settleflow.ReportSpend(ctx, settleflow.CostItem{Category: "snacks", Amount: 1})
			return settleflow.Execution{}, err
		case p.Stream:
			for range 4 {
				if err := settleflow.ReportSpend(ctx, settleflow.CostItem{Category: settleflow.CostModel, Provider: "llm", Units: 1000, Amount: p.Cost / 4}); err != nil {
					return settleflow.Execution{}, err
				}
			}
			if p.Fail {
				return settleflow.Execution{}, settleflow.Permanent(errors.New("the model gave up"))
			}
			return settleflow.Execution{Result: result}, nil
		case p.Items:
			return settleflow.Execution{Result: result, CostItems: []settleflow.CostItem{
				{Category: settleflow.CostModel, Provider: "llm", Units: 1200, Amount: p.Cost - p.Cost/4},
				{Category: settleflow.CostHuman, Provider: "reviewer", Units: 1, Amount: p.Cost / 4}}}, nil
		}
		return settleflow.Execution{Result: result, ActualCost: p.Cost}, nil
	}
	for _, p := range []settleflow.Product[outcomeJob]{
		{Name: "p-fixed", Price: settleflow.Price{TargetMargin: 3000}},
		{Name: "p-capped", Price: settleflow.Price{Model: settleflow.PricingCapped, TargetMargin: 3000, MinimumCharge: 100, Markup: 2000}},
		{Name: "p-fee", Price: settleflow.Price{Model: settleflow.PricingSuccessFee, TargetMargin: 3000}, SuccessCriteria: criteriaResolved},
		{Name: "p-hybrid", Price: settleflow.Price{Model: settleflow.PricingHybrid, TargetMargin: 3000, BaseShare: 3000}, SuccessCriteria: criteriaResolved},
		{Name: "p-floor", Price: settleflow.Price{TargetMargin: 3000}, MarginFloor: 2000},
	} {
		p.Estimate = func(outcomeJob) (int64, error) { return outcomeEstimate, nil }
		p.Execute = execute
		if err := settleflow.Register(ps, p); err != nil {
			t.Fatal(err)
		}
	}
	return ps
}

func newOutcomeFixture(t *testing.T) (*fixture, *ledgerSettler) {
	t.Helper()
	return newFundedFixture(t, func(o *settleflow.Options) { o.Products = outcomeProducts(t) })
}

func createJob(ctx context.Context, e *settleflow.Engine, product, customer string, job outcomeJob, tweak func(*settleflow.CreateParams)) (*settleflow.Workflow, error) {
	payload, _ := json.Marshal(job)
	p := settleflow.CreateParams{Environment: settleflow.Test, Product: product, CustomerID: customer, Payload: payload}
	if tweak != nil {
		tweak(&p)
	}
	wf, _, err := e.Create(ctx, p)
	return wf, err
}

// Every pricing model charges what it says, from the customer's balance,
// and a charge of 0 settles without the chain.
func TestPricingModelsChargeTheCustomer(t *testing.T) {
	ctx := context.Background()
	f, ls := newOutcomeFixture(t)
	const deposit = 20 * outcomeQuote
	ls.deposit(t, "cus_o", deposit)
	if err := f.engine.SyncFunds(ctx, settleflow.Test); err != nil {
		t.Fatal(err)
	}
	met := outcomeJob{Status: "resolved", Confidence: 0.9, Cost: 700}
	missed := outcomeJob{Status: "resolved", Confidence: 0.5, Cost: 700}
	cases := []struct {
		name, product string
		job           outcomeJob
		charged       int64
		success       *bool
	}{
		{"fixed charges the quote", "p-fixed", met, outcomeQuote, nil},
		{"capped charges cost plus markup", "p-capped", outcomeJob{Cost: 501, Items: true}, 602, nil}, // ceil(501 × 1.2)
		{"capped stops at the cap", "p-capped", outcomeJob{Cost: 1300}, outcomeQuote, nil},            // 1560 > 1429
		{"capped charges at least the minimum", "p-capped", outcomeJob{Cost: 10}, 100, nil},
		{"success fee met", "p-fee", met, outcomeQuote, ptr(true)},
		{"success fee missed: nothing", "p-fee", missed, 0, ptr(false)},
		{"hybrid met", "p-hybrid", met, outcomeQuote, ptr(true)},
		{"hybrid missed: the base", "p-hybrid", missed, 429, ptr(false)}, // ceil(1429 × 0.3)
		{"streamed spend within the floor's budget", "p-floor", outcomeJob{Cost: 1000, Stream: true}, outcomeQuote, nil},
	}
	var ids []string
	for _, c := range cases {
		wf, err := createJob(ctx, f.engine, c.product, "cus_o", c.job, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if wf.Quoted.Amount != outcomeQuote || wf.Charged != nil || wf.Cost != nil || wf.Outcome != nil {
			t.Fatalf("%s: created %+v", c.name, wf)
		}
		ids = append(ids, wf.ID)
	}
	if err := f.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	done := f.waitTerminal(t, settleflow.Test, ids...)
	var charged int64
	for i, c := range cases {
		w := done[ids[i]]
		if w.Status != settleflow.Settled || w.Charged == nil || w.Charged.Amount != c.charged || w.Cost == nil {
			t.Fatalf("%s: %s charged %v cost %v failure %v, want Settled charged %d", c.name, w.Status, w.Charged, w.Cost, w.Failure, c.charged)
		}
		charged += c.charged
		if want := settleflow.AchievedMarginOf(w.Quoted.Amount, c.charged, w.Cost.Amount); w.Margin.Achieved == nil || *w.Margin.Achieved != want {
			t.Errorf("%s: achieved %v, want %v", c.name, w.Margin.Achieved, want)
		}
		if c.success == nil {
			if w.Outcome != nil {
				t.Errorf("%s: an outcome without criteria: %+v", c.name, w.Outcome)
			}
		} else if w.Outcome == nil || w.Outcome.Success != *c.success || len(w.Outcome.Trace) != 3 {
			t.Errorf("%s: outcome %+v, want success %v with 3 steps", c.name, w.Outcome, *c.success)
		}
		if c.charged == 0 {
			if w.Settlement != nil || w.Sequence != 0 {
				t.Errorf("%s: a charge of 0 has settlement %+v, sequence %d", c.name, w.Settlement, w.Sequence)
			}
		} else if w.Settlement == nil {
			t.Errorf("%s: no settlement", c.name)
		}
	}
	if w := done[ids[1]]; len(w.Cost.Items) != 2 || w.Cost.Amount != 501 || w.Cost.Items[1].Category != settleflow.CostHuman {
		t.Errorf("cost items: %+v", w.Cost)
	}
	if w := done[ids[8]]; len(w.Cost.Items) != 4 || w.Cost.Amount != 1000 {
		t.Errorf("streamed cost: %+v", w.Cost)
	}
	// The chain debited exactly the charges; the balance left is available.
	if got := ls.balanceOf("cus_o"); got != deposit-charged {
		t.Fatalf("on-chain balance %d, want %d − %d", got, int64(deposit), charged)
	}
	waitAvailable(t, f, "cus_o", deposit-charged)
	// Every workflow completed, its event carrying the charge and outcome.
	by := f.waitEvents(t, len(cases))
	for i, c := range cases {
		evs := by[ids[i]]
		if len(evs) != 1 || evs[0].Type != settleflow.EventWorkflowCompleted || evs[0].Data.Charged == nil ||
			evs[0].Data.Charged.Amount != c.charged || evs[0].Data.Pricing == nil || evs[0].Data.Cost == nil {
			t.Errorf("%s: events %+v", c.name, evs)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func waitAvailable(t *testing.T, f *fixture, customer string, want int64) {
	t.Helper()
	var got int64
	for range 400 {
		c, err := f.engine.Customer(context.Background(), settleflow.Test, customer)
		if err != nil {
			t.Fatal(err)
		}
		if got = c.Balance.Available; got == want {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("available %d, want %d", got, want)
}

// A product whose reported spend passes its budget is stopped: Failed
// margin_floor_exceeded, nothing charged, its cost recorded, the
// reservation released. One that does not report and finishes over budget
// is charged and flagged.
func TestMarginFloorHolds(t *testing.T) {
	ctx := context.Background()
	f, ls := newOutcomeFixture(t)
	const deposit = 4 * outcomeQuote
	ls.deposit(t, "cus_m", deposit)
	if err := f.engine.SyncFunds(ctx, settleflow.Test); err != nil {
		t.Fatal(err)
	}
	// Budget: floor(1429 × 0.8) = 1143. Streaming 2000 in four items of
	// 500 passes it at the third.
	over, err := createJob(ctx, f.engine, "p-floor", "cus_m", outcomeJob{Cost: 2000, Stream: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if over.MarginFloor == nil || *over.MarginFloor != 2000 {
		t.Fatalf("margin floor on the workflow: %v", over.MarginFloor)
	}
	flagged, err := createJob(ctx, f.engine, "p-floor", "cus_m", outcomeJob{Cost: 1144}, nil)
	if err != nil {
		t.Fatal(err)
	}
	exact, err := createJob(ctx, f.engine, "p-floor", "cus_m", outcomeJob{Cost: 1143}, nil)
	if err != nil {
		t.Fatal(err)
	}
	gaveUp, err := createJob(ctx, f.engine, "p-fixed", "cus_m", outcomeJob{Cost: 400, Stream: true, Fail: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	done := f.waitTerminal(t, settleflow.Test, over.ID, flagged.ID, exact.ID, gaveUp.ID)
	if w := done[gaveUp.ID]; w.Status != settleflow.Failed || w.Failure.Code != settleflow.FailureExecutionFailed ||
		w.Charged != nil || w.Cost == nil || w.Cost.Amount != 400 || len(w.Cost.Items) != 4 {
		t.Fatalf("a run that failed after spending: %s %+v charged %v cost %+v", w.Status, w.Failure, w.Charged, w.Cost)
	}
	w := done[over.ID]
	if w.Status != settleflow.Failed || w.Failure == nil || w.Failure.Code != settleflow.FailureMarginFloorExceeded ||
		w.Charged != nil || w.Cost == nil || w.Cost.Amount != 1500 || len(w.Cost.Items) != 3 || w.Settlement != nil {
		t.Fatalf("over budget: %s %+v charged %v cost %+v", w.Status, w.Failure, w.Charged, w.Cost)
	}
	if w := done[flagged.ID]; w.Status != settleflow.Settled || w.ChargeAmount() != outcomeQuote {
		t.Fatalf("over budget without reporting: %s %+v", w.Status, w.Failure)
	}
	if w := done[exact.ID]; w.Status != settleflow.Settled {
		t.Fatalf("at the budget: %s %+v", w.Status, w.Failure)
	}
	by := f.waitEvents(t, 5)
	types := func(id string) (out []settleflow.EventType) {
		for _, ev := range by[id] {
			out = append(out, ev.Type)
		}
		return out
	}
	if got := types(over.ID); len(got) != 1 || got[0] != settleflow.EventWorkflowFailed || by[over.ID][0].Data.Cost == nil {
		t.Errorf("events of the stopped workflow: %v", got)
	}
	got := map[settleflow.EventType]settleflow.Event{}
	for _, ev := range by[flagged.ID] {
		got[ev.Type] = ev
	}
	if ev, ok := got[settleflow.EventWorkflowMarginBelowFloor]; !ok || len(got) != 2 || ev.Data.Cost == nil || ev.Data.Cost.Amount != 1144 {
		t.Errorf("events of the workflow over budget: %v", types(flagged.ID))
	}
	if got := types(exact.ID); len(got) != 1 || got[0] != settleflow.EventWorkflowCompleted {
		t.Errorf("events of the workflow at the budget: %v", got)
	}
	// Two charges of the quote; the stopped one charged nothing and gave
	// its reservation back.
	if got := ls.balanceOf("cus_m"); got != deposit-2*outcomeQuote {
		t.Fatalf("on-chain balance %d", got)
	}
	waitAvailable(t, f, "cus_m", deposit-2*outcomeQuote)
}

// Criteria and floors are checked at create: a bad tree names its node, a
// request cannot lower a floor, and a quote below the floor is refused;
// nothing is stored. A request's criteria replace the product's.
func TestCreateChecksCriteriaAndFloor(t *testing.T) {
	ctx := context.Background()
	f, ls := newOutcomeFixture(t)
	ls.deposit(t, "cus_c", 10*outcomeQuote)
	if err := f.engine.SyncFunds(ctx, settleflow.Test); err != nil {
		t.Fatal(err)
	}
	job := outcomeJob{Status: "open", Confidence: 1, Cost: 100}
	cases := []struct {
		name, product string
		tweak         func(*settleflow.CreateParams)
		code          settleflow.ErrorCode
		param         string
	}{
		{"bad pattern", "p-fee", func(p *settleflow.CreateParams) {
			p.SuccessCriteria = json.RawMessage(`{"type":"all_of","criteria":[{"type":"exact","path":"/a","value":1},{"type":"regex","path":"/a","pattern":"(a"}]}`)
		}, settleflow.CodeParameterInvalid, "successCriteria.criteria[1].pattern"},
		{"bad pointer", "p-fixed", func(p *settleflow.CreateParams) {
			p.SuccessCriteria = json.RawMessage(`{"type":"exact","path":"status","value":1}`)
		}, settleflow.CodeParameterInvalid, "successCriteria.path"},
		{"not an object", "p-fixed", func(p *settleflow.CreateParams) { p.SuccessCriteria = json.RawMessage(`[1]`) },
			settleflow.CodeParameterInvalid, "successCriteria"},
		{"floor lowered", "p-floor", func(p *settleflow.CreateParams) { p.MarginFloor = 1000 }, settleflow.CodeParameterInvalid, "marginFloor"},
		{"floor out of range", "p-fixed", func(p *settleflow.CreateParams) { p.MarginFloor = 10000 }, settleflow.CodeParameterInvalid, "marginFloor"},
		{"quote below the floor (its margin is 0.3002)", "p-fixed", func(p *settleflow.CreateParams) { p.MarginFloor = 3003 }, settleflow.CodeMarginBelowFloor, "marginFloor"},
	}
	for _, c := range cases {
		_, err := createJob(ctx, f.engine, c.product, "cus_c", job, c.tweak)
		var inv *settleflow.InvalidError
		if !errors.As(err, &inv) || inv.Code != c.code || inv.Param != c.param {
			t.Errorf("%s: %v, want %s at %s", c.name, err, c.code, c.param)
		}
		p := settleflow.CreateParams{Environment: settleflow.Test, Product: c.product, CustomerID: "cus_c", Payload: json.RawMessage(`{}`)}
		c.tweak(&p)
		if _, err := f.engine.Quote(ctx, p); !errors.As(err, &inv) || inv.Code != c.code || inv.Param != c.param {
			t.Errorf("%s: quote: %v, want %s at %s", c.name, err, c.code, c.param)
		}
	}
	if page, err := f.engine.List(ctx, settleflow.ListQuery{Environment: settleflow.Test, Limit: 10}); err != nil || len(page.Data) != 0 {
		t.Fatalf("refused creates stored workflows: %+v %v", page, err)
	}
	// A floor at the quote's margin is kept; the quote tells the budget.
	q, err := f.engine.Quote(ctx, settleflow.CreateParams{Environment: settleflow.Test, Product: "p-fixed", CustomerID: "cus_c",
		Payload: json.RawMessage(`{}`), MarginFloor: 3000})
	if err != nil || q.MarginFloor != 3000 || q.Budget != outcomeQuote*7/10 || q.Pricing.Model != settleflow.PricingFixed {
		t.Fatalf("quote at the floor: %+v %v", q, err)
	}
	// The request's criteria replace the product's: "open" succeeds.
	open := `{"type":"exact","path":"/status","value":"open"}`
	wf, err := createJob(ctx, f.engine, "p-fee", "cus_c", job, func(p *settleflow.CreateParams) { p.SuccessCriteria = json.RawMessage(open) })
	if err != nil || string(wf.SuccessCriteria) != open {
		t.Fatalf("create with criteria: %v %s", err, wf.SuccessCriteria)
	}
	byDefault, err := createJob(ctx, f.engine, "p-fee", "cus_c", job, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	done := f.waitTerminal(t, settleflow.Test, wf.ID, byDefault.ID)
	if w := done[wf.ID]; w.ChargeAmount() != outcomeQuote || w.Outcome == nil || !w.Outcome.Success {
		t.Errorf("request criteria: charged %d outcome %+v", w.ChargeAmount(), w.Outcome)
	}
	if w := done[byDefault.ID]; w.ChargeAmount() != 0 || w.Outcome == nil || w.Outcome.Success {
		t.Errorf("product criteria: charged %d outcome %+v", w.ChargeAmount(), w.Outcome)
	}
	// An idempotent replay must ask for the same criteria.
	key := func(p *settleflow.CreateParams) { p.IdempotencyKey = "k1" }
	if _, err := createJob(ctx, f.engine, "p-fee", "cus_c", job, key); err != nil {
		t.Fatal(err)
	}
	_, err = createJob(ctx, f.engine, "p-fee", "cus_c", job, func(p *settleflow.CreateParams) {
		key(p)
		p.SuccessCriteria = json.RawMessage(open)
	})
	if !errors.Is(err, settleflow.ErrIdempotencyKeyReused) {
		t.Fatalf("replay with other criteria: %v", err)
	}
}

// Success-fee and hybrid products must declare their criteria.
func TestRegisterNeedsCriteriaForOutcomePricing(t *testing.T) {
	for _, m := range []settleflow.PricingModel{settleflow.PricingSuccessFee, settleflow.PricingHybrid} {
		p := settleflow.Product[outcomeJob]{Name: "x", Price: settleflow.Price{Model: m, TargetMargin: 3000},
			Estimate: func(outcomeJob) (int64, error) { return 1, nil },
			Execute:  func(context.Context, outcomeJob) (settleflow.Execution, error) { return settleflow.Execution{}, nil }}
		if m == settleflow.PricingHybrid {
			p.Price.BaseShare = 5000
		}
		if err := settleflow.Register(settleflow.NewProducts(), p); err == nil {
			t.Errorf("%s without criteria registered", m)
		}
	}
	if info, ok := outcomeProducts(t).Get("p-hybrid"); !ok || info.Pricing.Model != settleflow.PricingHybrid || info.Pricing.BaseShare == nil ||
		*info.Pricing.BaseShare != 3000 || len(info.SuccessCriteria) == 0 {
		t.Fatalf("catalogue entry: %+v", info)
	} else if b, _ := json.Marshal(info.Pricing); string(b) != `{"model":"hybrid","baseShare":0.3}` {
		t.Fatalf("pricing on the wire: %s", b)
	}
}

// A cost item that is not valid fails the workflow at once (the product
// passing ReportSpend's error on is not a transient error).
func TestBadCostItemFailsTheWorkflow(t *testing.T) {
	ctx := context.Background()
	f, ls := newOutcomeFixture(t)
	ls.deposit(t, "cus_b", 2*outcomeQuote)
	if err := f.engine.SyncFunds(ctx, settleflow.Test); err != nil {
		t.Fatal(err)
	}
	wf, err := createJob(ctx, f.engine, "p-fixed", "cus_b", outcomeJob{BadItem: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Under a floor, items whose sum is beyond any amount (the second also
	// passes the budget): the item is refused, not summed.
	huge, err := createJob(ctx, f.engine, "p-floor", "cus_b", outcomeJob{Huge: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	done := f.waitTerminal(t, settleflow.Test, wf.ID, huge.ID)
	for _, w := range done {
		if w.Status != settleflow.Failed || w.Charged != nil {
			t.Fatalf("%s %+v", w.Status, w.Failure)
		}
	}
	for _, w := range done {
		if w.Failure.Code != settleflow.FailureExecutionFailed || !strings.Contains(w.Failure.Message, "unusable cost item") {
			t.Fatalf("failure %+v does not name the cost item", w.Failure)
		}
	}
	waitAvailable(t, f, "cus_b", 2*outcomeQuote)
}
