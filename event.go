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
	// EventCustomerOwnerSet is emitted when a customer's balance owner set on chain is confirmed.
	// EventCustomerOwnerChangeProposed is emitted when a change of a customer's balance owner proposed on chain is confirmed.
	EventCustomerOwnerChangeProposed = wire.EventCustomerOwnerChangeProposed
	// EventCustomerOwnerChangeCanceled is emitted when a proposed owner change dropped on chain is confirmed.
	EventCustomerOwnerChangeCanceled = wire.EventCustomerOwnerChangeCanceled
	EventCustomerOwnerSet            = wire.EventCustomerOwnerSet
	// EventCustomerWithdrawalRequested is emitted when a withdrawal request of a customer's balance is confirmed on chain.
	EventCustomerWithdrawalRequested = wire.EventCustomerWithdrawalRequested
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

// OwnerSetEvent is the owner a customer.owner_set event reports
// (wire.OwnerSetEvent).
type OwnerSetEvent = wire.OwnerSetEvent

// OwnerChangeEvent is the owner change a customer.owner_change_proposed or
// customer.owner_change_canceled event reports (wire.OwnerChangeEvent).
type OwnerChangeEvent = wire.OwnerChangeEvent

// WithdrawalRequestEvent is the request a customer.withdrawal_requested
// event reports (wire.WithdrawalRequestEvent).
type WithdrawalRequestEvent = wire.WithdrawalRequestEvent

// Notifier receives the events the engine wrote to its outbox, oldest first ([driver.Notifier]).
type Notifier = driver.Notifier

// NotifierFunc adapts a function to the [Notifier] interface ([driver.NotifierFunc]).
type NotifierFunc = driver.NotifierFunc
