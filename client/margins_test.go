package client_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/client"
)

// Margins.Report against the real HTTP handler: the report by customer,
// product and day (a refund counted), a product filter and a range, the
// typed errors, the live environment apart.
func TestMarginsReport(t *testing.T) {
	t.Parallel()
	api := newFundsAPI(t)
	ctx := context.Background()
	c := api.client(api.testKey)
	start := time.Now().Add(-time.Second)
	var wfs []*settleflow.Workflow
	for _, cus := range []string{"cus_m1", "cus_m2"} {
		wf, err := c.Workflows.Create(ctx, ticketParams(cus))
		if err != nil {
			t.Fatal(err)
		}
		if wf = waitTerminalFunds(t, c, wf.ID); wf.Status != settleflow.Settled {
			t.Fatalf("workflow %s %+v", wf.Status, wf.Failure)
		}
		wfs = append(wfs, wf)
	}
	rf, err := c.Refunds.Create(ctx, wfs[0].ID, &client.RefundCreateParams{Amount: 100})
	if err != nil {
		t.Fatal(err)
	}
	if rf = waitRefund(t, c, rf.ID); rf.Status != settleflow.RefundSucceeded {
		t.Fatalf("refund %+v", rf)
	}
	q := wfs[0].Quoted.Amount // both are quoted the same; each cost 150
	usd := func(n int64) settleflow.Money { return settleflow.Money{Amount: n, Currency: "usd"} }
	margin := func(kept, cost int64) *settleflow.BasisPoints {
		m := settleflow.BasisPoints((kept - cost) * 10000 / kept)
		return &m
	}
	row := func(key string, n, charged, refunded, cost int64) settleflow.MarginRow {
		return settleflow.MarginRow{Key: key, Workflows: n, Charged: usd(charged), Refunded: usd(refunded), Cost: usd(cost), Margin: margin(charged-refunded, cost)}
	}
	total := row("", 2, 2*q, 100, 300)

	rep, err := c.Margins.Report(ctx, &client.MarginReportParams{GroupBy: settleflow.MarginsByCustomer})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Object != "margin_report" || rep.Livemode || rep.GroupBy != settleflow.MarginsByCustomer || rep.Currency != "usd" ||
		rep.CreatedAfter != nil || rep.CreatedBefore != nil || rep.Product != "" ||
		!reflect.DeepEqual(rep.Data, []settleflow.MarginRow{row("cus_m1", 1, q, 100, 150), row("cus_m2", 1, q, 0, 150)}) ||
		!reflect.DeepEqual(rep.Total, total) {
		t.Fatalf("by customer: %+v", rep)
	}
	if *rep.Total.Margin <= 0 || *rep.Total.Margin >= 10000 {
		t.Fatalf("total margin %s", *rep.Total.Margin)
	}
	end := time.Now().Add(time.Minute)
	rep, err = c.Margins.Report(ctx, &client.MarginReportParams{GroupBy: settleflow.MarginsByDay, Product: "ticket-triage", CreatedAfter: start, CreatedBefore: end})
	if err != nil {
		t.Fatal(err)
	}
	byDay := total
	byDay.Key = wfs[1].CreatedAt.UTC().Format(time.DateOnly)
	if !reflect.DeepEqual(rep.Data, []settleflow.MarginRow{byDay}) || rep.Product != "ticket-triage" ||
		rep.CreatedAfter == nil || !rep.CreatedAfter.Equal(start) || rep.CreatedBefore == nil || !rep.CreatedBefore.Equal(end) {
		t.Fatalf("by day: %+v", rep)
	}
	// Nothing in range: no groups, a total of zeros with no margin.
	rep, err = c.Margins.Report(ctx, &client.MarginReportParams{GroupBy: settleflow.MarginsByProduct, CreatedAfter: end})
	if err != nil || rep.Data == nil || len(rep.Data) != 0 || rep.Total.Workflows != 0 || rep.Total.Margin != nil {
		t.Fatalf("an empty range: %+v %v", rep, err)
	}

	for _, c2 := range []struct {
		p           *client.MarginReportParams
		code, param string
	}{
		{nil, "parameter_missing", "groupBy"},
		{&client.MarginReportParams{GroupBy: "week"}, "parameter_invalid", "groupBy"},
		{&client.MarginReportParams{GroupBy: settleflow.MarginsByDay, Product: "no-such-product"}, "parameter_invalid", "product"},
		{&client.MarginReportParams{GroupBy: settleflow.MarginsByDay, CreatedAfter: end, CreatedBefore: start}, "parameter_invalid", "createdBefore"},
	} {
		var inv *client.InvalidRequestError
		if _, err := c.Margins.Report(ctx, c2.p); !errors.As(err, &inv) || inv.Status != 400 || string(inv.Code) != c2.code || inv.Param != c2.param {
			t.Errorf("Report(%+v): %v; want 400 %s naming %s", c2.p, err, c2.code, c2.param)
		}
	}

	live, err := api.client(api.liveKey).Margins.Report(ctx, &client.MarginReportParams{GroupBy: settleflow.MarginsByProduct})
	if err != nil || !live.Livemode || len(live.Data) != 0 || live.Total.Workflows != 0 {
		t.Fatalf("live: %+v %v", live, err)
	}
}
