package settleflow

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/settleflow/settleflow/driver"
)

// Workers: a worker says who it is when it claims (WorkerInfo); the Store
// keeps the workers every engine has seen (Engine.Workers) and records,
// with the end of each attempt of a remote product, which worker ran it
// and through which engine (Engine.Attempts, attempts.go).

// WorkerInfo is what a worker process says of itself when it claims. Every
// field is optional; each is UTF-8 without control characters.
type WorkerInfo struct {
	// Host is the machine it runs on (its hostname): at most 255 bytes.
	Host string
	// Name tells it from other workers on the host (a process name, or
	// "pid-1234"): at most 128 bytes.
	Name string
	// SDK is the client library and version ("settleflow-python/0.4.0"):
	// at most 64 bytes.
	SDK string
}

// check returns an *InvalidError naming the first bad field of i.
func (i WorkerInfo) check() error {
	for _, f := range []struct {
		param, v string
		max      int
	}{{"worker.host", i.Host, 255}, {"worker.name", i.Name, 128}, {"worker.sdk", i.SDK, 64}} {
		if len(f.v) > f.max || !utf8.ValidString(f.v) || strings.IndexFunc(f.v, unicode.IsControl) >= 0 {
			return &InvalidError{Code: CodeParameterInvalid, Param: f.param,
				Message: fmt.Sprintf("%s must be UTF-8 of at most %d bytes without control characters", f.param, f.max)}
		}
	}
	return nil
}

// WorkerSeen is a worker process that claimed tasks through any engine
// sharing the Store, as the Store's workers hold it (Engine.Workers): one
// per worker key, host and name in an environment.
type WorkerSeen struct {
	Environment Environment
	// KeyID is the id of the worker key it claims with.
	KeyID string
	WorkerInfo
	// Instance is the engine (Options.WorkerID) its latest recorded claim
	// went through.
	Instance string
	// FirstSeen and LastClaim are when its first and its latest claim
	// came (a claim that got no task counts, recorded at most every 10 s
	// per engine).
	FirstSeen time.Time
	LastClaim time.Time
	// Claimed counts the tasks handed to it.
	Claimed int64
	// InFlight counts the tasks it holds now, by product (none: empty),
	// counted from the tasks in the Store.
	InFlight map[string]int
}

// maxWorkersSeen bounds the workers listed (and the claims an engine
// remembers recording): the registry is for people to read, not a record.
const maxWorkersSeen = 1000

type workerKey struct {
	livemode           bool
	keyID, host, named string
}

// Workers returns the worker processes that claimed tasks of env through
// any engine sharing the Store (at most 1,000), the latest claim first.
func (e *Engine) Workers(ctx context.Context, env Environment) ([]WorkerSeen, error) {
	ws, err := e.store.ListWorkers(ctx, env, maxWorkersSeen)
	if err != nil {
		return nil, err
	}
	out := make([]WorkerSeen, 0, len(ws))
	for _, w := range ws {
		out = append(out, WorkerSeen{Environment: env, KeyID: w.KeyID, WorkerInfo: WorkerInfo{Host: w.Host, Name: w.Name, SDK: w.SDK},
			Instance: w.Instance, FirstSeen: w.FirstSeen, LastClaim: w.LastClaim, Claimed: w.Claimed, InFlight: w.InFlight})
	}
	return out, nil
}

// attemptOf is the record of an attempt's task t (nil if no worker
// claimed it); ended, the record of its end at now, else of an attempt
// running (EndedAt zero, no Outcome).
func attemptOf(t *driver.TaskRecord, runErr error, ended bool, now time.Time) *Attempt {
	if t == nil || t.ClaimedAt.IsZero() {
		return nil
	}
	a := &Attempt{TaskID: t.ID, WorkflowID: t.WorkflowID, Livemode: t.Livemode, Number: t.Attempt,
		WorkerKeyID: t.WorkerKeyID, WorkerHost: t.WorkerHost, WorkerName: t.WorkerName, WorkerSDK: t.WorkerSDK,
		Instance: t.Instance, ClaimedAt: t.ClaimedAt}
	if !ended {
		return a
	}
	a.EndedAt = now
	switch t.State {
	case driver.TaskCompleted:
		a.Outcome = AttemptCompleted
	case driver.TaskFailed:
		a.Outcome, a.Message = AttemptFailed, t.Message
	case driver.TaskExceeded:
		a.Outcome = AttemptMarginFloorExceeded
	default:
		a.Outcome = AttemptLeaseLost
		if runErr != nil {
			a.Message = runErr.Error()
		}
	}
	return a
}

// attempt is the record of r's attempt at now, once its execution ended
// (nil if no worker claimed its task, or if the task is still held: a
// stopping engine left it to its worker, and the next execution of the
// workflow adopts it): the update recording the end writes it.
func (h *taskHub) attempt(r *taskRun, runErr error, now time.Time) *Attempt {
	if r == nil || r.rec == nil || r.rec.State.Open() {
		return nil
	}
	return attemptOf(r.rec, runErr, true, now)
}
