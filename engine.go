package settleflow

import (
	"context"
	"errors"
	"fmt"
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
	// TaskLease is how long a worker holds a remote product's task
	// between heartbeats (see Product.Remote): past it the attempt is over,
	// retried after its backoff. Default DefaultTaskLease (30 s).
	TaskLease time.Duration
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
	// the faucet's deposit to be confirmed; the wait also ends shortly
	// before the Create's context does. Past it the Create is refused with
	// a *FundsUnconfirmedError. Default 30 s.
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
	// FundsMaxAge bounds how old the engine's view of customer funds may
	// be: while the funds follower has not been current with the chain
	// (at the confirmation depth) for longer, a Create that needs funds
	// first follows the chain itself (for up to 5 s) and, if that fails,
	// is refused with a *FundsUnavailableError (HTTP 503
	// funds_unavailable), and FundsHealth reports it stale, until it is
	// current again. The view is as old as the node's newest block when
	// the settler tells it (FundsChainTimer): a stalled node that still
	// answers ages it too. Default DefaultFundsMaxAge (10 min); negative:
	// no bound.
	FundsMaxAge time.Duration
	// Services are background services the engine runs beside its own
	// stages, such as the webhook deliverer (*webhook.Service): Start
	// starts them first, in order, and Stop stops them last, in reverse,
	// so a service that takes over what the stages hand on runs for as
	// long as they do. Default: none.
	Services []Service
	// WorkerID names this engine's leases; default a fresh one from the one
	// worker-id source (host, process id and a random part). Two engines
	// sharing a Store must have different ids. An engine restarted with the
	// same id takes its dead predecessor's work back at once, at Start,
	// instead of waiting for the leases to expire.
	WorkerID string
}

// Service is a background service with the start/stop contract of the
// engine's own stages: Start begins its work and returns, its ctx bounding
// starting only; Stop ends the work, gracefully until its ctx ends, then cut
// short, and returns once the work has stopped. See Options.Services.
type Service interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// service is a Service as one of a run's stages, named by its Name method
// when it has one.
type service struct {
	Service
	name string
}

func (s service) Name() string { return s.name }

func serviceStage(i int, svc Service) stage.Stage {
	name := fmt.Sprintf("service %d (%T)", i, svc)
	if n, ok := svc.(interface{ Name() string }); ok {
		name = n.Name()
	}
	return service{Service: svc, name: name}
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

	// env is what every stage is handed: the Store, the clock, the logger,
	// the retry policy, the worker id and the batch and poll settings.
	env *stage.Env
	// commits is the commit stage, the group commit of Creates: it runs
	// from New to Stop, since Create works before Start.
	commits *stage.Commit
	// wake tells the execute stage's claims when due work is coming: a
	// Create committed, or a check this engine scheduled sooner than the
	// next poll.
	wake *stage.Wakeups
	// eventsWake tells the dispatch stage an event is in the outbox
	// unleased (a cancel's), so it is handed over now, not at the next
	// poll.
	eventsWake chan struct{}
	// handoffCap is the room for event batches on their way to the
	// dispatch stage in memory; tests shrink it.
	handoffCap int

	mu      sync.Mutex
	started bool
	run     *runState

	// terminal caches workflows in a terminal status (Settled, Failed,
	// Canceled): they never change again, so serving them from memory is
	// correct even when other processes share the Store. (A Settled
	// workflow's refunded amount does change: see cacheable.)
	terminal terminalCache

	// tasks are the remote products' executions waiting for or held by
	// workers.
	tasks *taskHub

	// funds0 is the engine's memory of customer funds.
	funds0 fundsState
	// refundsWake tells the refund stage a refund was recorded.
	refundsWake chan struct{}
}

// runState is one run, from Start to Stop: its stages and the in-memory
// lines between them.
type runState struct {
	// stages are the run's stages, started in order, stopped in reverse.
	stages *stage.Group
	lines  *stage.Lines
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
	for i, svc := range opts.Services {
		if svc == nil {
			return nil, fmt.Errorf("settleflow: Options.Services[%d] is nil", i)
		}
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
	setDefault(&opts.TaskLease, DefaultTaskLease)
	setDefault(&opts.SettlementPollInterval, 2*time.Second)
	setDefault(&opts.NotifyTimeout, 30*time.Second)
	setDefault(&opts.TestFaucet, DefaultTestFaucet)
	setDefault(&opts.FaucetWait, 30*time.Second)
	setDefault(&opts.FaucetTakeover, 10*time.Second)
	setDefault(&opts.FundsPollInterval, 2*time.Second)
	setDefault(&opts.FundsMaxAge, DefaultFundsMaxAge)
	setDefault(&opts.Retry.Base, time.Second)
	setDefault(&opts.Retry.Max, 10*time.Minute)
	setDefault(&opts.Retry.MaxAttempts, 10)
	if opts.WorkerID == "" {
		opts.WorkerID = ids.NewWorker(opts.Clock.Now())
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
		tasks:    newTaskHub(),
		log:      opts.Logger,
		clock:    opts.Clock,
		opts:     opts,
		// A lease outlives the execution it covers by a margin, so a slow but
		// live worker is never overtaken.
		lease:       opts.ExecutionTimeout + opts.ExecutionTimeout/10 + time.Second,
		eventsWake:  make(chan struct{}, 1),
		refundsWake: make(chan struct{}, 1),
		handoffCap:  64,
	}
	e.env = &stage.Env{
		Store:                  opts.Store,
		Log:                    opts.Logger,
		Now:                    e.now,
		Backoff:                opts.Retry.Backoff,
		WorkerID:               opts.WorkerID,
		BatchSize:              opts.BatchSize,
		PollInterval:           opts.PollInterval,
		NotifyTimeout:          opts.NotifyTimeout,
		Lease:                  e.lease,
		SettlementPollInterval: opts.SettlementPollInterval,
		SettlementLease:        opts.SettlementLease,
	}
	e.wake = stage.NewWakeups(e.now, opts.PollInterval)
	e.commits = stage.NewCommit(e.env)
	if err := e.commits.Start(context.Background()); err != nil {
		return nil, err
	}
	return e, nil
}

func setDefault[T int | int64 | time.Duration](v *T, d T) {
	if *v == 0 {
		*v = d
	}
}

// Start runs the background workers: they claim due workflows (including any
// left Pending, Running or Settling by a crash), execute products, settle
// charges and hand events to the Notifier. Options.Services start first. ctx
// only bounds Start itself.
func (e *Engine) Start(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.commits.Stopped() {
		return ErrEngineStopped
	}
	if e.started {
		return errors.New("settleflow: engine already started")
	}
	if err := e.store.ReleaseLeases(ctx, e.opts.WorkerID, e.now()); err != nil {
		return fmt.Errorf("settleflow: releasing leases of a previous run: %w", err)
	}
	e.tasks.start(e.store)
	rs := &runState{lines: stage.NewLines(e.opts.Workers, e.handoffCap)}
	rec := stage.NewRecorder(e.env, rs.lines, e.notifier, e.eventsWake)
	execute := stage.NewExecute(e.env, rs.lines, e.wake, e.execute)
	// Started in this order and stopped in the reverse: a stage hands work
	// only to stages started before it, which drain after it stops.
	var stages []stage.Stage
	for i, svc := range e.opts.Services {
		stages = append(stages, serviceStage(i, svc))
	}
	stages = append(stages,
		stage.NewDispatch(e.env, rs.lines, e.notifier, e.eventsWake),
		stage.NewRetention(e.env, e.opts.Retention.Interval, e.Prune),
		stage.NewFunds(e.env, e.fundedEnvs(), e.opts.FundsPollInterval, e.SyncFunds),
	)
	if f, ok := e.settler.(Funds); ok {
		stages = append(stages, stage.NewRefunds(e.env, f, e.refundsWake, e.eventsWake,
			func(env Environment, id string) { e.terminal.drop(env, id) }))
	}
	stages = append(stages,
		// The settle stage submits charges and follows each to the
		// chain's decision; it ends once the finish and execute stages
		// have stopped and it has released what it holds.
		stage.NewSettle(e.env, rs.lines, rec, e.wake, e.settler),
		// The finish stage records execution results and hands charges to
		// the settle stage; it ends once the execute stage has stopped and
		// its results are recorded.
		stage.NewFinish(e.env, rs.lines, rec, execute.Results(), e.finish),
		execute,
	)
	rs.stages = stage.NewGroup(stages...)
	if err := rs.stages.Start(ctx); err != nil {
		rs.lines.CancelWork()
		return fmt.Errorf("settleflow: %w", err)
	}
	// Started only once every stage and service has: a Start that failed
	// (a service that could not start) may be called again.
	e.started = true
	e.run = rs
	// From now on a Create takes a free worker as it is inserted.
	e.commits.SetClaimer(execute)
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
	_ = e.commits.Stop(ctx) // answers every Create queued, whatever ctx does
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
	// dispatch stage has not handed over yet goes at the next Start.
	// Tasks no worker claimed are withdrawn (their workflows released);
	// those workers hold finish within ctx, like executions in process.
	e.tasks.stop()
	var cut error
	if err := rs.stages.Stop(ctx); err != nil {
		cut = ctx.Err()
		if cut == nil {
			cut = err
		}
	}
	rs.lines.CancelWork()
	e.tasks.unsubscribe()
	e.log.Info("settleflow engine stopped", zap.String("worker", e.opts.WorkerID))
	return cut
}

// now is the engine's time: UTC, in whole microseconds, the precision every
// Store keeps, so a workflow reads back exactly as Create returned it.
func (e *Engine) now() time.Time { return e.clock.Now().UTC().Truncate(time.Microsecond) }
