package settleflow

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/internal/stage"
	"go.uber.org/zap"
)

// Clock tells the time. The engine reads every timestamp from it, in UTC.
type Clock interface {
	Now() time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now().UTC() }

// SystemClock is the real clock, in UTC.
var SystemClock Clock = systemClock{}

// Options configure an Engine. Store, Settler, Notifier and Products are
// required; everything else has a default.
type Options struct {
	Store    Store
	Settler  Settler
	Notifier Notifier
	Products *Products
	// Logger receives the engine's logs; default: none. Never given a secret.
	Logger *zap.Logger
	// Clock defaults to SystemClock.
	Clock Clock

	// Workers is how many products may execute at once. Default 100.
	Workers int
	// BatchSize bounds how many workflows or events one database transaction
	// claims or updates. Default 256.
	BatchSize int
	// PollInterval is how often the engine looks for due work when nothing
	// woke it. Default 500 ms.
	PollInterval time.Duration
	// ExecutionTimeout bounds one execution of a product. Default 5 min.
	ExecutionTimeout time.Duration
	// SettlementPollInterval is how long a Settling workflow waits between
	// checks of its charge. Default 2 s.
	SettlementPollInterval time.Duration
	// NotifyTimeout bounds one Notify call. Events handed to the Notifier are
	// leased for twice as long, so after a crash they are offered again
	// within that time. Default 30 s.
	NotifyTimeout time.Duration
	// Retry is the backoff after transient errors.
	Retry RetryPolicy
	// Retention says how long dispatched events and idempotency records
	// are kept (see Retention); workflows are always kept.
	Retention Retention
	// SettlementLease, if set, is asked before the settle stage claims or
	// submits: an engine that does not hold it executes workflows, moves
	// them to Settling and releases them, for the engine that holds it.
	// Default: none (this engine settles, as when it is the only one).
	SettlementLease SettlementLease
	// TestFaucet is what the test faucet deposits for a test customer seen
	// for the first time, with a settler that charges customer balances
	// (see Funds): 0 means DefaultTestFaucet (1,000.00), a negative amount
	// turns the faucet off. The customer TestCustomerInsufficientFunds is
	// never funded, and live customers never are.
	TestFaucet int64
	// FaucetWait bounds how long a test customer's first Create waits for
	// the faucet's deposit to be confirmed. Default 30 s.
	FaucetWait time.Duration
	// FaucetTakeover is how long a test customer's faucet, begun by a
	// request (here or in another engine) that has deposited nothing
	// since, holds off the others before one of them funds the customer
	// instead: the first one's process may have died before sending its
	// deposit. Default 10 s; a chain slower than that to confirm a deposit
	// may fund a customer twice (test money only).
	FaucetTakeover time.Duration
	// FundsPollInterval is how often deposits and withdrawals are followed
	// on chain. Default 2 s.
	FundsPollInterval time.Duration
	// WorkerID names this engine's leases; default a fresh one from the one
	// worker-id source (host, process id and a random part). Two engines
	// sharing a Store must have different ids. An engine restarted with the
	// same id takes its dead predecessor's work back at once, at Start,
	// instead of waiting for the leases to expire.
	WorkerID string
}

// Engine prices, runs and settles workflows. Create it with New; call Start
// to execute workflows in the background and Stop to shut down. Create, Quote,
// Fetch and List work between New and Stop whether or not Start was called.
type Engine struct {
	store    Store
	settler  Settler
	notifier Notifier
	products *Products
	log      *zap.Logger
	clock    Clock
	opts     Options
	lease    time.Duration

	creates chan *createRequest
	// createMu orders Creates against Stop: a Create holds it shared while
	// it queues, Stop takes it to set closed, so nothing is queued after the
	// commit loop's final drain.
	createMu  sync.RWMutex
	closed    bool
	stopping  chan struct{} // closed by Stop: the commit loop drains and exits
	committed chan struct{} // closed when the committer has exited
	stopOnce  sync.Once

	wake chan struct{} // new due workflows (non-blocking send)
	// wakeMu guards wakeTimes: when work this engine scheduled sooner than
	// the next poll comes due (a charge the settler expects confirmed in
	// 300 ms), sorted, at most maxWakeTimes.
	wakeMu    sync.Mutex
	wakeTimes []time.Time
	// eventsWake tells the dispatcher an event is in the outbox unleased
	// (a cancel's), so it is handed over now, not at the next poll.
	eventsWake chan struct{}
	// handoffCap is the room for event batches on their way to the
	// dispatcher in memory; tests shrink it.
	handoffCap int

	mu      sync.Mutex
	started bool
	run     *runState

	// terminal caches workflows in a terminal status (Settled, Failed,
	// Canceled): they never change again, so serving them from memory is
	// correct even when other processes share the Store. (A Settled
	// workflow's refunded amount does change: see cacheable.)
	terminal terminalCache

	// funds0 is the engine's memory of customer funds.
	funds0 fundsState
	// refundsWake tells the refund stage a refund was recorded.
	refundsWake chan struct{}
}

// runState is what the stages of one run (Start to Stop) share: the
// hand-offs between them and the context of the work in flight.
type runState struct {
	// stages are the run's stages, started in order, stopped in reverse.
	stages *stage.Group
	// workCtx is the context of executions and settler calls: canceled
	// when Stop's ctx ends before they finish (cancelWork).
	workCtx    context.Context
	cancelWork context.CancelFunc
	slots      chan struct{}  // one token per workflow in flight
	work       sync.WaitGroup // executions in flight
	results    chan execResult
	settle     chan settleItem
	// handoff carries events this engine just wrote, pre-leased, to the
	// dispatcher, so it need not claim them from the outbox.
	handoff chan []Event
	// settleTerm is the SettlementLease term whose start the claim loop has
	// handled (ReleaseSettling); touched by the claim loop only.
	settleTerm uint64
}

// New checks opts and returns an Engine. It starts no background work except
// the commit loop that groups concurrent Creates into one transaction.
func New(opts Options) (*Engine, error) {
	switch {
	case opts.Store == nil:
		return nil, errors.New("settleflow: Options.Store is required")
	case opts.Settler == nil:
		return nil, errors.New("settleflow: Options.Settler is required")
	case opts.Notifier == nil:
		return nil, errors.New("settleflow: Options.Notifier is required")
	case opts.Products == nil:
		return nil, errors.New("settleflow: Options.Products is required")
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.Clock == nil {
		opts.Clock = SystemClock
	}
	setDefault(&opts.Workers, 100)
	setDefault(&opts.BatchSize, 256)
	setDefault(&opts.PollInterval, 500*time.Millisecond)
	setDefault(&opts.ExecutionTimeout, 5*time.Minute)
	setDefault(&opts.SettlementPollInterval, 2*time.Second)
	setDefault(&opts.NotifyTimeout, 30*time.Second)
	setDefault(&opts.TestFaucet, DefaultTestFaucet)
	setDefault(&opts.FaucetWait, 30*time.Second)
	setDefault(&opts.FaucetTakeover, 10*time.Second)
	setDefault(&opts.FundsPollInterval, 2*time.Second)
	setDefault(&opts.Retry.Base, time.Second)
	setDefault(&opts.Retry.Max, 10*time.Minute)
	setDefault(&opts.Retry.MaxAttempts, 10)
	if opts.WorkerID == "" {
		opts.WorkerID = ids.NewWorker()
	}
	if err := opts.Retention.setDefaults(); err != nil {
		return nil, err
	}
	if opts.Workers < 1 || opts.BatchSize < 1 || opts.Retry.MaxAttempts < 1 {
		return nil, errors.New("settleflow: Workers, BatchSize and Retry.MaxAttempts must be positive")
	}
	e := &Engine{
		store:    opts.Store,
		settler:  opts.Settler,
		notifier: opts.Notifier,
		products: opts.Products,
		log:      opts.Logger,
		clock:    opts.Clock,
		opts:     opts,
		// A lease outlives the execution it covers by a margin, so a slow but
		// live worker is never overtaken.
		lease:     opts.ExecutionTimeout + opts.ExecutionTimeout/10 + time.Second,
		creates:   make(chan *createRequest, 4*opts.BatchSize),
		stopping:  make(chan struct{}),
		committed: make(chan struct{}),
		wake:      make(chan struct{}, 1),

		eventsWake:  make(chan struct{}, 1),
		refundsWake: make(chan struct{}, 1),
		handoffCap:  64,
	}
	go e.commitLoop()
	return e, nil
}

// settles reports whether this engine settles charges now (see
// Options.SettlementLease).
func (e *Engine) settles() bool {
	return e.opts.SettlementLease == nil || e.opts.SettlementLease.Term() != 0
}

// awaitStage waits for a pipeline stage's goroutine to end (done closed),
// gracefully until ctx ends; then it cancels the run's work in flight and
// waits for the goroutine to notice, returning ctx's error. A stage never
// started (done nil) is done.
func awaitStage(ctx context.Context, rs *runState, done <-chan struct{}) error {
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		rs.cancelWork()
		<-done
		return ctx.Err()
	}
}

// drainStage is a pipeline stage that runs one loop, which ends by itself
// once its input is closed by the stage after it; Stop waits for that, and
// when Stop's ctx ends first it cancels the run's work in flight.
type drainStage struct {
	name string
	rs   *runState
	run  func()
	done chan struct{}
}

func (s *drainStage) Name() string { return s.name }

func (s *drainStage) Start(context.Context) error {
	s.done = goStage(s.run)
	return nil
}

func (s *drainStage) Stop(ctx context.Context) error { return awaitStage(ctx, s.rs, s.done) }

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

func setDefault[T int | int64 | time.Duration](v *T, d T) {
	if *v == 0 {
		*v = d
	}
}

// drain is the batching of every stage: it appends to batch what ch holds
// right now, without waiting, until batch holds max items or ch is empty or
// closed. Work that arrives together is done together (one transaction, one
// settler call), and work that arrives alone is not held back.
func drain[T any](ch <-chan T, batch []T, max int) []T {
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

// maxWakeTimes bounds the remembered wake-up times; work scheduled beyond
// them waits for the next poll.
const maxWakeTimes = 64

// wakeAt makes the claim loop look for due work at t, if that is before its
// next poll: work this engine scheduled for soon does not wait a whole
// PollInterval. Times within a millisecond of one already held are merged.
func (e *Engine) wakeAt(t time.Time) {
	if !t.Before(e.now().Add(e.opts.PollInterval)) {
		return
	}
	e.wakeMu.Lock()
	i, found := slices.BinarySearchFunc(e.wakeTimes, t, func(a, b time.Time) int { return a.Compare(b) })
	if found || (i > 0 && t.Sub(e.wakeTimes[i-1]) < time.Millisecond) || (i < len(e.wakeTimes) && e.wakeTimes[i].Sub(t) < time.Millisecond) {
		e.wakeMu.Unlock()
		return
	}
	if len(e.wakeTimes) >= maxWakeTimes {
		if i == len(e.wakeTimes) {
			e.wakeMu.Unlock()
			return
		}
		e.wakeTimes = e.wakeTimes[:len(e.wakeTimes)-1]
	}
	e.wakeTimes = slices.Insert(e.wakeTimes, i, t)
	first := i == 0
	e.wakeMu.Unlock()
	if first {
		signal(e.wake) // the claim loop sets its timer anew
	}
}

// nextPoll is how long the claim loop sleeps: PollInterval, or less if a
// wake-up time comes first. claimed is when the claims it just made began:
// the wake-up times up to then are served and dropped; a later one, even if
// it has passed meanwhile, makes the loop claim again at once.
func (e *Engine) nextPoll(claimed time.Time) time.Duration {
	now := e.now()
	e.wakeMu.Lock()
	defer e.wakeMu.Unlock()
	served := 0
	for served < len(e.wakeTimes) && !e.wakeTimes[served].After(claimed) {
		served++
	}
	e.wakeTimes = e.wakeTimes[:copy(e.wakeTimes, e.wakeTimes[served:])]
	if len(e.wakeTimes) == 0 {
		return e.opts.PollInterval
	}
	return max(min(e.wakeTimes[0].Sub(now), e.opts.PollInterval), 0)
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Start runs the background workers: they claim due workflows (including any
// left Pending, Running or Settling by a crash), execute products, settle
// charges and hand events to the Notifier. ctx only bounds Start itself.
func (e *Engine) Start(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	select {
	case <-e.stopping:
		return ErrEngineStopped
	default:
	}
	if e.started {
		return errors.New("settleflow: engine already started")
	}
	if err := e.store.ReleaseLeases(ctx, e.opts.WorkerID, e.now()); err != nil {
		return fmt.Errorf("settleflow: releasing leases of a previous run: %w", err)
	}
	e.started = true
	workCtx, cancelWork := context.WithCancel(context.Background())
	rs := &runState{
		workCtx:    workCtx,
		cancelWork: cancelWork,
		slots:      make(chan struct{}, e.opts.Workers),
		results:    make(chan execResult, e.opts.Workers),
		settle:     make(chan settleItem, e.opts.Workers),
		handoff:    make(chan []Event, e.handoffCap),
	}
	// Started in this order and stopped in the reverse: a stage hands work
	// only to stages started before it, which drain after it stops.
	rs.stages = stage.NewGroup(
		stage.NewLoop("dispatch", func(ctx context.Context) { e.dispatchLoop(ctx, rs) }),
		stage.NewLoop("retention", e.retentionLoop),
		stage.NewLoop("funds", e.fundsLoop),
		stage.NewLoop("refunds", e.refundLoop),
		// The settle stage submits charges and follows each to the
		// chain's decision (settle.go); it ends once the finish and
		// execute stages have stopped and it has released what it holds.
		&drainStage{name: "settle", rs: rs, run: func() { e.settleLoop(workCtx, rs) }},
		// The finish stage records execution results and hands charges to
		// the settle stage (execute.go); it ends once the execute stage
		// has stopped and its results are recorded.
		&drainStage{name: "finish", rs: rs, run: func() { e.finishLoop(workCtx, rs) }},
		&executeStage{e: e, rs: rs},
	)
	if err := rs.stages.Start(ctx); err != nil {
		cancelWork()
		return fmt.Errorf("settleflow: %w", err)
	}
	e.run = rs
	e.log.Info("settleflow engine started", zap.String("worker", e.opts.WorkerID), zap.Int("workers", e.opts.Workers))
	return nil
}

// Stop shuts the engine down gracefully: no new Creates are taken (they fail
// with ErrEngineStopped) and those queued are committed; no new work is
// claimed; executions in flight finish and their results are recorded. If
// ctx ends first, executions are cancelled and their workflows released for
// another worker, so nothing is left half-done. Stop returns ctx's error if
// it had to cut work short.
func (e *Engine) Stop(ctx context.Context) error {
	e.stopOnce.Do(func() {
		e.createMu.Lock()
		e.closed = true
		e.createMu.Unlock()
		close(e.stopping)
	})
	<-e.committed
	e.mu.Lock()
	rs := e.run
	e.run = nil
	e.mu.Unlock()
	if rs == nil {
		return nil
	}
	// The stages stop in the reverse of their starting order: claims end,
	// executions finish (or are canceled when ctx ends), their results are
	// recorded, charges on their way are settled or released; the event
	// stages stop last. Events are durable in the outbox: whatever the
	// dispatcher has not handed over yet goes at the next Start.
	var cut error
	if err := rs.stages.Stop(ctx); err != nil {
		cut = ctx.Err()
		if cut == nil {
			cut = err
		}
	}
	rs.cancelWork()
	e.log.Info("settleflow engine stopped", zap.String("worker", e.opts.WorkerID))
	return cut
}

// now is the engine's time: UTC, in whole microseconds, the precision every
// Store keeps, so a workflow reads back exactly as Create returned it.
func (e *Engine) now() time.Time { return e.clock.Now().UTC().Truncate(time.Microsecond) }
