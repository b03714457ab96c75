package settleflow

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/settleflow/settleflow/internal/ids"
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
	// WorkerID names this engine's leases; default a random id. Two engines
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
	// eventsWake tells the dispatcher an event is in the outbox unleased
	// (a cancel's), so it is handed over now, not at the next poll.
	eventsWake chan struct{}

	mu      sync.Mutex
	started bool
	run     *runState

	// terminal caches workflows in a terminal status (Settled, Failed,
	// Canceled): they never change again, so serving them from memory is
	// correct even when other processes share the Store.
	terminal terminalCache
}

// runState is the background machinery between Start and Stop.
type runState struct {
	cancelClaims context.CancelFunc // stops the claimer and dispatcher
	cancelWork   context.CancelFunc // cancels executions and settler calls
	cancelEvents context.CancelFunc // stops the dispatcher
	claimsDone   chan struct{}
	eventsDone   chan struct{}
	slots        chan struct{} // one token per workflow in flight
	results      chan execResult
	settle       chan settleItem
	// handoff carries events this engine just wrote, pre-leased, to the
	// dispatcher, so it need not claim them from the outbox.
	handoff   chan []Event
	pruneDone chan struct{}  // closed when the retention loop returns
	work      sync.WaitGroup // executions in flight
	pipeline  sync.WaitGroup // finisher and settler
}

var customerIDPattern = regexp.MustCompile(`^cus_[A-Za-z0-9_-]{1,255}$`)

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
	setDefault(&opts.Retry.Base, time.Second)
	setDefault(&opts.Retry.Max, 10*time.Minute)
	setDefault(&opts.Retry.MaxAttempts, 10)
	if opts.WorkerID == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		opts.WorkerID = "worker_" + hex.EncodeToString(b[:])
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

		eventsWake: make(chan struct{}, 1),
	}
	go e.commitLoop()
	return e, nil
}

func setDefault[T int | time.Duration](v *T, d T) {
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

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// CreateParams asks for a workflow.
type CreateParams struct {
	Environment Environment
	Product     string
	CustomerID  string
	// Payload is the product's input: a JSON object.
	Payload json.RawMessage
	// IdempotencyKey, optional (at most 255 characters): the same key with
	// the same parameters within 24 h returns the first workflow, as created,
	// instead of a new one; with other parameters it is an error.
	IdempotencyKey string
}

// ErrIdempotencyKeyReused is returned by Create when the idempotency key was
// used in the last 24 h with other parameters.
var ErrIdempotencyKeyReused = errors.New("settleflow: idempotency key reused with different parameters")

// QuoteResult is the price of a would-be workflow.
type QuoteResult struct {
	Quoted        Money
	EstimatedCost int64
	TargetMargin  BasisPoints
}

// Quote validates p and prices it without creating anything. Errors are
// *InvalidError naming the parameter at fault, or ErrEnvironmentNotConfigured
// when the Settler cannot settle p.Environment.
func (e *Engine) Quote(ctx context.Context, p CreateParams) (QuoteResult, error) {
	if err := ctx.Err(); err != nil {
		return QuoteResult{}, err
	}
	if !p.Environment.Valid() {
		return QuoteResult{}, fmt.Errorf("settleflow: environment %q is neither test nor live", p.Environment)
	}
	if !e.settler.Configured(p.Environment) {
		// Refused before the product runs (and spends its cost) for a charge
		// that could never settle.
		return QuoteResult{}, fmt.Errorf("%w: %s", ErrEnvironmentNotConfigured, p.Environment)
	}
	switch {
	case p.Product == "":
		return QuoteResult{}, &InvalidError{Code: CodeParameterMissing, Param: "product", Message: "product is required"}
	case p.CustomerID == "":
		return QuoteResult{}, &InvalidError{Code: CodeParameterMissing, Param: "customerId", Message: "customerId is required"}
	case !customerIDPattern.MatchString(p.CustomerID):
		return QuoteResult{}, &InvalidError{Code: CodeParameterInvalid, Param: "customerId",
			Message: "customerId must be cus_ followed by 1-255 of A-Z, a-z, 0-9, _ and -"}
	case len(p.Payload) == 0:
		return QuoteResult{}, &InvalidError{Code: CodeParameterMissing, Param: "payload", Message: "payload is required"}
	case len(p.IdempotencyKey) > 255:
		return QuoteResult{}, &InvalidError{Code: CodeParameterInvalid, Param: "Idempotency-Key", Message: "an idempotency key has at most 255 characters"}
	}
	prod, ok := e.products.get(p.Product)
	if !ok {
		return QuoteResult{}, &InvalidError{Code: CodeProductNotFound, Param: "product", Message: fmt.Sprintf("no product named %q", p.Product)}
	}
	cost, err := prod.estimate(p.Payload)
	if err != nil {
		return QuoteResult{}, err
	}
	amount, err := prod.price.Quote(cost)
	if err != nil {
		return QuoteResult{}, &InvalidError{Code: CodeQuoteOutOfRange, Param: "payload", Message: err.Error()}
	}
	return QuoteResult{Quoted: Money{Amount: amount, Currency: Currency}, EstimatedCost: cost, TargetMargin: prod.price.TargetMargin}, nil
}

type createRequest struct {
	ins  Insert
	done chan createResult
}

type createResult struct {
	res InsertResult
	err error
}

// Create validates and prices p, and durably records the workflow as Pending
// before it returns: a workflow Create returned survives a crash. It returns
// the workflow as created and whether it is a replay of an earlier Create
// with the same idempotency key. Concurrent Creates are committed together
// in one transaction.
func (e *Engine) Create(ctx context.Context, p CreateParams) (wf *Workflow, replayed bool, err error) {
	// The payload is stored compact so a replay compares equal bytes, and
	// it is compacted before Quote so that the bytes stored are the very
	// bytes the strict decoder validated and the product priced. (Bytes
	// Compact refuses go to Quote as they are, which refuses them with an
	// error naming the fault.)
	payload, cerr := compactJSON(p.Payload)
	if cerr == nil {
		p.Payload = payload
	}
	q, err := e.Quote(ctx, p)
	if err != nil {
		return nil, false, err
	}
	if cerr != nil {
		return nil, false, &InvalidError{Code: CodeParameterInvalid, Param: "payload", Message: "payload is not valid JSON"}
	}
	now := e.now()
	wf = &Workflow{
		ID:         ids.New(ids.Workflow, now),
		Object:     "workflow",
		Livemode:   p.Environment.Livemode(),
		Product:    p.Product,
		CustomerID: p.CustomerID,
		Payload:    payload,
		Quoted:     q.Quoted,
		Margin:     Margin{Target: q.TargetMargin},
		Status:     Pending,
		CreatedAt:  now,
		UpdatedAt:  now,
	}
	req := &createRequest{ins: Insert{Workflow: wf}, done: make(chan createResult, 1)}
	if p.IdempotencyKey != "" {
		req.ins.IdempotencyKey = p.IdempotencyKey
		req.ins.RequestHash = requestHash(p.Product, p.CustomerID, payload)
	}
	e.createMu.RLock()
	if e.closed {
		e.createMu.RUnlock()
		return nil, false, ErrEngineStopped
	}
	select {
	case e.creates <- req:
		e.createMu.RUnlock()
	case <-ctx.Done():
		e.createMu.RUnlock()
		return nil, false, ctx.Err()
	}
	// Once queued, the request is answered whatever ctx does: the caller
	// must learn whether the workflow exists.
	r := <-req.done
	if r.err != nil {
		return nil, false, r.err
	}
	if r.res.Existing != nil {
		if r.res.ExistingHash != req.ins.RequestHash {
			return nil, false, ErrIdempotencyKeyReused
		}
		return r.res.Existing, true, nil
	}
	signal(e.wake)
	return wf, false, nil
}

func requestHash(product, customerID string, payload []byte) string {
	h := sha256.New()
	for _, part := range [][]byte{[]byte(product), []byte(customerID), payload} {
		fmt.Fprintf(h, "%d:", len(part))
		h.Write(part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func compactJSON(raw []byte) (json.RawMessage, error) {
	var b bytes.Buffer
	b.Grow(len(raw))
	if err := json.Compact(&b, raw); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// commitLoop is the group commit: it takes every Create waiting and inserts
// them in one transaction, so many concurrent Creates cost one commit.
func (e *Engine) commitLoop() {
	defer close(e.committed)
	batch := make([]*createRequest, 0, e.opts.BatchSize)
	for {
		var first *createRequest
		select {
		case first = <-e.creates:
		case <-e.stopping:
			// No Create can queue any more: commit what is queued, then leave.
			for {
				select {
				case r := <-e.creates:
					e.commit([]*createRequest{r})
				default:
					return
				}
			}
		}
		batch = drain(e.creates, append(batch[:0], first), e.opts.BatchSize)
		e.commit(batch)
	}
}

func (e *Engine) commit(batch []*createRequest) {
	ins := make([]Insert, len(batch))
	for i, r := range batch {
		ins[i] = r.ins
	}
	// Not the callers' contexts: one caller giving up must not abort the
	// others' transaction.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := e.store.InsertWorkflows(ctx, ins)
	if err != nil && len(batch) > 1 && !isStoreDown(err) {
		// Isolate the request at fault rather than failing its neighbours.
		for _, r := range batch {
			e.commit([]*createRequest{r})
		}
		return
	}
	for i, r := range batch {
		if err != nil {
			r.done <- createResult{err: fmt.Errorf("settleflow: create: %w", err)}
			continue
		}
		r.done <- createResult{res: res[i]}
	}
}

func isStoreDown(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// Fetch returns the workflow with id in env, or ErrNotFound (also for an id
// of the other environment). The caller may not modify the result.
func (e *Engine) Fetch(ctx context.Context, env Environment, id string) (*Workflow, error) {
	if !ids.Valid(ids.Workflow, id) {
		return nil, ErrNotFound
	}
	if w, ok := e.terminal.get(env, id); ok {
		return w, nil
	}
	w, err := e.store.GetWorkflow(ctx, env, id)
	if err == nil && w.Status.Terminal() {
		e.terminal.put(env, w)
	}
	return w, err
}

// terminalCacheSize bounds the cache of terminal workflows.
const terminalCacheSize = 10_000

type terminalCache struct {
	mu sync.RWMutex
	m  map[string]*Workflow // by environment + id
}

func (c *terminalCache) get(env Environment, id string) (*Workflow, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	w, ok := c.m[string(env)+id]
	return w, ok
}

func (c *terminalCache) put(env Environment, w *Workflow) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[string]*Workflow)
	}
	if len(c.m) >= terminalCacheSize {
		for k := range c.m { // evict an arbitrary entry: map order is random
			delete(c.m, k)
			break
		}
	}
	c.m[string(env)+w.ID] = w
}

// checkPage checks what every list takes alike: the environment, the limit
// (1–100; 0 becomes 10) and the keyset cursors, ids with prefix (noun names
// them in messages), at most one of them.
func checkPage(env Environment, limit *int, startingAfter, endingBefore, prefix, noun string) error {
	if !env.Valid() {
		return fmt.Errorf("settleflow: environment %q is neither test nor live", env)
	}
	if *limit == 0 {
		*limit = 10
	}
	switch {
	case *limit < 1 || *limit > 100:
		return &InvalidError{Code: CodeParameterInvalid, Param: "limit", Message: "limit must be between 1 and 100"}
	case startingAfter != "" && endingBefore != "":
		return &InvalidError{Code: CodeParameterInvalid, Param: "endingBefore", Message: "startingAfter and endingBefore cannot be used together"}
	case startingAfter != "" && !ids.Valid(prefix, startingAfter):
		return &InvalidError{Code: CodeParameterInvalid, Param: "startingAfter", Message: "startingAfter must be " + noun + " id (" + prefix + "…)"}
	case endingBefore != "" && !ids.Valid(prefix, endingBefore):
		return &InvalidError{Code: CodeParameterInvalid, Param: "endingBefore", Message: "endingBefore must be " + noun + " id (" + prefix + "…)"}
	}
	return nil
}

// ListParams select a page of workflows; see ListQuery.
type ListParams = ListQuery

// Page is one page of workflows, newest first.
type Page struct {
	Data    []*Workflow
	HasMore bool
}

// List returns a page of workflows of p.Environment matching the filters,
// newest first. Limit is 1–100 (0 means 10). Pagination is by keyset: a deep
// page costs what the first one does.
func (e *Engine) List(ctx context.Context, p ListParams) (*Page, error) {
	if err := checkPage(p.Environment, &p.Limit, p.StartingAfter, p.EndingBefore, ids.Workflow, "a workflow"); err != nil {
		return nil, err
	}
	if p.Status != "" && !p.Status.Valid() {
		return nil, &InvalidError{Code: CodeParameterInvalid, Param: "status", Message: "status must be one of " + statusNames}
	}
	ws, more, err := e.store.ListWorkflows(ctx, p)
	if err != nil {
		return nil, err
	}
	return &Page{Data: ws, HasMore: more}, nil
}

// Settles reports whether the engine's Settler can settle env. Quote and
// Create refuse an environment it cannot, with ErrEnvironmentNotConfigured.
func (e *Engine) Settles(env Environment) bool { return e.settler.Configured(env) }

// Product returns the catalogue entry of the product named name.
func (e *Engine) Product(name string) (ProductInfo, bool) { return e.products.Get(name) }

// Products returns the catalogue the engine serves.
func (e *Engine) Products() []ProductInfo { return e.products.List() }

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
	claimCtx, cancelClaims := context.WithCancel(context.Background())
	workCtx, cancelWork := context.WithCancel(context.Background())
	eventsCtx, cancelEvents := context.WithCancel(context.Background())
	rs := &runState{
		cancelClaims: cancelClaims,
		cancelWork:   cancelWork,
		cancelEvents: cancelEvents,
		claimsDone:   make(chan struct{}),
		eventsDone:   make(chan struct{}),
		slots:        make(chan struct{}, e.opts.Workers),
		results:      make(chan execResult, e.opts.Workers),
		settle:       make(chan settleItem, e.opts.Workers),
		handoff:      make(chan []Event, 64),
		pruneDone:    make(chan struct{}),
	}
	e.run = rs
	go e.claimLoop(claimCtx, workCtx, rs)
	rs.pipeline.Add(2)
	go e.finishLoop(workCtx, rs)
	go e.settleLoop(workCtx, rs)
	go e.dispatchLoop(eventsCtx, rs)
	go e.retentionLoop(eventsCtx, rs)
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
	rs.cancelClaims()
	<-rs.claimsDone
	executed := make(chan struct{})
	go func() { rs.work.Wait(); close(executed) }()
	var cut error
	select {
	case <-executed:
	case <-ctx.Done():
		cut = ctx.Err()
		rs.cancelWork()
		<-executed
	}
	close(rs.results) // no execution is left to send
	done := make(chan struct{})
	go func() { rs.pipeline.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		cut = ctx.Err()
		rs.cancelWork()
		<-done
	}
	rs.cancelWork()
	// Events are durable in the outbox: whatever the dispatcher has not
	// handed over yet goes at the next Start.
	rs.cancelEvents()
	<-rs.eventsDone
	<-rs.pruneDone
	e.log.Info("settleflow engine stopped", zap.String("worker", e.opts.WorkerID))
	return cut
}

// claimLoop leases due workflows whenever a worker slot is free and hands
// each to an execution (Running) or to the settle stage (Settling).
func (e *Engine) claimLoop(ctx, workCtx context.Context, rs *runState) {
	defer close(rs.claimsDone)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-e.wake:
		}
		// Claim until the queue is empty (or no slot frees up).
		for ctx.Err() == nil && e.claimOnce(ctx, workCtx, rs) > 0 {
		}
		timer.Reset(e.opts.PollInterval)
	}
}

// claimOnce claims one batch; it returns how many it claimed, or -1 when no
// slot is free or the store failed.
func (e *Engine) claimOnce(ctx, workCtx context.Context, rs *runState) int {
	// Take at least one slot, blocking, then as many more as are free.
	select {
	case rs.slots <- struct{}{}:
	case <-ctx.Done():
		return -1
	}
	free := 1
	for free < e.opts.BatchSize {
		select {
		case rs.slots <- struct{}{}:
			free++
			continue
		default:
		}
		break
	}
	now := e.now()
	ws, err := e.store.ClaimWorkflows(ctx, Claim{Owner: e.opts.WorkerID, Now: now, LeaseUntil: now.Add(e.lease), Limit: free})
	if err != nil {
		if ctx.Err() == nil {
			e.log.Error("claiming workflows failed", zap.Error(err))
		}
		ws = nil
	}
	for i := len(ws); i < free; i++ {
		<-rs.slots
	}
	if err != nil {
		return -1
	}
	for _, w := range ws {
		switch w.Status {
		case Running:
			rs.work.Add(1)
			go e.execute(workCtx, rs, w)
		case Settling:
			rs.settle <- settleItem{wf: w}
		default:
			e.log.Error("store returned a claimed workflow in an unexpected status", zap.String("workflow", w.ID), zap.String("status", string(w.Status)))
			<-rs.slots
		}
	}
	return len(ws)
}

type workflowIDKey struct{}

// WorkflowID returns the id of the workflow a product's Execute runs for.
func WorkflowID(ctx context.Context) string {
	id, _ := ctx.Value(workflowIDKey{}).(string)
	return id
}

type execResult struct {
	wf   *Workflow
	exec Execution
	err  error
}

func (e *Engine) execute(ctx context.Context, rs *runState, w *Workflow) {
	defer rs.work.Done()
	res := execResult{wf: w}
	prod, ok := e.products.get(w.Product)
	if !ok {
		res.err = Permanent(&Failure{Code: FailureProductUnavailable, Message: fmt.Sprintf("product %q is not registered with this engine", w.Product)})
	} else {
		ectx, cancel := context.WithTimeout(context.WithValue(ctx, workflowIDKey{}, w.ID), e.opts.ExecutionTimeout)
		res.exec, res.err = runProduct(ectx, prod, w.Payload)
		cancel()
	}
	rs.results <- res
}

// runProduct runs a product, turning a panic into a permanent failure: a
// product that panics on a payload will panic on it again.
func runProduct(ctx context.Context, p *product, payload json.RawMessage) (ex Execution, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = Permanent(&Failure{Code: FailureExecutionPanicked, Message: fmt.Sprint("product panicked: ", r)})
		}
	}()
	return p.execute(ctx, payload)
}

// finishLoop records execution results in batches: successes move to
// Settling and go on to the settle stage; failures are retried or fail.
func (e *Engine) finishLoop(ctx context.Context, rs *runState) {
	defer rs.pipeline.Done()
	defer close(rs.settle)
	batch := make([]execResult, 0, e.opts.BatchSize)
	for first := range rs.results {
		batch = drain(rs.results, append(batch[:0], first), e.opts.BatchSize)
		e.finish(ctx, rs, batch)
	}
}

func (e *Engine) finish(ctx context.Context, rs *runState, batch []execResult) {
	now := e.now()
	us := make([]Update, len(batch))
	settling := make([]*Workflow, len(batch))
	for i, r := range batch {
		w := r.wf
		u := Update{ID: w.ID, Owner: e.opts.WorkerID, Status: Running, UpdatedAt: now}
		switch {
		case r.err == nil:
			result, err := marshalResult(r.exec.Result)
			if err == nil && (r.exec.ActualCost < 0 || r.exec.ActualCost > MaxAmount) {
				err = fmt.Errorf("actual cost %d out of range [0, %d]", r.exec.ActualCost, MaxAmount)
			}
			if err != nil {
				e.fail(&u, w, now, &Failure{Code: FailureExecutionFailed, Message: "product reported an unusable result: " + err.Error()})
				break
			}
			cost := r.exec.ActualCost
			achieved := AchievedMargin(w.Quoted.Amount, cost)
			u.Transition = Running.mustTo(Settling)
			u.Result, u.ActualCost, u.Achieved = result, &cost, &achieved
			u.Attempts = 0
			// Keep the lease: this worker submits the charge next.
			u.RunAt = now.Add(e.lease)
			next := *w
			next.Status, next.Result, next.ActualCost, next.UpdatedAt, next.Attempts = Settling, result, &cost, now, 0
			next.Margin.Achieved = &achieved
			settling[i] = &next
		case ctx.Err() != nil && errors.Is(r.err, context.Canceled):
			// Cut short by Stop: release for another worker, not a failure.
			u.Release, u.RunAt, u.Attempts = true, now, w.Attempts
		case IsPermanent(r.err):
			e.fail(&u, w, now, failureOf(r.err, FailureExecutionFailed))
		default:
			attempts := w.Attempts + 1
			if attempts >= e.opts.Retry.MaxAttempts {
				e.fail(&u, w, now, &Failure{Code: FailureAttemptsExceeded,
					Message: fmt.Sprintf("execution failed %d times; last error: %v", attempts, r.err)})
				break
			}
			e.log.Warn("execution failed; will retry", zap.String("workflow", w.ID), zap.Int("attempt", attempts), zap.Error(r.err))
			u.Release, u.Attempts, u.RunAt = true, attempts, now.Add(e.opts.Retry.Backoff(attempts))
		}
		us[i] = u
	}
	applied := e.update(ctx, rs, us)
	for i := range batch {
		if applied[i] && settling[i] != nil {
			rs.settle <- settleItem{wf: settling[i], fresh: true}
			continue
		}
		<-rs.slots
	}
}

// update applies us, retrying the store until it answers: results the engine
// computed are not thrown away for a passing database error. It gives up
// only when ctx ends (the leases then expire and the work is redone). Events
// of applied updates go to the dispatcher in memory, pre-leased.
func (e *Engine) update(ctx context.Context, rs *runState, us []Update) []bool {
	lease := e.now().Add(2 * e.opts.NotifyTimeout)
	for i := range us {
		if us[i].Event != nil {
			us[i].EventLease = lease
		}
	}
	for attempt := 1; ; attempt++ {
		applied, err := e.store.UpdateWorkflows(context.WithoutCancel(ctx), us)
		if err == nil {
			var evs []Event
			for i, ok := range applied {
				if ok && us[i].Event != nil {
					evs = append(evs, *us[i].Event)
				}
			}
			if len(evs) > 0 {
				select {
				case rs.handoff <- evs:
				default:
					// The dispatcher is behind: the events wait in the
					// outbox until their lease ends, then any engine takes them.
				}
			}
			return applied
		}
		e.log.Error("recording workflow updates failed; retrying", zap.Int("attempt", attempt), zap.Error(err))
		select {
		case <-ctx.Done():
			return make([]bool, len(us))
		case <-time.After(min(time.Duration(attempt)*100*time.Millisecond, 5*time.Second)):
		}
	}
}

func marshalResult(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if string(b) == "null" {
		return nil, nil
	}
	if len(b) == 0 || b[0] != '{' {
		return nil, errors.New("result must marshal to a JSON object")
	}
	return b, nil
}

func failureOf(err error, code ErrorCode) *Failure {
	var f *Failure
	if errors.As(err, &f) {
		return f
	}
	var p *PermanentError
	if errors.As(err, &p) {
		err = p.Err
	}
	return &Failure{Code: code, Message: err.Error()}
}

// fail turns u into the transition to Failed, with its event.
func (e *Engine) fail(u *Update, w *Workflow, now time.Time, f *Failure) {
	u.Transition = u.Status.mustTo(Failed)
	u.Failure = f
	u.Release = true
	u.RunAt = now
	u.Event = e.event(EventWorkflowFailed, w, Failed, now, func(d *EventData) { d.Failure = f })
}

func (e *Engine) event(t EventType, w *Workflow, st Status, now time.Time, fill func(*EventData)) *Event {
	ev := &Event{
		ID:        ids.New(ids.Event, now),
		Object:    "event",
		Type:      t,
		Livemode:  w.Livemode,
		CreatedAt: now,
		Data: EventData{
			WorkflowID: w.ID,
			Status:     st,
			Quoted:     w.Quoted,
			Margin:     w.Margin,
			Result:     w.Result,
		},
	}
	fill(&ev.Data)
	return ev
}

// dispatchLoop hands events to the Notifier: those this engine just wrote
// (handed over in memory, already leased) and, by polling, those in the
// outbox that nobody holds (written before a crash, or by another engine).
func (e *Engine) dispatchLoop(ctx context.Context, rs *runState) {
	defer close(rs.eventsDone)
	timer := time.NewTimer(0)
	defer timer.Stop()
	failures := 0
	for {
		var batch []Event
		select {
		case <-ctx.Done():
			return
		case batch = <-rs.handoff:
		drain:
			for len(batch) < e.opts.BatchSize {
				select {
				case more := <-rs.handoff:
					batch = append(batch, more...)
				default:
					break drain
				}
			}
			if err := e.dispatch(ctx, batch, failures); err != nil {
				failures++
			} else {
				failures = 0
			}
			continue
		case <-timer.C:
		case <-e.eventsWake:
		}
		wait := e.opts.PollInterval
		for ctx.Err() == nil {
			now := e.now()
			evs, err := e.store.ClaimEvents(ctx, Claim{Owner: e.opts.WorkerID, Now: now, LeaseUntil: now.Add(2 * e.opts.NotifyTimeout), Limit: e.opts.BatchSize})
			if err == nil && len(evs) > 0 {
				err = e.dispatch(ctx, evs, failures)
			}
			if err != nil {
				failures++
				wait = e.opts.Retry.Backoff(failures)
				break
			}
			failures = 0
			if len(evs) < e.opts.BatchSize {
				break
			}
		}
		timer.Reset(wait)
	}
}

// dispatch hands leased events to the Notifier and records the outcome.
func (e *Engine) dispatch(ctx context.Context, evs []Event, failures int) error {
	idList := make([]string, len(evs))
	for i := range evs {
		idList[i] = evs[i].ID
	}
	nctx, cancel := context.WithTimeout(ctx, e.opts.NotifyTimeout)
	err := e.notifier.Notify(nctx, evs)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			e.log.Error("handing events to the notifier failed", zap.Int("attempt", failures+1), zap.Error(err))
		}
		retryAt := e.now().Add(e.opts.Retry.Backoff(failures + 1))
		if rerr := e.store.RetryEvents(context.WithoutCancel(ctx), idList, retryAt); rerr != nil {
			e.log.Error("rescheduling events failed; their lease will expire", zap.Error(rerr))
		}
		return err
	}
	if err := e.store.MarkEventsDispatched(context.WithoutCancel(ctx), idList, e.now()); err != nil {
		e.log.Error("recording dispatched events failed; they will be handed over again", zap.Error(err))
		return err
	}
	return nil
}

// now is the engine's time: UTC, in whole microseconds, the precision every
// Store keeps, so a workflow reads back exactly as Create returned it.
func (e *Engine) now() time.Time { return e.clock.Now().UTC().Truncate(time.Microsecond) }
