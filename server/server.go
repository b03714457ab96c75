package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.uber.org/zap"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/apikey"
	"github.com/settleflow/settleflow/dashboard"
	"github.com/settleflow/settleflow/httpapi"
	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/portal"
	"github.com/settleflow/settleflow/ratelimit"
	"github.com/settleflow/settleflow/ratelimit/dblimit"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/storage"
	"github.com/settleflow/settleflow/storage/bunstore"
	"github.com/settleflow/settleflow/storage/postgres"
	"github.com/settleflow/settleflow/storage/sqlite"
	"github.com/settleflow/settleflow/webhook"
)

// StopGrace is the time [Server.Run] gives the engine and the webhook
// deliverer to hand over their work at shutdown, on top of
// Config.ShutdownGrace: the listeners are closed first, and a slow client
// holding them must not eat into it.
const StopGrace = 30 * time.Second

// ErrStarted is returned by [Server.Start] on a Server started already, and
// ErrStopped by Start on a Server stopped: a Server runs once.
var (
	ErrStarted = errors.New("server: already started")
	ErrStopped = errors.New("server: stopped; build another with New")
)

// Server is the whole settleflow server: the engine and its stages, the
// signed webhook deliverer, the HTTP API with health, metrics and the
// dashboard, rate limits, settlement on a chain and TLS. [New] builds it,
// [Server.Start] serves, [Server.Stop] stops; [Server.Run] does the three.
// Its methods are safe for concurrent use.
type Server struct {
	cfg Config
	log *zap.Logger

	store   *bunstore.Store
	limiter ratelimit.Limiter
	keys    *apikey.Manager
	lease   *storage.Lease
	chain   settler
	// sim is the embedded test chain (nil when test mode is over RPC).
	sim *settlement.Simulated
	// x402 is the sale over x402 (nil without Config.X402).
	x402     *x402Sale
	hooks    *webhook.Service
	engine   *settleflow.Engine
	dash     *dashboard.Handler
	portal   *portal.Handler
	handler  http.Handler
	reg      *prometheus.Registry
	refused  prometheus.Counter
	cert     tls.Certificate
	certFile string
	// firstKey is the secret of the test key made at the first start.
	firstKey string
	// closers release what New opened, last first.
	closers []func()

	mu      sync.Mutex
	started bool
	stopped bool
	// https, redirect and metrics are the listeners while started.
	https, redirect, metrics net.Listener
	servers                  []*http.Server
	// addrs are the listeners' addresses, for the accessors (nil before
	// Start); written before Start returns, read only after.
	addrs atomic.Pointer[addrs]
	// failed is closed when a listener fails; failure is its error.
	failOnce sync.Once
	failed   chan struct{}
	failure  error
}

// addrs are a started Server's addresses.
type addrs struct {
	// https is the HTTPS listener's address; public the host:port clients
	// are sent to (Config.PublicAddr, else https with an unspecified host
	// made localhost).
	https, public     string
	redirect, metrics string
}

// settler is the chain the engine settles on: over RPC or embedded.
type settler interface {
	settleflow.Settler
	Close() error
}

// New builds a Server from cfg: it checks cfg (a [*ConfigError] before
// anything is opened), opens the database (migrating it), the chains
// (checking each node's chain id against its configuration), the webhook
// deliverer, the engine, the API and the dashboard, and loads or makes the
// TLS certificate. On the first start (no API key yet) it makes a test key
// and writes it to Config.Output. It serves nothing and runs no stage until
// [Server.Start]. ctx bounds New only. If New fails, it has closed
// whatever it opened.
func New(ctx context.Context, cfg Config) (_ *Server, err error) {
	if cfg, err = cfg.withDefaults(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: cfg.Logger, failed: make(chan struct{})}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if err := s.openDatabase(ctx); err != nil {
		return nil, err
	}
	if err := s.openChain(ctx); err != nil {
		return nil, err
	}
	if err := s.openX402(ctx); err != nil {
		return nil, err
	}
	if err := s.build(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// openDatabase opens the store, the rate limiter and the API keys, and
// makes the first start's test key.
func (s *Server) openDatabase(ctx context.Context) (err error) {
	c := s.cfg
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return err
	}
	if c.Postgres != "" {
		s.store, err = postgres.Open(ctx, c.Postgres)
	} else {
		// Exclusively: a second server on the same directory fails here
		// instead of sharing it, and the store may serve reads of the
		// workflows it wrote last from memory.
		s.store, err = sqlite.Open(ctx, filepath.Join(c.DataDir, "settleflow.db"), sqlite.OpenOptions{Exclusive: true})
	}
	if err != nil {
		return err
	}
	s.onClose(func() { s.store.Close() })
	// One instance on SQLite limits in memory; instances sharing Postgres
	// share their limits there (docs/operating.md, "Running several instances").
	s.limiter = ratelimit.NewMemory()
	if c.Postgres != "" {
		if s.limiter, err = dblimit.New(ctx, s.store.DB()); err != nil {
			return err
		}
	}
	if s.keys, err = apikey.New(s.store.DB(), apikey.Options{Clock: s.cfg.Clock}); err != nil {
		return err
	}
	s.onClose(func() { s.keys.Close() })
	if err := s.keys.Migrate(ctx); err != nil {
		return err
	}
	// Remote products' tasks are kept in the database (issue 42): any
	// number of instances on it serve every worker, and a task a worker
	// holds outlives the instance that handed it out (docs/operating.md,
	// "Running several instances").
	return s.firstStartKey(ctx)
}

// firstStartKey makes a test key on the first start (no key exists yet)
// and writes it to Config.Output: the only time the secret is shown.
func (s *Server) firstStartKey(ctx context.Context) error {
	existing, err := s.keys.List(ctx)
	if err != nil || len(existing) > 0 {
		return err
	}
	k, secret, err := s.keys.Create(ctx, apikey.CreateParams{Environment: settleflow.Test, Name: "first start", Plan: apikey.Starter})
	if err != nil {
		return err
	}
	s.firstKey = secret
	fmt.Fprintf(s.cfg.Output, "created test API key %s (shown once, store it now):\n\n    %s\n\n", k.ID, secret)
	return nil
}

// openChain opens the settlement lease and the chains.
func (s *Server) openChain(ctx context.Context) error {
	c := s.cfg
	// One sender per operator: instances sharing the database settle
	// through one of them at a time, the holder of the settlement lease;
	// the others hand it their charges through the database (README,
	// "Running several instances"). On SQLite the lease is always held.
	s.lease = s.store.DB().Lease("settleflow: settlement sender", storage.LeaseOptions{Logger: s.log.Named("lease")})
	s.onClose(func() { s.lease.Close() })
	if c.Test != nil {
		// A testnet over RPC: shared by every instance that names it. Both
		// environments' chains are checked at start: the chain id each node
		// reports, against the configured one and the environment's kind.
		chain, err := settlement.New(ctx, settlement.Config{Test: c.Test, Live: c.Live, Logger: s.log.Named("settlement"), Lease: s.lease})
		if err != nil {
			return fmt.Errorf("settlement: %w", err)
		}
		s.chain = chain
		s.onClose(func() { chain.Close() })
		return nil
	}
	// The embedded chain lives in this process: instances sharing a
	// database cannot share it, and one instance asking another's chain
	// about a charge would find nothing and charge it again there. So only
	// one instance per database settles on an embedded chain.
	release, ok, err := s.store.DB().TryHold(ctx, "settleflow: embedded test chain")
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("another instance on this database settles test charges on its own embedded chain, and a charge must be settled on one chain only: run a single instance, or give every instance the same test chain (Config.Test; -test-rpc in the reference server)")
	}
	s.onClose(release)
	// The test chain is kept in the data directory: a restart continues it.
	sim, err := settlement.NewSimulated(ctx, settlement.SimulatedOptions{Logger: s.log.Named("settlement"), Live: c.Live,
		DataDir: filepath.Join(c.DataDir, "chain")})
	if err != nil {
		return fmt.Errorf("settlement: %w", err)
	}
	s.chain, s.sim = sim, sim
	s.onClose(func() { sim.Close() })
	return nil
}

// build makes the webhook deliverer, the engine, the API, the dashboard
// and the handler in front of them, and loads the certificate.
func (s *Server) build(ctx context.Context) error {
	c := s.cfg
	workerID, err := stableWorkerID(c.DataDir, c.Clock.Now())
	if err != nil {
		return err
	}
	if s.hooks, err = webhook.New(ctx, s.store.DB(), webhook.Config{Logger: s.log.Named("webhook"), ShortName: c.WebhookShortName,
		StrictTestURLs: c.WebhookStrictTestURLs, Owner: workerID, Retry: c.WebhookRetry, Clock: c.Clock}); err != nil {
		return fmt.Errorf("webhooks: %w", err)
	}
	var engineSettler settleflow.Settler = s.chain
	if s.x402 != nil && s.x402.funding != nil {
		engineSettler = s.x402.funding
	}
	if s.engine, err = settleflow.New(settleflow.Options{
		Store: s.store, Settler: engineSettler, Notifier: s.hooks, Products: c.Products, Logger: s.log.Named("engine"),
		WorkerID: workerID, Workers: c.Workers, ExecutionTimeout: c.ExecutionTimeout, TaskLease: c.TaskLease, SettlementLease: s.lease,
		TestFaucet: c.TestFaucet, Clock: c.Clock, FundsMaxAge: c.FundsMaxAge,
		// The webhook deliverer starts before the engine's stages and
		// stops after them.
		Services: []settleflow.Service{s.hooks},
	}); err != nil {
		return err
	}
	if engineSettler != s.chain {
		s.x402.funding.Attach(s.engine)
	}
	if s.portal, err = portal.New(ctx, portal.Options{Engine: s.engine, DB: s.store.DB(), Chain: portalChain(s.chain), BaseURL: s.URL,
		Explorers: c.Explorers, OperatorName: c.PortalOperatorName, OperatorLogo: c.PortalOperatorLogo, Logger: s.log.Named("portal"), Clock: c.Clock}); err != nil {
		return err
	}
	api, err := httpapi.New(httpapi.Options{
		Engine: s.engine, Keys: httpapi.APIKeys(s.keys), Limiter: s.limiter, Logger: s.log.Named("http"),
		LiveConfigured: func() bool { return s.chain.Configured(settleflow.Live) },
		RequestTimeout: c.RequestTimeout, AuthFailureWindows: authFailureWindows(c.AuthFailuresPerMinute),
		Now: c.Clock.Now, PortalSessions: s.portal.CreatePortalSession,
	})
	if err != nil {
		return err
	}
	if s.cert, s.certFile, err = loadOrCreateCert(c.DataDir, c.TLSCert, c.TLSKey); err != nil {
		return fmt.Errorf("tls: %w", err)
	}
	if s.dash, err = dashboard.New(ctx, dashboard.Options{Engine: s.engine, Keys: s.keys, Webhooks: s.hooks, DB: s.store.DB(),
		Explorers: c.Explorers, Logger: s.log.Named("dashboard"), Clock: c.Clock,
		Portal: dashboard.PortalOf(s.portal, s.store.DB()), CustomerChain: dashboard.ChainOf(s.chain)}); err != nil {
		return err
	}
	s.reg = prometheus.NewRegistry()
	s.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	hl := &health{engine: s.engine, hooks: s.hooks, maxLag: c.ReadyMaxLag, log: s.log.Named("health"), lease: s.lease, now: c.Clock.Now}
	if sh, ok := s.chain.(settlementHealth); ok {
		hl.settler = sh
	}
	s.reg.MustRegister(hl)
	s.reg.MustRegister(s.portal.Collectors()...)
	s.refused = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "settleflow_connections_refused_total", Help: "Connections closed at accept: over the per-address cap.",
	})
	s.reg.MustRegister(s.refused)
	s.handler = withHealth(hl, withDashboard(s.dash, withPortal(s.portal, instrument(s.reg, withX402(s.x402, api)))))
	return nil
}

// onClose adds f to what the Server closes at Stop (or a failed New).
func (s *Server) onClose(f func()) { s.closers = append(s.closers, f) }

// close runs the closers, last first.
func (s *Server) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}

// Start listens on the configured addresses, starts the webhook deliverer
// and the engine's stages, and serves; it returns once the Server serves.
// ctx bounds Start only: the Server runs until [Server.Stop]. If Start
// fails, it has stopped what it started (Stop still releases what New
// opened). A Server starts once: [ErrStarted], [ErrStopped].
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.stopped:
		return ErrStopped
	case s.started:
		return ErrStarted
	}
	if err := s.listen(); err != nil {
		s.closeListeners()
		return err
	}
	// The x402 handler names its resources after the URL, known now.
	err := s.startX402()
	var link string
	if err == nil {
		link, err = s.signInLink(ctx)
	}
	if err == nil {
		err = s.engine.Start(ctx) // and the webhook deliverer, first
	}
	if err != nil {
		s.closeListeners()
		return err
	}
	s.serve()
	s.started = true
	s.announce(link)
	return nil
}

// listen opens the listeners and makes their servers; the timeouts all
// derive from the request deadline, so that none of them cuts a request
// the API would still answer.
func (s *Server) listen() (err error) {
	c := s.cfg
	// read is the whole-request backstop: headers, then a body the API
	// bounds by its own request deadline already; write is counted from the
	// end of the headers: the request deadline plus time for an answer
	// written at the deadline to reach the client.
	read, write := c.ReadHeaderTimeout+c.RequestTimeout+5*time.Second, c.RequestTimeout+10*time.Second
	if s.https, err = net.Listen("tcp", c.Addr); err != nil {
		return err
	}
	a := &addrs{https: s.https.Addr().String(), public: publicHTTPS(c.PublicAddr, s.https.Addr())}
	s.servers = []*http.Server{{Handler: s.handler, TLSConfig: tlsConfig(s.cert), ReadHeaderTimeout: c.ReadHeaderTimeout,
		ReadTimeout: read, WriteTimeout: write, IdleTimeout: c.IdleTimeout, ErrorLog: zap.NewStdLog(s.log.Named("https"))}}
	if c.RedirectAddr != "" {
		if s.redirect, err = net.Listen("tcp", c.RedirectAddr); err != nil {
			return err
		}
		a.redirect = s.redirect.Addr().String()
		s.servers = append(s.servers, &http.Server{Handler: redirectToHTTPS(a.public),
			ReadHeaderTimeout: c.ReadHeaderTimeout, ReadTimeout: c.ReadHeaderTimeout + 5*time.Second, // the body is never read
			WriteTimeout: 10 * time.Second, IdleTimeout: c.IdleTimeout, ErrorLog: zap.NewStdLog(s.log.Named("http-redirect"))})
	}
	if c.MetricsAddr != "" {
		if s.metrics, err = net.Listen("tcp", c.MetricsAddr); err != nil {
			return err
		}
		a.metrics = s.metrics.Addr().String()
		s.servers = append(s.servers, &http.Server{Handler: metricsHandler(s.reg), ReadHeaderTimeout: c.ReadHeaderTimeout,
			WriteTimeout: write, IdleTimeout: c.IdleTimeout})
	}
	s.addrs.Store(a)
	return nil
}

// serve serves each listener on its server, in the order listen made them.
func (s *Server) serve() {
	max := s.cfg.MaxConnsPerAddr
	go s.watch(func() error { return s.servers[0].ServeTLS(limitPerAddr(s.https, max, s.refused), "", "") })
	i := 1
	if s.redirect != nil {
		srv := s.servers[i]
		go s.watch(func() error { return srv.Serve(limitPerAddr(s.redirect, max, s.refused)) })
		i++
	}
	if s.metrics != nil {
		srv := s.servers[i]
		go s.watch(func() error { return srv.Serve(s.metrics) })
	}
}

// watch runs serve and records its failure, the first one only.
func (s *Server) watch(serve func() error) {
	if err := serve(); !errors.Is(err, http.ErrServerClosed) {
		s.failOnce.Do(func() { s.failure = err; close(s.failed) })
	}
}

// closeListeners closes the listeners of a Start that failed.
func (s *Server) closeListeners() {
	for _, ln := range []net.Listener{s.https, s.redirect, s.metrics} {
		if ln != nil {
			ln.Close()
		}
	}
	s.https, s.redirect, s.metrics, s.servers = nil, nil, nil, nil
	s.addrs.Store(nil)
}

// signInLink is the dashboard sign-in link written at the first start, ""
// on any other.
func (s *Server) signInLink(ctx context.Context) (string, error) {
	if s.firstKey == "" {
		return "", nil
	}
	return s.dash.SignInLink(ctx, s.URL())
}

// announce logs the start and writes to Config.Output where charges go
// (never the operator's key), the address served, the sign-in link and
// the redirect.
func (s *Server) announce(link string) {
	out := s.cfg.Output
	s.log.Info("settleflow reference server listening",
		zap.String("https", "https://"+s.https.Addr().String()), zap.String("http", s.cfg.RedirectAddr),
		zap.String("cert", s.certFile), zap.Bool("live", s.chain.Configured(settleflow.Live)))
	if s.metrics != nil {
		s.log.Info("metrics listening", zap.String("addr", s.metrics.Addr().String()))
	}
	if cs, ok := s.chain.(interface {
		Chain(settleflow.Environment) (settlement.ChainInfo, bool)
	}); ok {
		for _, env := range []settleflow.Environment{settleflow.Test, settleflow.Live} {
			if ci, ok := cs.Chain(env); ok {
				fmt.Fprintf(out, "%s settlement: chain %d (%s), contract %s, token %s, operator %s, payee %s\n",
					env, ci.ChainID, ci.Network, ci.Contract, ci.Token, ci.Operator, ci.Payee)
			}
		}
	}
	fmt.Fprintf(out, "listening on https://%s (certificate %s)\n", s.https.Addr(), s.certFile)
	if link != "" {
		// Beside the first test key: the way into the dashboard.
		fmt.Fprintf(out, "dashboard: sign in at %s\n  (one use, within 15 minutes; `server dashboard link` prints another)\n", link)
	}
	s.announceX402()
	if s.redirect != nil {
		fmt.Fprintf(out, "redirecting http://%s to HTTPS\n", s.redirect.Addr())
	}
}

// Stop stops a Server gracefully and releases everything New opened: the
// listeners first, in-flight requests getting at most Config.ShutdownGrace
// (then their connections are closed); then the engine, whose executions
// in flight finish and are recorded, and the webhook deliverer, whose
// attempts in flight finish and are recorded. ctx bounds the whole: when
// it ends, work in flight is cut short — executions are canceled and their
// workflows released, attempts abandoned — and none of it is lost: what
// the API acknowledged is in the database, and the next start (of this
// data directory, or another instance on the database) takes it up. Stop
// returns ctx's error if it cut work short, and a listener's error if one
// failed while serving. Stopping a stopped Server does nothing; a Server
// stopped cannot start again.
func (s *Server) Stop(ctx context.Context) error {
	failure, cut := s.stop(ctx)
	return errors.Join(failure, cut)
}

// stop is Stop, the listener's failure and the cut apart.
func (s *Server) stop(ctx context.Context) (failure, cut error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil, nil
	}
	s.stopped = true
	if s.started {
		// Workers' long polls answer now rather than hold the listeners.
		s.engine.EndTaskClaims()
		shutdownServers(ctx, s.servers, s.cfg.ShutdownGrace, s.log)
		// The engine stops its stages, then the webhook deliverer.
		if err := s.engine.Stop(ctx); err != nil {
			s.log.Warn("engine stop cut work short; it resumes at the next start", zap.Error(err))
			cut = err
		}
		select {
		case <-s.failed:
			failure = s.failure
		default:
		}
	}
	s.close()
	s.log.Info("stopped")
	return failure, cut
}

// Run starts the Server, serves until ctx ends or a listener fails, then
// stops it: in-flight requests get Config.ShutdownGrace, and the engine and
// the webhook deliverer [StopGrace] more to hand over their work. It
// returns Start's error, or the failed listener's; nil after a shutdown
// asked for by ctx, also one that cut work short (logged: it resumes at the
// next start). The Server is stopped when Run returns.
func (s *Server) Run(ctx context.Context) error {
	if err := s.Start(ctx); err != nil {
		s.Stop(context.Background()) //nolint:errcheck // nothing started: it only closes
		return err
	}
	select {
	case <-ctx.Done():
		s.log.Info("shutting down: finishing in-flight requests")
	case <-s.failed:
		s.log.Error("a listener failed; shutting down", zap.Error(s.failure))
	}
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownGrace+StopGrace)
	defer cancel()
	failure, _ := s.stop(sctx)
	return failure
}

// shutdownServers lets in-flight requests finish for at most grace (less if
// ctx ends first), all servers at once, then closes whatever connections
// are left: a client trickling bytes cannot hold the shutdown past its
// grace.
func shutdownServers(ctx context.Context, servers []*http.Server, grace time.Duration, log *zap.Logger) {
	ctx, cancel := context.WithTimeout(ctx, grace)
	defer cancel()
	var wg sync.WaitGroup
	for _, srv := range servers {
		wg.Go(func() {
			if err := srv.Shutdown(ctx); err != nil {
				log.Warn("server shutdown: grace period over; closing the remaining connections", zap.Error(err))
				srv.Close()
			}
		})
	}
	wg.Wait()
}

// stableWorkerID is the engine's lease owner, kept in the data directory: a
// server restarted after a crash takes its leased work back at once. (One
// server per data directory: the listeners' ports enforce that too.)
func stableWorkerID(dataDir string, now time.Time) (string, error) {
	path := filepath.Join(dataDir, "worker-id")
	if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	id := ids.NewWorker(now)
	return id, os.WriteFile(path, []byte(id+"\n"), 0o600)
}
