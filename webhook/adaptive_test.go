package webhook

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
)

// A receiver that answers fast, then slowly, then with errors, then
// recovers: the deliverer sends more at once while it is fast, fewer while
// it is slow or failing, and every event arrives in the end.
func TestConcurrencyFollowsTheReceiver(t *testing.T) {
	ctx := context.Background()
	cfg := fastConfig(t)
	cfg.MaxConcurrency, cfg.MaxPerEndpoint = 32, 16
	cfg.Timeout = 2 * time.Second // slow: answers after more than 200 ms
	cfg.Retry = RetryPolicy{Schedule: []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond,
		300 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond,
		300 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond,
		300 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond,
		300 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond,
		300 * time.Millisecond}}
	s := newService(t, openDB(t), cfg)

	const (
		fast = iota
		slow
		failing
		recovered
	)
	var (
		phase    atomic.Int32
		inflight atomic.Int32
		mu       sync.Mutex
		peak     [4]int32 // most requests in flight at once, per phase
		reqs     [4]int
		got      = map[string]bool{}
	)
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		p := phase.Load()
		n := inflight.Add(1)
		defer inflight.Add(-1)
		mu.Lock()
		peak[p], reqs[p] = max(peak[p], n), reqs[p]+1
		mu.Unlock()
		switch p {
		case fast, recovered:
			time.Sleep(2 * time.Millisecond)
		case slow:
			time.Sleep(300 * time.Millisecond)
		case failing:
			time.Sleep(2 * time.Millisecond)
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
			return
		}
		var ev settleflow.Event
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &ev); err != nil || ev.ID == "" {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		mu.Lock()
		got[ev.ID] = true
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	ep, _ := createEndpoint(t, s, settleflow.Test, rc.URL)
	delivered := func() int { mu.Lock(); defer mu.Unlock(); return len(got) }
	notify := func(n int) {
		evs := make([]settleflow.Event, n)
		for i := range evs {
			evs[i] = testEvent(false)
		}
		if err := s.Notify(ctx, evs); err != nil {
			t.Fatal(err)
		}
	}

	// Fast: the limit grows from 4.
	notify(600)
	waitFor(t, 20*time.Second, "the fast phase's deliveries", func() bool { return delivered() == 600 })
	grown, _ := s.EndpointConcurrency(ep.ID)
	if grown <= defaultInitialPerEndpoint {
		t.Errorf("after 600 fast answers the limit is %d; want it grown past %d", grown, defaultInitialPerEndpoint)
	}

	// Slow: each slow answer takes a slot away.
	phase.Store(slow)
	notify(40)
	waitFor(t, 20*time.Second, "the slow phase's deliveries", func() bool { return delivered() == 640 })
	afterSlow, _ := s.EndpointConcurrency(ep.ID)
	if afterSlow >= grown {
		t.Errorf("after slow answers the limit is %d; want it below %d", afterSlow, grown)
	}

	// Failing: the limit halves down to one attempt at a time.
	phase.Store(failing)
	notify(100)
	waitFor(t, 10*time.Second, "the failing receiver to be tried", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return reqs[failing] >= 150
	})
	failLimit, _ := s.EndpointConcurrency(ep.ID)
	if failLimit > 2 {
		t.Errorf("while the receiver fails the limit is %d; want 1 or 2", failLimit)
	}

	// Recovered: everything arrives.
	phase.Store(recovered)
	waitFor(t, 30*time.Second, "every event after recovery", func() bool { return delivered() == 740 })
	mu.Lock()
	defer mu.Unlock()
	t.Logf("peak in flight: fast %d, slow %d, failing %d, recovered %d; limits: grown %d, after slow %d, failing %d",
		peak[fast], peak[slow], peak[failing], peak[recovered], grown, afterSlow, failLimit)
	if peak[failing] >= peak[fast] {
		t.Errorf("the failing receiver saw %d requests at once, the fast one %d; want fewer while failing", peak[failing], peak[fast])
	}
}

func TestBacklog(t *testing.T) {
	ctx := context.Background()
	clock := &testClock{}
	cfg := fastConfig(t)
	cfg.Clock = clock
	s, err := New(ctx, openDB(t), cfg) // not started: nothing is delivered
	if err != nil {
		t.Fatal(err)
	}
	rc := newReceiver(t, nil)
	createEndpoint(t, s, settleflow.Test, rc.URL)
	b, err := s.Backlog(ctx)
	if err != nil || b.Depth != 0 || b.Due != 0 || b.OldestDue != 0 || b.Stage != StageWebhooks {
		t.Fatalf("empty: %+v %v", b, err)
	}
	if err := s.Notify(ctx, []settleflow.Event{testEvent(false), testEvent(false)}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(90 * time.Second)
	b, err = s.Backlog(ctx)
	if err != nil || b.Depth != 2 || b.Due != 2 || b.OldestDue < 90*time.Second || b.OldestDue > 95*time.Second ||
		b.OldestDueSeconds != b.OldestDue.Seconds() {
		t.Fatalf("two waiting 90 s: %+v %v", b, err)
	}
}
