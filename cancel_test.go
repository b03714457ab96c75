package settleflow_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/ids"
)

// wantStateError checks err is the typed refusal naming status.
func wantStateError(t *testing.T, err error, id string, status settleflow.Status, code string) {
	t.Helper()
	var se *settleflow.StateError
	if !errors.As(err, &se) || !errors.Is(err, settleflow.ErrWorkflowState) {
		t.Fatalf("cancel of a %s workflow: %v; want a *StateError", status, err)
	}
	if se.Status != status || se.WorkflowID != id || se.Op != "cancel" || string(se.Code()) != code {
		t.Fatalf("StateError %+v (code %s); want status %s, code %s", se, se.Code(), status, code)
	}
}

func TestEngineCancel(t *testing.T) {
	ctx := context.Background()
	release := make(chan struct{})
	f := newFixture(t, nil)
	f.hooks.execute = func(ctx context.Context, p triage) error {
		if p.TicketID == "T-hold" {
			select {
			case <-release:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	// Before Start: a Pending workflow cancels.
	w := f.create(t, settleflow.Test, "T-cancel", 0)
	got, err := f.engine.Cancel(ctx, settleflow.Test, w.ID)
	if err != nil || got.Status != settleflow.Canceled || got.ID != w.ID || got.Quoted != w.Quoted || got.Result != nil || got.Settlement != nil {
		t.Fatalf("Cancel: %+v %v", got, err)
	}
	if fetched, err := f.engine.Fetch(ctx, settleflow.Test, w.ID); err != nil || fetched.Status != settleflow.Canceled {
		t.Fatalf("Fetch after Cancel: %+v %v", fetched, err)
	}
	_, err = f.engine.Cancel(ctx, settleflow.Test, w.ID)
	wantStateError(t, err, w.ID, settleflow.Canceled, "workflow_canceled")
	// Other environment, unknown and malformed ids: not found.
	for _, c := range []struct {
		env settleflow.Environment
		id  string
	}{{settleflow.Live, w.ID}, {settleflow.Test, ids.New(ids.Workflow, time.Now())}, {settleflow.Test, "wf_nope"}, {settleflow.Test, ""}} {
		if _, err := f.engine.Cancel(ctx, c.env, c.id); !errors.Is(err, settleflow.ErrNotFound) {
			t.Fatalf("Cancel(%s, %q): %v; want ErrNotFound", c.env, c.id, err)
		}
	}
	if _, err := f.engine.Cancel(ctx, "staging", w.ID); err == nil {
		t.Fatal("Cancel in an unknown environment was accepted")
	}

	// After Start: the canceled workflow is never run, and its event
	// reaches the Notifier; Settled and Running ones refuse to cancel.
	if err := f.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	settled := f.create(t, settleflow.Test, "T-settle", 0)
	f.waitTerminal(t, settleflow.Test, settled.ID)
	_, err = f.engine.Cancel(ctx, settleflow.Test, settled.ID)
	wantStateError(t, err, settled.ID, settleflow.Settled, "workflow_settled")

	held := f.create(t, settleflow.Test, "T-hold", 0)
	deadline := time.Now().Add(10 * time.Second)
	for {
		cur, err := f.engine.Fetch(ctx, settleflow.Test, held.ID)
		if err != nil {
			t.Fatal(err)
		}
		if cur.Status == settleflow.Running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("held workflow still %s", cur.Status)
		}
		time.Sleep(5 * time.Millisecond)
	}
	_, err = f.engine.Cancel(ctx, settleflow.Test, held.ID)
	wantStateError(t, err, held.ID, settleflow.Running, "workflow_running")
	close(release)
	if end := f.waitTerminal(t, settleflow.Test, held.ID)[held.ID]; end.Status != settleflow.Settled {
		t.Fatalf("the workflow whose cancel was refused ended %s", end.Status)
	}

	events := f.waitEvents(t, 3)
	evs := events[w.ID]
	if len(evs) != 1 || evs[0].Type != settleflow.EventWorkflowCanceled || evs[0].Data.Status != settleflow.Canceled ||
		evs[0].Data.Quoted != w.Quoted || evs[0].Data.Result != nil || evs[0].Data.Failure != nil || evs[0].Livemode {
		t.Fatalf("events of the canceled workflow: %+v", evs)
	}
	if n := f.hooks.runs.Load(); n != 2 {
		t.Fatalf("the product ran %d times, want 2 (the canceled workflow never)", n)
	}
	if charges, _, _ := f.settler.charged(t); charges != 2 {
		t.Fatalf("%d charges, want 2 (nothing for the canceled workflow)", charges)
	}
	// The event is in the outbox, readable back.
	fetched, err := f.engine.FetchEvent(ctx, settleflow.Test, evs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	equalJSONBytes(t, fetched, &evs[0])
	page, err := f.engine.ListEvents(ctx, settleflow.EventListParams{Environment: settleflow.Test, Type: settleflow.EventWorkflowCanceled})
	if err != nil || len(page.Data) != 1 || page.Data[0].ID != evs[0].ID || page.HasMore {
		t.Fatalf("ListEvents(type canceled): %+v %v", page, err)
	}
}

// equalJSONBytes compares the JSON encodings of got and want, byte for byte.
func equalJSONBytes(t *testing.T, got, want any) {
	t.Helper()
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if string(g) != string(w) {
		t.Fatalf("JSON differs\n got %s\nwant %s", g, w)
	}
}

// A cancel racing the engine's claim of the same workflow, 100 times on the
// real SQLite store: each workflow is either canceled, and never executed
// nor charged, or executed once and settled, its cancel refused as Running
// or later; never both. The claimer takes workflows one at a time, oldest
// first; cancels are fired from the executions themselves, a few workflows
// ahead, and after each successful cancel at the next workflow, so they
// land around the claims whatever the machine's speed.
func TestEngineCancelRacesExecution(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, func(o *settleflow.Options) { o.BatchSize = 1 })
	const n = 100
	type outcome struct {
		wf       *settleflow.Workflow
		ticket   string
		canceled bool
		refused  settleflow.Status
	}
	outcomes := make([]outcome, n)
	index := map[string]int{}
	for i := range outcomes {
		ticket := fmt.Sprintf("T-%d", i)
		outcomes[i] = outcome{wf: f.create(t, settleflow.Test, ticket, 0), ticket: ticket}
		index[ticket] = i
	}
	var (
		wg    sync.WaitGroup
		once  [n]sync.Once
		fire  func(i int)
		errs  = make(chan error, n)
		mu    sync.Mutex
		execs = map[string]int{} // by ticket
	)
	fire = func(i int) {
		if i >= n {
			return
		}
		once[i].Do(func() {
			wg.Add(1)
			go func() {
				defer wg.Done()
				o := &outcomes[i]
				got, err := f.engine.Cancel(ctx, settleflow.Test, o.wf.ID)
				var se *settleflow.StateError
				switch {
				case err == nil && got.Status == settleflow.Canceled:
					o.canceled = true
					fire(i + 1)
				case errors.As(err, &se):
					o.refused = se.Status
				default:
					errs <- fmt.Errorf("cancel of %s: %+v %v", o.wf.ID, got, err)
				}
			}()
		})
	}
	f.hooks.execute = func(ctx context.Context, p triage) error {
		mu.Lock()
		execs[p.TicketID]++
		mu.Unlock()
		// The claimer runs some way ahead of the executions: aim a little
		// ahead too, at a random distance, so cancels land just before
		// and just after their workflow's claim.
		fire(index[p.TicketID] + 1 + rand.IntN(8))
		return nil
	}
	if err := f.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	fire(0)
	all := make([]string, n)
	for i, o := range outcomes {
		all[i] = o.wf.ID
	}
	final := f.waitTerminal(t, settleflow.Test, all...)
	for i := range outcomes {
		fire(i) // those no cancel was aimed at: refused, as Settled
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	canceled := 0
	for _, o := range outcomes {
		end := final[o.wf.ID]
		mu.Lock()
		runs := execs[o.ticket]
		mu.Unlock()
		if o.canceled {
			canceled++
			if end.Status != settleflow.Canceled || runs != 0 {
				t.Fatalf("%s: canceled, but ended %s after %d executions", o.wf.ID, end.Status, runs)
			}
			if _, err := f.settler.chargedAmount(o.wf.ID); !errors.Is(err, sql.ErrNoRows) {
				t.Fatalf("%s: canceled, but charged", o.wf.ID)
			}
			continue
		}
		if o.refused == settleflow.Pending || o.refused == settleflow.Canceled || end.Status != settleflow.Settled || runs != 1 {
			t.Fatalf("%s: cancel refused as %s; ended %s after %d executions", o.wf.ID, o.refused, end.Status, runs)
		}
	}
	// One event per workflow: canceled for the canceled, completed for the rest.
	events := f.waitEvents(t, n)
	for _, o := range outcomes {
		evs := events[o.wf.ID]
		want := settleflow.EventWorkflowCompleted
		if o.canceled {
			want = settleflow.EventWorkflowCanceled
		}
		if len(evs) != 1 || evs[0].Type != want {
			t.Fatalf("%s: events %+v, want one %s", o.wf.ID, evs, want)
		}
	}
	page, err := f.engine.ListEvents(ctx, settleflow.EventListParams{Environment: settleflow.Test, Type: settleflow.EventWorkflowCanceled, Limit: 100})
	if err != nil || len(page.Data) != canceled {
		t.Fatalf("%d canceled events in the outbox, %d cancels (%v)", len(page.Data), canceled, err)
	}
	refused := map[settleflow.Status]int{}
	for _, o := range outcomes {
		if !o.canceled {
			refused[o.refused]++
		}
	}
	t.Logf("%d canceled, %d executed (cancels refused by status: %v)", canceled, n-canceled, refused)
}

// chargedAmount is the amount charged for workflow id, or sql.ErrNoRows if
// it was never charged.
func (s *recordingSettler) chargedAmount(id string) (int64, error) {
	var a int64
	err := s.db.QueryRow(`SELECT amount FROM charges WHERE id = ?`, id).Scan(&a)
	return a, err
}
