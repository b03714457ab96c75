package settleflow

import (
	"context"
	"encoding/json"
	"time"
)

// EventType names what happened to a workflow.
type EventType string

// The event types the engine emits.
const (
	// EventWorkflowCompleted is emitted when a workflow reaches Settled.
	EventWorkflowCompleted EventType = "workflow.completed"
	// EventWorkflowFailed is emitted when a workflow reaches Failed.
	EventWorkflowFailed EventType = "workflow.failed"
	// EventWorkflowCanceled is emitted when a workflow reaches Canceled.
	EventWorkflowCanceled EventType = "workflow.canceled"
)

// EventTypes lists every event type the engine emits.
var EventTypes = []EventType{EventWorkflowCompleted, EventWorkflowFailed, EventWorkflowCanceled}

// Valid reports whether t is one of EventTypes.
func (t EventType) Valid() bool {
	switch t {
	case EventWorkflowCompleted, EventWorkflowFailed, EventWorkflowCanceled:
		return true
	}
	return false
}

// Event is an outbox entry and, marshalled to JSON, the envelope delivered to
// webhook endpoints:
//
//	{"id": "evt_…", "object": "event", "type": "workflow.completed",
//	 "livemode": false, "createdAt": "…", "data": {…}}
//
// It is written in the same transaction as the state change that causes it.
// json.Marshal of an Event is its one encoding: the webhook body and the
// event read back (Engine.FetchEvent, Engine.ListEvents) are the same bytes.
type Event struct {
	ID        string    `json:"id"`
	Object    string    `json:"object"`
	Type      EventType `json:"type"`
	Livemode  bool      `json:"livemode"`
	CreatedAt time.Time `json:"createdAt"`
	Data      EventData `json:"data"`
}

// Environment returns the environment the event belongs to.
func (e *Event) Environment() Environment {
	if e.Livemode {
		return Live
	}
	return Test
}

// EventData is the "data" object of an event: the workflow's outcome.
type EventData struct {
	WorkflowID string          `json:"workflowId"`
	Status     Status          `json:"status"`
	Quoted     Money           `json:"quoted"`
	Margin     Margin          `json:"margin"`
	Result     json.RawMessage `json:"result,omitempty"`
	Settlement *Settlement     `json:"settlement,omitempty"`
	Failure    *Failure        `json:"failure,omitempty"`
}

// Notifier receives the events the engine wrote to its outbox, oldest first.
//
// Notify returns nil only once it has taken durable responsibility for every
// event given (for example by recording a delivery per webhook endpoint); the
// engine then marks them dispatched. After a crash an event may be handed over
// again, with the same ID; a Notifier dedupes on it. An error leaves the events
// in the outbox, and they are offered again after a backoff.
type Notifier interface {
	Notify(ctx context.Context, events []Event) error
}

// NotifierFunc adapts a function to the [Notifier] interface.
type NotifierFunc func(ctx context.Context, events []Event) error

// Notify calls f.
func (f NotifierFunc) Notify(ctx context.Context, events []Event) error { return f(ctx, events) }
