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
	CodeLivemodeNotConfigured = settleflow.CodeLivemodeNotConfigured
	// CodeInsufficientFunds: the operator's token balance cannot cover the charge.
	CodeInsufficientFunds = settleflow.FailureInsufficientFunds
	// CodeInsufficientAllowance: the operator has not approved the contract for enough.
	CodeInsufficientAllowance = settleflow.FailureInsufficientAllowance
	// CodeInsufficientGasFunds: the operator cannot pay for gas. This
	// settler no longer fails a charge with it: its charges wait until the
	// operator is funded (Settler.Health reports it). Kept for settlers
	// that do.
	CodeInsufficientGasFunds = settleflow.FailureInsufficientGasFunds
	// CodeSettlementReverted: the node says the settlement reverts (revert
	// data, or "execution reverted") and the chain confirms the charge's
	// sequence unrecorded; nothing was charged. No other node error fails
	// a charge.
	CodeSettlementReverted = settleflow.FailureSettlementReverted
	// CodeInvalidCharge: the charge cannot be settled as given (bad id, no
	// sequence, a sequence another workflow holds, negative amount, wrong
	// currency).
	CodeInvalidCharge = settleflow.FailureInvalidCharge
)

// ErrClosed is returned by a settler after Close.
var ErrClosed = errors.New("settlement: settler closed")

func failure(code settleflow.ErrorCode, format string, args ...any) *settleflow.Failure {
	return &settleflow.Failure{Code: code, Message: fmt.Sprintf(format, args...)}
}

func permanent(code settleflow.ErrorCode, format string, args ...any) error {
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
