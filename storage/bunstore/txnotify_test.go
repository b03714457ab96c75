package bunstore_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/internal/pgtest"
	"github.com/settleflow/settleflow/storage"
	"github.com/settleflow/settleflow/storage/bunstore"
	"github.com/settleflow/settleflow/storage/postgres"
	"github.com/settleflow/settleflow/storage/sqlite"
	"github.com/settleflow/settleflow/webhook"
)

// TestUpdateHandsEventsToTheNotifierInItsTransaction runs, on SQLite and
// Postgres, UpdateWorkflows with a webhook.Service on the Store's own
// database as the updates' Notifier: the events of the updates that apply
// are written once, already dispatched, with their deliveries in the same
// transaction, and none for an update that does not apply. When the
// recording fails (an endpoint removed between its preparation and the
// transaction), the updates still apply, their events go to the outbox and
// no delivery of them is left behind; a Notifier on another database is
// not asked to record in the transaction at all.
func TestUpdateHandsEventsToTheNotifierInItsTransaction(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) {
		open := func(name string) *bunstore.Store {
			s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), name), sqlite.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}
		testTxNotify(t, open("a.db"), open("b.db"))
	})
	t.Run("Postgres", func(t *testing.T) {
		srv := pgtest.Connect(t)
		open := func(prefix string) *bunstore.Store {
			s, err := postgres.OpenDB(context.Background(), srv.Schema(t, prefix)())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}
		testTxNotify(t, open("txnotify_a"), open("txnotify_b"))
	})
}

// removing is a webhook.Service that removes an endpoint once it has
// prepared a recording, as a concurrent RemoveEndpoint could.
type removing struct {
	*webhook.Service
	endpoint string
}

func (r removing) PrepareNotify(ctx context.Context, evs []settleflow.Event) (storage.Notice, error) {
	n, err := r.Service.PrepareNotify(ctx, evs)
	if err != nil {
		return nil, err
	}
	if err := r.RemoveEndpoint(ctx, r.endpoint); err != nil {
		n.Done(false)
		return nil, err
	}
	return n, nil
}

func testTxNotify(t *testing.T, s, other *bunstore.Store) {
	ctx := context.Background()
	at := time.Now().UTC().Truncate(time.Microsecond)
	hooks := newHooks(t, s)
	otherHooks := newHooks(t, other)
	ep := createEndpoint(t, hooks)
	gone := createEndpoint(t, hooks)

	// Four workflows, claimed by worker "w".
	var ws []*settleflow.Workflow
	var ins []settleflow.Insert
	for i := range 4 {
		w := &settleflow.Workflow{
			Pricing: settleflow.Pricing{Model: settleflow.PricingFixed}, ID: ids.New(ids.Workflow, at), Object: "workflow",
			Product: "triage", CustomerID: "cus_" + string(rune('a'+i)), Payload: []byte(`{}`),
			Quoted: settleflow.Money{Amount: 100, Currency: "usd"}, Margin: settleflow.Margin{Target: 3000},
			Status: settleflow.Pending, Refunded: settleflow.Money{Currency: "usd"}, CreatedAt: at, UpdatedAt: at,
		}
		ws = append(ws, w)
		ins = append(ins, settleflow.Insert{Workflow: w, Claim: &settleflow.InsertClaim{Owner: "w", LeaseUntil: at.Add(time.Minute)}})
	}
	res, err := s.InsertWorkflows(ctx, ins)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if !r.Claimed {
			t.Fatalf("workflow %d not inserted claimed", i)
		}
	}
	failed, _ := settleflow.Running.To(settleflow.Failed)
	update := func(w *settleflow.Workflow, owner string, n settleflow.Notifier) settleflow.Update {
		return settleflow.Update{ID: w.ID, Owner: owner, Status: settleflow.Running, Transition: failed, Release: true,
			RunAt: at, UpdatedAt: at, Failure: &settleflow.Failure{Code: "x", Message: "y"},
			Event: &settleflow.Event{ID: ids.New(ids.Event, at), Object: "event", Type: settleflow.EventWorkflowFailed, CreatedAt: at,
				Data: settleflow.EventData{WorkflowID: w.ID, CustomerID: w.CustomerID, Status: settleflow.Failed}},
			EventLease: at.Add(time.Minute), Notifier: n}
	}
	deliveries := func(eventID string) []string {
		t.Helper()
		ds, err := hooks.ListDeliveries(ctx, webhook.DeliveryQuery{EventID: eventID})
		if err != nil {
			t.Fatal(err)
		}
		var eps []string
		for _, d := range ds {
			eps = append(eps, d.EndpointID)
		}
		slices.Sort(eps)
		return eps
	}
	outbox := func() []string {
		t.Helper()
		now := at.Add(2 * time.Minute) // past every event lease
		evs, err := s.ClaimEvents(ctx, settleflow.Claim{Owner: "d", Now: now, LeaseUntil: now.Add(time.Minute), Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, ev := range evs {
			out = append(out, ev.ID)
		}
		if err := s.RetryEvents(ctx, out, at); err != nil {
			t.Fatal(err)
		}
		return out
	}

	// In the transaction: the two that apply, not the wrong owner's.
	us := []settleflow.Update{update(ws[0], "w9", hooks), update(ws[0], "w", hooks), update(ws[1], "w", hooks)}
	applied, err := s.UpdateWorkflows(ctx, us)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(applied, []bool{false, true, true}) {
		t.Fatalf("applied %v, want [false true true]", applied)
	}
	for i, want := range []bool{false, true, true} {
		if us[i].EventNotified != want {
			t.Errorf("update %d: EventNotified %v, want %v", i, us[i].EventNotified, want)
		}
	}
	both := []string{ep, gone}
	slices.Sort(both)
	for _, u := range us[1:] {
		if got := deliveries(u.Event.ID); !slices.Equal(got, both) {
			t.Errorf("deliveries of %s: %v, want one per endpoint %v", u.Event.ID, got, both)
		}
		if _, err := s.GetEvent(ctx, settleflow.Test, u.Event.ID); err != nil {
			t.Errorf("event %s not written: %v", u.Event.ID, err)
		}
	}
	if got := deliveries(us[0].Event.ID); len(got) != 0 {
		t.Errorf("the update that did not apply has deliveries: %v", got)
	}
	if _, err := s.GetEvent(ctx, settleflow.Test, us[0].Event.ID); !errors.Is(err, settleflow.ErrNotFound) {
		t.Errorf("the event of the update that did not apply: %v, want ErrNotFound", err)
	}
	if got := outbox(); len(got) != 0 {
		t.Errorf("events handed over in the transaction are in the outbox: %v", got)
	}

	// The recording fails: the update applies, its event goes to the
	// outbox, and no delivery of it is left, not even to the endpoint that
	// is still there.
	u := update(ws[2], "w", removing{hooks, gone})
	us = []settleflow.Update{u}
	applied, err = s.UpdateWorkflows(ctx, us)
	if err != nil || !applied[0] {
		t.Fatalf("update with a failing recording: %v %v, want applied", applied, err)
	}
	if us[0].EventNotified {
		t.Error("EventNotified set though the recording failed")
	}
	if got := deliveries(u.Event.ID); len(got) != 0 {
		t.Errorf("deliveries of an event whose recording failed: %v", got)
	}
	if got := outbox(); !slices.Equal(got, []string{u.Event.ID}) {
		t.Errorf("outbox %v, want the event whose recording failed, %s", got, u.Event.ID)
	}

	// A Notifier on another database: the outbox, as for any Notifier.
	u = update(ws[3], "w", otherHooks)
	us = []settleflow.Update{u}
	if applied, err = s.UpdateWorkflows(ctx, us); err != nil || !applied[0] || us[0].EventNotified {
		t.Fatalf("update with another database's notifier: %v %v notified %v", applied, err, us[0].EventNotified)
	}
	if got := outbox(); !slices.Contains(got, u.Event.ID) {
		t.Errorf("outbox %v lacks %s", got, u.Event.ID)
	}
	if got := deliveries(u.Event.ID); len(got) != 0 {
		t.Errorf("deliveries recorded in the transaction of another database's notifier: %v", got)
	}
}

func newHooks(t *testing.T, s *bunstore.Store) *webhook.Service {
	t.Helper()
	hooks, err := webhook.New(context.Background(), s.DB(), webhook.Config{Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	return hooks
}

func createEndpoint(t *testing.T, hooks *webhook.Service) string {
	t.Helper()
	ep, _, err := hooks.CreateEndpoint(context.Background(), webhook.EndpointParams{Environment: settleflow.Test, URL: "http://127.0.0.1:9/hook"})
	if err != nil {
		t.Fatal(err)
	}
	return ep.ID
}
