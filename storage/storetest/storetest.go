// Package storetest is the conformance suite every settleflow.Store must
// pass. An adapter's test calls Run with a function that returns a new,
// empty, migrated Store:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) settleflow.Store { return openEmpty(t) })
//	}
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/ids"
)

// Run runs the whole suite; newStore must return an empty store each call.
func Run(t *testing.T, newStore func(t *testing.T) settleflow.Store) {
	tests := []struct {
		name string
		fn   func(*testing.T, settleflow.Store)
	}{
		{"InsertAndGet", testInsertAndGet},
		{"InsertBatchIsAtomic", testInsertBatchAtomic},
		{"Sequence", testSequence},
		{"Idempotency", testIdempotency},
		{"IdempotencyRefusedFirstUse", testIdempotencyRefusedFirstUse},
		{"IdempotencyRecord", testIdempotencyRecord},
		{"List", testList},
		{"Claim", testClaim},
		{"ClaimConcurrent", testClaimConcurrent},
		{"ClaimExcludeSettling", testClaimExcludeSettling},
		{"ReleaseSettling", testReleaseSettling},
		{"Update", testUpdate},
		{"Events", testEvents},
		{"ReleaseLeases", testReleaseLeases},
		{"Cancel", testCancel},
		{"CancelRacesClaim", testCancelRacesClaim},
		{"ListEvents", testListEvents},
		{"Prune", testPrune},
		{"Backlog", testBacklog},
		{"FundsAdmission", testFundsAdmission},
		{"FundsLedger", testFundsLedger},
		{"FundsQuarantine", testFundsQuarantine},
		{"FundsSaturate", testFundsSaturate},
		{"FundsOwner", testFundsOwner},
		{"FundsRewind", testFundsRewind},
		{"FundsEvents", testFundsEvents},
		{"Refunds", testRefunds},
		{"RefundKeyTTL", testRefundKeyTTL},
		{"Margins", testMargins},
		{"Outcome", testOutcome},
		{"FairQueue", testFairQueue},
		{"InsertClaimed", testInsertClaimed},
		{"OwnerGrants", testOwnerGrants},
		{"Attempts", testAttempts},
		{"Tasks", testTasks},
		{"TaskLease", testTaskLease},
		{"TaskClaimConcurrent", testTaskClaimConcurrent},
		{"TaskBudget", testTaskBudget},
		{"TaskNotices", testTaskNotices},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn(t, newStore(t))
		})
	}
}

// base is a fixed instant, so tests compare times exactly.
var base = time.Date(2026, 11, 21, 10, 0, 0, 123456000, time.UTC)

func newWorkflow(env settleflow.Environment, at time.Time, customer, product string) *settleflow.Workflow {
	return &settleflow.Workflow{
		Pricing:    settleflow.Pricing{Model: settleflow.PricingFixed},
		ID:         ids.New(ids.Workflow, at),
		Object:     "workflow",
		Livemode:   env.Livemode(),
		Product:    product,
		CustomerID: customer,
		Payload:    json.RawMessage(`{"ticketId":"T-42"}`),
		Quoted:     settleflow.Money{Amount: 1250, Currency: "usd"},
		Margin:     settleflow.Margin{Target: 3000},
		Status:     settleflow.Pending,
		Refunded:   settleflow.Money{Currency: "usd"},
		CreatedAt:  at,
		UpdatedAt:  at,
	}
}

func insert(t *testing.T, s settleflow.Store, ws ...*settleflow.Workflow) {
	t.Helper()
	ins := make([]settleflow.Insert, len(ws))
	for i, w := range ws {
		ins[i] = settleflow.Insert{Workflow: w}
	}
	res, err := s.InsertWorkflows(context.Background(), ins)
	if err != nil {
		t.Fatalf("InsertWorkflows: %v", err)
	}
	for i, r := range res {
		if r.Existing != nil {
			t.Fatalf("insert %d reported an existing workflow", i)
		}
	}
}

func mustGet(t *testing.T, s settleflow.Store, env settleflow.Environment, id string) *settleflow.Workflow {
	t.Helper()
	w, err := s.GetWorkflow(context.Background(), env, id)
	if err != nil {
		t.Fatalf("GetWorkflow(%s): %v", id, err)
	}
	return w
}

func equalWorkflow(t *testing.T, got, want *settleflow.Workflow) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Fatalf("workflow mismatch\n got: %s\nwant: %s", g, w)
	}
	if !reflect.DeepEqual(got.ActualCost, want.ActualCost) || got.Attempts != want.Attempts {
		t.Fatalf("cost/attempts: got %v/%d want %v/%d", got.ActualCost, got.Attempts, want.ActualCost, want.Attempts)
	}
}

func testInsertAndGet(t *testing.T, s settleflow.Store) {
	ctx := context.Background()
	w := newWorkflow(settleflow.Test, base, "cus_1", "triage")
	live := newWorkflow(settleflow.Live, base.Add(time.Millisecond), "cus_1", "triage")
	insert(t, s, w, live)
	equalWorkflow(t, mustGet(t, s, settleflow.Test, w.ID), w)
	equalWorkflow(t, mustGet(t, s, settleflow.Live, live.ID), live)
	// Environments do not see each other's workflows.
	if _, err := s.GetWorkflow(ctx, settleflow.Live, w.ID); !errors.Is(err, settleflow.ErrNotFound) {
		t.Fatalf("test workflow through live: %v, want ErrNotFound", err)
	}
	if _, err := s.GetWorkflow(ctx, settleflow.Test, live.ID); !errors.Is(err, settleflow.ErrNotFound) {
		t.Fatalf("live workflow through test: %v, want ErrNotFound", err)
	}
	if _, err := s.GetWorkflow(ctx, settleflow.Test, ids.New(ids.Workflow, base)); !errors.Is(err, settleflow.ErrNotFound) {
		t.Fatalf("unknown id: %v, want ErrNotFound", err)
	}
}

func testInsertBatchAtomic(t *testing.T, s settleflow.Store) {
	ctx := context.Background()
	a := newWorkflow(settleflow.Test, base, "cus_1", "triage")
	dup := *a // same id twice in one batch: the batch must fail whole
	_, err := s.InsertWorkflows(ctx, []settleflow.Insert{{Workflow: a}, {Workflow: &dup}})
	if err == nil {
		t.Fatal("a batch with a duplicate id was accepted")
	}
	if _, err := s.GetWorkflow(ctx, settleflow.Test, a.ID); !errors.Is(err, settleflow.ErrNotFound) {
		t.Fatalf("half a failed batch was stored: %v", err)
	}
}

func testIdempotency(t *testing.T, s settleflow.Store) {
	ctx := context.Background()
	first := newWorkflow(settleflow.Test, base, "cus_1", "triage")
	second := newWorkflow(settleflow.Test, base.Add(time.Second), "cus_1", "triage")
	live := newWorkflow(settleflow.Live, base.Add(time.Second), "cus_1", "triage")
	// Two inserts with one key in the same batch: one workflow.
	res, err := s.InsertWorkflows(ctx, []settleflow.Insert{
		{Workflow: first, IdempotencyKey: "k1", RequestHash: "h1"},
		{Workflow: second, IdempotencyKey: "k1", RequestHash: "h2"},
		{Workflow: live, IdempotencyKey: "k1", RequestHash: "h1"}, // other environment: independent
	})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Existing != nil || res[2].Existing != nil {
		t.Fatal("first use of a key reported an existing workflow")
	}
	if res[1].Existing == nil || res[1].Existing.ID != first.ID || res[1].ExistingHash != "h1" {
		t.Fatalf("second use of key: %+v, want the first workflow and hash h1", res[1])
	}
	equalJSON(t, res[1].Existing, first)
	if _, err := s.GetWorkflow(ctx, settleflow.Test, second.ID); !errors.Is(err, settleflow.ErrNotFound) {
		t.Fatal("a replayed insert stored a second workflow")
	}
	// In a later batch, still the first one.
	again := newWorkflow(settleflow.Test, base.Add(time.Hour), "cus_1", "triage")
	res, err = s.InsertWorkflows(ctx, []settleflow.Insert{{Workflow: again, IdempotencyKey: "k1", RequestHash: "h1"}})
	if err != nil || res[0].Existing == nil || res[0].Existing.ID != first.ID {
		t.Fatalf("replay in a later batch: %+v, %v", res, err)
	}
	// After the TTL the key is free again.
	late := newWorkflow(settleflow.Test, base.Add(settleflow.IdempotencyTTL+time.Second), "cus_1", "triage")
	res, err = s.InsertWorkflows(ctx, []settleflow.Insert{{Workflow: late, IdempotencyKey: "k1", RequestHash: "h9"}})
	if err != nil || res[0].Existing != nil {
		t.Fatalf("key after TTL: %+v, %v; want a fresh insert", res, err)
	}
	mustGet(t, s, settleflow.Test, late.ID)
}

func equalJSON(t *testing.T, got, want any) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Fatalf("got %s\nwant %s", g, w)
	}
}

func testList(t *testing.T, s settleflow.Store) {
	ctx := context.Background()
	var all []*settleflow.Workflow // oldest first
	for i := 0; i < 25; i++ {
		cus := fmt.Sprintf("cus_%d", i%3)
		prod := []string{"triage", "summarize"}[i%2]
		all = append(all, newWorkflow(settleflow.Test, base.Add(time.Duration(i)*time.Millisecond), cus, prod))
	}
	insert(t, s, all...)
	insert(t, s, newWorkflow(settleflow.Live, base, "cus_0", "triage")) // never listed under test

	list := func(q settleflow.ListQuery) ([]*settleflow.Workflow, bool) {
		t.Helper()
		q.Environment = settleflow.Test
		ws, more, err := s.ListWorkflows(ctx, q)
		if err != nil {
			t.Fatalf("ListWorkflows(%+v): %v", q, err)
		}
		return ws, more
	}
	// Forward through every page: newest first, no gap, no duplicate.
	var seen []string
	after := ""
	for {
		page, more := list(settleflow.ListQuery{Limit: 7, StartingAfter: after})
		for _, w := range page {
			seen = append(seen, w.ID)
		}
		if !more {
			break
		}
		after = page[len(page)-1].ID
	}
	if len(seen) != len(all) {
		t.Fatalf("forward pages returned %d workflows, want %d", len(seen), len(all))
	}
	for i, id := range seen {
		if want := all[len(all)-1-i].ID; id != want {
			t.Fatalf("forward position %d: %s, want %s", i, id, want)
		}
	}
	// Backward from the oldest: still newest first within a page.
	checkBackward(t, idsOf(all), func(before string) ([]string, bool) {
		page, more := list(settleflow.ListQuery{Limit: 7, EndingBefore: before})
		return idsOf(page), more
	})
	// Filters.
	byCus, _ := list(settleflow.ListQuery{Limit: 100, CustomerID: "cus_1"})
	byProd, _ := list(settleflow.ListQuery{Limit: 100, Product: "summarize"})
	byStatus, _ := list(settleflow.ListQuery{Limit: 100, Status: settleflow.Pending})
	none, more := list(settleflow.ListQuery{Limit: 100, Status: settleflow.Settled})
	if len(byCus) != 8 || len(byProd) != 12 || len(byStatus) != 25 || len(none) != 0 || more {
		t.Fatalf("filters: customer %d (want 8), product %d (want 12), status %d (want 25), settled %d (want 0)",
			len(byCus), len(byProd), len(byStatus), len(none))
	}
	for _, w := range byCus {
		if w.CustomerID != "cus_1" {
			t.Fatalf("customer filter returned %s", w.CustomerID)
		}
	}
	combined, _ := list(settleflow.ListQuery{Limit: 100, CustomerID: "cus_0", Product: "triage"})
	if len(combined) != 5 {
		t.Fatalf("customer+product filter returned %d, want 5", len(combined))
	}
	first, more := list(settleflow.ListQuery{Limit: 25})
	if len(first) != 25 || more {
		t.Fatalf("limit equal to the count: %d, hasMore %v", len(first), more)
	}
}

func claim(t *testing.T, s settleflow.Store, owner string, now time.Time, lease time.Duration, limit int) []*settleflow.Workflow {
	t.Helper()
	ws, err := s.ClaimWorkflows(context.Background(), settleflow.Claim{Owner: owner, Now: now, LeaseUntil: now.Add(lease), Limit: limit})
	if err != nil {
		t.Fatalf("ClaimWorkflows: %v", err)
	}
	return ws
}

func testClaim(t *testing.T, s settleflow.Store) {
	a := newWorkflow(settleflow.Test, base, "cus_1", "triage")
	b := newWorkflow(settleflow.Live, base.Add(time.Millisecond), "cus_1", "triage")
	future := newWorkflow(settleflow.Test, base.Add(time.Hour), "cus_1", "triage")
	insert(t, s, a, b, future)

	got := claim(t, s, "w1", base.Add(time.Second), time.Minute, 10)
	if len(got) != 2 {
		t.Fatalf("claimed %d, want the 2 due workflows", len(got))
	}
	for _, w := range got {
		if w.Status != settleflow.Running {
			t.Fatalf("claimed Pending workflow has status %s, want Running", w.Status)
		}
		if !w.UpdatedAt.Equal(base.Add(time.Second)) {
			t.Fatalf("updatedAt %v, want the claim time", w.UpdatedAt)
		}
	}
	if again := claim(t, s, "w2", base.Add(2*time.Second), time.Minute, 10); len(again) != 0 {
		t.Fatalf("leased workflows were claimed again: %d", len(again))
	}
	// The lease expires: another worker takes over; the workflow stays Running.
	taken := claim(t, s, "w2", base.Add(2*time.Minute), time.Minute, 1)
	if len(taken) != 1 || taken[0].Status != settleflow.Running {
		t.Fatalf("after lease expiry: %+v", taken)
	}
	// The first owner lost the lease: its update does not apply.
	tr, _ := settleflow.Running.To(settleflow.Settling)
	applied, err := s.UpdateWorkflows(context.Background(), []settleflow.Update{{
		ID: taken[0].ID, Owner: "w1", Status: settleflow.Running, Transition: tr, RunAt: base, UpdatedAt: base,
	}})
	if err != nil || applied[0] {
		t.Fatalf("update by a former owner: applied=%v err=%v", applied, err)
	}
	if n := len(claim(t, s, "w3", base.Add(2*time.Hour), time.Minute, 0)); n != 0 {
		t.Fatalf("limit 0 claimed %d", n)
	}
	// Terminal workflows are never claimed.
	w := claim(t, s, "w3", base.Add(2*time.Hour), time.Minute, 10)
	if len(w) != 3 {
		t.Fatalf("claimed %d, want 3", len(w))
	}
	for _, x := range w {
		moveTo(t, s, x, "w3", settleflow.Failed)
	}
	if n := len(claim(t, s, "w4", base.Add(24*time.Hour), time.Minute, 10)); n != 0 {
		t.Fatalf("terminal workflows claimed: %d", n)
	}
}

// testClaimExcludeSettling: an engine that does not settle claims Pending
// and Running workflows only; the Settling one waits for an engine that
// settles, which claims it.
func testClaimExcludeSettling(t *testing.T, s settleflow.Store) {
	ctx := context.Background()
	a := newWorkflow(settleflow.Test, base, "cus_1", "triage")
	b := newWorkflow(settleflow.Test, base.Add(time.Millisecond), "cus_1", "triage")
	insert(t, s, a, b)
	got := claim(t, s, "w1", base.Add(time.Second), time.Minute, 1)
	if len(got) != 1 || got[0].ID != a.ID {
		t.Fatalf("claimed %+v, want %s", got, a.ID)
	}
	moveTo(t, s, got[0], "w1", settleflow.Settling) // released, due at base
	now := base.Add(2 * time.Second)
	excl, err := s.ClaimWorkflows(ctx, settleflow.Claim{Owner: "w2", Now: now, LeaseUntil: now.Add(time.Minute), Limit: 10, ExcludeSettling: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(excl) != 1 || excl[0].ID != b.ID || excl[0].Status != settleflow.Running {
		t.Fatalf("ExcludeSettling claimed %+v, want only %s (Pending → Running)", excl, b.ID)
	}
	if w := mustGet(t, s, settleflow.Test, a.ID); w.Status != settleflow.Settling {
		t.Fatalf("the Settling workflow is %s", w.Status)
	}
	// An engine that settles takes the Settling workflow.
	all := claim(t, s, "w3", now, time.Minute, 10)
	if len(all) != 1 || all[0].ID != a.ID || all[0].Status != settleflow.Settling {
		t.Fatalf("claim with Settling: %+v, want %s", all, a.ID)
	}
}

// testReleaseSettling: the Settling workflows leased to anyone become due at
// once; Running ones keep their lease.
func testReleaseSettling(t *testing.T, s settleflow.Store) {
	ctx := context.Background()
	a := newWorkflow(settleflow.Test, base, "cus_1", "triage")
	b := newWorkflow(settleflow.Test, base.Add(time.Millisecond), "cus_1", "triage")
	insert(t, s, a, b)
	got := claim(t, s, "dead", base.Add(time.Second), time.Hour, 2)
	if len(got) != 2 {
		t.Fatalf("claimed %d, want 2", len(got))
	}
	tr, err := settleflow.Running.To(settleflow.Settling)
	if err != nil {
		t.Fatal(err)
	}
	applied, err := s.UpdateWorkflows(ctx, []settleflow.Update{{ID: a.ID, Owner: "dead", Status: settleflow.Running, Transition: tr,
		RunAt: base.Add(time.Hour), UpdatedAt: base.Add(time.Second)}}) // Settling, lease kept for an hour
	if err != nil || !applied[0] {
		t.Fatalf("to Settling: %v %v", applied, err)
	}
	now := base.Add(2 * time.Second)
	if n := len(claim(t, s, "holder", now, time.Minute, 10)); n != 0 {
		t.Fatalf("claimed %d leased workflows", n)
	}
	if err := s.ReleaseSettling(ctx, now); err != nil {
		t.Fatal(err)
	}
	taken := claim(t, s, "holder", now, time.Minute, 10)
	if len(taken) != 1 || taken[0].ID != a.ID || taken[0].Status != settleflow.Settling {
		t.Fatalf("after ReleaseSettling claimed %+v, want only the Settling %s (the Running one keeps its lease)", taken, a.ID)
	}
	// The former holder's update no longer applies.
	applied, err = s.UpdateWorkflows(ctx, []settleflow.Update{{ID: a.ID, Owner: "dead", Status: settleflow.Settling, RunAt: now, UpdatedAt: now, Release: true}})
	if err != nil || applied[0] {
		t.Fatalf("update by the former holder: applied=%v err=%v", applied, err)
	}
}

// moveTo walks x (leased to owner) to the target status.
func moveTo(t *testing.T, s settleflow.Store, x *settleflow.Workflow, owner string, to settleflow.Status) {
	t.Helper()
	tr, err := x.Status.To(to)
	if err != nil {
		t.Fatal(err)
	}
	applied, err := s.UpdateWorkflows(context.Background(), []settleflow.Update{{
		ID: x.ID, Owner: owner, Status: x.Status, Transition: tr, RunAt: base, UpdatedAt: base, Release: true,
	}})
	if err != nil || !applied[0] {
		t.Fatalf("move %s %s→%s: applied=%v err=%v", x.ID, x.Status, to, applied, err)
	}
	x.Status = to
}

func testClaimConcurrent(t *testing.T, s settleflow.Store) {
	const n = 200
	var ws []*settleflow.Workflow
	for i := 0; i < n; i++ {
		ws = append(ws, newWorkflow(settleflow.Test, base.Add(time.Duration(i)*time.Microsecond), "cus_1", "triage"))
	}
	insert(t, s, ws...)
	var mu sync.Mutex
	owners := map[string]string{}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(owner string) {
			defer wg.Done()
			for {
				got, err := s.ClaimWorkflows(context.Background(), settleflow.Claim{Owner: owner, Now: base.Add(time.Second), LeaseUntil: base.Add(time.Hour), Limit: 7})
				if err != nil {
					errs <- err
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, w := range got {
					if prev, dup := owners[w.ID]; dup {
						errs <- fmt.Errorf("%s claimed by %s and %s", w.ID, prev, owner)
					}
					owners[w.ID] = owner
				}
				mu.Unlock()
			}
		}(fmt.Sprintf("w%d", g))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(owners) != n {
		t.Fatalf("claimed %d distinct workflows, want %d", len(owners), n)
	}
}

func testUpdate(t *testing.T, s settleflow.Store) {
	ctx := context.Background()
	w := newWorkflow(settleflow.Test, base, "cus_1", "triage")
	insert(t, s, w)
	c := claim(t, s, "w1", base, time.Minute, 1)[0]
	// A transition whose From is not the expected status is refused.
	bad, _ := settleflow.Settling.To(settleflow.Settled)
	if _, err := s.UpdateWorkflows(ctx, []settleflow.Update{{ID: c.ID, Owner: "w1", Status: settleflow.Running, Transition: bad}}); err == nil {
		t.Fatal("an update with a transition from another status was accepted")
	}
	// A retry: no status change, lease released, attempts and due time set.
	applied, err := s.UpdateWorkflows(ctx, []settleflow.Update{{
		ID: c.ID, Owner: "w1", Status: settleflow.Running, Release: true, Attempts: 1,
		RunAt: base.Add(time.Hour), UpdatedAt: base.Add(time.Second),
	}})
	if err != nil || !applied[0] {
		t.Fatalf("retry update: %v %v", applied, err)
	}
	if n := len(claim(t, s, "w2", base.Add(time.Minute), time.Minute, 1)); n != 0 {
		t.Fatal("a workflow scheduled for later was claimed early")
	}
	c = claim(t, s, "w2", base.Add(time.Hour), time.Minute, 1)[0]
	if c.Attempts != 1 || c.Status != settleflow.Running {
		t.Fatalf("after retry: attempts %d status %s", c.Attempts, c.Status)
	}
	// Running → Settling with the execution's outcome; the lease is kept.
	cost := int64(800)
	achieved := settleflow.AchievedMargin(1250, cost)
	tr, _ := settleflow.Running.To(settleflow.Settling)
	at := base.Add(time.Hour + time.Second)
	applied, err = s.UpdateWorkflows(ctx, []settleflow.Update{{
		ID: c.ID, Owner: "w2", Status: settleflow.Running, Transition: tr,
		Result: json.RawMessage(`{"summary":"ok"}`), ActualCost: &cost, Achieved: &achieved,
		Charged: &c.Quoted.Amount, Cost: &settleflow.Cost{Amount: cost, Currency: "usd", Items: []settleflow.CostItem{}},
		RunAt: at.Add(time.Minute), UpdatedAt: at,
	}})
	if err != nil || !applied[0] {
		t.Fatalf("Running→Settling: %v %v", applied, err)
	}
	if n := len(claim(t, s, "w3", at, time.Minute, 1)); n != 0 {
		t.Fatal("a leased Settling workflow was claimed by another worker")
	}
	// Settling → Settled with the settlement and the completed event.
	settlement := &settleflow.Settlement{ChainID: 1337, Network: "simulated", TxHash: "0xabc", BlockNumber: 7, Confirmations: 1}
	done, _ := settleflow.Settling.To(settleflow.Settled)
	ev := &settleflow.Event{ID: ids.New(ids.Event, at), Object: "event", Type: settleflow.EventWorkflowCompleted, CreatedAt: at,
		Data: settleflow.EventData{WorkflowID: c.ID, Status: settleflow.Settled, Quoted: c.Quoted}}
	applied, err = s.UpdateWorkflows(ctx, []settleflow.Update{
		// Wrong owner first: skipped, and its event not written.
		{ID: c.ID, Owner: "w9", Status: settleflow.Settling, Transition: done, RunAt: at, UpdatedAt: at,
			Event: &settleflow.Event{ID: ids.New(ids.Event, at), Object: "event", Type: settleflow.EventWorkflowFailed, CreatedAt: at,
				Data: settleflow.EventData{WorkflowID: c.ID}}},
		{ID: c.ID, Owner: "w2", Status: settleflow.Settling, Transition: done, Settlement: settlement, RunAt: at, UpdatedAt: at, Release: true, Event: ev},
	})
	if err != nil || applied[0] || !applied[1] {
		t.Fatalf("Settling→Settled: applied=%v err=%v", applied, err)
	}
	got := mustGet(t, s, settleflow.Test, c.ID)
	want := *w
	want.Status, want.Result, want.ActualCost, want.Settlement, want.UpdatedAt = settleflow.Settled, json.RawMessage(`{"summary":"ok"}`), &cost, settlement, at
	want.Charged, want.Cost = &settleflow.Money{Amount: 1250, Currency: "usd"}, &settleflow.Cost{Amount: cost, Currency: "usd", Items: []settleflow.CostItem{}}
	want.Margin.Achieved = &achieved
	// Every update sets attempts; the last one reset them to 0.
	equalWorkflow(t, got, &want)
	evs, err := s.ClaimEvents(ctx, settleflow.Claim{Owner: "d", Now: at, LeaseUntil: at.Add(time.Minute), Limit: 10})
	if err != nil || len(evs) != 1 || evs[0].ID != ev.ID || evs[0].Type != settleflow.EventWorkflowCompleted {
		t.Fatalf("outbox after update: %+v %v; want exactly the completed event", evs, err)
	}
	equalJSON(t, evs[0], ev)
	// A terminal workflow accepts no further update.
	applied, err = s.UpdateWorkflows(ctx, []settleflow.Update{{ID: c.ID, Owner: "w2", Status: settleflow.Settling, RunAt: at, UpdatedAt: at}})
	if err != nil || applied[0] {
		t.Fatalf("update of a settled workflow: %v %v", applied, err)
	}
}

func testEvents(t *testing.T, s settleflow.Store) {
	ctx := context.Background()
	var evIDs []string
	for i := 0; i < 5; i++ {
		w := newWorkflow(settleflow.Test, base.Add(time.Duration(i)*time.Millisecond), "cus_1", "triage")
		insert(t, s, w)
		c := claim(t, s, "w", base.Add(time.Second), time.Minute, 1)[0]
		tr, _ := settleflow.Running.To(settleflow.Failed)
		at := base.Add(time.Duration(i) * time.Second)
		ev := &settleflow.Event{ID: ids.New(ids.Event, at), Object: "event", Type: settleflow.EventWorkflowFailed, Livemode: false, CreatedAt: at,
			Data: settleflow.EventData{WorkflowID: c.ID, Status: settleflow.Failed, Failure: &settleflow.Failure{Code: "x", Message: "y"}}}
		applied, err := s.UpdateWorkflows(ctx, []settleflow.Update{{ID: c.ID, Owner: "w", Status: settleflow.Running, Transition: tr, Release: true, RunAt: at, UpdatedAt: at, Event: ev}})
		if err != nil || !applied[0] {
			t.Fatal(applied, err)
		}
		evIDs = append(evIDs, ev.ID)
	}
	now := base.Add(time.Minute)
	first, err := s.ClaimEvents(ctx, settleflow.Claim{Owner: "d1", Now: now, LeaseUntil: now.Add(time.Minute), Limit: 3})
	if err != nil || len(first) != 3 {
		t.Fatalf("ClaimEvents: %d %v", len(first), err)
	}
	for i, ev := range first {
		if ev.ID != evIDs[i] {
			t.Fatalf("events not oldest first: %d is %s, want %s", i, ev.ID, evIDs[i])
		}
		if ev.Data.Failure == nil || ev.Data.Failure.Code != "x" {
			t.Fatalf("event data lost: %+v", ev.Data)
		}
	}
	rest, _ := s.ClaimEvents(ctx, settleflow.Claim{Owner: "d2", Now: now, LeaseUntil: now.Add(time.Minute), Limit: 10})
	if len(rest) != 2 {
		t.Fatalf("second claimer got %d leased-or-free events, want the 2 free ones", len(rest))
	}
	if err := s.MarkEventsDispatched(ctx, []string{first[0].ID, first[1].ID}, now); err != nil {
		t.Fatal(err)
	}
	// After the lease: the undispatched ones come back, the dispatched never.
	later := now.Add(2 * time.Minute)
	again, _ := s.ClaimEvents(ctx, settleflow.Claim{Owner: "d3", Now: later, LeaseUntil: later.Add(time.Minute), Limit: 10})
	if len(again) != 3 {
		t.Fatalf("after lease expiry: %d events, want 3 undispatched", len(again))
	}
	for _, ev := range again {
		if ev.ID == first[0].ID || ev.ID == first[1].ID {
			t.Fatal("a dispatched event came back")
		}
	}
	// A failed hand-over: due again at the chosen time, not before.
	if err := s.RetryEvents(ctx, []string{again[0].ID, again[1].ID, again[2].ID}, later.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if evs, _ := s.ClaimEvents(ctx, settleflow.Claim{Owner: "d4", Now: later.Add(30 * time.Minute), LeaseUntil: later.Add(31 * time.Minute), Limit: 10}); len(evs) != 0 {
		t.Fatalf("%d events claimed before their retry time", len(evs))
	}
	evs, _ := s.ClaimEvents(ctx, settleflow.Claim{Owner: "d4", Now: later.Add(time.Hour), LeaseUntil: later.Add(2 * time.Hour), Limit: 10})
	if len(evs) != 3 {
		t.Fatalf("after the retry time: %d events, want 3", len(evs))
	}
	if err := s.MarkEventsDispatched(ctx, []string{evs[0].ID, evs[1].ID, evs[2].ID}, later); err != nil {
		t.Fatal(err)
	}
	// An event written pre-leased (the engine hands it over itself) is not
	// claimable until its lease ends.
	w := newWorkflow(settleflow.Test, base.Add(time.Hour), "cus_1", "triage")
	insert(t, s, w)
	c := claim(t, s, "w", base.Add(2*time.Hour), time.Minute, 1)[0]
	tr, _ := settleflow.Running.To(settleflow.Failed)
	at := base.Add(2 * time.Hour)
	ev := &settleflow.Event{ID: ids.New(ids.Event, at), Object: "event", Type: settleflow.EventWorkflowFailed, CreatedAt: at,
		Data: settleflow.EventData{WorkflowID: c.ID, Status: settleflow.Failed}}
	if applied, err := s.UpdateWorkflows(ctx, []settleflow.Update{{ID: c.ID, Owner: "w", Status: settleflow.Running, Transition: tr,
		Release: true, RunAt: at, UpdatedAt: at, Event: ev, EventLease: at.Add(time.Minute)}}); err != nil || !applied[0] {
		t.Fatal(applied, err)
	}
	if evs, _ := s.ClaimEvents(ctx, settleflow.Claim{Owner: "d5", Now: at.Add(30 * time.Second), LeaseUntil: at.Add(time.Hour), Limit: 10}); len(evs) != 0 {
		t.Fatalf("a pre-leased event was claimed during its lease: %d", len(evs))
	}
	if evs, _ := s.ClaimEvents(ctx, settleflow.Claim{Owner: "d5", Now: at.Add(2 * time.Minute), LeaseUntil: at.Add(time.Hour), Limit: 10}); len(evs) != 1 || evs[0].ID != ev.ID {
		t.Fatalf("after its lease: %d events, want the pre-leased one", len(evs))
	}
}

// A workflow is numbered when it is first to be settled: an insert gives
// no number; an applied update that asks (Update.Sequence) numbers its
// workflow, and a claim numbers the Settling workflows it takes, in id
// order within a write; numbers are dense from 1 in each environment, kept
// by every read and never changed; updates that do not apply, failed
// writes, failures and workflows moved to Settling without asking take
// none.
func testSequence(t *testing.T, s settleflow.Store) {
	ctx := context.Background()
	var test, live []*settleflow.Workflow
	for i := 0; i < 6; i++ {
		test = append(test, newWorkflow(settleflow.Test, base.Add(time.Duration(i)*time.Millisecond), "cus_1", "triage"))
		live = append(live, newWorkflow(settleflow.Live, base.Add(time.Duration(i)*time.Millisecond), "cus_1", "triage"))
	}
	insert(t, s, test[0], live[0], test[1], test[2], test[3], test[4], test[5], live[1])
	for _, w := range append(append([]*settleflow.Workflow{}, test...), live[0], live[1]) {
		if w.Sequence != 0 {
			t.Fatalf("inserted workflow %s has sequence %d: none before it is settled", w.ID, w.Sequence)
		}
	}
	if got := claim(t, s, "w", base.Add(time.Second), time.Hour, 20); len(got) != 8 {
		t.Fatalf("claimed %d, want 8", len(got))
	}
	at := base.Add(2 * time.Second)
	toSettling, _ := settleflow.Running.To(settleflow.Settling)
	toFailed, _ := settleflow.Running.To(settleflow.Failed)
	settle := func(w *settleflow.Workflow, owner string, seq *uint64) settleflow.Update {
		return settleflow.Update{ID: w.ID, Owner: owner, Status: settleflow.Running, Transition: toSettling,
			RunAt: at.Add(time.Hour), UpdatedAt: at, Sequence: seq}
	}
	failedEv := &settleflow.Event{ID: ids.New(ids.Event, at), Object: "event", Type: settleflow.EventWorkflowFailed, CreatedAt: at,
		Data: settleflow.EventData{WorkflowID: test[2].ID, Status: settleflow.Failed, Quoted: test[2].Quoted}}
	var s3, s1, l0, other, none uint64
	applied, err := s.UpdateWorkflows(ctx, []settleflow.Update{
		settle(test[3], "w", &s3),
		settle(test[1], "w", &s1),
		settle(live[0], "w", &l0),
		settle(test[4], "other", &other), // not its owner: does not apply
		{ID: test[2].ID, Owner: "w", Status: settleflow.Running, Transition: toFailed, Release: true, RunAt: at, UpdatedAt: at,
			Failure: &settleflow.Failure{Code: settleflow.FailureExecutionFailed, Message: "no"}, Event: failedEv},
		settle(test[5], "w", nil), // handed over: numbered by the claim that takes it
	})
	if err != nil || !applied[0] || !applied[1] || !applied[2] || applied[3] || !applied[4] || !applied[5] {
		t.Fatalf("updates: applied %v, %v", applied, err)
	}
	if s1 != 1 || s3 != 2 || l0 != 1 || other != 0 {
		t.Fatalf("sequences test[1]=%d test[3]=%d live[0]=%d not-applied=%d; want 1, 2 (id order), 1 (its environment), 0", s1, s3, l0, other)
	}
	// A write that fails (an event id already taken) numbers nothing.
	dupEv := *failedEv
	dupEv.Type, dupEv.Data.WorkflowID = settleflow.EventWorkflowCompleted, test[0].ID
	if _, err := s.UpdateWorkflows(ctx, []settleflow.Update{{ID: test[0].ID, Owner: "w", Status: settleflow.Running, Transition: toSettling,
		RunAt: at.Add(time.Hour), UpdatedAt: at, Sequence: &none, Event: &dupEv}}); err == nil {
		t.Fatal("an event with a taken id was accepted")
	}
	if got := mustGet(t, s, settleflow.Test, test[0].ID); got.Sequence != 0 || got.Status != settleflow.Running {
		t.Fatalf("after the failed write: %s with sequence %d; want Running, 0", got.Status, got.Sequence)
	}
	// Asking again keeps the number; the next one follows the last given.
	var again, s0 uint64
	applied, err = s.UpdateWorkflows(ctx, []settleflow.Update{
		{ID: test[1].ID, Owner: "w", Status: settleflow.Settling, RunAt: at.Add(time.Hour), UpdatedAt: at, Sequence: &again},
		settle(test[0], "w", &s0),
	})
	if err != nil || !applied[0] || !applied[1] || again != 1 || s0 != 3 {
		t.Fatalf("asked again: %d (want 1), next %d (want 3): %v %v", again, s0, applied, err)
	}
	// A claim numbers the Settling workflow handed over to it.
	if got := mustGet(t, s, settleflow.Test, test[5].ID); got.Sequence != 0 {
		t.Fatalf("handed-over workflow numbered %d before it was claimed", got.Sequence)
	}
	var taken *settleflow.Workflow
	for _, c := range claim(t, s, "holder", at.Add(2*time.Hour), time.Minute, 20) {
		if c.ID == test[5].ID {
			taken = c
		}
		if c.Status == settleflow.Settling && c.Sequence == 0 {
			t.Fatalf("claimed Settling workflow %s without a sequence", c.ID)
		}
	}
	if taken == nil || taken.Sequence != 4 {
		t.Fatalf("claimed handed-over workflow: %+v; want sequence 4", taken)
	}
	want := map[string]uint64{test[0].ID: 3, test[1].ID: 1, test[2].ID: 0, test[3].ID: 2, test[5].ID: 4, live[0].ID: 1, live[1].ID: 0}
	for _, w := range append(append([]*settleflow.Workflow{}, test...), live[0], live[1]) {
		if n, ok := want[w.ID]; ok {
			if got := mustGet(t, s, w.Environment(), w.ID); got.Sequence != n {
				t.Fatalf("stored sequence of %s: %d, want %d", w.ID, got.Sequence, n)
			}
		}
	}
	// Claimed again after the lease: numbers unchanged.
	for _, c := range claim(t, s, "holder2", at.Add(3*time.Hour), time.Minute, 20) {
		if n, ok := want[c.ID]; ok && c.Status == settleflow.Settling && c.Sequence != n {
			t.Fatalf("reclaimed %s: sequence %d, want %d", c.ID, c.Sequence, n)
		}
	}
}

func testReleaseLeases(t *testing.T, s settleflow.Store) {
	ctx := context.Background()
	a := newWorkflow(settleflow.Test, base, "cus_1", "triage")
	b := newWorkflow(settleflow.Test, base.Add(time.Millisecond), "cus_1", "triage")
	insert(t, s, a, b)
	at := base.Add(time.Second)
	if n := len(claim(t, s, "dead", at, time.Hour, 1)); n != 1 {
		t.Fatal(n)
	}
	if n := len(claim(t, s, "alive", at, time.Hour, 1)); n != 1 {
		t.Fatal(n)
	}
	if err := s.ReleaseLeases(ctx, "dead", at.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	got := claim(t, s, "dead", at.Add(time.Second), time.Hour, 10)
	if len(got) != 1 || got[0].ID != a.ID || got[0].Status != settleflow.Running {
		t.Fatalf("after release: %+v; want a back, b still leased to another owner", got)
	}
}

// canceledEvent is the workflow.canceled event the engine writes for w.
func canceledEvent(w *settleflow.Workflow, at time.Time) *settleflow.Event {
	return &settleflow.Event{ID: ids.New(ids.Event, at), Object: "event", Type: settleflow.EventWorkflowCanceled,
		Livemode: w.Livemode, CreatedAt: at,
		Data: settleflow.EventData{WorkflowID: w.ID, Status: settleflow.Canceled, Quoted: w.Quoted, Margin: w.Margin}}
}

func testCancel(t *testing.T, s settleflow.Store) {
	ctx := context.Background()
	running := newWorkflow(settleflow.Test, base, "cus_1", "triage")
	insert(t, s, running)
	at := base.Add(time.Second)
	c := claim(t, s, "w1", at, time.Minute, 10)
	if len(c) != 1 {
		t.Fatalf("claimed %d, want 1", len(c))
	}
	w2 := newWorkflow(settleflow.Test, base.Add(time.Hour), "cus_2", "triage")
	insert(t, s, w2)

	// Other environment and unknown ids are not found, and write nothing.
	ev := canceledEvent(w2, at)
	if _, _, err := s.CancelWorkflow(ctx, settleflow.Live, w2.ID, at, &settleflow.Event{ID: ev.ID, Object: "event",
		Type: ev.Type, Livemode: true, CreatedAt: at, Data: ev.Data}); !errors.Is(err, settleflow.ErrNotFound) {
		t.Fatalf("cancel through the other environment: %v, want ErrNotFound", err)
	}
	unknown := ids.New(ids.Workflow, at)
	uev := canceledEvent(&settleflow.Workflow{ID: unknown}, at)
	if _, _, err := s.CancelWorkflow(ctx, settleflow.Test, unknown, at, uev); !errors.Is(err, settleflow.ErrNotFound) {
		t.Fatalf("cancel of an unknown id: %v, want ErrNotFound", err)
	}

	// Pending → Canceled, with its event, in one go.
	at2 := base.Add(2 * time.Hour)
	ev = canceledEvent(w2, at2)
	got, canceled, err := s.CancelWorkflow(ctx, settleflow.Test, w2.ID, at2, ev)
	if err != nil || !canceled {
		t.Fatalf("cancel of a Pending workflow: canceled=%v err=%v", canceled, err)
	}
	want := *w2
	want.Status, want.UpdatedAt = settleflow.Canceled, at2
	equalWorkflow(t, got, &want)
	equalWorkflow(t, mustGet(t, s, settleflow.Test, w2.ID), &want)
	stored, err := s.GetEvent(ctx, settleflow.Test, ev.ID)
	if err != nil {
		t.Fatalf("GetEvent of the canceled event: %v", err)
	}
	equalJSON(t, stored, ev)
	evs, err := s.ClaimEvents(ctx, settleflow.Claim{Owner: "d", Now: at2, LeaseUntil: at2.Add(time.Minute), Limit: 10})
	if err != nil || len(evs) != 1 || evs[0].ID != ev.ID {
		t.Fatalf("outbox after cancel: %+v %v; want exactly the canceled event, due at once", evs, err)
	}
	equalJSON(t, evs[0], ev)

	// A second cancel changes nothing and reports the workflow as it is.
	again := canceledEvent(w2, at2.Add(time.Second))
	got, canceled, err = s.CancelWorkflow(ctx, settleflow.Test, w2.ID, at2.Add(time.Second), again)
	if err != nil || canceled || got.Status != settleflow.Canceled || !got.UpdatedAt.Equal(at2) {
		t.Fatalf("second cancel: %+v canceled=%v err=%v; want the Canceled workflow unchanged", got, canceled, err)
	}
	if _, err := s.GetEvent(ctx, settleflow.Test, again.ID); !errors.Is(err, settleflow.ErrNotFound) {
		t.Fatalf("a cancel that did not apply wrote its event: %v", err)
	}

	// A workflow a worker claimed (Running) cannot be canceled; nor can a
	// terminal one.
	for _, x := range c {
		xev := canceledEvent(x, at2)
		got, canceled, err := s.CancelWorkflow(ctx, settleflow.Test, x.ID, at2, xev)
		if err != nil || canceled || got.Status != settleflow.Running {
			t.Fatalf("cancel of a Running workflow: %+v canceled=%v err=%v", got, canceled, err)
		}
		if _, err := s.GetEvent(ctx, settleflow.Test, xev.ID); !errors.Is(err, settleflow.ErrNotFound) {
			t.Fatalf("a refused cancel wrote its event: %v", err)
		}
		moveTo(t, s, x, "w1", settleflow.Failed)
		got, canceled, err = s.CancelWorkflow(ctx, settleflow.Test, x.ID, at2, canceledEvent(x, at2))
		if err != nil || canceled || got.Status != settleflow.Failed {
			t.Fatalf("cancel of a Failed workflow: %+v canceled=%v err=%v", got, canceled, err)
		}
	}
	// A canceled workflow is never claimed, and lists under its status.
	if n := len(claim(t, s, "w2", base.Add(48*time.Hour), time.Minute, 10)); n != 0 {
		t.Fatalf("claimed %d workflows, want none (the rest are terminal or leased)", n)
	}
	ws, _, err := s.ListWorkflows(ctx, settleflow.ListQuery{Environment: settleflow.Test, Status: settleflow.Canceled, Limit: 10})
	if err != nil || len(ws) != 1 || ws[0].ID != w2.ID {
		t.Fatalf("list of Canceled: %d %v", len(ws), err)
	}
	// The state machine holds in the store: a Canceled workflow does not move.
	tr, _ := settleflow.Pending.To(settleflow.Running)
	if applied, err := s.UpdateWorkflows(ctx, []settleflow.Update{{ID: w2.ID, Status: settleflow.Pending, Transition: tr, RunAt: at2, UpdatedAt: at2}}); err != nil || applied[0] {
		t.Fatalf("update of a Canceled workflow: %v %v", applied, err)
	}
}

// Cancels racing claims over the same workflows: each workflow is either
// canceled (and never claimed) or claimed (and never canceled).
func testCancelRacesClaim(t *testing.T, s settleflow.Store) {
	ctx := context.Background()
	const n = 100
	var ws []*settleflow.Workflow
	for i := 0; i < n; i++ {
		ws = append(ws, newWorkflow(settleflow.Test, base.Add(time.Duration(i)*time.Microsecond), "cus_1", "triage"))
	}
	insert(t, s, ws...)
	var mu sync.Mutex
	claimed := map[string]bool{}
	canceled := map[string]bool{}
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	start := make(chan struct{}) // everyone starts at once
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(owner string) {
			defer wg.Done()
			<-start
			for {
				got, err := s.ClaimWorkflows(ctx, settleflow.Claim{Owner: owner, Now: base.Add(time.Second), LeaseUntil: base.Add(time.Hour), Limit: 1})
				if err != nil {
					errs <- err
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, w := range got {
					claimed[w.ID] = true
				}
				mu.Unlock()
			}
		}(fmt.Sprintf("w%d", g))
	}
	// Cancels run from a few goroutines (a Postgres server takes only so
	// many connections), each workflow's cancel racing the claimers.
	// Claims go oldest first; cancels in random order, so they meet
	// claims all along the queue.
	todo := make(chan *settleflow.Workflow, n)
	for _, i := range rand.Perm(n) {
		todo <- ws[i]
	}
	close(todo)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for w := range todo {
				at := base.Add(time.Second)
				got, ok, err := s.CancelWorkflow(ctx, settleflow.Test, w.ID, at, canceledEvent(w, at))
				if err != nil {
					errs <- err
					return
				}
				if ok != (got.Status == settleflow.Canceled) {
					errs <- fmt.Errorf("%s: canceled=%v but status %s", w.ID, ok, got.Status)
				}
				if ok {
					mu.Lock()
					canceled[w.ID] = true
					mu.Unlock()
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, w := range ws {
		got := mustGet(t, s, settleflow.Test, w.ID)
		switch {
		case claimed[w.ID] && canceled[w.ID]:
			t.Fatalf("%s was both claimed and canceled", w.ID)
		case canceled[w.ID] && got.Status != settleflow.Canceled, claimed[w.ID] && got.Status != settleflow.Running:
			t.Fatalf("%s: claimed=%v canceled=%v status %s", w.ID, claimed[w.ID], canceled[w.ID], got.Status)
		case !claimed[w.ID] && !canceled[w.ID]:
			t.Fatalf("%s neither claimed nor canceled (status %s)", w.ID, got.Status)
		}
	}
	evs, _, err := s.ListEvents(ctx, settleflow.EventQuery{Environment: settleflow.Test, Type: settleflow.EventWorkflowCanceled, Limit: 100})
	if err != nil || len(evs) != len(canceled) {
		t.Fatalf("%d canceled events for %d cancels (%v)", len(evs), len(canceled), err)
	}
	t.Logf("%d canceled, %d claimed", len(canceled), len(claimed))
}

// failedEvent moves x (claimed by owner, Running) to Failed with its event.
func failedEvent(t *testing.T, s settleflow.Store, x *settleflow.Workflow, owner string, at time.Time) *settleflow.Event {
	t.Helper()
	tr, _ := settleflow.Running.To(settleflow.Failed)
	ev := &settleflow.Event{ID: ids.New(ids.Event, at), Object: "event", Type: settleflow.EventWorkflowFailed, Livemode: x.Livemode, CreatedAt: at,
		Data: settleflow.EventData{WorkflowID: x.ID, Status: settleflow.Failed, Quoted: x.Quoted, Margin: x.Margin,
			Failure: &settleflow.Failure{Code: "execution_failed", Message: "a <b> & \"c\""}}}
	applied, err := s.UpdateWorkflows(context.Background(), []settleflow.Update{{ID: x.ID, Owner: owner, Status: settleflow.Running,
		Transition: tr, Release: true, RunAt: at, UpdatedAt: at, Failure: ev.Data.Failure, Event: ev}})
	if err != nil || !applied[0] {
		t.Fatalf("fail %s: %v %v", x.ID, applied, err)
	}
	return ev
}

func testListEvents(t *testing.T, s settleflow.Store) {
	ctx := context.Background()
	// 30 test events, oldest first, alternating canceled and failed, one
	// millisecond apart; 5 live events interleaved in time.
	var all []*settleflow.Event
	var liveEvs []*settleflow.Event
	for i := 0; i < 35; i++ {
		at := base.Add(time.Duration(i) * time.Millisecond)
		env := settleflow.Test
		if i%7 == 3 {
			env = settleflow.Live
		}
		w := newWorkflow(env, at, "cus_1", "triage")
		insert(t, s, w)
		var ev *settleflow.Event
		if i%2 == 0 {
			ev = canceledEvent(w, at)
			if _, ok, err := s.CancelWorkflow(ctx, env, w.ID, at, ev); err != nil || !ok {
				t.Fatalf("cancel: %v %v", ok, err)
			}
		} else {
			c := claim(t, s, "w", at, time.Minute, 1)
			if len(c) != 1 || c[0].ID != w.ID {
				t.Fatalf("claim: %+v", c)
			}
			ev = failedEvent(t, s, c[0], "w", at)
		}
		if env == settleflow.Live {
			liveEvs = append(liveEvs, ev)
		} else {
			all = append(all, ev)
		}
	}
	list := func(q settleflow.EventQuery) ([]settleflow.Event, bool) {
		t.Helper()
		if q.Environment == "" {
			q.Environment = settleflow.Test
		}
		evs, more, err := s.ListEvents(ctx, q)
		if err != nil {
			t.Fatalf("ListEvents(%+v): %v", q, err)
		}
		return evs, more
	}
	// Forward through every page: newest first, no gap, no duplicate, and
	// each event as written.
	var seen []settleflow.Event
	after := ""
	for {
		page, more := list(settleflow.EventQuery{Limit: 7, StartingAfter: after})
		seen = append(seen, page...)
		if !more {
			break
		}
		after = page[len(page)-1].ID
	}
	if len(seen) != len(all) {
		t.Fatalf("forward pages returned %d events, want %d", len(seen), len(all))
	}
	for i := range seen {
		equalJSON(t, seen[i], all[len(all)-1-i])
	}
	// Backward from the oldest: newest first within each page.
	checkBackward(t, idsOf(all), func(before string) ([]string, bool) {
		page, more := list(settleflow.EventQuery{Limit: 7, EndingBefore: before})
		return idsOf(page), more
	})
	// Filters.
	count := func(keep func(*settleflow.Event) bool) (n int) {
		for _, ev := range all {
			if keep(ev) {
				n++
			}
		}
		return n
	}
	for _, typ := range []settleflow.EventType{settleflow.EventWorkflowCanceled, settleflow.EventWorkflowFailed, settleflow.EventWorkflowCompleted} {
		got, more := list(settleflow.EventQuery{Limit: 100, Type: typ})
		if want := count(func(ev *settleflow.Event) bool { return ev.Type == typ }); len(got) != want || more {
			t.Fatalf("type %s: %d events, want %d", typ, len(got), want)
		}
		for _, ev := range got {
			if ev.Type != typ {
				t.Fatalf("type filter %s returned %s", typ, ev.Type)
			}
		}
	}
	one, _ := list(settleflow.EventQuery{Limit: 100, WorkflowID: all[4].Data.WorkflowID})
	if len(one) != 1 || one[0].ID != all[4].ID {
		t.Fatalf("workflowId filter: %+v", one)
	}
	if none, _ := list(settleflow.EventQuery{Limit: 100, WorkflowID: liveEvs[0].Data.WorkflowID}); len(none) != 0 {
		t.Fatal("workflowId filter crossed environments")
	}
	cut := all[20].CreatedAt
	recent, _ := list(settleflow.EventQuery{Limit: 100, CreatedAfter: cut})
	if want := count(func(ev *settleflow.Event) bool { return ev.CreatedAt.After(cut) }); len(recent) != want || want == 0 {
		t.Fatalf("createdAfter: %d events, want %d", len(recent), want)
	}
	for _, ev := range recent {
		if !ev.CreatedAt.After(cut) {
			t.Fatalf("createdAfter %v returned an event of %v", cut, ev.CreatedAt)
		}
	}
	// Strictly after, at microsecond precision.
	justBefore, _ := list(settleflow.EventQuery{Limit: 100, CreatedAfter: cut.Add(-time.Microsecond)})
	if len(justBefore) != len(recent)+1 {
		t.Fatalf("createdAfter one microsecond earlier: %d, want %d", len(justBefore), len(recent)+1)
	}
	combined, _ := list(settleflow.EventQuery{Limit: 100, Type: settleflow.EventWorkflowFailed, CreatedAfter: cut})
	if want := count(func(ev *settleflow.Event) bool {
		return ev.Type == settleflow.EventWorkflowFailed && ev.CreatedAt.After(cut)
	}); len(combined) != want {
		t.Fatalf("type+createdAfter: %d, want %d", len(combined), want)
	}
	// Filters page too.
	var pagedIDs []string
	after = ""
	for {
		page, more := list(settleflow.EventQuery{Limit: 4, Type: settleflow.EventWorkflowFailed, StartingAfter: after})
		for _, ev := range page {
			pagedIDs = append(pagedIDs, ev.ID)
		}
		if !more {
			break
		}
		after = page[len(page)-1].ID
	}
	allFailed, _ := list(settleflow.EventQuery{Limit: 100, Type: settleflow.EventWorkflowFailed})
	if len(pagedIDs) != len(allFailed) || slices.ContainsFunc(allFailed, func(ev settleflow.Event) bool { return !slices.Contains(pagedIDs, ev.ID) }) {
		t.Fatalf("filtered pages: %d ids, want %d", len(pagedIDs), len(allFailed))
	}
	// Environments are apart, in lists and point reads.
	liveList, _ := list(settleflow.EventQuery{Environment: settleflow.Live, Limit: 100})
	if len(liveList) != len(liveEvs) {
		t.Fatalf("live list: %d, want %d", len(liveList), len(liveEvs))
	}
	for i := range liveList {
		equalJSON(t, liveList[i], liveEvs[len(liveEvs)-1-i])
	}
	if _, err := s.GetEvent(ctx, settleflow.Test, liveEvs[0].ID); !errors.Is(err, settleflow.ErrNotFound) {
		t.Fatalf("live event through test: %v, want ErrNotFound", err)
	}
	if _, err := s.GetEvent(ctx, settleflow.Live, all[0].ID); !errors.Is(err, settleflow.ErrNotFound) {
		t.Fatalf("test event through live: %v, want ErrNotFound", err)
	}
	if _, err := s.GetEvent(ctx, settleflow.Test, ids.New(ids.Event, base)); !errors.Is(err, settleflow.ErrNotFound) {
		t.Fatalf("unknown event: %v, want ErrNotFound", err)
	}
	for _, ev := range []*settleflow.Event{all[0], all[1], liveEvs[0]} {
		got, err := s.GetEvent(ctx, ev.Environment(), ev.ID)
		if err != nil {
			t.Fatal(err)
		}
		equalJSON(t, got, ev)
	}
	// Dispatched events are still read back.
	if err := s.MarkEventsDispatched(ctx, []string{all[0].ID}, base.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetEvent(ctx, settleflow.Test, all[0].ID); err != nil || got.ID != all[0].ID {
		t.Fatalf("a dispatched event: %v", err)
	}
	if page, more := list(settleflow.EventQuery{Limit: len(all)}); len(page) != len(all) || more {
		t.Fatalf("limit equal to the count: %d, hasMore %v", len(page), more)
	}
}

// Prune deletes dispatched events and idempotency records older than its
// bounds, at most Limit of each per call, oldest first; it keeps recent
// ones, undispatched events and every workflow.
func testPrune(t *testing.T, s settleflow.Store) {
	ctx := context.Background()
	var evIDs []string
	var ws []*settleflow.Workflow
	for i := range 4 {
		at := base.Add(time.Duration(i) * time.Hour)
		w := newWorkflow(settleflow.Test, at, fmt.Sprint("cus_", i), "triage")
		res, err := s.InsertWorkflows(ctx, []settleflow.Insert{{Workflow: w, IdempotencyKey: fmt.Sprint("key-", i), RequestHash: "h"}})
		if err != nil || res[0].Existing != nil {
			t.Fatalf("insert: %v", err)
		}
		ws = append(ws, w)
		ev := canceledEvent(w, at)
		if _, ok, err := s.CancelWorkflow(ctx, settleflow.Test, w.ID, at, ev); err != nil || !ok {
			t.Fatalf("cancel: %v %v", ok, err)
		}
		evIDs = append(evIDs, ev.ID)
	}
	// Events 0–2 dispatched at hours 0–2; event 3 never.
	for i := range 3 {
		if err := s.MarkEventsDispatched(ctx, []string{evIDs[i]}, base.Add(time.Duration(i)*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	cut := base.Add(150 * time.Minute) // after hour 2, before hour 3
	res, err := s.Prune(ctx, settleflow.Prune{EventsDispatchedBefore: cut, IdempotencyCreatedBefore: cut, Limit: 2})
	if err != nil || res.Events != 2 || res.IdempotencyKeys != 2 {
		t.Fatalf("first batch: %+v %v; want 2 and 2", res, err)
	}
	if _, err := s.GetEvent(ctx, settleflow.Test, evIDs[0]); !errors.Is(err, settleflow.ErrNotFound) {
		t.Fatalf("the oldest event survived the first batch: %v", err)
	}
	res, err = s.Prune(ctx, settleflow.Prune{EventsDispatchedBefore: cut, IdempotencyCreatedBefore: cut, Limit: 2})
	if err != nil || res.Events != 1 || res.IdempotencyKeys != 1 {
		t.Fatalf("second batch: %+v %v; want 1 and 1", res, err)
	}
	res, err = s.Prune(ctx, settleflow.Prune{EventsDispatchedBefore: cut, IdempotencyCreatedBefore: cut, Limit: 2})
	if err != nil || res != (settleflow.PruneResult{}) {
		t.Fatalf("third batch: %+v %v; want nothing left to prune", res, err)
	}
	if _, err := s.GetEvent(ctx, settleflow.Test, evIDs[3]); err != nil {
		t.Fatalf("the undispatched event was pruned: %v", err)
	}
	// Key 3 (hour 3) is still remembered; key 0 is not.
	res3, err := s.InsertWorkflows(ctx, []settleflow.Insert{{Workflow: newWorkflow(settleflow.Test, base.Add(4*time.Hour), "cus_x", "triage"), IdempotencyKey: "key-3", RequestHash: "h"}})
	if err != nil || res3[0].Existing == nil || res3[0].Existing.ID != ws[3].ID {
		t.Fatalf("key-3 after pruning: %+v %v; want the replay of %s", res3, err, ws[3].ID)
	}
	res0, err := s.InsertWorkflows(ctx, []settleflow.Insert{{Workflow: newWorkflow(settleflow.Test, base.Add(4*time.Hour), "cus_y", "triage"), IdempotencyKey: "key-0", RequestHash: "h"}})
	if err != nil || res0[0].Existing != nil {
		t.Fatalf("key-0 after pruning: %+v %v; want a fresh insert", res0, err)
	}
	for _, w := range ws {
		if _, err := s.GetWorkflow(ctx, settleflow.Test, w.ID); err != nil {
			t.Fatalf("workflow %s after pruning: %v", w.ID, err)
		}
	}
}

// idsOf returns the ids of xs, in order.
func idsOf[T interface {
	*settleflow.Workflow | settleflow.Event | *settleflow.Event
}](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		switch v := any(x).(type) {
		case *settleflow.Workflow:
			out[i] = v.ID
		case settleflow.Event:
			out[i] = v.ID
		case *settleflow.Event:
			out[i] = v.ID
		}
	}
	return out
}

// checkBackward pages backward from the oldest of all (oldest first) with
// page, which returns one page before the id it is given, and checks that
// each page is newest first and that together they hold every later id
// once, with no gap.
func checkBackward(t *testing.T, all []string, page func(endingBefore string) ([]string, bool)) {
	t.Helper()
	var back []string
	before := all[0]
	for {
		p, more := page(before)
		for i := 1; i < len(p); i++ {
			if p[i-1] <= p[i] {
				t.Fatal("backward page not newest first")
			}
		}
		for i := len(p) - 1; i >= 0; i-- {
			back = append(back, p[i])
		}
		if !more {
			break
		}
		before = p[0]
	}
	if len(back) != len(all)-1 {
		t.Fatalf("backward pages returned %d, want %d", len(back), len(all)-1)
	}
	for i, id := range back {
		if id != all[i+1] {
			t.Fatalf("backward position %d: %s, want %s", i, id, all[i+1])
		}
	}
}

// Backlog counts each stage's rows, the due ones, and the earliest due time;
// a claimed workflow is in its stage but not due.
func testBacklog(t *testing.T, s settleflow.Store) {
	ctx := context.Background()
	now := base.Add(3 * time.Hour)
	b, err := s.Backlog(ctx, now)
	if err != nil || b[settleflow.StageExecute].Depth != 0 || b[settleflow.StageNotify].Depth != 0 {
		t.Fatalf("empty store: %+v %v", b, err)
	}
	var ws []*settleflow.Workflow
	for i := range 3 {
		w := newWorkflow(settleflow.Test, base.Add(time.Duration(i)*time.Hour), fmt.Sprint("cus_", i), "triage")
		if _, err := s.InsertWorkflows(ctx, []settleflow.Insert{{Workflow: w}}); err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	claimed, err := s.ClaimWorkflows(ctx, settleflow.Claim{Owner: "w1", Now: now, LeaseUntil: now.Add(time.Hour), Limit: 1})
	if err != nil || len(claimed) != 1 || claimed[0].ID != ws[0].ID {
		t.Fatalf("claim: %v %v; want the oldest", claimed, err)
	}
	ev := canceledEvent(ws[2], now)
	if _, ok, err := s.CancelWorkflow(ctx, settleflow.Test, ws[2].ID, now, ev); err != nil || !ok {
		t.Fatalf("cancel: %v %v", ok, err)
	}
	b, err = s.Backlog(ctx, now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	// ws[0] Running (leased), ws[1] Pending and due since hour 1, ws[2]
	// Canceled (gone from the stages); its event waits.
	if got := b[settleflow.StageExecute]; got.Depth != 2 || got.Due != 1 || !got.EarliestDue.Equal(ws[1].CreatedAt) {
		t.Errorf("execute: %+v; want depth 2, due 1, earliest %v", got, ws[1].CreatedAt)
	}
	if got := b[settleflow.StageSettle]; got.Depth != 0 {
		t.Errorf("settle: %+v; want empty", got)
	}
	if got := b[settleflow.StageNotify]; got.Depth != 1 {
		t.Errorf("notify: %+v; want the canceled event", got)
	}
	st := b[settleflow.StageExecute].Stage(settleflow.StageExecute, now.Add(time.Minute))
	if want := now.Add(time.Minute).Sub(ws[1].CreatedAt); st.OldestDue != want || st.OldestDueSeconds != want.Seconds() {
		t.Errorf("oldest due %v (%v s); want %v", st.OldestDue, st.OldestDueSeconds, want)
	}
}
