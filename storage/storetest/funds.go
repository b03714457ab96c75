package storetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/ids"
)

// fund applies one deposit for ref in env, moving the cursor one block on.
func fund(t *testing.T, s settleflow.Store, env settleflow.Environment, ref string, amount int64) {
	t.Helper()
	ctx := context.Background()
	from, err := s.FundsCursor(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	to := settleflow.FundsCursor{Block: from.Block + 1, Hash: fmt.Sprintf("0x%d", from.Block+1)}
	res, err := s.ApplyFunds(ctx, settleflow.FundsBatch{Environment: env, From: from, To: to, UpdatedAt: base,
		Events: []settleflow.FundsEvent{{Kind: settleflow.FundsDeposit, Ref: ref, Amount: amount, TxHash: fmt.Sprintf("0xd%d", to.Block), BlockNumber: to.Block}}})
	if err != nil || !res.Applied || len(res.Quarantined) != 0 {
		t.Fatalf("ApplyFunds: %+v %v", res, err)
	}
}

// settle claims the workflows ws (Pending) for "w" and walks each to its
// final status.
func settle(t *testing.T, s settleflow.Store, ws []*settleflow.Workflow, final []settleflow.Status) {
	t.Helper()
	claimed, err := s.ClaimWorkflows(context.Background(), settleflow.Claim{Owner: "w", Now: base.Add(time.Hour), LeaseUntil: base.Add(2 * time.Hour), Limit: 100})
	if err != nil || len(claimed) < len(ws) {
		t.Fatalf("claim: %d %v", len(claimed), err)
	}
	for i, w := range ws {
		w.Status = settleflow.Running
		if final[i] == settleflow.Settled {
			moveTo(t, s, w, "w", settleflow.Settling)
			// Released by moveTo: claim it again to settle it.
			if _, err := s.ClaimWorkflows(context.Background(), settleflow.Claim{Owner: "w", Now: base.Add(time.Hour), LeaseUntil: base.Add(2 * time.Hour), Limit: 100}); err != nil {
				t.Fatal(err)
			}
		}
		moveTo(t, s, w, "w", final[i])
	}
}

func reserveInsert(w *settleflow.Workflow, ref string) settleflow.Insert {
	return settleflow.Insert{Workflow: w, Reserve: true, Ref: ref}
}

// testFundsAdmission: of concurrent reserving inserts for one customer,
// exactly as many as the balance covers are admitted; a refused one stores
// nothing; the boundary (available equal to the quote) admits; a replay
// is never refused.
func testFundsAdmission(t *testing.T, s settleflow.Store) {
	ctx := context.Background()
	fund(t, s, settleflow.Test, "0xref", 10*1250)
	var mu sync.Mutex
	admitted, refused := 0, 0
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := newWorkflow(settleflow.Test, base.Add(time.Duration(i)*time.Millisecond), "cus_f", "triage")
			res, err := s.InsertWorkflows(ctx, []settleflow.Insert{reserveInsert(w, "0xref")})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				t.Error(err)
			case res[0].Insufficient != nil:
				refused++
				if _, err := s.GetWorkflow(ctx, settleflow.Test, w.ID); !errors.Is(err, settleflow.ErrNotFound) {
					t.Errorf("a refused insert was stored: %v", err)
				}
			default:
				admitted++
			}
		}()
	}
	wg.Wait()
	if admitted != 10 || refused != 90 {
		t.Fatalf("admitted %d, refused %d; want 10 and 90", admitted, refused)
	}
	a, err := s.GetAccount(ctx, settleflow.Test, "cus_f", "0xref")
	if err != nil || a.Reserved != 10*1250 || a.Available() != 0 || a.CustomerID != "cus_f" {
		t.Fatalf("account %+v %v", a, err)
	}
	// In one batch: admitted in order until the balance is spent.
	fund(t, s, settleflow.Test, "0xref", 1250)
	x := newWorkflow(settleflow.Test, base.Add(time.Second), "cus_f", "triage")
	y := newWorkflow(settleflow.Test, base.Add(2*time.Second), "cus_f", "triage")
	res, err := s.InsertWorkflows(ctx, []settleflow.Insert{reserveInsert(x, "0xref"), reserveInsert(y, "0xref")})
	if err != nil || res[0].Insufficient != nil || res[1].Insufficient == nil || res[1].Insufficient.Available() != 0 {
		t.Fatalf("batch: %+v %v", res, err)
	}
	got := mustGet(t, s, settleflow.Test, x.ID)
	if got.Reserved != 1250 || got.AccountRef != "0xref" {
		t.Fatalf("admitted workflow reserved %d against %q", got.Reserved, got.AccountRef)
	}
	// The account changed at the admitted workflow's creation, on the
	// engine's clock, not the Store's.
	if a, err := s.GetAccount(ctx, settleflow.Test, "cus_f", "0xref"); err != nil || !a.UpdatedAt.Equal(x.CreatedAt) {
		t.Fatalf("the admission wrote the account's updatedAt %v (%v), want the admitted workflow's creation time %s", a.UpdatedAt, err, x.CreatedAt)
	}
	// A replay is never refused.
	k := newWorkflow(settleflow.Test, base.Add(3*time.Second), "cus_f", "triage")
	in := reserveInsert(k, "0xref")
	in.IdempotencyKey, in.RequestHash = "key-1", "h"
	if res, err := s.InsertWorkflows(ctx, []settleflow.Insert{in}); err != nil || res[0].Insufficient == nil {
		t.Fatalf("keyed insert without funds: %+v %v", res, err)
	}
	fund(t, s, settleflow.Test, "0xref", 1250)
	if res, err := s.InsertWorkflows(ctx, []settleflow.Insert{in}); err != nil || res[0].Insufficient != nil || res[0].Existing != nil {
		t.Fatalf("keyed insert: %+v %v", res, err)
	}
	again := in
	again.Workflow = newWorkflow(settleflow.Test, base.Add(4*time.Second), "cus_f", "triage")
	if res, err := s.InsertWorkflows(ctx, []settleflow.Insert{again}); err != nil || res[0].Existing == nil || res[0].Insufficient != nil {
		t.Fatalf("replay with the balance spent: %+v %v", res, err)
	}
}

// testFundsLedger: ending a workflow gives its reservation back, Settled
// also charges it; a cancel releases; ApplyFunds is compare and set.
func testFundsLedger(t *testing.T, s settleflow.Store) {
	ctx := context.Background()
	fund(t, s, settleflow.Test, "0xl", 3*1250)
	ws := []*settleflow.Workflow{newWorkflow(settleflow.Test, base, "cus_l", "triage"),
		newWorkflow(settleflow.Test, base.Add(time.Millisecond), "cus_l", "triage"),
		newWorkflow(settleflow.Test, base.Add(2*time.Millisecond), "cus_l", "triage")}
	for _, w := range ws {
		if res, err := s.InsertWorkflows(ctx, []settleflow.Insert{reserveInsert(w, "0xl")}); err != nil || res[0].Insufficient != nil {
			t.Fatalf("insert: %+v %v", res, err)
		}
	}
	// Cancel the third.
	if _, ok, err := s.CancelWorkflow(ctx, settleflow.Test, ws[2].ID, base.Add(time.Minute), canceledEvent(ws[2], base.Add(time.Minute))); err != nil || !ok {
		t.Fatalf("cancel: %v %v", ok, err)
	}
	settle(t, s, ws[:2], []settleflow.Status{settleflow.Settled, settleflow.Failed})
	a, err := s.GetAccount(ctx, settleflow.Test, "cus_l", "0xl")
	if err != nil || a.Reserved != 0 || a.Charged != 1250 || a.OnChain() != 2*1250 || a.Available() != 2*1250 {
		t.Fatalf("account after settle, fail and cancel: %+v %v", a, err)
	}
	// Compare and set: a stale cursor applies nothing.
	res, err := s.ApplyFunds(ctx, settleflow.FundsBatch{Environment: settleflow.Test, From: settleflow.FundsCursor{}, To: settleflow.FundsCursor{Block: 99, Hash: "0x99"},
		Events: []settleflow.FundsEvent{{Kind: settleflow.FundsDeposit, Ref: "0xl", Amount: 1}}, UpdatedAt: base})
	if ok := res.Applied; err != nil || ok {
		t.Fatalf("stale cursor applied: %v %v", ok, err)
	}
	// Withdrawal request, cancel, withdrawal.
	from, _ := s.FundsCursor(ctx, settleflow.Test)
	to := settleflow.FundsCursor{Block: from.Block + 1, Hash: "0xw"}
	res, err = s.ApplyFunds(ctx, settleflow.FundsBatch{Environment: settleflow.Test, From: from, To: to, UpdatedAt: base, Events: []settleflow.FundsEvent{
		{Kind: settleflow.FundsWithdrawalRequested, Ref: "0xl", Amount: 1000, TxHash: "0xw", LogIndex: 0},
		{Kind: settleflow.FundsWithdrawn, Ref: "0xl", Amount: 1000, TxHash: "0xw", LogIndex: 1}}})
	if err != nil || !res.Applied {
		t.Fatal(res, err)
	}
	a, _ = s.GetAccount(ctx, settleflow.Test, "cus_l", "0xl")
	if a.Deposited != 3*1250-1000 || a.PendingWithdrawal != 0 {
		t.Fatalf("after a withdrawal %+v", a)
	}
	// MarkFaucet: once.
	first, err1 := s.MarkFaucet(ctx, settleflow.Test, "cus_l", "0xl", base, time.Time{})
	second, err2 := s.MarkFaucet(ctx, settleflow.Test, "cus_l", "0xl", base, base.Add(time.Hour))
	if !first || second || err1 != nil || err2 != nil {
		t.Fatalf("MarkFaucet %v %v (%v %v): once, and never taken over once deposited", first, second, err1, err2)
	}
	// A mark with nothing deposited is taken over once stale, by one
	// caller, and not before.
	if ok, err := s.MarkFaucet(ctx, settleflow.Test, "cus_s", "0xs", base, time.Time{}); !ok || err != nil {
		t.Fatalf("first mark: %v %v", ok, err)
	}
	if ok, _ := s.MarkFaucet(ctx, settleflow.Test, "cus_s", "0xs", base.Add(time.Second), base); ok {
		t.Fatal("a fresh mark was taken over")
	}
	if ok, _ := s.MarkFaucet(ctx, settleflow.Test, "cus_s", "0xs", base.Add(time.Hour), base.Add(time.Minute)); !ok {
		t.Fatal("a stale mark with nothing deposited was not taken over")
	}
	if ok, _ := s.MarkFaucet(ctx, settleflow.Test, "cus_s", "0xs", base.Add(time.Hour), base.Add(time.Minute)); ok {
		t.Fatal("a mark taken over twice")
	}
}

// testRefunds: only a Settled workflow is refunded, never beyond its
// charge, also under concurrency; success counts into the workflow and the
// account; refund keys replay.
func testRefunds(t *testing.T, s settleflow.Store) {
	ctx := context.Background()
	fund(t, s, settleflow.Test, "0xr", 1250)
	w := newWorkflow(settleflow.Test, base, "cus_r", "triage")
	if res, err := s.InsertWorkflows(ctx, []settleflow.Insert{reserveInsert(w, "0xr")}); err != nil || res[0].Insufficient != nil {
		t.Fatal(res, err)
	}
	mk := func(amount int64, at time.Duration) *settleflow.Refund {
		now := base.Add(at)
		return &settleflow.Refund{ID: ids.New(ids.Refund, now), Object: "refund", WorkflowID: w.ID, Amount: amount, Currency: "usd",
			Status: settleflow.RefundPending, CreatedAt: now, UpdatedAt: now}
	}
	var se *settleflow.StateError
	if _, err := s.InsertRefund(ctx, settleflow.RefundInsert{Refund: mk(1, 0)}); !errors.As(err, &se) || se.Status != settleflow.Pending {
		t.Fatalf("refund of a Pending workflow: %v", err)
	}
	settle(t, s, []*settleflow.Workflow{w}, []settleflow.Status{settleflow.Settled})
	w = mustGet(t, s, settleflow.Test, w.ID)
	// 20 concurrent refunds of 100 against a charge of 1250: 12 fit.
	var mu sync.Mutex
	okN, over := 0, 0
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.InsertRefund(ctx, settleflow.RefundInsert{Refund: mk(100, time.Duration(i+1)*time.Millisecond)})
			var re *settleflow.RefundableError
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				okN++
			case errors.As(err, &re):
				over++
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if okN != 12 || over != 8 {
		t.Fatalf("concurrent refunds: %d admitted, %d over; want 12 and 8", okN, over)
	}
	// The rest (50) by amount 0; then nothing is left.
	rest, err := s.InsertRefund(ctx, settleflow.RefundInsert{Refund: mk(0, time.Second), IdempotencyKey: "rk", RequestHash: "h"})
	if err != nil || rest.Refund.Amount != 50 || rest.Refund.Sequence != w.Sequence || rest.Refund.CustomerID != "cus_r" {
		t.Fatalf("refund of the rest: %+v %v", rest, err)
	}
	replay, err := s.InsertRefund(ctx, settleflow.RefundInsert{Refund: mk(0, 2*time.Second), IdempotencyKey: "rk", RequestHash: "h"})
	if err != nil || !replay.Existing || replay.Refund.ID != rest.Refund.ID {
		t.Fatalf("replay: %+v %v", replay, err)
	}
	var re *settleflow.RefundableError
	if _, err := s.InsertRefund(ctx, settleflow.RefundInsert{Refund: mk(0, 3*time.Second)}); !errors.As(err, &re) || re.Refundable != 0 {
		t.Fatalf("nothing left: %v", err)
	}
	// Claim, succeed one, fail another.
	claimed, err := s.ClaimRefunds(ctx, settleflow.Claim{Owner: "w", Now: base.Add(time.Hour), LeaseUntil: base.Add(2 * time.Hour), Limit: 100})
	if err != nil || len(claimed) != 13 {
		t.Fatalf("claim: %d %v", len(claimed), err)
	}
	if again, _ := s.ClaimRefunds(ctx, settleflow.Claim{Owner: "v", Now: base.Add(time.Hour), LeaseUntil: base.Add(2 * time.Hour), Limit: 100}); len(again) != 0 {
		t.Fatalf("claimed twice: %d", len(again))
	}
	at := base.Add(time.Hour)
	ev := &settleflow.Event{ID: ids.New(ids.Event, at), Object: "event", Type: settleflow.EventRefundSucceeded, CreatedAt: at,
		Data: settleflow.EventData{WorkflowID: w.ID, Refund: claimed[0]}}
	applied, err := s.UpdateRefunds(ctx, []settleflow.RefundUpdate{
		{ID: claimed[0].ID, Owner: "w", Status: settleflow.RefundSucceeded, RunAt: at, UpdatedAt: at, Event: ev,
			Settlement: &settleflow.Settlement{ChainID: 1337, TxHash: "0xr"}},
		{ID: claimed[1].ID, Owner: "w", Status: settleflow.RefundFailed, RunAt: at, UpdatedAt: at, Failure: &settleflow.Failure{Code: "x", Message: "y"}},
		{ID: claimed[2].ID, Owner: "nobody", Status: settleflow.RefundSucceeded, RunAt: at, UpdatedAt: at},
	})
	if err != nil || !applied[0] || !applied[1] || applied[2] {
		t.Fatalf("update refunds: %v %v", applied, err)
	}
	got := mustGet(t, s, settleflow.Test, w.ID)
	a, _ := s.GetAccount(ctx, settleflow.Test, "cus_r", "0xr")
	if got.Refunded.Amount != claimed[0].Amount || a.Refunded != claimed[0].Amount {
		t.Fatalf("refunded: workflow %d, account %d, want %d", got.Refunded.Amount, a.Refunded, claimed[0].Amount)
	}
	r, err := s.GetRefund(ctx, settleflow.Test, claimed[0].ID)
	if err != nil || r.Status != settleflow.RefundSucceeded || r.Settlement == nil || r.Settlement.TxHash != "0xr" {
		t.Fatalf("refund after success: %+v %v", r, err)
	}
	// The failed refund's amount can be refunded again.
	if res, err := s.InsertRefund(ctx, settleflow.RefundInsert{Refund: mk(0, 4*time.Second)}); err != nil || res.Refund.Amount != claimed[1].Amount {
		t.Fatalf("after a failed refund: %+v %v", res, err)
	}
	page, more, err := s.ListRefunds(ctx, settleflow.RefundQuery{Environment: settleflow.Test, WorkflowID: w.ID, Status: settleflow.RefundSucceeded, Limit: 10})
	if err != nil || more || len(page) != 1 || page[0].ID != claimed[0].ID {
		t.Fatalf("list: %v %v %v", page, more, err)
	}
	all, more, err := s.ListRefunds(ctx, settleflow.RefundQuery{Environment: settleflow.Test, Limit: 5})
	if err != nil || !more || len(all) != 5 || all[0].ID < all[4].ID {
		t.Fatalf("list all: %d %v %v", len(all), more, err)
	}
	evs, _, err := s.ListEvents(ctx, settleflow.EventQuery{Environment: settleflow.Test, Type: settleflow.EventRefundSucceeded, Limit: 10})
	if err != nil || len(evs) != 1 || evs[0].Data.Refund == nil || evs[0].Data.Refund.ID != claimed[0].ID {
		t.Fatalf("refund events: %+v %v", evs, err)
	}
}

// applyBatch applies evs as the next block's batch and returns what it did.
func applyBatch(t *testing.T, s settleflow.Store, evs ...settleflow.FundsEvent) settleflow.FundsApplied {
	t.Helper()
	ctx := context.Background()
	from, err := s.FundsCursor(ctx, settleflow.Test)
	if err != nil {
		t.Fatal(err)
	}
	to := settleflow.FundsCursor{Block: from.Block + 1, Hash: fmt.Sprintf("0xh%d", from.Block+1)}
	for i := range evs {
		if evs[i].BlockNumber == 0 {
			evs[i].BlockNumber = to.Block
		}
	}
	res, err := s.ApplyFunds(ctx, settleflow.FundsBatch{Environment: settleflow.Test, From: from, To: to, Events: evs, UpdatedAt: base})
	if err != nil || !res.Applied {
		t.Fatalf("ApplyFunds: %+v %v", res, err)
	}
	return res
}

func account(t *testing.T, s settleflow.Store, customerID, ref string) *settleflow.Account {
	t.Helper()
	a, err := s.GetAccount(context.Background(), settleflow.Test, customerID, ref)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// testFundsQuarantine: an event the settler could not read (Invalid), or
// whose sum would pass the bounds of int64, is quarantined once, with its
// reason, and counted on its account; the batch's other events are applied;
// an event is applied once by (transaction, log index); a quarantined
// account is refused at admission whatever its balance.
func testFundsQuarantine(t *testing.T, s settleflow.Store) {
	ctx := context.Background()
	res := applyBatch(t, s,
		settleflow.FundsEvent{Kind: settleflow.FundsDeposit, Ref: "0xq", Amount: 5000, TxHash: "0x1", LogIndex: 0},
		settleflow.FundsEvent{Kind: settleflow.FundsWithdrawalRequested, Ref: "0xq", TxHash: "0x2", LogIndex: 0, Invalid: "moves 2^63 cents"},
		settleflow.FundsEvent{Kind: settleflow.FundsDeposit, Ref: "0xo", Amount: math.MaxInt64, TxHash: "0x3", LogIndex: 0},
		settleflow.FundsEvent{Kind: settleflow.FundsDeposit, Ref: "0xo", Amount: 1, TxHash: "0x3", LogIndex: 1},
		settleflow.FundsEvent{Kind: settleflow.FundsDeposit, Ref: "0xok", Amount: 7000, TxHash: "0x4", LogIndex: 0})
	if len(res.Quarantined) != 2 || res.Quarantined[0].Event.TxHash != "0x2" || res.Quarantined[0].Reason != "moves 2^63 cents" ||
		res.Quarantined[1].Event.TxHash != "0x3" || res.Quarantined[1].Event.LogIndex != 1 || res.Quarantined[1].Reason == "" {
		t.Fatalf("quarantined %+v", res.Quarantined)
	}
	if a := account(t, s, "cus_q", "0xq"); a.Deposited != 5000 || a.Quarantined != 1 || a.PendingWithdrawal != 0 {
		t.Fatalf("quarantined account %+v", a)
	}
	if a := account(t, s, "cus_o", "0xo"); a.Deposited != math.MaxInt64 || a.Quarantined != 1 {
		t.Fatalf("overflowing account %+v", a)
	}
	if a := account(t, s, "cus_ok", "0xok"); a.Deposited != 7000 || a.Quarantined != 0 {
		t.Fatalf("the other customer %+v", a)
	}
	// The same events again (a replay): nothing applied twice, nothing
	// quarantined twice.
	res = applyBatch(t, s,
		settleflow.FundsEvent{Kind: settleflow.FundsDeposit, Ref: "0xq", Amount: 5000, TxHash: "0x1", LogIndex: 0},
		settleflow.FundsEvent{Kind: settleflow.FundsWithdrawalRequested, Ref: "0xq", TxHash: "0x2", LogIndex: 0, Invalid: "moves 2^63 cents"},
		settleflow.FundsEvent{Kind: settleflow.FundsDeposit, Ref: "0xok", Amount: 7000, TxHash: "0x4", LogIndex: 0})
	if len(res.Quarantined) != 0 {
		t.Fatalf("quarantined again: %+v", res.Quarantined)
	}
	if a := account(t, s, "cus_q", "0xq"); a.Deposited != 5000 || a.Quarantined != 1 {
		t.Fatalf("after a replay %+v", a)
	}
	if a := account(t, s, "cus_ok", "0xok"); a.Deposited != 7000 {
		t.Fatalf("a deposit applied twice: %+v", a)
	}
	st, err := s.FundsStatus(ctx, settleflow.Test)
	if err != nil || st.Quarantined != 2 || st.Cursor.Block != 2 {
		t.Fatalf("funds status %+v %v", st, err)
	}
	// Admission: the quarantined account is refused although 5000 would
	// cover the quote; the other is admitted.
	q := newWorkflow(settleflow.Test, base, "cus_q", "triage")
	ok := newWorkflow(settleflow.Test, base.Add(time.Millisecond), "cus_ok", "triage")
	ins, err := s.InsertWorkflows(ctx, []settleflow.Insert{reserveInsert(q, "0xq"), reserveInsert(ok, "0xok")})
	if err != nil || ins[0].Insufficient == nil || ins[0].Insufficient.Quarantined != 1 || ins[1].Insufficient != nil {
		t.Fatalf("admission: %+v %v", ins, err)
	}
	if _, err := s.GetWorkflow(ctx, settleflow.Test, q.ID); !errors.Is(err, settleflow.ErrNotFound) {
		t.Fatalf("a refused insert was stored: %v", err)
	}
}

// testFundsSaturate: a pending withdrawal that just fits an int64, over
// reservations larger than the balance, leaves the available balance
// negative (saturated, never wrapped) and admission refuses.
func testFundsSaturate(t *testing.T, s settleflow.Store) {
	ctx := context.Background()
	applyBatch(t, s, settleflow.FundsEvent{Kind: settleflow.FundsDeposit, Ref: "0xs", Amount: 1250, TxHash: "0x1"})
	w := newWorkflow(settleflow.Test, base, "cus_s", "triage")
	if res, err := s.InsertWorkflows(ctx, []settleflow.Insert{reserveInsert(w, "0xs")}); err != nil || res[0].Insufficient != nil {
		t.Fatalf("insert: %+v %v", res, err)
	}
	// The owner withdraws everything (reservations outlive it), then
	// asks for the largest amount that fits.
	applyBatch(t, s,
		settleflow.FundsEvent{Kind: settleflow.FundsWithdrawalRequested, Ref: "0xs", Amount: 1250, TxHash: "0x2"},
		settleflow.FundsEvent{Kind: settleflow.FundsWithdrawn, Ref: "0xs", Amount: 1250, TxHash: "0x3"},
		settleflow.FundsEvent{Kind: settleflow.FundsWithdrawalRequested, Ref: "0xs", Amount: math.MaxInt64, TxHash: "0x4"})
	a := account(t, s, "cus_s", "0xs")
	if a.Reserved != 1250 || a.OnChain() != 0 || a.PendingWithdrawal != math.MaxInt64 || a.Available() != math.MinInt64 {
		t.Fatalf("account %+v available %d; want saturated at the smallest int64", a, a.Available())
	}
	x := newWorkflow(settleflow.Test, base.Add(time.Second), "cus_s", "triage")
	if res, err := s.InsertWorkflows(ctx, []settleflow.Insert{reserveInsert(x, "0xs")}); err != nil || res[0].Insufficient == nil {
		t.Fatalf("admitted against a wrapped balance: %+v %v", res, err)
	}
}

// testFundsOwner: an owner change sets the account's owner, and a later
// one replaces it.
func testFundsOwner(t *testing.T, s settleflow.Store) {
	applyBatch(t, s,
		settleflow.FundsEvent{Kind: settleflow.FundsOwnerSet, Ref: "0xw", Owner: "0xAa", TxHash: "0x1", LogIndex: 0},
		settleflow.FundsEvent{Kind: settleflow.FundsDeposit, Ref: "0xw", Amount: 10, TxHash: "0x1", LogIndex: 1})
	if a := account(t, s, "cus_w", "0xw"); a.Owner != "0xAa" || a.Deposited != 10 {
		t.Fatalf("owner %+v", a)
	}
	applyBatch(t, s, settleflow.FundsEvent{Kind: settleflow.FundsOwnerSet, Ref: "0xw", Owner: "0xBb", TxHash: "0x2"})
	if a := account(t, s, "cus_w", "0xw"); a.Owner != "0xBb" {
		t.Fatalf("changed owner %+v", a)
	}
	if a := account(t, s, "cus_none", "0xnone"); a.Owner != "" {
		t.Fatalf("an account never seen has an owner: %+v", a)
	}
}

// testFundsRewind: a rewind reverts, newest first, what was applied after
// the block it goes back to (deposits, withdrawals, requests, owners),
// drops the quarantine and history there, is compare and set; events
// applied again after it count once and announce nothing new (EventsFor is
// called once per event ever applied).
func testFundsRewind(t *testing.T, s settleflow.Store) {
	ctx := context.Background()
	announced := 0
	batch := func(evs ...settleflow.FundsEvent) {
		t.Helper()
		from, _ := s.FundsCursor(ctx, settleflow.Test)
		to := settleflow.FundsCursor{Block: from.Block + 1, Hash: fmt.Sprintf("0xh%d", from.Block+1)}
		for i := range evs {
			evs[i].BlockNumber = to.Block
		}
		res, err := s.ApplyFunds(ctx, settleflow.FundsBatch{Environment: settleflow.Test, From: from, To: to, Events: evs, UpdatedAt: base,
			EventsFor: func(ev settleflow.FundsEvent, after *settleflow.Account) *settleflow.Event {
				announced++
				return &settleflow.Event{ID: ids.New(ids.Event, base.Add(time.Duration(announced)*time.Millisecond)), Object: "event",
					Type: settleflow.EventCustomerFunded, CreatedAt: base, Data: settleflow.EventData{CustomerID: "cus_r"}}
			}})
		if err != nil || !res.Applied {
			t.Fatalf("ApplyFunds: %+v %v", res, err)
		}
	}
	batch(settleflow.FundsEvent{Kind: settleflow.FundsOwnerSet, Ref: "0xr", Owner: "0xA", TxHash: "0x1", LogIndex: 0},
		settleflow.FundsEvent{Kind: settleflow.FundsDeposit, Ref: "0xr", Amount: 1000, TxHash: "0x1", LogIndex: 1},
		settleflow.FundsEvent{Kind: settleflow.FundsWithdrawalRequested, Ref: "0xr", Amount: 300, TxHash: "0x1", LogIndex: 2}) // block 1
	keep := account(t, s, "cus_r", "0xr")
	batch(settleflow.FundsEvent{Kind: settleflow.FundsDeposit, Ref: "0xr", Amount: 500, TxHash: "0x2"}, // block 2
		settleflow.FundsEvent{Kind: settleflow.FundsWithdrawalCanceled, Ref: "0xr", TxHash: "0x2", LogIndex: 1})
	batch(settleflow.FundsEvent{Kind: settleflow.FundsWithdrawalRequested, Ref: "0xr", Amount: 200, TxHash: "0x3"}, // block 3
		settleflow.FundsEvent{Kind: settleflow.FundsWithdrawn, Ref: "0xr", Amount: 200, TxHash: "0x3", LogIndex: 1},
		settleflow.FundsEvent{Kind: settleflow.FundsOwnerSet, Ref: "0xr", Owner: "0xB", TxHash: "0x3", LogIndex: 2},
		settleflow.FundsEvent{Kind: settleflow.FundsDeposit, Ref: "0xr", TxHash: "0x3", LogIndex: 3, Invalid: "bad"})
	// Each applied event is offered once (the quarantined one is not).
	if a := account(t, s, "cus_r", "0xr"); a.Deposited != 1300 || a.Owner != "0xB" || a.Quarantined != 1 || announced != 8 {
		t.Fatalf("before the rewind: %+v, %d announced", a, announced)
	}
	hist, err := s.FundsHistory(ctx, settleflow.Test, 10)
	if err != nil || len(hist) != 3 || hist[0].Block != 3 || hist[2] != (settleflow.FundsCursor{Block: 1, Hash: "0xh1"}) {
		t.Fatalf("history %+v %v", hist, err)
	}
	// Compare and set: a stale From rewinds nothing.
	if ok, err := s.RewindFunds(ctx, settleflow.FundsRewind{Environment: settleflow.Test, From: hist[1], To: hist[2], UpdatedAt: base}); ok || err != nil {
		t.Fatalf("a stale rewind: %v %v", ok, err)
	}
	if ok, err := s.RewindFunds(ctx, settleflow.FundsRewind{Environment: settleflow.Test, From: hist[0], To: hist[2], UpdatedAt: base}); !ok || err != nil {
		t.Fatalf("rewind: %v %v", ok, err)
	}
	a := account(t, s, "cus_r", "0xr")
	if a.Deposited != keep.Deposited || a.PendingWithdrawal != keep.PendingWithdrawal || a.Owner != keep.Owner || a.Quarantined != 0 {
		t.Fatalf("after the rewind %+v, want as after block 1: %+v", a, keep)
	}
	st, _ := s.FundsStatus(ctx, settleflow.Test)
	if st.Cursor != hist[2] || st.Quarantined != 0 || !st.CurrentAt.IsZero() {
		t.Fatalf("status after the rewind %+v", st)
	}
	if h, _ := s.FundsHistory(ctx, settleflow.Test, 10); len(h) != 1 {
		t.Fatalf("history after the rewind %+v", h)
	}
	// The new chain holds block 2's deposit again (same transaction and
	// log index) and a new one: the first counts once and is not
	// announced again.
	batch(settleflow.FundsEvent{Kind: settleflow.FundsDeposit, Ref: "0xr", Amount: 500, TxHash: "0x2"},
		settleflow.FundsEvent{Kind: settleflow.FundsDeposit, Ref: "0xr", Amount: 1, TxHash: "0x9"})
	if a := account(t, s, "cus_r", "0xr"); a.Deposited != 1501 || a.PendingWithdrawal != 300 || announced != 9 {
		t.Fatalf("after the new chain: %+v, %d announced", a, announced)
	}
	// Back to the zero cursor: everything reverted.
	cur, _ := s.FundsCursor(ctx, settleflow.Test)
	if ok, err := s.RewindFunds(ctx, settleflow.FundsRewind{Environment: settleflow.Test, From: cur, UpdatedAt: base}); !ok || err != nil {
		t.Fatalf("rewind to the start: %v %v", ok, err)
	}
	if a := account(t, s, "cus_r", "0xr"); a.Deposited != 0 || a.PendingWithdrawal != 0 || a.Owner != "" {
		t.Fatalf("after a rewind to the start: %+v", a)
	}
	if c, _ := s.FundsCursor(ctx, settleflow.Test); c != (settleflow.FundsCursor{}) {
		t.Fatalf("cursor %+v", c)
	}
	// MarkFundsCurrent on the zero cursor, then the first batch.
	if err := s.MarkFundsCurrent(ctx, settleflow.Test, settleflow.FundsCursor{}, base); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.FundsStatus(ctx, settleflow.Test); !st.CurrentAt.Equal(base) || st.Cursor != (settleflow.FundsCursor{}) {
		t.Fatalf("current at the start: %+v", st)
	}
	batch(settleflow.FundsEvent{Kind: settleflow.FundsDeposit, Ref: "0xr", Amount: 1000, TxHash: "0x1", LogIndex: 1})
	if a := account(t, s, "cus_r", "0xr"); a.Deposited != 1000 {
		t.Fatalf("after the start: %+v", a)
	}
}

// testFundsEvents: EventsFor is offered every event applied for the first
// time (deposits, owner changes, withdrawal requests, cancellations,
// withdrawals) with the account after it, and what it returns is in the
// outbox after the batch, in its transaction: a batch that is not applied
// (a stale From) writes nothing, and a nil builds no event.
func testFundsEvents(t *testing.T, s settleflow.Store) {
	ctx := context.Background()
	type offered struct {
		kind  settleflow.FundsEventKind
		after settleflow.Account
	}
	var got []offered
	n := 0
	build := func(ev settleflow.FundsEvent, after *settleflow.Account) *settleflow.Event {
		got = append(got, offered{ev.Kind, *after})
		var typ settleflow.EventType
		switch ev.Kind {
		case settleflow.FundsOwnerSet:
			typ = settleflow.EventCustomerOwnerSet
		case settleflow.FundsWithdrawalRequested:
			typ = settleflow.EventCustomerWithdrawalRequested
		default:
			return nil
		}
		n++
		bal := after.Balance()
		return &settleflow.Event{ID: ids.New(ids.Event, base.Add(time.Duration(n)*time.Millisecond)), Object: "event", Type: typ,
			CreatedAt: base.Add(time.Duration(n) * time.Millisecond), Data: settleflow.EventData{CustomerID: "cus_ev", Balance: &bal,
				Owner: &settleflow.OwnerSetEvent{Address: ev.Owner, TxHash: ev.TxHash, BlockNumber: ev.BlockNumber}}}
	}
	from, _ := s.FundsCursor(ctx, settleflow.Test)
	to := settleflow.FundsCursor{Block: from.Block + 1, Hash: fmt.Sprintf("0xe%d", from.Block+1)}
	evs := []settleflow.FundsEvent{
		{Kind: settleflow.FundsDeposit, Ref: "0xev", Amount: 1000, TxHash: "0xe1", LogIndex: 0, BlockNumber: to.Block},
		{Kind: settleflow.FundsOwnerSet, Ref: "0xev", Owner: "0xOwner", TxHash: "0xe1", LogIndex: 1, BlockNumber: to.Block},
		{Kind: settleflow.FundsWithdrawalRequested, Ref: "0xev", Amount: 400, TxHash: "0xe1", LogIndex: 2, BlockNumber: to.Block},
		{Kind: settleflow.FundsWithdrawalCanceled, Ref: "0xev", TxHash: "0xe1", LogIndex: 3, BlockNumber: to.Block},
	}
	// A stale From: nothing offered, nothing written.
	stale := settleflow.FundsCursor{Block: from.Block + 7, Hash: "0xstale"}
	if res, err := s.ApplyFunds(ctx, settleflow.FundsBatch{Environment: settleflow.Test, From: stale, To: to, Events: evs, UpdatedAt: base, EventsFor: build}); err != nil || res.Applied {
		t.Fatalf("a stale batch: %+v %v", res, err)
	}
	if len(got) != 0 {
		t.Fatalf("a batch not applied offered %+v", got)
	}
	res, err := s.ApplyFunds(ctx, settleflow.FundsBatch{Environment: settleflow.Test, From: from, To: to, Events: evs, UpdatedAt: base, EventsFor: build})
	if err != nil || !res.Applied {
		t.Fatalf("ApplyFunds: %+v %v", res, err)
	}
	if len(got) != 4 {
		t.Fatalf("offered %+v, want the 4 events", got)
	}
	want := []struct {
		kind               settleflow.FundsEventKind
		deposited, pending int64
		owner              string
	}{{settleflow.FundsDeposit, 1000, 0, ""}, {settleflow.FundsOwnerSet, 1000, 0, "0xOwner"},
		{settleflow.FundsWithdrawalRequested, 1000, 400, "0xOwner"}, {settleflow.FundsWithdrawalCanceled, 1000, 0, "0xOwner"}}
	for i, w := range want {
		g := got[i]
		if g.kind != w.kind || g.after.Deposited != w.deposited || g.after.PendingWithdrawal != w.pending || g.after.Owner != w.owner || g.after.Ref != "0xev" {
			t.Errorf("offered #%d: %s after %+v; want %s with deposited %d, pending %d, owner %q", i, g.kind, g.after, w.kind, w.deposited, w.pending, w.owner)
		}
	}
	for _, typ := range []settleflow.EventType{settleflow.EventCustomerOwnerSet, settleflow.EventCustomerWithdrawalRequested} {
		out, _, err := s.ListEvents(ctx, settleflow.EventQuery{Environment: settleflow.Test, Type: typ, Limit: 10})
		if err != nil || len(out) != 1 || out[0].Data.CustomerID != "cus_ev" || out[0].Data.Balance == nil {
			t.Errorf("%s in the outbox: %+v %v; want one", typ, out, err)
		}
	}
	// The same batch again (the cursor moved): nothing more.
	if res, err := s.ApplyFunds(ctx, settleflow.FundsBatch{Environment: settleflow.Test, From: from, To: to, Events: evs, UpdatedAt: base, EventsFor: build}); err != nil || res.Applied || len(got) != 4 {
		t.Fatalf("the batch again: %+v %v, %d offered", res, err, len(got))
	}
	// An account named by no workflow but by an owner grant is offered
	// with the grant's customer.
	gs, ok := s.(settleflow.OwnerGrantStore)
	if !ok {
		return
	}
	if _, _, err := gs.InsertOwnerGrant(ctx, settleflow.OwnerGrantRecord{Environment: settleflow.Test, CustomerID: "cus_granted", Ref: "0xgr",
		Owner: "0x00000000000000000000000000000000000000b1", Nonce: "0xev1", Origin: "o", Deadline: base.Add(time.Hour), TxHash: "0xg",
		Effective: "now", CreatedAt: base}); err != nil {
		t.Fatal(err)
	}
	from = to
	to = settleflow.FundsCursor{Block: from.Block + 1, Hash: fmt.Sprintf("0xe%d", from.Block+1)}
	if res, err := s.ApplyFunds(ctx, settleflow.FundsBatch{Environment: settleflow.Test, From: from, To: to, UpdatedAt: base, EventsFor: build,
		Events: []settleflow.FundsEvent{{Kind: settleflow.FundsOwnerSet, Ref: "0xgr", Owner: "0xB1", TxHash: "0xe2", BlockNumber: to.Block}}}); err != nil || !res.Applied {
		t.Fatalf("ApplyFunds: %+v %v", res, err)
	}
	if len(got) != 5 || got[4].after.CustomerID != "cus_granted" {
		t.Fatalf("the granted account offered as %+v; want customer cus_granted", got[len(got)-1])
	}
}
