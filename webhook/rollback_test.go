package webhook_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/storage/sqlite"
	"github.com/settleflow/settleflow/webhook"
)

// A transition whose transaction rolls back leaves no event in the outbox,
// so nothing is delivered for it; the transition that committed is
// delivered. Real store, real webhook service, real receiver on loopback.
func TestNoDeliveryForRolledBackTransition(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "settleflow.db"), sqlite.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var mu sync.Mutex
	got := map[string]int{} // workflow id → deliveries
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev settleflow.Event
		json.Unmarshal(body, &ev)
		mu.Lock()
		got[ev.Data.WorkflowID]++
		mu.Unlock()
		w.Write([]byte(`{"received": true}`))
	}))
	defer recv.Close()
	svc, err := webhook.New(ctx, store.DB(), webhook.Config{PollInterval: 20 * time.Millisecond,
		Retry: webhook.RetryPolicy{Schedule: []time.Duration{0}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.CreateEndpoint(ctx, webhook.EndpointParams{Environment: settleflow.Test, URL: recv.URL}); err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer svc.Stop(ctx)

	now := time.Now().UTC().Truncate(time.Microsecond)
	newWF := func() *settleflow.Workflow {
		return &settleflow.Workflow{ID: ids.New(ids.Workflow, now), Object: "workflow", Product: "p", CustomerID: "cus_1",
			Payload: json.RawMessage(`{}`), Quoted: settleflow.Money{Amount: 100, Currency: "usd"}, Status: settleflow.Pending,
			CreatedAt: now, UpdatedAt: now}
	}
	a, b, c := newWF(), newWF(), newWF()
	if _, err := store.InsertWorkflows(ctx, []settleflow.Insert{{Workflow: a}, {Workflow: b}, {Workflow: c}}); err != nil {
		t.Fatal(err)
	}
	if ws, err := store.ClaimWorkflows(ctx, settleflow.Claim{Owner: "w", Now: now.Add(time.Second), LeaseUntil: now.Add(time.Hour), Limit: 3}); err != nil || len(ws) != 3 {
		t.Fatalf("claim: %d %v", len(ws), err)
	}
	fail := func(w *settleflow.Workflow, evID string) settleflow.Update {
		tr, _ := settleflow.Running.To(settleflow.Failed)
		return settleflow.Update{ID: w.ID, Owner: "w", Status: settleflow.Running, Transition: tr, Release: true, RunAt: now, UpdatedAt: now,
			Failure: &settleflow.Failure{Code: "x", Message: "y"},
			Event: &settleflow.Event{ID: evID, Object: "event", Type: settleflow.EventWorkflowFailed, CreatedAt: now,
				Data: settleflow.EventData{WorkflowID: w.ID, Status: settleflow.Failed}}}
	}
	// One transaction: a's transition, then b's with a clashing event id.
	// The second insert fails, so the whole transaction rolls back.
	clash := ids.New(ids.Event, now)
	if _, err := store.UpdateWorkflows(ctx, []settleflow.Update{fail(a, clash), fail(b, clash)}); err == nil {
		t.Fatal("the clashing transaction committed")
	}
	if w, _ := store.GetWorkflow(ctx, settleflow.Test, a.ID); w.Status != settleflow.Running {
		t.Fatalf("a rolled-back transition stuck: %s", w.Status)
	}
	// c's transition commits.
	if applied, err := store.UpdateWorkflows(ctx, []settleflow.Update{fail(c, ids.New(ids.Event, now))}); err != nil || !applied[0] {
		t.Fatal(applied, err)
	}
	// Dispatch the outbox as the engine does: claim, Notify, mark.
	evs, err := store.ClaimEvents(ctx, settleflow.Claim{Owner: "d", Now: now.Add(time.Minute), LeaseUntil: now.Add(time.Hour), Limit: 100})
	if err != nil || len(evs) != 1 || evs[0].Data.WorkflowID != c.ID {
		t.Fatalf("outbox: %+v %v; want only c's event", evs, err)
	}
	if err := svc.Notify(ctx, evs); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := got[c.ID]
		mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the committed transition was not delivered")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if got[a.ID] != 0 || got[b.ID] != 0 || len(got) != 1 {
		t.Fatalf("deliveries %v: something was delivered for a rolled-back transition", got)
	}
}
