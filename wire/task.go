package wire

import (
	"encoding/json"
	"time"
)

// TaskStatus is a task's state as a worker sees it. The names are part of
// the wire contract.
type TaskStatus string

// The states of a task a worker holds.
const (
	// TaskClaimed: the worker holds the task until LeaseExpiresAt; a
	// heartbeat extends it.
	TaskClaimed TaskStatus = "claimed"
	// TaskCompleted: the worker completed it; its result is recorded.
	TaskCompleted TaskStatus = "completed"
	// TaskFailed: the worker failed it.
	TaskFailed TaskStatus = "failed"
)

// Task is one attempt of a remote product's execution, handed to a worker
// (POST /v1/tasks/claim): the "task" object of docs/api.md, "Workers and
// tasks".
type Task struct {
	// ID is "task_" followed by a ULID: one per attempt.
	ID       string `json:"id"`
	Object   string `json:"object"`
	Livemode bool   `json:"livemode"`
	// WorkflowID is the workflow the task runs; an attempt of it that
	// fails with a retry, or whose lease ends, is another task.
	WorkflowID string          `json:"workflowId"`
	Product    string          `json:"product"`
	Payload    json.RawMessage `json:"payload"`
	CustomerID string          `json:"customerId"`
	// Attempt counts the workflow's attempts, from 1.
	Attempt int        `json:"attempt"`
	Status  TaskStatus `json:"status"`
	// LeaseExpiresAt is when the task is taken from its worker unless a
	// heartbeat extends it.
	LeaseExpiresAt time.Time `json:"leaseExpiresAt"`
	// Budget is the most the task may spend (reported as cost items) and
	// keep the margin floor at the price quoted; null when no floor applies.
	Budget *Money `json:"budget"`
	// Spent is what the task reported spending so far.
	Spent Money `json:"spent"`
}

// TaskObject is the "object" value of a Task.
const TaskObject = "task"
