package fundstest_test

import (
	"context"
	"testing"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/fundstest"
)

func status(t *testing.T, s *fundstest.Settler, c settleflow.Charge) settleflow.SettlementState {
	t.Helper()
	st, err := s.Status(context.Background(), []settleflow.Charge{c})
	if err != nil {
		t.Fatal(err)
	}
	return st[0].State
}

// By default only test is configured and funded; Live adds live, funded;
// LiveUnfunded adds live, not funded, even with Live.
func TestEnvironments(t *testing.T) {
	for _, c := range []struct {
		live, unfunded             bool
		liveConfigured, liveFunded bool
	}{{false, false, false, false}, {true, false, true, true}, {false, true, true, false}, {true, true, true, false}} {
		s := fundstest.New()
		s.Live, s.LiveUnfunded = c.live, c.unfunded
		if !s.Configured(settleflow.Test) || !s.Funded(settleflow.Test) {
			t.Errorf("%+v: test not configured and funded", c)
		}
		if s.Configured(settleflow.Live) != c.liveConfigured || s.Funded(settleflow.Live) != c.liveFunded {
			t.Errorf("%+v: live configured %v, funded %v", c, s.Configured(settleflow.Live), s.Funded(settleflow.Live))
		}
	}
}

// A charge in a funded environment needs a balance; in an unfunded one it
// is confirmed without one; a held customer's stays Pending.
func TestChargesAndHold(t *testing.T) {
	ctx := context.Background()
	s := fundstest.New()
	s.LiveUnfunded = true
	s.Hold = func(id string) bool { return id == "cus_held" }
	s.Deposit(settleflow.Test, "cus_held", 1000)
	cs := []settleflow.Charge{
		{WorkflowID: "wf_poor", Environment: settleflow.Test, CustomerID: "cus_poor", Amount: 100},
		{WorkflowID: "wf_live", Environment: settleflow.Live, CustomerID: "cus_poor", Amount: 100},
		{WorkflowID: "wf_held", Environment: settleflow.Test, CustomerID: "cus_held", Amount: 100},
	}
	if err := s.Submit(ctx, cs); err != nil {
		t.Fatal(err)
	}
	for i, want := range []settleflow.SettlementState{settleflow.SettlementFailed, settleflow.SettlementConfirmed, settleflow.SettlementPending} {
		if got := status(t, s, cs[i]); got != want {
			t.Errorf("%s: %v, want %v", cs[i].WorkflowID, got, want)
		}
	}
	if b := s.Balance(settleflow.Test, "cus_held"); b != 1000 {
		t.Errorf("a held charge debited: balance %d", b)
	}
	if b := s.Balance(settleflow.Live, "cus_poor"); b != 0 {
		t.Errorf("an unfunded charge touched a balance: %d", b)
	}
	// Released, it is debited at its next submission.
	s.Hold = nil
	if err := s.Submit(ctx, cs[2:]); err != nil {
		t.Fatal(err)
	}
	if got := status(t, s, cs[2]); got != settleflow.SettlementConfirmed || s.Balance(settleflow.Test, "cus_held") != 900 {
		t.Errorf("released: %v, balance %d", got, s.Balance(settleflow.Test, "cus_held"))
	}
	// Refunds counts those applied, once each.
	r := settleflow.RefundCharge{RefundID: "re_1", WorkflowID: "wf_held", Environment: settleflow.Test, CustomerID: "cus_held", Amount: 40}
	for range 2 {
		if err := s.SubmitRefunds(ctx, []settleflow.RefundCharge{r}); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Refunds(); n != 1 {
		t.Errorf("Refunds() = %d, want 1", n)
	}
}
