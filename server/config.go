package server

import (
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/webhook"
)

// Config is everything a [Server] is built from. Only Products is required:
// the zero value of every other field is its documented default, which is
// the reference server's (go run ./examples/server) — SQLite and the
// self-signed certificate in DataDir, the embedded simulated chain for test
// mode, live mode off, HTTPS on 127.0.0.1:8443.
type Config struct {
	// Products is the catalogue the server sells. Required.
	Products *settleflow.Products

	// DataDir is the directory the server keeps its state in: the SQLite
	// database (unless Postgres is set), the embedded test chain (unless
	// Test is set), the self-signed certificate (DataDir/tls, unless
	// TLSCert is set) and the engine's worker id. It is created (mode 0700)
	// if missing. One server per DataDir: a second one on the same SQLite
	// database is refused at New. Default "settleflow-data".
	DataDir string
	// Postgres is a Postgres DSN (postgres://user:pass@host:5432/db?...).
	// Set, the database is there, shared by every instance naming it, with
	// their rate limits; empty, SQLite in DataDir, limits in memory.
	Postgres string

	// Addr is the HTTPS listen address (host:port; port 0 takes a free
	// port, see [Server.Addr]). Default "127.0.0.1:8443".
	Addr string
	// RedirectAddr, set, is a plain-HTTP listen address that answers every
	// request with 308 to the same path and query over HTTPS, at
	// PublicAddr. Default: none.
	RedirectAddr string
	// PublicAddr is the host[:port] the redirect and the first start's
	// dashboard sign-in link send clients to; never a request's Host
	// header. Default: the HTTPS listener's address, an unspecified host
	// (0.0.0.0, ::) becoming localhost.
	PublicAddr string
	// MetricsAddr, set, is a plain-HTTP listen address serving Prometheus
	// metrics at GET /metrics. Default: none.
	MetricsAddr string
	// TLSCert and TLSKey are the PEM files of the certificate to serve:
	// both or neither. Default: a self-signed certificate for localhost,
	// 127.0.0.1 and ::1, made at the first start and kept in
	// DataDir/tls/cert.pem (see [Server.RootCAs]).
	TLSCert, TLSKey string

	// Test configures test-mode settlement on a chain over RPC, shared by
	// every instance naming it. Default (nil): the embedded simulated chain
	// (chain id 1337), kept in DataDir/chain; only one instance per
	// database may settle on it.
	Test *settlement.ChainConfig
	// Live configures live-mode settlement. Default (nil): live mode off,
	// live keys answered 403 livemode_not_configured.
	Live *settlement.ChainConfig
	// TestFaucet is what the test faucet deposits for a test customer seen
	// for the first time, in minor units, at most settleflow.MaxAmount; a
	// negative amount turns the faucet off. Default
	// settleflow.DefaultTestFaucet.
	TestFaucet int64
	// FundsMaxAge bounds how old the view of customer funds may be
	// (settleflow.Options.FundsMaxAge): past it, creates that need funds
	// answer 503 funds_unavailable and /readyz 503, until the funds
	// follower is current again. Default settleflow.DefaultFundsMaxAge
	// (10 min); negative: no bound.
	FundsMaxAge time.Duration

	// Workers is how many products may execute at once. Default 100.
	Workers int
	// ExecutionTimeout bounds one execution of a product; the workflows a
	// dead instance had claimed go to the others after 1.1 times this plus
	// a second. Default 5 minutes.
	ExecutionTimeout time.Duration
	// TaskLease is how long a worker holds a remote product's task between
	// heartbeats (settleflow.Options.TaskLease). Default 30 seconds.
	TaskLease time.Duration

	// WebhookShortName names the webhook signature header:
	// NAME-signature. Default "service".
	WebhookShortName string
	// WebhookStrictTestURLs holds test webhook endpoints to the live URL
	// rules (https, public addresses only). Default false: test endpoints
	// may be http and on localhost or a private network.
	WebhookStrictTestURLs bool
	// WebhookRetry is the webhook retry policy. Default (zero):
	// webhook's default schedule.
	WebhookRetry webhook.RetryPolicy

	// Explorers are the block explorer URL prefixes, https://, the
	// dashboard links each environment's transactions to (the hash is
	// appended), e.g. https://sepolia.etherscan.io/tx/. Default: none.
	Explorers map[settleflow.Environment]string

	// PortalOperatorName is the service the customer portal's pages name
	// in their header (portal.Options.OperatorName; default "Your
	// account"). PortalOperatorLogo, optional, is its logo: a path on this
	// server or a data:image/ URL (portal.Options.OperatorLogo).
	PortalOperatorName string
	PortalOperatorLogo string

	// RequestTimeout is the API's deadline per request, reading its body
	// included; the listeners' other bounds derive from it. Default 30 s.
	RequestTimeout time.Duration
	// ReadHeaderTimeout bounds the TLS handshake and reading a request's
	// headers. Default 10 s.
	ReadHeaderTimeout time.Duration
	// IdleTimeout bounds a keep-alive connection between requests.
	// Default 2 minutes.
	IdleTimeout time.Duration
	// ShutdownGrace is how long in-flight requests get at [Server.Stop]
	// before their connections are closed. Default RequestTimeout + 5 s.
	ShutdownGrace time.Duration
	// MaxConnsPerAddr caps the connections open at once from one client IP
	// (IPv6: one /64); more are closed at accept. Negative: no cap.
	// Default 64.
	MaxConnsPerAddr int
	// AuthFailuresPerMinute is each client IP's budget of failed
	// authentications per minute, past which it is answered 429.
	// Negative: no limit. Default 60.
	AuthFailuresPerMinute int
	// ReadyMaxLag is how long the oldest due item of a pipeline stage may
	// wait before GET /readyz answers 503. Default 30 s.
	ReadyMaxLag time.Duration

	// X402, set, sells products to agents that pay over HTTP 402, at
	// /x402/ of the server's URL (see [X402Config]). Default: none.
	X402 *X402Config

	// Clock is the one clock of the server's engine, webhook deliverer, API
	// keys, API (request ids, rate-limit windows), dashboard (sessions) and
	// health checks; waits and durations stay on the monotonic clock.
	// Default settleflow.SystemClock.
	Clock settleflow.Clock

	// Logger receives the server's logs (never a secret). Default: none.
	Logger *zap.Logger
	// Output receives what an operator must read once, in lines of text:
	// the first start's test API key (its secret is shown only there; see
	// also [Server.FirstStartKey]), the chains charges settle on, the
	// address served, the first start's dashboard sign-in link and the
	// redirect. Default: none (io.Discard).
	Output io.Writer
}

// ConfigError is the error of [New] for a Config value it refuses, before
// it opens anything.
type ConfigError struct {
	// Field is the Config field at fault, as Go spells it.
	Field string
	// Problem says what is wrong with it and what is wanted.
	Problem string
}

func (e *ConfigError) Error() string { return "server: Config." + e.Field + " " + e.Problem }

// withDefaults is c checked, with its defaults filled in.
func (c Config) withDefaults() (Config, error) {
	if err := c.check(); err != nil {
		return Config{}, err
	}
	set := func(v *string, d string) {
		if *v == "" {
			*v = d
		}
	}
	set(&c.DataDir, "settleflow-data")
	set(&c.Addr, "127.0.0.1:8443")
	setDuration := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	setDuration(&c.RequestTimeout, 30*time.Second)
	setDuration(&c.ReadHeaderTimeout, 10*time.Second)
	setDuration(&c.IdleTimeout, 2*time.Minute)
	setDuration(&c.ShutdownGrace, c.RequestTimeout+5*time.Second)
	setDuration(&c.ReadyMaxLag, 30*time.Second)
	if c.MaxConnsPerAddr == 0 {
		c.MaxConnsPerAddr = 64
	}
	if c.AuthFailuresPerMinute == 0 {
		c.AuthFailuresPerMinute = 60
	}
	if c.Clock == nil {
		c.Clock = settleflow.SystemClock
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.Output == nil {
		c.Output = io.Discard
	}
	return c, nil
}

// check refuses the values no default makes good.
func (c Config) check() error {
	bad := func(field, format string, args ...any) error {
		return &ConfigError{Field: field, Problem: fmt.Sprintf(format, args...)}
	}
	if c.Products == nil {
		return bad("Products", "is required: the catalogue the server sells")
	}
	for _, a := range []struct{ field, addr string }{{"Addr", c.Addr}, {"RedirectAddr", c.RedirectAddr}, {"MetricsAddr", c.MetricsAddr}} {
		if _, _, err := net.SplitHostPort(a.addr); a.addr != "" && err != nil {
			return bad(a.field, "%q: want host:port, such as 127.0.0.1:8443 or :0", a.addr)
		}
	}
	if strings.ContainsAny(c.PublicAddr, "/?#@ ") {
		return bad("PublicAddr", "%q: want host or host:port, without scheme or path", c.PublicAddr)
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return bad("TLSCert", "and Config.TLSKey go together: set both, or neither for the self-signed default")
	}
	if c.TestFaucet > settleflow.MaxAmount {
		return bad("TestFaucet", "%d: want at most %d minor units (negative: off)", c.TestFaucet, settleflow.MaxAmount)
	}
	if c.Workers < 0 {
		return bad("Workers", "%d: want a positive number (0: the default, 100)", c.Workers)
	}
	for _, d := range []struct {
		field string
		d     time.Duration
	}{{"ExecutionTimeout", c.ExecutionTimeout}, {"TaskLease", c.TaskLease}, {"RequestTimeout", c.RequestTimeout}, {"ReadHeaderTimeout", c.ReadHeaderTimeout},
		{"IdleTimeout", c.IdleTimeout}, {"ShutdownGrace", c.ShutdownGrace}, {"ReadyMaxLag", c.ReadyMaxLag}} {
		if d.d < 0 {
			return bad(d.field, "%v: want a positive duration (0: the default)", d.d)
		}
	}
	if err := c.checkX402(); err != nil {
		return err
	}
	for _, env := range slices.Sorted(maps.Keys(c.Explorers)) {
		u := c.Explorers[env]
		if !env.Valid() {
			return bad("Explorers", "has environment %q: want test or live", env)
		}
		if !strings.HasPrefix(u, "https://") {
			return bad("Explorers", "[%s] %q: want an https:// URL prefix", env, u)
		}
	}
	return nil
}
