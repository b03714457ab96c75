package wire

import (
	"fmt"
	"net/http"
)

// Failure is why a workflow failed: the workflow's "failure" object on the wire.
type Failure struct {
	Code    ErrorCode `json:"code"`
	Message string    `json:"message"`
}

// Error implements error, so a Failure can be returned where an error is
// expected (for example from a product or a Settler, wrapped with Permanent).
func (f *Failure) Error() string { return string(f.Code) + ": " + f.Message }

// InvalidError is a bad input to the engine. Param names the offending
// field as it is spelled on the wire (for example "customerId" or
// "payload.ticketId"); Code is a stable machine-readable string.
type InvalidError struct {
	Code    ErrorCode
	Param   string
	Message string
}

func (e *InvalidError) Error() string {
	if e.Param == "" {
		return "settleflow: " + e.Message
	}
	return fmt.Sprintf("settleflow: %s: %s", e.Param, e.Message)
}

// ErrorType is the "type" of an API error: its category (docs/api.md §6).
type ErrorType string

// The error types the API answers with.
const (
	// ErrorTypeInvalidRequest: a 4xx about the request itself (400, 404,
	// 405, 408, 409 other than idempotency, 413, 415).
	ErrorTypeInvalidRequest ErrorType = "invalid_request_error"
	// ErrorTypeAuthentication: a 401, the API key is missing or not good.
	ErrorTypeAuthentication ErrorType = "authentication_error"
	// ErrorTypePermission: a 403, the key may not do this.
	ErrorTypePermission ErrorType = "permission_error"
	// ErrorTypePayment: a 402, the customer's balance cannot cover a quote.
	ErrorTypePayment ErrorType = "payment_error"
	// ErrorTypeIdempotency: a 409 idempotency_key_reused.
	ErrorTypeIdempotency ErrorType = "idempotency_error"
	// ErrorTypeRateLimit: a 429.
	ErrorTypeRateLimit ErrorType = "rate_limit_error"
	// ErrorTypeAPI: a 5xx, the service's own failure.
	ErrorTypeAPI ErrorType = "api_error"
)

// Error is the "error" object of every error answer of the API (see
// [ErrorEnvelope]):
//
//	{"error": {"type": "invalid_request_error", "code": "parameter_missing",
//	           "message": "customerId is required", "param": "customerId", "requestId": "req_…"}}
//
// Status and Header are not in the JSON: they are the HTTP status the error
// is answered with and headers that go with it (Allow of a 405, Retry-After
// of a 429 or of a 503 funds_unavailable or funds_unconfirmed).
type Error struct {
	Status    int         `json:"-"`
	Header    http.Header `json:"-"`
	Type      ErrorType   `json:"type"`
	Code      ErrorCode   `json:"code"`
	Message   string      `json:"message"`
	Param     string      `json:"param,omitempty"`
	RequestID string      `json:"requestId"`
	// Available, Amount, Currency and CustomerID are set on a 402
	// insufficient_funds only: the customer's available balance as the
	// admission saw it (it may be negative), the quote it could not cover,
	// both in minor units of Currency, and the customer. CustomerID is
	// also set on a 503 funds_unavailable about one customer (a balance
	// change of it on chain could not be applied) and on a 503
	// funds_unconfirmed (the customer whose faucet deposit is not
	// confirmed yet).
	Available  *int64 `json:"available,omitempty"`
	Amount     *int64 `json:"amount,omitempty"`
	Currency   string `json:"currency,omitempty"`
	CustomerID string `json:"customerId,omitempty"`
}

// Error implements error: the code and the message.
func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// ErrorEnvelope is the body of every error answer of the API: {"error":
// {…}}. Error is nil when a body does not hold one.
type ErrorEnvelope struct {
	Error *Error `json:"error"`
}
