package settleflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/settleflow/settleflow/driver"
	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/internal/stage"
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
// Tasks are rows of the Store (driver.TaskStore), so every engine sharing
// it serves every worker: a task created by the execution on engine A is
// claimed, heartbeaten and completed through engine B, and the execution
// on A finds the result in the Store (woken by a notice: Postgres NOTIFY
// or, in process, at once; else by its fallback poll, taskExecPoll). Two
// leases: the workflow row's (the execute stage's, held by the engine that
// runs the execution) and the task row's (held by the worker, extended by
// its heartbeats). An engine that dies leaves both: when the workflow's
// lease ends (or the engine restarts under the same WorkerID), whichever
// engine claims the workflow adopts its task as it is (Store.OpenTask):
// it waits on for a task still held, takes the result of one completed
// meanwhile, and reruns only once the task's own lease has passed, as
// the attempt's next number (docs/architecture.md, "Remote tasks").

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
	// Recheck, when set, is called before each look for tasks after the
	// claim has waited (a wake-up, the fallback poll or the wait's end):
	// an error ends the claim with that error and takes nothing. A server
	// checks there that the worker's key was not revoked while its claim
	// waited, so that a revoked key is handed no task.
	Recheck func(context.Context) error
	// WorkerInfo is what the worker process says of itself (optional): the
	// engine's registry of workers (Engine.Workers) and the attempts it
	// runs (Engine.Attempts) show it.
	WorkerInfo WorkerInfo
}

// Fallback polls of remote tasks: notices (Postgres NOTIFY, in process at
// once) wake claims and executions; these bound how late one learns of a
// change whose notice it missed (a listener that reconnected, a Store
// without one).
const (
	// taskClaimPoll is how often a waiting claim looks for tasks unwoken.
	taskClaimPoll = 2 * time.Second
	// taskExecPoll is how often an execution reads its task unwoken.
	taskExecPoll = 5 * time.Second
	// workerSeenEvery throttles the record of a worker's claims that take
	// no task: at most one write per worker and engine in that time.
	workerSeenEvery = 10 * time.Second
	// taskPruneEvery is how often an engine deletes the tasks ended more
	// than taskKeep ago.
	taskPruneEvery = time.Minute
)

// taskHub is the engine's side of the tasks in the Store: the claims and
// executions of this engine waiting for a notice.
type taskHub struct {
	mu       sync.Mutex
	waiters  map[*taskWaiter]struct{}
	running  map[string]chan struct{} // task id → its execution's wake-up
	stopping bool
	// stopped is closed when the engine stops: executions whose task no
	// worker claimed withdraw it.
	stopped   chan struct{}
	unsub     func()
	lastPrune time.Time
	// drained is closed by EndTaskClaims: claims stop waiting.
	drained   chan struct{}
	drainOnce sync.Once
	// seenAt is when this engine last recorded each worker's claim.
	seenAt map[workerKey]time.Time
}

type taskWaiter struct {
	livemode bool
	products []string
	wake     chan struct{} // buffered 1
}

func newTaskHub() *taskHub {
	return &taskHub{waiters: map[*taskWaiter]struct{}{}, running: map[string]chan struct{}{}, drained: make(chan struct{}),
		stopped: make(chan struct{}), seenAt: map[workerKey]time.Time{}}
}

// notice wakes the claims and the execution a notice concerns.
func (h *taskHub) notice(n driver.TaskNotice) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n.TaskID != "" || n.Resync {
		if c := h.running[n.TaskID]; c != nil {
			stage.Signal(c)
		}
		if n.Resync {
			for _, c := range h.running {
				stage.Signal(c)
			}
		}
	}
	for w := range h.waiters {
		if n.Resync || (n.Product != "" && w.livemode == n.Livemode && contains(w.products, n.Product)) {
			stage.Signal(w.wake)
		}
	}
}

// start lets tasks be created again and listens for notices (Engine.Start).
func (h *taskHub) start(store Store) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopping {
		h.stopping, h.stopped = false, make(chan struct{})
	}
	if h.unsub == nil {
		h.unsub = store.SubscribeTasks(h.notice)
	}
}

// stop makes the executions whose task no worker claimed withdraw it (their
// workflows are released) (Engine.Stop). Tasks held by workers are waited
// for within Stop's ctx.
func (h *taskHub) stop() {
	h.mu.Lock()
	if !h.stopping {
		h.stopping = true
		close(h.stopped)
	}
	h.mu.Unlock()
}

// unsubscribe stops listening for notices, once the executions ended.
func (h *taskHub) unsubscribe() {
	h.mu.Lock()
	unsub := h.unsub
	h.unsub = nil
	h.mu.Unlock()
	if unsub != nil {
		unsub()
	}
}

// watch registers the execution waiting on task id: it returns its
// wake-up and the channel closed when the engine stops.
func (h *taskHub) watch(id string) (wake chan struct{}, stopped <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	wake = make(chan struct{}, 1)
	h.running[id] = wake
	return wake, h.stopped
}

func (h *taskHub) unwatch(id string) {
	h.mu.Lock()
	delete(h.running, id)
	h.mu.Unlock()
}

// taskRun is a remote execution's task: the record of its attempt is
// made from it (taskHub.attempt).
type taskRun struct{ rec *driver.TaskRecord }

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// bgCtx bounds a Store call that must be made even though ctx ended.
func bgCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
}

// runRemote is a remote product's execution: it opens w's task in the
// Store (adopting the one a previous execution of w left, if any: see
// driver.TaskStore.OpenTask), and waits for the worker's outcome, for the
// task's lease to pass without a heartbeat, or for ctx (the execution's:
// ExecutionTimeout, Stop) to end. It returns the task too, for the record
// of its attempt.
func (e *Engine) runRemote(ctx context.Context, w *Workflow, spent *spend) (*taskRun, Execution, error) {
	h := e.tasks
	now := e.now()
	rec := driver.TaskRecord{ID: ids.New(ids.Task, now), Livemode: w.Livemode, WorkflowID: w.ID, Product: w.Product,
		CustomerID: w.CustomerID, Attempt: w.Attempts + 1, Payload: w.Payload, Currency: w.Quoted.Currency,
		State: driver.TaskQueued, CreatedAt: now}
	if len(rec.Payload) == 0 {
		rec.Payload = json.RawMessage("{}")
	}
	if spent != nil && spent.enforce {
		b := spent.budget
		rec.Budget = &b
	}
	select {
	case <-h.stopped:
		return nil, Execution{}, errTaskWithdrawn
	default:
	}
	e.pruneTasks(ctx, now)
	t, _, err := e.store.OpenTask(ctx, rec)
	if err != nil {
		return nil, Execution{}, err
	}
	run := &taskRun{rec: t}
	wake, stopped := h.watch(t.ID)
	defer h.unwatch(t.ID)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	isStopped := func() bool {
		select {
		case <-stopped:
			return true
		default:
			return false
		}
	}
	for {
		wait := taskExecPoll
		switch t.State {
		case driver.TaskQueued:
			if isStopped() {
				// Not claimed yet: withdrawn, the workflow released.
				got, applied, err := e.endTask(ctx, t, driver.TaskWithdrawn, false)
				if err != nil {
					return run, Execution{}, errTaskWithdrawn
				}
				if run.rec = got; applied {
					return run, Execution{}, errTaskWithdrawn
				}
				t = got
				continue
			}
		case driver.TaskClaimed:
			now := e.now()
			if !now.Before(t.LeaseUntil) {
				got, applied, err := e.endTask(ctx, t, driver.TaskLost, true)
				if err == nil {
					if run.rec = got; applied {
						return run, Execution{}, fmt.Errorf("the worker's lease on task %s ended without a heartbeat", t.ID)
					}
					t = got
					continue
				}
			} else {
				wait = min(wait, t.LeaseUntil.Sub(now))
			}
		default:
			return e.taskOutcome(run, spent)
		}
		var stopC <-chan struct{}
		if t.State == driver.TaskQueued {
			stopC = stopped // only a task no worker claimed is withdrawn at Stop
		}
		timer.Reset(max(wait, 0))
		select {
		case <-wake:
		case <-timer.C:
		case <-stopC:
			continue
		case <-ctx.Done():
			return e.remoteCut(ctx, run, spent)
		}
		timer.Stop()
		got, err := e.store.GetTask(ctx, w.Environment(), t.ID)
		if err != nil {
			if ctx.Err() != nil {
				return e.remoteCut(ctx, run, spent)
			}
			e.log.Warn("reading a remote task failed; will read it again", zap.String("task", t.ID), zap.Error(err))
			continue
		}
		t, run.rec = got, got
	}
}

// remoteCut ends a remote execution whose ctx ended. On the execution
// timeout the task is taken from its worker (lease_lost) and the attempt
// fails; when the engine stops (Stop's ctx ended), a task no worker
// claimed is withdrawn and one a worker holds is left to it: the workflow
// is released, and whichever engine claims it next adopts the task, whose
// result then counts on the same attempt. A task that ended just before
// gives its outcome.
func (e *Engine) remoteCut(ctx context.Context, run *taskRun, spent *spend) (*taskRun, Execution, error) {
	t := run.rec
	timeout := errors.Is(ctx.Err(), context.DeadlineExceeded)
	switch {
	case timeout || t.State == driver.TaskQueued:
		state := driver.TaskLost
		if !timeout {
			state = driver.TaskWithdrawn
		}
		got, applied, err := e.endTask(ctx, t, state, false)
		if err != nil {
			return run, Execution{}, context.Cause(ctx)
		}
		run.rec = got
		if !applied && got != nil && !got.State.Open() {
			return e.taskOutcome(run, spent)
		}
		if !applied && got != nil && got.State == driver.TaskClaimed && !timeout {
			return run, Execution{}, errTaskWithdrawn // claimed meanwhile: left to its worker
		}
		if timeout {
			return run, Execution{}, context.Cause(ctx)
		}
		return run, Execution{}, errTaskWithdrawn
	case t.State == driver.TaskClaimed:
		return run, Execution{}, errTaskWithdrawn
	}
	return run, Execution{}, context.Cause(ctx)
}

// endTask ends t (withdrawn: only if no worker claimed it; else from its
// open states and, when expired, only if its lease has passed) with a ctx
// that outlives the execution's.
func (e *Engine) endTask(ctx context.Context, t *driver.TaskRecord, state driver.TaskState, expired bool) (*driver.TaskRecord, bool, error) {
	bctx, cancel := bgCtx(ctx)
	defer cancel()
	from := []driver.TaskState{driver.TaskQueued, driver.TaskClaimed}
	if state == driver.TaskWithdrawn {
		from = from[:1]
	}
	got, applied, err := e.store.EndTask(bctx, driver.TaskEnd{ID: t.ID, Livemode: t.Livemode,
		From: from, Expired: expired, State: state, Now: e.now()})
	if err != nil {
		e.log.Warn("ending a remote task failed", zap.String("task", t.ID), zap.Error(err))
		return nil, false, err
	}
	if got == nil {
		return nil, false, fmt.Errorf("task %s is gone from the store", t.ID)
	}
	return got, applied, nil
}

// taskOutcome is the execution's outcome of its ended task: what the
// worker reported spending goes to the spend tally.
func (e *Engine) taskOutcome(run *taskRun, spent *spend) (*taskRun, Execution, error) {
	t := run.rec
	if spent != nil {
		spent.load(t.Items, t.State == driver.TaskExceeded)
	}
	switch t.State {
	case driver.TaskCompleted:
		return run, Execution{Result: t.Result, CostItems: append([]CostItem(nil), t.ResultItems...)}, nil
	case driver.TaskFailed:
		if !t.Retry {
			return run, Execution{}, Permanent(&Failure{Code: FailureExecutionFailed, Message: "the worker failed the task: " + t.Message})
		}
		return run, Execution{}, errors.New("the worker failed the task: " + t.Message)
	case driver.TaskExceeded:
		return run, Execution{}, ErrMarginFloorExceeded
	case driver.TaskWithdrawn:
		return run, Execution{}, errTaskWithdrawn
	default:
		return run, Execution{}, fmt.Errorf("the worker's lease on task %s ended without a heartbeat", t.ID)
	}
}

// pruneTasks deletes, at most once a taskPruneEvery, the tasks ended more
// than taskKeep ago (a late call about one is then answered 404).
func (e *Engine) pruneTasks(ctx context.Context, now time.Time) {
	h := e.tasks
	h.mu.Lock()
	due := now.Sub(h.lastPrune) > taskPruneEvery
	if due {
		h.lastPrune = now
	}
	h.mu.Unlock()
	if !due {
		return
	}
	if _, err := e.store.PruneTasks(ctx, now.Add(-taskKeep), 1000); err != nil && ctx.Err() == nil {
		e.log.Warn("pruning ended tasks failed", zap.Error(err))
	}
}

// ClaimTasks hands the caller up to p.Max tasks of p.Products in its
// environment, waiting up to p.Wait for a first one (and answering as soon
// as one is queued, on any engine sharing the Store); none when the wait
// ends or ctx does. Each task is leased to the caller for
// Options.TaskLease: a heartbeat extends it, and past it the attempt is
// over (the workflow is retried after its backoff, as for a transient
// error).
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
	var products []string
	for i, name := range p.Products {
		if prod, ok := e.products.get(name); !ok || !prod.remote {
			return nil, &InvalidError{Code: CodeParameterInvalid, Param: fmt.Sprintf("products[%d]", i),
				Message: fmt.Sprintf("products[%d]: %q is not a remote product of this server", i, name)}
		}
		if p.allows(name) && !contains(products, name) {
			products = append(products, name)
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
	wt := &taskWaiter{livemode: p.Environment.Livemode(), products: products, wake: make(chan struct{}, 1)}
	h.mu.Lock()
	h.waiters[wt] = struct{}{}
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.waiters, wt)
		h.mu.Unlock()
	}()
	worker := driver.WorkerRecord{Livemode: wt.livemode, KeyID: p.Worker, Host: p.WorkerInfo.Host, Name: p.WorkerInfo.Name,
		SDK: p.WorkerInfo.SDK, Instance: e.opts.WorkerID}
	poll := time.NewTimer(taskClaimPoll)
	defer poll.Stop()
	for waited := false; ; waited = true {
		if waited && p.Recheck != nil {
			if err := p.Recheck(ctx); err != nil {
				if ctx.Err() != nil {
					return nil, nil
				}
				return nil, err
			}
		}
		now := e.now()
		got, err := e.store.ClaimTasks(ctx, driver.TaskClaim{Livemode: wt.livemode, Products: products, Max: p.Max, Now: now,
			LeaseUntil: now.Add(e.opts.TaskLease), Worker: worker})
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil
			}
			return nil, err
		}
		if len(got) > 0 || p.Wait == 0 {
			e.sawWorker(ctx, worker, now, len(got) > 0)
			out := make([]Task, len(got))
			for i, t := range got {
				out[i] = taskView(t)
			}
			return out, nil
		}
		e.sawWorker(ctx, worker, now, false)
		select {
		case <-wt.wake:
		case <-poll.C:
			poll.Reset(taskClaimPoll)
		case <-deadline:
			p.Wait = 0 // one last look, then answer
		case <-h.drained:
			p.Wait = 0
		case <-ctx.Done():
			return nil, nil
		}
	}
}

// sawWorker records a claim by w at now in the Store's workers, at most
// once a workerSeenEvery per worker from this engine (recorded, when the
// claim took tasks: its transaction did it).
func (e *Engine) sawWorker(ctx context.Context, w driver.WorkerRecord, now time.Time, recorded bool) {
	h := e.tasks
	k := workerKey{livemode: w.Livemode, keyID: w.KeyID, host: w.Host, named: w.Name}
	h.mu.Lock()
	last, ok := h.seenAt[k]
	write := !recorded && (!ok || now.Sub(last) >= workerSeenEvery)
	if recorded || write {
		if len(h.seenAt) >= maxWorkersSeen {
			clear(h.seenAt)
		}
		h.seenAt[k] = now
	}
	h.mu.Unlock()
	if !write {
		return
	}
	w.LastClaim = now
	if err := e.store.SawWorker(ctx, w); err != nil && ctx.Err() == nil {
		e.log.Warn("recording a worker's claim failed", zap.Error(err))
	}
}

// taskView is t's wire form.
func taskView(t *driver.TaskRecord) Task {
	v := Task{ID: t.ID, Object: wire.TaskObject, Livemode: t.Livemode, WorkflowID: t.WorkflowID, Product: t.Product,
		Payload: t.Payload, CustomerID: t.CustomerID, Attempt: t.Attempt, Status: wire.TaskClaimed,
		LeaseExpiresAt: t.LeaseUntil, Spent: Money{Amount: t.Spent, Currency: t.Currency}}
	if t.Budget != nil {
		v.Budget = &Money{Amount: *t.Budget, Currency: t.Currency}
	}
	switch t.State {
	case driver.TaskCompleted:
		v.Status = wire.TaskCompleted
	case driver.TaskFailed:
		v.Status = wire.TaskFailed
	}
	return v
}

// held returns the error to answer a call in scope s about t, nil when a
// worker holds it, or when it is in want (a repeated call's state): not
// found (unknown, not in the caller's scope, not claimed, another
// worker's), lease_lost, margin_floor_exceeded or task_ended.
func held(t *driver.TaskRecord, s TaskScope, want driver.TaskState) error {
	if t == nil || t.Livemode != s.Environment.Livemode() || !s.allows(t.Product) || t.State == driver.TaskQueued ||
		t.State == driver.TaskWithdrawn || (s.Worker != "" && t.WorkerKeyID != s.Worker) {
		return ErrTaskNotFound
	}
	switch t.State {
	case driver.TaskClaimed, want:
		return nil
	case driver.TaskLost:
		return &TaskError{Code: CodeLeaseLost, Message: fmt.Sprintf("task %s lost its lease (it expired without a heartbeat, the execution timed out or the server stopped it); stop working on it: nothing more is recorded for it", t.ID)}
	case driver.TaskExceeded:
		return &TaskError{Code: CodeMarginFloorExceeded, Message: fmt.Sprintf("task %s reported spending past its budget; the workflow failed with margin_floor_exceeded and nothing is charged: stop working on it", t.ID)}
	default:
		return &TaskError{Code: CodeTaskEnded, Message: fmt.Sprintf("task %s was %s already", t.ID, taskView(t).Status)}
	}
}

// getTask reads the task id for a call in scope s: ErrTaskNotFound when
// the Store has none of that id in s's environment.
func (e *Engine) getTask(ctx context.Context, s TaskScope, id string) (*driver.TaskRecord, error) {
	if !ids.Valid(ids.Task, id) {
		return nil, ErrTaskNotFound
	}
	t, err := e.store.GetTask(ctx, s.Environment, id)
	if errors.Is(err, ErrNotFound) {
		return nil, ErrTaskNotFound
	}
	return t, err
}

// checkCostItems reports whether items may be added to the n items
// summing to total a task holds: each item valid, their count and sum
// within bounds. It changes nothing.
func checkCostItems(n int, total int64, items []CostItem, param string) error {
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
// answer is a *TaskError with CodeMarginFloorExceeded. The check against
// the budget and the addition are one atomic step of the Store: two
// heartbeats through two engines cannot pass the budget together.
//
// Errors: ErrTaskNotFound; an *InvalidError naming costItems[i] (nothing
// recorded); a *TaskError: lease_lost, task_ended, margin_floor_exceeded.
func (e *Engine) HeartbeatTask(ctx context.Context, s TaskScope, id string, items []CostItem) (Task, error) {
	t, err := e.getTask(ctx, s, id)
	if err != nil {
		return Task{}, err
	}
	if err := held(t, s, driver.TaskClaimed); err != nil {
		return Task{}, err
	}
	if err := checkCostItems(len(t.Items), t.Spent, items, "costItems"); err != nil {
		return Task{}, err
	}
	now := e.now()
	got, out, err := e.store.HeartbeatTask(ctx, driver.TaskHeartbeat{ID: id, Livemode: t.Livemode, WorkerKeyID: t.WorkerKeyID,
		Items: items, Now: now, LeaseUntil: now.Add(e.opts.TaskLease), MaxItems: MaxCostItems, MaxTotal: MaxAmount})
	if err != nil {
		return Task{}, err
	}
	switch out {
	case driver.HeartbeatApplied:
		return taskView(got), nil
	case driver.HeartbeatOverLimit:
		// Another heartbeat of the same worker took the room meanwhile.
		return Task{}, checkCostItems(len(got.Items), got.Spent, items, "costItems")
	default: // exceeded, or not held any more
		if err := held(got, s, driver.TaskClaimed); err != nil {
			return Task{}, err
		}
		return Task{}, held(&driver.TaskRecord{ID: id, Livemode: t.Livemode, Product: t.Product, WorkerKeyID: t.WorkerKeyID, State: driver.TaskLost}, s, driver.TaskClaimed)
	}
}

// CompleteTask records the result of the task id held by the caller, with
// the cost items of its execution (as Execution.CostItems: added to those
// its heartbeats reported). result must be one JSON object of at most
// MaxTaskResultBytes. The engine then judges, prices and settles the
// workflow as for a product in process. Completing a completed task again
// answers it unchanged. Any engine sharing the Store takes a completion:
// the execution waiting for it, on this engine or another, is told.
//
// Errors: ErrTaskNotFound; an *InvalidError naming result or costItems[i];
// a *TaskError: lease_lost, task_ended, margin_floor_exceeded.
func (e *Engine) CompleteTask(ctx context.Context, s TaskScope, id string, result json.RawMessage, items []CostItem) (Task, error) {
	t, err := e.getTask(ctx, s, id)
	if err != nil {
		return Task{}, err
	}
	if err := held(t, s, driver.TaskCompleted); err != nil || t.State == driver.TaskCompleted {
		if err != nil {
			return Task{}, err
		}
		return taskView(t), nil
	}
	compact, err := taskResult(result)
	if err != nil {
		return Task{}, err
	}
	if err := checkCostItems(len(t.Items), t.Spent, items, "costItems"); err != nil {
		return Task{}, err
	}
	got, applied, err := e.store.EndTask(ctx, driver.TaskEnd{ID: id, Livemode: t.Livemode, From: []driver.TaskState{driver.TaskClaimed},
		WorkerKeyID: t.WorkerKeyID, Held: true, State: driver.TaskCompleted, Now: e.now(), Result: compact, ResultItems: append([]CostItem(nil), items...)})
	if err != nil {
		return Task{}, err
	}
	if !applied {
		if err := held(got, s, driver.TaskCompleted); err != nil || got.State != driver.TaskCompleted {
			if err == nil {
				err = held(&driver.TaskRecord{ID: id, Livemode: t.Livemode, Product: t.Product, WorkerKeyID: t.WorkerKeyID, State: driver.TaskLost}, s, driver.TaskCompleted)
			}
			return Task{}, err
		}
		return taskView(got), nil
	}
	v := taskView(got)
	v.Payload = t.Payload // the first answer carries it; a repeated one "{}"
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
func (e *Engine) FailTask(ctx context.Context, s TaskScope, id, message string, retry bool) (Task, error) {
	t, err := e.getTask(ctx, s, id)
	if err != nil {
		return Task{}, err
	}
	if err := held(t, s, driver.TaskFailed); err != nil || t.State == driver.TaskFailed {
		if err != nil {
			return Task{}, err
		}
		return taskView(t), nil
	}
	switch {
	case message == "":
		return Task{}, &InvalidError{Code: CodeParameterMissing, Param: "message", Message: "message is required: say why the task failed"}
	case len(message) > MaxTaskMessageBytes || !utf8.ValidString(message):
		return Task{}, &InvalidError{Code: CodeParameterInvalid, Param: "message", Message: fmt.Sprintf("message must be valid UTF-8 of at most %d bytes", MaxTaskMessageBytes)}
	}
	got, applied, err := e.store.EndTask(ctx, driver.TaskEnd{ID: id, Livemode: t.Livemode, From: []driver.TaskState{driver.TaskClaimed},
		WorkerKeyID: t.WorkerKeyID, Held: true, State: driver.TaskFailed, Now: e.now(), Message: message, Retry: retry})
	if err != nil {
		return Task{}, err
	}
	if !applied {
		if err := held(got, s, driver.TaskFailed); err != nil || got.State != driver.TaskFailed {
			if err == nil {
				err = held(&driver.TaskRecord{ID: id, Livemode: t.Livemode, Product: t.Product, WorkerKeyID: t.WorkerKeyID, State: driver.TaskLost}, s, driver.TaskFailed)
			}
			return Task{}, err
		}
		return taskView(got), nil
	}
	v := taskView(got)
	v.Payload = t.Payload
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
