package settlement

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
)

// Finding 4, the settler's part: a refund the contract rejects because the
// payee is owed too little (it claimed everything) is not final: the
// contract leaves it undecided and the settler keeps it pending, counts it
// (Health, the metric) and sends it again with backoff; once the payee is
// funded (fundPayee) it is applied, once.
func TestRefundWaitsForPayeeFunds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := newSim(t, SimulatedOptions{Tuning: ChainConfig{FlushInterval: 10 * time.Millisecond, PollInterval: 20 * time.Millisecond}})
	ch := charge("wf_payee_wait", 1000)
	if err := s.Submit(ctx, []settleflow.Charge{ch}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, []settleflow.Charge{ch}, 30*time.Second, nil, confirmed)

	// The payee claims everything it is owed.
	payee := Transactor{Backend: s.Backend.Client(), Key: s.PayeeKey, Mine: s.Commit}
	if _, err := payee.Send(ctx, &s.Addresses.Contract, settlementABI.PackClaim()); err != nil {
		t.Fatalf("claim: %v", err)
	}
	if owed := payeeOwed(t, s); owed.Sign() != 0 {
		t.Fatalf("after the claim the payee is owed %s", owed)
	}
	bal0 := customerBalance(t, s, ch.CustomerID)
	rs := []settleflow.RefundCharge{refundOf("re_payee_wait", ch, 400)}
	if err := s.SubmitRefunds(ctx, rs); err != nil {
		t.Fatal(err)
	}
	// It waits: pending, counted, never failed.
	deadline := time.Now().Add(30 * time.Second)
	for s.Health()[0].RefundsAwaitingPayee != 1 {
		if time.Now().After(deadline) {
			st, _ := s.RefundStatus(ctx, rs)
			t.Fatalf("the refund never waited for the payee's funds: %s", describe(st))
		}
		time.Sleep(20 * time.Millisecond)
	}
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		st, err := s.RefundStatus(ctx, rs)
		if err != nil {
			t.Fatal(err)
		}
		if st[0].State != settleflow.SettlementPending {
			t.Fatalf("a refund waiting for the payee's funds: %s; want pending", describe(st))
		}
	}
	if h := s.Health()[0]; h.Degraded() {
		t.Errorf("refunds waiting for the payee degrade the chain: %s", h.Problem())
	}
	// Fund the payee (the faucet has approved the contract).
	faucet := Transactor{Backend: s.Backend.Client(), Key: s.FaucetKey, Mine: s.Commit}
	if _, err := faucet.Send(ctx, &s.Addresses.Contract, settlementABI.PackFundPayee(cents(1000))); err != nil {
		t.Fatalf("fundPayee: %v", err)
	}
	st := waitForRefunds(t, s, rs, time.Minute, nil)
	if st[0].State != settleflow.SettlementConfirmed {
		t.Fatalf("after fundPayee: %s", describe(st))
	}
	time.Sleep(300 * time.Millisecond) // any second application would land by now
	if got := new(big.Int).Sub(customerBalance(t, s, ch.CustomerID), bal0); got.Cmp(cents(400)) != 0 {
		t.Errorf("the customer got back %s, want %s (once)", got, cents(400))
	}
	if got := payeeOwed(t, s); got.Cmp(cents(600)) != 0 {
		t.Errorf("the payee is owed %s after funding 1000 and refunding 400, want %s", got, cents(600))
	}
	if n := s.Health()[0].RefundsAwaitingPayee; n != 0 {
		t.Errorf("%d refunds still counted as waiting", n)
	}
}
