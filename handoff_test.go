package settleflow_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
)

// slowNotifier takes its time with every call, so the dispatcher is busy
// while new events are written and their in-memory handoff finds no room.
type slowNotifier struct{ *recordingNotifier }

func (n slowNotifier) Notify(ctx context.Context, evs []settleflow.Event) error {
	time.Sleep(30 * time.Millisecond)
	return n.recordingNotifier.Notify(ctx, evs)
}

// Events the dispatcher had no room for are handed back to the outbox due
// at once: they reach the Notifier within moments, not after the 60-second
// lease they were written with.
func TestMissedHandoffCostsNoLease(t *testing.T) {
	f := newFixture(t, nil)
	// The fixture's store, settler and notifier, the notifier slowed; events
	// are written leased for 2 × NotifyTimeout = 60 s; small batches make
	// many handoffs.
	slow, err := settleflow.New(settleflow.Options{Store: f.store, Settler: f.settler, Notifier: slowNotifier{f.notifier},
		Products: testProducts(t, f.hooks), PollInterval: 20 * time.Millisecond, SettlementPollInterval: 20 * time.Millisecond,
		NotifyTimeout: 30 * time.Second, BatchSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	slow.SetHandoffCapacity(0)
	ctx := context.Background()
	if err := slow.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer slow.Stop(ctx)
	const n = 40
	for i := range n {
		if _, _, err := slow.Create(ctx, settleflow.CreateParams{Environment: settleflow.Test, Product: "ticket-triage",
			CustomerID: "cus_123", Payload: []byte(fmt.Sprintf(`{"ticketId":"T-%d","attachments":0}`, i))}); err != nil {
			t.Fatal(err)
		}
	}
	f.waitEvents(t, n) // 10 s, far below the lease
}
