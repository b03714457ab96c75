// Package rpcfault is an HTTP proxy for JSON-RPC that injects, at random,
// the faults a node, a provider or the network gives a client: JSON-RPC
// errors (-32005 limit exceeded, -32603 internal error, -32000 header not
// found), requests that hang and then lose their connection (timeouts),
// and connections dropped before or after the request reached the node
// (so a sent transaction may have arrived although the client saw an
// error). Blackout stops forwarding altogether: every connection is
// dropped, as if the node were unreachable. It is for tests: it listens on
// loopback only.
package rpcfault

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Fault is one kind of injected fault.
type Fault string

// The faults injected.
const (
	LimitExceeded  Fault = "limit exceeded (-32005)"
	InternalError  Fault = "internal error (-32603)"
	HeaderNotFound Fault = "header not found (-32000)"
	Timeout        Fault = "timeout (hang, then the connection drops)"
	DropBefore     Fault = "connection dropped before forwarding"
	DropAfter      Fault = "connection dropped after forwarding"
	ErrorAfter     Fault = "internal error (-32603) after forwarding"
)

// Faults are every kind, in the order Counts reports them.
var Faults = []Fault{LimitExceeded, InternalError, HeaderNotFound, Timeout, DropBefore, DropAfter, ErrorAfter}

// Options configures a Proxy.
type Options struct {
	// Target is the node's HTTP JSON-RPC URL.
	Target string
	// Rate is the probability, 0 to 1, that a request gets a fault.
	Rate float64
	// Hang is how long a Timeout fault holds its request before dropping
	// the connection (default 2 s).
	Hang time.Duration
	// Seed seeds the random choices (the same seed, the same sequence of
	// decisions for the same sequence of requests).
	Seed uint64
}

// Proxy forwards JSON-RPC over HTTP to a node, injecting faults.
type Proxy struct {
	opts     Options
	ln       net.Listener
	srv      *http.Server
	client   *http.Client
	mu       sync.Mutex
	rng      *rand.Rand
	counts   map[Fault]int
	requests atomic.Int64
	blackout atomic.Bool
	enabled  atomic.Bool
}

// Start listens on a loopback port and serves until Close.
func Start(opts Options) (*Proxy, error) {
	if opts.Hang <= 0 {
		opts.Hang = 2 * time.Second
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{opts: opts, ln: ln, rng: rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15)), counts: map[Fault]int{},
		client: &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	p.enabled.Store(true)
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go p.srv.Serve(ln) //nolint:errcheck // ends with Close
	return p, nil
}

// URL is the proxy's address, to give the client in place of the node's.
func (p *Proxy) URL() string { return "http://" + p.ln.Addr().String() }

// Close stops the proxy.
func (p *Proxy) Close() error { return p.srv.Close() }

// SetBlackout stops (true) or resumes (false) forwarding: while it is on,
// every connection is dropped at once.
func (p *Proxy) SetBlackout(on bool) { p.blackout.Store(on) }

// SetFaults turns the random faults on or off (blackout aside).
func (p *Proxy) SetFaults(on bool) { p.enabled.Store(on) }

// Counts returns how many of each fault were injected, and the requests
// seen.
func (p *Proxy) Counts() (map[Fault]int, int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[Fault]int, len(p.counts))
	for k, v := range p.counts {
		out[k] = v
	}
	return out, p.requests.Load()
}

func (p *Proxy) pick() Fault {
	if !p.enabled.Load() {
		return ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rng.Float64() >= p.opts.Rate {
		return ""
	}
	f := Faults[p.rng.IntN(len(Faults))]
	p.counts[f]++
	return f
}

// ServeHTTP forwards one request, or injects a fault.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.requests.Add(1)
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	if p.blackout.Load() {
		drop(w)
		return
	}
	f := p.pick()
	switch f {
	case LimitExceeded:
		rpcError(w, body, -32005, "limit exceeded")
		return
	case InternalError:
		rpcError(w, body, -32603, "internal error")
		return
	case HeaderNotFound:
		rpcError(w, body, -32000, "header not found")
		return
	case Timeout:
		select {
		case <-time.After(p.opts.Hang):
		case <-r.Context().Done():
		}
		drop(w)
		return
	case DropBefore:
		drop(w)
		return
	}
	resp, err := p.client.Post(p.opts.Target, "application/json", bytes.NewReader(body))
	if err != nil {
		drop(w)
		return
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		drop(w)
		return
	}
	switch f {
	case DropAfter:
		drop(w)
		return
	case ErrorAfter:
		rpcError(w, body, -32603, "internal error")
		return
	}
	w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	w.WriteHeader(resp.StatusCode)
	w.Write(out) //nolint:errcheck // the client went away
}

// drop closes the request's connection without an answer.
func drop(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if c, _, err := hj.Hijack(); err == nil {
			c.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

// rpcError answers a JSON-RPC error for each call of the request (one, or
// a batch).
func rpcError(w http.ResponseWriter, body []byte, code int, msg string) {
	type rpcErr struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	type answer struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcErr          `json:"error"`
	}
	type call struct {
		ID json.RawMessage `json:"id"`
	}
	w.Header().Set("Content-Type", "application/json")
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var calls []call
		json.Unmarshal(trimmed, &calls) //nolint:errcheck // an unreadable batch gets an empty answer
		out := make([]answer, len(calls))
		for i, c := range calls {
			out[i] = answer{"2.0", idOr(c.ID), rpcErr{code, msg}}
		}
		json.NewEncoder(w).Encode(out) //nolint:errcheck
		return
	}
	var c call
	json.Unmarshal(trimmed, &c)                                             //nolint:errcheck
	json.NewEncoder(w).Encode(answer{"2.0", idOr(c.ID), rpcErr{code, msg}}) //nolint:errcheck
}

func idOr(id json.RawMessage) json.RawMessage {
	if len(id) == 0 {
		return json.RawMessage("null")
	}
	return id
}

// String summarizes the faults injected.
func (p *Proxy) String() string {
	counts, n := p.Counts()
	s := fmt.Sprintf("%d requests", n)
	for _, f := range Faults {
		s += fmt.Sprintf(", %s: %d", f, counts[f])
	}
	return s
}
