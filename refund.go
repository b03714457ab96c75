package settleflow

import (
	"fmt"
	"time"
)

// RefundStatus is a refund's state. The names are part of the wire contract.
type RefundStatus string

// The states of a refund: Pending until the chain confirms it (Succeeded) or
// refuses it for good (Failed; nothing was given back).
const (
	RefundPending   RefundStatus = "Pending"
	RefundSucceeded RefundStatus = "Succeeded"
	RefundFailed    RefundStatus = "Failed"
)

// Valid reports whether s is a refund status.
func (s RefundStatus) Valid() bool {
	return s == RefundPending || s == RefundSucceeded || s == RefundFailed
}

// ParseRefundStatus returns the refund status named by s, exactly as on the
// wire.
func ParseRefundStatus(s string) (RefundStatus, error) {
	st := RefundStatus(s)
	if !st.Valid() {
		return "", fmt.Errorf("settleflow: unknown refund status %q (want one of Pending, Succeeded, Failed)", s)
	}
	return st, nil
}

// Refund gives part or all of a Settled workflow's charge back to its
// customer's balance on chain. Its JSON form is the wire object of the HTTP
// API.
type Refund struct {
	ID         string `json:"id"`
	Object     string `json:"object"`
	Livemode   bool   `json:"livemode"`
	WorkflowID string `json:"workflowId"`
	// Amount is what is given back, in minor units of Currency, at least 1.
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
	// Reason is the caller's, at most 500 characters; empty if none.
	Reason     string       `json:"reason"`
	Status     RefundStatus `json:"status"`
	Settlement *Settlement  `json:"settlement"`
	Failure    *Failure     `json:"failure"`
	CreatedAt  time.Time    `json:"createdAt"`
	UpdatedAt  time.Time    `json:"updatedAt"`

	// CustomerID is the refunded workflow's customer.
	CustomerID string `json:"-"`
	// Sequence is the refunded charge's sequence (Workflow.Sequence).
	Sequence uint64 `json:"-"`
	// Attempts counts settlement checks that ended in a transient error
	// since the refund was created.
	Attempts int `json:"-"`
}

// Environment returns the environment the refund belongs to.
func (r *Refund) Environment() Environment {
	if r.Livemode {
		return Live
	}
	return Test
}

// refundCharge is what settles r.
func (r *Refund) refundCharge() RefundCharge {
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
