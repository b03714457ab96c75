package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/wire"
)

// Error is the one error type of the API, wire.Error: its JSON form is the
// "error" object of every error response (wire.ErrorEnvelope), its Status
// the HTTP status and its Header what headers go with it.
type Error = wire.Error

// Error types, as in docs/api.md §6: the strings of wire.ErrorType's
// constants, untyped so that they fit both a string and Error.Type.
const (
	TypeInvalidRequest = "invalid_request_error"
	TypeAuthentication = "authentication_error"
	TypePermission     = "permission_error"
	TypePayment        = "payment_error"
	TypeIdempotency    = "idempotency_error"
	TypeRateLimit      = "rate_limit_error"
	TypeAPI            = "api_error"
)

func invalid(code settleflow.ErrorCode, param, msg string) *Error {
	return &Error{Status: http.StatusBadRequest, Type: TypeInvalidRequest, Code: code, Param: param, Message: msg}
}

// toError maps an engine error to its API error. Anything unexpected is a
// 500 whose message says nothing of the internals.
func toError(err error) *Error {
	var apiErr *Error
	var inv *settleflow.InvalidError
	var stateErr *settleflow.StateError
	var funds *settleflow.InsufficientFundsError
	var refundable *settleflow.RefundableError
	var unavailable *settleflow.FundsUnavailableError
	var unconfirmed *settleflow.FundsUnconfirmedError
	switch {
	case errors.As(err, &apiErr):
		return apiErr
	case errors.As(err, &inv):
		return invalid(inv.Code, inv.Param, inv.Message)
	case errors.As(err, &funds):
		return insufficientFunds(funds)
	case errors.As(err, &unavailable):
		return fundsUnavailable(unavailable)
	case errors.As(err, &unconfirmed):
		return fundsUnconfirmed(unconfirmed)
	case errors.As(err, &refundable):
		if refundable.Refundable <= 0 {
			return invalid(settleflow.CodeAmountExceedsRefundable, "amount",
				"Nothing is left to refund of this workflow's charge: its refunds that are not Failed (pending ones included) add up to the charge.")
		}
		return invalid(settleflow.CodeAmountExceedsRefundable, "amount",
			fmt.Sprintf("amount %d exceeds what is left to refund of this workflow's charge: %d (the charge less its refunds that are not Failed, pending ones included).",
				refundable.Asked, refundable.Refundable))
	case errors.Is(err, settleflow.ErrRefundsNotSupported):
		return &Error{Status: http.StatusConflict, Type: TypeInvalidRequest, Code: settleflow.CodeRefundsNotSupported,
			Message: "Customer funds are not enabled in this environment: its charges are not paid from customer balances, so there is no balance to refund to, fund or own."}
	case errors.As(err, &stateErr) && stateErr.Op == "refund":
		return &Error{Status: http.StatusConflict, Type: TypeInvalidRequest, Code: settleflow.CodeWorkflowNotSettled,
			Message: "This workflow is " + string(stateErr.Status) + "; only a Settled workflow can be refunded."}
	case errors.Is(err, settleflow.ErrNotFound):
		return &Error{Status: http.StatusNotFound, Type: TypeInvalidRequest, Code: wire.CodeResourceMissing, Message: "No such workflow."}
	case errors.Is(err, settleflow.ErrIdempotencyKeyReused):
		return &Error{Status: http.StatusConflict, Type: TypeIdempotency, Code: wire.CodeIdempotencyKeyReused,
			Message: "This Idempotency-Key was used with a different request body in the last 24 hours; use a new key."}
	case errors.As(err, &stateErr):
		return &Error{Status: http.StatusConflict, Type: TypeInvalidRequest, Code: stateErr.Code(),
			Message: "This workflow is " + string(stateErr.Status) + "; only a Pending workflow can be canceled."}
	case errors.Is(err, settleflow.ErrEnvironmentNotConfigured):
		// The engine's own refusal, for a handler mounted without
		// LiveConfigured or a settler unconfigured since.
		return &Error{Status: http.StatusForbidden, Type: TypePermission, Code: settleflow.CodeLivemodeNotConfigured,
			Message: "This mode is not configured on this server: settling it needs a chain RPC, a signer and contract addresses."}
	case errors.Is(err, settleflow.ErrEngineStopped):
		return &Error{Status: http.StatusServiceUnavailable, Type: TypeAPI, Code: wire.CodeServiceUnavailable, Message: "The service is shutting down; retry shortly."}
	default:
		return internalError()
	}
}

// insufficientFunds is the 402 of a create the customer's balance cannot
// cover, with the amounts in the error object.
func insufficientFunds(e *settleflow.InsufficientFundsError) *Error {
	available, amount := e.Balance.Available, e.Quoted.Amount
	return &Error{Status: http.StatusPaymentRequired, Type: TypePayment, Code: settleflow.CodeInsufficientFunds,
		Message: fmt.Sprintf("Insufficient funds: customer %s has %d %s available (minor units), and this workflow is quoted %d. Deposit to the customer's balance (GET /v1/customers/%s says where), or wait for its unfinished workflows to settle or fail.",
			e.CustomerID, available, e.Quoted.Currency, amount, e.CustomerID),
		Available: &available, Amount: &amount, Currency: e.Quoted.Currency, CustomerID: e.CustomerID}
}

// fundsUnavailable is the 503 of a create refused because the customer's
// balance cannot be known now, with Retry-After.
func fundsUnavailable(e *settleflow.FundsUnavailableError) *Error {
	msg := "Customer funds are unavailable: this server's view of deposits and withdrawals on chain is out of date, so no workflow that needs funds is admitted until it has caught up. Nothing was stored; retry after the time in Retry-After."
	if e.CustomerID != "" {
		msg = fmt.Sprintf("Customer funds are unavailable: %d balance change(s) of customer %s on chain could not be applied, so its balance is unknown and no workflow of it that needs funds is admitted until the operator resolves them. Nothing was stored.",
			e.Quarantined, e.CustomerID)
	}
	retry := int64(math.Ceil(max(e.RetryAfter, time.Second).Seconds()))
	return &Error{Status: http.StatusServiceUnavailable, Type: TypeAPI, Code: settleflow.CodeFundsUnavailable, Message: msg,
		CustomerID: e.CustomerID, Header: http.Header{"Retry-After": {strconv.FormatInt(retry, 10)}}}
}

// fundsUnconfirmed is the 503 of a create (or a test funding) whose test
// faucet deposit was sent and not confirmed within the wait, with
// Retry-After.
func fundsUnconfirmed(e *settleflow.FundsUnconfirmedError) *Error {
	tx := "sent by another request"
	if e.TxHash != "" {
		tx = "transaction " + e.TxHash
	}
	waited := e.Waited.Round(time.Second)
	if waited == 0 {
		waited = e.Waited.Round(time.Millisecond)
	}
	msg := fmt.Sprintf("Funds unconfirmed: the test faucet's deposit for customer %s (%s) has not reached the chain's confirmation depth after %s, "+
		"so it is not in the customer's balance yet: the test chain has not made the blocks that confirm it (a geth --dev chain needs --dev.period, "+
		"or it makes a block only when a transaction arrives). Nothing was stored; the deposit counts once it is confirmed: retry after the time in Retry-After.",
		e.CustomerID, tx, waited)
	retry := int64(math.Ceil(max(e.RetryAfter, time.Second).Seconds()))
	return &Error{Status: http.StatusServiceUnavailable, Type: TypeAPI, Code: settleflow.CodeFundsUnconfirmed, Message: msg,
		CustomerID: e.CustomerID, Header: http.Header{"Retry-After": {strconv.FormatInt(retry, 10)}}}
}

func internalError() *Error {
	return &Error{Status: http.StatusInternalServerError, Type: TypeAPI, Code: wire.CodeInternalError,
		Message: "Something went wrong on our side. Retry later; quote the request id if it persists."}
}

func writeError(w http.ResponseWriter, r *http.Request, e *Error) {
	e.RequestID = requestIDFrom(r.Context())
	for name, values := range e.Header {
		w.Header()[name] = values
	}
	if e.Status == http.StatusUnauthorized {
		// RFC 9110 §11.6.1: a 401 names the scheme it wants.
		w.Header().Set("WWW-Authenticate", `Bearer realm="settleflow"`)
	}
	// json.Marshal escapes <, > and & (as \u003c and the like): an error
	// message quotes what the client sent ({"product": "<img src=x>"}), and
	// escaped, no client that shows it as HTML can run it.
	writeJSON(w, e.Status, wire.ErrorEnvelope{Error: e})
}

// writeJSON answers v as JSON. A workflow is written by its own encoder
// (Workflow.MarshalJSON, which json.Marshal would call anyway) without
// encoding/json's second pass over the bytes.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var b []byte
	var err error
	if wf, ok := v.(*settleflow.Workflow); ok {
		b, err = wf.MarshalJSON()
	} else {
		b, err = json.Marshal(v)
	}
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"type":"api_error","code":"internal_error","message":"response encoding failed"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
