package webhook

import (
	"context"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
)

// Start's ctx bounds Start only, as the engine's does: once Start has
// returned, ending that ctx stops nothing, and a delivery notified after it
// ended is sent; Stop ends the deliverer.
func TestStartContextBoundsStartOnly(t *testing.T) {
	s, err := New(context.Background(), openDB(t), fastConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	rc := newReceiver(t, nil)
	createEndpoint(t, s, settleflow.Test, rc.URL)
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	time.Sleep(100 * time.Millisecond) // five poll intervals: a loop bound to ctx would have ended
	if err := s.Notify(context.Background(), []settleflow.Event{testEvent(false)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the delivery notified after Start's ctx ended", func() bool { return rc.count() == 1 })
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Notify(context.Background(), []settleflow.Event{testEvent(false)}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if n := rc.count(); n != 1 {
		t.Fatalf("%d requests after Stop; the stopped deliverer sent the second delivery", n)
	}
}
