package settleflow_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
)

// A margins report sums what the Settled workflows charged, what was
// refunded and what they cost, per group and in total, and states the
// margin achieved on what was kept; bad parameters are errors naming them.
func TestMargins(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	if err := f.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 4 {
		ids = append(ids, f.create(t, settleflow.Test, fmt.Sprintf("T-margin-%d", i), i%2).ID)
	}
	ws := f.waitTerminal(t, settleflow.Test, ids...)
	var charged, cost int64
	for _, w := range ws {
		if w.Status != settleflow.Settled || w.ActualCost == nil {
			t.Fatalf("workflow %s: %s", w.ID, w.Status)
		}
		charged += w.Quoted.Amount
		cost += *w.ActualCost
	}
	rep, err := f.engine.Margins(ctx, settleflow.MarginsParams{Environment: settleflow.Test, GroupBy: settleflow.MarginsByProduct})
	if err != nil {
		t.Fatal(err)
	}
	want := settleflow.BasisPoints((charged - cost) * 10000 / charged)
	if len(rep.Data) != 1 || rep.Data[0].Key != "ticket-triage" || rep.Data[0].Workflows != 4 || rep.Data[0].Charged.Amount != charged ||
		rep.Data[0].Cost.Amount != cost || rep.Data[0].Margin == nil || *rep.Data[0].Margin != want || rep.Total.Charged.Amount != charged ||
		rep.Object != "margin_report" || rep.Livemode || rep.Currency != "usd" {
		t.Fatalf("report %+v (want charged %d, cost %d, margin %s)", rep, charged, cost, want)
	}
	// Nothing in range: no rows, a total of zeros with no margin.
	rep, err = f.engine.Margins(ctx, settleflow.MarginsParams{Environment: settleflow.Test, GroupBy: settleflow.MarginsByDay,
		CreatedAfter: time.Now().Add(time.Hour)})
	if err != nil || len(rep.Data) != 0 || rep.Total.Workflows != 0 || rep.Total.Margin != nil || rep.CreatedAfter == nil {
		t.Fatalf("an empty range: %+v %v", rep, err)
	}
	for _, c := range []struct {
		p     settleflow.MarginsParams
		param string
	}{
		{settleflow.MarginsParams{Environment: settleflow.Test}, "groupBy"},
		{settleflow.MarginsParams{Environment: settleflow.Test, GroupBy: "week"}, "groupBy"},
		{settleflow.MarginsParams{Environment: settleflow.Test, GroupBy: "day", Product: "no-such-product"}, "product"},
		{settleflow.MarginsParams{Environment: settleflow.Test, GroupBy: "day", CreatedAfter: time.Now(), CreatedBefore: time.Now().Add(-time.Hour)}, "createdBefore"},
	} {
		var inv *settleflow.InvalidError
		if _, err := f.engine.Margins(ctx, c.p); !errors.As(err, &inv) || inv.Param != c.param {
			t.Errorf("Margins(%+v): %v, want an error naming %s", c.p, err, c.param)
		}
	}
}
