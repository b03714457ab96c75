package dashboard

import (
	"context"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/fundstest"
)

// slowCustomer's charges never confirm: its workflows stay Settling.
const slowCustomer = "cus_slow"

// newFundedFixture is a dashboard whose engine charges test customers'
// balances on an in-memory chain (fundstest; the faucet funds each new test
// customer with 1,000.00) and runs, so workflows settle and refunds
// succeed. Live is configured but not funded: live charges settle without
// balances and refunds there are refused. slowCustomer's charges stay
// pending.
func newFundedFixture(t *testing.T) (*fixture, *fundstest.Settler) {
	t.Helper()
	fs := fundstest.New()
	fs.LiveUnfunded = true
	fs.Hold = func(customerID string) bool { return customerID == slowCustomer }
	f := newFixtureWith(t, func(o *settleflow.Options) {
		o.Settler = fs
		o.PollInterval = 20 * time.Millisecond
		o.SettlementPollInterval = 20 * time.Millisecond
		o.FundsPollInterval = 20 * time.Millisecond
	})
	if err := f.engine.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return f, fs
}

// settled creates a workflow of customer in env and waits until it is
// Settled (or, for slowCustomer, Settling).
func (f *fixture) settled(env settleflow.Environment, customer, ref string) *settleflow.Workflow {
	f.t.Helper()
	ctx := context.Background()
	wf, _, err := f.engine.Create(ctx, settleflow.CreateParams{Environment: env, Product: "item", CustomerID: customer,
		Payload: []byte(`{"ref":"` + ref + `"}`)})
	if err != nil {
		f.t.Fatal(err)
	}
	want := settleflow.Settled
	if customer == slowCustomer {
		want = settleflow.Settling
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, err := f.engine.Fetch(ctx, env, wf.ID)
		if err != nil {
			f.t.Fatal(err)
		}
		if got.Status == want {
			return got
		}
		if got.Status.Terminal() || time.Now().After(deadline) {
			f.t.Fatalf("workflow %s is %s, want %s", wf.ID, got.Status, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
