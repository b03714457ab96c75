package driver

import "time"

// AttemptOutcome is how one attempt of a remote product's workflow ended.
type AttemptOutcome string

// The outcomes of an attempt.
const (
	// AttemptCompleted: its worker completed the task.
	AttemptCompleted AttemptOutcome = "completed"
	// AttemptFailed: its worker failed the task (Message says why).
	AttemptFailed AttemptOutcome = "failed"
	// AttemptLeaseLost: the task was taken from its worker: its lease
	// passed without a heartbeat, the execution timed out, or the engine
	// stopped it.
	AttemptLeaseLost AttemptOutcome = "lease_lost"
	// AttemptMarginFloorExceeded: its worker reported spending past the
	// task's budget.
	AttemptMarginFloorExceeded AttemptOutcome = "margin_floor_exceeded"
)

// Attempt records which worker ran one attempt of a remote product's
// workflow (one task) and how it ended. It is written with the update that
// records the attempt's end (Update.Attempt), so an attempt is recorded
// once, and only if that update applies.
type Attempt struct {
	// TaskID is the task's id ("task_…"): one per attempt.
	TaskID     string
	WorkflowID string
	Livemode   bool
	// Number counts the workflow's attempts from 1, as the task's attempt
	// (an attempt cut short by a stopping engine is run again under the
	// same number, as a new task).
	Number int
	// WorkerKeyID is the id of the worker key that claimed the task;
	// WorkerHost, WorkerName and WorkerSDK are what the worker said of
	// itself in its claim ("" when it said nothing).
	WorkerKeyID string
	WorkerHost  string
	WorkerName  string
	WorkerSDK   string
	// Instance is the engine (Options.WorkerID) the task was claimed
	// through ("" in records written before it was kept).
	Instance  string
	ClaimedAt time.Time
	EndedAt   time.Time
	Outcome   AttemptOutcome
	// Message is the worker's message of a failed attempt, or why the
	// lease was lost.
	Message string
}
