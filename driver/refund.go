package driver

import (
	"fmt"
	"time"

	"github.com/settleflow/settleflow/wire"
)

// RefundInsert is one refund to record, optionally under an idempotency key.
type RefundInsert struct {
	// Refund is the refund to insert, Pending. An Amount of 0 asks for all
	// that is left to refund of the workflow's charge; the Store sets it.
	// The Store fills CustomerID and Sequence from the workflow.
	Refund         *wire.Refund
	IdempotencyKey string
	RequestHash    string
}

// RefundInsertResult reports what an insert did.
type RefundInsertResult struct {
	// Refund is the refund as inserted (its Amount set), or as first
	// created under the same idempotency key when Existing is true.
	Refund       *wire.Refund
	Existing     bool
	ExistingHash string
}

// RefundQuery selects a page of refunds, newest first, ordered by id.
type RefundQuery struct {
	Environment wire.Environment
	// Optional filters; zero values match everything.
	WorkflowID    string
	Status        wire.RefundStatus
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
	Status     wire.RefundStatus
	RunAt      time.Time
	Release    bool
	Attempts   int
	Settlement *wire.Settlement
	Failure    *wire.Failure
	UpdatedAt  time.Time
	// Event is written to the outbox if and only if the update applies.
	Event *wire.Event
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
