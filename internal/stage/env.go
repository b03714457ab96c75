package stage

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/settleflow/settleflow/driver"
	"github.com/settleflow/settleflow/wire"
)

// Env is what the engine hands every stage: one Store, one clock, one
// logger, one retry policy, one worker id, and the engine's batch, poll and
// lease settings. Stages read it and never change it.
type Env struct {
	Store driver.Store
	Log   *zap.Logger
	// Now is the engine's clock: UTC, in whole microseconds.
	Now func() time.Time
	// Backoff is the engine's retry policy: the delay after the given
	// failed attempt (1-based).
	Backoff func(attempt int) time.Duration
	// WorkerID names this engine's leases.
	WorkerID string
	// BatchSize bounds the items one transaction or settler call takes.
	BatchSize int
	// PollInterval is how often a stage looks for due work that nothing
	// woke it for.
	PollInterval time.Duration
	// NotifyTimeout bounds one Notify call; events are leased for twice as
	// long.
	NotifyTimeout time.Duration
	// Lease is how long a claimed workflow or refund is leased.
	Lease time.Duration
	// SettlementPollInterval is the longest a pending charge waits between
	// checks.
	SettlementPollInterval time.Duration
	// SettlementLease, if not nil, says whether this engine settles now
	// (see Settles).
	SettlementLease driver.SettlementLease
}

// Settles reports whether this engine settles charges now: it holds the
// SettlementLease, or there is none (it is the only engine).
func (e *Env) Settles() bool {
	return e.SettlementLease == nil || e.SettlementLease.Term() != 0
}

// MaxChainRetry caps the wait after a transient error of a settlement or
// refund check: the engine's retry policy (Options.Retry, up to 10 minutes
// by default) is for products, whose failures are their own; a settler's
// are mostly the node's (an outage, a rate limit), shared by every charge
// and ended for all of them at once, and a charge's attempts add up across
// them. Past a long outage, the charges then waited up to the policy's
// maximum after the node was back (the faulty-RPC end to end of session 21
// found one workflow still Settling 5 minutes after its blackout, at its
// ninth attempt). The chain adapter's own backoff has the same bound.
const MaxChainRetry = 30 * time.Second

// ChainBackoff is the wait after the attempt-th transient error of a
// settlement or refund check: the retry policy's, at most MaxChainRetry.
func (e *Env) ChainBackoff(attempt int) time.Duration {
	return min(e.Backoff(attempt), MaxChainRetry)
}

// minSettleLease is the shortest lease on a Settling workflow.
const minSettleLease = 30 * time.Second

// SettleLease is how long an engine leases a Settling workflow it holds in
// memory (the finish stage's move to Settling, the settle stage's renewals):
// long enough that it is renewed only every half of it, short enough that
// if the engine dies, another takes the charge over soon.
func (e *Env) SettleLease() time.Duration {
	return max(minSettleLease, 4*e.SettlementPollInterval)
}

// Lines are the in-memory hand-offs of one run, from Start to Stop, between
// stages that would otherwise meet in the Store: a workflow claimed or
// executed by this engine goes to the settle stage (Settling), and the
// events the engine writes go to the dispatch stage, already leased. Each
// line has one stage that sends and one that receives; the sender closes it,
// or the run ends.
type Lines struct {
	// WorkCtx is the context of executions and settler calls: canceled
	// (CancelWork) when Stop's ctx ends before they finish.
	WorkCtx    context.Context
	cancelWork context.CancelFunc
	// slots holds one token per workflow this engine holds, from its claim
	// until it is released, fails or leaves the settle stage: at most
	// Workers at once.
	slots chan struct{}
	// settle carries Settling workflows to the settle stage.
	settle chan settleItem
	// handoff carries events this engine just wrote, pre-leased, to the
	// dispatch stage, so it need not claim them from the outbox.
	handoff chan []wire.Event
}

// settleItem is one Settling workflow on the settle stage's line (from the
// execute stage's claims or the finish stage) or held by the settle stage
// between checks.
type settleItem struct {
	wf *wire.Workflow
	// fresh: moved to Settling just now by this engine, so never submitted.
	fresh bool
	// leaseUntil is when this engine's lease on the workflow ends: the
	// RunAt of the last write that kept the lease.
	leaseUntil time.Time
	// due is when a held workflow's charge is asked about next.
	due time.Time
	// since is when this engine first submitted the charge, or, for a
	// workflow it claimed already Settling, first asked about it: how long
	// the charge has been pending, as far as this engine knows (see
	// showPendingAfter). Zero until the item's first settle round.
	since time.Time
	// unshown is the pending settlement the last check found that the
	// Store does not hold yet (younger than showPendingAfter): written if
	// the workflow is released at Stop.
	unshown *wire.Settlement
}

// SettlerTimeout bounds the Settler calls of one batch.
const SettlerTimeout = time.Minute

// NewLines returns the lines of one run for an engine of workers slots;
// handoffCap is the room for event batches on their way to the dispatch
// stage.
func NewLines(workers, handoffCap int) *Lines {
	ctx, cancel := context.WithCancel(context.Background())
	return &Lines{
		WorkCtx:    ctx,
		cancelWork: cancel,
		slots:      make(chan struct{}, workers),
		settle:     make(chan settleItem, workers),
		handoff:    make(chan []wire.Event, handoffCap),
	}
}

// CancelWork cancels the executions and settler calls in flight.
func (l *Lines) CancelWork() { l.cancelWork() }

// release gives back n slots.
func (l *Lines) release(n int) {
	for range n {
		<-l.slots
	}
}

// Signal wakes whoever waits on c, without blocking: c has room for one
// signal, and a second one before it is taken is the same signal.
func Signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Drain is the batching of every stage (and of the webhook deliverer's
// recorder): it appends to batch what ch holds
// right now, without waiting, until batch holds max items or ch is empty or
// closed. Work that arrives together is done together (one transaction, one
// settler call), and work that arrives alone is not held back.
func Drain[T any](ch <-chan T, batch []T, max int) []T {
	for len(batch) < max {
		select {
		case v, ok := <-ch:
			if !ok {
				return batch
			}
			batch = append(batch, v)
		default:
			return batch
		}
	}
	return batch
}

// goStage runs fn in a goroutine and returns the channel closed when it
// returns.
func goStage(fn func()) chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	return done
}

// await waits for a pipeline stage's goroutine to end (done closed),
// gracefully until ctx ends; then it cancels the run's work in flight and
// waits for the goroutine to notice, returning ctx's error. A stage never
// started (done nil) is done.
func await(ctx context.Context, l *Lines, done <-chan struct{}) error {
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		l.CancelWork()
		<-done
		return ctx.Err()
	}
}

// untilWritten applies us with write, retrying until the Store answers:
// what a stage computed is not thrown away for a passing database error.
// It gives up only when ctx ends (the leases then expire and the work is
// redone), reporting nothing applied. what names the updates in the log.
func untilWritten[U any](ctx context.Context, env *Env, what string, us []U, write func(context.Context, []U) ([]bool, error)) []bool {
	for attempt := 1; ; attempt++ {
		applied, err := write(context.WithoutCancel(ctx), us)
		if err == nil {
			return applied
		}
		env.Log.Error("recording "+what+" failed; retrying", zap.Int("attempt", attempt), zap.Error(err))
		select {
		case <-ctx.Done():
			return make([]bool, len(us))
		case <-time.After(min(time.Duration(attempt)*100*time.Millisecond, 5*time.Second)):
		}
	}
}

// Claimer lends the commit stage worker slots, so that a Create's workflow
// can be inserted already claimed and run at once, its claim costing no
// write of its own (driver.Insert.Claim). The execute stage is one.
type Claimer interface {
	// Reserve lends up to n slots free now, or returns nil.
	Reserve(n int) *Reservation
}

// Reservation is worker slots lent for inserts: N of them, under the lease
// Owner holds until LeaseUntil. Each must be either run (Run, a workflow
// inserted claimed) or given back (Release).
type Reservation struct {
	Owner      string
	LeaseUntil time.Time
	N          int
	run        func(*wire.Workflow)
	release    func(n int)
}

// Run runs w, inserted claimed under r, on one of r's slots.
func (r *Reservation) Run(w *wire.Workflow) { r.run(w) }

// Release gives back n of r's slots, unused; nothing on a nil r.
func (r *Reservation) Release(n int) {
	if r != nil && n > 0 {
		r.release(n)
	}
}
