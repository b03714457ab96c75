package webhook

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
)

// Finished deliveries and their attempts are deleted after Config.Retention;
// younger ones and pending ones are kept.
func TestPrune(t *testing.T) {
	ctx := context.Background()
	clock := &testClock{}
	cfg := fastConfig(t)
	cfg.Clock = clock
	cfg.Retention = 48 * time.Hour
	cfg.RetentionInterval = time.Hour // the test calls Prune itself
	s := newService(t, openDB(t), cfg)
	ok := newReceiver(t, nil)
	createEndpoint(t, s, settleflow.Test, ok.URL)

	old := testEvent(false)
	if err := s.Notify(ctx, []settleflow.Event{old}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "first delivery", func() bool { return ok.count() == 1 })
	oldDelivery := onlyDelivery(t, s, old.ID)
	waitFor(t, 5*time.Second, "first delivery recorded", func() bool {
		d, err := s.GetDelivery(ctx, oldDelivery)
		return err == nil && d.Status == DeliverySucceeded
	})

	clock.Advance(47 * time.Hour)
	recent := testEvent(false)
	if err := s.Notify(ctx, []settleflow.Event{recent}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "second delivery", func() bool { return ok.count() == 2 })
	recentDelivery := onlyDelivery(t, s, recent.ID)
	waitFor(t, 5*time.Second, "second delivery recorded", func() bool {
		d, err := s.GetDelivery(ctx, recentDelivery)
		return err == nil && d.Status == DeliverySucceeded
	})
	clock.Advance(2 * time.Hour) // the first is 49 h old, the second 2 h
	n, err := s.Prune(ctx)
	if err != nil || n != 1 {
		t.Fatalf("Prune: %d %v; want 1", n, err)
	}
	if _, err := s.GetDelivery(ctx, oldDelivery); !errors.Is(err, ErrDeliveryNotFound) {
		t.Fatalf("the 49-hour-old delivery: %v; want it deleted", err)
	}
	if as, err := s.ListAttempts(ctx, oldDelivery); err != nil || len(as) != 0 {
		t.Fatalf("its attempts: %d %v; want them deleted", len(as), err)
	}
	if d, err := s.GetDelivery(ctx, recentDelivery); err != nil || d.Status != DeliverySucceeded {
		t.Fatalf("the 2-hour-old delivery: %v %v; want it kept", d, err)
	}
	if as, err := s.ListAttempts(ctx, recentDelivery); err != nil || len(as) != 1 {
		t.Fatalf("its attempts: %d %v; want 1 kept", len(as), err)
	}

	// Pending is never pruned, however old.
	cfg2 := fastConfig(t)
	cfg2.Clock = clock
	cfg2.Retention = time.Hour
	cfg2.Retry.Schedule = []time.Duration{10 * time.Hour}
	s2 := newService(t, openDB(t), cfg2)
	createEndpoint(t, s2, settleflow.Test, ok.URL)
	pending := testEvent(false)
	if err := s2.Notify(ctx, []settleflow.Event{pending}); err != nil {
		t.Fatal(err)
	}
	pendingDelivery := onlyDelivery(t, s2, pending.ID)
	clock.Advance(2 * time.Hour) // past the retention, not yet due
	if n, err := s2.Prune(ctx); err != nil || n != 0 {
		t.Fatalf("Prune with only a pending delivery: %d %v", n, err)
	}
	if d, err := s2.GetDelivery(ctx, pendingDelivery); err != nil || d.Status != DeliveryPending {
		t.Fatalf("the pending delivery: %v %v; want it kept, pending", d, err)
	}
}

func onlyDelivery(t *testing.T, s *Service, eventID string) string {
	t.Helper()
	ds, err := s.ListDeliveries(context.Background(), DeliveryQuery{EventID: eventID})
	if err != nil || len(ds) != 1 {
		t.Fatalf("deliveries of %s: %d %v", eventID, len(ds), err)
	}
	return ds[0].ID
}
