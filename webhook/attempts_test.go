package webhook

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/storage"
)

// countAttemptRows returns the rows of webhook_attempts.
func countAttemptRows(t testing.TB, s *Service) int {
	t.Helper()
	n, err := s.db.NewSelect().Model((*attemptRow)(nil)).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

// wantAttempt is an attempt as ListAttempts must return it.
func wantAttempt(deliveryID string, n int, started time.Time, o outcome) Attempt {
	return Attempt{DeliveryID: deliveryID, Number: n, StartedAt: storage.FromMicros(storage.Micros(started)),
		Latency: o.latency, StatusCode: o.status, Error: o.err, ResponseBody: o.body}
}

func checkAttempts(t testing.TB, s *Service, deliveryID string, want ...Attempt) {
	t.Helper()
	as, err := s.ListAttempts(context.Background(), deliveryID)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, len(as))
	for i, a := range as {
		got[i] = fmt.Sprintf("%+v", *a)
	}
	exp := make([]string, len(want))
	for i, a := range want {
		exp[i] = fmt.Sprintf("%+v", a)
	}
	if strings.Join(got, "\n") != strings.Join(exp, "\n") {
		t.Fatalf("attempts of %s:\n%s\nwant:\n%s", deliveryID, strings.Join(got, "\n"), strings.Join(exp, "\n"))
	}
}

// TestAttemptsHeldOnDelivery records attempts as the deliverer does (real
// statements, no receiver): the latest attempt of a delivery held by this
// process is kept on its row, the one before moves to webhook_attempts, an
// attempt on a delivery taken over goes there directly, and ListAttempts
// returns them all in order either way; disabling the endpoint keeps the
// held attempt's error.
func TestAttemptsHeldOnDelivery(t *testing.T) {
	ctx := context.Background()
	clock := &testClock{}
	cfg := fastConfig(t)
	cfg.Clock = clock
	cfg.Retry = RetryPolicy{Schedule: []time.Duration{0, time.Hour, time.Hour}}
	s, err := New(ctx, openDB(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ep, _ := createEndpoint(t, s, settleflow.Test, "http://127.0.0.1:9/hook") // never sent to
	evs := []settleflow.Event{customerEvent("cus_a"), customerEvent("cus_a"), customerEvent("cus_a"), customerEvent("cus_a")}
	if err := s.Notify(ctx, evs); err != nil {
		t.Fatal(err)
	}
	claim := func() map[string]claimed {
		t.Helper()
		cs, err := s.claim(ctx, s.now(), 10, func(string) int { return 10 })
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]claimed{}
		for _, c := range cs {
			out[c.row.EventID] = c
		}
		return out
	}
	record := func(c claimed, started time.Time, o outcome) {
		t.Helper()
		if err := s.record(&result{c: c, started: started, o: o}); err != nil {
			t.Fatal(err)
		}
	}
	cs := claim()
	if len(cs) != len(evs) {
		t.Fatalf("claimed %d deliveries, want %d", len(cs), len(evs))
	}
	d1, d2, d3, d4 := cs[evs[0].ID], cs[evs[1].ID], cs[evs[2].ID], cs[evs[3].ID]

	// A first attempt that succeeds: held on the row, no attempt row.
	t1 := s.now()
	ok1 := outcome{status: 200, body: `{"received": true}`, latency: 3 * time.Millisecond}
	record(d1, t1, ok1)
	checkAttempts(t, s, d1.row.ID, wantAttempt(d1.row.ID, 1, t1, ok1))
	if n := countAttemptRows(t, s); n != 0 {
		t.Fatalf("%d rows in webhook_attempts after a first attempt that succeeded, want 0", n)
	}
	if d, err := s.GetDelivery(ctx, d1.row.ID); err != nil || d.Status != DeliverySucceeded || d.Attempts != 1 ||
		d.LastStatusCode != 200 || d.LastError != "" {
		t.Fatalf("delivery after its first attempt succeeded: %+v %v", d, err)
	}

	// A failure, then a success: the failure moves to webhook_attempts
	// when the success is recorded.
	t2 := s.now()
	fail2 := outcome{status: 500, err: "HTTP 500", body: "boom", latency: 5 * time.Millisecond}
	record(d2, t2, fail2)
	checkAttempts(t, s, d2.row.ID, wantAttempt(d2.row.ID, 1, t2, fail2))
	if n := countAttemptRows(t, s); n != 0 {
		t.Fatalf("%d rows in webhook_attempts after a failed first attempt, want 0 (held on the row)", n)
	}
	if d, err := s.GetDelivery(ctx, d2.row.ID); err != nil || d.Status != DeliveryPending || d.Attempts != 1 ||
		d.LastStatusCode != 500 || d.LastError != "HTTP 500" {
		t.Fatalf("delivery after a failed attempt: %+v %v", d, err)
	}
	// d4's first attempt fails too (it is canceled below).
	t4 := s.now()
	fail4 := outcome{status: 503, err: "HTTP 503", body: "busy", latency: 7 * time.Millisecond}
	record(d4, t4, fail4)
	// d3's lease is taken over before its attempt is recorded: the attempt
	// goes to webhook_attempts, the row is left to its holder.
	if _, err := s.db.NewUpdate().Model((*deliveryRow)(nil)).Set("lease_owner = 'someone_else'").
		Where("id = ?", d3.row.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	t3 := s.now()
	late3 := outcome{status: 200, body: "late", latency: 11 * time.Millisecond}
	record(d3, t3, late3)
	checkAttempts(t, s, d3.row.ID, wantAttempt(d3.row.ID, 1, t3, late3))
	if n := countAttemptRows(t, s); n != 1 {
		t.Fatalf("%d rows in webhook_attempts after an attempt on a delivery taken over, want 1", n)
	}

	clock.Advance(2 * time.Hour)
	again := claim()
	d2 = again[evs[1].ID]
	if d2.row.ID == "" {
		t.Fatalf("the failed delivery was not claimed again: %v", again)
	}
	t2b := s.now()
	ok2 := outcome{status: 201, body: "created", latency: 2 * time.Millisecond}
	record(d2, t2b, ok2)
	checkAttempts(t, s, d2.row.ID, wantAttempt(d2.row.ID, 1, t2, fail2), wantAttempt(d2.row.ID, 2, t2b, ok2))
	if n := countAttemptRows(t, s); n != 2 {
		t.Fatalf("%d rows in webhook_attempts, want 2 (d3's, and d2's first, moved out)", n)
	}
	if d, err := s.GetDelivery(ctx, d2.row.ID); err != nil || d.Status != DeliverySucceeded || d.Attempts != 2 ||
		d.LastStatusCode != 201 || d.LastError != "" {
		t.Fatalf("delivery after its second attempt succeeded: %+v %v", d, err)
	}

	// Disabling the endpoint cancels d4 and says why in its last error;
	// its attempt keeps its own.
	if err := s.DisableEndpoint(ctx, ep.ID); err != nil {
		t.Fatal(err)
	}
	checkAttempts(t, s, d4.row.ID, wantAttempt(d4.row.ID, 1, t4, fail4))
	if d, err := s.GetDelivery(ctx, d4.row.ID); err != nil || d.Status != DeliveryCanceled || d.Attempts != 1 ||
		!strings.HasPrefix(d.LastError, "endpoint disabled") {
		t.Fatalf("delivery canceled: %+v %v", d, err)
	}
	// The earlier ones read the same.
	checkAttempts(t, s, d1.row.ID, wantAttempt(d1.row.ID, 1, t1, ok1))
	checkAttempts(t, s, d3.row.ID, wantAttempt(d3.row.ID, 1, t3, late3))
}

// TestAttemptsTwiceInOneBatch: two results of one delivery in one batch
// (the first recorded after its lease ran out and the delivery was claimed
// again) are both recorded, in order, as if recorded one after the other:
// the first moves the delivery on (a failure: due again, its lease given
// back), so the second finds it no longer held and is history only.
func TestAttemptsTwiceInOneBatch(t *testing.T) {
	ctx := context.Background()
	s, err := New(ctx, openDB(t), fastConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	createEndpoint(t, s, settleflow.Test, "http://127.0.0.1:9/hook")
	if err := s.Notify(ctx, []settleflow.Event{testEvent(false)}); err != nil {
		t.Fatal(err)
	}
	cs, err := s.claim(ctx, s.now(), 1, func(string) int { return 1 })
	if err != nil || len(cs) != 1 {
		t.Fatalf("claim: %d %v", len(cs), err)
	}
	t1, t2 := s.now(), s.now().Add(time.Second)
	o1 := outcome{status: 500, err: "HTTP 500", body: "first", latency: time.Millisecond}
	o2 := outcome{status: 200, body: "second", latency: 2 * time.Millisecond}
	if err := s.record(&result{c: cs[0], started: t1, o: o1}, &result{c: cs[0], started: t2, o: o2}); err != nil {
		t.Fatal(err)
	}
	checkAttempts(t, s, cs[0].row.ID, wantAttempt(cs[0].row.ID, 1, t1, o1), wantAttempt(cs[0].row.ID, 2, t2, o2))
	if d, err := s.GetDelivery(ctx, cs[0].row.ID); err != nil || d.Status != DeliveryPending || d.Attempts != 2 ||
		d.LastStatusCode != 500 {
		t.Fatalf("delivery: %+v %v", d, err)
	}
}

// TestLastAttemptMigration upgrades a database whose attempts all live in
// webhook_attempts: they read as before, the next attempt is held on the
// delivery's row after them, and the down migration moves the held attempt
// back to webhook_attempts.
func TestLastAttemptMigration(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	migrateUntil(t, db, "20261125000001_fair_queue")
	secret, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	at := storage.Micros(now)
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Bun().ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec(`INSERT INTO webhook_endpoints (id, environment, url, created_at) VALUES ('we_old', 'test', 'http://127.0.0.1:9/hook', ?)`, at)
	exec(`INSERT INTO webhook_secrets (endpoint_id, secret, created_at) VALUES ('we_old', ?, ?)`, secret, at)
	// A delivery with two failed attempts, due again; a finished one with
	// one attempt.
	exec(`INSERT INTO webhook_deliveries (id, event_id, event_type, endpoint_id, environment, payload, status, attempts,
		next_attempt_at, last_status_code, last_error, created_at, updated_at, lane, fair_key)
		VALUES ('whd_1', 'evt_1', 'customer.funded', 'we_old', 'test', '{}', 'pending', 2, ?, 502, 'HTTP 502', ?, ?, 'cus_a', 1)`,
		storage.Micros(now.Add(-time.Minute)), at, at)
	exec(`INSERT INTO webhook_deliveries (id, event_id, event_type, endpoint_id, environment, payload, status, attempts,
		next_attempt_at, last_status_code, created_at, updated_at, completed_at, lane, fair_key)
		VALUES ('whd_2', 'evt_2', 'customer.funded', 'we_old', 'test', '{}', 'succeeded', 1, ?, 200, ?, ?, ?, 'cus_a', 0)`,
		at, at, at, at)
	old := []Attempt{
		{DeliveryID: "whd_1", Number: 1, StartedAt: storage.FromMicros(at - 3_000_000), Latency: 4 * time.Millisecond, StatusCode: 500, Error: "HTTP 500", ResponseBody: "down"},
		{DeliveryID: "whd_1", Number: 2, StartedAt: storage.FromMicros(at - 2_000_000), Latency: 5 * time.Millisecond, StatusCode: 502, Error: "HTTP 502", ResponseBody: "bad gateway"},
		{DeliveryID: "whd_2", Number: 1, StartedAt: storage.FromMicros(at - 1_000_000), Latency: 6 * time.Millisecond, StatusCode: 200, ResponseBody: "ok"},
	}
	for _, a := range old {
		exec(`INSERT INTO webhook_attempts (delivery_id, attempt, started_at, latency_us, status_code, error, response_body)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, a.DeliveryID, a.Number, storage.Micros(a.StartedAt), a.Latency.Microseconds(),
			a.StatusCode, a.Error, a.ResponseBody)
	}

	s, err := New(ctx, db, fastConfig(t)) // migrates the rest of the way
	if err != nil {
		t.Fatal(err)
	}
	checkAttempts(t, s, "whd_1", old[0], old[1])
	checkAttempts(t, s, "whd_2", old[2])
	if d, err := s.GetDelivery(ctx, "whd_1"); err != nil || d.Attempts != 2 || d.LastStatusCode != 502 || d.LastError != "HTTP 502" {
		t.Fatalf("delivery recorded before the upgrade: %+v %v", d, err)
	}

	cs, err := s.claim(ctx, s.now(), 10, func(string) int { return 10 })
	if err != nil || len(cs) != 1 || cs[0].row.ID != "whd_1" {
		t.Fatalf("claim: %v %v", eventIDs(cs), err)
	}
	t3 := s.now()
	o3 := outcome{status: 200, body: "at last", latency: 3 * time.Millisecond}
	if err := s.record(&result{c: cs[0], started: t3, o: o3}); err != nil {
		t.Fatal(err)
	}
	third := wantAttempt("whd_1", 3, t3, o3)
	checkAttempts(t, s, "whd_1", old[0], old[1], third)
	if n := countAttemptRows(t, s); n != 3 {
		t.Fatalf("%d rows in webhook_attempts, want the 3 recorded before the upgrade", n)
	}

	// Down: the held attempt goes back to webhook_attempts.
	down, err := fs.ReadFile(migrationFiles, "migrations/20261127000001_last_attempt.tx.down.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range strings.Split(string(down), "--bun:split") {
		exec(q)
	}
	var rows []attemptRow
	if err := db.Bun().NewSelect().Model(&rows).Order("delivery_id", "attempt").Scan(ctx); err != nil {
		t.Fatal(err)
	}
	got := make([]string, len(rows))
	for i := range rows {
		got[i] = fmt.Sprintf("%+v", *rows[i].attempt())
	}
	want := []string{fmt.Sprintf("%+v", old[0]), fmt.Sprintf("%+v", old[1]), fmt.Sprintf("%+v", third), fmt.Sprintf("%+v", old[2])}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("webhook_attempts after the down migration:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
