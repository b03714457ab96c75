// Package httpapi serves the settleflow HTTP API (/v1) as an http.Handler
// that mounts on any net/http mux: authentication with API keys, per-key
// rate limits, strict JSON, idempotency keys, request ids, a 30-second
// request deadline and one error shape, exactly as docs/api.md §4–§8 fix.
//
//	h, err := httpapi.New(httpapi.Options{Engine: engine, Keys: keys, Limiter: ratelimit.NewMemory()})
//	mux.Handle("/v1/", h)
package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"
	"time"

	"go.uber.org/zap"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/apikey"
	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/ratelimit"
	"github.com/settleflow/settleflow/wire"
)

// Principal is the API key a request authenticated with.
type Principal struct {
	KeyID       string
	Environment settleflow.Environment
	// RateLimitKey names the limiter's buckets (a rotated key shares its
	// predecessor's), and Windows are the key's limits.
	RateLimitKey string
	Windows      []ratelimit.Window
	// Worker is set for a worker key (rk_…): it may call the task
	// endpoints only, and every other key may not. Products, when not nil,
	// are the only remote products the worker key may serve.
	Worker   bool
	Products []string
}

// Authenticator resolves an Authorization header to the key it carries. It
// returns an *apikey.AuthError for a missing, malformed, unknown, revoked or
// expired key (each answered 401 with its own code), and any other error
// when it could not tell (a database outage: 500).
type Authenticator interface {
	Authenticate(ctx context.Context, authorization string) (Principal, error)
}

// APIKeys adapts an apikey.Manager to an Authenticator.
func APIKeys(m *apikey.Manager) Authenticator { return keyManager{m} }

type keyManager struct{ m *apikey.Manager }

func (k keyManager) Authenticate(ctx context.Context, authorization string) (Principal, error) {
	key, err := k.m.Authenticate(ctx, authorization)
	if err != nil {
		return Principal{}, err
	}
	return Principal{KeyID: key.ID, Environment: key.Environment, RateLimitKey: key.RateLimitKey(), Windows: key.Windows(),
		Worker: key.IsWorker(), Products: key.Products}, nil
}

// Options configure the handler. Engine, Keys and Limiter are required.
type Options struct {
	Engine  *settleflow.Engine
	Keys    Authenticator
	Limiter ratelimit.Limiter
	// Logger receives one line per request (method, path, status, latency,
	// request id, key id; never a secret). Default: none.
	Logger *zap.Logger
	// LiveConfigured reports whether live settlement is configured; until it
	// is, live keys are answered 403 livemode_not_configured. Nil means ask
	// the engine (Engine.Settles), which refuses live workflows itself too.
	LiveConfigured func() bool
	// RequestTimeout is the deadline of a request (default 30 s); past it the
	// answer is 504 request_timeout.
	RequestTimeout time.Duration
	// MaxBodyBytes caps request bodies (default 1 MiB); larger is 413.
	MaxBodyBytes int64
	// Now is the clock of rate-limit windows; default time.Now.
	Now func() time.Time
	// AuthFailureWindows limit failed authentications (401s) per client
	// address, in Limiter, so that a client guessing or replaying bad keys
	// is told to back off with the 429 and rate-limit headers a key gets;
	// successful authentications neither count nor are refused. Default
	// DefaultAuthFailureWindows (60 a minute).
	AuthFailureWindows []ratelimit.Window
	// ClientAddr names the client a failed authentication is counted
	// against. Default RemoteAddrClient (the peer's IP, never a header).
	ClientAddr func(*http.Request) string
	// PortalSessions issues customer portal links (POST
	// /v1/customers/{customerId}/portal_sessions); nil: that route answers
	// 404, the portal not being mounted.
	PortalSessions PortalSessions
}

type handler struct {
	opts Options
	log  *zap.Logger
	mux  *http.ServeMux // the routes, on ServeMux patterns
}

// New returns the /v1 handler.
func New(opts Options) (http.Handler, error) {
	switch {
	case opts.Engine == nil:
		return nil, errors.New("httpapi: Options.Engine is required")
	case opts.Keys == nil:
		return nil, errors.New("httpapi: Options.Keys is required")
	case opts.Limiter == nil:
		return nil, errors.New("httpapi: Options.Limiter is required")
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.LiveConfigured == nil {
		engine := opts.Engine
		opts.LiveConfigured = func() bool { return engine.Settles(settleflow.Live) }
	}
	if opts.RequestTimeout == 0 {
		opts.RequestTimeout = 30 * time.Second
	}
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = 1 << 20
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.AuthFailureWindows == nil {
		opts.AuthFailureWindows = DefaultAuthFailureWindows
	}
	if err := ratelimit.ValidateWindows(opts.AuthFailureWindows); err != nil {
		return nil, fmt.Errorf("httpapi: Options.AuthFailureWindows: %w", err)
	}
	if opts.ClientAddr == nil {
		opts.ClientAddr = RemoteAddrClient
	}
	h := &handler{opts: opts, log: opts.Logger}
	h.mux = h.routes()
	return h, nil
}

type ctxKey int

const (
	requestIDKey ctxKey = iota
	principalKey
	logInfoKey
)

// logInfo is what the request log learns from inside the chain.
type logInfo struct{ keyID string }

func contextWithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey, id)
}

func requestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

func principalFrom(ctx context.Context) Principal {
	p, _ := ctx.Value(principalKey).(Principal)
	return p
}

// statusRecorder remembers the status for the request log, and closes an
// HTTP/1 connection whose request body was not read to its end.
type statusRecorder struct {
	http.ResponseWriter
	status int
	// body is the request body, when there is one on HTTP/1; nil otherwise
	// (HTTP/2 needs no draining: the stream is reset).
	body *trackedBody
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
		if s.body != nil && !s.body.eof.Load() {
			// Without it net/http would read (up to 256 KiB of) the rest of
			// the body before sending this answer: a trickling client would
			// hold it until the read deadline.
			s.Header().Set("Connection", "close")
		}
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.WriteHeader(http.StatusOK)
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (read deadlines).
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// ServeHTTP runs the chain: request id and log, deadline, then routing
// (authentication and rate limiting happen inside, per route).
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now() // monotonic: the request's duration
	reqID := ids.New(ids.Request, h.opts.Now())
	w.Header().Set("Request-Id", reqID)
	// Every answer is JSON; no browser may take it for anything else.
	w.Header().Set("X-Content-Type-Options", "nosniff")
	ctx := context.WithValue(r.Context(), requestIDKey, reqID)
	// authed fills it in below, on a request the deferred log does not see.
	logged := &logInfo{}
	ctx = context.WithValue(ctx, logInfoKey, logged)
	rec := &statusRecorder{ResponseWriter: w}
	r = r.WithContext(ctx)
	if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
		// On the copy only: net/http keeps the original to drain or close.
		tb := &trackedBody{ReadCloser: r.Body}
		r.Body = tb
		if r.ProtoMajor == 1 {
			rec.body = tb
		}
	}
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			h.log.Error("handler panicked", zap.String("request_id", reqID), zap.Any("panic", p), zap.Stack("stack"))
			if rec.status == 0 {
				writeError(rec, r, internalError())
			}
		}
		h.log.Info("request",
			zap.String("method", r.Method),
			zap.String("path", r.URL.Path),
			zap.Int("status", rec.status),
			zap.Duration("latency", time.Since(start)),
			zap.String("request_id", reqID),
			zap.String("key_id", logged.keyID))
	}()
	h.withDeadline(rec, r, h.route)
}

// routes maps every path of the API (docs/api.md) to its handler, on
// ServeMux patterns. The patterns name no method: the handlers check it, so
// that a known path with another method is answered 405 in the API's error
// shape with an Allow header, and HEAD works wherever GET does. The API
// sees paths from /v1 on: mount it at "/v1/" of a mux, or under any prefix
// with http.StripPrefix (see ExampleNew_mount).
func (h *handler) routes() *http.ServeMux {
	m := http.NewServeMux()
	get := func(next http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { h.method(w, r, "GET", next, true) }
	}
	post := func(next http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { h.method(w, r, "POST", next, true) }
	}
	m.HandleFunc("/v1/openapi.json", func(w http.ResponseWriter, r *http.Request) { h.method(w, r, "GET", h.openAPI, false) })
	m.HandleFunc("/v1/workflows", func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost:
			h.authed(w, r, h.createWorkflow)
		case http.MethodGet, http.MethodHead:
			h.authed(w, r, h.listWorkflows)
		default:
			writeError(w, r, methodNotAllowed("GET, POST"))
		}
	})
	m.HandleFunc("/v1/workflows/{id}", get(func(w http.ResponseWriter, r *http.Request) { h.fetchWorkflow(w, r, r.PathValue("id")) }))
	m.HandleFunc("/v1/workflows/{id}/cancel", post(func(w http.ResponseWriter, r *http.Request) { h.cancelWorkflow(w, r, r.PathValue("id")) }))
	m.HandleFunc("/v1/workflows/{id}/refunds", post(func(w http.ResponseWriter, r *http.Request) { h.createRefund(w, r, r.PathValue("id")) }))
	m.HandleFunc("/v1/refunds", get(h.listRefunds))
	m.HandleFunc("/v1/refunds/{id}", get(func(w http.ResponseWriter, r *http.Request) { h.fetchRefund(w, r, r.PathValue("id")) }))
	m.HandleFunc("/v1/customers/{customerId}", get(func(w http.ResponseWriter, r *http.Request) { h.fetchCustomer(w, r, r.PathValue("customerId")) }))
	m.HandleFunc("/v1/customers/{customerId}/owner_grants", post(func(w http.ResponseWriter, r *http.Request) {
		h.createOwnerGrant(w, r, r.PathValue("customerId"))
	}))
	m.HandleFunc("/v1/customers/{customerId}/portal_sessions", post(func(w http.ResponseWriter, r *http.Request) {
		h.createPortalSession(w, r, r.PathValue("customerId"))
	}))
	m.HandleFunc("/v1/customers/{customerId}/owner", post(func(w http.ResponseWriter, r *http.Request) { h.setOwner(w, r, r.PathValue("customerId")) }))
	m.HandleFunc("/v1/test_helpers/customers/{customerId}/fund", post(func(w http.ResponseWriter, r *http.Request) {
		h.fundTestCustomer(w, r, r.PathValue("customerId"))
	}))
	m.HandleFunc("/v1/quotes", post(h.createQuote))
	m.HandleFunc("/v1/events", get(h.listEvents))
	m.HandleFunc("/v1/events/{id}", get(func(w http.ResponseWriter, r *http.Request) { h.fetchEvent(w, r, r.PathValue("id")) }))
	m.HandleFunc("/v1/products", get(h.listProducts))
	m.HandleFunc("/v1/products/{name}", get(func(w http.ResponseWriter, r *http.Request) { h.fetchProduct(w, r, r.PathValue("name")) }))
	m.HandleFunc("/v1/margins", get(h.margins))
	task := func(next http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost {
				writeError(w, r, methodNotAllowed("POST"))
				return
			}
			h.auth(w, r, next, true)
		}
	}
	m.HandleFunc("/v1/tasks/claim", task(h.claimTasks))
	m.HandleFunc("/v1/tasks/{id}/heartbeat", task(func(w http.ResponseWriter, r *http.Request) { h.heartbeatTask(w, r, r.PathValue("id")) }))
	m.HandleFunc("/v1/tasks/{id}/complete", task(func(w http.ResponseWriter, r *http.Request) { h.completeTask(w, r, r.PathValue("id")) }))
	m.HandleFunc("/v1/tasks/{id}/fail", task(func(w http.ResponseWriter, r *http.Request) { h.failTask(w, r, r.PathValue("id")) }))
	m.HandleFunc("/", notFound)
	return m
}

// route hands the request to the routes. A path that is not clean (an empty
// segment, a trailing slash, dot segments) names no resource: it is answered
// 404 here, where ServeMux would redirect it.
func (h *handler) route(w http.ResponseWriter, r *http.Request) {
	if p := r.URL.Path; p == "" || path.Clean(p) != p {
		notFound(w, r)
		return
	}
	h.mux.ServeHTTP(w, r)
}

func notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, r, &Error{Status: http.StatusNotFound, Type: TypeInvalidRequest, Code: wire.CodeResourceMissing,
		Message: fmt.Sprintf("Unrecognized request URL (%s %s).", r.Method, r.URL.Path)})
}

func (h *handler) method(w http.ResponseWriter, r *http.Request, allowed string, next http.HandlerFunc, auth bool) {
	if r.Method != allowed && !(allowed == "GET" && r.Method == http.MethodHead) {
		writeError(w, r, methodNotAllowed(allowed))
		return
	}
	if auth {
		h.authed(w, r, next)
		return
	}
	next(w, r)
}

func methodNotAllowed(allow string) *Error {
	return &Error{Status: http.StatusMethodNotAllowed, Type: TypeInvalidRequest, Code: wire.CodeMethodNotAllowed,
		Message: "This endpoint allows " + allow + ".", Header: http.Header{"Allow": {allow}}}
}

// authed authenticates the key, applies its rate limits (headers on every
// authenticated answer, 429 included) and refuses live keys until live
// settlement is configured, and worker keys (403 worker_key_forbidden).
func (h *handler) authed(w http.ResponseWriter, r *http.Request, next http.HandlerFunc) {
	h.auth(w, r, next, false)
}

// auth is authed for an endpoint that worker keys call (task) or the other
// keys do (!task): the other kind is answered 403.
func (h *handler) auth(w http.ResponseWriter, r *http.Request, next http.HandlerFunc, task bool) {
	p, err := h.opts.Keys.Authenticate(r.Context(), r.Header.Get("Authorization"))
	if err != nil {
		var ae *apikey.AuthError
		if errors.As(err, &ae) {
			limited, err := h.authFailure(w, r)
			switch {
			case err != nil:
				h.fail(w, r, err)
			case limited != nil:
				writeError(w, r, limited)
			default:
				writeError(w, r, &Error{Status: http.StatusUnauthorized, Type: TypeAuthentication, Code: ae.Code, Message: ae.Message})
			}
			return
		}
		h.fail(w, r, err)
		return
	}
	if logged, ok := r.Context().Value(logInfoKey).(*logInfo); ok {
		logged.keyID = p.KeyID
	}
	r = r.WithContext(context.WithValue(r.Context(), principalKey, p))
	d, err := h.opts.Limiter.Allow(r.Context(), p.RateLimitKey, p.Windows, h.opts.Now())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d.WriteHeaders(w.Header())
	if !d.Allowed {
		writeError(w, r, &Error{Status: http.StatusTooManyRequests, Type: TypeRateLimit, Code: wire.CodeRateLimitExceeded,
			Message: "Too many requests for this API key; retry after the time in Retry-After."})
		return
	}
	if p.Environment == settleflow.Live && !h.opts.LiveConfigured() {
		writeError(w, r, &Error{Status: http.StatusForbidden, Type: TypePermission, Code: settleflow.CodeLivemodeNotConfigured,
			Message: "Live mode is not configured on this server: live settlement needs a mainnet RPC, a signer and contract addresses. Use a test key."})
		return
	}
	switch {
	case task && !p.Worker:
		writeError(w, r, &Error{Status: http.StatusForbidden, Type: TypePermission, Code: wire.CodeWorkerKeyRequired,
			Message: "The task endpoints take a worker key (rk_test_… or rk_live_…, made with keys create -kind worker), not this key."})
		return
	case !task && p.Worker:
		writeError(w, r, &Error{Status: http.StatusForbidden, Type: TypePermission, Code: wire.CodeWorkerKeyForbidden,
			Message: "A worker key may call the task endpoints (POST /v1/tasks/…) only; use an ordinary key (sk_…) here."})
		return
	}
	next(w, r)
}
