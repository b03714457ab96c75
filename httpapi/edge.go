package httpapi

import (
	"github.com/settleflow/settleflow/wire"

	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sync/atomic"
	"time"

	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/ratelimit"
)

// DefaultAuthFailureWindows is the default budget of failed authentications
// per client address: enough for a misconfigured client to see its 401s, too
// few for a client to hammer the key store with guesses.
var DefaultAuthFailureWindows = []ratelimit.Window{ratelimit.Minute(60)}

// authFailureKeyPrefix keeps the per-address buckets apart from the per-key
// ones in a shared Limiter.
const authFailureKeyPrefix = "auth-failure:"

// RemoteAddrClient is the default Options.ClientAddr: the IP of the
// connection's peer, never a header a client could forge (put a function that
// trusts X-Forwarded-For from your own proxy in Options.ClientAddr instead).
// An IPv6 address counts as its /64, because one host is usually given a
// whole /64 and could otherwise rotate through it for fresh budgets.
func RemoteAddrClient(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap()
	if ip.Is6() {
		if p, err := ip.Prefix(64); err == nil {
			return p.String()
		}
	}
	return ip.String()
}

// authFailure counts a failed authentication against the client address's
// budget and writes its rate-limit headers; past the budget it returns the
// 429 to answer instead of the 401.
func (h *handler) authFailure(w http.ResponseWriter, r *http.Request) (*Error, error) {
	d, err := h.opts.Limiter.Allow(r.Context(), authFailureKeyPrefix+h.opts.ClientAddr(r), h.opts.AuthFailureWindows, h.opts.Now())
	if err != nil {
		return nil, err
	}
	d.WriteHeaders(w.Header())
	if d.Allowed {
		return nil, nil
	}
	return &Error{Status: http.StatusTooManyRequests, Type: TypeRateLimit, Code: wire.CodeRateLimitExceeded,
		Message: "Too many failed authentications from this address; retry after the time in Retry-After."}, nil
}

// trackedBody notes whether the handler read the request body to its end, so
// that an answer written before that closes the connection instead of making
// net/http drain a body a slow client may trickle for ever.
type trackedBody struct {
	io.ReadCloser
	eof atomic.Bool
	// onEOF runs once, when the body has been read to its end.
	onEOF func()
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.eof.Swap(true) && b.onEOF != nil {
		b.onEOF()
	}
	return n, err
}

// bodyDeadline bounds reading r's body by the request deadline: a body that
// has not arrived by then fails to read (answered 408 body_timeout) rather
// than holding the connection. Once the body is read the read deadline is
// lifted again, because net/http's background read of an idle HTTP/1
// connection would otherwise cancel the request's context at that instant,
// before the handler's own deadline could answer 504.
func bodyDeadline(w http.ResponseWriter, r *http.Request, deadline time.Time) {
	tb, ok := r.Body.(*trackedBody)
	if !ok {
		return
	}
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(deadline) != nil {
		return // not supported (a test recorder): nothing to lift either
	}
	tb.onEOF = func() { rc.SetReadDeadline(time.Time{}) } //nolint:errcheck
}

// isReadTimeout reports whether a body read failed at the read deadline.
func isReadTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

func (h *handler) bodyTimeout() *Error {
	return &Error{Status: http.StatusRequestTimeout, Type: TypeInvalidRequest, Code: wire.CodeBodyTimeout,
		Message: "The request body did not arrive within the request deadline of " + h.opts.RequestTimeout.String() + "; nothing was done."}
}

// WriteError answers e in the API's error envelope with a Request-Id header,
// for handlers outside this package (a redirect listener, a connection
// guard) whose errors must look like the API's own. A request that already
// has an id (one passing through the API's handler) keeps it.
func WriteError(w http.ResponseWriter, r *http.Request, e *Error) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if requestIDFrom(r.Context()) == "" {
		id := w.Header().Get("Request-Id")
		if id == "" {
			id = ids.New(ids.Request, time.Now())
			w.Header().Set("Request-Id", id)
		}
		r = r.WithContext(contextWithRequestID(r.Context(), id))
	}
	writeError(w, r, e)
}
