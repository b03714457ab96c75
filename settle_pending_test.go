package settleflow_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
)

// pendingWritesStore is a Store that records every applied update writing a
// settlement to a workflow that stays Settling: the pending settlement
// writes of the settle stage.
type pendingWritesStore struct {
	settleflow.Store
	mu     sync.Mutex
	writes map[string][]settleflow.Update
	// onWrite, if set before the engine starts, is called with each
	// recorded write.
	onWrite func(settleflow.Update)
	// holds, if not nil, records every applied update that keeps a
	// workflow Settling without a move: the pending settlement writes and
	// the lease renewals (with or without a settlement).
	holds map[string][]settleflow.Update
	// settling, if not nil, records when each workflow moved to Settling
	// (the UpdatedAt of the update that moved it).
	settling map[string]time.Time
}

func (s *pendingWritesStore) UpdateWorkflows(ctx context.Context, us []settleflow.Update) ([]bool, error) {
	applied, err := s.Store.UpdateWorkflows(ctx, us)
	if err != nil {
		return applied, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, u := range us {
		if !applied[i] {
			continue
		}
		if s.settling != nil && u.Transition.Next() == settleflow.Settling {
			s.settling[u.ID] = u.UpdatedAt
		}
		if s.holds != nil && u.Status == settleflow.Settling && u.Transition.IsZero() && !u.Release {
			s.holds[u.ID] = append(s.holds[u.ID], u)
		}
		if u.Status == settleflow.Settling && u.Transition == (settleflow.Transition{}) && u.Settlement != nil {
			s.writes[u.ID] = append(s.writes[u.ID], u)
			if s.onWrite != nil {
				s.onWrite(u)
			}
		}
	}
	return applied, nil
}

func (s *pendingWritesStore) of(id string) []settleflow.Update {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]settleflow.Update(nil), s.writes[id]...)
}

// polled is how many checks found the charge of id pending.
func (s *recordingSettler) polled(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.polls[id]
}

// showPendingAfter is how long docs/api.md says a charge is pending before
// a Settling workflow shows its settlement.
const showPendingAfter = time.Second

// newPendingFixture is a fixture whose Store records the pending settlement
// writes and whose settler reports each charge pending, with its
// transaction, for pendingPolls checks before it confirms.
func newPendingFixture(t *testing.T, pendingPolls int, tweak func(*settleflow.Options)) (*fixture, *pendingWritesStore) {
	t.Helper()
	var ps *pendingWritesStore
	f := newFixture(t, func(o *settleflow.Options) {
		ps = &pendingWritesStore{Store: o.Store, writes: map[string][]settleflow.Update{}}
		o.Store = ps
		if tweak != nil {
			tweak(o)
		}
	})
	f.settler.pendingPolls = pendingPolls
	return f, ps
}

// TestPendingSettlementNotWrittenWhenConfirmedQuickly: a charge that the
// settler reports pending, with its transaction, for a few checks and then
// confirms well within a second goes from Settling to Settled with
// no write of its pending settlement in between.
func TestPendingSettlementNotWrittenWhenConfirmedQuickly(t *testing.T) {
	const pendingPolls = 3 // 3 checks, SettlementPollInterval (20 ms) apart
	f, ps := newPendingFixture(t, pendingPolls, nil)
	if err := f.engine.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ws := []*settleflow.Workflow{f.create(t, settleflow.Test, "T-1", 0), f.create(t, settleflow.Test, "T-2", 1)}
	for _, w := range ws {
		got := f.waitTerminal(t, settleflow.Test, w.ID)[w.ID]
		if got.Status != settleflow.Settled || got.Settlement == nil || got.Settlement.Confirmations != 12 {
			t.Fatalf("%s: %s with settlement %+v; want Settled with its confirmed settlement", w.ID, got.Status, got.Settlement)
		}
		if n := f.settler.polled(w.ID); n != pendingPolls {
			t.Fatalf("%s: the settler found the charge pending %d times, want %d: the test did not set up its case", w.ID, n, pendingPolls)
		}
		if us := ps.of(w.ID); len(us) != 0 {
			t.Errorf("%s: the pending settlement was written %d times (first %+v), want none: it confirmed within %s",
				w.ID, len(us), us[0].Settlement, showPendingAfter)
		}
	}
}

// TestPendingSettlementShownWhenSlow: a charge that stays pending has its
// settlement written once it has been pending a second (not before),
// so that Fetch shows its transaction while the workflow is Settling; later
// checks that find it unchanged write nothing.
func TestPendingSettlementShownWhenSlow(t *testing.T) {
	clock := &offsetClock{}
	f, ps := newPendingFixture(t, 1<<30, func(o *settleflow.Options) { o.Clock = clock })
	ctx := context.Background()
	if err := f.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	created := clock.Now().Truncate(time.Microsecond)
	w := f.create(t, settleflow.Test, "T-slow", 0)
	want := f.settler.settlement(w.ID, 0)

	// Checked pending, with its transaction, a few times: then a second
	// passes on the engine's clock.
	waitUntil(t, "the charge checked pending twice", func() bool { return f.settler.polled(w.ID) >= 2 })
	clock.advance(showPendingAfter)

	var got *settleflow.Workflow
	waitUntil(t, "the Settling workflow to show its transaction", func() bool {
		var err error
		if got, err = f.engine.Fetch(ctx, settleflow.Test, w.ID); err != nil {
			t.Fatal(err)
		}
		return got.Settlement != nil
	})
	if got.Status != settleflow.Settling || got.Settlement.TxHash != want.TxHash || got.Settlement.BlockNumber != want.BlockNumber ||
		got.Settlement.ChainID != want.ChainID {
		t.Fatalf("%s with settlement %+v; want Settling with the pending transaction %s", got.Status, got.Settlement, want.TxHash)
	}
	// The wrapper records a write once the Store has applied it, so a
	// Fetch may see the settlement a moment before the record is there.
	var us []settleflow.Update
	waitUntil(t, "the pending settlement write recorded (else the test does not see the writes)", func() bool {
		us = ps.of(w.ID)
		return len(us) > 0
	})
	if early := us[0].UpdatedAt.Sub(created); early < showPendingAfter {
		t.Errorf("the pending settlement was written %s after Create, before it had been pending %s", early, showPendingAfter)
	}
	// Later checks learn nothing new: they write nothing.
	polls := f.settler.polled(w.ID)
	waitUntil(t, "three more checks", func() bool { return f.settler.polled(w.ID) >= polls+3 })
	if n := len(ps.of(w.ID)); n != 1 {
		t.Errorf("the pending settlement was written %d times, want once", n)
	}
}

// TestPendingSettlementRidesTheLeaseRenewal: a settle check that renews
// the workflow's lease writes the row anyway, so it carries the pending
// settlement too, however young the charge. Here the workflow is claimed
// again from the Store after a failed submission, leased for the work lease
// only (ExecutionTimeout 1 s: about 2 s), so its first check renews it.
func TestPendingSettlementRidesTheLeaseRenewal(t *testing.T) {
	f, ps := newPendingFixture(t, 1<<30, func(o *settleflow.Options) { o.ExecutionTimeout = time.Second })
	ctx := context.Background()
	var failed atomic.Bool
	f.settler.submitErr = func([]settleflow.Charge) error {
		if failed.CompareAndSwap(false, true) {
			return errors.New("node unreachable")
		}
		return nil
	}
	// How many checks had found the charge pending when each write was made.
	var mu sync.Mutex
	var pollsAtWrite []int
	ps.onWrite = func(u settleflow.Update) {
		mu.Lock()
		defer mu.Unlock()
		pollsAtWrite = append(pollsAtWrite, f.settler.polled(u.ID))
	}
	if err := f.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	w := f.create(t, settleflow.Test, "T-renewed", 0)
	want := f.settler.settlement(w.ID, 0)
	waitUntil(t, "a write of the pending settlement", func() bool { return len(ps.of(w.ID)) > 0 })
	u := ps.of(w.ID)[0]
	// The settle stage leases a held workflow for max(30 s, 4 × 20 ms).
	if lease := u.RunAt.Sub(u.UpdatedAt); lease != 30*time.Second || u.Release {
		t.Errorf("the first write leases the workflow for %s (release %v), want a renewal of 30s", lease, u.Release)
	}
	if u.Settlement.TxHash != want.TxHash {
		t.Errorf("the renewal wrote settlement %+v, want the pending transaction %s", u.Settlement, want.TxHash)
	}
	mu.Lock()
	first := pollsAtWrite[0]
	mu.Unlock()
	if first != 1 {
		t.Errorf("the pending settlement was first written after %d pending checks, want 1 (with the renewal at the first)", first)
	}
	if got, err := f.engine.Fetch(ctx, settleflow.Test, w.ID); err != nil || got.Status != settleflow.Settling || got.Settlement == nil {
		t.Fatalf("%+v, %v; want Settling with its pending settlement", got, err)
	}
}

// waitUntil waits for cond, failing the test after ten seconds.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestPendingSettlementWrittenAtStop: a charge pending for less than a
// second, whose settlement no check has written yet, has it written with
// the release at Stop, so the workflow left Settling in the Store shows its
// transaction to whoever reads it or settles it next.
func TestPendingSettlementWrittenAtStop(t *testing.T) {
	f, ps := newPendingFixture(t, 1<<30, nil)
	ctx := context.Background()
	if err := f.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	w := f.create(t, settleflow.Test, "T-stop", 0)
	want := f.settler.settlement(w.ID, 0)
	waitUntil(t, "the charge checked pending twice", func() bool { return f.settler.polled(w.ID) >= 2 })
	if err := f.engine.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := ps.Store.GetWorkflow(ctx, settleflow.Test, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != settleflow.Settling || got.Settlement == nil || got.Settlement.TxHash != want.TxHash ||
		got.Settlement.BlockNumber != want.BlockNumber {
		t.Fatalf("after Stop: %s with settlement %+v; want Settling with the pending transaction %s", got.Status, got.Settlement, want.TxHash)
	}
}
