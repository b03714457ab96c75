package settlement

import (
	"context"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/settleflow/settleflow"
)

// Finding 1, reconcile: an owner the contract records that no grant the
// engine sent explains is reported (owner_not_set_by_engine): here one set
// by a raw setOwner from the operator's key, outside the engine. An owner
// set by a recorded grant is not, nor that owner's own move to a new
// address (changeOwner), nor the completion of a proposal the engine sent.
func TestReconcileReportsOwnersNotSetByEngine(t *testing.T) {
	ctx := context.Background()
	s := newSim(t, SimulatedOptions{ManualCommit: true})
	op := Transactor{Backend: s.Backend.Client(), Key: s.OperatorKey, Mine: s.Commit}
	var grants []OwnerGrantRecord
	record := func(customerID string, g settleflow.OwnerGrant, tx string) {
		grants = append(grants, OwnerGrantRecord{CustomerID: customerID, Ref: refOf(s, customerID), Owner: common.HexToAddress(g.Owner), TxHash: tx})
	}
	// Through the settler, recorded as the engine records it.
	engineKey, engineOwner := fundAccount(t, s, 0)
	g := newGrant(t, s, engineKey, "cus_engine")
	tx, err := s.SetOwner(ctx, settleflow.Test, "cus_engine", g)
	if err != nil {
		t.Fatal(err)
	}
	record("cus_engine", g, tx)
	s.Commit()
	waitMined(t, s)
	// Its owner moves to an address of its own.
	movedKey, _ := crypto.GenerateKey()
	if _, err := engineOwner.Send(ctx, &s.Addresses.Contract, packGrant(t, refOf(s, "cus_engine"), newGrant(t, s, movedKey, "cus_engine"), true)); err != nil {
		t.Fatal(err)
	}
	// Outside the engine: the operator's key, no record.
	rogueKey, _ := crypto.GenerateKey()
	rogue := newGrant(t, s, rogueKey, "cus_rogue")
	rogueTx, err := op.Send(ctx, &s.Addresses.Contract, packGrant(t, refOf(s, "cus_rogue"), rogue, false))
	if err != nil {
		t.Fatal(err)
	}
	// A proposal the engine sends (the customer has an owner) is
	// explained; one from the operator's key outside it is reported while
	// it waits for its notice.
	nextKey, _ := crypto.GenerateKey()
	ng := newGrant(t, s, nextKey, "cus_engine")
	if tx, err = s.SetOwner(ctx, settleflow.Test, "cus_engine", ng); err != nil {
		t.Fatal(err)
	}
	record("cus_engine", ng, tx)
	s.Commit()
	waitMined(t, s)
	thiefKey, _ := crypto.GenerateKey()
	if _, err := op.Send(ctx, &s.Addresses.Contract, packGrant(t, refOf(s, "cus_engine"), newGrant(t, s, thiefKey, "cus_engine"), false)); err != nil {
		t.Fatal(err)
	}
	head, err := s.Backend.Client().BlockNumber(ctx)
	if err != nil {
		t.Fatal(err)
	}
	o := ReconcileOptions{Contract: s.Addresses.Contract, Decimals: 6, ToBlock: head, CheckOwners: true, OwnerGrants: grants,
		Accounts: []AccountRecord{{CustomerID: "cus_rogue", Ref: refOf(s, "cus_rogue")}}}
	rep, err := Reconcile(ctx, s.Backend.Client(), nil, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Discrepancies) != 2 || rep.Discrepancies[0].Kind != OwnerNotSetByEngine || rep.Discrepancies[1].Kind != OwnerNotSetByEngine ||
		rep.Discrepancies[0].WorkflowID != "cus_engine" || rep.Discrepancies[1].WorkflowID != "cus_rogue" {
		t.Fatalf("discrepancies %+v, want the thief's proposal for cus_engine and cus_rogue's owner", rep.Discrepancies)
	}
	for _, d := range rep.Discrepancies {
		t.Logf("reported: %s", d.Detail)
	}
	if d := rep.Discrepancies[0].Detail; !strings.Contains(d, crypto.PubkeyToAddress(thiefKey.PublicKey).Hex()) || !strings.Contains(d, "cancelOwnerChange") {
		t.Errorf("detail %q does not name the proposed owner and how to stop it", d)
	}
	if d := rep.Discrepancies[1].Detail; !strings.Contains(d, crypto.PubkeyToAddress(rogueKey.PublicKey).Hex()) || !strings.Contains(d, rogueTx.TxHash.Hex()) {
		t.Errorf("detail %q names neither the owner nor the transaction", d)
	}
	// Recorded, they are explained.
	o.OwnerGrants = append(o.OwnerGrants, OwnerGrantRecord{CustomerID: "cus_rogue", Ref: refOf(s, "cus_rogue"), Owner: common.HexToAddress(rogue.Owner)},
		OwnerGrantRecord{CustomerID: "cus_engine", Ref: refOf(s, "cus_engine"), Owner: crypto.PubkeyToAddress(thiefKey.PublicKey)})
	if rep, err = Reconcile(ctx, s.Backend.Client(), nil, o); err != nil || len(rep.Discrepancies) != 0 {
		t.Fatalf("with every grant recorded: %+v, %v", rep.Discrepancies, err)
	}
	// A changeOwner from an owner the engine did not set is not explained
	// by the move: drop the engine's first record and both are reported.
	o.OwnerGrants = o.OwnerGrants[1:]
	if rep, err = Reconcile(ctx, s.Backend.Client(), nil, o); err != nil || len(rep.Discrepancies) != 2 {
		t.Fatalf("without the engine's record: %+v, %v; want its owner and the move reported", rep.Discrepancies, err)
	}
}
