package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/settleflow/settleflow/wire"
)

// backend sends requests: authentication, retries, errors. The services
// share one.
type backend struct {
	key secret
	// bases are the base URLs, tried in turn (round-robin from *next).
	bases          []*endpoint
	next           *atomic.Uint64
	hc             *http.Client
	timeout        time.Duration
	maxRetries     int
	logger         *slog.Logger
	initialBackoff time.Duration
	maxBackoff     time.Duration
	maxRetryWait   time.Duration
	userAgent      string
	// err is a configuration error every call returns.
	err error
}

// endpointDownFor is how long a base URL that gave a connection error is
// passed over (unless every one is).
const endpointDownFor = 5 * time.Second

// endpoint is one base URL of the API.
type endpoint struct {
	// url is the base URL without a trailing slash.
	url string
	// downUntil is when (UnixNano) the URL is tried again after a
	// connection error; 0 when it gave none.
	downUntil atomic.Int64
}

// pick returns the index of the base URL for the next request: the next in
// turn that is neither down nor in skip, else the next not in skip; -1 when
// every one is in skip.
func (b *backend) pick(skip []bool) int {
	n := len(b.bases)
	start := int(b.next.Add(1)-1) % n
	now := time.Now().UnixNano()
	fallback := -1
	for k := range n {
		i := (start + k) % n
		if skip[i] {
			continue
		}
		if b.bases[i].downUntil.Load() <= now {
			return i
		}
		if fallback < 0 {
			fallback = i
		}
	}
	return fallback
}

// request is one API call.
type request struct {
	method string
	// path is the path under the base URL, /v1/…, already escaped.
	path  string
	query url.Values
	// body, when not nil, is sent as JSON.
	body any
	// idempotencyKey is the caller's; a POST without one gets a fresh one.
	idempotencyKey string
	// noRetry sends the request once: it is not idempotent on the server.
	// Only a request that could not be sent at all (the connection was
	// refused) goes to the next base URL, if there is one.
	noRetry bool
}

// result describes how a call went, error or not.
type result struct {
	// attempts is how many requests were sent.
	attempts int
}

// idempotencyKeyPrefix starts the Idempotency-Key the client generates.
const idempotencyKeyPrefix = "sfgo_"

// newIdempotencyKey returns a key with 130 bits from crypto/rand.
func newIdempotencyKey() string { return idempotencyKeyPrefix + rand.Text() }

// do sends r, retrying as configured, and decodes a 2xx answer's body into
// out: a *json.RawMessage takes the bytes as they are, anything else goes
// through encoding/json.
func (b *backend) do(ctx context.Context, r request, out any) (result, error) {
	var res result
	if b.err != nil {
		return res, b.err
	}
	if err := checkKey(b.key.reveal()); err != nil {
		return res, err
	}
	var payload []byte
	if r.body != nil {
		var err error
		if payload, err = json.Marshal(r.body); err != nil {
			return res, fmt.Errorf("settleflow: %s %s: encoding the request body: %w", r.method, r.path, err)
		}
	}
	key := r.idempotencyKey
	if r.method == http.MethodPost && key == "" {
		key = newIdempotencyKey()
	}
	// r.path is escaped already: append it to the base URL's text rather
	// than to its Path, which String would escape again.
	suffix := r.path
	if q := r.query.Encode(); q != "" {
		suffix += "?" + q
	}

	// unsent marks the base URLs this attempt could not send the request
	// to: the next one is tried at once, without counting as a retry.
	unsent := make([]bool, len(b.bases))
	for attempt := 0; ; attempt++ {
		i := b.pick(unsent)
		if i < 0 {
			clear(unsent)
			i = b.pick(unsent)
		}
		res.attempts++
		resp, body, writes, err := b.send(ctx, r.method, b.bases[i].url+suffix, payload, key, !r.noRetry)
		// net/http itself sends a request with an Idempotency-Key again
		// when a reused connection fails under it: each write is an attempt
		// (Cancel needs to know whether an earlier one may have landed).
		res.attempts += max(writes-1, 0)
		var callErr error
		var retryable bool
		switch {
		case err != nil && ctx.Err() != nil:
			// The caller gave up; that is no connection error.
			return res, fmt.Errorf("settleflow: %s %s: %w", r.method, r.path, context.Cause(ctx))
		case err != nil:
			callErr = &ConnectionError{Method: r.method, Path: r.path, Err: err}
			retryable = retryableTransportError(err)
			b.bases[i].downUntil.Store(time.Now().Add(endpointDownFor).UnixNano())
			if retryable && (writes == 0 || (isDialError(err) && !r.noRetry)) {
				// Nothing was written: the server cannot have acted on it.
				// (A replayable request net/http wrote on a reused
				// connection that had closed, then could not dial again,
				// is as unsent: the server never answered it and it may
				// be sent again anyway.)
				unsent[i] = true
				if slices.Contains(unsent, false) {
					attempt--
					continue
				}
			}
		case resp.StatusCode >= 200 && resp.StatusCode < 300:
			return res, b.decode(r, resp, body, out)
		default:
			callErr = b.apiError(resp, body)
			retryable = retryableStatus(resp.StatusCode)
		}
		if !retryable || attempt >= b.maxRetries || r.noRetry {
			return res, callErr
		}
		clear(unsent)
		wait, ok := b.retryWait(attempt, resp)
		if !ok {
			return res, callErr
		}
		if deadline, has := ctx.Deadline(); has && time.Until(deadline) < wait {
			// The wait would outlast the caller's deadline: answer now with
			// what is known rather than with a bare deadline error later.
			return res, callErr
		}
		b.logRetry(ctx, r, attempt, resp, err, wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return res, fmt.Errorf("settleflow: %s %s: %w while waiting to retry after: %w", r.method, r.path, context.Cause(ctx), callErr)
		case <-t.C:
		}
	}
}

// send makes one attempt and reads its whole answer within the timeout. It
// also returns how many times the request was written (more than once when
// the transport retried it on a failed reused connection; 0 when nothing
// was written). Unless replayable, net/http never writes it a second time
// (it would, on a reused connection that fails before an answer, for a
// request carrying an Idempotency-Key).
func (b *backend) send(ctx context.Context, method, target string, payload []byte, idempotencyKey string, replayable bool) (*http.Response, []byte, int, error) {
	if b.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.timeout)
		defer cancel()
	}
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	var writes atomic.Int32
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { writes.Add(1) }})
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return nil, nil, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+b.key.reveal())
	req.Header.Set("User-Agent", b.userAgent)
	req.Header.Set("Accept", "application/json")
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", idempotencyKey)
	}
	if !replayable && req.Body != nil {
		// A body net/http cannot get again is never resent by it.
		req.GetBody = nil
	}
	resp, err := b.hc.Do(req)
	if err != nil {
		return nil, nil, int(writes.Load()), err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		// An answer cut short is as good as none: retry it.
		return nil, nil, int(writes.Load()), err
	}
	return resp, data, int(writes.Load()), nil
}

// decode fills out from a 2xx answer.
func (b *backend) decode(r request, resp *http.Response, body []byte, out any) error {
	switch o := out.(type) {
	case nil:
		return nil
	case *json.RawMessage:
		*o = append((*o)[:0], body...)
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("settleflow: %s %s: decoding the %d answer (request %s): %w",
			r.method, r.path, resp.StatusCode, resp.Header.Get("Request-Id"), err)
	}
	return nil
}

// apiError builds the error of a non-2xx answer from its envelope
// {"error": {type, code, message, param, requestId}}, or from its status when
// the body is something else (a proxy's page, say).
func (b *backend) apiError(resp *http.Response, body []byte) error {
	e := &APIError{Status: resp.StatusCode, Header: resp.Header, RequestID: resp.Header.Get("Request-Id")}
	var env wire.ErrorEnvelope
	var pay *paymentDetails
	if json.Unmarshal(body, &env) == nil && env.Error != nil {
		x := env.Error
		e.Type, e.Code, e.Message, e.Param = x.Type, x.Code, x.Message, x.Param
		if x.RequestID != "" {
			e.RequestID = x.RequestID
		}
		if x.Available != nil || x.Amount != nil {
			pay = &paymentDetails{Currency: x.Currency, CustomerID: x.CustomerID}
			if x.Available != nil {
				pay.Available = *x.Available
			}
			if x.Amount != nil {
				pay.Amount = *x.Amount
			}
		}
	} else {
		e.Message = "unexpected answer " + resp.Status
	}
	e.Message = b.key.scrub(e.Message)
	e.Param = b.key.scrub(e.Param)
	err := categorize(e, time.Now())
	if pe, ok := err.(*PaymentError); ok && pay != nil {
		pe.Available, pe.Amount, pe.Currency, pe.CustomerID = pay.Available, pay.Amount, pay.Currency, pay.CustomerID
	}
	return err
}

// retryWait is how long to wait before retry number attempt (from 0): a
// random duration in [0, min(maxBackoff, initialBackoff·2^attempt)) ("full
// jitter"), or, when the answer says how long to wait (Retry-After, or
// X-RateLimit-Reset on a 429), that long plus a random part of at most
// initialBackoff, so that clients told the same time do not all come back
// at once. ok is false when the answer asks for more than maxRetryWait.
func (b *backend) retryWait(attempt int, resp *http.Response) (wait time.Duration, ok bool) {
	if resp != nil {
		if hint, has := retryHint(resp.Header, resp.StatusCode, time.Now()); has {
			if hint > b.maxRetryWait {
				return 0, false
			}
			return hint + randDuration(b.initialBackoff), true
		}
	}
	ceiling := b.maxBackoff
	if attempt < 32 {
		if c := b.initialBackoff << attempt; c > 0 && c < ceiling {
			ceiling = c
		}
	}
	return randDuration(ceiling), true
}

// randDuration is uniform in [0, d).
func randDuration(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return time.Duration(mrand.Int64N(int64(d)))
}

func (b *backend) logRetry(ctx context.Context, r request, attempt int, resp *http.Response, err error, wait time.Duration) {
	if b.logger == nil {
		return
	}
	attrs := []slog.Attr{
		slog.String("method", r.method),
		slog.String("path", r.path),
		slog.Int("attempt", attempt+1),
		slog.Duration("wait", wait),
	}
	if resp != nil {
		attrs = append(attrs, slog.Int("status", resp.StatusCode), slog.String("request_id", resp.Header.Get("Request-Id")))
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", b.key.scrub(err.Error())))
	}
	b.logger.LogAttrs(ctx, slog.LevelWarn, "settleflow: retrying", attrs...)
}

// checkKey refuses, before anything is sent, a key no server accepts in a
// header. The error never quotes the key.
func checkKey(key string) error {
	if key == "" {
		return errors.New("settleflow: no API key: pass sk_test_… or sk_live_… to client.New")
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c <= ' ' || c >= 0x7f {
			return errors.New("settleflow: the API key holds a character at byte " + strconv.Itoa(i) +
				" that an HTTP header cannot carry (a space, a line break or non-ASCII); check how it was read")
		}
	}
	return nil
}

// isDialError reports whether err is a failure to connect: the request's
// last try wrote nothing.
func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
