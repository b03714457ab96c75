package settleflow

import (
	"context"
	"errors"
)

// RefundParams asks for a refund of a Settled workflow's charge.
type RefundParams struct {
	Environment Environment
	WorkflowID  string
	// Amount in minor units; 0 refunds all that is left to refund (the
	// charge less its refunds that are not Failed).
	Amount int64
	// Reason, optional, at most 500 characters.
	Reason string
	// IdempotencyKey, optional: the same key with the same parameters
	// within 24 h returns the first refund instead of a new one.
	IdempotencyKey string
}

// RefundListParams select a page of refunds; see RefundQuery.
type RefundListParams = RefundQuery

// RefundPage is one page of refunds, newest first.
type RefundPage struct {
	Data    []*Refund
	HasMore bool
}

var errNotYet = errors.New("settleflow: not implemented yet")

// Refund records a refund of part or all of a Settled workflow's charge and
// returns it Pending; the engine settles it on chain in the background
// (refund.succeeded or refund.failed follows). It returns whether the
// refund is a replay of an earlier call with the same idempotency key.
//
// Errors: ErrNotFound (no such workflow in the environment), a *StateError
// with Op "refund" (the workflow is not Settled; over HTTP 409
// workflow_not_settled), a *RefundableError (the amount is more than is left
// to refund), an *InvalidError (amount below 0, reason too long, bad
// idempotency key), ErrIdempotencyKeyReused, ErrRefundsNotSupported (the
// environment's charges are not paid from customer balances).
func (e *Engine) Refund(ctx context.Context, p RefundParams) (*Refund, bool, error) {
	return nil, false, errNotYet
}

// FetchRefund returns the refund with id in env, or ErrNotFound.
func (e *Engine) FetchRefund(ctx context.Context, env Environment, id string) (*Refund, error) {
	return nil, errNotYet
}

// ListRefunds returns one page of refunds, newest first. Errors are
// *InvalidError naming the parameter as on the wire (workflowId, status,
// limit, startingAfter, endingBefore).
func (e *Engine) ListRefunds(ctx context.Context, p RefundListParams) (*RefundPage, error) {
	return nil, errNotYet
}

// Customer returns a customer's balance and deposit instructions in env. A
// customer never seen has a zero balance (it can be funded before its first
// workflow). An invalid customer id is an *InvalidError naming customerId.
// With a settler that is not Funded for env, the balance is zero and Deposit
// is nil.
func (e *Engine) Customer(ctx context.Context, env Environment, customerID string) (*Customer, error) {
	return nil, errNotYet
}
