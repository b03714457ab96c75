package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/settlement"
)

// Issue 26's pricing models, end to end over HTTPS against reference-server
// processes, with the demo products of each model (outcome_products.go):
// each workflow is charged what its model says of its quote, cost and
// outcome (capped: min(cap, max(minimum, ceil(cost × (1 + markup))));
// success_fee: the quote or 0; hybrid: the quote or its base), never more
// than the quote; each customer's balance in the contract falls by exactly
// what its workflows were charged, not by their quotes; a workflow charged 0
// is Settled with no settlement, sends nothing to the chain and gives its
// reservation back; a product that spends past its margin floor's budget
// fails margin_floor_exceeded with its cost recorded and nothing charged;
// every outcome's webhook arrives verified; and `chain reconcile` agrees.

// outcomeCase is one workflow of the scenario and what it must come to.
type outcomeCase struct {
	name     string
	product  string
	customer string // the customer's suffix
	payload  string
	extra    string // more members of the create body (successCriteria, marginFloor)
	model    settleflow.PricingModel
	quote    int64 // the quote, worked out by hand from the product's prices
	cost     int64 // the cost its items add up to, by hand
	// charged is what it is charged; -1: it fails (margin_floor_exceeded)
	// and nothing is charged.
	charged int64
	success *bool // the outcome's verdict; nil when it has no criteria
}

var (
	yes = func() *bool { b := true; return &b }()
	no  = func() *bool { b := false; return &b }()
)

// multiTopic is a question about two topics: resolved, with confidence
// 0.64, below the product's 0.8.
const multiTopic = "Where is my refund? Also the delivery tracking link is broken."

// looserCriteria accept a resolution with confidence from 0.6.
const looserCriteria = `{"type":"all_of","criteria":[{"type":"exact","path":"/status","value":"resolved"},` +
	`{"type":"numeric_threshold","path":"/confidence","op":">=","value":0.6}]}`

// outcomeCases: the arithmetic of each is in its comment (prices and costs
// in outcome_products.go).
var outcomeCases = []outcomeCase{
	// document-extraction, capped, markup 30 %, minimum 25.
	// Clean, 10 pages: estimate 10 + 4×10 = 50, quote ceil(50/0.7) = 72;
	// cost 10 + 10 compute + 20 model = 40; ceil(40 × 1.3) = 52 < 72.
	{name: "capped under the cap", product: "document-extraction", customer: "capped", payload: `{"documentId":"D-clean","pages":10}`,
		model: settleflow.PricingCapped, quote: 72, cost: 40, charged: 52},
	// Scanned, 10 pages: estimate 10 + 6×10 = 70, quote 100; cost 10 + 10 +
	// 20 OCR + 40 model = 80; ceil(80 × 1.3) = 104, capped at 100.
	{name: "capped at the cap", product: "document-extraction", customer: "capped", payload: `{"documentId":"D-scan","pages":10,"quality":"scanned"}`,
		model: settleflow.PricingCapped, quote: 100, cost: 80, charged: 100},
	// Clean, 1 page: estimate 14, quote max(ceil(14/0.7) = 20, 25) = 25;
	// cost 13, ceil(13 × 1.3) = 17, raised to the minimum 25.
	{name: "capped at the minimum", product: "document-extraction", customer: "capped", payload: `{"documentId":"D-one","pages":1}`,
		model: settleflow.PricingCapped, quote: 25, cost: 13, charged: 25},
	// Clean, 120 pages in three batches: estimate 490, quote 700; cost 10 +
	// 120 + 240 = 370, ceil(370 × 1.3) = 481.
	{name: "capped, three batches", product: "document-extraction", customer: "capped", payload: `{"documentId":"D-long","pages":120}`,
		model: settleflow.PricingCapped, quote: 700, cost: 370, charged: 481},
	// Damaged, 10 pages: quote 100, budget floor(100 × 0.9) = 90; after
	// the first pass 80, the second brings 140 > 90: stopped.
	{name: "capped, spends past the floor", product: "document-extraction", customer: "stopped", payload: `{"documentId":"D-damaged","pages":10,"quality":"damaged"}`,
		model: settleflow.PricingCapped, quote: 100, cost: 140, charged: -1},
	// Scanned as above, with the floor raised to 25 % by the create: budget
	// 75; the first OCR pass brings 80 > 75: stopped.
	{name: "capped, floor raised by the request", product: "document-extraction", customer: "stopped", payload: `{"documentId":"D-scan-strict","pages":10,"quality":"scanned"}`,
		extra: `,"marginFloor":0.25`, model: settleflow.PricingCapped, quote: 100, cost: 80, charged: -1},

	// ticket-resolution, success_fee, minimum 100. A short question:
	// estimate 21, quote max(ceil(21/0.4) = 53, 100) = 100; cost 12 + 1
	// model + 3 per search (+2 to escalate).
	{name: "success fee earned", product: "ticket-resolution", customer: "success", payload: `{"ticketId":"T-1","question":"I forgot my password, how do I get back in?"}`,
		model: settleflow.PricingSuccessFee, quote: 100, cost: 16, charged: 100, success: yes},
	{name: "success fee, low confidence", product: "ticket-resolution", customer: "unearned", payload: `{"ticketId":"T-2","question":"` + multiTopic + `"}`,
		model: settleflow.PricingSuccessFee, quote: 100, cost: 19, charged: 0, success: no},
	{name: "success fee, escalated", product: "ticket-resolution", customer: "unearned", payload: `{"ticketId":"T-3","question":"Can you translate the manual into Klingon?"}`,
		model: settleflow.PricingSuccessFee, quote: 100, cost: 18, charged: 0, success: no},
	{name: "success fee, the request's criteria", product: "ticket-resolution", customer: "success", payload: `{"ticketId":"T-4","question":"` + multiTopic + `"}`,
		extra: `,"successCriteria":` + looserCriteria, model: settleflow.PricingSuccessFee, quote: 100, cost: 19, charged: 100, success: yes},

	// lead-enrichment, hybrid, base share 30 %: estimate 23, quote
	// ceil(23/0.6) = 39, base ceil(39 × 0.3) = 12; budget floor(39 × 0.8) = 31.
	// Found by the first provider: cost 3 + 8.
	{name: "hybrid found at once", product: "lead-enrichment", customer: "hybrid", payload: `{"email":"jane.doe@acme.example","company":"Acme"}`,
		model: settleflow.PricingHybrid, quote: 39, cost: 11, charged: 39, success: yes},
	// Found by the second: 3 + 8 + 12.
	{name: "hybrid found second", product: "lead-enrichment", customer: "hybrid", payload: `{"email":"sam@globex.example"}`,
		model: settleflow.PricingHybrid, quote: 39, cost: 23, charged: 39, success: yes},
	// A personal address: two lookups (23), the third (15) would pass the
	// budget of 31, so the product stops: not found, the base is charged.
	{name: "hybrid base only", product: "lead-enrichment", customer: "hybrid", payload: `{"email":"someone@gmail.com"}`,
		model: settleflow.PricingHybrid, quote: 39, cost: 23, charged: 12, success: no},
}

// outcomeTotals is what the scenario leaves on chain.
type outcomeTotals struct {
	charges   int              // workflows charged more than 0: debits on chain
	uncharged int              // Settled workflows charged 0
	balances  map[string]int64 // each customer's expected balance in the contract
	charged   map[string]int64 // each workflow's charge (Settled only)
	quoted    map[string]int64 // each workflow's quote
}

// outcomeDeposit is what each customer of the scenario deposits.
const outcomeDeposit = 10_000

func ceilBps(v int64, bps int64) int64 { return (v*bps + 9999) / 10000 }

// outcomeScenario runs outcomeCases against servers (requests round-robin
// over them) for customers cus_PREFIX_*, and returns what must be on chain.
func outcomeScenario(t *testing.T, servers []*processServer, key string, hooks *moneyHooks, prefix string) outcomeTotals {
	t.Helper()
	var rr int
	pick := func() *processServer { rr++; return servers[rr%len(servers)] }
	cus := func(c outcomeCase) string { return "cus_" + prefix + "_" + c.customer }

	// The catalogue shows each model.
	for product, model := range map[string]string{"document-extraction": "capped", "ticket-resolution": "success_fee", "lead-enrichment": "hybrid", "ticket-triage": "fixed"} {
		code, p := call(t, pick(), key, "GET", "/v1/products/"+product, "", "")
		if pr, _ := p["pricing"].(map[string]any); code != http.StatusOK || pr["model"] != model {
			t.Fatalf("GET /v1/products/%s: HTTP %d %v; want pricing model %s", product, code, p, model)
		}
	}

	// Every customer deposits.
	want := map[string]int64{}
	for _, c := range outcomeCases {
		if _, ok := want[cus(c)]; ok {
			continue
		}
		want[cus(c)] = outcomeDeposit
		code, body := call(t, pick(), key, "POST", "/v1/test_helpers/customers/"+cus(c)+"/fund", fmt.Sprintf(`{"amount":%d}`, outcomeDeposit), "")
		if code != http.StatusOK || balanceOf(body)["available"] != outcomeDeposit {
			t.Fatalf("fund %s: HTTP %d %v", cus(c), code, body)
		}
	}

	// Quote, then create, each case: the quote is the one worked out.
	ids := make([]string, len(outcomeCases))
	for i, c := range outcomeCases {
		body := fmt.Sprintf(`{"product":%q,"customerId":%q,"payload":%s%s}`, c.product, cus(c), c.payload, c.extra)
		code, q := call(t, pick(), key, "POST", "/v1/quotes", body, "")
		if code != http.StatusOK || num(q["quoted"].(map[string]any)["amount"]) != c.quote {
			t.Fatalf("%s: quote: HTTP %d %v; want %d", c.name, code, q, c.quote)
		}
		code, wf := call(t, pick(), key, "POST", "/v1/workflows", body, fmt.Sprintf("outcome-%s-%d", prefix, i))
		pr, _ := wf["pricing"].(map[string]any)
		if code != http.StatusCreated || num(wf["quoted"].(map[string]any)["amount"]) != c.quote || pr["model"] != string(c.model) ||
			wf["charged"] != nil || wf["cost"] != nil || wf["outcome"] != nil {
			t.Fatalf("%s: create: HTTP %d %v", c.name, code, wf)
		}
		ids[i] = wf["id"].(string)
	}

	tot := outcomeTotals{balances: want, charged: map[string]int64{}, quoted: map[string]int64{}}
	for i, c := range outcomeCases {
		wantStatus := "Settled"
		if c.charged < 0 {
			wantStatus = "Failed"
		}
		wf := waitTerminal(t, pick(), key, ids[i])
		if wf["status"] != wantStatus {
			t.Errorf("%s: %v, want %s", c.name, wf, wantStatus)
			continue
		}
		checkOutcome(t, c, wf)
		tot.quoted[ids[i]] = c.quote
		switch {
		case c.charged < 0:
		case c.charged == 0:
			tot.uncharged++
			tot.charged[ids[i]] = 0
		default:
			tot.charges++
			tot.charged[ids[i]] = c.charged
			want[cus(c)] -= c.charged
		}
	}

	// Each customer paid exactly its charges; nothing stays reserved.
	for customer, balance := range want {
		_, c := call(t, pick(), key, "GET", "/v1/customers/"+customer, "", "")
		if b := balanceOf(c); b["onChain"] != balance || b["reserved"] != 0 || b["available"] != balance {
			t.Errorf("%s: %v; want onChain = available = %d, reserved 0", customer, c["balance"], balance)
		}
	}
	if want["cus_"+prefix+"_unearned"] != outcomeDeposit || want["cus_"+prefix+"_stopped"] != outcomeDeposit {
		t.Fatalf("the scenario charges the customers of unearned and stopped workflows: %v", want)
	}

	// The webhooks: workflow.completed of each Settled one (with its charge,
	// and no settlement when it is 0), workflow.failed of each stopped one
	// (with its cost), none margin_below_floor (every product stops at its
	// budget, or is stopped).
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		hooks.mu.Lock()
		got := map[string]settleflow.Event{}
		for _, typ := range []settleflow.EventType{settleflow.EventWorkflowCompleted, settleflow.EventWorkflowFailed} {
			for _, ev := range hooks.events[typ] {
				got[ev.Data.WorkflowID] = ev
			}
		}
		below := len(hooks.events[settleflow.EventWorkflowMarginBelowFloor])
		hooks.mu.Unlock()
		missing := 0
		for _, id := range ids {
			if _, ok := got[id]; !ok {
				missing++
			}
		}
		if missing == 0 {
			if below != 0 {
				t.Errorf("%d workflow.margin_below_floor events", below)
			}
			for i, c := range outcomeCases {
				ev := got[ids[i]]
				switch {
				case c.charged < 0:
					if ev.Type != settleflow.EventWorkflowFailed || ev.Data.Failure == nil || ev.Data.Failure.Code != settleflow.FailureMarginFloorExceeded ||
						ev.Data.Cost == nil || ev.Data.Cost.Amount != c.cost || ev.Data.Charged != nil {
						t.Errorf("%s: the webhook %s %+v", c.name, ev.Type, ev.Data)
					}
				default:
					if ev.Type != settleflow.EventWorkflowCompleted || ev.Data.Charged == nil || ev.Data.Charged.Amount != c.charged ||
						ev.Data.Cost == nil || ev.Data.Cost.Amount != c.cost || (ev.Data.Settlement == nil) != (c.charged == 0) {
						t.Errorf("%s: the webhook %s %+v", c.name, ev.Type, ev.Data)
					}
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d workflow webhooks missing", missing, len(ids))
		}
	}
	return tot
}

// waitTerminal polls a workflow until it is Settled or Failed.
func waitTerminal(t *testing.T, s *processServer, key, id string) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		_, m := call(t, s, key, "GET", "/v1/workflows/"+id, "", "")
		if m["status"] == "Settled" || m["status"] == "Failed" {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v, want Settled or Failed", id, m)
		}
	}
}

// checkOutcome checks a terminal workflow against its case, and its charge
// against its model's rule applied to its own wire fields.
func checkOutcome(t *testing.T, c outcomeCase, wf map[string]any) {
	t.Helper()
	quoted := num(wf["quoted"].(map[string]any)["amount"])
	cost, _ := wf["cost"].(map[string]any)
	if cost == nil || num(cost["amount"]) != c.cost || cost["currency"] != "usd" {
		t.Errorf("%s: cost %v, want %d", c.name, wf["cost"], c.cost)
		return
	}
	items, _ := cost["items"].([]any)
	var sum int64
	for _, it := range items {
		it := it.(map[string]any)
		switch it["category"] {
		case "model", "tools", "compute":
		default:
			t.Errorf("%s: cost item %v", c.name, it)
		}
		if p, _ := it["provider"].(string); p == "" || num(it["amount"]) <= 0 || num(it["units"]) <= 0 {
			t.Errorf("%s: cost item %v", c.name, it)
		}
		sum += num(it["amount"])
	}
	if len(items) == 0 || sum != c.cost {
		t.Errorf("%s: the cost items %v add up to %d, want %d", c.name, items, sum, c.cost)
	}
	outcome, _ := wf["outcome"].(map[string]any)
	switch {
	case c.success == nil && outcome != nil:
		t.Errorf("%s: outcome %v without criteria", c.name, outcome)
	case c.success != nil && (outcome == nil || outcome["success"] != *c.success || len(outcome["trace"].([]any)) < 3):
		t.Errorf("%s: outcome %v, want success %v with a trace of every criterion", c.name, outcome, *c.success)
	}
	if c.charged < 0 {
		if f, _ := wf["failure"].(map[string]any); wf["charged"] != nil || wf["settlement"] != nil || f == nil || f["code"] != "margin_floor_exceeded" ||
			!strings.Contains(fmt.Sprint(f["message"]), "nothing was charged") {
			t.Errorf("%s: %v; want Failed margin_floor_exceeded, nothing charged", c.name, wf)
		}
		return
	}
	charged, _ := wf["charged"].(map[string]any)
	if charged == nil || num(charged["amount"]) != c.charged || charged["currency"] != "usd" {
		t.Errorf("%s: charged %v, want %d", c.name, wf["charged"], c.charged)
		return
	}
	// The model's rule, from the workflow's own pricing, cost and outcome.
	pr := wf["pricing"].(map[string]any)
	success := outcome != nil && outcome["success"] == true
	var rule int64
	switch pr["model"] {
	case "capped":
		markup := int64(pr["markup"].(float64)*10000 + 0.5)
		minimum := num(pr["minimumCharge"].(map[string]any)["amount"])
		rule = min(quoted, max(minimum, ceilBps(c.cost, 10000+markup)))
	case "success_fee":
		if success {
			rule = quoted
		}
	case "hybrid":
		rule = ceilBps(quoted, int64(pr["baseShare"].(float64)*10000+0.5))
		if success {
			rule = quoted
		}
	default:
		t.Fatalf("%s: pricing %v", c.name, pr)
	}
	if rule != c.charged || c.charged > quoted {
		t.Errorf("%s: charged %d; the %s rule gives %d (quoted %d)", c.name, c.charged, pr["model"], rule, quoted)
	}
	if c.charged == 0 {
		if wf["settlement"] != nil {
			t.Errorf("%s: charged 0 but has a settlement %v: nothing should reach the chain", c.name, wf["settlement"])
		}
		return
	}
	if s, _ := wf["settlement"].(map[string]any); s == nil || !regexp.MustCompile(`^0x[0-9a-f]{64}$`).MatchString(fmt.Sprint(s["txHash"])) {
		t.Errorf("%s: settlement %v", c.name, wf["settlement"])
	}
}

// checkChainBalances compares each customer's balance in the contract with
// what the scenario left.
func checkChainBalances(t *testing.T, tot outcomeTotals, onChain func(customerID string) int64) {
	t.Helper()
	for customer, want := range tot.balances {
		if got := onChain(customer); got != want {
			t.Errorf("the contract holds %d for %s; want %d (the deposit less what it was charged)", got, customer, want)
		}
	}
}

// The scenario on the embedded chain, one process; then the database's
// ledger holds each Settled workflow's charge (not its quote), the chain
// agrees with it and disagrees with the quotes, and `chain reconcile`
// finds nothing to report.
func TestOutcomePricingOverHTTPS(t *testing.T) {
	dir := t.TempDir()
	hooks := newMoneyHooks(t)
	hooks.secret.Store(addEndpoint(t, dir, hooks.srv.URL))
	out := cli(t, dir, "keys", "create", "--env", "test", "--name", "outcome", "--plan", "enterprise", "--per-minute", "100000", "--per-day", "1000000")
	key := regexp.MustCompile(`sk_test_[0-9A-Za-z]+`).FindString(out)
	s := startProcessServer(t, dir, "-test-faucet", "0")
	tot := outcomeScenario(t, []*processServer{s}, key, hooks, "outcome")
	s.kill()

	ctx := context.Background()
	db, err := readLedger(ctx, config{dataDir: dir}, settleflow.Test)
	if err != nil {
		t.Fatal(err)
	}
	if len(db.records) != tot.charges || db.uncharged != tot.uncharged {
		t.Errorf("the ledger holds %d charges and %d Settled charged nothing; want %d and %d", len(db.records), db.uncharged, tot.charges, tot.uncharged)
	}
	asQuoted := make([]settlement.ReconcileRecord, len(db.records))
	mismatched := 0
	for i, r := range db.records {
		if want, ok := tot.charged[r.WorkflowID]; !ok || r.Amount != want || r.Sequence == 0 || r.TxHash == "" {
			t.Errorf("ledger record %+v; want its charge %d", r, want)
		}
		asQuoted[i] = r
		asQuoted[i].Amount = tot.quoted[r.WorkflowID]
		if asQuoted[i].Amount != r.Amount {
			mismatched++
		}
	}
	chain, err := settlement.NewSimulated(ctx, settlement.SimulatedOptions{DataDir: filepath.Join(dir, "chain"), ManualCommit: true})
	if err != nil {
		t.Fatal(err)
	}
	checkChainBalances(t, tot, func(id string) int64 {
		return contractBalance(t, chain.Backend.Client(), chain.Addresses.Contract, chain.CustomerRefSecret, id)
	})
	// The chain debited the charges: compared with the quotes, each one
	// charged less than its quote is an amount_mismatch.
	head, err := chain.Backend.Client().BlockNumber(ctx)
	if err != nil {
		t.Fatal(err)
	}
	info, err := settlement.Inspect(ctx, chain.Backend.Client(), chain.Addresses.Contract)
	if err != nil {
		t.Fatal(err)
	}
	opts := settlement.ReconcileOptions{Contract: chain.Addresses.Contract, Decimals: info.Decimals, FromBlock: info.DeployedAt, ToBlock: head,
		RefOf: func(id string) [32]byte { return settlement.CustomerRef(chain.CustomerRefSecret, settleflow.Test, id) }}
	rep, err := settlement.Reconcile(ctx, chain.Backend.Client(), asQuoted, opts)
	if err != nil {
		t.Fatal(err)
	}
	amounts := 0
	for _, d := range rep.Discrepancies {
		if d.Kind == settlement.AmountMismatch {
			amounts++
		}
	}
	if mismatched == 0 || amounts != mismatched || len(rep.Discrepancies) != mismatched {
		t.Errorf("reconciling the quotes: %d discrepancies (%d amount_mismatch), want %d amount_mismatch: %+v", len(rep.Discrepancies), amounts, mismatched, rep.Discrepancies)
	}
	chain.Close()

	out, errOut, code := runCmd(t, dir, "chain", "reconcile", "--env", "test")
	if code != 0 || !strings.Contains(out, "no discrepancy") || !strings.Contains(out, fmt.Sprintf("%d charges", tot.charges)) ||
		!strings.Contains(out, fmt.Sprintf("%d Settled workflows charged", tot.charges)) || !strings.Contains(out, fmt.Sprintf("%d charged nothing", tot.uncharged)) {
		t.Fatalf("chain reconcile: exit %d\n%s%s", code, out, errOut)
	}
}

// The same on `geth --dev` with two server processes on one Postgres
// database: reservations and charges shared across instances, one
// settlement sender; then `chain reconcile` over RPC.
func TestOutcomePricingOnGethDev(t *testing.T) {
	c := startGethCluster(t, "outcome", 2)
	servers, key, hooks, client, contract, secret := c.servers, c.key, c.hooks, c.client, c.contract, c.secret
	tot := outcomeScenario(t, servers, key, hooks, "geth")
	for _, s := range servers {
		s.kill()
	}
	checkChainBalances(t, tot, func(id string) int64 { return contractBalance(t, client, contract, secret, id) })
	time.Sleep(3 * time.Second) // the last charges two blocks deep
	out, errOut, code := c.reconcile(t)
	if code != 0 || !strings.Contains(out, "no discrepancy") || !strings.Contains(out, fmt.Sprintf("%d charges", tot.charges)) ||
		!strings.Contains(out, fmt.Sprintf("%d charged nothing", tot.uncharged)) {
		t.Fatalf("chain reconcile: exit %d\n%s%s", code, out, errOut)
	}
	var m map[string]any
	out, _, _ = c.reconcile(t, "--json")
	if err := json.Unmarshal([]byte(out), &m); err != nil || num(m["OnChain"]) != int64(tot.charges) || num(m["InDatabase"]) != int64(tot.charges) {
		t.Errorf("chain reconcile --json: %v %s", err, out)
	}
}
