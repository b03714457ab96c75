package client

import (
	"context"
	"net/http"
	"net/url"
)

// TaskService calls the task endpoints (docs/api.md §16), with a worker
// key (rk_test_… or rk_live_…). [Worker] is built on it; call it directly
// to write a worker of your own.
type TaskService struct{ b *backend }

// TaskClaimParams is a claim for tasks.
type TaskClaimParams struct {
	// Products are the remote products the worker serves. Required.
	Products []string `json:"products"`
	// Max is how many tasks to take at most (1–100; 0 means 1).
	Max int `json:"max,omitempty"`
	// WaitSeconds is how long to wait for a first task when none is ready
	// (0–30). Keep it below the client's timeout (WithTimeout).
	WaitSeconds int `json:"waitSeconds,omitempty"`
	// Worker, if set, says which worker process claims: the server's
	// dashboard lists workers by key, host and name and shows which one
	// ran each attempt. [Worker] sends it.
	Worker *WorkerIdentity `json:"worker,omitempty"`
}

// WorkerIdentity is what a worker process says of itself when it claims
// (docs/api.md §16): every field optional, UTF-8 without control
// characters.
type WorkerIdentity struct {
	// Host is the machine it runs on: at most 255 bytes.
	Host string `json:"host,omitempty"`
	// Name tells it from other workers on the host: at most 128 bytes.
	Name string `json:"name,omitempty"`
	// SDK is the library and version: at most 64 bytes.
	SDK string `json:"sdk,omitempty"`
}

// Claim claims tasks (POST /v1/tasks/claim, operation claimTasks): up to
// Max, waiting up to WaitSeconds for a first one; none when the wait ends
// with nothing. It is sent once, never retried: tasks a lost answer held
// come back when their lease passes. Only a claim that could not be sent at
// all (the connection was refused, nothing was written) goes on to the
// client's next base URL ([WithBaseURLs]); one whose answer is lost after
// it was sent returns its *ConnectionError, and the caller claims again
// later with a new claim ([Worker] does, after a pause).
func (s *TaskService) Claim(ctx context.Context, params *TaskClaimParams) ([]Task, error) {
	var got struct {
		Data []Task `json:"data"`
	}
	if params == nil {
		params = &TaskClaimParams{}
	}
	_, err := s.b.do(ctx, request{method: http.MethodPost, path: "/v1/tasks/claim", body: params, noRetry: true}, &got)
	return got.Data, err
}

// Heartbeat extends the task's lease and reports items as spent (POST
// /v1/tasks/{id}/heartbeat, operation heartbeatTask). Past the task's
// budget it is a 409 margin_floor_exceeded. A heartbeat without items only
// extends the lease, so it is retried as configured, like Complete; one
// carrying items is sent once (resending it after a lost answer would
// report the spend twice), except that one that could not be sent at all
// goes on to the next base URL, as a claim does.
func (s *TaskService) Heartbeat(ctx context.Context, id string, items []CostItem) (*Task, error) {
	if items == nil {
		items = []CostItem{}
	}
	t := new(Task)
	_, err := s.b.do(ctx, request{method: http.MethodPost, path: "/v1/tasks/" + url.PathEscape(id) + "/heartbeat", noRetry: len(items) > 0,
		body: struct {
			CostItems []CostItem `json:"costItems"`
		}{items}}, t)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// Complete records the task's result, anything that marshals to a JSON
// object (nil is sent as {}), and the cost items of its run (POST
// /v1/tasks/{id}/complete, operation completeTask). Idempotent: retried
// as configured (WithMaxRetries) on a connection error, 408, 429 and 5xx,
// after a random backoff, through any of the client's base URLs; any other
// answer (409 lease_lost, task_ended, margin_floor_exceeded, a 4xx) is
// final and returned at once.
func (s *TaskService) Complete(ctx context.Context, id string, result any, items []CostItem) (*Task, error) {
	if result == nil {
		result = struct{}{}
	}
	if items == nil {
		items = []CostItem{}
	}
	t := new(Task)
	_, err := s.b.do(ctx, request{method: http.MethodPost, path: "/v1/tasks/" + url.PathEscape(id) + "/complete",
		body: struct {
			Result    any        `json:"result"`
			CostItems []CostItem `json:"costItems"`
		}{result, items}}, t)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// Fail ends the task as failed (POST /v1/tasks/{id}/fail, operation
// failTask): with retry, the workflow is tried again after its backoff;
// without, it fails for good. Idempotent: retried as Complete is.
func (s *TaskService) Fail(ctx context.Context, id, message string, retry bool) (*Task, error) {
	t := new(Task)
	_, err := s.b.do(ctx, request{method: http.MethodPost, path: "/v1/tasks/" + url.PathEscape(id) + "/fail",
		body: struct {
			Message string `json:"message"`
			Retry   bool   `json:"retry"`
		}{message, retry}}, t)
	if err != nil {
		return nil, err
	}
	return t, nil
}
