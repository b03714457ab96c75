package settleflow_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
)

// offsetClock is the real clock moved forward by an offset the test sets:
// the engine's timers keep running while the test jumps days ahead.
type offsetClock struct{ offset atomic.Int64 }

func (c *offsetClock) Now() time.Time {
	return time.Now().UTC().Add(time.Duration(c.offset.Load()))
}
func (c *offsetClock) advance(d time.Duration) { c.offset.Add(int64(d)) }

// Retention deletes dispatched events after Retention.Events and
// idempotency records after 24 h, keeps what is younger, and never touches
// a workflow.
func TestRetention(t *testing.T) {
	ctx := context.Background()
	clock := &offsetClock{}
	f := newFixture(t, func(o *settleflow.Options) {
		o.Clock = clock
		o.Retention.Interval = time.Hour // the test calls Prune itself
	})
	if err := f.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	create := func(key string) *settleflow.Workflow {
		t.Helper()
		wf, _, err := f.engine.Create(ctx, settleflow.CreateParams{Environment: settleflow.Test, Product: "ticket-triage",
			CustomerID: "cus_123", Payload: json.RawMessage(`{"ticketId":"T-1","attachments":1}`), IdempotencyKey: key})
		if err != nil {
			t.Fatal(err)
		}
		return wf
	}
	eventsOf := func(id string) int {
		t.Helper()
		p, err := f.engine.ListEvents(ctx, settleflow.EventListParams{Environment: settleflow.Test, WorkflowID: id})
		if err != nil {
			t.Fatal(err)
		}
		return len(p.Data)
	}

	// Day 0: a workflow created with a key, run to Settled, its event dispatched.
	old := create("order-old")
	f.waitTerminal(t, settleflow.Test, old.ID)
	f.waitEvents(t, 1)
	// 25 hours later, another.
	clock.advance(25 * time.Hour)
	recent := create("order-recent")
	f.waitTerminal(t, settleflow.Test, recent.ID)
	f.waitEvents(t, 2)

	res, err := f.engine.Prune(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.IdempotencyKeys != 1 || res.Events != 0 {
		t.Fatalf("pruned %+v after 25 h; want the first key only", res)
	}
	// The old key is gone: the same key now creates a new workflow; the
	// recent one still replays.
	if again := create("order-old"); again.ID == old.ID {
		t.Fatal("the pruned key still replayed the first workflow")
	}
	if again := create("order-recent"); again.ID != recent.ID {
		t.Fatalf("the 0-hour-old key created %s, want the replay of %s", again.ID, recent.ID)
	}

	// 30 days after the first event (29 days after the second), only the
	// first event is past retention.
	clock.advance(30*24*time.Hour - 25*time.Hour + time.Minute)
	res, err = f.engine.Prune(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Events != 1 || eventsOf(old.ID) != 0 || eventsOf(recent.ID) != 1 {
		t.Fatalf("pruned %+v after 30 days: old workflow has %d events, recent %d; want 1 pruned, 0 and 1 left",
			res, eventsOf(old.ID), eventsOf(recent.ID))
	}
	// Years later everything expirable is gone, and the workflows remain
	// exactly as they were.
	clock.advance(3 * 365 * 24 * time.Hour)
	if _, err := f.engine.Prune(ctx); err != nil {
		t.Fatal(err)
	}
	for _, w := range []*settleflow.Workflow{old, recent} {
		got, err := f.engine.Fetch(ctx, settleflow.Test, w.ID)
		if err != nil || got.Status != settleflow.Settled {
			t.Fatalf("workflow %s after retention: %v %v; want it kept, Settled", w.ID, got, err)
		}
		if eventsOf(w.ID) != 0 {
			t.Fatalf("workflow %s still has events after 3 years", w.ID)
		}
	}
	var keys int
	if err := f.store.DB().Bun().QueryRowContext(ctx, `SELECT count(*) FROM settleflow_idempotency_keys`).Scan(&keys); err != nil || keys != 0 {
		t.Fatalf("%d idempotency records left (%v), want 0", keys, err)
	}
}

// An event the Notifier has not taken is kept however old it is, and a
// retention shorter than the idempotency TTL is refused.
func TestRetentionKeepsUndispatchedEvents(t *testing.T) {
	ctx := context.Background()
	clock := &offsetClock{}
	f := newFixture(t, func(o *settleflow.Options) {
		o.Clock = clock
		o.Retention = settleflow.Retention{Events: time.Hour, Interval: time.Hour}
	})
	// Without Start nothing dispatches: a canceled workflow's event waits
	// in the outbox.
	wf := f.create(t, settleflow.Test, "T-2", 0)
	if _, err := f.engine.Cancel(ctx, settleflow.Test, wf.ID); err != nil {
		t.Fatal(err)
	}
	clock.advance(365 * 24 * time.Hour)
	res, err := f.engine.Prune(ctx)
	if err != nil || res.Events != 0 {
		t.Fatalf("pruned %+v (%v); an undispatched event must stay", res, err)
	}
	if _, err := f.engine.FetchEvent(ctx, settleflow.Test, mustOneEvent(t, f, wf.ID)); err != nil {
		t.Fatal(err)
	}
	_, err = settleflow.New(settleflow.Options{Store: f.store, Settler: f.settler, Notifier: f.notifier, Products: testProducts(t, f.hooks),
		Retention: settleflow.Retention{IdempotencyKeys: time.Hour}})
	if err == nil {
		t.Fatal("a 1-hour idempotency retention was accepted")
	}
}

func mustOneEvent(t *testing.T, f *fixture, id string) string {
	t.Helper()
	p, err := f.engine.ListEvents(context.Background(), settleflow.EventListParams{Environment: settleflow.Test, WorkflowID: id})
	if err != nil || len(p.Data) != 1 {
		t.Fatalf("events of %s: %v %v", id, p, err)
	}
	return p.Data[0].ID
}
