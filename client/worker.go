package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/settleflow/settleflow/wire"
)

// Task is one attempt of a remote product's execution, as the task
// endpoints hand it to a worker (docs/api.md, "Workers and tasks").
type Task = wire.Task

// CostItem is one line of what a task spent (wire.CostItem).
type CostItem = wire.CostItem

// TaskResult is what a handler returns for a task it completed: Result is
// the workflow's result (anything that marshals to a JSON object; nil is
// sent as {}), CostItems what the run cost besides what it reported with
// [ReportSpend].
type TaskResult struct {
	Result    any
	CostItems []CostItem
}

// TaskHandler runs one task. Its ctx carries the task's budget
// ([SpendBudget]) and [ReportSpend], and is canceled when the task is
// stopped: its lease was lost (ErrLeaseLost), its spend passed the budget
// (ErrMarginFloorExceeded), or the worker stopped and the drain timeout
// passed (ErrWorkerStopped); context.Cause(ctx) says which. Return an error
// wrapped with [Permanent] to fail the workflow for good; any other error
// fails this attempt, and the server retries it after its backoff.
type TaskHandler func(ctx context.Context, task *Task) (TaskResult, error)

// Why a task's context is canceled (context.Cause).
var (
	// ErrLeaseLost: the server took the task back (its lease passed, it was
	// timed out or the server stopped it); nothing more is recorded for it.
	ErrLeaseLost = errors.New("settleflow: the task's lease was lost")
	// ErrMarginFloorExceeded: the task reported spending past its budget;
	// the workflow failed and nothing is charged.
	ErrMarginFloorExceeded = errors.New("settleflow: the task's spend passed its budget")
	// ErrWorkerStopped: the worker stopped and the task had not finished
	// within the drain timeout; it is handed back to be retried.
	ErrWorkerStopped = errors.New("settleflow: the worker stopped")
)

type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Permanent marks err as a failure that retrying will not mend: a handler
// returning it fails its workflow for good (POST /v1/tasks/{id}/fail with
// retry false).
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err}
}

// IsPermanent reports whether err was marked with [Permanent].
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

// WorkerOptions tune a [Worker]. The zero value is usable.
type WorkerOptions struct {
	// Concurrency is how many tasks run at once. Default 4.
	Concurrency int
	// HeartbeatInterval is how often a running task's lease is extended.
	// Default 10 s (the server's lease is 30 s by default).
	HeartbeatInterval time.Duration
	// Wait is how long one claim waits for a task (at most 30 s, and
	// 2 s less than the client's timeout). Default 20 s.
	Wait time.Duration
	// DrainTimeout is how long [Worker.Run] lets the tasks in flight finish
	// once its ctx ends, before canceling them (ErrWorkerStopped). Default
	// 30 s.
	DrainTimeout time.Duration
	// Logger, if set, gets a line per claim error and per task that could
	// not be reported.
	Logger *slog.Logger
	// Name tells this worker from others on its host, in the server's
	// dashboard (at most 128 bytes). Default "pid-" and the process id.
	Name string
	// Host is the machine it runs on, in the server's dashboard (at most
	// 255 bytes). Default the hostname (os.Hostname).
	Host string
}

// Worker claims tasks of the remote products it has handlers for and runs
// each handler in a goroutine of its own, heartbeating its lease, until
// [Worker.Run]'s ctx ends. Build it with [Client.NewWorker] on a client
// holding a worker key (rk_test_… or rk_live_…).
type Worker struct {
	tasks    *TaskService
	opts     WorkerOptions
	mu       sync.Mutex
	handlers map[string]TaskHandler
}

// NewWorker returns a worker that calls the task endpoints with c's key.
func (c *Client) NewWorker(opts WorkerOptions) *Worker {
	if opts.Concurrency <= 0 {
		opts.Concurrency = 4
	}
	if opts.HeartbeatInterval <= 0 {
		opts.HeartbeatInterval = 10 * time.Second
	}
	if opts.Wait <= 0 {
		opts.Wait = 20 * time.Second
	}
	opts.Wait = min(opts.Wait, 30*time.Second)
	if opts.DrainTimeout <= 0 {
		opts.DrainTimeout = 30 * time.Second
	}
	if t := c.b.timeout; t > 0 && opts.Wait > t-2*time.Second {
		// A claim's answer must come before the client's own timeout.
		opts.Wait = max(t-2*time.Second, time.Second)
	}
	if opts.Name == "" {
		opts.Name = "pid-" + strconv.Itoa(os.Getpid())
	}
	if opts.Host == "" {
		opts.Host, _ = os.Hostname()
		opts.Host = truncateUTF8(opts.Host, 255)
	}
	return &Worker{tasks: c.Tasks, opts: opts, handlers: map[string]TaskHandler{}}
}

// truncateUTF8 cuts s to at most n bytes, at a rune boundary.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Handle registers h for the remote product named product. Register every
// handler before Run.
func (w *Worker) Handle(product string, h TaskHandler) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.handlers[product] = h
}

// Run claims and runs tasks until ctx ends, then stops claiming, waits up
// to DrainTimeout for the tasks in flight, cancels those left (each is
// reported failed with retry, so the server runs it again) and returns
// ctx's error. A claim that fails is never resent: after a pause (from
// 0.5 s doubling to 30 s, with jitter) the worker sends a new claim (a
// lost answer's tasks come back when their lease passes). A completion or
// failure is retried as the client's options say (its calls are
// idempotent), through any of its base URLs ([WithBaseURLs]). An error that
// no retry mends (a key that is not a worker key, a product it may not
// serve, a product the server does not run remotely) is returned at once.
func (w *Worker) Run(ctx context.Context) error {
	w.mu.Lock()
	products := make([]string, 0, len(w.handlers))
	handlers := make(map[string]TaskHandler, len(w.handlers))
	for p, h := range w.handlers {
		products = append(products, p)
		handlers[p] = h
	}
	w.mu.Unlock()
	if len(products) == 0 {
		return errors.New("settleflow: the worker has no handler: call Handle first")
	}
	slots := make(chan struct{}, w.opts.Concurrency)
	id := &WorkerIdentity{Host: w.opts.Host, Name: w.opts.Name, SDK: "settleflow-go/" + Version}
	var running sync.WaitGroup
	// stopTasks cancels the tasks still running after the drain timeout.
	tasksCtx, stopTasks := context.WithCancelCause(context.WithoutCancel(ctx))
	defer stopTasks(nil)
	pause := 500 * time.Millisecond
	var runErr error
claims:
	for ctx.Err() == nil {
		// Wait for a free slot, then take as many as are free.
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			break claims
		}
		free := 1
		for free < w.opts.Concurrency {
			select {
			case slots <- struct{}{}:
				free++
				continue
			default:
			}
			break
		}
		got, err := w.tasks.Claim(ctx, &TaskClaimParams{Products: products, Max: free, WaitSeconds: int(w.opts.Wait / time.Second), Worker: id})
		for range free - len(got) {
			<-slots
		}
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			var perm *PermissionError
			var inv *InvalidRequestError
			var auth *AuthenticationError
			if errors.As(err, &perm) || errors.As(err, &inv) || errors.As(err, &auth) {
				runErr = err
				break
			}
			// Half the pause, plus a random part of the other half: workers
			// cut off together do not all come back at once.
			wait := pause/2 + randDuration(pause/2)
			w.log("claiming tasks failed; claiming again after a pause", "error", err, "pause", wait)
			select {
			case <-time.After(wait):
			case <-ctx.Done():
			}
			pause = min(2*pause, 30*time.Second)
			continue
		}
		pause = 500 * time.Millisecond
		for i := range got {
			t := &got[i]
			running.Add(1)
			go func() {
				defer running.Done()
				defer func() { <-slots }()
				w.run(tasksCtx, handlers[t.Product], t)
			}()
		}
	}
	drained := make(chan struct{})
	go func() { running.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(w.opts.DrainTimeout):
		stopTasks(ErrWorkerStopped)
		<-drained
	}
	if runErr != nil {
		return runErr
	}
	return ctx.Err()
}

func (w *Worker) log(msg string, args ...any) {
	if w.opts.Logger != nil {
		w.opts.Logger.Warn(msg, args...)
	}
}

type taskKey struct{}

// taskRun is a task while its handler runs.
type taskRun struct {
	w      *Worker
	task   *Task
	cancel context.CancelCauseFunc
	// mu orders the heartbeats (timer and ReportSpend) of the task.
	mu sync.Mutex
}

// SpendBudget returns the most the task a handler runs may spend and keep
// its margin floor; ok is false when no floor applies.
func SpendBudget(ctx context.Context) (budget int64, ok bool) {
	r, _ := ctx.Value(taskKey{}).(*taskRun)
	if r == nil || r.task.Budget == nil {
		return 0, false
	}
	return r.task.Budget.Amount, true
}

// ReportSpend reports what the task a handler runs spent, at once, in a
// heartbeat: the server adds the items to the workflow's cost. Past the
// budget it returns ErrMarginFloorExceeded and the handler's ctx is
// canceled: the workflow fails, nothing is charged. A report the server
// refuses (an invalid item) returns its *InvalidRequestError and changes
// nothing. Outside a handler it does nothing.
func ReportSpend(ctx context.Context, items ...CostItem) error {
	r, _ := ctx.Value(taskKey{}).(*taskRun)
	if r == nil {
		return nil
	}
	return r.heartbeat(ctx, items)
}

// heartbeat extends the task's lease, reporting items; a 409 or 404
// cancels the handler with the cause.
func (r *taskRun) heartbeat(ctx context.Context, items []CostItem) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, err := r.w.tasks.Heartbeat(context.WithoutCancel(ctx), r.task.ID, items)
	if err == nil {
		r.task.LeaseExpiresAt, r.task.Spent = t.LeaseExpiresAt, t.Spent
		return nil
	}
	if cause := stopCause(err); cause != nil {
		r.cancel(cause)
		return fmt.Errorf("%w: %w", cause, err)
	}
	return err
}

// stopCause is why an answer about a task means the worker must stop it,
// or nil.
func stopCause(err error) error {
	var api *APIError
	if !errors.As(err, &api) {
		return nil
	}
	switch {
	case api.Code == wire.CodeMarginFloorExceeded:
		return ErrMarginFloorExceeded
	case api.Status == http.StatusConflict, api.Status == http.StatusNotFound:
		return ErrLeaseLost
	}
	return nil
}

// run runs h on t, heartbeating meanwhile, and reports how it ended.
func (w *Worker) run(parent context.Context, h TaskHandler, t *Task) {
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	r := &taskRun{w: w, task: t, cancel: cancel}
	ctx = context.WithValue(ctx, taskKey{}, r)
	beats := make(chan struct{})
	go func() {
		defer close(beats)
		tick := time.NewTicker(w.opts.HeartbeatInterval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if err := r.heartbeat(ctx, nil); err != nil && ctx.Err() == nil {
					w.log("heartbeat failed", "task", t.ID, "error", err)
				}
			}
		}
	}()
	res, err := call(ctx, h, t)
	stopped := context.Cause(ctx)
	cancel(nil)
	<-beats
	r.mu.Lock() // no heartbeat in flight
	defer r.mu.Unlock()
	if stopped != nil && !errors.Is(stopped, ErrWorkerStopped) {
		return // the server stopped it: nothing to report
	}
	rctx, done := context.WithTimeout(context.WithoutCancel(parent), 30*time.Second)
	defer done()
	var report error
	switch {
	case err != nil && errors.Is(stopped, ErrWorkerStopped):
		_, report = w.tasks.Fail(rctx, t.ID, "the worker stopped before the task finished", true)
	case err != nil:
		_, report = w.tasks.Fail(rctx, t.ID, failMessage(err), !IsPermanent(err))
	default:
		_, report = w.tasks.Complete(rctx, t.ID, res.Result, res.CostItems)
	}
	if report != nil {
		w.log("reporting the task's end failed", "task", t.ID, "error", report)
	}
}

// call runs h, turning a panic into a permanent failure.
func call(ctx context.Context, h TaskHandler, t *Task) (res TaskResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = Permanent(fmt.Errorf("handler panicked: %v", p))
		}
	}()
	return h(ctx, t)
}

// failMessage is err's text as a task's failure message: not empty, at
// most 1,024 bytes of valid UTF-8.
func failMessage(err error) string {
	msg := strings.ToValidUTF8(err.Error(), "\uFFFD")
	if msg == "" {
		return "the handler failed"
	}
	for len(msg) > 1024 {
		_, size := utf8.DecodeLastRuneInString(msg)
		msg = msg[:len(msg)-size]
	}
	return msg
}
