package wire

// ErrorCode is a stable, machine-readable code: the "code" of an API error
// (error.code on the wire) and of a workflow's failure (failure.code). Codes
// are part of the wire contract (docs/api.md lists each with its HTTP status):
// a code is never renamed or reused for another meaning; new ones may be added,
// so a client treats an unknown code by its error type and HTTP status.
//
// A product may report its own failure codes (&Failure{Code: "ticket_closed"});
// they need not be declared here.
type ErrorCode string

// Codes of an invalid request (HTTP 400, type invalid_request_error), set by
// the engine in an [InvalidError] or by the HTTP layer.
const (
	// CodeParameterMissing: a required parameter is absent; param names it.
	CodeParameterMissing ErrorCode = "parameter_missing"
	// CodeParameterInvalid: a parameter has a value it cannot take; param
	// names it.
	CodeParameterInvalid ErrorCode = "parameter_invalid"
	// CodeParameterUnknown: a name that is not a parameter, also in a
	// payload; names are case-sensitive, so a case variant is unknown too.
	CodeParameterUnknown ErrorCode = "parameter_unknown"
	// CodeProductNotFound: no product of that name (param "product").
	CodeProductNotFound ErrorCode = "product_not_found"
	// CodeProductRetired: the product was retired by its operator; it takes
	// no new workflows, while those created before finish (param "product").
	CodeProductRetired ErrorCode = "product_retired"
	// CodeQuoteOutOfRange: the payload prices outside what a charge may be.
	CodeQuoteOutOfRange ErrorCode = "quote_out_of_range"
	// CodeMarginBelowFloor: the quote's margin on the estimated cost is
	// below the margin floor in force (param "marginFloor").
	CodeMarginBelowFloor ErrorCode = "margin_below_floor"
	// CodeBodyMissing: a request that needs a JSON body came without one.
	CodeBodyMissing ErrorCode = "body_missing"
	// CodeBodyInvalid: the body is not a JSON object, or has duplicate names,
	// invalid UTF-8 or a value of the wrong type (param names where).
	CodeBodyInvalid ErrorCode = "body_invalid"
	// CodeBodyUnreadable: the body could not be read from the connection.
	CodeBodyUnreadable ErrorCode = "body_unreadable"
	// CodeBodyTooLarge: the body is over the size limit (HTTP 413).
	CodeBodyTooLarge ErrorCode = "body_too_large"
	// CodeBodyTimeout: the body had not arrived by the request deadline
	// (HTTP 408); nothing was done.
	CodeBodyTimeout ErrorCode = "body_timeout"
	// CodeUnsupportedMediaType: a body that is not application/json (HTTP 415).
	CodeUnsupportedMediaType ErrorCode = "unsupported_media_type"
	// CodeMethodNotAllowed: the path exists but not with this method (HTTP 405).
	CodeMethodNotAllowed ErrorCode = "method_not_allowed"
	// CodeResourceMissing: no such workflow, event, product or path (HTTP 404).
	CodeResourceMissing ErrorCode = "resource_missing"
	// CodeHTTPSRequired: a live key was sent over plain HTTP.
	CodeHTTPSRequired ErrorCode = "https_required"
	// CodeAmountExceedsRefundable: a refund asks for more than the charge
	// less its refunds, pending ones included (param "amount").
	CodeAmountExceedsRefundable ErrorCode = "amount_exceeds_refundable"
)

// Codes of money (HTTP 402 and 409).
const (
	// CodeInsufficientFunds: the customer's available balance cannot cover
	// the quote (HTTP 402, type payment_error); also the failure code of a
	// charge the chain declined for lack of balance. The same string as
	// FailureInsufficientFunds.
	CodeInsufficientFunds ErrorCode = "insufficient_funds"
	// CodeWorkflowNotSettled: a refund of a workflow that is not Settled
	// (HTTP 409).
	CodeWorkflowNotSettled ErrorCode = "workflow_not_settled"
	// CodeRefundsNotSupported: a refund in an environment whose charges are
	// not paid from customer balances (HTTP 409).
	CodeRefundsNotSupported ErrorCode = "refunds_not_supported"
	// CodeFundsUnavailable: a create that needs funds was refused because
	// the customer's balance cannot be known now (HTTP 503, type
	// api_error, with Retry-After): the server's view of deposits and
	// withdrawals on chain is older than its bound (the follower is
	// stopped or behind), or the customer has a balance change on chain
	// that could not be applied (customerId is set). Nothing was stored.
	CodeFundsUnavailable ErrorCode = "funds_unavailable"
	// CodeFundsUnconfirmed: a test customer's first create (or a test
	// funding) waited for the test faucet's deposit, sent, to reach the
	// chain's confirmation depth, and it did not within the wait (HTTP 503,
	// type api_error, with Retry-After): the chain has not made the blocks
	// that confirm it (a geth --dev chain started without --dev.period
	// makes a block only when a transaction arrives). Nothing was stored;
	// the deposit counts once it is confirmed.
	CodeFundsUnconfirmed ErrorCode = "funds_unconfirmed"
)

// Codes of a cancel refused because of the workflow's status (HTTP 409): the
// code is "workflow_" followed by the status in lower case; see
// settleflow.StateError.Code.
const (
	CodeWorkflowRunning  ErrorCode = "workflow_running"
	CodeWorkflowSettling ErrorCode = "workflow_settling"
	CodeWorkflowSettled  ErrorCode = "workflow_settled"
	CodeWorkflowFailed   ErrorCode = "workflow_failed"
	CodeWorkflowCanceled ErrorCode = "workflow_canceled"
)

// Codes of authentication (HTTP 401, authentication_error), permission
// (HTTP 403), idempotency (HTTP 409), rate limits (HTTP 429) and the service
// itself (HTTP 5xx).
const (
	CodeAPIKeyMissing   ErrorCode = "api_key_missing"
	CodeAPIKeyMalformed ErrorCode = "api_key_malformed"
	CodeAPIKeyInvalid   ErrorCode = "api_key_invalid"
	CodeAPIKeyRevoked   ErrorCode = "api_key_revoked"
	CodeAPIKeyExpired   ErrorCode = "api_key_expired"
	// CodeLivemodeNotConfigured: live mode was asked for, but no mainnet is
	// configured (HTTP 403); also the failure code of a charge of an
	// environment the settler has no chain for.
	CodeLivemodeNotConfigured ErrorCode = "livemode_not_configured"
	// CodeTestModeOnly: a test helper (POST /v1/test_helpers/…) was called
	// with a live key (HTTP 403); live customers are funded on chain.
	CodeTestModeOnly ErrorCode = "test_mode_only"
	// CodeIdempotencyKeyReused: the Idempotency-Key was used with other
	// parameters (HTTP 409).
	CodeIdempotencyKeyReused ErrorCode = "idempotency_key_reused"
	// CodeRateLimitExceeded: too many requests; retry after Retry-After.
	CodeRateLimitExceeded ErrorCode = "rate_limit_exceeded"
	// CodeRequestTimeout: the request took longer than the server's deadline
	// (HTTP 504); a create may or may not have been stored, so retry it with
	// the same Idempotency-Key.
	CodeRequestTimeout ErrorCode = "request_timeout"
	// CodeServiceUnavailable: the server is shutting down (HTTP 503).
	CodeServiceUnavailable ErrorCode = "service_unavailable"
	// CodeInternalError: an unexpected error (HTTP 500); the request id in
	// the response finds it in the server's log.
	CodeInternalError ErrorCode = "internal_error"
)

// Codes of the task endpoints (POST /v1/tasks/…), answered to workers.
const (
	// CodeLeaseLost: the task's lease passed: it expired without a
	// heartbeat, the execution timed out or the engine stopped it, and the
	// workflow's next attempt (if any) is another task (HTTP 409). The
	// worker stops; nothing it sends for this task is recorded.
	CodeLeaseLost ErrorCode = "lease_lost"
	// CodeTaskEnded: the task was already completed or failed by its
	// worker and this call would change that (HTTP 409); repeating the
	// same completion or failure is answered 200 instead.
	CodeTaskEnded ErrorCode = "task_ended"
	// CodeMarginFloorExceeded: the spend reported for the task passed the
	// budget its margin floor leaves (HTTP 409): the workflow fails with
	// failure code margin_floor_exceeded and nothing is charged. The same
	// string as FailureMarginFloorExceeded.
	CodeMarginFloorExceeded ErrorCode = "margin_floor_exceeded"
	// CodeWorkerKeyRequired: a task endpoint was called with a key that is
	// not a worker key (HTTP 403).
	CodeWorkerKeyRequired ErrorCode = "worker_key_required"
	// CodeWorkerKeyForbidden: a worker key called an endpoint other than
	// the task endpoints (HTTP 403).
	CodeWorkerKeyForbidden ErrorCode = "worker_key_forbidden"
	// CodeProductNotAllowed: a worker key limited to named products claimed
	// another (HTTP 403, param "products").
	CodeProductNotAllowed ErrorCode = "product_not_allowed"
)

// Failure codes the engine sets on a Failed workflow (failure.code).
const (
	// FailureExecutionFailed: the product failed permanently, or returned a
	// result that cannot be used.
	FailureExecutionFailed ErrorCode = "execution_failed"
	// FailureExecutionPanicked: the product panicked.
	FailureExecutionPanicked ErrorCode = "execution_panicked"
	// FailureAttemptsExceeded: the product failed on every attempt allowed.
	FailureAttemptsExceeded ErrorCode = "attempts_exceeded"
	// FailureSettlementFailed: the settler reported the charge failed without
	// a code of its own.
	FailureSettlementFailed ErrorCode = "settlement_failed"
	// FailureProductUnavailable: the workflow's product is not registered with
	// the engine that ran it.
	FailureProductUnavailable ErrorCode = "product_unavailable"
	// FailurePayloadInvalid: the payload no longer decodes into the product's
	// payload type (a product changed since the workflow was created).
	FailurePayloadInvalid ErrorCode = "payload_invalid"
	// FailureMarginFloorExceeded: the product's reported spend passed the
	// budget its margin floor leaves at the price quoted; the engine stopped
	// it. Nothing was charged; its cost is recorded.
	FailureMarginFloorExceeded ErrorCode = "margin_floor_exceeded"
)

// Failure codes of the shipped settler (package settlement).
const (
	// FailureInsufficientFunds: the customer's balance on chain could not
	// cover the charge when it was settled (a deposit reorged out, a
	// withdrawal the engine had not seen): nothing was charged.
	FailureInsufficientFunds ErrorCode = "insufficient_funds"
	// FailureInsufficientAllowance: the operator has not approved the
	// contract for enough.
	FailureInsufficientAllowance ErrorCode = "insufficient_allowance"
	// FailureInsufficientGasFunds: the operator cannot pay for gas.
	FailureInsufficientGasFunds ErrorCode = "insufficient_gas_funds"
	// FailureSettlementReverted: the settlement transaction reverted; nothing
	// was charged.
	FailureSettlementReverted ErrorCode = "settlement_reverted"
	// FailureInvalidCharge: the charge cannot be settled as given.
	FailureInvalidCharge ErrorCode = "invalid_charge"
)
