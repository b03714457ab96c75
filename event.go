package settleflow

import (
	"context"

	"github.com/settleflow/settleflow/wire"
)

// EventType names what happened to a workflow (wire.EventType).
type EventType = wire.EventType

// The event types the engine emits.
const (
	// EventWorkflowCompleted is emitted when a workflow reaches Settled.
	EventWorkflowCompleted = wire.EventWorkflowCompleted
	// EventWorkflowFailed is emitted when a workflow reaches Failed.
	EventWorkflowFailed = wire.EventWorkflowFailed
	// EventWorkflowCanceled is emitted when a workflow reaches Canceled.
	EventWorkflowCanceled = wire.EventWorkflowCanceled
	// EventRefundSucceeded is emitted when a refund is confirmed on chain.
	EventRefundSucceeded = wire.EventRefundSucceeded
	// EventRefundFailed is emitted when a refund failed for good.
	EventRefundFailed = wire.EventRefundFailed
	// EventCustomerFunded is emitted when a deposit for a customer is confirmed.
	EventCustomerFunded = wire.EventCustomerFunded
	// EventWorkflowMarginBelowFloor is emitted when a workflow spent more than its margin floor's budget.
	EventWorkflowMarginBelowFloor = wire.EventWorkflowMarginBelowFloor
)

// EventTypes lists every event type the engine emits.
var EventTypes = wire.EventTypes

// Event is an outbox entry and the envelope delivered to webhook endpoints
// (wire.Event).
type Event = wire.Event

// EventData is the "data" object of an event (wire.EventData).
type EventData = wire.EventData

// DepositEvent is the deposit a customer.funded event reports
// (wire.DepositEvent).
type DepositEvent = wire.DepositEvent

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
