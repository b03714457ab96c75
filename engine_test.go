package settleflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/storage/bunstore"
	"github.com/settleflow/settleflow/storage/sqlite"
)

// triage is the test product: cost 200 + 50 per attachment (minor units);
// Execute reports 80 % of the estimate and behaves as the hooks say.
type triage struct {
	TicketID    string `json:"ticketId"`
	Attachments int    `json:"attachments"`
}

func (p triage) Validate() error {
	if p.TicketID == "" {
		return &settleflow.FieldError{Field: "ticketId", Message: "is required"}
	}
	if p.Attachments < 0 {
		return &settleflow.FieldError{Field: "attachments", Message: "must not be negative"}
	}
	return nil
}

func (p triage) cost() int64 { return 200 + 50*int64(p.Attachments) }

type hooks struct {
	// execute, if set, runs inside Execute before it reports.
	execute func(ctx context.Context, p triage) error
	runs    atomic.Int64
}

func testProducts(t testing.TB, h *hooks) *settleflow.Products {
	t.Helper()
	ps := settleflow.NewProducts()
	err := settleflow.Register(ps, settleflow.Product[triage]{
		Name:           "ticket-triage",
		Description:    "Classifies a support ticket.",
		Price:          settleflow.Price{TargetMargin: 3000, MinimumCharge: 100},
		PricingSummary: "2.00 USD per ticket plus 0.50 USD per attachment",
		Estimate:       func(p triage) (int64, error) { return p.cost(), nil },
		Execute: func(ctx context.Context, p triage) (settleflow.Execution, error) {
			h.runs.Add(1)
			if h.execute != nil {
				if err := h.execute(ctx, p); err != nil {
					return settleflow.Execution{}, err
				}
			}
			return settleflow.Execution{ActualCost: p.cost() * 8 / 10, Result: map[string]any{"ticketId": p.TicketID, "queue": "billing"}}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// recordingNotifier keeps every event it was handed.
type recordingNotifier struct {
	mu     sync.Mutex
	events map[string]settleflow.Event
	calls  map[string]int
	fail   atomic.Bool
}

func newRecordingNotifier() *recordingNotifier {
	return &recordingNotifier{events: map[string]settleflow.Event{}, calls: map[string]int{}}
}

func (n *recordingNotifier) Notify(_ context.Context, evs []settleflow.Event) error {
	if n.fail.Load() {
		return errors.New("notifier down")
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, e := range evs {
		n.events[e.ID] = e
		n.calls[e.ID]++
	}
	return nil
}

func (n *recordingNotifier) byWorkflow() map[string][]settleflow.Event {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := map[string][]settleflow.Event{}
	for _, e := range n.events {
		out[e.Data.WorkflowID] = append(out[e.Data.WorkflowID], e)
	}
	return out
}

type fixture struct {
	store    *bunstore.Store
	settler  *recordingSettler
	notifier *recordingNotifier
	hooks    *hooks
	engine   *settleflow.Engine
}

func newFixture(t *testing.T, tweak func(*settleflow.Options)) *fixture {
	t.Helper()
	dir := t.TempDir()
	store, err := sqlite.Open(context.Background(), filepath.Join(dir, "settleflow.db"), sqlite.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	f := &fixture{store: store, settler: newRecordingSettler(t, ""), notifier: newRecordingNotifier(), hooks: &hooks{}}
	opts := settleflow.Options{
		Store:                  store,
		Settler:                f.settler,
		Notifier:               f.notifier,
		Products:               testProducts(t, f.hooks),
		Logger:                 zaptest.NewLogger(t),
		PollInterval:           20 * time.Millisecond,
		SettlementPollInterval: 20 * time.Millisecond,
		Retry:                  settleflow.RetryPolicy{Base: 10 * time.Millisecond, Max: 50 * time.Millisecond, MaxAttempts: 3},
	}
	if tweak != nil {
		tweak(&opts)
	}
	f.engine, err = settleflow.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.engine.Stop(context.Background()) })
	return f
}

func (f *fixture) create(t *testing.T, env settleflow.Environment, ticket string, attachments int) *settleflow.Workflow {
	t.Helper()
	wf, replayed, err := f.engine.Create(context.Background(), settleflow.CreateParams{
		Environment: env, Product: "ticket-triage", CustomerID: "cus_123",
		Payload: json.RawMessage(fmt.Sprintf(`{"ticketId": %q, "attachments": %d}`, ticket, attachments)),
	})
	if err != nil || replayed {
		t.Fatalf("Create: %v (replayed %v)", err, replayed)
	}
	return wf
}

// waitFor polls until every workflow reached a terminal status.
func (f *fixture) waitTerminal(t *testing.T, env settleflow.Environment, ids ...string) map[string]*settleflow.Workflow {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	out := map[string]*settleflow.Workflow{}
	for _, id := range ids {
		for {
			w, err := f.engine.Fetch(context.Background(), env, id)
			if err != nil {
				t.Fatal(err)
			}
			if w.Status.Terminal() {
				out[id] = w
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("workflow %s still %s", id, w.Status)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return out
}

func (f *fixture) waitEvents(t *testing.T, n int) map[string][]settleflow.Event {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		by := f.notifier.byWorkflow()
		total := 0
		for _, evs := range by {
			total += len(evs)
		}
		if total >= n {
			return by
		}
		if time.Now().After(deadline) {
			t.Fatalf("notifier got %d events, want %d", total, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestEngineSettlesWorkflows(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	var created []*settleflow.Workflow
	for i := 0; i < 30; i++ {
		created = append(created, f.create(t, settleflow.Test, fmt.Sprintf("T-%d", i), i%4))
	}
	live := f.create(t, settleflow.Live, "T-live", 1)
	w0 := created[0]
	// Create answers at once with the quote, before execution.
	if w0.Status != settleflow.Pending || w0.Quoted.Amount != 286 || w0.Quoted.Currency != "usd" || w0.Margin.Target != 3000 || w0.Margin.Achieved != nil {
		t.Fatalf("created workflow: %+v", w0)
	}
	if err := f.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for _, w := range created {
		ids = append(ids, w.ID)
	}
	done := f.waitTerminal(t, settleflow.Test, ids...)
	f.waitTerminal(t, settleflow.Live, live.ID)
	events := f.waitEvents(t, len(created)+1)
	for _, w := range created {
		got := done[w.ID]
		if got.Status != settleflow.Settled {
			t.Fatalf("%s ended %s (failure %+v)", w.ID, got.Status, got.Failure)
		}
		if got.Quoted != w.Quoted || got.Settlement == nil || got.Settlement.Confirmations != 12 || got.Result == nil || got.ActualCost == nil {
			t.Fatalf("settled workflow incomplete: %+v", got)
		}
		want := settleflow.AchievedMargin(w.Quoted.Amount, *got.ActualCost)
		if got.Margin.Achieved == nil || *got.Margin.Achieved != want {
			t.Fatalf("achieved margin %v, want %v", got.Margin.Achieved, want)
		}
		if a := f.settler.amount(t, w.ID); a != w.Quoted.Amount {
			t.Fatalf("charged %d, quoted %d", a, w.Quoted.Amount)
		}
		evs := events[w.ID]
		if len(evs) != 1 || evs[0].Type != settleflow.EventWorkflowCompleted || evs[0].Data.Status != settleflow.Settled ||
			evs[0].Data.Settlement == nil || evs[0].Data.Margin.Achieved == nil || *evs[0].Data.Margin.Achieved != want || evs[0].Livemode {
			t.Fatalf("events of %s: %+v", w.ID, evs)
		}
	}
	if evs := events[live.ID]; len(evs) != 1 || !evs[0].Livemode {
		t.Fatalf("live workflow's event: %+v", evs)
	}
	charges, _, mismatches := f.settler.charged(t)
	if charges != len(created)+1 || mismatches != 0 {
		t.Fatalf("%d charges (%d mismatched), want %d", charges, mismatches, len(created)+1)
	}
	// The event envelope as delivered.
	b, _ := json.Marshal(events[w0.ID][0])
	var env map[string]any
	json.Unmarshal(b, &env)
	data, _ := env["data"].(map[string]any)
	if env["object"] != "event" || env["type"] != "workflow.completed" || env["livemode"] != false || data["workflowId"] != w0.ID || data["status"] != "Settled" {
		t.Fatalf("envelope: %s", b)
	}
}

func TestEngineCreateValidation(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	cases := []struct {
		name        string
		p           settleflow.CreateParams
		code, param string
	}{
		{"missing product", settleflow.CreateParams{CustomerID: "cus_1", Payload: json.RawMessage(`{}`)}, "parameter_missing", "product"},
		{"unknown product", settleflow.CreateParams{Product: "nope", CustomerID: "cus_1", Payload: json.RawMessage(`{}`)}, "product_not_found", "product"},
		{"missing customer", settleflow.CreateParams{Product: "ticket-triage", Payload: json.RawMessage(`{}`)}, "parameter_missing", "customerId"},
		{"bad customer", settleflow.CreateParams{Product: "ticket-triage", CustomerID: "123", Payload: json.RawMessage(`{}`)}, "parameter_invalid", "customerId"},
		{"customer with space", settleflow.CreateParams{Product: "ticket-triage", CustomerID: "cus_1 2", Payload: json.RawMessage(`{}`)}, "parameter_invalid", "customerId"},
		{"missing payload", settleflow.CreateParams{Product: "ticket-triage", CustomerID: "cus_1"}, "parameter_missing", "payload"},
		{"payload array", settleflow.CreateParams{Product: "ticket-triage", CustomerID: "cus_1", Payload: json.RawMessage(`[1]`)}, "parameter_invalid", "payload"},
		{"payload missing field", settleflow.CreateParams{Product: "ticket-triage", CustomerID: "cus_1", Payload: json.RawMessage(`{}`)}, "parameter_invalid", "payload.ticketId"},
		{"payload wrong type", settleflow.CreateParams{Product: "ticket-triage", CustomerID: "cus_1", Payload: json.RawMessage(`{"ticketId": 5}`)}, "parameter_invalid", "payload.ticketId"},
		{"payload unknown field", settleflow.CreateParams{Product: "ticket-triage", CustomerID: "cus_1", Payload: json.RawMessage(`{"ticketId": "x", "color": 1}`)}, "parameter_unknown", "payload.color"},
		{"payload negative", settleflow.CreateParams{Product: "ticket-triage", CustomerID: "cus_1", Payload: json.RawMessage(`{"ticketId": "x", "attachments": -1}`)}, "parameter_invalid", "payload.attachments"},
		{"payload float", settleflow.CreateParams{Product: "ticket-triage", CustomerID: "cus_1", Payload: json.RawMessage(`{"ticketId": "x", "attachments": 1.5}`)}, "parameter_invalid", "payload.attachments"},
		{"authorization not JSON", settleflow.CreateParams{Product: "ticket-triage", CustomerID: "cus_1", Payload: json.RawMessage(`{"ticketId": "x"}`), Authorization: json.RawMessage(`{"scheme":`)}, "parameter_invalid", "authorization"},
		{"authorization too large", settleflow.CreateParams{Product: "ticket-triage", CustomerID: "cus_1", Payload: json.RawMessage(`{"ticketId": "x"}`),
			Authorization: json.RawMessage(`"` + strings.Repeat("a", 5000) + `"`)}, "parameter_invalid", "authorization"},
		// This fixture's settler charges no customer balances: an
		// authorization has no balance to pay into.
		{"authorization where no balance is charged", settleflow.CreateParams{Product: "ticket-triage", CustomerID: "cus_1", Payload: json.RawMessage(`{"ticketId": "x"}`),
			Authorization: json.RawMessage(`{"scheme": "upto"}`)}, "parameter_invalid", "authorization"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.p.Environment = settleflow.Test
			_, _, err := f.engine.Create(ctx, c.p)
			var inv *settleflow.InvalidError
			if !errors.As(err, &inv) || string(inv.Code) != c.code || inv.Param != c.param {
				t.Fatalf("err = %v; want code %s param %s", err, c.code, c.param)
			}
		})
	}
	page, err := f.engine.List(ctx, settleflow.ListParams{Environment: settleflow.Test})
	if err != nil || len(page.Data) != 0 {
		t.Fatalf("bad input created workflows: %d %v", len(page.Data), err)
	}
	for _, bad := range []settleflow.ListParams{{Limit: 101}, {Limit: -1}, {Status: "Done"}, {StartingAfter: "wf_x"},
		{StartingAfter: "wf_01JD3Q6Y6F8Q2W9T4M5N7P8R0S", EndingBefore: "wf_01JD3Q6Y6F8Q2W9T4M5N7P8R0S"}} {
		bad.Environment = settleflow.Test
		var inv *settleflow.InvalidError
		if _, err := f.engine.List(ctx, bad); !errors.As(err, &inv) {
			t.Fatalf("List(%+v) = %v, want InvalidError", bad, err)
		}
	}
	if _, err := f.engine.Fetch(ctx, settleflow.Test, "wf_nope"); !errors.Is(err, settleflow.ErrNotFound) {
		t.Fatalf("Fetch of a malformed id: %v", err)
	}
}

func TestEngineIdempotentCreate(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	p := settleflow.CreateParams{Environment: settleflow.Test, Product: "ticket-triage", CustomerID: "cus_1",
		Payload: json.RawMessage(`{"ticketId": "T-1"}`), IdempotencyKey: "order-1"}
	var wg sync.WaitGroup
	results := make([]*settleflow.Workflow, 16)
	replays := atomic.Int64{}
	for i := range results {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			w, replayed, err := f.engine.Create(ctx, p)
			if err != nil {
				t.Error(err)
				return
			}
			if replayed {
				replays.Add(1)
			}
			results[i] = w
		}(i)
	}
	wg.Wait()
	for _, w := range results {
		if w == nil || w.ID != results[0].ID {
			t.Fatal("concurrent creates with one key made different workflows")
		}
	}
	if replays.Load() != int64(len(results)-1) {
		t.Fatalf("%d replays, want %d", replays.Load(), len(results)-1)
	}
	// Whitespace does not matter; a different payload does.
	p.Payload = json.RawMessage(`{ "ticketId" : "T-1" }`)
	if w, replayed, err := f.engine.Create(ctx, p); err != nil || !replayed || w.ID != results[0].ID {
		t.Fatalf("replay with reformatted payload: %v %v", replayed, err)
	}
	p.Payload = json.RawMessage(`{"ticketId": "T-2"}`)
	if _, _, err := f.engine.Create(ctx, p); !errors.Is(err, settleflow.ErrIdempotencyKeyReused) {
		t.Fatalf("reuse with another body: %v", err)
	}
	// The same key in the other environment is another key.
	p.Environment = settleflow.Live
	if _, replayed, err := f.engine.Create(ctx, p); err != nil || replayed {
		t.Fatalf("same key in live: replayed %v, %v", replayed, err)
	}
}

func TestEngineRetriesTransientAndFailsPermanent(t *testing.T) {
	f := newFixture(t, nil)
	var flaky atomic.Int64
	f.hooks.execute = func(ctx context.Context, p triage) error {
		switch p.TicketID {
		case "flaky":
			if flaky.Add(1) < 3 {
				return errors.New("upstream 503")
			}
		case "broken":
			return settleflow.Permanent(&settleflow.Failure{Code: "ticket_closed", Message: "the ticket is closed"})
		case "always":
			return errors.New("still down")
		case "panics":
			panic("boom")
		}
		return nil
	}
	ok := f.create(t, settleflow.Test, "flaky", 0)
	broken := f.create(t, settleflow.Test, "broken", 0)
	always := f.create(t, settleflow.Test, "always", 0)
	panics := f.create(t, settleflow.Test, "panics", 0)
	if err := f.engine.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := f.waitTerminal(t, settleflow.Test, ok.ID, broken.ID, always.ID, panics.ID)
	if got[ok.ID].Status != settleflow.Settled || flaky.Load() != 3 {
		t.Fatalf("flaky: %s after %d runs", got[ok.ID].Status, flaky.Load())
	}
	for id, code := range map[string]settleflow.ErrorCode{broken.ID: "ticket_closed", always.ID: settleflow.FailureAttemptsExceeded, panics.ID: "execution_panicked"} {
		if w := got[id]; w.Status != settleflow.Failed || w.Failure == nil || w.Failure.Code != code {
			t.Fatalf("%s: %s %+v, want Failed %s", id, w.Status, w.Failure, code)
		}
	}
	events := f.waitEvents(t, 4)
	if e := events[broken.ID]; len(e) != 1 || e[0].Type != settleflow.EventWorkflowFailed || e[0].Data.Failure.Code != "ticket_closed" {
		t.Fatalf("failed event: %+v", e)
	}
	if charges, _, _ := f.settler.charged(t); charges != 1 {
		t.Fatalf("%d charges, want 1 (failed executions charge nothing)", charges)
	}
}

func TestEngineSettlementRetriesAndPolls(t *testing.T) {
	f := newFixture(t, nil)
	var submitCalls atomic.Int64
	f.settler.submitErr = func([]settleflow.Charge) error {
		if submitCalls.Add(1) <= 2 {
			return errors.New("rpc unreachable")
		}
		return nil
	}
	f.settler.pendingPolls = 3
	w := f.create(t, settleflow.Test, "T-1", 0)
	reverted := f.create(t, settleflow.Test, "T-2", 0)
	f.settler.failIDs[reverted.ID] = true
	if err := f.engine.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := f.waitTerminal(t, settleflow.Test, w.ID, reverted.ID)
	if got[w.ID].Status != settleflow.Settled || got[w.ID].Settlement.Confirmations != 12 {
		t.Fatalf("after transient settler errors: %+v", got[w.ID])
	}
	if r := got[reverted.ID]; r.Status != settleflow.Failed || r.Failure.Code != "transaction_reverted" {
		t.Fatalf("reverted: %+v", r)
	}
	if charges, submits, _ := f.settler.charged(t); charges != 2 || submits < 2 {
		t.Fatalf("charges %d submits %d", charges, submits)
	}
}

func TestEngineResubmitsForgottenCharges(t *testing.T) {
	// A crash between Running→Settling and Submit leaves a Settling workflow
	// the settler never saw: the engine must submit it.
	f := newFixture(t, nil)
	var drop atomic.Bool
	drop.Store(true)
	f.settler.submitErr = func([]settleflow.Charge) error {
		if drop.Load() {
			return errors.New("lost on the way")
		}
		return nil
	}
	w := f.create(t, settleflow.Test, "T-1", 0)
	ctx := context.Background()
	if err := f.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for {
		got, _ := f.engine.Fetch(ctx, settleflow.Test, w.ID)
		if got.Status == settleflow.Settling {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	drop.Store(false)
	if got := f.waitTerminal(t, settleflow.Test, w.ID)[w.ID]; got.Status != settleflow.Settled {
		t.Fatalf("status %s", got.Status)
	}
}

func TestEngineStopReleasesWork(t *testing.T) {
	f := newFixture(t, func(o *settleflow.Options) { o.ExecutionTimeout = time.Minute })
	started := make(chan struct{}, 1)
	f.hooks.execute = func(ctx context.Context, p triage) error {
		if p.TicketID == "slow" {
			started <- struct{}{}
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}
	slow := f.create(t, settleflow.Test, "slow", 0)
	ctx := context.Background()
	if err := f.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	<-started
	stopCtx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if err := f.engine.Stop(stopCtx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Stop = %v, want DeadlineExceeded", err)
	}
	if _, _, err := f.engine.Create(ctx, settleflow.CreateParams{Environment: settleflow.Test}); !errors.Is(err, settleflow.ErrEngineStopped) &&
		!errors.As(err, new(*settleflow.InvalidError)) {
		t.Fatalf("Create after Stop: %v", err)
	}
	if _, _, err := f.engine.Create(ctx, settleflow.CreateParams{Environment: settleflow.Test, Product: "ticket-triage", CustomerID: "cus_1",
		Payload: json.RawMessage(`{"ticketId":"x"}`)}); !errors.Is(err, settleflow.ErrEngineStopped) {
		t.Fatalf("Create after Stop: %v, want ErrEngineStopped", err)
	}
	// Released: still Running but free for the next engine at once, and not
	// counted as a failed attempt.
	w, err := f.store.GetWorkflow(ctx, settleflow.Test, slow.ID)
	if err != nil || w.Status != settleflow.Running || w.Attempts != 0 {
		t.Fatalf("after Stop: %+v %v", w, err)
	}
	claimed, err := f.store.ClaimWorkflows(ctx, settleflow.Claim{Owner: "next", Now: time.Now(), LeaseUntil: time.Now().Add(time.Minute), Limit: 10})
	if err != nil || len(claimed) != 1 {
		t.Fatalf("the released workflow could not be claimed: %d %v", len(claimed), err)
	}
}

func TestEngineNotifierOutage(t *testing.T) {
	f := newFixture(t, nil)
	f.notifier.fail.Store(true)
	w := f.create(t, settleflow.Test, "T-1", 0)
	if err := f.engine.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.waitTerminal(t, settleflow.Test, w.ID)
	time.Sleep(50 * time.Millisecond)
	if n := len(f.notifier.byWorkflow()); n != 0 {
		t.Fatal("a failing notifier recorded events")
	}
	// Back up: the event is still in the outbox and goes out once.
	f.notifier.fail.Store(false)
	f.engine.Stop(context.Background())
	f2, err := settleflow.New(settleflow.Options{Store: f.store, Settler: f.settler, Notifier: f.notifier, Products: testProducts(t, &hooks{}), PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	f2.Start(context.Background())
	defer f2.Stop(context.Background())
	f.waitEvents(t, 1)
}

// Creates racing Stop either commit (and the workflow exists) or fail with
// ErrEngineStopped; none hangs and none is acknowledged without being stored.
func TestEngineCreateRacingStop(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var acked []string
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				w, _, err := f.engine.Create(ctx, settleflow.CreateParams{Environment: settleflow.Test, Product: "ticket-triage",
					CustomerID: "cus_1", Payload: json.RawMessage(`{"ticketId":"T"}`)})
				if errors.Is(err, settleflow.ErrEngineStopped) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				acked = append(acked, w.ID)
				mu.Unlock()
			}
		}()
	}
	time.Sleep(50 * time.Millisecond)
	stopped := make(chan error)
	go func() { stopped <- f.engine.Stop(ctx) }()
	waited := make(chan struct{})
	go func() { wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		t.Fatal("a Create hung across Stop")
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if len(acked) == 0 {
		t.Fatal("no Create succeeded before Stop")
	}
	for _, id := range acked {
		if _, err := f.store.GetWorkflow(ctx, settleflow.Test, id); err != nil {
			t.Fatalf("acknowledged %s not stored: %v", id, err)
		}
	}
}

// Settled workflows are served from memory; in-flight ones always from the
// store, so they are never stale.
func TestFetchCachesOnlyTerminal(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	w := f.create(t, settleflow.Test, "T-1", 0)
	if err := f.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	f.waitTerminal(t, settleflow.Test, w.ID)
	first, _ := f.engine.Fetch(ctx, settleflow.Test, w.ID)
	// Remove the row behind the engine's back: a cached terminal workflow
	// still answers, in its own environment only.
	if _, err := f.store.DB().Bun().ExecContext(ctx, `DELETE FROM settleflow_events; DELETE FROM settleflow_idempotency_keys; DELETE FROM settleflow_workflows`); err != nil {
		t.Fatal(err)
	}
	again, err := f.engine.Fetch(ctx, settleflow.Test, w.ID)
	if err != nil || again != first || again.Status != settleflow.Settled {
		t.Fatalf("terminal workflow not cached: %v %v", again, err)
	}
	if _, err := f.engine.Fetch(ctx, settleflow.Live, w.ID); !errors.Is(err, settleflow.ErrNotFound) {
		t.Fatalf("cache crossed environments: %v", err)
	}
	// A workflow not yet seen terminal is read from the store.
	p := f.create(t, settleflow.Live, "T-2", 0)
	f.engine.Stop(ctx)
	if _, err := f.store.DB().Bun().ExecContext(ctx, `UPDATE settleflow_workflows SET customer_id = 'cus_changed' WHERE id = ?`, p.ID); err != nil {
		t.Fatal(err)
	}
	got, err := f.engine.Fetch(ctx, settleflow.Live, p.ID)
	if err != nil || got.CustomerID != "cus_changed" {
		t.Fatalf("in-flight workflow served stale: %+v %v", got, err)
	}
}

// An engine restarted under the same WorkerID takes its dead predecessor's
// leased work back at Start, without waiting for the leases to expire.
func TestRestartWithSameWorkerIDResumesAtOnce(t *testing.T) {
	f := newFixture(t, func(o *settleflow.Options) {
		o.WorkerID = "worker-fixed"
		o.ExecutionTimeout = time.Hour // leases far longer than the test
	})
	ctx := context.Background()
	w := f.create(t, settleflow.Test, "T-1", 0)
	// The previous run claimed it and died.
	now := time.Now()
	if got, err := f.store.ClaimWorkflows(ctx, settleflow.Claim{Owner: "worker-fixed", Now: now, LeaseUntil: now.Add(time.Hour), Limit: 1}); err != nil || len(got) != 1 {
		t.Fatal(got, err)
	}
	if err := f.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if got := f.waitTerminal(t, settleflow.Test, w.ID)[w.ID]; got.Status != settleflow.Settled {
		t.Fatalf("status %s", got.Status)
	}
}
