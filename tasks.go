package settleflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/wire"
)

// Remote products: a product registered with Remote set has no Execute in
// this process. The execute stage claims its workflows as any other (the
// same fair queue, lease, retries with backoff, ExecutionTimeout and crash
// recovery), and the execution hands the workflow to a worker as a task
// and waits for the worker's result: the task is one attempt. Spend the
// worker reports goes through the execution's spend tally, the one
// ReportSpend feeds, so the margin floor stops a remote product exactly as
// it stops one in process.
//
// Tasks are held in this engine's memory (the workflow row holds the
// lease, as for any execution): a worker claims from the engine that runs
// the workflow. Engines sharing a database must therefore not serve remote
// products (the reference server refuses to start a second one).

// Task is one attempt of a remote product's execution, as a worker sees it
// (wire.Task).
type Task = wire.Task

// TaskStatus is a task's state as a worker sees it (wire.TaskStatus).
type TaskStatus = wire.TaskStatus

// Limits of the task endpoints.
const (
	// DefaultTaskLease is how long a worker holds a task between
	// heartbeats unless Options.TaskLease says otherwise.
	DefaultTaskLease = 30 * time.Second
	// MaxTaskWait is the longest a claim waits for a task.
	MaxTaskWait = 30 * time.Second
	// MaxTasksPerClaim is the most tasks one claim takes.
	MaxTasksPerClaim = 100
	// MaxTaskResultBytes bounds a task's result, compacted.
	MaxTaskResultBytes = 256 << 10
	// MaxTaskMessageBytes bounds the message of a failed task.
	MaxTaskMessageBytes = 1024
	// taskKeep is how long an ended task is remembered (without its
	// payload), so that a late call about it is answered 409 (lease_lost,
	// task_ended) or, repeated, 200, rather than 404.
	taskKeep = 10 * time.Minute
)

// ErrTaskNotFound: no task of that id in the caller's environment (and
// products), or none remembered any more.
var ErrTaskNotFound = errors.New("settleflow: no such task")

// TaskError is a call about a task that is refused because of the task's
// state: Code is CodeLeaseLost, CodeTaskEnded or CodeMarginFloorExceeded.
// Nothing was changed.
type TaskError struct {
	Code    ErrorCode
	Message string
}

func (e *TaskError) Error() string { return "settleflow: " + e.Message }

// errTaskWithdrawn ends an execution whose task no worker claimed when the
// engine stops: the workflow is released, due at once, as an in-process
// execution cut short by Stop.
var errTaskWithdrawn = errors.New("settleflow: the engine stopped before a worker claimed the task")

// TaskScope is who calls about tasks: a worker key's environment and, when
// the key is limited to named products, those (nil: any remote product).
type TaskScope struct {
	Environment Environment
	Products    []string
	// Worker names the caller (an API key id): a task claimed by one worker
	// is not another's to heartbeat, complete or fail ("": no check).
	Worker string
}

func (s TaskScope) allows(product string) bool {
	if s.Products == nil {
		return true
	}
	for _, p := range s.Products {
		if p == product {
			return true
		}
	}
	return false
}

// ClaimTasksParams is a claim for tasks.
type ClaimTasksParams struct {
	TaskScope
	// Products are the remote products the worker serves: 1 to 64 names.
	Products []string
	// Max is how many tasks the worker takes at most: 1 to MaxTasksPerClaim.
	Max int
	// Wait is how long to wait for a first task when none is ready: 0 to
	// MaxTaskWait.
	Wait time.Duration
	// WorkerInfo is what the worker process says of itself (optional): the
	// engine's registry of workers (Engine.Workers) and the attempts it
	// runs (Engine.Attempts) show it.
	WorkerInfo WorkerInfo
}

// taskState is where a task is; the first four are open.
type taskState int

const (
	taskQueued    taskState = iota // waiting for a worker
	taskClaimed                    // a worker holds it
	taskCompleted                  // its worker completed it
	taskFailed                     // its worker failed it
	taskLost                       // its lease passed (expiry, timeout, stop)
	taskExceeded                   // its spend passed the budget
	taskWithdrawn                  // the engine stopped before a claim
)

func (s taskState) open() bool { return s == taskQueued || s == taskClaimed }

// taskOutcome is what a task's worker made of it.
type taskOutcome struct {
	exec Execution
	err  error
}

type task struct {
	t       Task // the wire form; Status and LeaseExpiresAt kept current
	env     Environment
	spent   *spend
	state   taskState
	worker  string
	endedAt time.Time
	// by is the worker process that claimed it, at claimedAt; message is
	// its failure's (the attempt's record, Engine.Attempts).
	by        *workerEntry
	claimedAt time.Time
	message   string
	// outcome takes the worker's completion or failure (buffered: sent
	// once, under the hub's lock).
	outcome chan taskOutcome
	// kick tells the execution its lease moved (a claim or a heartbeat).
	kick chan struct{}
}

// taskHub is the engine's tasks: those waiting for a worker, in the order
// their executions started (the execute stage's fair order), and those
// held or ended, by id.
type taskHub struct {
	mu        sync.Mutex
	queue     []*task
	byID      map[string]*task
	waiters   map[*taskWaiter]struct{}
	stopping  bool
	lastSweep time.Time
	// drained is closed by EndTaskClaims: claims stop waiting.
	drained   chan struct{}
	drainOnce sync.Once
	// workers is the registry of the worker processes that claimed.
	workers map[workerKey]*workerEntry
}

type taskWaiter struct {
	env      Environment
	products []string
	wake     chan struct{} // buffered 1
	by       *workerEntry
}

func newTaskHub() *taskHub {
	return &taskHub{byID: map[string]*task{}, waiters: map[*taskWaiter]struct{}{}, drained: make(chan struct{}),
		workers: map[workerKey]*workerEntry{}}
}

// runRemote is a remote product's execution: it queues w as a task, wakes
// the claims waiting for its product, and waits for the worker's outcome,
// for the lease to pass without a heartbeat, or for ctx (the execution's:
// ExecutionTimeout, the margin floor, Stop) to end. It returns the task
// too, for the record of its attempt (taskHub.attempt).
func (e *Engine) runRemote(ctx context.Context, w *Workflow, spent *spend) (*task, Execution, error) {
	h := e.tasks
	now := e.now()
	t := &task{
		t: Task{ID: ids.New(ids.Task, now), Object: wire.TaskObject, Livemode: w.Livemode, WorkflowID: w.ID,
			Product: w.Product, Payload: w.Payload, CustomerID: w.CustomerID, Attempt: w.Attempts + 1,
			Status: wire.TaskClaimed, Spent: Money{Currency: w.Quoted.Currency}},
		env: w.Environment(), spent: spent, state: taskQueued,
		outcome: make(chan taskOutcome, 1), kick: make(chan struct{}, 1),
	}
	if spent != nil && spent.enforce {
		t.t.Budget = &Money{Amount: spent.budget, Currency: w.Quoted.Currency}
	}
	if !h.add(t, now) {
		return t, Execution{}, errTaskWithdrawn
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case o := <-t.outcome:
			return t, o.exec, o.err
		case <-t.kick:
			h.mu.Lock()
			until := t.t.LeaseExpiresAt
			h.mu.Unlock()
			timer.Reset(max(until.Sub(e.now()), 0))
		case <-timer.C:
			h.mu.Lock()
			lost := t.state == taskClaimed && !e.now().Before(t.t.LeaseExpiresAt)
			if lost {
				h.end(t, taskLost, e.now())
			}
			until := t.t.LeaseExpiresAt
			h.mu.Unlock()
			if lost {
				return t, Execution{}, fmt.Errorf("the worker's lease on task %s ended without a heartbeat", t.t.ID)
			}
			timer.Reset(max(until.Sub(e.now()), 0))
		case <-ctx.Done():
			h.mu.Lock()
			state := t.state
			if state.open() {
				h.end(t, taskLost, e.now())
			}
			h.mu.Unlock()
			select {
			case o := <-t.outcome: // completed or failed just before
				return t, o.exec, o.err
			default:
			}
			if state == taskWithdrawn {
				return t, Execution{}, errTaskWithdrawn
			}
			return t, Execution{}, context.Cause(ctx)
		}
	}
}

// add queues t and wakes the claims that want it; false when the engine is
// stopping (t is not queued).
func (h *taskHub) add(t *task, now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopping {
		return false
	}
	if now.Sub(h.lastSweep) > time.Minute {
		h.lastSweep = now
		for id, old := range h.byID {
			if !old.state.open() && now.Sub(old.endedAt) > taskKeep {
				delete(h.byID, id)
			}
		}
	}
	h.queue = append(h.queue, t)
	h.byID[t.t.ID] = t
	for w := range h.waiters {
		if w.env == t.env && contains(w.products, t.t.Product) {
			select {
			case w.wake <- struct{}{}:
			default:
			}
		}
	}
	return true
}

// end moves an open t to state (h.mu held). What it spent is kept as it
// is now; its payload is dropped (see forget) unless its worker ended it,
// whose answer carries it.
func (h *taskHub) end(t *task, state taskState, now time.Time) {
	if t.state == taskClaimed && t.by != nil {
		if n := t.by.seen.InFlight[t.t.Product] - 1; n > 0 {
			t.by.seen.InFlight[t.t.Product] = n
		} else {
			delete(t.by.seen.InFlight, t.t.Product)
		}
	}
	if t.state == taskQueued {
		for i, q := range h.queue {
			if q == t {
				h.queue = append(h.queue[:i], h.queue[i+1:]...)
				break
			}
		}
	}
	t.t.Spent = t.view().Spent
	t.state, t.endedAt, t.spent = state, now, nil
	if state != taskCompleted && state != taskFailed {
		t.forget()
	}
}

// forget drops what an ended task no longer needs while it is remembered:
// a repeated completion or failure answers it with an empty payload.
func (t *task) forget() { t.t.Payload = json.RawMessage("{}") }

// stop withdraws the tasks no worker claimed and refuses new ones: a
// stopping engine releases their workflows instead of waiting for a
// worker. Tasks held by workers run on, within Stop's ctx.
func (h *taskHub) stop(now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stopping = true
	for _, t := range h.queue {
		t.state, t.endedAt, t.spent = taskWithdrawn, now, nil
		t.forget()
		t.outcome <- taskOutcome{err: errTaskWithdrawn}
	}
	h.queue = nil
}

// start lets tasks be queued again (Engine.Start).
func (h *taskHub) start() {
	h.mu.Lock()
	h.stopping = false
	h.mu.Unlock()
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// ClaimTasks hands the caller up to p.Max tasks of p.Products in its
// environment, waiting up to p.Wait for a first one (and answering as soon
// as one is queued); none when the wait ends or ctx does. Each task is
// leased to the caller for Options.TaskLease: a heartbeat extends it, and
// past it the attempt is over (the workflow is retried after its backoff,
// as for a transient error).
//
// Errors: an *InvalidError naming products (none, more than 64, a name
// that is not a remote product of this engine) or max.
func (e *Engine) ClaimTasks(ctx context.Context, p ClaimTasksParams) ([]Task, error) {
	switch {
	case len(p.Products) == 0:
		return nil, &InvalidError{Code: CodeParameterMissing, Param: "products", Message: "products must name at least one remote product this worker serves"}
	case len(p.Products) > 64:
		return nil, &InvalidError{Code: CodeParameterInvalid, Param: "products", Message: "products names at most 64 products"}
	case p.Max < 1 || p.Max > MaxTasksPerClaim:
		return nil, &InvalidError{Code: CodeParameterInvalid, Param: "max", Message: fmt.Sprintf("max must be from 1 to %d", MaxTasksPerClaim)}
	case p.Wait < 0 || p.Wait > MaxTaskWait:
		return nil, &InvalidError{Code: CodeParameterInvalid, Param: "waitSeconds", Message: fmt.Sprintf("waitSeconds must be from 0 to %d", int(MaxTaskWait/time.Second))}
	}
	if err := p.WorkerInfo.check(); err != nil {
		return nil, err
	}
	for i, name := range p.Products {
		if prod, ok := e.products.get(name); !ok || !prod.remote {
			return nil, &InvalidError{Code: CodeParameterInvalid, Param: fmt.Sprintf("products[%d]", i),
				Message: fmt.Sprintf("products[%d]: %q is not a remote product of this server", i, name)}
		}
	}
	h := e.tasks
	select {
	case <-h.drained:
		p.Wait = 0
	default:
	}
	var deadline <-chan time.Time
	if p.Wait > 0 {
		timer := time.NewTimer(p.Wait)
		defer timer.Stop()
		deadline = timer.C
	}
	wt := &taskWaiter{env: p.Environment, products: p.Products, wake: make(chan struct{}, 1)}
	h.mu.Lock()
	wt.by = h.seen(p, e.now())
	h.mu.Unlock()
	for {
		h.mu.Lock()
		got := h.take(wt, p, e.now(), e.opts.TaskLease)
		if len(got) > 0 || p.Wait == 0 {
			delete(h.waiters, wt)
			h.mu.Unlock()
			return got, nil
		}
		h.waiters[wt] = struct{}{}
		h.mu.Unlock()
		select {
		case <-wt.wake:
		case <-deadline:
			p.Wait = 0 // one last look, then answer
		case <-h.drained:
			p.Wait = 0
		case <-ctx.Done():
			h.mu.Lock()
			delete(h.waiters, wt)
			h.mu.Unlock()
			return nil, nil
		}
	}
}

// take leases up to p.Max queued tasks the waiter wants (h.mu held).
func (h *taskHub) take(wt *taskWaiter, p ClaimTasksParams, now time.Time, lease time.Duration) []Task {
	var got []Task
	for i := 0; i < len(h.queue) && len(got) < p.Max; {
		t := h.queue[i]
		if t.env != wt.env || !contains(wt.products, t.t.Product) || !p.allows(t.t.Product) {
			i++
			continue
		}
		h.queue = append(h.queue[:i], h.queue[i+1:]...)
		t.state, t.worker, t.by, t.claimedAt = taskClaimed, p.Worker, wt.by, now
		t.t.LeaseExpiresAt = now.Add(lease)
		wt.by.seen.InFlight[t.t.Product]++
		wt.by.seen.Claimed++
		select {
		case t.kick <- struct{}{}:
		default:
		}
		got = append(got, t.view())
	}
	return got
}

// view is t's wire form now (h.mu held).
func (t *task) view() Task {
	v := t.t
	if t.spent != nil {
		t.spent.mu.Lock()
		v.Spent.Amount = t.spent.total
		t.spent.mu.Unlock()
	}
	switch t.state {
	case taskCompleted:
		v.Status = wire.TaskCompleted
	case taskFailed:
		v.Status = wire.TaskFailed
	}
	return v
}

// held returns the task id names in the caller's scope and, if it is not
// held by a worker any more, the error to answer (h.mu held): lease_lost,
// margin_floor_exceeded or task_ended (when want, the state a repeated
// call finds, is not the task's).
func (h *taskHub) held(s TaskScope, id string, want taskState) (*task, error) {
	t, ok := h.byID[id]
	if !ok || t.env != s.Environment || !s.allows(t.t.Product) || t.state == taskQueued || t.state == taskWithdrawn ||
		(s.Worker != "" && t.worker != s.Worker) {
		return nil, ErrTaskNotFound
	}
	switch t.state {
	case taskClaimed:
		return t, nil
	case taskLost:
		return t, &TaskError{Code: CodeLeaseLost, Message: fmt.Sprintf("task %s lost its lease (it expired without a heartbeat, the execution timed out or the server stopped it); stop working on it: nothing more is recorded for it", id)}
	case taskExceeded:
		return t, &TaskError{Code: CodeMarginFloorExceeded, Message: fmt.Sprintf("task %s reported spending past its budget; the workflow failed with margin_floor_exceeded and nothing is charged: stop working on it", id)}
	case want:
		return t, nil
	default:
		return t, &TaskError{Code: CodeTaskEnded, Message: fmt.Sprintf("task %s was %s already", id, t.view().Status)}
	}
}

// checkCostItems reports whether items may be added to what s holds:
// each item valid, their count and sum within bounds. It changes nothing.
func checkCostItems(s *spend, items []CostItem, param string) error {
	n, total := 0, int64(0)
	if s != nil {
		s.mu.Lock()
		n, total = len(s.items), s.total
		s.mu.Unlock()
	}
	for i, it := range items {
		if err := checkCostItem(it); err != nil {
			return &InvalidError{Code: CodeParameterInvalid, Param: fmt.Sprintf("%s[%d]", param, i), Message: fmt.Sprintf("%s[%d]: %v", param, i, err)}
		}
		total += it.Amount
		if total > MaxAmount {
			return &InvalidError{Code: CodeParameterInvalid, Param: param, Message: fmt.Sprintf("the task's cost items would sum to more than %d", MaxAmount)}
		}
	}
	if n+len(items) > MaxCostItems {
		return &InvalidError{Code: CodeParameterInvalid, Param: param, Message: fmt.Sprintf("a task records at most %d cost items; it holds %d", MaxCostItems, n)}
	}
	return nil
}

// HeartbeatTask extends the lease of the task id held by the caller by
// Options.TaskLease and adds items to its spend, as ReportSpend does for
// a product in process: past the budget the execution is stopped, the
// workflow fails with margin_floor_exceeded (nothing charged), and the
// answer is a *TaskError with CodeMarginFloorExceeded.
//
// Errors: ErrTaskNotFound; an *InvalidError naming costItems[i] (nothing
// recorded); a *TaskError: lease_lost, task_ended, margin_floor_exceeded.
func (e *Engine) HeartbeatTask(_ context.Context, s TaskScope, id string, items []CostItem) (Task, error) {
	h := e.tasks
	h.mu.Lock()
	defer h.mu.Unlock()
	t, err := h.held(s, id, taskClaimed)
	if err != nil {
		return Task{}, err
	}
	if err := checkCostItems(t.spent, items, "costItems"); err != nil {
		return Task{}, err
	}
	if len(items) > 0 && t.spent != nil {
		if err := t.spent.report(items); errors.Is(err, ErrMarginFloorExceeded) {
			// The execution's context is canceled: it ends the workflow
			// with margin_floor_exceeded.
			h.end(t, taskExceeded, e.now())
			_, err = h.held(s, id, taskClaimed)
			return Task{}, err
		} else if err != nil {
			return Task{}, &InvalidError{Code: CodeParameterInvalid, Param: "costItems", Message: err.Error()}
		}
	}
	t.t.LeaseExpiresAt = e.now().Add(e.opts.TaskLease)
	select {
	case t.kick <- struct{}{}:
	default:
	}
	return t.view(), nil
}

// CompleteTask records the result of the task id held by the caller, with
// the cost items of its execution (as Execution.CostItems: added to those
// its heartbeats reported). result must be one JSON object of at most
// MaxTaskResultBytes. The engine then judges, prices and settles the
// workflow as for a product in process. Completing a completed task again
// answers it unchanged.
//
// Errors: ErrTaskNotFound; an *InvalidError naming result or costItems[i];
// a *TaskError: lease_lost, task_ended, margin_floor_exceeded.
func (e *Engine) CompleteTask(_ context.Context, s TaskScope, id string, result json.RawMessage, items []CostItem) (Task, error) {
	h := e.tasks
	h.mu.Lock()
	defer h.mu.Unlock()
	t, err := h.held(s, id, taskCompleted)
	if err != nil || t.state == taskCompleted {
		if err != nil {
			return Task{}, err
		}
		return t.view(), nil
	}
	compact, err := taskResult(result)
	if err != nil {
		return Task{}, err
	}
	if err := checkCostItems(t.spent, items, "costItems"); err != nil {
		return Task{}, err
	}
	h.end(t, taskCompleted, e.now())
	t.outcome <- taskOutcome{exec: Execution{Result: compact, CostItems: append([]CostItem(nil), items...)}}
	v := t.view()
	t.forget()
	return v, nil
}

// taskResult checks a task's result: one JSON object, at most
// MaxTaskResultBytes compacted.
func taskResult(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 {
		return nil, &InvalidError{Code: CodeParameterMissing, Param: "result", Message: "result is required: a JSON object ({} for none)"}
	}
	b, err := json.Marshal(raw) // validates and compacts
	if err != nil || len(b) == 0 || b[0] != '{' {
		return nil, &InvalidError{Code: CodeParameterInvalid, Param: "result", Message: "result must be a JSON object"}
	}
	if len(b) > MaxTaskResultBytes {
		return nil, &InvalidError{Code: CodeParameterInvalid, Param: "result", Message: fmt.Sprintf("result is %d bytes, more than the %d a result may hold", len(b), MaxTaskResultBytes)}
	}
	return b, nil
}

// FailTask ends the task id held by the caller as failed: with retry, the
// workflow is tried again after its backoff (a new task; after
// Options.Retry.MaxAttempts it fails with attempts_exceeded); without, it
// fails for good with execution_failed and message. Failing a failed task
// again answers it unchanged.
//
// Errors: ErrTaskNotFound; an *InvalidError naming message; a *TaskError:
// lease_lost, task_ended, margin_floor_exceeded.
func (e *Engine) FailTask(_ context.Context, s TaskScope, id, message string, retry bool) (Task, error) {
	h := e.tasks
	h.mu.Lock()
	defer h.mu.Unlock()
	t, err := h.held(s, id, taskFailed)
	if err != nil || t.state == taskFailed {
		if err != nil {
			return Task{}, err
		}
		return t.view(), nil
	}
	switch {
	case message == "":
		return Task{}, &InvalidError{Code: CodeParameterMissing, Param: "message", Message: "message is required: say why the task failed"}
	case len(message) > MaxTaskMessageBytes || !utf8.ValidString(message):
		return Task{}, &InvalidError{Code: CodeParameterInvalid, Param: "message", Message: fmt.Sprintf("message must be valid UTF-8 of at most %d bytes", MaxTaskMessageBytes)}
	}
	h.end(t, taskFailed, e.now())
	t.message = message
	var out error = errors.New("the worker failed the task: " + message)
	if !retry {
		out = Permanent(&Failure{Code: FailureExecutionFailed, Message: "the worker failed the task: " + message})
	}
	t.outcome <- taskOutcome{err: out}
	v := t.view()
	t.forget()
	return v, nil
}

// AllowsProduct reports whether the scope may serve product.
func (s TaskScope) AllowsProduct(product string) bool { return s.allows(product) }

// EndTaskClaims answers every claim waiting for tasks now (with what is
// ready, often nothing) and makes later claims answer without waiting: a
// server calls it as it begins to shut down, so that workers' long polls
// do not hold its listeners open. Tasks held by workers are not affected.
func (e *Engine) EndTaskClaims() {
	e.tasks.drainOnce.Do(func() { close(e.tasks.drained) })
}
