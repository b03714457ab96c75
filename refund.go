package settleflow

import (
	"fmt"
	"time"

	"github.com/settleflow/settleflow/wire"
)

// RefundStatus is a refund's state (wire.RefundStatus).
type RefundStatus = wire.RefundStatus

// The states of a refund: Pending until the chain confirms it (Succeeded) or
// refuses it for good (Failed; nothing was given back).
const (
	// RefundPending: waiting for the chain.
	RefundPending = wire.RefundPending
	// RefundSucceeded: confirmed on chain.
	RefundSucceeded = wire.RefundSucceeded
	// RefundFailed: refused for good; nothing was given back.
	RefundFailed = wire.RefundFailed
)

// ParseRefundStatus returns the refund status named by s, exactly as on the
// wire.
func ParseRefundStatus(s string) (RefundStatus, error) { return wire.ParseRefundStatus(s) }

// Refund gives part or all of a Settled workflow's charge back to its
// customer's balance on chain (wire.Refund).
type Refund = wire.Refund

// refundChargeOf is what settles r.
func refundChargeOf(r *Refund) RefundCharge {
	return RefundCharge{RefundID: r.ID, WorkflowID: r.WorkflowID, Environment: r.Environment(),
		CustomerID: r.CustomerID, Sequence: r.Sequence, Amount: r.Amount, Currency: r.Currency}
}

// RefundInsert is one refund to record, optionally under an idempotency key.
type RefundInsert struct {
	// Refund is the refund to insert, Pending. An Amount of 0 asks for all
	// that is left to refund of the workflow's charge; the Store sets it.
	// The Store fills CustomerID and Sequence from the workflow.
	Refund         *Refund
	IdempotencyKey string
	RequestHash    string
}

// RefundInsertResult reports what an insert did.
type RefundInsertResult struct {
	// Refund is the refund as inserted (its Amount set), or as first
	// created under the same idempotency key when Existing is true.
	Refund       *Refund
	Existing     bool
	ExistingHash string
}

// RefundQuery selects a page of refunds, newest first, ordered by id.
type RefundQuery struct {
	Environment Environment
	// Optional filters; zero values match everything.
	WorkflowID    string
	Status        RefundStatus
	StartingAfter string
	EndingBefore  string
	Limit         int
}

// RefundUpdate records the outcome of a Pending refund, or moves its next
// check. It applies only if the refund is still Pending and leased to Owner.
type RefundUpdate struct {
	ID    string
	Owner string
	// Status is RefundPending (only RunAt, Attempts, Settlement change),
	// RefundSucceeded or RefundFailed. Succeeded adds the amount to the
	// workflow's refunded amount and to its customer's Account.Refunded in
	// the same transaction.
	Status     RefundStatus
	RunAt      time.Time
	Release    bool
	Attempts   int
	Settlement *Settlement
	Failure    *Failure
	UpdatedAt  time.Time
	// Event is written to the outbox if and only if the update applies.
	Event *Event
}

// RefundableError is returned by Store.InsertRefund (and Engine.Refund)
// when the amount asked for is more than the charge less its refunds
// (pending ones included); nothing was stored. Over HTTP it is a 400
// amount_exceeds_refundable naming "amount".
type RefundableError struct {
	WorkflowID string
	// Refundable is what is left to refund.
	Refundable int64
	Asked      int64
}

func (e *RefundableError) Error() string {
	return fmt.Sprintf("settleflow: refund of %d exceeds what is left to refund of workflow %s (%d)", e.Asked, e.WorkflowID, e.Refundable)
}

// InsufficientFundsError is returned by Create when the customer's available
// balance cannot cover the quote; nothing was stored. Over HTTP it is a 402
// with code insufficient_funds.
type InsufficientFundsError struct {
	Environment Environment
	CustomerID  string
	// Quoted is the amount the workflow would have reserved.
	Quoted Money
	// Balance is the customer's balance as the admission saw it.
	Balance Balance
}

func (e *InsufficientFundsError) Error() string {
	return fmt.Sprintf("settleflow: insufficient funds: customer %s has %d %s available, the quote is %d",
		e.CustomerID, e.Balance.Available, e.Quoted.Currency, e.Quoted.Amount)
}
