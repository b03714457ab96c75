// Command server is the settleflow reference server: the HTTP API over
// HTTPS with every default embedded — SQLite in the data directory, the
// simulated chain for test mode, a catalogue of demo products, signed
// webhooks — and the subcommands that manage its API keys and webhook
// endpoints.
//
//	go run ./examples/server                          # serve
//	go run ./examples/server keys create --env test --name ci
//	go run ./examples/server -data DIR webhooks add --env test --url https://example.com/hook
//
// Global flags come before the subcommand. Subcommands work on the same data
// directory, also while the server runs, and take effect within seconds.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/storage"
	"github.com/settleflow/settleflow/webhook"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/settleflow/settleflow/storage/postgres"
	"github.com/settleflow/settleflow/storage/sqlite"
)

type config struct {
	dataDir     string
	httpsAddr   string
	httpAddr    string
	tlsCert     string
	tlsKey      string
	metricsAddr string
	shortName   string
	logLevel    string
	logFormat   string
	live        chainFlags
	test        chainFlags

	// strictTestURLs holds test webhook endpoints to the live URL rules.
	strictTestURLs bool

	timeouts timeouts
	// maxConnsPerAddr caps the connections open at once from one client
	// address (0: no cap).
	maxConnsPerAddr int
	// workers is how many products may execute at once (Options.Workers).
	workers int
	// executionTimeout bounds one execution (Options.ExecutionTimeout); a
	// dead instance's claimed workflows go to the others after its lease,
	// 1.1 times this plus a second.
	executionTimeout time.Duration
	// remote names the demo products left to workers (-remote).
	remote string
	// productsFile is a products file (-products) whose declared products
	// join the demo products, run by workers.
	productsFile string
	// taskLease is a worker's lease on a task between heartbeats.
	taskLease time.Duration
	// authFailuresPerMinute is each client address's budget of failed
	// authentications (0: no limit).
	authFailuresPerMinute int
	// publicHTTPS is the host:port plain-HTTP requests are redirected to.
	publicHTTPS string
	// webhookRetry is the webhook retry policy (zero: the default schedule).
	webhookRetry webhook.RetryPolicy
	// readyMaxLag is how long the oldest due item of a stage may wait
	// before /readyz answers 503.
	readyMaxLag time.Duration
	// fundsMaxAge bounds how old the view of customer funds may be before
	// creates that need funds are refused (0: no bound).
	fundsMaxAge time.Duration
	// postgres is the Postgres DSN shared by every instance ("": SQLite in
	// the data directory).
	postgres string
	// explorers are the dashboard's block explorer URL prefixes.
	testExplorer, liveExplorer string
	// portalName and portalLogo are the customer portal's header.
	portalName, portalLogo string
	// x402 is the sale over x402 (-x402-*): off without -x402-products.
	x402 x402Flags
	// testFaucet is what the test faucet deposits for a test customer's
	// first workflow, in minor units; 0 turns the faucet off.
	testFaucet int64
}

// chainFlags configure one environment's chain: all of -ENV-rpc,
// -ENV-chain-id, -ENV-contract and a signer turn it on (for test, instead of
// the embedded chain).
type chainFlags struct {
	rpc, contract, token, payee         string
	chainID                             int64
	keyFile, keystore, keystorePassFile string
	confirmations                       uint64
	// secretFile holds the customer reference secret (hex); faucetKeyFile
	// the test faucet's key (test only).
	secretFile, faucetKeyFile string
}

// register adds the -ENV-* flags of env ("live" or "test"; network names
// the kind of chain in the help).
func (f *chainFlags) register(fs *flag.FlagSet, env, network string) {
	fs.StringVar(&f.rpc, env+"-rpc", "", network+" JSON-RPC `URL` for "+env+" settlement")
	fs.Int64Var(&f.chainID, env+"-chain-id", 0, "chain id the "+env+" RPC must report")
	fs.StringVar(&f.contract, env+"-contract", "", "settlement contract `address` on the "+env+" chain")
	fs.StringVar(&f.token, env+"-token", "", "stablecoin `address` (checked against the contract)")
	fs.StringVar(&f.payee, env+"-payee", "", "payee `address` (checked against the contract)")
	fs.StringVar(&f.keyFile, env+"-key-file", "", "operator's hex private key `file`")
	fs.StringVar(&f.keystore, env+"-keystore", "", "operator's keystore JSON `file`")
	fs.StringVar(&f.keystorePassFile, env+"-keystore-password-file", "", "`file` holding the keystore password")
	fs.Uint64Var(&f.confirmations, env+"-confirmations", 0, "confirmation depth for "+env+" (0: wait for the finalized block)")
	fs.StringVar(&f.secretFile, env+"-customer-ref-secret-file", "", "`file` holding the deployment's customer reference secret (hex, written by chain deploy): customers' balances on chain are keyed by it")
	if env == "test" {
		fs.StringVar(&f.faucetKeyFile, env+"-faucet-key-file", "", "the test faucet's hex private key `file` (written by chain deploy): it funds test customers")
	}
}

func main() {
	// SIGTERM or Ctrl-C: finish in-flight requests, then stop.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		if isUsage(err) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

type usageError struct{ error }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c config
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.dataDir, "data", "settleflow-data", "data `directory`: SQLite database, TLS certificate")
	fs.StringVar(&c.postgres, "postgres", os.Getenv(databaseEnv), "Postgres `DSN` (postgres://user:pass@host:5432/db?sslmode=...) holding everything instead of SQLite in -data, shared by every instance (default $"+databaseEnv+")")
	fs.StringVar(&c.httpsAddr, "https", "127.0.0.1:8443", "HTTPS listen `address`")
	fs.StringVar(&c.httpAddr, "http", "127.0.0.1:8080", "HTTP listen `address` (redirects to HTTPS with 308); empty to disable")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "TLS certificate `file` (default: self-signed, in DATA/tls)")
	fs.StringVar(&c.tlsKey, "tls-key", "", "TLS key `file`")
	fs.StringVar(&c.metricsAddr, "metrics", "", "Prometheus metrics listen `address` (off by default)")
	fs.StringVar(&c.shortName, "webhook-short-name", "service", "webhook signature header is NAME-signature")
	fs.BoolVar(&c.strictTestURLs, "webhook-strict-test-urls", false,
		"hold test webhook endpoints to the live URL rules (https, public addresses only); by default they may be http and on localhost or a private network")
	fs.DurationVar(&c.timeouts.request, "request-timeout", 30*time.Second, "deadline of an API request, reading its body included (504 request_timeout; a body not read by then: 408 body_timeout)")
	fs.DurationVar(&c.timeouts.readHeader, "read-header-timeout", 10*time.Second, "time a client has for the TLS handshake and a request's headers")
	fs.DurationVar(&c.timeouts.idle, "idle-timeout", 2*time.Minute, "how long a keep-alive connection may sit idle between requests")
	fs.DurationVar(&c.timeouts.shutdown, "shutdown-grace", 0, "at shutdown, how long in-flight requests get before their connections are closed (default: -request-timeout + 5s)")
	fs.IntVar(&c.workers, "workers", 100, "how many workflows may execute at once")
	fs.DurationVar(&c.executionTimeout, "execution-timeout", 5*time.Minute, "bound of one product execution; the workflows an instance that died had claimed are taken over by the others after 1.1 times this plus 1s")
	fs.StringVar(&c.remote, "remote", "", "demo `products` (comma-separated) to leave to workers, which claim them over POST /v1/tasks/… with a worker key; an instance serving remote products must be the only one on its database")
	fs.StringVar(&c.productsFile, "products", "", "products `file` (docs/products.md) whose declared products join the demo products, each run by workers (\"remote\": true); checked strictly at start, a fault naming its line and field; a name a demo product has is refused")
	fs.DurationVar(&c.taskLease, "task-lease", 30*time.Second, "how long a worker holds a task between heartbeats; past it the attempt is retried")
	fs.IntVar(&c.maxConnsPerAddr, "max-conns-per-ip", 64, "connections open at once from one client IP (IPv6: one /64); more are closed at accept; 0 for no cap")
	fs.IntVar(&c.authFailuresPerMinute, "auth-failures-per-minute", 60, "failed authentications a client IP may make per minute before it is answered 429; 0 for no limit")
	fs.StringVar(&c.publicHTTPS, "public-https", "", "`host:port` plain HTTP is redirected to (default: the -https address)")
	fs.StringVar(&c.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&c.logFormat, "log-format", "auto", "console (readable), json (one object per line) or auto: console on a terminal, json otherwise")
	fs.Func("webhook-retry-schedule", "webhook retry `delays`, comma-separated: the first attempt's, then the wait after each failed attempt (default 0s,5s,5m,30m,2h,5h,10h,14h,20h,24h)",
		func(v string) (err error) { c.webhookRetry, err = parseRetrySchedule(v); return err })
	fs.StringVar(&c.testExplorer, "test-explorer", "", "block explorer `URL` prefix the dashboard links test transactions to (the hash is appended), e.g. https://sepolia.etherscan.io/tx/")
	fs.StringVar(&c.portalName, "portal-name", "", "the service the customer portal's pages name in their header (default \"Your account\")")
	fs.StringVar(&c.portalLogo, "portal-logo", "", "the customer portal's logo: a data:image/ `URL` (or a path on this server)")
	fs.StringVar(&c.liveExplorer, "live-explorer", "", "block explorer `URL` prefix for live transactions, e.g. https://etherscan.io/tx/")
	fs.Int64Var(&c.testFaucet, "test-faucet", settleflow.DefaultTestFaucet, "what the test faucet deposits for a test customer seen for the first time, in minor `units` (100000 is 1,000.00); 0 turns it off. cus_insufficient_funds is never funded")
	fs.DurationVar(&c.readyMaxLag, "ready-max-lag", 30*time.Second, "GET /readyz answers 503 when the oldest due item of a pipeline stage has waited longer")
	fs.DurationVar(&c.fundsMaxAge, "funds-max-age", 10*time.Minute, "creates that need customer funds answer 503 funds_unavailable, and GET /readyz 503, while the funds follower has not been current with the chain for longer; 0: no bound")
	c.x402.register(fs)
	c.live.register(fs, "live", "mainnet")
	c.test.register(fs, "test", "testnet")
	showVersion := fs.Bool("version", false, "print the version and exit")
	fs.Usage = func() { topUsage(fs.Output(), fs) }
	fs.SetOutput(io.Discard) // a bad flag is reported once, below
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			topUsage(stdout, fs)
			return nil
		}
		topUsage(stderr, fs)
		return usageError{err}
	}
	fs.SetOutput(stderr)
	if *showVersion || (fs.NArg() > 0 && fs.Arg(0) == "version") {
		fmt.Fprint(stdout, versionText())
		return nil
	}
	if c.timeouts.request <= 0 || c.timeouts.readHeader <= 0 || c.timeouts.idle <= 0 || c.timeouts.shutdown < 0 {
		return usageError{errors.New("-request-timeout, -read-header-timeout and -idle-timeout must be positive, -shutdown-grace not negative")}
	}
	if c.executionTimeout <= 0 {
		return usageError{errors.New("-execution-timeout must be positive")}
	}
	if c.testFaucet < 0 || c.testFaucet > settleflow.MaxAmount {
		return usageError{fmt.Errorf("-test-faucet %d: want 0 (off) to %d minor units", c.testFaucet, settleflow.MaxAmount)}
	}
	if c.timeouts.shutdown == 0 {
		c.timeouts.shutdown = c.timeouts.request + 5*time.Second
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return serve(ctx, c, stdout)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if isHelp(rest[0]) {
		for _, g := range groups() {
			if len(rest) > 1 && g.name == rest[1] {
				g.usage(stdout)
				return nil
			}
		}
		topUsage(stdout, fs)
		return nil
	}
	for _, g := range groups() {
		if g.name == rest[0] {
			return g.run(ctx, c, rest[1:], stdout, stderr)
		}
	}
	topUsage(stderr, fs)
	return usageError{fmt.Errorf("unknown command %q", rest[0])}
}

// topUsage prints the server's usage: the commands, then the global flags.
func topUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, `usage: server [flags]                  serve the API (HTTPS), with every default embedded
       server [flags] COMMAND ...      manage the same data directory or database
       server version                  print the version
       server help [COMMAND]           this text, or a command's

Commands:
`)
	for _, g := range groups() {
		fmt.Fprintf(w, "  %-10s %s\n", g.name, g.summary)
		for _, s := range g.subs {
			fmt.Fprintf(w, "    %-32s %s\n", strings.TrimSpace(s.name+" "+s.args), firstSentence(s.summary))
		}
	}
	fmt.Fprint(w, "\nRun 'server COMMAND -h' for a command's usage. Global flags (before COMMAND):\n")
	out := fs.Output()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(out)
}

// firstSentence is s up to its first ". " or ";".
func firstSentence(s string) string {
	if i := strings.IndexAny(s, ";"); i > 0 {
		s = s[:i]
	}
	if i := strings.Index(s, ". "); i > 0 {
		s = s[:i]
	}
	return strings.TrimSuffix(s, ".")
}

// openDB opens the database for the keys and webhooks commands, which touch
// no workflow and so may run beside the server: the -postgres database, or
// the data directory's SQLite file (created).
func openDB(ctx context.Context, c config) (*storage.DB, error) {
	if c.postgres != "" {
		store, err := postgres.Open(ctx, c.postgres)
		if err != nil {
			return nil, err
		}
		return store.DB(), nil
	}
	if err := os.MkdirAll(c.dataDir, 0o700); err != nil {
		return nil, err
	}
	return sqlite.OpenDB(filepath.Join(c.dataDir, "settleflow.db"), sqlite.OpenOptions{})
}

// databaseEnv names the environment variable -postgres defaults to.
const databaseEnv = "SETTLEFLOW_DATABASE_URL"

// newLogger builds the server's logger: zap's console encoder (readable,
// coloured levels) when format is "console", or "auto" and stderr is a
// terminal; JSON lines otherwise, for log collectors.
func newLogger(level, format string) (*zap.Logger, error) {
	cfg := zap.NewProductionConfig()
	if err := cfg.Level.UnmarshalText([]byte(level)); err != nil {
		return nil, usageError{fmt.Errorf("-log-level: %w", err)}
	}
	switch format {
	case "json":
	case "console":
		consoleEncoding(&cfg)
	case "auto", "":
		if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			consoleEncoding(&cfg)
		}
	default:
		return nil, usageError{fmt.Errorf("-log-format %q: want auto, console or json", format)}
	}
	cfg.Sampling = nil
	return cfg.Build()
}

func consoleEncoding(cfg *zap.Config) {
	cfg.Encoding = "console"
	cfg.EncoderConfig = zap.NewDevelopmentEncoderConfig()
	cfg.EncoderConfig.EncodeLevel = zapcore.CapitalColorLevelEncoder
	cfg.EncoderConfig.EncodeTime = zapcore.ISO8601TimeEncoder
}
