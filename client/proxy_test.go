package client_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/settleflow/settleflow/client"
)

// proxy is a plain-HTTP loopback proxy in front of the reference server
// that lets a test answer or break chosen requests: handle is called with
// the request's number (from 0) and its body, and forwards it, answers it
// or drops it.
type proxy struct {
	srv    *httptest.Server
	handle func(p *proxy, n int, w http.ResponseWriter, r *http.Request, body []byte)

	mu   sync.Mutex
	seen []seenRequest
}

// seenRequest is what the proxy saw of a request, and of the server's
// answer when it forwarded it.
type seenRequest struct {
	method, path, query string
	escapedPath         string
	idempotencyKey      string
	userAgent           string
	authorization       string
	status              int
	replayed            string
	answer              []byte
}

func newProxy(t testing.TB, handle func(p *proxy, n int, w http.ResponseWriter, r *http.Request, body []byte)) *proxy {
	p := newProxyOf(handle)
	p.srv.Start()
	t.Cleanup(p.srv.Close)
	return p
}

// newTLSProxy is newProxy serving HTTPS (HTTP/1.1) with a certificate of
// its own, which p.srv.Certificate() returns.
func newTLSProxy(t testing.TB, handle func(p *proxy, n int, w http.ResponseWriter, r *http.Request, body []byte)) *proxy {
	p := newProxyOf(handle)
	p.srv.StartTLS()
	t.Cleanup(p.srv.Close)
	return p
}

func newProxyOf(handle func(p *proxy, n int, w http.ResponseWriter, r *http.Request, body []byte)) *proxy {
	p := &proxy{handle: handle}
	p.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		p.mu.Lock()
		n := len(p.seen)
		p.seen = append(p.seen, seenRequest{method: r.Method, path: r.URL.Path, escapedPath: r.URL.EscapedPath(), query: r.URL.RawQuery,
			idempotencyKey: r.Header.Get("Idempotency-Key"), userAgent: r.Header.Get("User-Agent"), authorization: r.Header.Get("Authorization")})
		p.mu.Unlock()
		p.handle(p, n, w, r, body)
	}))
	return p
}

// client returns a client of the proxy with the suite's key.
func (p *proxy) client(opts ...client.Option) *client.Client {
	return client.New(ref.key, append([]client.Option{client.WithBaseURL(p.srv.URL)}, opts...)...)
}

func (p *proxy) requests() []seenRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]seenRequest(nil), p.seen...)
}

var upstream = sync.OnceValue(func() *http.Client {
	return &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig()}}
})

// roundTrip sends request n to the reference server and returns its answer,
// read in full.
func (p *proxy) roundTrip(n int, r *http.Request, body []byte) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, ref.baseURL+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header = r.Header.Clone()
	resp, err := upstream().Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	p.mu.Lock()
	p.seen[n].status, p.seen[n].replayed, p.seen[n].answer = resp.StatusCode, resp.Header.Get("Idempotent-Replayed"), answer
	p.mu.Unlock()
	return resp, answer, err
}

// forward passes request n to the reference server and its answer back.
func (p *proxy) forward(n int, w http.ResponseWriter, r *http.Request, body []byte) {
	resp, answer, err := p.roundTrip(n, r, body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(answer)
}

// drop closes the client's connection without an answer.
func drop(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	conn.Close()
}

// answer writes an error envelope.
func answer(w http.ResponseWriter, status int, typ, code string, header ...string) {
	for i := 0; i+1 < len(header); i += 2 {
		w.Header().Set(header[i], header[i+1])
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_PROXY")
	w.WriteHeader(status)
	io.WriteString(w, `{"error":{"type":"`+typ+`","code":"`+code+`","message":"from the test proxy","requestId":"req_PROXY"}}`)
}

func (r seenRequest) String() string {
	return fmt.Sprintf("{%s %s?%s key=%q status=%d replayed=%q}", r.method, r.path, r.query, r.idempotencyKey, r.status, r.replayed)
}
