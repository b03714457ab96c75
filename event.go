package settleflow

import (
	"github.com/settleflow/settleflow/driver"
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

// Notifier receives the events the engine wrote to its outbox, oldest first ([driver.Notifier]).
type Notifier = driver.Notifier

// NotifierFunc adapts a function to the [Notifier] interface ([driver.NotifierFunc]).
type NotifierFunc = driver.NotifierFunc
