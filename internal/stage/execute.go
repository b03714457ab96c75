package stage

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/settleflow/settleflow/driver"
	"github.com/settleflow/settleflow/wire"
)

// Execute is the execute stage: whenever a slot is free it claims due
// workflows, runs each Running one's product in an execution of its own (run)
// and hands the result to the finish stage; the Settling ones it claims go to
// the settle stage. Stop ends the claims, then waits for the executions
// (canceling them when Stop's ctx ends) and closes the finish stage's line.
// R is the engine's record of one execution.
type Execute[R any] struct {
	env     *Env
	lines   *Lines
	wake    *Wakeups
	run     func(ctx context.Context, w *wire.Workflow) R
	results chan R
	work    sync.WaitGroup // executions in flight

	// settleTerm is the SettlementLease term whose start the claims have
	// handled (ReleaseSettling); touched by the claims only.
	settleTerm   uint64
	cancelClaims context.CancelFunc
	claimsDone   chan struct{}

	// mu orders Reserve against Stop (no slot is lent once Stop has begun
	// to wait for the executions) and against a claim in progress, which
	// holds every slot free while it asks the Store for that many
	// workflows: Reserve waits for it to give back those it did not use.
	mu       sync.Mutex
	stopping bool
}

// NewExecute returns the execute stage of a run, whose executions call run.
func NewExecute[R any](env *Env, lines *Lines, wake *Wakeups, run func(ctx context.Context, w *wire.Workflow) R) *Execute[R] {
	return &Execute[R]{env: env, lines: lines, wake: wake, run: run, results: make(chan R, cap(lines.slots))}
}

// Results is the finish stage's line: one result per execution, closed
// when the stage has stopped.
func (s *Execute[R]) Results() <-chan R { return s.results }

// Name implements Stage.
func (s *Execute[R]) Name() string { return "execute" }

// Start implements Stage.
func (s *Execute[R]) Start(context.Context) error {
	claimCtx, cancel := context.WithCancel(context.Background())
	s.cancelClaims = cancel
	s.claimsDone = goStage(func() { s.claimLoop(claimCtx) })
	return nil
}

// Stop implements Stage.
func (s *Execute[R]) Stop(ctx context.Context) error {
	if s.cancelClaims == nil {
		return nil
	}
	s.cancelClaims()
	<-s.claimsDone
	s.mu.Lock()
	s.stopping = true
	s.mu.Unlock()
	executed := goStage(s.work.Wait)
	err := await(ctx, s.lines, executed)
	close(s.results) // no execution is left to send
	return err
}

// claimLoop leases due workflows whenever a worker slot is free and hands
// each to an execution (Running) or to the settle stage (Settling).
func (s *Execute[R]) claimLoop(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-s.wake.c:
		}
		// Claim until the queue is empty (or no slot frees up).
		claimed := s.env.Now()
		for ctx.Err() == nil && s.claimOnce(ctx) > 0 {
		}
		timer.Reset(s.wake.next(claimed))
	}
}

// claimOnce claims one batch; it returns how many it claimed, or -1 when no
// slot is free or the store failed.
func (s *Execute[R]) claimOnce(ctx context.Context) int {
	// Take at least one slot, blocking, then as many more as are free.
	select {
	case s.lines.slots <- struct{}{}:
	case <-ctx.Done():
		return -1
	}
	s.mu.Lock()
	free := 1
	for free < s.env.BatchSize {
		select {
		case s.lines.slots <- struct{}{}:
			free++
			continue
		default:
		}
		break
	}
	now := s.env.Now()
	settles := s.takeSettlement(ctx, now)
	ws, err := s.env.Store.ClaimWorkflows(ctx, driver.Claim{Owner: s.env.WorkerID, Now: now, LeaseUntil: now.Add(s.env.Lease), Limit: free,
		ExcludeSettling: !settles})
	if err != nil {
		if ctx.Err() == nil {
			s.env.Log.Error("claiming workflows failed", zap.Error(err))
		}
		ws = nil
	}
	s.lines.release(free - len(ws))
	s.mu.Unlock()
	if err != nil {
		return -1
	}
	for _, w := range ws {
		switch w.Status {
		case wire.Running:
			s.work.Add(1)
			go s.execute(w)
		case wire.Settling:
			s.lines.settle <- settleItem{wf: w, leaseUntil: now.Add(s.env.Lease)}
		default:
			s.env.Log.Error("store returned a claimed workflow in an unexpected status", zap.String("workflow", w.ID), zap.String("status", string(w.Status)))
			s.lines.release(1)
		}
	}
	return len(ws)
}

// Reserve implements Claimer: it lends up to n worker slots free now, for
// workflows inserted already claimed. It never waits for a slot to free
// up, only for a claim in progress to give back the slots it did not use.
// It returns nil when none is free or the stage is stopping.
func (s *Execute[R]) Reserve(n int) *Reservation {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping || s.cancelClaims == nil {
		return nil
	}
	k := 0
	for k < n {
		select {
		case s.lines.slots <- struct{}{}:
			k++
			continue
		default:
		}
		break
	}
	if k == 0 {
		return nil
	}
	s.work.Add(k) // Stop waits for what is lent, run or given back
	return &Reservation{
		Owner:      s.env.WorkerID,
		LeaseUntil: s.env.Now().Add(s.env.Lease),
		N:          k,
		run:        func(w *wire.Workflow) { go s.execute(w) },
		release: func(k int) {
			s.lines.release(k)
			s.work.Add(-k)
		},
	}
}

func (s *Execute[R]) execute(w *wire.Workflow) {
	defer s.work.Done()
	s.results <- s.run(s.lines.WorkCtx, w)
}

// takeSettlement reports whether this engine settles now; at the start of
// each SettlementLease term it first takes the Settling workflows of former
// holders (ReleaseSettling), so a holder that died leaves none waiting out
// its leases.
func (s *Execute[R]) takeSettlement(ctx context.Context, now time.Time) bool {
	if s.env.SettlementLease == nil {
		return true
	}
	term := s.env.SettlementLease.Term()
	if term == 0 || term == s.settleTerm {
		return term != 0
	}
	if err := s.env.Store.ReleaseSettling(ctx, now); err != nil {
		if ctx.Err() == nil {
			s.env.Log.Error("taking over the Settling workflows of a former settlement lease holder failed; will retry", zap.Error(err))
		}
		return false
	}
	s.settleTerm = term
	s.env.Log.Info("settlement lease held: settling, with the Settling workflows of former holders", zap.Uint64("term", term))
	return true
}

// Finish is the finish stage: it records execution results in batches, each
// as decide makes it: a success moves to Settling and goes on to the settle
// stage (or, when another engine settles, is released to it through the
// Store); a failure is retried or fails. It ends once the execute stage has
// stopped and every result is recorded, and then closes the settle stage's
// line.
type Finish[R any] struct {
	env     *Env
	lines   *Lines
	rec     *Recorder
	results <-chan R
	decide  func(ctx context.Context, r R, now time.Time) (u driver.Update, settling *wire.Workflow)
	done    chan struct{}
}

// NewFinish returns the finish stage of a run. decide is the update that
// records r (Owner, Status Running and UpdatedAt set) and, when r moves its
// workflow to Settling, the workflow as it is then.
func NewFinish[R any](env *Env, lines *Lines, rec *Recorder, results <-chan R,
	decide func(ctx context.Context, r R, now time.Time) (driver.Update, *wire.Workflow)) *Finish[R] {
	return &Finish[R]{env: env, lines: lines, rec: rec, results: results, decide: decide}
}

// Name implements Stage.
func (f *Finish[R]) Name() string { return "finish" }

// Start implements Stage.
func (f *Finish[R]) Start(context.Context) error {
	f.done = goStage(f.loop)
	return nil
}

// Stop implements Stage.
func (f *Finish[R]) Stop(ctx context.Context) error { return await(ctx, f.lines, f.done) }

func (f *Finish[R]) loop() {
	defer close(f.lines.settle)
	batch := make([]R, 0, f.env.BatchSize)
	for first := range f.results {
		batch = Drain(f.results, append(batch[:0], first), f.env.BatchSize)
		f.finish(f.lines.WorkCtx, batch)
	}
}

func (f *Finish[R]) finish(ctx context.Context, batch []R) {
	now := f.env.Now()
	settles := f.env.Settles()
	us := make([]driver.Update, len(batch))
	settling := make([]*wire.Workflow, len(batch))
	for i, r := range batch {
		u, next := f.decide(ctx, r, now)
		switch {
		case next == nil:
		case !settles:
			// Another engine holds the SettlementLease: hand the charge to
			// it through the Store, due now.
			u.Release, u.RunAt = true, now
		default:
			// Keep the lease: this worker submits the charge next, under
			// the sequence the Store gives it in the same transaction (a
			// charge of 0 takes none: it never reaches the chain), and
			// holds the workflow until the chain decides.
			u.RunAt = now.Add(f.env.SettleLease())
			if next.ChargeAmount() > 0 {
				u.Sequence = &next.Sequence
			}
			settling[i] = next
		}
		us[i] = u
	}
	applied := f.rec.Record(ctx, us)
	for i := range batch {
		if applied[i] && settling[i] != nil {
			if settling[i].Sequence == 0 && settling[i].ChargeAmount() > 0 {
				// A Store that broke its contract: never submit a charge
				// without its number. The lease ends and the settle stage
				// claims the workflow again (numbering it then).
				f.env.Log.Error("store moved a workflow to Settling without giving it a sequence; its charge waits for the lease to end", zap.String("workflow", settling[i].ID))
				f.lines.release(1)
				continue
			}
			f.lines.settle <- settleItem{wf: settling[i], fresh: true, leaseUntil: us[i].RunAt}
			continue
		}
		f.lines.release(1)
	}
}
