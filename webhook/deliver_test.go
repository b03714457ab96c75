package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
)

func TestDeliverySignedAndVerified(t *testing.T) {
	ctx := context.Background()
	cfg := fastConfig(t)
	cfg.liveAsTest = true // the live receiver below is on loopback
	s := newService(t, openDB(t), cfg)
	rc := newReceiver(t, nil)
	other := newReceiver(t, nil)
	ep, secret := createEndpoint(t, s, settleflow.Test, rc.URL+"/hooks")
	createEndpoint(t, s, settleflow.Live, other.URL) // another environment

	ev := testEvent(false)
	if err := s.Notify(ctx, []settleflow.Event{ev}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "delivery", func() bool { return rc.count() == 1 })
	got := rc.requests()[0]

	want, _ := json.Marshal(ev)
	if string(got.Body) != string(want) {
		t.Fatalf("body = %s, want %s", got.Body, want)
	}
	if ct := got.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	if id := got.Header.Get("webhook-id"); id != ev.ID {
		t.Errorf("webhook-id = %q, want %q", id, ev.ID)
	}
	sig := got.Header.Get("service-signature")
	ts := got.Header.Get("webhook-timestamp")
	if !strings.HasPrefix(sig, "t="+ts+",v1=") {
		t.Errorf("service-signature %q does not carry webhook-timestamp %s", sig, ts)
	}
	if n, _ := strconv.ParseInt(ts, 10, 64); time.Since(time.Unix(n, 0)).Abs() > time.Minute {
		t.Errorf("webhook-timestamp %s is not now", ts)
	}
	if n := independentServiceMatches(t, sig, got.Body, secret); n != 1 {
		t.Errorf("independent check: %d matching v1 in %q", n, sig)
	}
	if n := independentStandardMatches(t, got.Header, got.Body, secret); n != 1 {
		t.Errorf("independent check: %d matching webhook-signature in %q", n, got.Header.Get("webhook-signature"))
	}
	// And our own verifiers agree.
	parsed, err := ConstructEvent(got.Body, sig, secret)
	if err != nil {
		t.Fatal(err)
	}
	if parsed.ID != ev.ID || parsed.Data.WorkflowID != ev.Data.WorkflowID {
		t.Errorf("ConstructEvent = %+v", parsed)
	}
	if err := VerifyStandard(got.Body, got.Header, secret); err != nil {
		t.Fatal(err)
	}

	// The delivery and its attempt are inspectable.
	waitFor(t, 5*time.Second, "success recorded", func() bool {
		ds, _ := s.ListDeliveries(ctx, DeliveryQuery{EndpointID: ep.ID})
		return len(ds) == 1 && ds[0].Status == DeliverySucceeded
	})
	ds, _ := s.ListDeliveries(ctx, DeliveryQuery{EventID: ev.ID})
	if len(ds) != 1 || ds[0].Attempts != 1 || ds[0].LastStatusCode != 200 || string(ds[0].Payload) != string(want) {
		t.Fatalf("deliveries = %+v", ds)
	}
	as, err := s.ListAttempts(ctx, ds[0].ID)
	if err != nil || len(as) != 1 || as[0].StatusCode != 200 || as[0].Error != "" || as[0].Number != 1 {
		t.Fatalf("attempts = %+v, %v", as, err)
	}
	if !strings.Contains(as[0].ResponseBody, "received") {
		t.Errorf("response excerpt = %q", as[0].ResponseBody)
	}
	time.Sleep(100 * time.Millisecond)
	if other.count() != 0 {
		t.Fatal("a live endpoint received a test event")
	}
}

func TestCustomShortName(t *testing.T) {
	cfg := fastConfig(t)
	cfg.ShortName = "acme"
	s := newService(t, openDB(t), cfg)
	rc := newReceiver(t, nil)
	_, secret := createEndpoint(t, s, settleflow.Test, rc.URL)
	ev := testEvent(false)
	if err := s.Notify(context.Background(), []settleflow.Event{ev}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "delivery", func() bool { return rc.count() == 1 })
	got := rc.requests()[0]
	if got.Header.Get("service-signature") != "" || s.SignatureHeader() != "acme-signature" {
		t.Fatal("short name not applied")
	}
	if _, err := ConstructEvent(got.Body, got.Header.Get("acme-signature"), secret); err != nil {
		t.Fatal(err)
	}
}

// TestRetries: a failed first attempt is retried with the same bytes and
// webhook-id, and every attempt is recorded.
func TestRetries(t *testing.T) {
	cases := []struct {
		name      string
		respond   func(w http.ResponseWriter, r *http.Request)
		wantCode  int
		wantError string
	}{
		{"500", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) }, 500, "HTTP 500"},
		{"timeout", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(3 * time.Second):
			}
		}, 0, "timeout"},
		{"302", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		}, 302, "HTTP 302"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := fastConfig(t)
			cfg.Timeout = 300 * time.Millisecond
			s := newService(t, openDB(t), cfg)
			var redirected atomic.Bool
			rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if r.URL.Path == "/elsewhere" {
					redirected.Store(true)
				}
				if n == 1 {
					tc.respond(w, r)
					return
				}
				w.WriteHeader(http.StatusNoContent)
			})
			_, secret := createEndpoint(t, s, settleflow.Test, rc.URL+"/hook")
			checkRetried(t, s, rc, secret, tc.wantCode, tc.wantError)
			if redirected.Load() {
				t.Fatal("a redirect was followed")
			}
		})
	}
	t.Run("connection refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close() // nothing listens there now
		cfg := fastConfig(t)
		cfg.Retry.Schedule = []time.Duration{0, 300 * time.Millisecond, 300 * time.Millisecond}
		s := newService(t, openDB(t), cfg)
		ep, secret := createEndpoint(t, s, settleflow.Test, "http://"+addr+"/hook")
		if err := s.Notify(context.Background(), []settleflow.Event{testEvent(false)}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 5*time.Second, "a refused attempt", func() bool {
			ds, _ := s.ListDeliveries(context.Background(), DeliveryQuery{EndpointID: ep.ID})
			return len(ds) == 1 && ds[0].Attempts >= 1
		})
		// Now start a receiver on the address that refused.
		rc := newUnstartedReceiver(t, nil)
		ln, err = net.Listen("tcp", addr)
		if err != nil {
			t.Skipf("cannot listen again on %s: %v", addr, err)
		}
		rc.Listener.Close()
		rc.Listener = ln
		rc.Start()
		checkRetried(t, s, rc, secret, 0, "connection refused")
	})
}

// checkRetried notifies one event (unless one is pending already) and waits
// for its delivery to succeed after a first attempt that failed with
// wantCode and wantError.
func checkRetried(t *testing.T, s *Service, rc *receiver, secret string, wantCode int, wantError string) {
	t.Helper()
	ctx := context.Background()
	ds, _ := s.ListDeliveries(ctx, DeliveryQuery{})
	if len(ds) == 0 {
		if err := s.Notify(ctx, []settleflow.Event{testEvent(false)}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 10*time.Second, "success after retry", func() bool {
		ds, _ := s.ListDeliveries(ctx, DeliveryQuery{})
		return len(ds) == 1 && ds[0].Status == DeliverySucceeded
	})
	ds, _ = s.ListDeliveries(ctx, DeliveryQuery{})
	as, err := s.ListAttempts(ctx, ds[0].ID)
	if err != nil || len(as) < 2 {
		t.Fatalf("attempts = %+v, %v", as, err)
	}
	first, last := as[0], as[len(as)-1]
	if first.StatusCode != wantCode || !strings.Contains(first.Error, wantError) {
		t.Errorf("first attempt = %+v, want status %d and error containing %q", first, wantCode, wantError)
	}
	if last.Error != "" || last.StatusCode/100 != 2 {
		t.Errorf("last attempt = %+v", last)
	}
	reqs := rc.requests()
	if len(reqs) == 0 {
		t.Fatal("receiver got nothing")
	}
	for _, r := range reqs {
		if string(r.Body) != string(ds[0].Payload) || r.Header.Get("webhook-id") != ds[0].EventID {
			t.Errorf("retry sent different bytes or id: %s %s", r.Body, r.Header.Get("webhook-id"))
		}
		if independentServiceMatches(t, r.Header.Get("service-signature"), r.Body, secret) != 1 {
			t.Error("retry not signed")
		}
	}
}

func TestScheduleExhaustedFails(t *testing.T) {
	cfg := fastConfig(t)
	cfg.Retry.Schedule = []time.Duration{0, 10 * time.Millisecond, 10 * time.Millisecond}
	s := newService(t, openDB(t), cfg)
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) { w.WriteHeader(503) })
	createEndpoint(t, s, settleflow.Test, rc.URL)
	if err := s.Notify(context.Background(), []settleflow.Event{testEvent(false)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "failure", func() bool {
		ds, _ := s.ListDeliveries(context.Background(), DeliveryQuery{Status: DeliveryFailed})
		return len(ds) == 1
	})
	time.Sleep(100 * time.Millisecond)
	if rc.count() != 3 {
		t.Fatalf("receiver got %d attempts, want 3", rc.count())
	}
	ds, _ := s.ListDeliveries(context.Background(), DeliveryQuery{})
	if ds[0].Attempts != 3 || ds[0].LastStatusCode != 503 || ds[0].CompletedAt == nil {
		t.Fatalf("delivery = %+v", ds[0])
	}
	// A manual retry starts a fresh schedule and keeps the history.
	if err := s.RetryDelivery(context.Background(), ds[0].ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "second failure", func() bool {
		d, _ := s.GetDelivery(context.Background(), ds[0].ID)
		return d.Status == DeliveryFailed && d.Attempts == 6
	})
	as, _ := s.ListAttempts(context.Background(), ds[0].ID)
	if len(as) != 6 {
		t.Fatalf("%d attempts recorded, want 6", len(as))
	}
}

func TestGoneDisablesEndpoint(t *testing.T) {
	ctx := context.Background()
	s := newService(t, openDB(t), fastConfig(t))
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) { w.WriteHeader(http.StatusGone) })
	ep, _ := createEndpoint(t, s, settleflow.Test, rc.URL)
	if err := s.Notify(ctx, []settleflow.Event{testEvent(false)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "endpoint disabled", func() bool {
		e, _ := s.GetEndpoint(ctx, ep.ID)
		return !e.Enabled()
	})
	e, _ := s.GetEndpoint(ctx, ep.ID)
	if !strings.Contains(e.DisabledReason, "410") {
		t.Errorf("reason = %q", e.DisabledReason)
	}
	ds, _ := s.ListDeliveries(ctx, DeliveryQuery{EndpointID: ep.ID})
	if len(ds) != 1 || ds[0].Status != DeliveryFailed || ds[0].Attempts != 1 {
		t.Fatalf("deliveries = %+v", ds)
	}
	// A disabled endpoint gets nothing new.
	if err := s.Notify(ctx, []settleflow.Event{testEvent(false)}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if rc.count() != 1 {
		t.Fatalf("receiver got %d requests, want 1", rc.count())
	}
	if ds, _ := s.ListDeliveries(ctx, DeliveryQuery{EndpointID: ep.ID}); len(ds) != 1 {
		t.Fatalf("%d deliveries for a disabled endpoint", len(ds))
	}
}

func TestRetryAfterRespected(t *testing.T) {
	cfg := fastConfig(t)
	cfg.Retry.Schedule = []time.Duration{0, 10 * time.Millisecond, 10 * time.Millisecond}
	s := newService(t, openDB(t), cfg)
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(200)
	})
	createEndpoint(t, s, settleflow.Test, rc.URL)
	if err := s.Notify(context.Background(), []settleflow.Event{testEvent(false)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "second attempt", func() bool { return rc.count() == 2 })
	reqs := rc.requests()
	if gap := reqs[1].At.Sub(reqs[0].At); gap < 1900*time.Millisecond {
		t.Fatalf("retried after %v despite Retry-After: 2", gap)
	}
}

func TestRotationOverlap(t *testing.T) {
	ctx := context.Background()
	clock := &testClock{}
	cfg := fastConfig(t)
	cfg.Clock = clock
	s := newService(t, openDB(t), cfg)
	rc := newReceiver(t, nil)
	ep, oldSecret := createEndpoint(t, s, settleflow.Test, rc.URL)

	newSecret, err := s.RotateSecret(ctx, ep.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if newSecret == oldSecret || !strings.HasPrefix(newSecret, "whsec_") {
		t.Fatalf("new secret %q", newSecret)
	}
	e, _ := s.GetEndpoint(ctx, ep.ID)
	if e.RotationEndsAt == nil || e.RotationEndsAt.Sub(clock.Now()) < 59*time.Minute {
		t.Fatalf("RotationEndsAt = %v", e.RotationEndsAt)
	}
	verify := VerifyOptions{Now: clock.Now}

	// During the overlap both secrets sign.
	if err := s.Notify(ctx, []settleflow.Event{testEvent(false)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "delivery in overlap", func() bool { return rc.count() >= 1 })
	r := rc.requests()[0]
	for _, sec := range []string{oldSecret, newSecret} {
		if independentServiceMatches(t, r.Header.Get("service-signature"), r.Body, sec) != 1 ||
			independentStandardMatches(t, r.Header, r.Body, sec) != 1 {
			t.Fatalf("during overlap a secret does not verify: %v", r.Header)
		}
		if _, err := ConstructEventWithOptions(r.Body, r.Header.Get("service-signature"), sec, verify); err != nil {
			t.Fatal(err)
		}
		if err := VerifyStandardWithOptions(r.Body, r.Header, sec, verify); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(r.Header.Get("service-signature"), "v1="); n != 2 {
		t.Fatalf("%d v1 values during overlap", n)
	}

	// After it only the new one does.
	clock.Advance(61 * time.Minute)
	if err := s.Notify(ctx, []settleflow.Event{testEvent(false)}); err != nil {
		t.Fatal(err)
	}
	// Delivery is at least once: the first event may arrive twice (it was
	// seen sent twice within milliseconds on a loaded machine, a duplicate
	// receivers dedupe on webhook-id), so the second event is found by id.
	firstID := r.Header.Get("webhook-id")
	waitFor(t, 5*time.Second, "delivery after overlap", func() bool {
		for _, q := range rc.requests() {
			if q.Header.Get("webhook-id") != firstID {
				r = q
				return true
			}
		}
		return false
	})
	if independentServiceMatches(t, r.Header.Get("service-signature"), r.Body, newSecret) != 1 ||
		independentStandardMatches(t, r.Header, r.Body, newSecret) != 1 {
		t.Fatal("new secret does not verify after the overlap")
	}
	if independentServiceMatches(t, r.Header.Get("service-signature"), r.Body, oldSecret) != 0 ||
		independentStandardMatches(t, r.Header, r.Body, oldSecret) != 0 {
		t.Fatal("old secret still verifies after the overlap")
	}
	_, err = ConstructEventWithOptions(r.Body, r.Header.Get("service-signature"), oldSecret, verify)
	var sve *SignatureVerificationError
	if !errors.As(err, &sve) || sve.Reason != ReasonNoMatchingSignature {
		t.Fatalf("old secret after overlap: %v", err)
	}
	if e, _ := s.GetEndpoint(ctx, ep.ID); e.RotationEndsAt != nil {
		t.Fatalf("rotation still shown as running: %v", e.RotationEndsAt)
	}
}

// testClock is the real clock moved forward by Advance.
type testClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.offset += d
	c.mu.Unlock()
}

func TestNotifyDedupe(t *testing.T) {
	ctx := context.Background()
	s := newService(t, openDB(t), fastConfig(t))
	rc := newReceiver(t, nil)
	rc2 := newReceiver(t, nil)
	createEndpoint(t, s, settleflow.Test, rc.URL)
	createEndpoint(t, s, settleflow.Test, rc2.URL)
	a, b := testEvent(false), testEvent(false)
	for range 3 {
		if err := s.Notify(ctx, []settleflow.Event{a, b, a}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 5*time.Second, "deliveries", func() bool { return rc.count() >= 2 && rc2.count() >= 2 })
	time.Sleep(200 * time.Millisecond)
	if rc.count() != 2 || rc2.count() != 2 {
		t.Fatalf("receivers got %d and %d requests, want 2 each", rc.count(), rc2.count())
	}
	ds, _ := s.ListDeliveries(ctx, DeliveryQuery{})
	if len(ds) != 4 {
		t.Fatalf("%d deliveries, want 4", len(ds))
	}
}

func TestSlowEndpointDoesNotDelayFast(t *testing.T) {
	cfg := fastConfig(t)
	cfg.MaxConcurrency = 4
	cfg.MaxPerEndpoint = 2
	cfg.Timeout = 5 * time.Second
	s := newService(t, openDB(t), cfg)
	release := make(chan struct{})
	var slowInFlight, slowMax atomic.Int32
	slow := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) {
		cur := slowInFlight.Add(1)
		defer slowInFlight.Add(-1)
		for {
			m := slowMax.Load()
			if cur <= m || slowMax.CompareAndSwap(m, cur) {
				break
			}
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	fast := newReceiver(t, nil)
	defer close(release)
	createEndpoint(t, s, settleflow.Test, slow.URL)
	createEndpoint(t, s, settleflow.Test, fast.URL)
	events := make([]settleflow.Event, 20)
	for i := range events {
		events[i] = testEvent(false)
	}
	start := time.Now()
	if err := s.Notify(context.Background(), events); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 3*time.Second, "fast endpoint served", func() bool { return fast.count() == len(events) })
	t.Logf("fast endpoint got %d events in %v while the slow one held %d", fast.count(), time.Since(start), slowInFlight.Load())
	if m := slowMax.Load(); m > 2 {
		t.Fatalf("slow endpoint had %d attempts in flight, limit 2", m)
	}
}

func TestStopWaitsForInFlight(t *testing.T) {
	ctx := context.Background()
	s, err := New(ctx, openDB(t), fastConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); !errors.Is(err, ErrRunning) {
		t.Fatalf("second Start: %v", err)
	}
	started := make(chan struct{}, 1)
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) {
		started <- struct{}{}
		time.Sleep(300 * time.Millisecond)
		w.WriteHeader(200)
	})
	createEndpoint(t, s, settleflow.Test, rc.URL)
	if err := s.Notify(ctx, []settleflow.Event{testEvent(false)}); err != nil {
		t.Fatal(err)
	}
	<-started
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	ds, _ := s.ListDeliveries(ctx, DeliveryQuery{})
	if len(ds) != 1 || ds[0].Status != DeliverySucceeded {
		t.Fatalf("after graceful stop: %+v", ds)
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestStopReleasesQueued: deliveries claimed ahead but not started are given
// back at Stop, so another process can send them without waiting for the
// lease to run out.
func TestStopReleasesQueued(t *testing.T) {
	ctx := context.Background()
	s := newSerialService(t)
	release := make(chan struct{})
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) { <-release })
	createEndpoint(t, s, settleflow.Test, rc.URL)
	if err := s.Notify(ctx, []settleflow.Event{testEvent(false), testEvent(false), testEvent(false)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "first attempt", func() bool { return rc.count() == 1 })
	leased := func() int {
		n, _ := s.db.NewSelect().Model((*deliveryRow)(nil)).Where("lease_owner <> ''").Count(ctx)
		return int(n)
	}
	if n := leased(); n != 2 {
		t.Fatalf("%d deliveries leased, want 2 (one in flight, one queued)", n)
	}
	stopped := make(chan error)
	go func() { stopped <- s.Stop(ctx) }()
	time.Sleep(50 * time.Millisecond)
	close(release)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if n := leased(); n != 0 {
		t.Fatalf("%d leases held after Stop", n)
	}
	if rc.count() != 1 {
		t.Fatalf("%d requests; Stop started queued deliveries", rc.count())
	}
	ds, _ := s.ListDeliveries(ctx, DeliveryQuery{Status: DeliveryPending})
	if len(ds) != 2 || ds[0].NextAttemptAt.After(time.Now()) || ds[1].NextAttemptAt.After(time.Now()) {
		t.Fatalf("pending after Stop: %+v", ds)
	}
}
