package settleflow

import (
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Workers: a worker says who it is when it claims (WorkerInfo); the
// engine keeps the workers it has seen (Engine.Workers) and records, with
// the end of each attempt of a remote product, which worker ran it
// (Engine.Attempts, attempts.go). The task hub (tasks.go) calls these
// under its lock.

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

// WorkerSeen is a worker process that claimed tasks of this engine, as
// its registry of workers (Engine.Workers) holds it: one per worker key,
// host and name in an environment.
type WorkerSeen struct {
	Environment Environment
	// KeyID is the id of the worker key it claims with.
	KeyID string
	WorkerInfo
	// FirstSeen and LastClaim are when its first and its latest claim
	// came (a claim that got no task counts).
	FirstSeen time.Time
	LastClaim time.Time
	// Claimed counts the tasks handed to it.
	Claimed int64
	// InFlight counts the tasks it holds now, by product (none: empty).
	InFlight map[string]int
}

// maxWorkersSeen bounds the registry of workers: past it, a new worker
// replaces the one whose last claim is oldest among those holding no
// task (the registry is for people to read, not a record).
const maxWorkersSeen = 1000

type workerKey struct {
	env                Environment
	keyID, host, named string
}

// workerEntry is a worker of the registry (under the hub's lock).
type workerEntry struct {
	seen WorkerSeen
}

// seen records a claim by the worker process p names, at now, and returns
// its entry (h.mu held).
func (h *taskHub) seen(p ClaimTasksParams, now time.Time) *workerEntry {
	k := workerKey{env: p.Environment, keyID: p.Worker, host: p.WorkerInfo.Host, named: p.WorkerInfo.Name}
	w, ok := h.workers[k]
	if !ok {
		if len(h.workers) >= maxWorkersSeen {
			var oldest workerKey
			var at time.Time
			for k, o := range h.workers {
				if len(o.seen.InFlight) == 0 && (at.IsZero() || o.seen.LastClaim.Before(at)) {
					oldest, at = k, o.seen.LastClaim
				}
			}
			if !at.IsZero() {
				delete(h.workers, oldest)
			}
		}
		w = &workerEntry{seen: WorkerSeen{Environment: p.Environment, KeyID: p.Worker, FirstSeen: now, InFlight: map[string]int{}}}
		h.workers[k] = w
	}
	w.seen.WorkerInfo, w.seen.LastClaim = p.WorkerInfo, now
	return w
}

// Workers returns the worker processes that claimed tasks of env from
// this engine since it started (at most 1,000: the oldest idle ones are
// forgotten first), the latest claim first.
func (e *Engine) Workers(env Environment) []WorkerSeen {
	h := e.tasks
	h.mu.Lock()
	out := make([]WorkerSeen, 0, len(h.workers))
	for _, w := range h.workers {
		if w.seen.Environment != env {
			continue
		}
		s := w.seen
		s.InFlight = make(map[string]int, len(w.seen.InFlight))
		for p, n := range w.seen.InFlight {
			s.InFlight[p] = n
		}
		out = append(out, s)
	}
	h.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if !out[i].LastClaim.Equal(out[j].LastClaim) {
			return out[i].LastClaim.After(out[j].LastClaim)
		}
		a, b := out[i], out[j]
		return a.KeyID+"\x00"+a.Host+"\x00"+a.Name < b.KeyID+"\x00"+b.Host+"\x00"+b.Name
	})
	return out
}

// attempt is the record of t's attempt at now, once its execution ended
// (nil if no worker claimed it): the update recording the end writes it.
func (h *taskHub) attempt(t *task, w *Workflow, runErr error, now time.Time) *Attempt {
	h.mu.Lock()
	defer h.mu.Unlock()
	if t.by == nil {
		return nil
	}
	a := &Attempt{TaskID: t.t.ID, WorkflowID: w.ID, Livemode: w.Livemode, Number: t.t.Attempt,
		WorkerKeyID: t.by.seen.KeyID, WorkerHost: t.by.seen.Host, WorkerName: t.by.seen.Name, WorkerSDK: t.by.seen.SDK,
		ClaimedAt: t.claimedAt, EndedAt: now}
	switch t.state {
	case taskCompleted:
		a.Outcome = AttemptCompleted
	case taskFailed:
		a.Outcome, a.Message = AttemptFailed, t.message
	case taskExceeded:
		a.Outcome = AttemptMarginFloorExceeded
	default:
		a.Outcome = AttemptLeaseLost
		if runErr != nil {
			a.Message = runErr.Error()
		}
	}
	return a
}

// running returns the attempts of workflow id of env that workers hold
// now, as Engine.Attempts reports them (not yet ended: EndedAt zero).
func (h *taskHub) running(env Environment, id string) []Attempt {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []Attempt
	for _, t := range h.byID {
		if t.env != env || t.t.WorkflowID != id || t.state != taskClaimed || t.by == nil {
			continue
		}
		out = append(out, Attempt{TaskID: t.t.ID, WorkflowID: id, Livemode: t.t.Livemode, Number: t.t.Attempt,
			WorkerKeyID: t.by.seen.KeyID, WorkerHost: t.by.seen.Host, WorkerName: t.by.seen.Name, WorkerSDK: t.by.seen.SDK,
			ClaimedAt: t.claimedAt})
	}
	return out
}
