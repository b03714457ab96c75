package settleflow

import (
	"fmt"

	"github.com/settleflow/settleflow/driver"
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

// RefundInsert is one refund to record, optionally under an idempotency key ([driver.RefundInsert]).
type RefundInsert = driver.RefundInsert

// RefundInsertResult reports what an insert did ([driver.RefundInsertResult]).
type RefundInsertResult = driver.RefundInsertResult

// RefundQuery selects a page of refunds, newest first, ordered by id ([driver.RefundQuery]).
type RefundQuery = driver.RefundQuery

// RefundUpdate records the outcome of a Pending refund, or moves its next check ([driver.RefundUpdate]).
type RefundUpdate = driver.RefundUpdate

// RefundableError is returned by Store.InsertRefund (and Engine.Refund) when the amount asked for is more than the charge less its refunds (pending ones included); nothing was stored ([driver.RefundableError]).
type RefundableError = driver.RefundableError
