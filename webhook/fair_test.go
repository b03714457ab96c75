package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/storage"
)

// customerEvent is an event of customer's: a customer.funded event, a kind
// that names its customer.
func customerEvent(customer string) settleflow.Event {
	ev := testEvent(false)
	ev.Type = settleflow.EventCustomerFunded
	ev.Data = settleflow.EventData{CustomerID: customer}
	return ev
}

// notifyCustomer records n events of customer's, in batches of 100 as the
// engine hands them over, and returns their ids in the order recorded.
func notifyCustomer(t testing.TB, s *Service, customer string, n int) []string {
	t.Helper()
	var out []string
	for start := 0; start < n; start += 100 {
		evs := make([]settleflow.Event, min(100, n-start))
		for i := range evs {
			evs[i] = customerEvent(customer)
			out = append(out, evs[i].ID)
		}
		if err := s.Notify(context.Background(), evs); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// eventIDs returns the event ids of cs, in order.
func eventIDs(cs []claimed) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.row.EventID
	}
	return out
}

// TestFairClaim queues 2,000 deliveries of one customer, then one of another
// customer and one of an event that names none, and claims batches as the
// deliverer does, recording each claimed delivery as a success (real
// statements, no receiver, no timing): the newcomers are in the first
// batch, a customer arriving later is in the next batch after it arrives, a
// retry waiting for its delay is passed over and then claimed first, and
// every customer's deliveries are claimed in the order they were recorded.
// It also checks that the claim's probe and Notify's key read and line check
// use the fair queue's indexes.
func TestFairClaim(t *testing.T) {
	ctx := context.Background()
	clock := &testClock{}
	cfg := fastConfig(t)
	cfg.Clock = clock
	cfg.Retry = RetryPolicy{Schedule: []time.Duration{0, time.Hour}}
	db := openDB(t)
	s, err := New(ctx, db, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ep, _ := createEndpoint(t, s, settleflow.Test, "http://127.0.0.1:9/hook") // never sent to
	const n, batch = 2000, 8

	a := notifyCustomer(t, s, "cus_a", n)
	b := notifyCustomer(t, s, "cus_b", 1)
	none := testEvent(false) // a workflow event: it names no customer
	if err := s.Notify(ctx, []settleflow.Event{none}); err != nil {
		t.Fatal(err)
	}
	checkPlans(t, db, ep.ID)

	claim := func() []claimed {
		t.Helper()
		cs, err := s.claim(ctx, s.now(), batch, func(string) int { return batch })
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	deliver := func(cs []claimed, status int) {
		t.Helper()
		rs := make([]*result, len(cs))
		for i, c := range cs {
			rs[i] = &result{c: c, started: s.now(), o: outcome{status: status}}
			if status != http.StatusOK {
				rs[i].o.err = "HTTP 500"
			}
		}
		if err := s.record(rs...); err != nil {
			t.Fatal(err)
		}
	}

	// A's places are 1…n; B's first and the customerless event's are one
	// past the head (2): they follow A's second delivery, ids breaking the
	// tie in the order recorded.
	first := claim()
	if want := []string{a[0], a[1], b[0], none.ID, a[2], a[3], a[4], a[5]}; !slices.Equal(eventIDs(first), want) {
		t.Fatalf("first claim %v, want %v", eventIDs(first), want)
	}
	deliver(first, http.StatusOK)

	claimedOrder := map[string][]string{} // lane → event ids, first claims
	seen := map[string]int{}              // delivery id → claims
	note := func(cs []claimed) {
		for _, c := range cs {
			if seen[c.row.ID]++; seen[c.row.ID] == 1 {
				claimedOrder[c.row.Lane] = append(claimedOrder[c.row.Lane], c.row.EventID)
			}
		}
	}
	note(first)
	var c []string
	var retried claimed
	for round := 1; ; round++ {
		cs := claim()
		if len(cs) == 0 {
			break
		}
		note(cs)
		switch round {
		case 100:
			// A customer arriving while A still has most of its line
			// queued is served in the next batch, right after the head.
			deliver(cs, http.StatusOK)
			c = notifyCustomer(t, s, "cus_c", 2)
			next := claim()
			note(next)
			if got := eventIDs(next); !slices.Contains(got[:3], c[0]) || !slices.Contains(got, c[1]) {
				t.Fatalf("claim after cus_c's events %v: want %s among the first 3 and %s in it", got, c[0], c[1])
			}
			deliver(next, http.StatusOK)
			continue
		case 150:
			// A failed attempt waits out its retry delay: passed over
			// meanwhile, then claimed first, its place kept.
			retried = cs[0]
			deliver(cs[:1], http.StatusInternalServerError)
			deliver(cs[1:], http.StatusOK)
			next := claim()
			note(next)
			if slices.Contains(eventIDs(next), retried.row.EventID) {
				t.Fatalf("delivery %s claimed again before its retry delay", retried.row.ID)
			}
			deliver(next, http.StatusOK)
			clock.Advance(2 * time.Hour)
			again := claim()
			note(again)
			if again[0].row.ID != retried.row.ID {
				t.Fatalf("first claimed once due: %s, want the retried %s", again[0].row.ID, retried.row.ID)
			}
			deliver(again, http.StatusOK)
			continue
		}
		deliver(cs, http.StatusOK)
	}

	want := map[string][]string{"cus_a": a, "cus_b": b, "cus_c": c, "": {none.ID}}
	for lane, ids := range want {
		if !slices.Equal(claimedOrder[lane], ids) {
			t.Errorf("lane %q: %d deliveries claimed, in order %v…; want %d in the order recorded", lane,
				len(claimedOrder[lane]), claimedOrder[lane][:min(5, len(claimedOrder[lane]))], len(ids))
		}
	}
	for id, k := range seen {
		if k != 1 && id != retried.row.ID || id == retried.row.ID && k != 2 {
			t.Errorf("delivery %s claimed %d times", id, k)
		}
	}
	total := n + 1 + 1 + 2
	ds, err := s.ListDeliveries(ctx, DeliveryQuery{Status: DeliverySucceeded, Limit: total + 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != total || len(ds) != total {
		t.Fatalf("%d deliveries claimed, %d succeeded, want %d", len(seen), len(ds), total)
	}

	// With nothing pending the line does not start over: a customer served
	// long ago and a new one both follow the last key given (A's n-th).
	later := []settleflow.Event{customerEvent("cus_b"), customerEvent("cus_d")}
	if err := s.Notify(ctx, later); err != nil {
		t.Fatal(err)
	}
	cs := claim()
	if len(cs) != len(later) {
		t.Fatalf("claimed %d deliveries, want %d", len(cs), len(later))
	}
	for _, c := range cs {
		if c.row.FairKey != n+1 {
			t.Errorf("delivery of lane %q recorded after the queue emptied: key %d, want %d", c.row.Lane, c.row.FairKey, n+1)
		}
	}
}

// checkPlans checks that the claim's probe reads webhook_deliveries_fair and
// webhook_deliveries_retry in order (no sort), that Notify's key read probes
// webhook_deliveries_fair and webhook_lanes' key and its line check the two
// indexes of pending deliveries, and (SQLite) that the
// backlog reads the two indexes of pending deliveries, on the database at
// hand: EXPLAIN QUERY PLAN on SQLite, EXPLAIN on Postgres (after ANALYZE,
// with the queue loaded).
func checkPlans(t *testing.T, db *storage.DB, endpointID string) {
	t.Helper()
	ctx := context.Background()
	explain := "EXPLAIN QUERY PLAN "
	if db.Postgres() {
		if _, err := db.Bun().ExecContext(ctx, "ANALYZE webhook_deliveries"); err != nil {
			t.Fatal(err)
		}
		explain = "EXPLAIN "
	}
	plan := func(query string, args ...any) string {
		t.Helper()
		rows, err := db.Bun().QueryContext(ctx, explain+query, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		var lines []string
		for rows.Next() {
			vals := make([]any, len(cols))
			for i := range vals {
				vals[i] = new(any)
			}
			if err := rows.Scan(vals...); err != nil {
				t.Fatal(err)
			}
			line, _ := json.Marshal(*vals[len(vals)-1].(*any)) // the detail / plan line
			lines = append(lines, string(line))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return strings.Join(lines, "\n")
	}
	now := storage.Micros(time.Now())
	p := plan(probeSQL(0), endpointID, now, 8, endpointID, now, 8)
	if !strings.Contains(p, "webhook_deliveries_fair") || !strings.Contains(p, "webhook_deliveries_retry") ||
		strings.Contains(p, "TEMP B-TREE") || strings.Contains(p, "Sort") {
		t.Errorf("claim probe does not read webhook_deliveries_fair and webhook_deliveries_retry in order:\n%s", p)
	}
	t.Logf("claim probe:\n%s", p)
	p = plan(fairKeysSQL(2), endpointID, "cus_a", endpointID, "")
	if !strings.Contains(p, "webhook_deliveries_fair") || !strings.Contains(p, "webhook_lanes") ||
		strings.Contains(p, "SCAN h") || strings.Contains(p, "Seq Scan") {
		t.Errorf("fair key read does not probe webhook_deliveries_fair and webhook_lanes' key:\n%s", p)
	}
	t.Logf("fair key read:\n%s", p)
	p = plan(busyLinesSQL(1), endpointID, now, now)
	if !strings.Contains(p, "webhook_deliveries_fair") || !strings.Contains(p, "webhook_deliveries_retry") ||
		strings.Contains(p, "SCAN f") || strings.Contains(p, "SCAN r") || strings.Contains(p, "Seq Scan") {
		t.Errorf("Notify's line check does not probe webhook_deliveries_fair and webhook_deliveries_retry:\n%s", p)
	}
	t.Logf("line check:\n%s", p)
	if !db.Postgres() { // Postgres may well read the whole table for a count of (here) all of it
		p = plan(backlogSQL, now, now)
		if !strings.Contains(p, "webhook_deliveries_fair") || !strings.Contains(p, "webhook_deliveries_retry") {
			t.Errorf("backlog does not read the indexes of pending deliveries:\n%s", p)
		}
		t.Logf("backlog:\n%s", p)
	}
}

// TestFairDelivery queues 2,000 deliveries of one customer's, then three of
// another's, and lets the deliverer send them one at a time to a receiver on
// loopback that records what arrives (no timing): the second customer's
// deliveries arrive among the first few, and each customer's arrive in the
// order they were recorded, each once.
func TestFairDelivery(t *testing.T) {
	ctx := context.Background()
	s := newSerialService(t)
	rc := newReceiver(t, nil)
	createEndpoint(t, s, settleflow.Test, rc.URL)
	const n = 2000
	a := notifyCustomer(t, s, "cus_a", n)
	b := notifyCustomer(t, s, "cus_b", 3)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(context.Background()) })
	waitFor(t, 2*time.Minute, "every delivery", func() bool { return rc.count() >= n+3 })

	got := map[string][]string{} // customer → event ids, as received
	pos := map[string]int{}      // event id → place of arrival, from 1
	for i, r := range rc.requests() {
		var ev settleflow.Event
		if err := json.Unmarshal(r.Body, &ev); err != nil {
			t.Fatal(err)
		}
		got[ev.Data.CustomerID] = append(got[ev.Data.CustomerID], ev.ID)
		pos[ev.ID] = i + 1
	}
	// A's places are 1…n, B's 2, 3 and 4: B's arrive 3rd, 5th and 7th.
	if pos[b[0]] > 3 || pos[b[2]] > 7 {
		t.Errorf("cus_b's deliveries arrived at %d, %d and %d of %d; want within the first 3, 5 and 7",
			pos[b[0]], pos[b[1]], pos[b[2]], rc.count())
	}
	if !slices.Equal(got["cus_a"], a) || !slices.Equal(got["cus_b"], b) || len(got) != 2 {
		t.Errorf("arrivals: %d of cus_a's (want %d), %d of cus_b's (want 3), %d customers; not each once in the order recorded",
			len(got["cus_a"]), n, len(got["cus_b"]), len(got))
	}
}

// TestFairQueueMigration upgrades a database whose deliveries were queued
// before the fair queue: those still pending keep the order they were
// claimed in (due time, then id) and go before a delivery recorded after
// the upgrade; finished ones are left alone.
func TestFairQueueMigration(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	migrateUntil(t, db, "20261123000001_micros")
	secret, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	at := storage.Micros(now)
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Bun().ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec(`INSERT INTO webhook_endpoints (id, environment, url, created_at) VALUES ('we_old', 'test', 'http://127.0.0.1:9/hook', ?)`, at)
	exec(`INSERT INTO webhook_secrets (endpoint_id, secret, created_at) VALUES ('we_old', ?, ?)`, secret, at)
	// Pending deliveries due at different times, not in id order; one
	// finished.
	old := []struct {
		id, status string
		due        time.Duration
	}{
		{"whd_1", "pending", -time.Minute},
		{"whd_2", "pending", -2 * time.Minute},
		{"whd_3", "succeeded", -3 * time.Minute},
		{"whd_4", "pending", -time.Minute},
		{"whd_5", "pending", -30 * time.Second},
	}
	for _, d := range old {
		exec(`INSERT INTO webhook_deliveries (id, event_id, event_type, endpoint_id, environment, payload, status,
			next_attempt_at, created_at, updated_at) VALUES (?, ?, 'customer.funded', 'we_old', 'test', '{}', ?, ?, ?, ?)`,
			d.id, "evt_"+d.id, d.status, storage.Micros(now.Add(d.due)), at, at)
	}

	s, err := New(ctx, db, fastConfig(t)) // migrates the rest of the way
	if err != nil {
		t.Fatal(err)
	}
	var keys []struct {
		ID      string `bun:"id"`
		FairKey int64  `bun:"fair_key"`
	}
	if err := db.Bun().NewSelect().Model((*deliveryRow)(nil)).Column("id", "fair_key").Order("id").Scan(ctx, &keys); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, k := range keys {
		got[k.ID] = k.FairKey
	}
	if want := map[string]int64{"whd_2": -4, "whd_1": -3, "whd_4": -2, "whd_5": -1, "whd_3": 0}; !maps.Equal(got, want) {
		t.Fatalf("keys after the upgrade %v, want %v", got, want)
	}
	ev := customerEvent("cus_new")
	if err := s.Notify(ctx, []settleflow.Event{ev}); err != nil {
		t.Fatal(err)
	}
	cs, err := s.claim(ctx, s.now(), 10, func(string) int { return 10 })
	if err != nil {
		t.Fatal(err)
	}
	if got, want := eventIDs(cs), []string{"evt_whd_2", "evt_whd_1", "evt_whd_4", "evt_whd_5", ev.ID}; !slices.Equal(got, want) {
		t.Fatalf("claimed %v, want %v", got, want)
	}
	if cs[4].row.FairKey != 1 || cs[4].row.Lane != "cus_new" {
		t.Fatalf("new delivery: lane %q, key %d; want cus_new, 1", cs[4].row.Lane, cs[4].row.FairKey)
	}
}

// TestNotifyConcurrent records batches of the same customers' events from
// several goroutines at once (on Postgres, transactions that upsert the same
// lanes at once): none fails, nothing is lost, and the lanes hold the last
// keys given.
func TestNotifyConcurrent(t *testing.T) {
	ctx := context.Background()
	s, err := New(ctx, openDB(t), fastConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		createEndpoint(t, s, settleflow.Test, "http://127.0.0.1:9/hook")
	}
	const workers, calls, customers = 4, 10, 8
	var wg sync.WaitGroup
	errs := make(chan error, workers*calls)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range calls {
				evs := make([]settleflow.Event, customers)
				for i := range evs { // each worker in its own order of customers
					evs[i] = customerEvent(fmt.Sprintf("cus_%d", (i+w*3)%customers))
				}
				errs <- s.Notify(ctx, evs)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var rows []deliveryRow
	if err := s.db.NewSelect().Model(&rows).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if want := workers * calls * customers * 2; len(rows) != want {
		t.Fatalf("%d deliveries recorded, want %d", len(rows), want)
	}
	maxKey := map[line]int64{}
	for _, r := range rows {
		l := line{r.EndpointID, r.Lane}
		maxKey[l] = max(maxKey[l], r.FairKey)
	}
	var lanes []laneRow
	if err := s.db.NewSelect().Model(&lanes).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if len(lanes) != len(maxKey) {
		t.Fatalf("%d lanes recorded, want %d", len(lanes), len(maxKey))
	}
	for _, l := range lanes {
		if k := maxKey[line{l.EndpointID, l.Lane}]; l.LastKey != k {
			t.Errorf("lane %q on %s: last key %d, want the greatest given, %d", l.Lane, l.EndpointID, l.LastKey, k)
		}
	}
}

// TestWorkflowEventsQueueByCustomer: a workflow.* event's deliveries take the
// lane of the workflow's customer, read back from its JSON as the outbox
// gives it, so a customer's burst of workflows does not hold another's
// webhooks back.
func TestWorkflowEventsQueueByCustomer(t *testing.T) {
	ev := settleflow.Event{ID: "evt_1", Object: "event", Type: settleflow.EventWorkflowCompleted,
		Data: settleflow.EventData{WorkflowID: "wf_1", CustomerID: "cus_a", Status: settleflow.Settled}}
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	var back settleflow.Event
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if got := eventLane(&back); got != "cus_a" {
		t.Fatalf("lane %q, want cus_a (event %s)", got, b)
	}
	ev.Data.CustomerID = "" // recorded before events carried the customer
	if got := eventLane(&ev); got != "" {
		t.Fatalf("lane %q of an event naming no customer, want the shared lane", got)
	}
}

// migrateUntil applies the webhook migrations to db up to and including
// version, as a database last upgraded by a build of then.
func migrateUntil(t *testing.T, db *storage.DB, version string) {
	t.Helper()
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(context.Background(), storage.Migrations{Table: migrationsTable, Files: sub, Until: version}); err != nil {
		t.Fatal(err)
	}
}
