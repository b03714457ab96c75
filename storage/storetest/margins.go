package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
)

// testMargins: a margins report sums the Settled workflows of its
// environment and date range only, per product, customer and UTC day,
// counting charges, refunds and actual costs, ordered by key, at most the
// limit asked.
func testMargins(t *testing.T, s settleflow.Store) {
	ctx := context.Background()
	day1 := time.Date(2026, 11, 20, 23, 30, 0, 0, time.UTC)
	day2 := day1.Add(time.Hour) // 2026-11-21, 00:30 UTC
	type spec struct {
		env      settleflow.Environment
		at       time.Time
		customer string
		product  string
		quote    int64
		cost     int64
		final    settleflow.Status
	}
	specs := []spec{
		{settleflow.Test, day1, "cus_a", "triage", 1000, 600, settleflow.Settled},
		{settleflow.Test, day1, "cus_b", "triage", 500, 100, settleflow.Settled},
		{settleflow.Test, day2, "cus_a", "ocr", 2000, 2500, settleflow.Settled}, // a loss
		{settleflow.Test, day2, "cus_a", "ocr", 900, 0, settleflow.Failed},      // not counted
		{settleflow.Live, day2, "cus_a", "ocr", 7000, 1, settleflow.Settled},    // another environment
	}
	var ws []*settleflow.Workflow
	var finals []settleflow.Status
	for i, sp := range specs {
		w := newWorkflow(sp.env, sp.at.Add(time.Duration(i)*time.Millisecond), sp.customer, sp.product)
		w.Quoted.Amount = sp.quote
		insert(t, s, w)
		ws = append(ws, w)
		finals = append(finals, sp.final)
	}
	// Walk each to its final status, with its cost.
	claimed, err := s.ClaimWorkflows(ctx, settleflow.Claim{Owner: "m", Now: base.Add(time.Hour), LeaseUntil: base.Add(2 * time.Hour), Limit: 100})
	if err != nil || len(claimed) != len(ws) {
		t.Fatalf("claim: %d %v", len(claimed), err)
	}
	for i, w := range ws {
		w.Status = settleflow.Running
		cost := specs[i].cost
		achieved := settleflow.AchievedMargin(w.Quoted.Amount, cost)
		to := settleflow.Settling
		if finals[i] == settleflow.Failed {
			to = settleflow.Failed
		}
		tr, _ := settleflow.Running.To(to)
		applied, err := s.UpdateWorkflows(ctx, []settleflow.Update{{ID: w.ID, Owner: "m", Status: settleflow.Running, Transition: tr,
			ActualCost: &cost, Achieved: &achieved, RunAt: base, UpdatedAt: base, Release: to == settleflow.Failed}})
		if err != nil || !applied[0] {
			t.Fatalf("update %d: %v %v", i, applied, err)
		}
		if to == settleflow.Settling {
			done, _ := settleflow.Settling.To(settleflow.Settled)
			applied, err = s.UpdateWorkflows(ctx, []settleflow.Update{{ID: w.ID, Owner: "m", Status: settleflow.Settling, Transition: done,
				Settlement: &settleflow.Settlement{ChainID: 1337, TxHash: "0x1", BlockNumber: 1}, RunAt: base, UpdatedAt: base, Release: true}})
			if err != nil || !applied[0] {
				t.Fatalf("settle %d: %v %v", i, applied, err)
			}
		}
	}
	got := func(p settleflow.MarginsParams, limit int) string {
		t.Helper()
		rows, err := s.Margins(ctx, p, limit)
		if err != nil {
			t.Fatalf("Margins(%+v): %v", p, err)
		}
		return fmt.Sprint(rows)
	}
	for _, c := range []struct {
		p     settleflow.MarginsParams
		limit int
		want  string
	}{
		{settleflow.MarginsParams{Environment: settleflow.Test, GroupBy: settleflow.MarginsByProduct}, 10, "[{ocr 1 2000 0 2500} {triage 2 1500 0 700}]"},
		{settleflow.MarginsParams{Environment: settleflow.Test, GroupBy: settleflow.MarginsByCustomer}, 10, "[{cus_a 2 3000 0 3100} {cus_b 1 500 0 100}]"},
		{settleflow.MarginsParams{Environment: settleflow.Test, GroupBy: settleflow.MarginsByDay}, 10, "[{2026-11-20 2 1500 0 700} {2026-11-21 1 2000 0 2500}]"},
		{settleflow.MarginsParams{Environment: settleflow.Live, GroupBy: settleflow.MarginsByDay}, 10, "[{2026-11-21 1 7000 0 1}]"},
		{settleflow.MarginsParams{Environment: settleflow.Test, GroupBy: settleflow.MarginsByDay, CreatedAfter: day2}, 10, "[{2026-11-21 1 2000 0 2500}]"},
		{settleflow.MarginsParams{Environment: settleflow.Test, GroupBy: settleflow.MarginsByDay, CreatedBefore: day2}, 10, "[{2026-11-20 2 1500 0 700}]"},
		{settleflow.MarginsParams{Environment: settleflow.Test, GroupBy: settleflow.MarginsByProduct}, 1, "[{ocr 1 2000 0 2500}]"},
		{settleflow.MarginsParams{Environment: settleflow.Test, GroupBy: settleflow.MarginsByDay, Product: "triage"}, 10, "[{2026-11-20 2 1500 0 700}]"},
		{settleflow.MarginsParams{Environment: settleflow.Test, GroupBy: settleflow.MarginsByProduct, CreatedAfter: day2.Add(time.Hour)}, 10, "[]"},
	} {
		if g := got(c.p, c.limit); g != c.want {
			t.Errorf("Margins(%s, after %s, before %s, limit %d) = %s, want %s", c.p.GroupBy, c.p.CreatedAfter, c.p.CreatedBefore, c.limit, g, c.want)
		}
	}
}
