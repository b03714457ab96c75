package webhook

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/dbcount"
	"github.com/settleflow/settleflow/storage"
	"github.com/settleflow/settleflow/storage/sqlite"
)

// pgOpenWrapped, when set, opens a fresh Postgres schema with its connector
// wrapped, as pgOpen does unwrapped.
var pgOpenWrapped func(t testing.TB, wrap func(driver.Connector) driver.Connector) *storage.DB

// openCountedDB is openDB with every write counted.
func openCountedDB(t testing.TB) (*storage.DB, *dbcount.Counter) {
	t.Helper()
	c := dbcount.New()
	if pgOpenWrapped != nil {
		return pgOpenWrapped(t, c.Wrap), c
	}
	db, err := sqlite.OpenDB(filepath.Join(t.TempDir(), "webhooks.db"),
		sqlite.OpenOptions{Synchronous: sqlite.SyncNormal, WrapConnector: c.Wrap})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, c
}

// gate is a receiver's answer that holds each request until it is opened,
// and reports each request's event id as it arrives.
type gate struct {
	mu      sync.Mutex
	open    chan struct{}
	arrived chan string
	order   []string // event ids, as they arrived
}

func newGate() *gate {
	return &gate{open: make(chan struct{}), arrived: make(chan string, 1000)}
}

func (g *gate) respond(w http.ResponseWriter, r *http.Request, n int) {
	var ev settleflow.Event
	if err := json.NewDecoder(r.Body).Decode(&ev); err == nil {
		g.mu.Lock()
		g.order = append(g.order, ev.ID)
		g.mu.Unlock()
		g.arrived <- ev.ID
	}
	select {
	case <-g.open:
	case <-r.Context().Done():
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (g *gate) wait(t testing.TB) string {
	t.Helper()
	select {
	case id := <-g.arrived:
		return id
	case <-time.After(10 * time.Second):
		t.Fatal("no request arrived")
		return ""
	}
}

func (g *gate) arrivals() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.order)
}

// deliveryOf returns the row of the event's one delivery.
func deliveryOf(t testing.TB, s *Service, eventID string) deliveryRow {
	t.Helper()
	var row deliveryRow
	if err := s.db.NewSelect().Model(&row).Where("event_id = ?", eventID).Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	return row
}

// TestNotifyRecordsClaimed: with the deliverer running and idle, a delivery
// is recorded leased to this process, in its place in line, and sent with
// no claim: one insert and one update (its outcome, with its attempt) of
// webhook_deliveries, and no attempt row.
func TestNotifyRecordsClaimed(t *testing.T) {
	ctx := context.Background()
	db, c := openCountedDB(t)
	cfg := fastConfig(t)
	cfg.PollInterval = time.Hour // no claim but the first and those the deliverer pokes
	s := newService(t, db, cfg)
	g := newGate()
	rc := newReceiver(t, g.respond)
	createEndpoint(t, s, settleflow.Test, rc.URL)

	before := c.Snapshot()
	ev := customerEvent("cus_a")
	if err := s.Notify(ctx, []settleflow.Event{ev}); err != nil {
		t.Fatal(err)
	}
	if id := g.wait(t); id != ev.ID {
		t.Fatalf("request for %s, want %s", id, ev.ID)
	}
	// In flight: leased as it was recorded, never updated since.
	row := deliveryOf(t, s, ev.ID)
	if row.LeaseOwner != s.cfg.Owner || row.UpdatedAt != row.CreatedAt || row.FairKey != 1 || row.Lane != "cus_a" {
		t.Fatalf("delivery in flight: lease %q (want %q), updated %d (recorded %d), key %d, lane %q; want it recorded leased, key 1",
			row.LeaseOwner, s.cfg.Owner, row.UpdatedAt, row.CreatedAt, row.FairKey, row.Lane)
	}
	close(g.open)
	waitFor(t, 5*time.Second, "the delivery recorded as succeeded", func() bool {
		d, err := s.GetDelivery(ctx, row.ID)
		return err == nil && d.Status == DeliverySucceeded
	})
	got := c.Snapshot().Sub(before)
	if n := got.ByStatement["UPDATE webhook_deliveries"]; n != 1 {
		t.Errorf("%d rows updated in webhook_deliveries, want 1 (its outcome; no claim):\n%s", n, got)
	}
	if n := got.ByStatement["INSERT webhook_deliveries"]; n != 1 {
		t.Errorf("%d rows inserted in webhook_deliveries, want 1:\n%s", n, got)
	}
	if n := got.ByStatement["INSERT webhook_attempts"]; n != 0 {
		t.Errorf("%d attempt rows inserted, want 0:\n%s", n, got)
	}
	if as, err := s.ListAttempts(ctx, row.ID); err != nil || len(as) != 1 || as[0].StatusCode != 200 || as[0].Number != 1 {
		t.Fatalf("attempts: %+v %v", as, err)
	}
}

// TestNotifyClaimedKeepsLineOrder: a delivery is recorded claimed only if
// nothing waits in its endpoint's line, as read in the recording
// transaction, whatever this process believes. One attempt at a time: the
// deliverer's first claim takes a delivery, which the receiver holds; its
// probe found the line clear. Then another process records a delivery of
// cus_b's, and this one another: there is room for it, but the line holds
// the first, due, so it is recorded unleased and follows it.
func TestNotifyClaimedKeepsLineOrder(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	cfg := fastConfig(t)
	cfg.MaxConcurrency, cfg.MaxPerEndpoint = 1, 1
	cfg.PollInterval = time.Hour // no claim but the first and those the deliverer pokes
	s, other, g, rc, ep, x := startGated(t, db, cfg)
	if id := g.wait(t); id != x.ID {
		t.Fatalf("first request for %s, want %s", id, x.ID)
	}
	s.mu.Lock()
	clear := !s.backlogged[ep.ID]
	s.mu.Unlock()
	if !clear {
		t.Fatal("endpoint backlogged after a probe that found one delivery and took it")
	}
	b1, b2 := customerEvent("cus_b"), customerEvent("cus_b")
	if err := other.Notify(ctx, []settleflow.Event{b1}); err != nil {
		t.Fatal(err)
	}
	if err := s.Notify(ctx, []settleflow.Event{b2}); err != nil {
		t.Fatal(err)
	}
	if row := deliveryOf(t, s, b2.ID); row.LeaseOwner != "" {
		t.Fatalf("delivery recorded claimed (lease %q) ahead of its lane's delivery waiting in line", row.LeaseOwner)
	}
	s.mu.Lock()
	clear = !s.backlogged[ep.ID]
	s.mu.Unlock()
	if clear {
		t.Fatal("endpoint not marked backlogged after a delivery recorded unleased")
	}
	close(g.open)
	want := []string{x.ID, b1.ID, b2.ID}
	waitFor(t, 10*time.Second, "every delivery", func() bool { return rc.count() >= len(want) })
	if got := g.arrivals(); !slices.Equal(got, want) {
		t.Fatalf("arrivals %v, want %v", got, want)
	}
}

// TestNotifyBackloggedEndpoint: an endpoint marked backlogged gets its new
// deliveries unleased, though there is room; the claim that then finds them
// all (fewer than it has room for) clears the mark, and the next delivery is
// recorded claimed.
func TestNotifyBackloggedEndpoint(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	cfg := fastConfig(t)
	cfg.PollInterval = time.Hour
	s, _, g, rc, ep, _ := startGated(t, db, cfg)
	g.wait(t) // x in flight: the first claim is over
	// recordedClaimed: leased and not updated since it was recorded (a
	// claim sets updated_at; the receiver holds every attempt).
	recordedClaimed := func(ev settleflow.Event) bool {
		row := deliveryOf(t, s, ev.ID)
		return row.LeaseOwner == s.cfg.Owner && row.UpdatedAt == row.CreatedAt
	}
	s.mu.Lock()
	s.backlogged[ep.ID] = true
	s.mu.Unlock()
	a1 := customerEvent("cus_a")
	if err := s.Notify(ctx, []settleflow.Event{a1}); err != nil {
		t.Fatal(err)
	}
	if recordedClaimed(a1) {
		t.Fatal("delivery to a backlogged endpoint recorded claimed")
	}
	if id := g.wait(t); id != a1.ID { // claimed, as Notify poked the deliverer
		t.Fatalf("request for %s, want %s", id, a1.ID)
	}
	s.mu.Lock()
	backlogged := s.backlogged[ep.ID]
	s.mu.Unlock()
	if backlogged {
		t.Fatal("endpoint still backlogged after a claim that took all it found")
	}
	a2 := customerEvent("cus_a")
	if err := s.Notify(ctx, []settleflow.Event{a2}); err != nil {
		t.Fatal(err)
	}
	if !recordedClaimed(a2) {
		t.Fatal("delivery to a clear endpoint with room not recorded claimed")
	}
	close(g.open)
	waitFor(t, 10*time.Second, "every delivery", func() bool { return rc.count() >= 3 })
}

// TestNotifyBacklogRecordsUnleased: one attempt at a time, the receiver
// holding the first: a Notify fills the endpoint's room (the attempt in
// flight and one queued, recorded claimed) and records the rest unleased,
// which marks the endpoint backlogged, so a later customer's deliveries are
// recorded unleased and take their place in line; each lane arrives in the
// order recorded, the later customer's among the first.
func TestNotifyBacklogRecordsUnleased(t *testing.T) {
	ctx := context.Background()
	s := newSerialService(t)
	g := newGate()
	rc := newReceiver(t, g.respond)
	createEndpoint(t, s, settleflow.Test, rc.URL)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(context.Background()) })
	a := notifyCustomer(t, s, "cus_a", 5)
	if id := g.wait(t); id != a[0] {
		t.Fatalf("first request for %s, want %s", id, a[0])
	}
	b := notifyCustomer(t, s, "cus_b", 2)
	var rows []deliveryRow
	if err := s.db.NewSelect().Model(&rows).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	var claimedIDs []string
	for _, r := range rows {
		if r.LeaseOwner != "" {
			claimedIDs = append(claimedIDs, r.EventID)
		}
	}
	slices.Sort(claimedIDs)
	if want := []string{a[0], a[1]}; !slices.Equal(claimedIDs, want) {
		t.Fatalf("deliveries leased %v, want the first two recorded, %v (room for 2)", claimedIDs, want)
	}
	close(g.open)
	waitFor(t, 10*time.Second, "every delivery", func() bool { return rc.count() >= len(a)+len(b) })
	got := g.arrivals()
	var gotA, gotB []string
	for _, id := range got {
		switch {
		case slices.Contains(a, id):
			gotA = append(gotA, id)
		case slices.Contains(b, id):
			gotB = append(gotB, id)
		}
	}
	if !slices.Equal(gotA, a) || !slices.Equal(gotB, b) || len(got) != len(a)+len(b) {
		t.Fatalf("arrivals %v; want cus_a's %v and cus_b's %v each once, in order", got, a, b)
	}
	// cus_b's first is one past the head of the line (cus_a's first, still
	// pending while in flight): right after cus_a's first two.
	if i := slices.Index(got, b[0]); i > 2 {
		t.Errorf("cus_b's first delivery arrived %d-th, want within the first 3", i+1)
	}
}

// TestStopReleasesPreclaimed: a delivery recorded claimed and queued behind
// the attempt in flight is given back at Stop, like a claimed one.
func TestStopReleasesPreclaimed(t *testing.T) {
	ctx := context.Background()
	s := newSerialService(t)
	g := newGate()
	rc := newReceiver(t, g.respond)
	createEndpoint(t, s, settleflow.Test, rc.URL)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	evs := []settleflow.Event{testEvent(false), testEvent(false)}
	if err := s.Notify(ctx, evs); err != nil {
		t.Fatal(err)
	}
	g.wait(t)
	if !(deliveryOf(t, s, evs[0].ID).LeaseOwner == s.cfg.Owner && deliveryOf(t, s, evs[1].ID).LeaseOwner == s.cfg.Owner) {
		t.Fatal("deliveries not recorded claimed (one in flight, one queued)")
	}
	stopped := make(chan error)
	go func() { stopped <- s.Stop(ctx) }()
	time.Sleep(50 * time.Millisecond)
	close(g.open)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if rc.count() != 1 {
		t.Fatalf("%d requests; Stop started the queued delivery", rc.count())
	}
	row := deliveryOf(t, s, evs[1].ID)
	if row.LeaseOwner != "" || row.Status != string(DeliveryPending) || storage.FromMicros(row.NextAttemptAt).After(time.Now()) {
		t.Fatalf("queued delivery after Stop: lease %q, status %s, due %v; want released, pending, due now",
			row.LeaseOwner, row.Status, storage.FromMicros(row.NextAttemptAt))
	}
}

// TestPreclaimedOutlivesItsProcess: a delivery recorded claimed by a process
// that dies before sending it (here: queued behind an attempt that never
// ends, then the process's memory gone) is claimed in its place by another
// process once the lease has run out, and delivered.
func TestPreclaimedOutlivesItsProcess(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	cfg := fastConfig(t)
	cfg.MaxConcurrency, cfg.MaxPerEndpoint = 1, 1
	a, err := New(ctx, db, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	hang := true
	got := map[string]int{}
	stuck := make(chan struct{})
	released := make(chan struct{})
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) {
		var ev settleflow.Event
		json.NewDecoder(r.Body).Decode(&ev)
		mu.Lock()
		got[ev.ID]++
		h := hang
		mu.Unlock()
		if h {
			stuck <- struct{}{}
			select {
			case <-released:
			case <-r.Context().Done():
			}
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	createEndpoint(t, a, settleflow.Test, rc.URL)
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	first, d := testEvent(false), testEvent(false)
	if err := a.Notify(ctx, []settleflow.Event{first}); err != nil {
		t.Fatal(err)
	}
	<-stuck // first is in flight and hangs
	if err := a.Notify(ctx, []settleflow.Event{d}); err != nil {
		t.Fatal(err)
	}
	row := deliveryOf(t, a, d.ID)
	if row.LeaseOwner != a.cfg.Owner || row.FairKey != 2 {
		t.Fatalf("second delivery: lease %q, key %d; want recorded claimed by %q, key 2", row.LeaseOwner, row.FairKey, a.cfg.Owner)
	}
	// The process dies: what it queued is gone with it, unsent.
	a.mu.Lock()
	a.queue = nil
	a.mu.Unlock()
	mu.Lock()
	hang = false
	mu.Unlock()

	// Another process, once the leases have run out.
	clock := &testClock{}
	clock.Advance(a.cfg.Lease + time.Second)
	cfgB := fastConfig(t)
	cfgB.Clock = clock
	b := newService(t, db, cfgB)
	waitFor(t, 10*time.Second, "the second delivery, by the other process", func() bool {
		dl, err := b.GetDelivery(ctx, row.ID)
		return err == nil && dl.Status == DeliverySucceeded
	})
	mu.Lock()
	n := got[d.ID]
	mu.Unlock()
	if n != 1 {
		t.Fatalf("the second delivery was sent %d times, want once (by the other process)", n)
	}
	if as, err := b.ListAttempts(ctx, row.ID); err != nil || len(as) != 1 || as[0].StatusCode != 200 {
		t.Fatalf("its attempts: %+v %v", as, err)
	}
	close(released) // the dead process's last attempt ends; it was taken over
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := a.Stop(sctx); err != nil {
		t.Fatal(err)
	}
}

// startGated starts a deliverer with cfg on db beside another process's
// Service (not delivering) and a receiver that holds every request at its
// gate; the other process has recorded one delivery of cus_x's (x) for the
// endpoint before the deliverer starts, so the deliverer's first claim takes
// it and the gate holds it.
func startGated(t *testing.T, db *storage.DB, cfg Config) (s, other *Service, g *gate, rc *receiver, ep *Endpoint, x settleflow.Event) {
	t.Helper()
	ctx := context.Background()
	s, err := New(ctx, db, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if other, err = New(ctx, db, fastConfig(t)); err != nil {
		t.Fatal(err)
	}
	g = newGate()
	rc = newReceiver(t, g.respond)
	ep, _ = createEndpoint(t, s, settleflow.Test, rc.URL)
	x = customerEvent("cus_x")
	if err := other.Notify(ctx, []settleflow.Event{x}); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(context.Background()) })
	return s, other, g, rc, ep, x
}

// TestNotifyBurstRecordsClaimed: a burst of events for one endpoint whose
// receiver answers at once, handed over in one Notify, is recorded claimed
// beyond the endpoint's concurrency (its receiver has answered fast, so
// its queue goes out well within the lease) and delivered with one insert
// and one update of webhook_deliveries each: no claim.
func TestNotifyBurstRecordsClaimed(t *testing.T) {
	ctx := context.Background()
	db, c := openCountedDB(t)
	cfg := fastConfig(t)
	cfg.PollInterval = time.Hour // no claim but the first and those the deliverer pokes
	s := newService(t, db, cfg)
	var mu sync.Mutex
	var order []string
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) {
		var ev settleflow.Event
		if err := json.NewDecoder(r.Body).Decode(&ev); err == nil {
			mu.Lock()
			order = append(order, ev.ID)
			mu.Unlock()
		}
		w.WriteHeader(http.StatusOK)
	})
	ep, _ := createEndpoint(t, s, settleflow.Test, rc.URL)
	succeeded := func() int {
		t.Helper()
		n, err := s.db.NewSelect().Model((*deliveryRow)(nil)).Where("status = ?", string(DeliverySucceeded)).Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return int(n)
	}
	// The receiver answers once: from then on its latency is known.
	if err := s.Notify(ctx, []settleflow.Event{customerEvent("cus_warm")}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the first delivery recorded", func() bool { return succeeded() == 1 })

	const customers, n = 4, 24
	limit, _ := s.EndpointConcurrency(ep.ID)
	if 2*limit >= n {
		t.Fatalf("endpoint limit %d: the burst would fit its room, want a burst beyond it", limit)
	}
	evs := make([]settleflow.Event, n)
	for i := range evs {
		evs[i] = customerEvent("cus_" + string(rune('a'+i%customers)))
	}
	before := c.Snapshot()
	if err := s.Notify(ctx, evs); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the burst recorded as delivered", func() bool { return succeeded() == 1+n })
	got := c.Snapshot().Sub(before)
	if ins := got.ByStatement["INSERT webhook_deliveries"]; ins > int64(n) {
		t.Errorf("%d rows inserted in webhook_deliveries for %d deliveries, want at most %d:\n%s", ins, n, n, got)
	}
	if upd := got.ByStatement["UPDATE webhook_deliveries"]; upd > int64(n) {
		t.Errorf("%d rows updated in webhook_deliveries for %d deliveries, want at most %d (their outcomes; no claim):\n%s",
			upd, n, n, got)
	}
	mu.Lock()
	arrived := slices.Clone(order[1:])
	mu.Unlock()
	slices.Sort(arrived)
	var all []string
	for _, ev := range evs {
		all = append(all, ev.ID)
	}
	slices.Sort(all)
	if !slices.Equal(arrived, all) {
		t.Fatalf("requests for %v, want one for each of %v", arrived, all)
	}
}

// TestQueuedPastLeaseReleased: deliveries recorded claimed and queued
// behind an attempt that takes so long that their lease could end during
// their own attempt are not sent under it: they are released to their
// place in line, claimed again under a new lease, and delivered once each,
// in the order recorded.
func TestQueuedPastLeaseReleased(t *testing.T) {
	ctx := context.Background()
	clock := &testClock{}
	cfg := fastConfig(t)
	cfg.Clock = clock
	cfg.MaxPerEndpoint = 1
	cfg.PollInterval = time.Hour // no claim but the first and those the deliverer pokes
	s := newService(t, openDB(t), cfg)
	type arrival struct {
		event string
		lease time.Time // of its delivery when its request arrived
	}
	var mu sync.Mutex
	var arrivals []arrival
	var hold chan struct{}
	arrivedCh := make(chan struct{}, 100)
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) {
		var ev settleflow.Event
		if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
			return
		}
		var row deliveryRow
		if err := s.db.NewSelect().Model(&row).Where("event_id = ?", ev.ID).Scan(context.Background()); err != nil {
			return
		}
		mu.Lock()
		arrivals = append(arrivals, arrival{ev.ID, storage.FromMicros(row.NextAttemptAt)})
		h := hold
		mu.Unlock()
		arrivedCh <- struct{}{}
		if h != nil {
			select {
			case <-h:
			case <-r.Context().Done():
				return
			}
		}
		w.WriteHeader(http.StatusOK)
	})
	createEndpoint(t, s, settleflow.Test, rc.URL)
	if err := s.Notify(ctx, []settleflow.Event{customerEvent("cus_warm")}); err != nil {
		t.Fatal(err)
	}
	<-arrivedCh
	waitFor(t, 5*time.Second, "the first delivery recorded", func() bool {
		d, err := s.ListDeliveries(ctx, DeliveryQuery{Status: DeliverySucceeded})
		return err == nil && len(d) == 1
	})

	mu.Lock()
	hold = make(chan struct{})
	release := hold
	mu.Unlock()
	a := make([]settleflow.Event, 5)
	for i := range a {
		a[i] = customerEvent("cus_a")
	}
	if err := s.Notify(ctx, a); err != nil {
		t.Fatal(err)
	}
	for _, ev := range a {
		if row := deliveryOf(t, s, ev.ID); row.LeaseOwner != s.cfg.Owner || row.UpdatedAt != row.CreatedAt {
			t.Fatalf("delivery %s: lease %q, updated %d (recorded %d); want all recorded claimed", ev.ID,
				row.LeaseOwner, row.UpdatedAt, row.CreatedAt)
		}
	}
	select {
	case <-arrivedCh: // a[0] in flight, held; the others queued
	case <-time.After(5 * time.Second):
		t.Fatal("no request arrived")
	}
	clock.Advance(s.cfg.Lease - s.cfg.Timeout) // the queued ones' leases end within an attempt
	renewedAfter := clock.Now()
	close(release)
	waitFor(t, 10*time.Second, "every delivery recorded", func() bool {
		d, err := s.ListDeliveries(ctx, DeliveryQuery{Status: DeliverySucceeded})
		return err == nil && len(d) == 1+len(a)
	})
	mu.Lock()
	got := slices.Clone(arrivals[1:])
	mu.Unlock()
	var gotIDs []string
	for _, ar := range got {
		gotIDs = append(gotIDs, ar.event)
	}
	var wantIDs []string
	for _, ev := range a {
		wantIDs = append(wantIDs, ev.ID)
	}
	if !slices.Equal(gotIDs, wantIDs) {
		t.Fatalf("arrivals %v, want each once in the order recorded, %v", gotIDs, wantIDs)
	}
	for _, ar := range got[1:] {
		if !ar.lease.After(renewedAfter.Add(s.cfg.Timeout)) {
			t.Errorf("delivery of %s sent under a lease ending %v, less than an attempt after %v",
				ar.event, ar.lease, renewedAfter)
		}
	}
}
