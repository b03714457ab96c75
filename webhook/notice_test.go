package webhook

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/settleflow/settleflow"
)

// TestNoticeRerunRecordsOnce runs a prepared recording (PrepareNotify) as a
// Store runs it in its own transaction when the write is rerun: first in a
// transaction that rolls back, then in one that commits and keeps only one
// of the two events (the other's update did not apply). Exactly one
// delivery is recorded, claimed by this process, and sent once; the
// dropped event is neither recorded nor sent; and the deliverer's
// reservation is given back whole.
func TestNoticeRerunRecordsOnce(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	cfg := fastConfig(t)
	cfg.PollInterval = time.Hour // sent only as recorded claimed
	s := newService(t, db, cfg)
	g := newGate()
	rc := newReceiver(t, g.respond)
	createEndpoint(t, s, settleflow.Test, rc.URL)

	kept, dropped := customerEvent("cus_a"), customerEvent("cus_b")
	n, err := s.PrepareNotify(ctx, []settleflow.Event{kept, dropped})
	if err != nil {
		t.Fatal(err)
	}
	errRollback := errors.New("the rest of the write failed")
	err = db.Write(ctx, func(ctx context.Context, tx bun.Tx) error {
		if err := n.Record(ctx, tx.Tx, nil); err != nil {
			return err
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatalf("first run: %v, want it rolled back", err)
	}
	err = db.Write(ctx, func(ctx context.Context, tx bun.Tx) error {
		return n.Record(ctx, tx.Tx, func(id string) bool { return id == kept.ID })
	})
	if err != nil {
		t.Fatal(err)
	}
	n.Done(true)

	if id := g.wait(t); id != kept.ID {
		t.Fatalf("request for %s, want %s", id, kept.ID)
	}
	row := deliveryOf(t, s, kept.ID)
	if row.LeaseOwner != s.cfg.Owner {
		t.Errorf("delivery leased to %q, want recorded claimed by %q", row.LeaseOwner, s.cfg.Owner)
	}
	close(g.open)
	waitFor(t, 5*time.Second, "the delivery recorded as succeeded", func() bool {
		d, err := s.GetDelivery(ctx, row.ID)
		return err == nil && d.Status == DeliverySucceeded
	})
	all, err := s.ListDeliveries(ctx, DeliveryQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[0].EventID != kept.ID {
		t.Fatalf("%d deliveries recorded, want one, of %s: %+v", len(all), kept.ID, all)
	}
	if got := g.arrivals(); len(got) != 1 {
		t.Errorf("requests %v, want one, of %s", got, kept.ID)
	}
	s.mu.Lock()
	reserved, per := s.reserved, len(s.reservedPer)
	s.mu.Unlock()
	if reserved != 0 || per != 0 {
		t.Errorf("reservation left: %d slots, %d endpoints; want it given back", reserved, per)
	}
}
