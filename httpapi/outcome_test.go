package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/criteria"
)

// job is the payload of the outcome-* test products: what to estimate, and
// what the execution reports.
type job struct {
	// Estimate is the estimated cost (minor units).
	Estimate int64 `json:"estimate"`
	// Status is the result's "status" ("resolved" meets the criteria).
	Status string `json:"status"`
	// Cost is Execution.ActualCost.
	Cost int64 `json:"cost"`
	// Spend is reported through ReportSpend as the product runs, one model
	// item each; Items are Execution.CostItems, tools.
	Spend []int64 `json:"spend"`
	Items []int64 `json:"items"`
}

const resolved = `{"type":"exact","path":"/status","value":"resolved"}`

// registerOutcomeProducts registers one product per pricing model, each
// quoting ceil(estimate / 0.7):
//
//	outcome-fixed    fixed, margin floor 0.2, criteria (recorded only)
//	outcome-capped   capped, markup 0.2, minimum charge 50
//	outcome-success  success_fee
//	outcome-hybrid   hybrid, base share 0.3
func registerOutcomeProducts(t *testing.T, p *settleflow.Products) {
	t.Helper()
	execute := func(ctx context.Context, j job) (settleflow.Execution, error) {
		for _, a := range j.Spend {
			if err := settleflow.ReportSpend(ctx, settleflow.CostItem{Category: settleflow.CostModel, Provider: "llm", Units: 1000, Amount: a}); err != nil {
				return settleflow.Execution{}, err
			}
		}
		ex := settleflow.Execution{ActualCost: j.Cost, Result: map[string]any{"status": j.Status}}
		for _, a := range j.Items {
			ex.CostItems = append(ex.CostItems, settleflow.CostItem{Category: settleflow.CostTools, Provider: "ocr", Units: 2, Amount: a})
		}
		return ex, nil
	}
	estimate := func(j job) (int64, error) { return j.Estimate, nil }
	crit := criteria.MustParse(resolved)
	for _, prod := range []settleflow.Product[job]{
		{Name: "outcome-fixed", Price: settleflow.Price{Model: settleflow.PricingFixed, TargetMargin: 3000}, MarginFloor: 2000, SuccessCriteria: crit},
		{Name: "outcome-capped", Price: settleflow.Price{Model: settleflow.PricingCapped, TargetMargin: 3000, Markup: 2000, MinimumCharge: 50}},
		{Name: "outcome-success", Price: settleflow.Price{Model: settleflow.PricingSuccessFee, TargetMargin: 3000}, SuccessCriteria: crit},
		{Name: "outcome-hybrid", Price: settleflow.Price{Model: settleflow.PricingHybrid, TargetMargin: 3000, BaseShare: 3000}, SuccessCriteria: crit},
	} {
		prod.Description, prod.PricingSummary = "Outcome test.", "the estimate / 0.7"
		prod.Estimate, prod.Execute = estimate, execute
		if err := settleflow.Register(p, prod); err != nil {
			t.Fatal(err)
		}
	}
}

func outcomeEnv(t *testing.T) (*env, string) {
	e := newEnv(t, envOptions{register: registerOutcomeProducts})
	return e, e.keys.create(t, settleflow.Test, "pro")
}

// outcomeBody is a create (or quote) body for product with payload j and
// extra members (`"marginFloor":0.25`).
func outcomeBody(t *testing.T, product string, j job, extra ...string) string {
	t.Helper()
	payload, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	b := `{"product":"` + product + `","customerId":"cus_outcome","payload":` + string(payload)
	for _, x := range extra {
		b += "," + x
	}
	return b + "}"
}

// compact is v as JSON, with object members sorted.
func compact(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// canon is the JSON text s with object members sorted, as compact writes
// what was decoded.
func canon(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return compact(t, v)
}

// The catalogue shows each product's pricing, default criteria and floor.
func TestProductsShowPricing(t *testing.T) {
	e, key := outcomeEnv(t)
	want := map[string][3]string{
		"ticket-triage":   {`{"model":"fixed"}`, `null`, `null`},
		"outcome-fixed":   {`{"model":"fixed"}`, resolved, `0.2`},
		"outcome-capped":  {`{"markup":0.2,"minimumCharge":{"amount":50,"currency":"usd"},"model":"capped"}`, `null`, `null`},
		"outcome-success": {`{"model":"success_fee"}`, resolved, `null`},
		"outcome-hybrid":  {`{"baseShare":0.3,"model":"hybrid"}`, resolved, `null`},
	}
	r := e.do("GET", "/v1/products", key, "")
	data := r.json(t)["data"].([]any)
	if r.status != http.StatusOK || len(data) != len(want) {
		t.Fatalf("products: %d %s", r.status, r.body)
	}
	for _, d := range data {
		p := d.(map[string]any)
		w, ok := want[p["name"].(string)]
		if !ok {
			t.Fatalf("unexpected product %v", p["name"])
		}
		w = [3]string{canon(t, w[0]), canon(t, w[1]), canon(t, w[2])}
		if got := [3]string{compact(t, p["pricing"]), compact(t, p["successCriteria"]), compact(t, p["marginFloor"])}; got != w {
			t.Errorf("%s: pricing, successCriteria, marginFloor = %v, want %v", p["name"], got, w)
		}
	}
}

// A quote shows the pricing, the criteria and floor in force and the
// budget the floor leaves; a create stores the same terms on the workflow.
func TestQuoteAndWorkflowCarryTerms(t *testing.T) {
	e, key := outcomeEnv(t)
	ownCriteria := `{"type":"numeric_threshold","path":"/score","op":">=","value":0.8}`
	for _, c := range []struct {
		name, body                                string
		quoted                                    int64
		pricing, criteria, floor, budget, wfFloor string
	}{
		{"fixed with the product's floor", outcomeBody(t, "outcome-fixed", job{Estimate: 700}), 1000,
			`{"model":"fixed"}`, resolved, `0.2`, `{"amount":800,"currency":"usd"}`, `0.2`},
		{"fixed with a higher floor", outcomeBody(t, "outcome-fixed", job{Estimate: 700}, `"marginFloor":0.25`), 1000,
			`{"model":"fixed"}`, resolved, `0.25`, `{"amount":750,"currency":"usd"}`, `0.25`},
		{"a floor with a fifth decimal of zero and an exponent", outcomeBody(t, "outcome-fixed", job{Estimate: 700}, `"marginFloor":2.5000e-1`), 1000,
			`{"model":"fixed"}`, resolved, `0.25`, `{"amount":750,"currency":"usd"}`, `0.25`},
		{"floor 0 keeps the product's", outcomeBody(t, "outcome-fixed", job{Estimate: 699}, `"marginFloor":0`), 999,
			`{"model":"fixed"}`, resolved, `0.2`, `{"amount":799,"currency":"usd"}`, `0.2`},
		{"floor null keeps the product's; budget rounds down", outcomeBody(t, "outcome-fixed", job{Estimate: 699}, `"marginFloor":null`, `"successCriteria":null`), 999,
			`{"model":"fixed"}`, resolved, `0.2`, `{"amount":799,"currency":"usd"}`, `0.2`},
		{"capped without a floor", outcomeBody(t, "outcome-capped", job{Estimate: 700}), 1000,
			`{"markup":0.2,"minimumCharge":{"amount":50,"currency":"usd"},"model":"capped"}`, `null`, `null`, `null`, `null`},
		{"capped with a floor of its own", outcomeBody(t, "outcome-capped", job{Estimate: 7}, `"marginFloor":0.3`), 50,
			`{"markup":0.2,"minimumCharge":{"amount":50,"currency":"usd"},"model":"capped"}`, `null`, `0.3`, `{"amount":35,"currency":"usd"}`, `0.3`},
		{"success fee with the request's criteria", outcomeBody(t, "outcome-success", job{Estimate: 70}, `"successCriteria":`+ownCriteria), 100,
			`{"model":"success_fee"}`, `{"type":"numeric_threshold","path":"/score","value":0.8,"op":">="}`, `null`, `null`, `null`},
		{"hybrid", outcomeBody(t, "outcome-hybrid", job{Estimate: 70}), 100,
			`{"baseShare":0.3,"model":"hybrid"}`, resolved, `null`, `null`, `null`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("POST", "/v1/quotes", key, c.body)
			if r.status != http.StatusOK {
				t.Fatalf("quote: %d %s", r.status, r.body)
			}
			q := r.json(t)
			got := [5]string{compact(t, q["quoted"]), compact(t, q["pricing"]), compact(t, q["successCriteria"]), compact(t, q["marginFloor"]), compact(t, q["budget"])}
			want := [5]string{compact(t, map[string]any{"amount": c.quoted, "currency": "usd"}), canon(t, c.pricing), canon(t, c.criteria), c.floor, canon(t, c.budget)}
			if got != want {
				t.Fatalf("quote %s:\n got %v\nwant %v", r.body, got, want)
			}
			w := e.create(key, c.body)
			if w.status != http.StatusCreated {
				t.Fatalf("create: %d %s", w.status, w.body)
			}
			wf := w.json(t)
			got = [5]string{compact(t, wf["quoted"]), compact(t, wf["pricing"]), compact(t, wf["successCriteria"]), compact(t, wf["marginFloor"]),
				compact(t, []any{wf["charged"], wf["cost"], wf["outcome"]})}
			want = [5]string{want[0], canon(t, c.pricing), canon(t, c.criteria), c.wfFloor, `[null,null,null]`}
			if got != want {
				t.Fatalf("workflow %s:\n got %v\nwant %v", w.body, got, want)
			}
		})
	}
}

// Every refusal of the new parameters is a 400 in the error envelope,
// naming the parameter (the node of a criteria tree), the same for a quote
// and a create, and a refused create stores nothing.
func TestOutcomeParametersRefused(t *testing.T) {
	e, key := outcomeEnv(t)
	fixed := func(extra ...string) string { return outcomeBody(t, "outcome-fixed", job{Estimate: 700}, extra...) }
	for _, c := range []struct {
		name, body, code, param string
	}{
		{"malformed pattern", outcomeBody(t, "outcome-success", job{Estimate: 70},
			`"successCriteria":{"type":"all_of","criteria":[`+resolved+`,{"type":"regex","path":"/summary","pattern":"(unclosed"}]}`),
			"parameter_invalid", "successCriteria.criteria[1].pattern"},
		{"unknown node type", fixed(`"successCriteria":{"type":"any_of","criteria":[{"type":"fuzzy","path":""}]}`), "parameter_invalid", "successCriteria.criteria[0].type"},
		{"a field of another type", fixed(`"successCriteria":{"type":"not","criterion":{"type":"exact","path":"/a","value":1,"op":">"}}`), "parameter_invalid", "successCriteria.criterion.op"},
		{"a name in another case", fixed(`"successCriteria":{"type":"exact","Path":"/a","value":1}`), "parameter_invalid", "successCriteria.Path"},
		{"pattern too long", fixed(`"successCriteria":{"type":"regex","path":"","pattern":"` + strings.Repeat("a", 1001) + `"}`), "parameter_invalid", "successCriteria.pattern"},
		{"too deep", fixed(`"successCriteria":` + strings.Repeat(`{"type":"not","criterion":`, 8) + resolved + strings.Repeat("}", 8)), "parameter_invalid", "successCriteria" + strings.Repeat(".criterion", 8)},
		{"not an object", fixed(`"successCriteria":"resolved"`), "parameter_invalid", "successCriteria"},
		{"empty all_of", fixed(`"successCriteria":{"type":"all_of","criteria":[]}`), "parameter_invalid", "successCriteria.criteria"},
		{"floor below the product's", fixed(`"marginFloor":0.1`), "parameter_invalid", "marginFloor"},
		{"margin below the floor", fixed(`"marginFloor":0.35`), "margin_below_floor", "marginFloor"},
		{"margin below the floor of a product without one", outcomeBody(t, "outcome-capped", job{Estimate: 700}, `"marginFloor":0.3001`), "margin_below_floor", "marginFloor"},
		{"floor with five decimals", fixed(`"marginFloor":0.25001`), "parameter_invalid", "marginFloor"},
		{"floor of 1", fixed(`"marginFloor":1`), "parameter_invalid", "marginFloor"},
		{"floor of 1 in disguise", fixed(`"marginFloor":0.1e1`), "parameter_invalid", "marginFloor"},
		{"negative floor", fixed(`"marginFloor":-0.25`), "parameter_invalid", "marginFloor"},
		{"floor as a string", fixed(`"marginFloor":"0.25"`), "parameter_invalid", "marginFloor"},
		{"floor as a percentage", fixed(`"marginFloor":25`), "parameter_invalid", "marginFloor"},
		{"floor with a huge exponent", fixed(`"marginFloor":1e-999999999999`), "parameter_invalid", "marginFloor"},
		{"floor given twice", fixed(`"marginFloor":0.25`, `"marginFloor":0.3`), "parameter_invalid", "marginFloor"},
		{"floor in another case", fixed(`"MarginFloor":0.25`), "parameter_unknown", "MarginFloor"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := countWorkflows(t, e)
			q, w := e.do("POST", "/v1/quotes", key, c.body), e.create(key, c.body)
			qe, we := q.errorObject(t), w.errorObject(t)
			if q.status != http.StatusBadRequest || qe["type"] != "invalid_request_error" || qe["code"] != c.code || qe["param"] != c.param {
				t.Fatalf("quote: %d %s, want 400 %s naming %s", q.status, q.body, c.code, c.param)
			}
			if w.status != q.status || we["code"] != qe["code"] || we["param"] != qe["param"] || we["message"] != qe["message"] || we["requestId"] != w.header.Get("Request-Id") {
				t.Fatalf("create %d %s differs from quote %s", w.status, w.body, q.body)
			}
			if msg, _ := qe["message"].(string); msg == "" {
				t.Fatal("no message")
			}
			if n := countWorkflows(t, e); n != before {
				t.Fatalf("a refused create stored a workflow: %d → %d", before, n)
			}
		})
	}
}

// An Idempotency-Key replays a create only with the same criteria and
// floor.
func TestIdempotencyCoversTerms(t *testing.T) {
	e, key := outcomeEnv(t)
	body := outcomeBody(t, "outcome-fixed", job{Estimate: 700}, `"marginFloor":0.25`)
	first := e.create(key, body, "Idempotency-Key", "terms-1")
	again := e.create(key, body, "Idempotency-Key", "terms-1")
	if first.status != http.StatusCreated || again.header.Get("Idempotent-Replayed") != "true" || string(again.body) != string(first.body) {
		t.Fatalf("replay: %d %s\nfirst: %d %s", again.status, again.body, first.status, first.body)
	}
	for _, other := range []string{
		outcomeBody(t, "outcome-fixed", job{Estimate: 700}, `"marginFloor":0.26`),
		outcomeBody(t, "outcome-fixed", job{Estimate: 700}, `"marginFloor":0.25`, `"successCriteria":{"type":"exact","path":"/status","value":"closed"}`),
	} {
		if r := e.create(key, other, "Idempotency-Key", "terms-1"); r.status != http.StatusConflict || r.errorObject(t)["code"] != "idempotency_key_reused" {
			t.Fatalf("other terms under the same key: %d %s", r.status, r.body)
		}
	}
}

// Workflows of every pricing model run to the end, read back over HTTP:
// what they are charged, their cost breakdown, outcome and achieved margin;
// a charge of 0 is Settled with no settlement and nothing taken from the
// customer; a spend past the floor's budget fails the workflow; a cost past
// it at the end is flagged by workflow.margin_below_floor; the margins
// report sums what was charged. Every answer is validated against the
// OpenAPI document.
func TestOutcomeRoundTrip(t *testing.T) {
	e, fs := newFundsEnv(t, envOptions{register: registerOutcomeProducts})
	key := e.keys.create(t, settleflow.Test, "pro")
	e.deposit(fs, "cus_outcome", 100_000)
	create := func(product string, j job) string {
		t.Helper()
		r := e.create(key, outcomeBody(t, product, j))
		if r.status != http.StatusCreated {
			t.Fatalf("create %s: %d %s", product, r.status, r.body)
		}
		return r.json(t)["id"].(string)
	}
	type want struct {
		status                    settleflow.Status
		quoted                    int64
		charged, cost, achieved   string
		items                     string
		success, settled, failure string
	}
	cases := []struct {
		name, product string
		job           job
		want          want
	}{
		{"success fee met", "outcome-success", job{Estimate: 70, Status: "resolved", Items: []int64{20, 10}},
			want{settleflow.Settled, 100, `{"amount":100,"currency":"usd"}`, `30`, `0.7`,
				`[{"amount":20,"category":"tools","provider":"ocr","units":2},{"amount":10,"category":"tools","provider":"ocr","units":2}]`, `true`, "yes", `null`}},
		{"success fee not met: a charge of 0", "outcome-success", job{Estimate: 70, Status: "open", Cost: 30},
			want{settleflow.Settled, 100, `{"amount":0,"currency":"usd"}`, `30`, `-0.3`, `[]`, `false`, "no", `null`}},
		{"capped: cost plus markup, rounded up", "outcome-capped", job{Estimate: 700, Cost: 333},
			want{settleflow.Settled, 1000, `{"amount":400,"currency":"usd"}`, `333`, `0.1675`, `[]`, `null`, "yes", `null`}},
		{"hybrid not met: the base, rounded up", "outcome-hybrid", job{Estimate: 699, Status: "open", Cost: 100},
			want{settleflow.Settled, 999, `{"amount":300,"currency":"usd"}`, `100`, `0.6667`, `[]`, `false`, "yes", `null`}},
		{"spend past the budget: stopped", "outcome-fixed", job{Estimate: 700, Status: "resolved", Spend: []int64{500, 400, 1}},
			want{settleflow.Failed, 1000, `null`, `900`, `null`,
				`[{"amount":500,"category":"model","provider":"llm","units":1000},{"amount":400,"category":"model","provider":"llm","units":1000}]`, `null`, "no", `"margin_floor_exceeded"`}},
		{"cost past the budget at the end: charged, flagged", "outcome-fixed", job{Estimate: 700, Status: "resolved", Spend: []int64{300}, Items: []int64{550}},
			want{settleflow.Settled, 1000, `{"amount":1000,"currency":"usd"}`, `850`, `0.15`,
				`[{"amount":300,"category":"model","provider":"llm","units":1000},{"amount":550,"category":"tools","provider":"ocr","units":2}]`, `true`, "yes", `null`}},
	}
	ids := make([]string, len(cases))
	for i, c := range cases {
		ids[i] = create(c.product, c.job)
	}
	for i, c := range cases {
		wf := e.waitWorkflow(key, ids[i], c.want.status)
		cost, _ := wf["cost"].(map[string]any)
		if cost == nil {
			t.Fatalf("%s: no cost: %v", c.name, wf)
		}
		outcome, _ := wf["outcome"].(map[string]any)
		var success any
		if outcome != nil {
			success = outcome["success"]
		}
		var failure any
		if f, ok := wf["failure"].(map[string]any); ok {
			failure = f["code"]
		}
		settled := "no"
		if wf["settlement"] != nil {
			settled = "yes"
		}
		got := want{settleflow.Status(wf["status"].(string)), int64(wf["quoted"].(map[string]any)["amount"].(float64)),
			compact(t, wf["charged"]), compact(t, cost["amount"]), compact(t, wf["margin"].(map[string]any)["achieved"]),
			compact(t, cost["items"]), compact(t, success), settled, compact(t, failure)}
		if w := c.want; got != w {
			t.Errorf("%s: workflow %v\n got %+v\nwant %+v", c.name, wf, got, w)
		}
		if outcome != nil && len(outcome["trace"].([]any)) != 1 {
			t.Errorf("%s: trace %v", c.name, outcome["trace"])
		}
	}
	// The charge of 0 never reached the chain: the customer paid for the
	// others only (the Failed one nothing).
	if got, want := fs.Balance(settleflow.Test, "cus_outcome"), int64(100_000-100-400-300-1000); got != want {
		t.Errorf("balance %d, want %d", got, want)
	}
	r, evs := e.waitEvents(key, "workflow.margin_below_floor", 1)
	if len(evs) != 1 || evs[0].Data.WorkflowID != ids[5] || evs[0].Data.Status != settleflow.Settling || evs[0].Data.Charged == nil ||
		evs[0].Data.Charged.Amount != 1000 || evs[0].Data.Cost == nil || evs[0].Data.Cost.Amount != 850 {
		t.Fatalf("workflow.margin_below_floor events: %s", r.body)
	}
	r, evs = e.waitEvents(key, "workflow.completed", 5)
	var zero *settleflow.Event
	for i := range evs {
		if evs[i].Data.WorkflowID == ids[1] {
			zero = &evs[i]
		}
	}
	if zero == nil || zero.Data.Charged == nil || zero.Data.Charged.Amount != 0 || zero.Data.Settlement != nil || zero.Data.Pricing == nil ||
		zero.Data.Pricing.Model != settleflow.PricingSuccessFee || zero.Data.Outcome == nil || zero.Data.Outcome.Success {
		t.Fatalf("workflow.completed of the charge of 0: %s", r.body)
	}
	r, evs = e.waitEvents(key, "workflow.failed", 1)
	if len(evs) != 1 || evs[0].Data.Failure == nil || evs[0].Data.Failure.Code != settleflow.FailureMarginFloorExceeded || evs[0].Data.Charged != nil {
		t.Fatalf("workflow.failed: %s", r.body)
	}
	// The margins report counts what was charged: the success fee's two
	// workflows charged 100 + 0 and cost 30 + 30.
	m := e.do("GET", "/v1/margins?groupBy=product&product=outcome-success", key, "")
	if m.status != http.StatusOK {
		t.Fatalf("margins: %d %s", m.status, m.body)
	}
	row := m.json(t)["total"].(map[string]any)
	if compact(t, []any{row["workflows"], row["charged"], row["cost"], row["margin"]}) != `[2,{"amount":100,"currency":"usd"},{"amount":60,"currency":"usd"},0.4]` {
		t.Fatalf("margins: %s", m.body)
	}
	// A workflow charged 0 has nothing to refund.
	if r := e.do("POST", "/v1/workflows/"+ids[1]+"/refunds", key, ""); r.status != http.StatusBadRequest || r.errorObject(t)["code"] != "amount_exceeds_refundable" {
		t.Fatalf("refund of a charge of 0: %d %s", r.status, r.body)
	}
}
