package settlement

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
)

// Finding 5: one token sent straight to the contract made reconcile fail
// forever (holdings had to equal what is owed). A surplus is reported, and
// only a shortfall is a discrepancy.
func TestReconcileDonationIsSurplus(t *testing.T) {
	ctx := context.Background()
	s := newSim(t, SimulatedOptions{Tuning: ChainConfig{FlushInterval: 10 * time.Millisecond, PollInterval: 20 * time.Millisecond}})
	charges := []settleflow.Charge{charge("wf_surplus_a", 120)}
	if err := s.Submit(ctx, charges); err != nil {
		t.Fatal(err)
	}
	sts := waitFor(t, s, charges, 30*time.Second, func() {}, confirmed)
	records := []ReconcileRecord{{WorkflowID: charges[0].WorkflowID, Sequence: charges[0].Sequence, CustomerID: charges[0].CustomerID,
		Amount: charges[0].Amount, TxHash: sts[0].Settlement.TxHash}}
	faucet := Transactor{Backend: s.Backend.Client(), Key: s.FaucetKey, Mine: s.Commit}
	if _, err := faucet.Send(ctx, &s.Addresses.Token, erc20ABI.PackTransfer(s.Addresses.Contract, cents(1))); err != nil {
		t.Fatal(err)
	}
	head, err := s.Backend.Client().BlockNumber(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var accounts []AccountRecord
	for _, id := range testCustomers {
		accounts = append(accounts, AccountRecord{CustomerID: id, Ref: refOf(s, id), OnChain: new(big.Int).Quo(customerBalance(t, s, id), cents(1)).Int64()})
	}
	rep, err := Reconcile(ctx, s.Backend.Client(), records, ReconcileOptions{Contract: s.Addresses.Contract, Decimals: 6, ToBlock: head,
		RefOf: func(id string) [32]byte { return refOf(s, id) }, Accounts: accounts, State: s.Backend.Client()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Discrepancies) != 0 {
		t.Fatalf("a donation of one cent: discrepancies %+v", rep.Discrepancies)
	}
	if rep.Surplus == nil || rep.Surplus.Cmp(cents(1)) != 0 {
		t.Fatalf("surplus %v, want %s", rep.Surplus, cents(1))
	}
}
