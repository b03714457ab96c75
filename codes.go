package settleflow

import "github.com/settleflow/settleflow/wire"

// ErrorCode is a stable, machine-readable code: the "code" of an API error
// and of a workflow's failure (wire.ErrorCode). The codes only the HTTP
// layer answers with (authentication, rate limits, request bodies …) are
// declared in package wire only.
type ErrorCode = wire.ErrorCode

// Codes of an invalid request the engine reports in an [InvalidError].
const (
	// CodeParameterMissing: a required parameter is absent; param names it.
	CodeParameterMissing = wire.CodeParameterMissing
	// CodeParameterInvalid: a parameter has a value it cannot take.
	CodeParameterInvalid = wire.CodeParameterInvalid
	// CodeParameterUnknown: a name that is not a parameter, also in a payload.
	CodeParameterUnknown = wire.CodeParameterUnknown
	// CodeProductNotFound: no product of that name (param "product").
	CodeProductNotFound = wire.CodeProductNotFound
	// CodeProductRetired: the product is retired (Products.Retire); it
	// takes no new workflows (param "product").
	CodeProductRetired = wire.CodeProductRetired
	// CodeQuoteOutOfRange: the payload prices outside what a charge may be.
	CodeQuoteOutOfRange = wire.CodeQuoteOutOfRange
	// CodeMarginBelowFloor: the quote's margin on the estimate is below the floor.
	CodeMarginBelowFloor = wire.CodeMarginBelowFloor
	// CodeAmountExceedsRefundable: a refund asks for more than is left ([RefundableError]).
	CodeAmountExceedsRefundable = wire.CodeAmountExceedsRefundable
)

// Codes of the engine's errors about money and a workflow's state.
const (
	// CodeInsufficientFunds: the customer's balance cannot cover the quote ([InsufficientFundsError]).
	CodeInsufficientFunds = wire.CodeInsufficientFunds
	// CodeWorkflowNotSettled: a refund of a workflow that is not Settled.
	CodeWorkflowNotSettled = wire.CodeWorkflowNotSettled
	// CodeRefundsNotSupported: a refund where charges are not paid from balances ([ErrRefundsNotSupported]).
	CodeRefundsNotSupported = wire.CodeRefundsNotSupported
	// CodeFundsUnavailable: the customer's balance cannot be known now ([FundsUnavailableError]).
	CodeFundsUnavailable = wire.CodeFundsUnavailable
	// CodeFundsUnconfirmed: the test faucet's deposit for the customer is not confirmed yet ([FundsUnconfirmedError]).
	CodeFundsUnconfirmed = wire.CodeFundsUnconfirmed
	// CodeLivemodeNotConfigured: the settler has no chain for live mode ([ErrEnvironmentNotConfigured]).
	CodeLivemodeNotConfigured = wire.CodeLivemodeNotConfigured
)

// Codes of a cancel refused because of the workflow's status: see
// [StateError.Code].
const (
	// CodeWorkflowRunning: the workflow is Running.
	CodeWorkflowRunning = wire.CodeWorkflowRunning
	// CodeWorkflowSettling: the workflow is Settling.
	CodeWorkflowSettling = wire.CodeWorkflowSettling
	// CodeWorkflowSettled: the workflow is Settled.
	CodeWorkflowSettled = wire.CodeWorkflowSettled
	// CodeWorkflowFailed: the workflow is Failed.
	CodeWorkflowFailed = wire.CodeWorkflowFailed
	// CodeWorkflowCanceled: the workflow is Canceled.
	CodeWorkflowCanceled = wire.CodeWorkflowCanceled
)

// Failure codes the engine sets on a Failed workflow (failure.code).
const (
	// FailureExecutionFailed: the product failed permanently, or its result is unusable.
	FailureExecutionFailed = wire.FailureExecutionFailed
	// FailureExecutionPanicked: the product panicked.
	FailureExecutionPanicked = wire.FailureExecutionPanicked
	// FailureAttemptsExceeded: the product failed on every attempt allowed.
	FailureAttemptsExceeded = wire.FailureAttemptsExceeded
	// FailureSettlementFailed: the settler reported a failure without a code of its own.
	FailureSettlementFailed = wire.FailureSettlementFailed
	// FailureProductUnavailable: the workflow's product is not registered.
	FailureProductUnavailable = wire.FailureProductUnavailable
	// FailurePayloadInvalid: the payload no longer decodes into the product's type.
	FailurePayloadInvalid = wire.FailurePayloadInvalid
	// FailureMarginFloorExceeded: the reported spend passed the margin floor's budget.
	FailureMarginFloorExceeded = wire.FailureMarginFloorExceeded
)

// Failure codes of the shipped settler (package settlement).
const (
	// FailureInsufficientFunds: the customer's balance on chain could not cover the charge.
	FailureInsufficientFunds = wire.FailureInsufficientFunds
	// FailureInsufficientAllowance: the operator has not approved the contract for enough.
	FailureInsufficientAllowance = wire.FailureInsufficientAllowance
	// FailureInsufficientGasFunds: the operator cannot pay for gas.
	FailureInsufficientGasFunds = wire.FailureInsufficientGasFunds
	// FailureSettlementReverted: the settlement transaction reverted.
	FailureSettlementReverted = wire.FailureSettlementReverted
	// FailureInvalidCharge: the charge cannot be settled as given.
	FailureInvalidCharge = wire.FailureInvalidCharge
)

// Codes of the task endpoints (wire's, see there).
const (
	// CodeLeaseLost: the task's lease passed; nothing more is recorded for it.
	CodeLeaseLost = wire.CodeLeaseLost
	// CodeTaskEnded: the task was completed or failed already.
	CodeTaskEnded = wire.CodeTaskEnded
	// CodeMarginFloorExceeded: the task's reported spend passed its budget.
	CodeMarginFloorExceeded = wire.CodeMarginFloorExceeded
	// CodeWorkerKeyRequired: a task endpoint called without a worker key.
	CodeWorkerKeyRequired = wire.CodeWorkerKeyRequired
	// CodeWorkerKeyForbidden: a worker key called another endpoint.
	CodeWorkerKeyForbidden = wire.CodeWorkerKeyForbidden
	// CodeProductNotAllowed: a worker key claimed a product it may not serve.
	CodeProductNotAllowed = wire.CodeProductNotAllowed
)
