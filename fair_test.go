package settleflow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
)

// settledWithin creates one workflow for customer and returns how long it
// took to reach Settled.
func settledWithin(t *testing.T, f *fixture, customer string) time.Duration {
	t.Helper()
	start := time.Now()
	wf, _, err := f.engine.Create(context.Background(), settleflow.CreateParams{Environment: settleflow.Test, Product: "ticket-triage",
		CustomerID: customer, Payload: json.RawMessage(`{"ticketId":"T-1"}`)})
	if err != nil {
		t.Fatal(err)
	}
	seen := settleflow.Pending
	for {
		w, err := f.engine.Fetch(context.Background(), settleflow.Test, wf.ID)
		if err != nil {
			t.Fatal(err)
		}
		if w.Status != seen {
			t.Logf("%s %s after %v", customer, w.Status, time.Since(start))
			seen = w.Status
		}
		if w.Status == settleflow.Settled {
			return time.Since(start)
		}
		if w.Status.Terminal() || time.Since(start) > time.Minute {
			t.Fatalf("%s: %s", wf.ID, w.Status)
		}
		time.Sleep(time.Millisecond)
	}
}

// While one customer has 20,000 workflows queued, another customer's
// workflow reaches Settled about as fast as on an idle engine: the queue
// serves customers in turn, not first come, first served.
func TestFairToEveryCustomer(t *testing.T) {
	const burst = 20000
	// On an idle engine: the median of five.
	idle := newFixture(t, nil)
	if err := idle.engine.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	var lat []time.Duration
	for i := range 5 {
		lat = append(lat, settledWithin(t, idle, fmt.Sprintf("cus_idle%d", i)))
	}
	idle.engine.Stop(context.Background())
	sorted := slices.Clone(lat)
	slices.Sort(sorted)
	idleLatency := sorted[2]

	f := newFixture(t, nil)
	ctx := context.Background()
	var wg sync.WaitGroup
	var last *settleflow.Workflow
	var mu sync.Mutex
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < burst; i += 16 {
				wf, _, err := f.engine.Create(ctx, settleflow.CreateParams{Environment: settleflow.Test, Product: "ticket-triage",
					CustomerID: "cus_burst", Payload: json.RawMessage(fmt.Sprintf(`{"ticketId":"B-%d"}`, i))})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if last == nil || wf.ID > last.ID {
					last = wf
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if err := f.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the burst is being served
	depth := func() int64 {
		b, err := f.store.Backlog(ctx, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return b[settleflow.StageExecute].Depth
	}
	before := depth()
	busy := settledWithin(t, f, "cus_other")
	served := before - depth()
	w, err := f.engine.Fetch(ctx, settleflow.Test, last.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The workflows in flight when it arrived go first: one settlement
	// batch (the engine's BatchSize, 256) at the rate the burst was served
	// meanwhile (under the race detector, three: its slowdown is uneven).
	// First come, first served would have it wait for the whole queue
	// ahead, thousands at that rate.
	rate := float64(served) / busy.Seconds()
	batch := time.Duration(256 / rate * float64(time.Second))
	allowance := 2*idleLatency + raceSlowdown*batch
	t.Logf("the burst was served at %.0f workflows/s meanwhile: one settlement batch is %v", rate, batch)
	t.Logf("idle engine: %v (median of %v); behind %d queued workflows of another customer: %v (allowed %v); the burst's last is %s",
		idleLatency, lat, burst, busy, allowance, w.Status)
	if w.Status != settleflow.Pending {
		t.Fatalf("the burst's last workflow is already %s: the test measured no queue", w.Status)
	}
	if busy > allowance {
		t.Fatalf("a workflow behind another customer's %d took %v, more than twice the idle %v plus a settlement batch", burst, busy, idleLatency)
	}
}
