package driver

import (
	"context"
	"encoding/json"
	"time"

	"github.com/settleflow/settleflow/wire"
)

// Tasks of remote products (issue 42): a remote product's attempt is a
// task row in the Store, so that any engine sharing the Store hands it to
// a worker, extends its lease, takes its spend and ends it, and a task a
// worker holds outlives the engine that created it. The workflow row keeps
// the execution's own lease (the execute stage's): the task row is the
// attempt, with the lease of the worker that holds it.

// TaskState is where a task is. Queued and Claimed are open; the others
// are ended.
type TaskState string

// The states of a task.
const (
	// TaskQueued: waiting for a worker.
	TaskQueued TaskState = "queued"
	// TaskClaimed: a worker holds it, until LeaseUntil.
	TaskClaimed TaskState = "claimed"
	// TaskCompleted: its worker completed it (Result, ResultItems).
	TaskCompleted TaskState = "completed"
	// TaskFailed: its worker failed it (Message, Retry).
	TaskFailed TaskState = "failed"
	// TaskLost: its lease passed, its execution timed out or was stopped.
	TaskLost TaskState = "lost"
	// TaskExceeded: a heartbeat's spend passed its Budget.
	TaskExceeded TaskState = "exceeded"
	// TaskWithdrawn: its engine stopped before a worker claimed it.
	TaskWithdrawn TaskState = "withdrawn"
)

// Open reports whether a task in state s is waiting for or held by a
// worker.
func (s TaskState) Open() bool { return s == TaskQueued || s == TaskClaimed }

// TaskRecord is one task as the Store holds it.
type TaskRecord struct {
	// ID is "task_…": one per attempt.
	ID         string
	Livemode   bool
	WorkflowID string
	Product    string
	CustomerID string
	// Attempt counts the workflow's attempts from 1.
	Attempt int
	// Payload is the workflow's payload while the task is open ("{}" once
	// it ended).
	Payload json.RawMessage
	// Currency is the quote's; Budget, when not nil, the most the task's
	// heartbeats may report spending (the margin floor's budget).
	Currency string
	Budget   *int64
	State    TaskState
	// WorkerKeyID is the key the worker claimed with; WorkerHost,
	// WorkerName and WorkerSDK what it said of itself; Instance the engine
	// (Options.WorkerID) that handed it out. Empty until claimed.
	WorkerKeyID string
	WorkerHost  string
	WorkerName  string
	WorkerSDK   string
	Instance    string
	ClaimedAt   time.Time // zero until claimed
	LeaseUntil  time.Time
	// Spent sums Items, the cost items its heartbeats reported.
	Spent int64
	Items []wire.CostItem
	// Result and ResultItems are its completion's; Message and Retry its
	// failure's.
	Result      json.RawMessage
	ResultItems []wire.CostItem
	Message     string
	Retry       bool
	CreatedAt   time.Time
	EndedAt     time.Time // zero while open
	// Recorded reports that the attempt's end is recorded (an Attempt with
	// its TaskID exists: the workflow's update that ended it applied).
	Recorded bool
}

// TaskClaim asks for up to Max queued tasks of Products in one environment,
// oldest first, leased to the worker until LeaseUntil.
type TaskClaim struct {
	Livemode   bool
	Products   []string
	Max        int
	Now        time.Time
	LeaseUntil time.Time
	// Worker is who claims (Instance: through which engine); the Store
	// records it on each task taken and, when it took any, in the workers
	// seen (SawWorker) in the same transaction.
	Worker WorkerRecord
}

// TaskHeartbeat extends the lease of a claimed task and adds to its spend;
// a task whose lease passed at Now takes none (HeartbeatNotHeld).
type TaskHeartbeat struct {
	ID       string
	Livemode bool
	// WorkerKeyID, when not empty, must be the task's.
	WorkerKeyID string
	Items       []wire.CostItem
	Now         time.Time
	LeaseUntil  time.Time
	// MaxItems and MaxTotal bound the task's items once Items are added
	// (their count and their sum): past either nothing changes.
	MaxItems int
	MaxTotal int64
}

// HeartbeatOutcome is what a TaskHeartbeat did.
type HeartbeatOutcome int

// The outcomes of a TaskHeartbeat.
const (
	// HeartbeatApplied: the lease is extended and the items added.
	HeartbeatApplied HeartbeatOutcome = iota
	// HeartbeatNotHeld: the task is not claimed (by that worker), or
	// unknown (nil record); nothing changed.
	HeartbeatNotHeld
	// HeartbeatExceeded: the items took the spend past the Budget: they
	// are added and the task is ended TaskExceeded.
	HeartbeatExceeded
	// HeartbeatOverLimit: the items would pass MaxItems or MaxTotal;
	// nothing changed.
	HeartbeatOverLimit
)

// TaskEnd ends a task, if it is in one of From (and, when WorkerKeyID is
// not empty, held by that worker; when Expired, its lease has passed at
// Now; when Held, its lease has not passed at Now), moving it to State at
// Now.
type TaskEnd struct {
	ID          string
	Livemode    bool
	From        []TaskState
	WorkerKeyID string
	Expired     bool
	// Held is a worker's own end (a completion or failure): refused once
	// the lease passed, even before any engine ended the task as lost.
	Held        bool
	State       TaskState
	Now         time.Time
	Result      json.RawMessage
	ResultItems []wire.CostItem
	Message     string
	Retry       bool
}

// WorkerRecord is a worker process that claimed tasks, as the Store keeps
// it: one per environment, key, host and name.
type WorkerRecord struct {
	Livemode  bool
	KeyID     string
	Host      string
	Name      string
	SDK       string
	Instance  string // the engine its latest recorded claim went through
	FirstSeen time.Time
	LastClaim time.Time
	// Claimed counts the tasks handed to it; InFlight, when listed, the
	// tasks it holds now by product (counted from the task rows).
	Claimed  int64
	InFlight map[string]int
}

// TaskNotice tells engines that a task was queued (Product set) or ended
// (TaskID set).
type TaskNotice struct {
	Livemode bool
	Product  string
	TaskID   string
	// Resync: notices may have been missed (a listener reconnected):
	// every waiter looks again.
	Resync bool
}

// TaskStore keeps remote products' tasks and the workers that claim them.
// Every engine sharing the Store sees the same tasks: a task is held by
// at most one worker at a time (claims take rows exclusively), and the
// spend that decides a Budget is the sum the Store holds (a heartbeat's
// check and add are one atomic step).
type TaskStore interface {
	// OpenTask returns the task of t.WorkflowID not yet recorded (no
	// Attempt with its id) that is open, or was claimed by a worker and
	// ended, if any (the latest); otherwise it inserts t (State
	// TaskQueued) and returns it with created true, and engines are told
	// (TaskNotice with Product).
	OpenTask(ctx context.Context, t TaskRecord) (got *TaskRecord, created bool, err error)

	// GetTask returns the task id of the environment, or ErrNotFound.
	GetTask(ctx context.Context, env wire.Environment, id string) (*TaskRecord, error)

	// ListTasks returns the tasks of the workflow id of env, oldest first.
	ListTasks(ctx context.Context, env wire.Environment, workflowID string) ([]*TaskRecord, error)

	// ClaimTasks leases up to c.Max queued tasks of c.Products, oldest
	// first; of concurrent claims, across every engine on the Store, each
	// task goes to one.
	ClaimTasks(ctx context.Context, c TaskClaim) ([]*TaskRecord, error)

	// HeartbeatTask applies h in one atomic step and returns the task as
	// it is after it (nil if unknown).
	HeartbeatTask(ctx context.Context, h TaskHeartbeat) (*TaskRecord, HeartbeatOutcome, error)

	// EndTask applies e if the task is in one of e.From (and its other
	// conditions hold), dropping its payload; it returns the task as it
	// is after the call (nil if unknown) and whether it applied. An
	// applied end, and a heartbeat that exceeded, tell engines
	// (TaskNotice with TaskID).
	EndTask(ctx context.Context, e TaskEnd) (*TaskRecord, bool, error)

	// PruneTasks deletes up to limit tasks ended before endedBefore that
	// no engine needs any more (recorded, or never claimed).
	PruneTasks(ctx context.Context, endedBefore time.Time, limit int) (int, error)

	// SawWorker records a claim by w at w.LastClaim (creating it, or
	// updating its SDK, Instance and LastClaim).
	SawWorker(ctx context.Context, w WorkerRecord) error

	// ListWorkers returns up to limit workers of env, the latest claim
	// first, with the tasks each holds now (InFlight).
	ListWorkers(ctx context.Context, env wire.Environment, limit int) ([]WorkerRecord, error)

	// SubscribeTasks calls fn with every TaskNotice of this Store's
	// database, from any engine on it, until cancel is called. fn must
	// not block.
	SubscribeTasks(fn func(TaskNotice)) (cancel func())
}
