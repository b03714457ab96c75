package client

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
)

// Version is the version of this library, sent in the User-Agent header.
const Version = "0.1.0"

// Defaults of the options.
const (
	// DefaultBaseURL is where the reference server (go run ./examples/server)
	// listens by default.
	DefaultBaseURL = "https://127.0.0.1:8443"
	// DefaultTimeout bounds each HTTP request (each attempt of a call).
	DefaultTimeout = 30 * time.Second
	// DefaultMaxRetries is how many times a call is retried after its first
	// attempt.
	DefaultMaxRetries = 2
	// DefaultInitialBackoff and DefaultMaxBackoff bound the random wait before
	// a retry: before retry n (from 0) it is drawn uniformly from
	// [0, min(DefaultMaxBackoff, DefaultInitialBackoff·2ⁿ)) ("full jitter").
	DefaultInitialBackoff = 500 * time.Millisecond
	DefaultMaxBackoff     = 8 * time.Second
	// DefaultMaxRetryWait is the longest Retry-After (or X-RateLimit-Reset)
	// the client waits for before a retry; a server asking for longer gets
	// its error returned at once, so the caller can decide.
	DefaultMaxRetryWait = 60 * time.Second
)

// Client is a settleflow API client. Create one with [New] and share it: it
// is safe for concurrent use, and its services are its only state.
//
// Printing a Client with any fmt verb, or logging it with log/slog, shows
// its base URL and a redacted form of its API key (sk_test_…a1b2), never the
// key.
type Client struct {
	// Workflows creates, fetches, lists and cancels workflows.
	Workflows *WorkflowService
	// Quotes prices a workflow without creating it.
	Quotes *QuoteService
	// Products reads the product catalogue.
	Products *ProductService
	// Events reads the events that webhooks deliver.
	Events *EventService
	// Customers reads customers' funds.
	Customers *CustomerService
	// Refunds creates and reads refunds of settled charges.
	Refunds *RefundService
	// Margins reports the margins of settled workflows.
	Margins *MarginService
	// TestHelpers calls the test helpers (test keys only).
	TestHelpers *TestHelperService
	// Tasks calls the task endpoints (worker keys only); see also
	// [Client.NewWorker].
	Tasks *TaskService

	b *backend
}

// Option configures a [Client] built by [New].
type Option func(*config)

type config struct {
	baseURL        string
	baseURLs       []string
	httpClient     *http.Client
	rootCAs        *x509.CertPool
	timeout        time.Duration
	maxRetries     int
	userAgent      string
	logger         *slog.Logger
	initialBackoff time.Duration
	maxBackoff     time.Duration
	maxRetryWait   time.Duration
}

// WithBaseURL sets the API's base URL, without the /v1 (default
// [DefaultBaseURL]). It must be https, except for a loopback host
// (localhost, 127.0.0.0/8, ::1), which may be plain http, for local proxies
// and tests; the API key is never sent in plain text anywhere else.
func WithBaseURL(u string) Option { return func(c *config) { c.baseURL, c.baseURLs = u, nil } }

// WithBaseURLs makes the client send its requests to several instances of
// the API, each URL checked as [WithBaseURL] checks one (one load-balanced
// URL needs only WithBaseURL). Each request goes to the next URL in turn
// (round-robin); a URL that gives a connection error is passed over for the
// next 5 s (unless every URL is), and a request that could not even be sent
// to it (the connection was refused) goes to the next URL at once, without
// counting as a retry. A request that was sent is retried only as
// [WithMaxRetries] says and only when the server treats it as idempotent
// (docs/workers.md, "Several instances and retries"): a claim for tasks is
// never sent twice.
func WithBaseURLs(urls ...string) Option {
	return func(c *config) { c.baseURL, c.baseURLs = "", append([]string{}, urls...) }
}

// WithHTTPClient makes the client send its requests through hc instead of
// its own *http.Client. The client's own follows no redirect, so an answer of
// the plain-HTTP listener (308 https_required) is an error rather than a
// second request; hc follows its own policy. Combined with [WithRootCAs], hc's
// Transport must be an *http.Transport (or nil); a copy of it is used.
func WithHTTPClient(hc *http.Client) Option { return func(c *config) { c.httpClient = hc } }

// WithRootCAs makes the client trust the certificates in pool, and only
// them, for the server's certificate: for the reference server's self-signed
// certificate, load settleflow-data/tls/cert.pem into a pool.
func WithRootCAs(pool *x509.CertPool) Option { return func(c *config) { c.rootCAs = pool } }

// WithTimeout bounds each HTTP request, from sending it to reading the whole
// answer (default [DefaultTimeout]). A call that is retried gets d for each
// attempt; bound the whole call with its context. Zero means no timeout.
func WithTimeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// WithMaxRetries sets how many times a call is retried after its first
// attempt (default [DefaultMaxRetries]); 0 disables retries.
func WithMaxRetries(n int) Option { return func(c *config) { c.maxRetries = max(n, 0) } }

// WithBackoff sets the bounds of the random wait before a retry (defaults
// [DefaultInitialBackoff] and [DefaultMaxBackoff]) and the longest
// Retry-After the client honours by waiting (default [DefaultMaxRetryWait]).
func WithBackoff(initial, maximum, maxRetryWait time.Duration) Option {
	return func(c *config) { c.initialBackoff, c.maxBackoff, c.maxRetryWait = initial, maximum, maxRetryWait }
}

// WithUserAgent appends s (for example "myapp/1.2") to the User-Agent
// header, which starts with settleflow-go/<Version> go/<Go version>.
func WithUserAgent(s string) Option { return func(c *config) { c.userAgent = s } }

// WithLogger makes the client log each retry (method, path, attempt, status
// or error, wait, request id) on l at level Warn. Nothing is logged without
// it. Logs never carry the API key or request and response bodies.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// New returns a client that authenticates with apiKey (sk_test_… or
// sk_live_…). Options that cannot be applied (a malformed base URL, say)
// make every call of the client return the error.
func New(apiKey string, opts ...Option) *Client {
	cfg := config{
		baseURL:        DefaultBaseURL,
		timeout:        DefaultTimeout,
		maxRetries:     DefaultMaxRetries,
		initialBackoff: DefaultInitialBackoff,
		maxBackoff:     DefaultMaxBackoff,
		maxRetryWait:   DefaultMaxRetryWait,
	}
	for _, o := range opts {
		o(&cfg)
	}
	b := &backend{
		key:            newSecret(apiKey),
		timeout:        cfg.timeout,
		maxRetries:     cfg.maxRetries,
		logger:         cfg.logger,
		initialBackoff: cfg.initialBackoff,
		maxBackoff:     cfg.maxBackoff,
		maxRetryWait:   cfg.maxRetryWait,
		userAgent:      "settleflow-go/" + Version + " go/" + runtime.Version(),
		next:           new(atomic.Uint64),
	}
	if cfg.userAgent != "" {
		b.userAgent += " " + cfg.userAgent
	}
	b.bases, b.err = parseBaseURLs(cfg)
	if b.err == nil {
		b.hc, b.err = httpClient(cfg)
	}
	return &Client{
		Workflows:   &WorkflowService{b},
		Quotes:      &QuoteService{b},
		Products:    &ProductService{b},
		Events:      &EventService{b},
		Customers:   &CustomerService{b},
		Refunds:     &RefundService{b},
		Margins:     &MarginService{b},
		TestHelpers: &TestHelperService{b},
		Tasks:       &TaskService{b},
		b:           b,
	}
}

// parseBaseURLs checks the base URLs of cfg.
func parseBaseURLs(cfg config) ([]*endpoint, error) {
	raws := cfg.baseURLs
	if raws == nil {
		raws = []string{cfg.baseURL}
	}
	if len(raws) == 0 {
		return nil, errors.New("settleflow: WithBaseURLs was given no URL")
	}
	out := make([]*endpoint, 0, len(raws))
	for _, raw := range raws {
		u, err := parseBaseURL(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, &endpoint{url: u.String()})
	}
	return out, nil
}

// parseBaseURL checks u and returns it without a trailing slash.
func parseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("settleflow: base URL: %w", err)
	}
	switch {
	case u.Host == "":
		return nil, fmt.Errorf("settleflow: base URL %q has no host", raw)
	case u.User != nil:
		return nil, errors.New("settleflow: base URL must not carry credentials")
	case u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("settleflow: base URL %q must not have a query or fragment", raw)
	case u.Scheme == "https":
	case u.Scheme == "http" && isLoopback(u.Hostname()):
	case u.Scheme == "http":
		return nil, fmt.Errorf("settleflow: base URL %q: plain http is allowed for loopback hosts only; use https", raw)
	default:
		return nil, fmt.Errorf("settleflow: base URL %q: scheme must be https", raw)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// httpClient returns the *http.Client the client sends with.
func httpClient(cfg config) (*http.Client, error) {
	if cfg.httpClient != nil {
		if cfg.rootCAs == nil {
			return cfg.httpClient, nil
		}
		var base *http.Transport
		switch t := cfg.httpClient.Transport.(type) {
		case nil:
			base = http.DefaultTransport.(*http.Transport)
		case *http.Transport:
			base = t
		default:
			return nil, fmt.Errorf("settleflow: WithRootCAs needs the HTTP client's Transport to be an *http.Transport, not %T", t)
		}
		hc := *cfg.httpClient
		hc.Transport = withRootCAs(base, cfg.rootCAs)
		return &hc, nil
	}
	t := withRootCAs(http.DefaultTransport.(*http.Transport), cfg.rootCAs)
	return &http.Client{
		Transport: t,
		// Never follow a redirect: the API answers none but the plain-HTTP
		// listener's 308, and following it would send the key twice.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}, nil
}

// withRootCAs returns a copy of base that requires TLS 1.2 or later and,
// when pool is set, trusts only pool.
func withRootCAs(base *http.Transport, pool *x509.CertPool) *http.Transport {
	t := base.Clone()
	if t.TLSClientConfig == nil {
		t.TLSClientConfig = &tls.Config{}
	}
	t.TLSClientConfig.MinVersion = max(t.TLSClientConfig.MinVersion, tls.VersionTLS12)
	if pool != nil {
		t.TLSClientConfig.RootCAs = pool
	}
	return t
}

// String describes c without its API key.
func (c *Client) String() string {
	if c == nil || c.b == nil {
		return "settleflow.Client(nil)"
	}
	base := "invalid"
	if len(c.b.bases) > 0 {
		urls := make([]string, len(c.b.bases))
		for i, e := range c.b.bases {
			urls[i] = e.url
		}
		base = strings.Join(urls, ", ")
	}
	return "settleflow.Client{baseURL: " + base + ", apiKey: " + c.b.key.display + "}"
}

// GoString is String, so %#v shows no key either.
func (c *Client) GoString() string { return c.String() }

// Format writes String for every verb, so that no verb (%x of a struct
// prints its fields in hex) can reach the key.
func (c *Client) Format(f fmt.State, _ rune) { io.WriteString(f, c.String()) }

// LogValue makes log/slog log c as String.
func (c *Client) LogValue() slog.Value { return slog.StringValue(c.String()) }
