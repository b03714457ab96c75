package wire

import (
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
	// EventRefundSucceeded is emitted when a refund is confirmed on chain.
	EventRefundSucceeded EventType = "refund.succeeded"
	// EventRefundFailed is emitted when a refund failed for good; nothing
	// was given back.
	EventRefundFailed EventType = "refund.failed"
	// EventCustomerFunded is emitted when a deposit for a customer is
	// confirmed on chain and becomes available.
	EventCustomerFunded EventType = "customer.funded"
	// EventWorkflowMarginBelowFloor is emitted when a workflow finished
	// executing having spent more than its margin floor's budget (its
	// margin at the price quoted is below the floor): the product did not
	// stop at its budget. The workflow goes on to be charged as usual.
	EventWorkflowMarginBelowFloor EventType = "workflow.margin_below_floor"
	// EventCustomerOwnerSet is emitted when the owner of a customer's
	// balance (the one address that can withdraw it) is set or changed on
	// chain, once confirmed at the environment's depth.
	EventCustomerOwnerSet EventType = "customer.owner_set"
	// EventCustomerWithdrawalRequested is emitted when the owner of a
	// customer's balance puts an amount under withdrawal notice on chain,
	// once confirmed at the environment's depth: that amount is no longer
	// available to new workflows.
	EventCustomerWithdrawalRequested EventType = "customer.withdrawal_requested"
	// EventCustomerOwnerChangeProposed is emitted when the operator
	// proposed, on chain, a new owner of a customer's balance that has one
	// (setOwner with another address's grant), once confirmed at the
	// environment's depth: the new owner takes the balance at effectiveAt
	// unless the current owner (or the operator) cancels it first.
	EventCustomerOwnerChangeProposed EventType = "customer.owner_change_proposed"
	// EventCustomerOwnerChangeCanceled is emitted when a proposed owner
	// change was dropped on chain (cancelOwnerChange, or the owner moved
	// its balance itself), once confirmed at the environment's depth.
	EventCustomerOwnerChangeCanceled EventType = "customer.owner_change_canceled"
)

// EventTypes lists every event type the engine emits.
var EventTypes = []EventType{EventWorkflowCompleted, EventWorkflowFailed, EventWorkflowCanceled,
	EventWorkflowMarginBelowFloor, EventRefundSucceeded, EventRefundFailed, EventCustomerFunded,
	EventCustomerOwnerSet, EventCustomerWithdrawalRequested, EventCustomerOwnerChangeProposed, EventCustomerOwnerChangeCanceled}

// Valid reports whether t is one of EventTypes.
func (t EventType) Valid() bool {
	switch t {
	case EventWorkflowCompleted, EventWorkflowFailed, EventWorkflowCanceled, EventWorkflowMarginBelowFloor,
		EventRefundSucceeded, EventRefundFailed, EventCustomerFunded, EventCustomerOwnerSet, EventCustomerWithdrawalRequested,
		EventCustomerOwnerChangeProposed, EventCustomerOwnerChangeCanceled:
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

// EventData is the "data" object of an event. For workflow.* events it is the
// workflow's outcome (WorkflowID, CustomerID, Status, Quoted, Margin, Pricing,
// Charged, Cost, Outcome and Result, Settlement or Failure); for refund.*
// events it is {"workflowId", "refund"};
// for customer.funded it is {"customerId", "deposit", "balance"}, for
// customer.owner_set {"customerId", "owner", "balance"} and for
// customer.withdrawal_requested {"customerId", "withdrawal", "balance"};
// customer.owner_change_proposed and customer.owner_change_canceled
// {"customerId", "ownerChange", "balance"}. The fields of the other kinds are left out of the JSON.
type EventData struct {
	WorkflowID string          `json:"workflowId"`
	Status     Status          `json:"status"`
	Quoted     Money           `json:"quoted"`
	Margin     Margin          `json:"margin"`
	Result     json.RawMessage `json:"result,omitempty"`
	Settlement *Settlement     `json:"settlement,omitempty"`
	Failure    *Failure        `json:"failure,omitempty"`
	// Pricing, Charged, Cost and Outcome are the workflow's, when known.
	Pricing *Pricing `json:"pricing,omitempty"`
	Charged *Money   `json:"charged,omitempty"`
	Cost    *Cost    `json:"cost,omitempty"`
	Outcome *Outcome `json:"outcome,omitempty"`

	// Refund is the refund of a refund.* event.
	Refund *Refund `json:"-"`
	// CustomerID is the customer of a workflow.* event's workflow (empty in
	// events recorded before it was added), or the customer a
	// customer.funded event funded, or the customer of another customer.*
	// event.
	CustomerID string `json:"-"`
	// Deposit is a customer.funded event's; Balance, the balance after the
	// change, is every customer.* event's.
	Deposit *DepositEvent `json:"-"`
	Balance *Balance      `json:"-"`
	// Owner is a customer.owner_set event's.
	Owner *OwnerSetEvent `json:"-"`
	// Withdrawal is a customer.withdrawal_requested event's.
	Withdrawal *WithdrawalRequestEvent `json:"-"`
	// OwnerChange is a customer.owner_change_proposed or
	// customer.owner_change_canceled event's.
	OwnerChange *OwnerChangeEvent `json:"-"`
}

// DepositEvent is the deposit a customer.funded event reports.
type DepositEvent struct {
	Amount      Money  `json:"amount"`
	TxHash      string `json:"txHash"`
	BlockNumber uint64 `json:"blockNumber"`
}

// OwnerSetEvent is the owner a customer.owner_set event reports: the
// address the contract's OwnerSet event named, checksummed 0x-hex, and
// where it was confirmed.
type OwnerSetEvent struct {
	Address     string `json:"address"`
	TxHash      string `json:"txHash"`
	BlockNumber uint64 `json:"blockNumber"`
}

// OwnerChangeEvent is the owner change a customer.owner_change_proposed
// or customer.owner_change_canceled event reports: the proposed owner,
// checksummed 0x-hex, when it takes effect (a proposal's; nil for a
// cancel), and where it was confirmed.
type OwnerChangeEvent struct {
	Address     string     `json:"address"`
	EffectiveAt *time.Time `json:"effectiveAt,omitempty"`
	TxHash      string     `json:"txHash"`
	BlockNumber uint64     `json:"blockNumber"`
}

// WithdrawalRequestEvent is the withdrawal request a
// customer.withdrawal_requested event reports: the amount put under notice
// (it replaces any earlier request), when the owner can withdraw it (nil if
// the chain did not say), and where it was confirmed.
type WithdrawalRequestEvent struct {
	Amount      Money      `json:"amount"`
	AvailableAt *time.Time `json:"availableAt,omitempty"`
	TxHash      string     `json:"txHash"`
	BlockNumber uint64     `json:"blockNumber"`
}

// eventDataWorkflow is EventData's workflow form, without the methods.
type eventDataWorkflow struct {
	WorkflowID string          `json:"workflowId"`
	CustomerID string          `json:"customerId,omitempty"`
	Status     Status          `json:"status"`
	Quoted     Money           `json:"quoted"`
	Margin     Margin          `json:"margin"`
	Result     json.RawMessage `json:"result,omitempty"`
	Settlement *Settlement     `json:"settlement,omitempty"`
	Failure    *Failure        `json:"failure,omitempty"`
	Pricing    *Pricing        `json:"pricing,omitempty"`
	Charged    *Money          `json:"charged,omitempty"`
	Cost       *Cost           `json:"cost,omitempty"`
	Outcome    *Outcome        `json:"outcome,omitempty"`
}

type eventDataRefund struct {
	WorkflowID string  `json:"workflowId"`
	Refund     *Refund `json:"refund"`
}

type eventDataCustomer struct {
	CustomerID string                  `json:"customerId"`
	Deposit    *DepositEvent           `json:"deposit,omitempty"`
	Owner      *OwnerSetEvent          `json:"owner,omitempty"`
	Withdrawal *WithdrawalRequestEvent `json:"withdrawal,omitempty"`
	// OwnerChange is last, after the fields of the first customer events.
	OwnerChange *OwnerChangeEvent `json:"ownerChange,omitempty"`
	Balance     *Balance          `json:"balance"`
}

// MarshalJSON writes the form of d's kind: a refund's when Refund is set, a
// customer's when CustomerID is set without a WorkflowID, a workflow's
// otherwise.
func (d EventData) MarshalJSON() ([]byte, error) {
	switch {
	case d.Refund != nil:
		return json.Marshal(eventDataRefund{WorkflowID: d.WorkflowID, Refund: d.Refund})
	case d.WorkflowID == "" && d.CustomerID != "":
		return json.Marshal(eventDataCustomer{CustomerID: d.CustomerID, Deposit: d.Deposit, Owner: d.Owner, Withdrawal: d.Withdrawal,
			OwnerChange: d.OwnerChange, Balance: d.Balance})
	}
	return json.Marshal(eventDataWorkflow{d.WorkflowID, d.CustomerID, d.Status, d.Quoted, d.Margin, d.Result, d.Settlement, d.Failure,
		d.Pricing, d.Charged, d.Cost, d.Outcome})
}

// UnmarshalJSON reads any of the forms MarshalJSON writes.
func (d *EventData) UnmarshalJSON(p []byte) error {
	var all struct {
		eventDataWorkflow
		Refund      *Refund                 `json:"refund"`
		CustomerID  string                  `json:"customerId"`
		Deposit     *DepositEvent           `json:"deposit"`
		Balance     *Balance                `json:"balance"`
		Withdrawal  *WithdrawalRequestEvent `json:"withdrawal"`
		Owner       *OwnerSetEvent          `json:"owner"`
		OwnerChange *OwnerChangeEvent       `json:"ownerChange"`
	}
	if err := json.Unmarshal(p, &all); err != nil {
		return err
	}
	w := all.eventDataWorkflow
	*d = EventData{WorkflowID: w.WorkflowID, Status: w.Status, Quoted: w.Quoted, Margin: w.Margin, Result: w.Result,
		Settlement: w.Settlement, Failure: w.Failure, Pricing: w.Pricing, Charged: w.Charged, Cost: w.Cost, Outcome: w.Outcome,
		Refund: all.Refund, CustomerID: all.CustomerID,
		Deposit: all.Deposit, Balance: all.Balance, Owner: all.Owner, Withdrawal: all.Withdrawal,
		OwnerChange: all.OwnerChange}
	return nil
}
