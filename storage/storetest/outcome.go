package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/ids"
)

// testOutcome: a workflow's terms (pricing, success criteria, margin
// floor) are kept from insert on; its charge, cost items and outcome from
// the move to Settling on. The ledger charges the charge, not the quote; a
// charge of 0 is never numbered, charges nothing and refunds nothing; the
// margins report sums charges; a refund is bounded by the charge.
func testOutcome(t *testing.T, s settleflow.Store) {
	ctx := context.Background()
	fund(t, s, settleflow.Test, "0xo", 2*1250)
	markup, floor := settleflow.BasisPoints(2000), settleflow.BasisPoints(1500)
	mk := func(at time.Duration) *settleflow.Workflow {
		w := newWorkflow(settleflow.Test, base.Add(at), "cus_o", "extract")
		w.SetTerms(settleflow.Terms{
			Pricing: settleflow.Pricing{Model: settleflow.PricingCapped, Markup: &markup,
				MinimumCharge: &settleflow.Money{Amount: 50, Currency: "usd"}},
			SuccessCriteria: json.RawMessage(`{"type":"exact","path":"/status","value":"done"}`),
			MarginFloor:     floor,
		})
		return w
	}
	paid, free := mk(0), mk(time.Millisecond)
	for _, w := range []*settleflow.Workflow{paid, free} {
		if res, err := s.InsertWorkflows(ctx, []settleflow.Insert{reserveInsert(w, "0xo")}); err != nil || res[0].Insufficient != nil {
			t.Fatalf("insert: %+v %v", res, err)
		}
	}
	want := *paid
	want.Reserved, want.AccountRef = 1250, "0xo"
	equalWorkflow(t, mustGet(t, s, settleflow.Test, paid.ID), &want)

	claimed := claim(t, s, "w1", base.Add(time.Millisecond), time.Minute, 2)
	if len(claimed) != 2 {
		t.Fatalf("claimed %d, want 2", len(claimed))
	}
	settling, _ := settleflow.Running.To(settleflow.Settling)
	at := base.Add(time.Second)
	type decided struct {
		w       *settleflow.Workflow
		charged int64
		cost    *settleflow.Cost
		outcome *settleflow.Outcome
	}
	ds := []decided{
		{paid, 700, &settleflow.Cost{Amount: 580, Currency: "usd", Items: []settleflow.CostItem{
			{Category: settleflow.CostModel, Provider: "llm", Units: 12000, Amount: 480},
			{Category: settleflow.CostCompute, Provider: "", Units: 3, Amount: 100}}},
			&settleflow.Outcome{Success: true, Trace: []settleflow.OutcomeStep{{Path: "/status", Type: "exact", Matched: true, Reason: "status is \"done\""}}}},
		{free, 0, &settleflow.Cost{Amount: 0, Currency: "usd", Items: []settleflow.CostItem{}},
			&settleflow.Outcome{Success: false, Trace: []settleflow.OutcomeStep{{Path: "/status", Type: "exact", Matched: false, Reason: "status is missing"}}}},
	}
	var us []settleflow.Update
	for _, d := range ds {
		charged, cost := d.charged, d.cost.Amount
		achieved := settleflow.AchievedMarginOf(1250, charged, cost)
		u := settleflow.Update{ID: d.w.ID, Owner: "w1", Status: settleflow.Running, Transition: settling,
			Result: json.RawMessage(`{"status":"done"}`), ActualCost: &cost, Achieved: &achieved,
			Charged: &charged, Cost: d.cost, Outcome: d.outcome, RunAt: at, UpdatedAt: at, Release: true}
		if charged > 0 {
			var seq uint64
			u.Sequence = &seq
		}
		us = append(us, u)
	}
	if applied, err := s.UpdateWorkflows(ctx, us); err != nil || !applied[0] || !applied[1] {
		t.Fatalf("Running→Settling: %v %v", applied, err)
	}
	for _, d := range ds {
		got := mustGet(t, s, settleflow.Test, d.w.ID)
		if got.Charged == nil || got.Charged.Amount != d.charged || got.ChargeAmount() != d.charged {
			t.Fatalf("%s charged %v, want %d", got.ID, got.Charged, d.charged)
		}
		equalJSON(t, got.Cost, d.cost)
		equalJSON(t, got.Outcome, d.outcome)
		if got.Pricing.Model != settleflow.PricingCapped || got.MarginFloor == nil || *got.MarginFloor != floor ||
			string(got.SuccessCriteria) != `{"type":"exact","path":"/status","value":"done"}` {
			t.Fatalf("terms lost: %+v %v %s", got.Pricing, got.MarginFloor, got.SuccessCriteria)
		}
	}
	// Claimed again (released to the settling engine): the paid charge is
	// numbered, the free one is not.
	again := claim(t, s, "w2", at, time.Minute, 2)
	if len(again) != 2 {
		t.Fatalf("claimed %d Settling, want 2", len(again))
	}
	for _, w := range again {
		if w.ID == free.ID && w.Sequence != 0 {
			t.Fatalf("a charge of 0 was numbered %d", w.Sequence)
		}
		if w.ID == paid.ID && w.Sequence == 0 {
			t.Fatal("the paid charge was not numbered")
		}
	}
	done, _ := settleflow.Settling.To(settleflow.Settled)
	at = at.Add(time.Second)
	applied, err := s.UpdateWorkflows(ctx, []settleflow.Update{
		{ID: paid.ID, Owner: "w2", Status: settleflow.Settling, Transition: done, RunAt: at, UpdatedAt: at, Release: true,
			Settlement: &settleflow.Settlement{ChainID: 1337, Network: "simulated", TxHash: "0x1", BlockNumber: 1, Confirmations: 1}},
		{ID: free.ID, Owner: "w2", Status: settleflow.Settling, Transition: done, RunAt: at, UpdatedAt: at, Release: true},
	})
	if err != nil || !applied[0] || !applied[1] {
		t.Fatalf("Settling→Settled: %v %v", applied, err)
	}
	a, err := s.GetAccount(ctx, settleflow.Test, "cus_o", "0xo")
	if err != nil || a.Reserved != 0 || a.Charged != 700 || a.Available() != 2*1250-700 {
		t.Fatalf("account after a charge of 700 and one of 0: %+v %v", a, err)
	}
	rows, err := s.Margins(ctx, settleflow.MarginsParams{Environment: settleflow.Test, GroupBy: settleflow.MarginsByProduct, Product: "extract"}, 10)
	if err != nil || len(rows) != 1 || rows[0].Workflows != 2 || rows[0].Charged != 700 || rows[0].Cost != 580 {
		t.Fatalf("margins: %+v %v", rows, err)
	}
	// Refunds are bounded by the charge: nothing of the free one, at most
	// 700 of the paid one.
	refund := func(w *settleflow.Workflow, amount int64) error {
		r := &settleflow.Refund{ID: ids.New(ids.Refund, at), Object: "refund", WorkflowID: w.ID, Amount: amount, Currency: "usd",
			Status: settleflow.RefundPending, CreatedAt: at, UpdatedAt: at}
		_, err := s.InsertRefund(ctx, settleflow.RefundInsert{Refund: r})
		return err
	}
	var re *settleflow.RefundableError
	if err := refund(free, 0); !errors.As(err, &re) || re.Refundable != 0 {
		t.Fatalf("refund of a charge of 0: %v", err)
	}
	if err := refund(paid, 701); !errors.As(err, &re) || re.Refundable != 700 {
		t.Fatalf("refund above the charge: %v", err)
	}
	if err := refund(paid, 700); err != nil {
		t.Fatalf("refund of the whole charge: %v", err)
	}
}
