package settleflow_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
)

// TestSettleBatchIsolatesRefusal runs one settle batch holding a charge
// submitted earlier (claimed again only to poll its confirmation) and a
// fresh charge, and has the settler refuse the fresh one for good. Only the
// fresh one may fail: the other is on its way to the chain and settles.
func TestSettleBatchIsolatesRefusal(t *testing.T) {
	const worker = "worker_settle_test"
	f := newFixture(t, func(o *settleflow.Options) { o.WorkerID = worker })
	ctx := context.Background()
	submitted := f.create(t, settleflow.Test, "T-submitted", 0)
	fresh := f.create(t, settleflow.Test, "T-fresh", 0)

	// Both executed and moved to Settling by this engine, as the finish
	// stage does (the engine is not started: this test is the settle loop).
	now := time.Now().UTC().Truncate(time.Microsecond)
	claimed, err := f.store.ClaimWorkflows(ctx, settleflow.Claim{Owner: worker, Now: now, LeaseUntil: now.Add(time.Hour), Limit: 10})
	if err != nil || len(claimed) != 2 {
		t.Fatalf("claim: %d workflows, %v", len(claimed), err)
	}
	toSettling, _ := settleflow.Running.To(settleflow.Settling)
	cost, achieved := int64(160), settleflow.BasisPoints(4400)
	var us []settleflow.Update
	for _, w := range claimed {
		us = append(us, settleflow.Update{ID: w.ID, Owner: worker, Status: settleflow.Running, Transition: toSettling,
			RunAt: now.Add(time.Hour), ActualCost: &cost, Achieved: &achieved, UpdatedAt: now, Sequence: new(uint64)})
	}
	if applied, err := f.store.UpdateWorkflows(ctx, us); err != nil || !applied[0] || !applied[1] {
		t.Fatalf("to Settling: %v %v", applied, err)
	}
	settling := map[string]*settleflow.Workflow{}
	for _, id := range []string{submitted.ID, fresh.ID} {
		w, err := f.store.GetWorkflow(ctx, settleflow.Test, id)
		if err != nil || w.Status != settleflow.Settling {
			t.Fatalf("%s: %+v %v", id, w, err)
		}
		settling[id] = w
	}
	// submitted's charge went out in an earlier round.
	if err := f.settler.Submit(ctx, []settleflow.Charge{chargeOf(settling[submitted.ID])}); err != nil {
		t.Fatal(err)
	}
	var submits [][]string
	f.settler.submitErr = func(cs []settleflow.Charge) error {
		var ids []string
		for _, c := range cs {
			ids = append(ids, c.WorkflowID)
		}
		submits = append(submits, ids)
		if slices.Contains(ids, fresh.ID) {
			return settleflow.Permanent(&settleflow.Failure{Code: "insufficient_funds", Message: "the operator cannot cover this charge"})
		}
		return nil
	}

	f.engine.SettleOnce(ctx, []*settleflow.Workflow{settling[submitted.ID], settling[fresh.ID]}, []bool{false, true})

	if w, _ := f.store.GetWorkflow(ctx, settleflow.Test, submitted.ID); w.Status != settleflow.Settled || w.Settlement == nil || w.Failure != nil {
		t.Errorf("the charge submitted earlier: %s, failure %+v; want Settled", w.Status, w.Failure)
	}
	if w, _ := f.store.GetWorkflow(ctx, settleflow.Test, fresh.ID); w.Status != settleflow.Failed || w.Failure == nil || w.Failure.Code != "insufficient_funds" {
		t.Errorf("the refused fresh charge: %s, failure %+v; want Failed with insufficient_funds", w.Status, w.Failure)
	}
	if charges, _, _ := f.settler.charged(t); charges != 1 {
		t.Errorf("%d charges recorded, want 1 (the refused one is never charged)", charges)
	}
	for _, call := range submits {
		if slices.Contains(call, submitted.ID) {
			t.Errorf("the charge the settler holds was submitted again: %v", submits)
		}
	}
}

// forgetfulSettler stands for a settler restarted with an empty memory: the
// first time it is asked about a charge of forget after arming, it answers
// Unknown (though the charge is on its way), then refuses the engine's
// resubmission with a permanent error that names no charge.
type forgetfulSettler struct {
	*recordingSettler
	mu     sync.Mutex
	forget map[string]bool
	refuse map[string]bool
}

func (s *forgetfulSettler) Status(ctx context.Context, cs []settleflow.Charge) ([]settleflow.SettlementStatus, error) {
	sts, err := s.recordingSettler.Status(ctx, cs)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, c := range cs {
		if s.forget[c.WorkflowID] {
			delete(s.forget, c.WorkflowID)
			s.refuse[c.WorkflowID] = true
			sts[i] = settleflow.SettlementStatus{WorkflowID: c.WorkflowID, State: settleflow.SettlementUnknown}
		}
	}
	return sts, nil
}

func (s *forgetfulSettler) Submit(ctx context.Context, cs []settleflow.Charge) error {
	s.mu.Lock()
	for _, c := range cs {
		if s.refuse[c.WorkflowID] {
			delete(s.refuse, c.WorkflowID)
			s.mu.Unlock()
			return settleflow.Permanent(errors.New("invalid_charge: refused"))
		}
	}
	s.mu.Unlock()
	return s.recordingSettler.Submit(ctx, cs)
}

// TestSettleRefusedResubmissionChecksFirst: a charge submitted before, that
// the settler forgot and then refuses to take again, is failed only if the
// settler, asked again, finds no settlement of it. Here it finds one, so
// the workflow settles; a never-submitted charge refused the same way fails,
// and its failure says the check was made.
func TestSettleRefusedResubmissionChecksFirst(t *testing.T) {
	var fs *forgetfulSettler
	f := newFixture(t, func(o *settleflow.Options) {
		rec := newRecordingSettler(t, "")
		rec.pendingPolls = 2
		fs = &forgetfulSettler{recordingSettler: rec, forget: map[string]bool{}, refuse: map[string]bool{}}
		o.Settler = fs
	})
	f.settler = fs.recordingSettler
	ctx := context.Background()
	// The settler forgets the first workflow's charge at its second check
	// (the first comes right after its submission): by then it is on its way.
	var checks atomic.Int32
	f.settler.statusErr = func(cs []settleflow.Charge) error {
		if checks.Add(1) == 2 {
			fs.mu.Lock()
			fs.forget[cs[0].WorkflowID] = true
			fs.mu.Unlock()
		}
		return nil
	}
	if err := f.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	sent := f.create(t, settleflow.Test, "T-sent", 0)
	if w := f.waitTerminal(t, settleflow.Test, sent.ID)[sent.ID]; w.Status != settleflow.Settled {
		t.Fatalf("a charge on its way, forgotten and refused on resubmission: %s, failure %+v; want Settled", w.Status, w.Failure)
	}
	fs.mu.Lock()
	left := len(fs.refuse) + len(fs.forget)
	fs.mu.Unlock()
	if left != 0 {
		t.Fatal("the settler was never asked again: the test did not set up its case")
	}

	// A charge the settler never took: Settling, then refused. It fails, and
	// says the settler was asked again.
	var once sync.Once
	f.settler.submitErr = func(cs []settleflow.Charge) error {
		var err error
		once.Do(func() {
			// The first submission never arrives, and the settler will
			// refuse the charge when it comes again.
			err = errors.New("lost on the way")
			fs.mu.Lock()
			for _, c := range cs {
				fs.refuse[c.WorkflowID] = true
			}
			fs.mu.Unlock()
		})
		return err
	}
	never := f.create(t, settleflow.Test, "T-never", 0)
	w := f.waitTerminal(t, settleflow.Test, never.ID)[never.ID]
	if w.Status != settleflow.Failed || w.Failure == nil || !strings.Contains(w.Failure.Message, "asked again") {
		t.Fatalf("a charge never taken, refused: %s, failure %+v; want Failed saying the settler was asked again", w.Status, w.Failure)
	}
	if charges, _, _ := f.settler.charged(t); charges != 1 {
		t.Errorf("%d charges recorded, want 1", charges)
	}
}

// TestCreateRefusesUnsettledEnvironment: an embedding application that asks
// for a live workflow when its settler has no live chain is refused before
// anything is stored or executed.
func TestCreateRefusesUnsettledEnvironment(t *testing.T) {
	f := newFixture(t, nil)
	f.settler.liveOff = true
	ctx := context.Background()
	if err := f.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	p := settleflow.CreateParams{Environment: settleflow.Live, Product: "ticket-triage", CustomerID: "cus_123",
		Payload: []byte(`{"ticketId": "T-1"}`)}
	if _, err := f.engine.Quote(ctx, p); !errors.Is(err, settleflow.ErrEnvironmentNotConfigured) {
		t.Fatalf("Quote for live: %v, want ErrEnvironmentNotConfigured", err)
	}
	if _, _, err := f.engine.Create(ctx, p); !errors.Is(err, settleflow.ErrEnvironmentNotConfigured) {
		t.Fatalf("Create for live: %v, want ErrEnvironmentNotConfigured", err)
	}
	// Test mode still works, and is all that ran.
	w := f.create(t, settleflow.Test, "T-test", 0)
	f.waitTerminal(t, settleflow.Test, w.ID)
	page, err := f.engine.List(ctx, settleflow.ListParams{Environment: settleflow.Live})
	if err != nil || len(page.Data) != 0 {
		t.Fatalf("live workflows: %v, %v; want none", page, err)
	}
	if runs := f.hooks.runs.Load(); runs != 1 {
		t.Fatalf("the product ran %d times, want 1 (the test workflow only)", runs)
	}
}

// chargeOf is the charge the engine submits for w.
func chargeOf(w *settleflow.Workflow) settleflow.Charge {
	return settleflow.Charge{WorkflowID: w.ID, Sequence: w.Sequence, Environment: w.Environment(),
		CustomerID: w.CustomerID, Amount: w.Quoted.Amount, Currency: w.Quoted.Currency}
}

// hintingSettler is a recordingSettler that tells the engine when to ask
// again about a pending charge.
type hintingSettler struct {
	*recordingSettler
	hint time.Duration
}

func (s *hintingSettler) Status(ctx context.Context, cs []settleflow.Charge) ([]settleflow.SettlementStatus, error) {
	sts, err := s.recordingSettler.Status(ctx, cs)
	for i := range sts {
		if sts[i].State == settleflow.SettlementPending {
			sts[i].CheckAfter = s.hint
		}
	}
	return sts, err
}

// TestSettlerHintSetsTheNextCheck: a pending charge is asked about again
// when the settler's CheckAfter says, not at the next SettlementPollInterval
// nor PollInterval (an hour each here, so without the hint the workflow
// would not settle within the test).
func TestSettlerHintSetsTheNextCheck(t *testing.T) {
	var hs *hintingSettler
	f := newFixture(t, func(o *settleflow.Options) {
		rec := newRecordingSettler(t, "")
		rec.pendingPolls = 3
		hs = &hintingSettler{recordingSettler: rec, hint: 20 * time.Millisecond}
		o.Settler = hs
		o.PollInterval = time.Hour
		o.SettlementPollInterval = time.Hour
	})
	f.settler = hs.recordingSettler
	if err := f.engine.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ws := []*settleflow.Workflow{f.create(t, settleflow.Test, "T-1", 0), f.create(t, settleflow.Test, "T-2", 0)}
	for _, w := range ws {
		if got := f.waitTerminal(t, settleflow.Test, w.ID)[w.ID]; got.Status != settleflow.Settled {
			t.Fatalf("%s: %s; want Settled", w.ID, got.Status)
		}
	}
}

// TestChargesNumberedWhenSettled: a workflow gets its sequence when it is
// first to be settled, so the settled workflows of each environment hold
// 1..n, densely, and the failed ones (never settled) hold none.
func TestChargesNumberedWhenSettled(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	f.hooks.execute = func(ctx context.Context, p triage) error {
		if strings.HasPrefix(p.TicketID, "bad") {
			return settleflow.Permanent(&settleflow.Failure{Code: "ticket_closed", Message: "the ticket is closed"})
		}
		return nil
	}
	byEnv := map[settleflow.Environment][]string{}
	bad := map[string]bool{}
	for i := range 12 {
		env, ticket := settleflow.Test, fmt.Sprintf("good-%d", i)
		if i%3 == 0 {
			env = settleflow.Live
		}
		if i%4 == 1 {
			ticket = fmt.Sprintf("bad-%d", i)
		}
		w := f.create(t, env, ticket, 0)
		if w.Sequence != 0 {
			t.Fatalf("created workflow numbered %d before it is settled", w.Sequence)
		}
		byEnv[env] = append(byEnv[env], w.ID)
		bad[w.ID] = ticket[:3] == "bad"
	}
	if err := f.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for env, ids := range byEnv {
		got := f.waitTerminal(t, env, ids...)
		var seqs []uint64
		for _, id := range ids {
			w, err := f.store.GetWorkflow(ctx, env, id)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case bad[id] && (got[id].Status != settleflow.Failed || w.Sequence != 0):
				t.Fatalf("%s %s: %s with sequence %d; want Failed, unnumbered", env, id, got[id].Status, w.Sequence)
			case !bad[id] && got[id].Status != settleflow.Settled:
				t.Fatalf("%s %s: %s, want Settled", env, id, got[id].Status)
			case !bad[id]:
				seqs = append(seqs, w.Sequence)
			}
		}
		slices.Sort(seqs)
		for i, s := range seqs {
			if s != uint64(i+1) {
				t.Fatalf("%s: settled workflows numbered %v; want 1..%d", env, seqs, len(seqs))
			}
		}
	}
}

// TestSettleRetryAfterManyTransientErrorsIsBounded: a charge's transient
// settler errors add up (a node outage fails every check it meets), but
// the wait before its next check stays within stage.MaxChainRetry (30 s),
// not the retry policy's 10 minutes: once the node is back, every waiting
// charge is checked within half a minute. Before the bound, a workflow at
// its ninth attempt waited up to 8½ minutes after an outage had ended.
func TestSettleRetryAfterManyTransientErrorsIsBounded(t *testing.T) {
	const worker = "worker_settle_backoff"
	f := newFixture(t, func(o *settleflow.Options) {
		o.WorkerID = worker
		o.Retry = settleflow.RetryPolicy{Base: time.Second, Max: 10 * time.Minute, MaxAttempts: 10}
	})
	ctx := context.Background()
	wf := f.create(t, settleflow.Test, "T-outage", 0)
	now := time.Now().UTC().Truncate(time.Microsecond)
	claimed, err := f.store.ClaimWorkflows(ctx, settleflow.Claim{Owner: worker, Now: now, LeaseUntil: now.Add(time.Hour), Limit: 10})
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim: %d workflows, %v", len(claimed), err)
	}
	toSettling, _ := settleflow.Running.To(settleflow.Settling)
	cost, achieved := int64(160), settleflow.BasisPoints(4400)
	if applied, err := f.store.UpdateWorkflows(ctx, []settleflow.Update{{ID: wf.ID, Owner: worker, Status: settleflow.Running, Transition: toSettling,
		RunAt: now.Add(time.Hour), ActualCost: &cost, Achieved: &achieved, UpdatedAt: now, Sequence: new(uint64), Attempts: 11}}); err != nil || !applied[0] {
		t.Fatalf("to Settling: %v %v", applied, err)
	}
	w, err := f.store.GetWorkflow(ctx, settleflow.Test, wf.ID)
	if err != nil || w.Status != settleflow.Settling || w.Attempts != 11 {
		t.Fatalf("Settling at attempt 11: %+v %v", w, err)
	}
	if err := f.settler.Submit(ctx, []settleflow.Charge{chargeOf(w)}); err != nil {
		t.Fatal(err)
	}
	f.settler.statusErr = func([]settleflow.Charge) error { return errors.New("dial tcp 127.0.0.1:8545: connection refused") }

	before := time.Now()
	f.engine.SettleOnce(ctx, []*settleflow.Workflow{w}, []bool{false})

	w, err = f.store.GetWorkflow(ctx, settleflow.Test, wf.ID)
	if err != nil || w.Status != settleflow.Settling || w.Attempts != 12 {
		t.Fatalf("after a transient error: %+v %v; want Settling at attempt 12", w, err)
	}
	var runAt int64 // microseconds since the epoch, as the store keeps it
	if err := f.store.DB().Bun().QueryRowContext(ctx, `SELECT run_at FROM settleflow_workflows WHERE id = ?`, wf.ID).Scan(&runAt); err != nil {
		t.Fatal(err)
	}
	if wait := time.UnixMicro(runAt).Sub(before); wait > 30*time.Second+time.Second || wait <= 0 {
		t.Fatalf("next check in %s; want within 30s (the policy alone would wait up to %s)", wait, settleflow.RetryPolicy{Base: time.Second, Max: 10 * time.Minute}.Backoff(12))
	}
}
