package dashboard

import (
	"context"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/criteria"
	"github.com/settleflow/settleflow/internal/fundstest"
)

// Hostile strings a product or a customer's result can put on the page.
const (
	hostileProvider = `<img src=x onerror=alert(1)>`
	hostilePath     = `/<script>alert(2)</script>`
)

// gradedCriteria is the "graded" product's success criteria: status
// resolved, confidence at least 0.8, and any of a capitalised summary, a
// labels array that is not empty, or a value at a hostile path.
const gradedCriteria = `{"type":"all_of","criteria":[
	{"type":"exact","path":"/status","value":"resolved"},
	{"type":"numeric_threshold","path":"/confidence","op":">=","value":0.8},
	{"type":"any_of","criteria":[
		{"type":"regex","path":"/summary","pattern":"^[A-Z]"},
		{"type":"not","criterion":{"type":"json_schema","path":"/labels","schema":{"type":"array","maxItems":0}}},
		{"type":"exact","path":"` + hostilePath + `","value":true}
	]}
]}`

// outcomeFixture is a dashboard whose engine charges test customers'
// balances (fundstest) and runs these products, all of customer
// cus_outcome:
//
//   - graded: hybrid pricing (base 30 %), target 25 %, margin floor 20 %,
//     estimate 3.00: quoted 4.00, base 1.20, budget 3.20. It spends 2.92 in
//     five items over four categories (one provider hostile); its result
//     meets gradedCriteria when the payload's ref is "met" (charged 4.00),
//     not otherwise (charged the base, 1.20).
//   - bounty: success-fee pricing, target 20 %, estimate 1.00: quoted
//     1.25; its result never meets its criteria, so it is charged 0 and
//     Settled without a transaction.
//   - runaway: fixed pricing, target 30 %, margin floor 25 %, estimate
//     1.00: quoted 1.43, budget 1.07; it reports 0.40 at a time until the
//     engine stops it at 1.20 (margin_floor_exceeded).
type outcomeFixture struct {
	*fixture
	met, unmet, zero, stopped *settleflow.Workflow
}

func newOutcomeFixture(t *testing.T) *outcomeFixture {
	t.Helper()
	f := newFixtureWith(t, func(o *settleflow.Options) {
		fs := fundstest.New()
		fs.LiveUnfunded = true
		o.Settler = fs
		o.PollInterval = 20 * time.Millisecond
		o.SettlementPollInterval = 20 * time.Millisecond
		o.FundsPollInterval = 20 * time.Millisecond
		must := func(err error) {
			if err != nil {
				t.Fatal(err)
			}
		}
		must(settleflow.Register(o.Products, settleflow.Product[item]{
			Name:            "graded",
			Price:           settleflow.Price{Model: settleflow.PricingHybrid, TargetMargin: 2500, BaseShare: 3000},
			SuccessCriteria: criteria.MustParse(gradedCriteria),
			MarginFloor:     2000,
			Estimate:        func(item) (int64, error) { return 300, nil },
			Execute: func(_ context.Context, p item) (settleflow.Execution, error) {
				result := map[string]any{"status": "open", "confidence": 0.42, "summary": "<b>escalated</b>", "labels": []string{}}
				if p.Ref == "met" {
					result = map[string]any{"status": "resolved", "confidence": 0.92, "summary": "<b>Refund</b> issued", "labels": []string{"billing"}}
				}
				return settleflow.Execution{Result: result, CostItems: []settleflow.CostItem{
					{Category: settleflow.CostModel, Provider: "openai", Units: 12000, Amount: 150},
					{Category: settleflow.CostTools, Provider: "ocr-service", Units: 4, Amount: 30},
					{Category: settleflow.CostModel, Provider: "anthropic", Units: 3000, Amount: 40},
					{Category: settleflow.CostHuman, Provider: hostileProvider, Units: 1, Amount: 60},
					{Category: settleflow.CostCompute, Units: 850, Amount: 12},
				}}, nil
			},
		}))
		must(settleflow.Register(o.Products, settleflow.Product[item]{
			Name:            "bounty",
			Price:           settleflow.Price{Model: settleflow.PricingSuccessFee, TargetMargin: 2000},
			SuccessCriteria: criteria.MustParse(`{"type":"exact","path":"/status","value":"resolved"}`),
			Estimate:        func(item) (int64, error) { return 100, nil },
			Execute: func(context.Context, item) (settleflow.Execution, error) {
				return settleflow.Execution{Result: map[string]any{"status": "escalated"},
					CostItems: []settleflow.CostItem{{Category: settleflow.CostModel, Provider: "openai", Units: 5000, Amount: 80}}}, nil
			},
		}))
		must(settleflow.Register(o.Products, settleflow.Product[item]{
			Name:        "runaway",
			Price:       settleflow.Price{TargetMargin: 3000},
			MarginFloor: 2500,
			Estimate:    func(item) (int64, error) { return 100, nil },
			Execute: func(ctx context.Context, _ item) (settleflow.Execution, error) {
				for {
					if err := settleflow.ReportSpend(ctx, settleflow.CostItem{Category: settleflow.CostModel, Provider: "openai", Units: 2000, Amount: 40}); err != nil {
						return settleflow.Execution{}, err
					}
				}
			},
		}))
	})
	if err := f.engine.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	o := &outcomeFixture{fixture: f}
	o.met = o.finished("graded", "met", settleflow.Settled)
	o.unmet = o.finished("graded", "unmet", settleflow.Settled)
	o.zero = o.finished("bounty", "Z", settleflow.Settled)
	o.stopped = o.finished("runaway", "R", settleflow.Failed)
	return o
}

// finished creates a test workflow of product for cus_outcome and waits
// until it is want.
func (o *outcomeFixture) finished(product, ref string, want settleflow.Status) *settleflow.Workflow {
	o.t.Helper()
	ctx := context.Background()
	wf, _, err := o.engine.Create(ctx, settleflow.CreateParams{Environment: settleflow.Test, Product: product, CustomerID: "cus_outcome",
		Payload: []byte(`{"ref":"` + ref + `"}`)})
	if err != nil {
		o.t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, err := o.engine.Fetch(ctx, settleflow.Test, wf.ID)
		if err != nil {
			o.t.Fatal(err)
		}
		if got.Status == want {
			return got
		}
		if got.Status.Terminal() || time.Now().After(deadline) {
			o.t.Fatalf("workflow %s of %s is %s (%+v), want %s", wf.ID, product, got.Status, got.Failure, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var (
	tagRE   = regexp.MustCompile(`<[^>]*>`)
	spaceRE = regexp.MustCompile(`\s+`)
	punctRE = regexp.MustCompile(`\s+([:,.;)])`)
)

// plain is HTML as text: tags dropped (as spaces), entities decoded,
// spaces collapsed and none before punctuation.
func plain(h string) string {
	s := html.UnescapeString(tagRE.ReplaceAllString(h, " "))
	return strings.TrimSpace(punctRE.ReplaceAllString(spaceRE.ReplaceAllString(s, " "), "$1"))
}

// textOf is the text of the element of body with the id up to the first
// end tag of its name (enough for the elements tested, which hold no
// element of their own name), tags dropped, entities decoded and spaces
// collapsed; "" if there is none.
func textOf(body, id string) string {
	at := strings.Index(body, ` id="`+id+`"`)
	if at < 0 {
		return ""
	}
	open := strings.LastIndex(body[:at], "<")
	name := strings.FieldsFunc(body[open+1:at+1], func(r rune) bool { return r == ' ' || r == '>' })[0]
	inner := body[open:]
	if end := strings.Index(inner, "</"+name+">"); end >= 0 {
		inner = inner[:end]
	}
	return plain(inner)
}

// The workflow page, from the store: the pricing, the charge against the
// quote, the margin floor's budget, the cost by category and the outcome's
// trace, for each pricing model and a workflow stopped at its margin floor;
// the lists show the charge beside the quote.
func TestWorkflowPageOutcome(t *testing.T) {
	o := newOutcomeFixture(t)
	csrf := o.signIn()

	body := o.checkPage("/dashboard/workflows/"+o.met.ID, csrf)
	for id, want := range map[string]string{
		"pricing":         "Hybrid a base fee of 30.00% of the quote (USD 1.20) whatever the outcome, plus a success bonus (USD 2.80) if it meets the success criteria",
		"quoted":          "USD 4.00 the most it can be charged",
		"charged":         "USD 4.00 (outcome met: base fee and success bonus)",
		"margin-floor":    "20.00% budget USD 3.20: the most it may spend at the quote and keep this margin",
		"cost-total":      "Total 5 items USD 2.92 91.3% of the USD 3.20 budget",
		"outcome-verdict": "✓ Outcome met: the result meets the success criteria, so the base fee and the success bonus are charged.",
	} {
		if got := textOf(body, id); got != want {
			t.Errorf("met, #%s: %q, want %q", id, got, want)
		}
	}
	// The categories in their order, model's two providers under it.
	cats := regexp.MustCompile(`<tbody class="cost-group" data-category="(\w+)">`).FindAllStringSubmatch(body, -1)
	var order []string
	for _, c := range cats {
		order = append(order, c[1])
	}
	if got := strings.Join(order, " "); got != "model tools compute human" {
		t.Errorf("cost categories %q", got)
	}
	table := textOf(body, "cost-breakdown")
	for _, want := range []string{
		"model 2 items USD 1.90 65.1% openai 12,000 USD 1.50 anthropic 3,000 USD 0.40",
		"tools ocr-service 4 USD 0.30 10.3%",
		"compute unnamed 850 USD 0.12 4.1%",
		"human " + hostileProvider + " 1 USD 0.60 20.5%",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("the cost breakdown lacks %q:\n%s", want, table)
		}
	}
	if strings.Contains(body, hostileProvider) || !strings.Contains(body, html.EscapeString(hostileProvider)) {
		t.Error("the hostile provider is not escaped")
	}
	if !strings.Contains(body, `<rect class="fill" width="65.1" height="8" rx="2"/>`) {
		t.Error("no bar of 65.1 for the model category")
	}
	// The trace: every node, indented by depth, the hostile path escaped.
	rows := regexp.MustCompile(`(?s)<tr class="(yes|no)" data-node="([^"]*)">\s*<td class="node depth-(\d)">`).FindAllStringSubmatch(body, -1)
	var trace []string
	for _, r := range rows {
		trace = append(trace, r[1]+":"+r[3]+":"+r[2])
	}
	want := "yes:0: yes:1:criteria[0] yes:1:criteria[1] yes:1:criteria[2] no:2:criteria[2].criteria[0] yes:2:criteria[2].criteria[1] no:3:criteria[2].criteria[1].criterion no:2:criteria[2].criteria[2]"
	if got := strings.Join(trace, " "); got != want {
		t.Errorf("trace\n%s\nwant\n%s", got, want)
	}
	tr := textOf(body, "outcome-trace")
	for _, want := range []string{
		"all_of root ✓ matched 3 of 3 criteria matched; all must",
		`exact criteria[0] /status ✓ matched the value at "/status" equals "resolved"`,
		`regex criteria[2].criteria[0] /summary ✗ not matched the value at "/summary" does not match ^[A-Z]`,
		`exact criteria[2].criteria[2] ` + hostilePath + ` ✗ not matched the result has no value at "` + hostilePath + `"`,
	} {
		if !strings.Contains(tr, want) {
			t.Errorf("the trace lacks %q:\n%s", want, tr)
		}
	}
	if strings.Contains(body, "<script>alert(2)") {
		t.Error("the hostile path is not escaped")
	}

	body = o.checkPage("/dashboard/workflows/"+o.unmet.ID, csrf)
	if got, want := textOf(body, "charged"), "USD 1.20 (outcome not met: the base fee only)"; got != want {
		t.Errorf("unmet, #charged: %q, want %q", got, want)
	}
	if got, want := textOf(body, "outcome-verdict"), "✗ Outcome not met: the result does not meet the success criteria, so only the base fee is charged."; got != want {
		t.Errorf("unmet, verdict: %q", got)
	}

	body = o.checkPage("/dashboard/workflows/"+o.zero.ID, csrf)
	for id, want := range map[string]string{
		"pricing":         "Success fee the quote if the outcome meets the success criteria, nothing otherwise",
		"charged":         "USD 0.00 (outcome not met: nothing charged)",
		"cost-total":      "Total 1 item USD 0.80",
		"no-settlement":   "Nothing to settle: a charge of 0 never goes on chain, so there is no transaction.",
		"refund-hint":     "Nothing was charged, so there is nothing to refund.",
		"outcome-verdict": "✗ Outcome not met: the result does not meet the success criteria, so nothing is charged.",
	} {
		if got := textOf(body, id); got != want {
			t.Errorf("zero, #%s: %q, want %q", id, got, want)
		}
	}

	body = o.checkPage("/dashboard/workflows/"+o.stopped.ID, csrf)
	for id, want := range map[string]string{
		"status":       "Failed",
		"pricing":      "Fixed the quote, whatever the outcome",
		"charged":      "— (nothing charged)",
		"margin-floor": "25.00% budget USD 1.07: the most it may spend at the quote and keep this margin spent USD 0.13 over the budget",
		"cost-total":   "Total 3 items USD 1.20 112.1% of the USD 1.07 budget",
	} {
		if got := textOf(body, id); got != want {
			t.Errorf("stopped, #%s: %q, want %q", id, got, want)
		}
	}
	if got := textOf(body, "failure"); !strings.HasPrefix(got, "Stopped at its margin floor. The product reported spending USD 1.20, more than its budget of USD 1.07 (what its margin floor of 25.00% leaves at the quoted USD 1.43), so the engine stopped it. Nothing was charged;") ||
		!strings.Contains(got, "margin_floor_exceeded") {
		t.Errorf("stopped, #failure: %q", got)
	}
	if !strings.Contains(body, `<svg class="meter over"`) {
		t.Error("the budget's bar of an overspent workflow is not marked over")
	}
	if strings.Contains(body, `id="outcome-trace"`) || strings.Contains(body, "<h2>Outcome</h2>") {
		t.Error("an outcome section for a workflow without criteria")
	}

	// The lists: the charge beside the quote.
	for _, path := range []string{"/dashboard/workflows", "/dashboard/customers/cus_outcome"} {
		body = o.checkPage(path, csrf)
		for _, c := range []struct {
			wf   *settleflow.Workflow
			want string
		}{{o.met, "USD 4.00 USD 4.00"}, {o.unmet, "USD 4.00 USD 1.20"}, {o.zero, "USD 1.25 USD 0.00"}, {o.stopped, "USD 1.43 —"}} {
			row := regexp.MustCompile(`(?s)<tr>\s*<td><a href="/dashboard/workflows/` + c.wf.ID + `">.*?</tr>`).FindString(body)
			got := plain(row)
			if !strings.Contains(got, c.want) {
				t.Errorf("%s, %s: %q lacks %q", path, c.wf.ID, got, c.want)
			}
		}
	}
}

// renderWorkflow renders the workflow page of wf as the handler would,
// without a store: no events, refunds or customer.
func renderWorkflow(t *testing.T, wf *settleflow.Workflow) string {
	t.Helper()
	pages, err := parsePages()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	p := page{Prefix: "/dashboard/", Title: wf.ID, Nav: "workflows", Env: settleflow.Test, CSRF: "csrf-token",
		Data: newWorkflowData(wf, nil, refundView{Funded: true, Left: wf.ChargeAmount(), Form: refundForm{Amount: "1.00", Key: "k"}})}
	if err := pages["workflow"].ExecuteTemplate(&b, "layout", p); err != nil {
		t.Fatal(err)
	}
	(&fixture{t: t}).checkHTML("workflow "+wf.ID, b.String(), "csrf-token")
	return b.String()
}

func usd(a int64) *settleflow.Money { return &settleflow.Money{Amount: a, Currency: "usd"} }

func bp(b settleflow.BasisPoints) *settleflow.BasisPoints { return &b }

// The workflow page from Workflow values: every pricing model's terms, the
// charge before and after it is decided, a cost with and without items,
// and hostile strings from products and results escaped wherever they
// land.
func TestWorkflowPageRender(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	base := func(id string, st settleflow.Status) *settleflow.Workflow {
		return &settleflow.Workflow{ID: id, Product: "triage", CustomerID: "cus_r", Payload: []byte(`{"ref":"x"}`),
			Quoted: settleflow.Money{Amount: 250, Currency: "usd"}, Pricing: settleflow.Pricing{Model: settleflow.PricingFixed},
			Margin: settleflow.Margin{Target: 2000}, Status: st, CreatedAt: now, UpdatedAt: now}
	}

	t.Run("pending", func(t *testing.T) {
		wf := base("wf_pending", settleflow.Pending)
		wf.Pricing = settleflow.Pricing{Model: settleflow.PricingSuccessFee}
		wf.SuccessCriteria = []byte(`{"type":"exact","path":"/ok","value":"</pre><script>alert(3)</script>"}`)
		body := renderWorkflow(t, wf)
		for id, want := range map[string]string{
			"charged":      "— (decided once it has run)",
			"cost-none":    "Not known until the workflow has run.",
			"outcome-none": "The result is judged against the success criteria once the workflow has run.",
		} {
			if got := textOf(body, id); got != want {
				t.Errorf("#%s: %q, want %q", id, got, want)
			}
		}
		if strings.Contains(body, "<script>alert(3)") || !strings.Contains(body, "&lt;/pre&gt;&lt;script&gt;alert(3)&lt;/script&gt;") {
			t.Error("the success criteria are not escaped")
		}
		if strings.Contains(body, `id="margin-floor"`) {
			t.Error("a margin floor row without a floor")
		}
	})

	t.Run("capped", func(t *testing.T) {
		wf := base("wf_capped", settleflow.Settled)
		wf.Pricing = settleflow.Pricing{Model: settleflow.PricingCapped, Markup: bp(2000), MinimumCharge: usd(50)}
		wf.Charged, wf.Cost = usd(50), &settleflow.Cost{Amount: 30, Currency: "usd", Items: []settleflow.CostItem{}}
		wf.Settlement = &settleflow.Settlement{TxHash: "0xabc"}
		body := renderWorkflow(t, wf)
		for id, want := range map[string]string{
			"pricing":    "Capped cost plus a markup of 20.00%, at least USD 0.50, at most the quote",
			"charged":    "USD 0.50 (the minimum charge)",
			"cost-total": "USD 0.30 reported as one amount, without a breakdown",
		} {
			if got := textOf(body, id); got != want {
				t.Errorf("#%s: %q, want %q", id, got, want)
			}
		}
		if strings.Contains(body, `id="no-settlement"`) || strings.Contains(body, `id="cost-breakdown"`) {
			t.Error("a charged workflow says it has no settlement, or a breakdown without items")
		}
	})

	t.Run("legacy", func(t *testing.T) {
		// Settled before charges were decided apart: no Charged, no terms.
		wf := base("wf_legacy", settleflow.Settled)
		wf.Pricing = settleflow.Pricing{}
		wf.Settlement = &settleflow.Settlement{TxHash: "0xdef"}
		body := renderWorkflow(t, wf)
		if got, want := textOf(body, "charged"), "USD 2.50 (the quote: recorded before outcome pricing)"; got != want {
			t.Errorf("#charged: %q, want %q", got, want)
		}
		if got, want := textOf(body, "pricing"), "Fixed the quote, whatever the outcome"; got != want {
			t.Errorf("#pricing: %q, want %q", got, want)
		}
	})

	t.Run("hostile", func(t *testing.T) {
		wf := base("wf_hostile", settleflow.Settled)
		wf.Pricing = settleflow.Pricing{Model: settleflow.PricingHybrid, BaseShare: bp(4000)}
		wf.MarginFloor = bp(1000)
		wf.Charged = usd(100)
		wf.Cost = &settleflow.Cost{Amount: 260, Currency: "usd", Items: []settleflow.CostItem{
			{Category: "other", Provider: `"><svg onload=alert(4)>`, Units: 1234567, Amount: 200},
			{Category: "model", Provider: "</td></tr></table><script>alert(5)</script>", Units: 0, Amount: 60},
		}}
		reason := `the value at "/x" is "</td><script>alert(6)</script>"`
		wf.Outcome = &settleflow.Outcome{Success: false, Trace: []settleflow.OutcomeStep{
			{Node: "", Type: "not", Matched: false, Reason: "the criterion matched"},
			{Node: `criterion"><b>`, Path: `/x"><i>`, Type: "exact", Matched: true, Reason: reason},
		}}
		body := renderWorkflow(t, wf)
		for _, bad := range []string{"<svg onload", "<script>alert", "<b>", "<i>"} {
			if strings.Contains(body, bad) {
				t.Errorf("unescaped %q", bad)
			}
		}
		for id, want := range map[string]string{
			"pricing":      "Hybrid a base fee of 40.00% of the quote (USD 1.00) whatever the outcome, plus a success bonus (USD 1.50) if it meets the success criteria",
			"charged":      "USD 1.00 (outcome not met: the base fee only)",
			"margin-floor": "10.00% budget USD 2.25: the most it may spend at the quote and keep this margin spent USD 0.35 over the budget (the product did not stop at it: workflow.margin_below_floor)",
			"cost-total":   "Total 2 items USD 2.60 115.6% of the USD 2.25 budget",
		} {
			if got := textOf(body, id); got != want {
				t.Errorf("#%s: %q, want %q", id, got, want)
			}
		}
		table := textOf(body, "cost-breakdown")
		// model before other, whatever the order reported.
		if want := `model </td></tr></table><script>alert(5)</script> 0 USD 0.60 23.1% other "><svg onload=alert(4)> 1,234,567 USD 2.00 76.9%`; !strings.Contains(table, want) {
			t.Errorf("cost breakdown %q lacks %q", table, want)
		}
		tr := textOf(body, "outcome-trace")
		if want := `not root ✗ not matched the criterion matched exact criterion"><b> /x"><i> ✓ matched ` + reason; !strings.Contains(tr, want) {
			t.Errorf("trace %q lacks %q", tr, want)
		}
		if !strings.Contains(body, `data-node="criterion&#34;&gt;&lt;b&gt;"`) {
			t.Error("the node is not escaped in its attribute")
		}
	})
}
