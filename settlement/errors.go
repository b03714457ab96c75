package settlement

import (
	"errors"
	"fmt"

	"github.com/settleflow/settleflow"
)

// Failure codes the settler reports, as settleflow.Failure.Code (Submit wraps
// them with settleflow.Permanent; Status reports them with SettlementFailed).
const (
	// CodeLivemodeNotConfigured: a charge for an environment with no chain.
	CodeLivemodeNotConfigured = "livemode_not_configured"
	// CodeInsufficientFunds: the operator's token balance cannot cover the charge.
	CodeInsufficientFunds = "insufficient_funds"
	// CodeInsufficientAllowance: the operator has not approved the contract for enough.
	CodeInsufficientAllowance = "insufficient_allowance"
	// CodeInsufficientGasFunds: the operator cannot pay for gas.
	CodeInsufficientGasFunds = "insufficient_gas_funds"
	// CodeSettlementReverted: the settlement transaction reverted; nothing was charged.
	CodeSettlementReverted = "settlement_reverted"
	// CodeInvalidCharge: the charge cannot be settled as given (bad id, no
	// sequence, a sequence another workflow holds, negative amount, wrong
	// currency).
	CodeInvalidCharge = "invalid_charge"
)

// ErrClosed is returned by a settler after Close.
var ErrClosed = errors.New("settlement: settler closed")

func failure(code, format string, args ...any) *settleflow.Failure {
	return &settleflow.Failure{Code: code, Message: fmt.Sprintf(format, args...)}
}

func permanent(code, format string, args ...any) error {
	return settleflow.Permanent(failure(code, format, args...))
}

// failureOf unwraps the *settleflow.Failure that permanent wrapped.
func failureOf(err error) *settleflow.Failure {
	var f *settleflow.Failure
	if errors.As(err, &f) {
		return f
	}
	return failure(CodeInvalidCharge, "%v", err)
}
