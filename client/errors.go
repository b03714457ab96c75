package client

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/settleflow/settleflow/wire"
)

// ErrorType is the "type" of an API error: its category (wire.ErrorType).
type ErrorType = wire.ErrorType

// The error types the API answers with.
const (
	// ErrorTypeInvalidRequest: a 4xx about the request itself.
	ErrorTypeInvalidRequest = wire.ErrorTypeInvalidRequest
	// ErrorTypeAuthentication: a 401.
	ErrorTypeAuthentication = wire.ErrorTypeAuthentication
	// ErrorTypePermission: a 403.
	ErrorTypePermission = wire.ErrorTypePermission
	// ErrorTypePayment: a 402.
	ErrorTypePayment = wire.ErrorTypePayment
	// ErrorTypeIdempotency: a 409 idempotency_key_reused.
	ErrorTypeIdempotency = wire.ErrorTypeIdempotency
	// ErrorTypeRateLimit: a 429.
	ErrorTypeRateLimit = wire.ErrorTypeRateLimit
	// ErrorTypeAPI: a 5xx.
	ErrorTypeAPI = wire.ErrorTypeAPI
)

// APIError is an error the API answered with: every error that carries an
// HTTP response is one, reachable with errors.As whatever its category:
//
//	var apiErr *client.APIError
//	if errors.As(err, &apiErr) {
//		log.Printf("%d %s %s (request %s)", apiErr.Status, apiErr.Type, apiErr.Code, apiErr.RequestID)
//	}
//
// A call returns it wrapped in the type of its category, which errors.As
// tells apart: [*AuthenticationError] (401), [*PaymentError] (402),
// [*PermissionError] (403),
// [*RateLimitError] (429), [*IdempotencyError] (409 idempotency_key_reused),
// [*InvalidRequestError] (other 4xx) and [*ServerError] (5xx). An error of
// a type this version does not know is a bare *APIError.
type APIError struct {
	// Status is the HTTP status code.
	Status int
	// Type is the error's category.
	Type ErrorType
	// Code is the machine-readable reason (parameter_missing,
	// api_key_invalid, …). New codes may appear; handle an unknown one by
	// Type and Status.
	Code wire.ErrorCode
	// Param names the parameter at fault, if any (customerId,
	// payload.attachments).
	Param string
	// Message is the human-readable explanation.
	Message string
	// RequestID identifies the request in the server's logs (req_…).
	RequestID string
	// Header is the response's header (X-RateLimit-*, Retry-After, Allow …).
	Header http.Header
}

// Error describes the error in one line: status, type, code, param, message
// and request id.
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString("settleflow: ")
	b.WriteString(strconv.Itoa(e.Status))
	if e.Type != "" {
		b.WriteString(" " + string(e.Type))
	}
	if e.Code != "" {
		b.WriteString(" " + string(e.Code))
	}
	if e.Param != "" {
		b.WriteString(" (param " + e.Param + ")")
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.RequestID != "" {
		b.WriteString(" [request " + e.RequestID + "]")
	}
	return b.String()
}

// AuthenticationError is a 401: the API key is missing, malformed, unknown,
// revoked or expired (Code says which).
type AuthenticationError struct{ *APIError }

// Unwrap returns the APIError.
func (e *AuthenticationError) Unwrap() error { return e.APIError }

// PermissionError is a 403: the key may not do this, for example a live key
// while the server has no live settlement configured
// (livemode_not_configured).
type PermissionError struct{ *APIError }

// Unwrap returns the APIError.
func (e *PermissionError) Unwrap() error { return e.APIError }

// PaymentError is a 402 (type payment_error): with Code insufficient_funds,
// the customer's available balance cannot cover the workflow's quote, and
// nothing was created. Deposit to the customer (c.Customers.Fetch says
// where; in test mode c.TestHelpers.FundCustomer), then create again with
// the same IdempotencyKey.
type PaymentError struct {
	*APIError
	// Available is the customer's available balance as the server's
	// admission saw it, in minor units of Currency; it may be negative.
	Available int64
	// Amount is the quote the balance could not cover, in minor units.
	Amount int64
	// Currency of Available and Amount ("usd").
	Currency string
	// CustomerID is the customer.
	CustomerID string
}

// Unwrap returns the APIError.
func (e *PaymentError) Unwrap() error { return e.APIError }

// paymentDetails are the amounts a 402 carries.
type paymentDetails struct {
	Available, Amount    int64
	Currency, CustomerID string
}

// RateLimitError is a 429: a rate limit of the key (or of failed
// authentications from the caller's address) is exceeded. The client retries
// these by itself (see [WithMaxRetries]); this error means the retries ran
// out or the server asked for a longer wait than the client takes.
type RateLimitError struct {
	*APIError
	// RetryAfter is how long the server asked the client to wait: its
	// Retry-After header or, without one, the time until X-RateLimit-Reset.
	// Zero when the answer said neither.
	RetryAfter time.Duration
}

// Unwrap returns the APIError.
func (e *RateLimitError) Unwrap() error { return e.APIError }

// IdempotencyError is a 409 idempotency_key_reused: the Idempotency-Key was
// used in the last 24 hours with a different request body.
type IdempotencyError struct{ *APIError }

// Unwrap returns the APIError.
func (e *IdempotencyError) Unwrap() error { return e.APIError }

// InvalidRequestError is a 4xx about the request itself: a missing, unknown
// or invalid parameter (Param names it), an unknown id (404
// resource_missing), a cancel of a workflow no longer Pending (409
// workflow_running, …), and so on.
type InvalidRequestError struct{ *APIError }

// Unwrap returns the APIError.
func (e *InvalidRequestError) Unwrap() error { return e.APIError }

// ServerError is a 5xx (type api_error): internal_error, service_unavailable,
// request_timeout, or a proxy's 502. The client retries these by itself;
// a create retried this way keeps its Idempotency-Key, so it is never
// duplicated.
type ServerError struct{ *APIError }

// Unwrap returns the APIError.
func (e *ServerError) Unwrap() error { return e.APIError }

// ConnectionError is a failure with no answer from the API: the connection
// could not be made or broke, TLS failed, or an attempt ran past its timeout
// ([WithTimeout]). Unwrap gives the cause, so errors.Is(err,
// context.DeadlineExceeded) tells a timeout.
type ConnectionError struct {
	// Method and Path are the request's, Path without the query.
	Method, Path string
	// Err is the cause.
	Err error
}

// Error names the request and the cause.
func (e *ConnectionError) Error() string {
	return "settleflow: " + e.Method + " " + e.Path + ": connection error: " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *ConnectionError) Unwrap() error { return e.Err }

// Timeout reports whether the attempt ran out of time.
func (e *ConnectionError) Timeout() bool {
	var t interface{ Timeout() bool }
	return errors.As(e.Err, &t) && t.Timeout()
}

// categorize wraps e in the type of its category.
func categorize(e *APIError, now time.Time) error {
	t := e.Type
	if t == "" {
		switch s := e.Status; {
		case s == http.StatusUnauthorized:
			t = ErrorTypeAuthentication
		case s == http.StatusPaymentRequired:
			t = ErrorTypePayment
		case s == http.StatusForbidden:
			t = ErrorTypePermission
		case s == http.StatusTooManyRequests:
			t = ErrorTypeRateLimit
		case s >= 500:
			t = ErrorTypeAPI
		case s >= 400:
			t = ErrorTypeInvalidRequest
		}
	}
	switch t {
	case ErrorTypeAuthentication:
		return &AuthenticationError{e}
	case ErrorTypePayment:
		return &PaymentError{APIError: e}
	case ErrorTypePermission:
		return &PermissionError{e}
	case ErrorTypeRateLimit:
		d, _ := retryHint(e.Header, e.Status, now)
		return &RateLimitError{APIError: e, RetryAfter: d}
	case ErrorTypeIdempotency:
		return &IdempotencyError{e}
	case ErrorTypeInvalidRequest:
		return &InvalidRequestError{e}
	case ErrorTypeAPI:
		return &ServerError{e}
	}
	return e
}

// retryHint is how long the answer asks the client to wait: Retry-After
// (seconds or an HTTP date) or, on a 429 without it, the time until
// X-RateLimit-Reset (Unix seconds). ok is false when it says nothing.
func retryHint(h http.Header, status int, now time.Time) (d time.Duration, ok bool) {
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if secs, err := strconv.ParseInt(v, 10, 64); err == nil && secs >= 0 {
			return time.Duration(min(secs, 1<<32)) * time.Second, true
		}
		if at, err := http.ParseTime(v); err == nil {
			return max(at.Sub(now), 0), true
		}
	}
	if status == http.StatusTooManyRequests {
		if v := strings.TrimSpace(h.Get("X-RateLimit-Reset")); v != "" {
			if reset, err := strconv.ParseInt(v, 10, 64); err == nil && reset > 0 && reset < 1<<40 {
				return max(time.Unix(reset, 0).Sub(now), 0), true
			}
		}
	}
	return 0, false
}

// retryableStatus reports whether an answer with this status may be retried:
// rate limits, the server's errors and timeouts (408 body_timeout: nothing
// was done). A POST is retried with the same Idempotency-Key, so a create
// that did happen is answered again rather than repeated.
func retryableStatus(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusRequestTimeout ||
		(status >= 500 && status != http.StatusNotImplemented && status != http.StatusHTTPVersionNotSupported)
}

// retryableTransportError reports whether a failure with no answer may be
// retried: not when the server's certificate is refused or the other end
// does not speak TLS, which no retry changes.
func retryableTransportError(err error) bool {
	var (
		verify   *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		record   tls.RecordHeaderError
	)
	return !errors.As(err, &verify) && !errors.As(err, &unknown) && !errors.As(err, &hostname) &&
		!errors.As(err, &invalid) && !errors.As(err, &record)
}
