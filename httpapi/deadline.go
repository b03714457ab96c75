package httpapi

import (
	"bytes"
	"context"
	"net/http"
	"sync"
)

// withDeadline runs next with the request deadline. next writes into a
// buffer; if the deadline passes first, the client gets 504
// request_timeout at once and whatever next writes later is dropped. (Like
// http.TimeoutHandler, but with our error body and Request-Id.)
func (h *handler) withDeadline(w http.ResponseWriter, r *http.Request, next http.HandlerFunc) {
	ctx, cancel := context.WithTimeout(r.Context(), h.opts.RequestTimeout)
	defer cancel()
	r = r.WithContext(ctx)
	tw := &bufferedWriter{header: w.Header().Clone()}
	done := make(chan struct{})
	panicked := make(chan any, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				panicked <- p
			}
		}()
		next(tw, r)
		close(done)
	}()
	select {
	case p := <-panicked:
		panic(p)
	case <-done:
		tw.mu.Lock()
		defer tw.mu.Unlock()
		dst := w.Header()
		for k := range dst {
			delete(dst, k)
		}
		for k, v := range tw.header {
			dst[k] = v
		}
		if tw.status == 0 {
			tw.status = http.StatusOK
		}
		w.WriteHeader(tw.status)
		w.Write(tw.body.Bytes())
	case <-ctx.Done():
		tw.mu.Lock()
		tw.timedOut = true
		tw.mu.Unlock()
		if r.Context().Err() == context.DeadlineExceeded {
			writeError(w, r, &Error{Status: http.StatusGatewayTimeout, Type: TypeAPI, Code: "request_timeout",
				Message: "The request ran past its deadline of " + h.opts.RequestTimeout.String() + ". It may or may not have taken effect: retry with the same Idempotency-Key."})
		}
	}
}

// bufferedWriter collects a response until the deadline decides its fate.
type bufferedWriter struct {
	mu       sync.Mutex
	header   http.Header
	body     bytes.Buffer
	status   int
	timedOut bool
}

func (b *bufferedWriter) Header() http.Header { return b.header }

func (b *bufferedWriter) WriteHeader(code int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.status == 0 && !b.timedOut {
		b.status = code
	}
}

func (b *bufferedWriter) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.timedOut {
		return 0, http.ErrHandlerTimeout
	}
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}
