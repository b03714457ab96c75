package settlement

import (
	"context"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/settleflow/settleflow"
)

// Settlements made by the settler reconcile with no discrepancy; a
// settlement sent to the contract outside the engine, and a record altered
// in the database, are each named.
func TestReconcile(t *testing.T) {
	s := newSim(t, SimulatedOptions{Tuning: ChainConfig{FlushInterval: 10 * time.Millisecond, PollInterval: 20 * time.Millisecond}})
	ctx := context.Background()
	charges := []settleflow.Charge{charge("wf_rec_a", 250), charge("wf_rec_b", 1999), charge("wf_rec_c", 7)}
	if err := s.Submit(ctx, charges); err != nil {
		t.Fatal(err)
	}
	sts := waitFor(t, s, charges, 30*time.Second, func() {}, confirmed)
	records := make([]ReconcileRecord, len(charges))
	for i, c := range charges {
		records[i] = ReconcileRecord{WorkflowID: c.WorkflowID, Sequence: c.Sequence, CustomerID: c.CustomerID, Amount: c.Amount, TxHash: sts[i].Settlement.TxHash}
	}
	head, err := s.Backend.Client().BlockNumber(ctx)
	if err != nil {
		t.Fatal(err)
	}
	o := ReconcileOptions{Contract: s.Addresses.Contract, Decimals: 6, FromBlock: 0, ToBlock: head, PageBlocks: 2,
		RefOf: func(id string) [32]byte { return refOf(s, id) }}
	rep, err := Reconcile(ctx, s.Backend.Client(), records, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Discrepancies) != 0 || rep.OnChain != 3 || rep.TotalOnChain != 2256 || rep.TotalInDatabase != 2256 {
		t.Fatalf("clean reconciliation: %+v", rep)
	}

	// Plant two: a settlement sent outside the engine, under a sequence no
	// workflow has, and a record whose amount was altered.
	rogue := seqOf("wf_rogue")
	tr := Transactor{Backend: s.Backend.Client(), Key: s.OperatorKey, Mine: s.Commit}
	if _, err := tr.Send(ctx, &s.Addresses.Contract, settlementABI.PackSettle([][32]byte{refOf(s, "cus_t1")},
		[]*big.Int{PackedCharge{Cents: 500, Sequence: rogue, Tag: WorkflowTag("wf_rogue")}.Pack()})); err != nil {
		t.Fatal(err)
	}
	records[1].Amount = 1000
	head, _ = s.Backend.Client().BlockNumber(ctx)
	o.ToBlock = head
	rep, err = Reconcile(ctx, s.Backend.Client(), records, o)
	if err != nil {
		t.Fatal(err)
	}
	got := map[DiscrepancyKind]string{}
	for _, d := range rep.Discrepancies {
		got[d.Kind] = d.WorkflowID
	}
	if len(rep.Discrepancies) != 2 || got[AmountMismatch] != "wf_rec_b" || got[NotInDatabase] != fmt.Sprintf("tag %016x", WorkflowTag("wf_rogue")) {
		t.Fatalf("planted discrepancies: %+v; want wf_rec_b's amount and wf_rogue's settlement", rep.Discrepancies)
	}
	// A record whose settlement is missing, and one with another customer.
	missing := append(records, ReconcileRecord{WorkflowID: "wf_rec_z", Sequence: 999_999, CustomerID: "cus_z", Amount: 1})
	missing[0].CustomerID = "cus_other"
	rep, _ = Reconcile(ctx, s.Backend.Client(), missing, o)
	got = map[DiscrepancyKind]string{}
	for _, d := range rep.Discrepancies {
		got[d.Kind] = d.WorkflowID
	}
	if got[MissingOnChain] != "wf_rec_z" || got[CustomerMismatch] != "wf_rec_a" {
		t.Fatalf("missing and customer: %+v", rep.Discrepancies)
	}
}

// A confirmed settlement reports its share of its batch's cost: the
// transaction's gas over the charges it settled, and that share's fee.
func TestSettlementCostShare(t *testing.T) {
	s := newSim(t, SimulatedOptions{Tuning: ChainConfig{FlushInterval: 50 * time.Millisecond, PollInterval: 20 * time.Millisecond}})
	ctx := context.Background()
	charges := []settleflow.Charge{charge("wf_cost_a", 100), charge("wf_cost_b", 200), charge("wf_cost_c", 300)}
	if err := s.Submit(ctx, charges); err != nil {
		t.Fatal(err)
	}
	sts := waitFor(t, s, charges, 30*time.Second, func() {}, confirmed)
	perTx := map[string][]settleflow.SettlementStatus{}
	for _, st := range sts {
		perTx[st.Settlement.TxHash] = append(perTx[st.Settlement.TxHash], st)
	}
	for tx, group := range perTx {
		r, err := s.Backend.Client().TransactionReceipt(ctx, common.HexToHash(tx))
		if err != nil {
			t.Fatal(err)
		}
		share := r.GasUsed / uint64(len(group))
		for _, st := range group {
			want := FormatUnits(new(big.Int).Mul(new(big.Int).SetUint64(share), r.EffectiveGasPrice), 18)
			if st.Settlement.GasUsed != share || st.Settlement.Fee != want || share == 0 {
				t.Errorf("%s: gas %d fee %q; want %d and %q (the transaction's %d gas over %d charges)",
					st.WorkflowID, st.Settlement.GasUsed, st.Settlement.Fee, share, want, r.GasUsed, len(group))
			}
		}
	}
}

func TestFormatUnits(t *testing.T) {
	for _, c := range []struct {
		v    int64
		d    int
		want string
	}{{0, 18, "0"}, {12_300_000_000_000, 18, "0.0000123"}, {1_000_000_000_000_000_000, 18, "1"}, {1_500_000, 6, "1.5"}, {-25, 2, "-0.25"}, {7, 0, "7"}} {
		if got := FormatUnits(big.NewInt(c.v), c.d); got != c.want {
			t.Errorf("FormatUnits(%d, %d) = %q, want %q", c.v, c.d, got, c.want)
		}
	}
}
