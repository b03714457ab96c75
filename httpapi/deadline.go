package httpapi

import (
	"github.com/settleflow/settleflow/wire"

	"context"
	"errors"
	"net/http"
)

// withDeadline runs next under the request deadline. Every call a handler
// makes (authentication, the engine, the store) takes the request's context,
// so past the deadline it returns the context's error, which the handler
// answers as 504 request_timeout (see timedOut). Running inline, rather than
// in a goroutine racing a timer as http.TimeoutHandler does, keeps a
// goroutine hand-off and a buffered copy off every request.
func (h *handler) withDeadline(w http.ResponseWriter, r *http.Request, next http.HandlerFunc) {
	ctx, cancel := context.WithTimeout(r.Context(), h.opts.RequestTimeout)
	defer cancel()
	dl, _ := ctx.Deadline()
	bodyDeadline(w, r, dl)
	next(w, r.WithContext(ctx))
}

// timedOut reports whether err came from the request running past its
// deadline, and returns the 504 to answer.
func (h *handler) timedOut(r *http.Request, err error) (*Error, bool) {
	if !errors.Is(err, context.DeadlineExceeded) || r.Context().Err() != context.DeadlineExceeded {
		return nil, false
	}
	return &Error{Status: http.StatusGatewayTimeout, Type: TypeAPI, Code: wire.CodeRequestTimeout,
		Message: "The request ran past its deadline of " + h.opts.RequestTimeout.String() + ". It may or may not have taken effect: retry with the same Idempotency-Key."}, true
}
