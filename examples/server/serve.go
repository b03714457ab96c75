package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/dashboard"
	"github.com/settleflow/settleflow/httpapi"
	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/ratelimit"
	"github.com/settleflow/settleflow/ratelimit/dblimit"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/storage"
	"github.com/settleflow/settleflow/webhook"
	"github.com/settleflow/settleflow/wire"
)

// engineStopGrace is the engine's and the webhook sender's own time to hand
// over their work at shutdown, after the listeners are closed: a slow client
// holding the HTTP shutdown must not eat into it.
const engineStopGrace = 30 * time.Second

// timeouts are the listeners' bounds, all derived from the request deadline
// so that none of them cuts a request the API would still answer.
type timeouts struct {
	// request is the API's deadline per request, body read included.
	request time.Duration
	// readHeader bounds reading a request's headers (and the TLS handshake).
	readHeader time.Duration
	// idle bounds a keep-alive connection between requests.
	idle time.Duration
	// shutdown is how long in-flight requests get to finish at shutdown
	// before their connections are closed.
	shutdown time.Duration
}

// read is the whole-request backstop: headers, then a body the API bounds by
// its own request deadline already.
func (t timeouts) read() time.Duration { return t.readHeader + t.request + 5*time.Second }

// write is counted from the end of the headers: the request deadline plus
// time for an answer written at the deadline to reach the client.
func (t timeouts) write() time.Duration { return t.request + 10*time.Second }

func serve(ctx context.Context, c config, stdout io.Writer) error {
	log, err := newLogger(c.logLevel, c.logFormat)
	if err != nil {
		return err
	}
	defer log.Sync() //nolint:errcheck

	store, err := openStore(ctx, c)
	if err != nil {
		return err
	}
	defer store.Close()
	// One instance on SQLite limits in memory; instances sharing Postgres
	// share their limits there (README, "Running several instances").
	var limiter ratelimit.Limiter = ratelimit.NewMemory()
	if c.postgres != "" {
		if limiter, err = dblimit.New(ctx, store.DB()); err != nil {
			return err
		}
	}
	keys, err := openKeys(ctx, store.DB())
	if err != nil {
		return err
	}
	defer keys.Close()
	firstStart, err := firstStartKey(ctx, keys, stdout)
	if err != nil {
		return err
	}

	live, err := c.live.chainConfig("live")
	if err != nil {
		return usageError{err}
	}
	test, err := c.test.chainConfig("test")
	if err != nil {
		return usageError{err}
	}
	var chain interface {
		settleflow.Settler
		Close() error
	}
	// One sender per operator: instances sharing the database settle
	// through one of them at a time, the holder of the settlement lease;
	// the others hand it their charges through the database (README,
	// "Running several instances"). On SQLite the lease is always held.
	lease := store.DB().Lease("settleflow: settlement sender", storage.LeaseOptions{Logger: log.Named("lease")})
	defer lease.Close()
	if test != nil {
		// A testnet over RPC: shared by every instance that names it. Both
		// environments' chains are checked at start: the chain id each node
		// reports, against the configured one and the environment's kind.
		s, err := settlement.New(ctx, settlement.Config{Test: test, Live: live, Logger: log.Named("settlement"), Lease: lease})
		if err != nil {
			return fmt.Errorf("settlement: %w", err)
		}
		chain = s
	} else {
		// The embedded chain lives in this process: instances sharing a
		// database cannot share it, and one instance asking another's chain
		// about a charge would find nothing and charge it again there. So
		// only one instance per database settles on an embedded chain.
		release, ok, err := store.DB().TryHold(ctx, "settleflow: embedded test chain")
		if err != nil {
			return err
		}
		if !ok {
			return errors.New("another instance on this database settles test charges on its own embedded chain, and a charge must be settled on one chain only: run a single instance, or give every instance the same test chain (-test-rpc)")
		}
		defer release()
		// The test chain is kept in the data directory: a restart continues it.
		sim, err := settlement.NewSimulated(ctx, settlement.SimulatedOptions{Logger: log.Named("settlement"), Live: live,
			DataDir: filepath.Join(c.dataDir, "chain")})
		if err != nil {
			return fmt.Errorf("settlement: %w", err)
		}
		chain = sim
	}
	defer chain.Close()

	workerID, err := stableWorkerID(c.dataDir)
	if err != nil {
		return err
	}
	hooks, err := webhook.New(ctx, store.DB(), webhook.Config{Logger: log.Named("webhook"), ShortName: c.shortName,
		StrictTestURLs: c.strictTestURLs, Owner: workerID, Retry: c.webhookRetry})
	if err != nil {
		return fmt.Errorf("webhooks: %w", err)
	}
	products, err := demoProducts()
	if err != nil {
		return err
	}
	engine, err := settleflow.New(settleflow.Options{
		Store: store, Settler: chain, Notifier: hooks, Products: products, Logger: log.Named("engine"),
		WorkerID: workerID, Workers: c.workers, ExecutionTimeout: c.executionTimeout, SettlementLease: lease,
		TestFaucet: testFaucet(c.testFaucet),
	})
	if err != nil {
		return err
	}
	api, err := httpapi.New(httpapi.Options{
		Engine:         engine,
		Keys:           httpapi.APIKeys(keys),
		Limiter:        limiter,
		Logger:         log.Named("http"),
		LiveConfigured: func() bool { return chain.Configured(settleflow.Live) },
		RequestTimeout: c.timeouts.request,
		// A non-positive flag turns the limit off: the window admits
		// (practically) every failure.
		AuthFailureWindows: authFailureWindows(c.authFailuresPerMinute),
	})
	if err != nil {
		return err
	}
	cert, certFile, err := loadOrCreateCert(c.dataDir, c.tlsCert, c.tlsKey)
	if err != nil {
		return fmt.Errorf("tls: %w", err)
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	hl := &health{engine: engine, hooks: hooks, maxLag: c.readyMaxLag, log: log.Named("health"), lease: lease}
	reg.MustRegister(hl)
	explorers := map[settleflow.Environment]string{}
	for env, u := range map[settleflow.Environment]string{settleflow.Test: c.testExplorer, settleflow.Live: c.liveExplorer} {
		if u == "" {
			continue
		}
		if !strings.HasPrefix(u, "https://") {
			return usageError{fmt.Errorf("-%s-explorer %q: want an https:// URL prefix", env, u)}
		}
		explorers[env] = u
	}
	dash, err := dashboard.New(ctx, dashboard.Options{Engine: engine, Keys: keys, Webhooks: hooks, DB: store.DB(),
		Explorers: explorers, Logger: log.Named("dashboard")})
	if err != nil {
		return err
	}
	handler := withHealth(hl, withDashboard(dash, instrument(reg, api)))
	refused := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "settleflow_connections_refused_total", Help: "Connections closed at accept: over the per-address cap.",
	})
	reg.MustRegister(refused)
	t := c.timeouts

	httpsLn, err := net.Listen("tcp", c.httpsAddr)
	if err != nil {
		return err
	}
	httpsSrv := &http.Server{
		Handler:           handler,
		TLSConfig:         tlsConfig(cert),
		ReadHeaderTimeout: t.readHeader,
		ReadTimeout:       t.read(),
		WriteTimeout:      t.write(),
		IdleTimeout:       t.idle,
		ErrorLog:          zap.NewStdLog(log.Named("https")),
	}
	servers := []*http.Server{httpsSrv}
	errc := make(chan error, 3)
	var redirectAddr string
	go func() { errc <- httpsSrv.ServeTLS(limitPerAddr(httpsLn, c.maxConnsPerAddr, refused), "", "") }()
	if c.httpAddr != "" {
		ln, err := net.Listen("tcp", c.httpAddr)
		if err != nil {
			return err
		}
		redirectAddr = ln.Addr().String()
		srv := &http.Server{
			Handler:           redirectToHTTPS(publicHTTPS(c.publicHTTPS, httpsLn.Addr())),
			ReadHeaderTimeout: t.readHeader,
			ReadTimeout:       t.readHeader + 5*time.Second, // the body is never read
			WriteTimeout:      10 * time.Second,
			IdleTimeout:       t.idle,
			ErrorLog:          zap.NewStdLog(log.Named("http-redirect")),
		}
		servers = append(servers, srv)
		go func() { errc <- srv.Serve(limitPerAddr(ln, c.maxConnsPerAddr, refused)) }()
	}
	if c.metricsAddr != "" {
		ln, err := net.Listen("tcp", c.metricsAddr)
		if err != nil {
			return err
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: t.readHeader, WriteTimeout: t.write(), IdleTimeout: t.idle}
		servers = append(servers, srv)
		go func() { errc <- srv.Serve(ln) }()
		log.Info("metrics listening", zap.String("addr", ln.Addr().String()))
	}
	if err := hooks.Start(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	if err := engine.Start(ctx); err != nil {
		return err
	}
	log.Info("settleflow reference server listening",
		zap.String("https", "https://"+httpsLn.Addr().String()), zap.String("http", c.httpAddr),
		zap.String("cert", certFile), zap.Bool("live", chain.Configured(settleflow.Live)))
	// Where charges go, said before serving (never the operator's key).
	if cs, ok := chain.(interface {
		Chain(settleflow.Environment) (settlement.ChainInfo, bool)
	}); ok {
		for _, env := range []settleflow.Environment{settleflow.Test, settleflow.Live} {
			if ci, ok := cs.Chain(env); ok {
				fmt.Fprintf(stdout, "%s settlement: chain %d (%s), contract %s, token %s, operator %s, payee %s\n",
					env, ci.ChainID, ci.Network, ci.Contract, ci.Token, ci.Operator, ci.Payee)
			}
		}
	}
	fmt.Fprintf(stdout, "listening on https://%s (certificate %s)\n", httpsLn.Addr(), certFile)
	if firstStart {
		// Beside the first test key: the way into the dashboard.
		link, err := dash.SignInLink(ctx, "https://"+publicHTTPS(c.publicHTTPS, httpsLn.Addr()))
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "dashboard: sign in at %s\n  (one use, within 15 minutes; `server dashboard link` prints another)\n", link)
	}
	if len(servers) > 1 && c.httpAddr != "" {
		fmt.Fprintf(stdout, "redirecting http://%s to HTTPS\n", redirectAddr)
	}

	var serveErr error
	select {
	case <-ctx.Done():
		log.Info("shutting down: finishing in-flight requests")
	case serveErr = <-errc:
		log.Error("a listener failed; shutting down", zap.Error(serveErr))
	}
	shutdownServers(servers, t.shutdown, log)
	// The engine and the webhook sender get their own time, whatever the
	// listeners took.
	ectx, cancel := context.WithTimeout(context.Background(), engineStopGrace)
	defer cancel()
	if err := engine.Stop(ectx); err != nil {
		log.Warn("engine stop cut work short; it resumes at the next start", zap.Error(err))
	}
	if err := hooks.Stop(ectx); err != nil {
		log.Warn("webhook stop cut deliveries short; they resume at the next start", zap.Error(err))
	}
	log.Info("stopped")
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return nil
}

// shutdownServers lets in-flight requests finish for at most grace, all
// servers at once, then closes whatever connections are left: a client
// trickling bytes cannot hold the shutdown past its grace.
func shutdownServers(servers []*http.Server, grace time.Duration, log *zap.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Shutdown(ctx); err != nil {
				log.Warn("server shutdown: grace period over; closing the remaining connections", zap.Error(err))
				s.Close()
			}
		}()
	}
	wg.Wait()
}

// testFaucet is Options.TestFaucet for the -test-faucet flag: the flag's 0
// (off) is the engine's negative amount (its 0 means the default).
func testFaucet(flagValue int64) int64 {
	if flagValue == 0 {
		return -1
	}
	return flagValue
}

// authFailureWindows is the per-address budget of failed authentications;
// a non-positive number turns the limit off.
func authFailureWindows(perMinute int) []ratelimit.Window {
	if perMinute <= 0 {
		perMinute = math.MaxInt32
	}
	return []ratelimit.Window{ratelimit.Minute(perMinute)}
}

// publicHTTPS is the host:port the 308 sends clients to: the -public-https
// flag, else the HTTPS listener's address, an unspecified host (0.0.0.0, ::)
// becoming localhost. Never the request's Host header, which a client chooses.
func publicHTTPS(flagValue string, ln net.Addr) string {
	if flagValue != "" {
		return flagValue
	}
	host, port, err := net.SplitHostPort(ln.String())
	if err != nil {
		return ln.String()
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
}

// redirectToHTTPS answers every plain-HTTP request with 308 to the same path
// and query on httpsAddr, so the method and body are kept, with the API's
// error envelope as the body. It never reads the body, so it closes the
// connection rather than let net/http drain it.
func redirectToHTTPS(httpsAddr string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.EscapedPath()
		if !strings.HasPrefix(path, "/") {
			path = "/" // "OPTIONS *" and the like
		}
		target := "https://" + httpsAddr + path
		if r.URL.RawQuery != "" {
			target += "?" + r.URL.RawQuery
		}
		w.Header().Set("Location", target)
		w.Header().Set("Connection", "close")
		httpapi.WriteError(w, r, &httpapi.Error{Status: http.StatusPermanentRedirect, Type: httpapi.TypeInvalidRequest,
			Code: wire.CodeHTTPSRequired, Message: "Use HTTPS: " + target})
	})
}

// instrument counts requests and their latency for Prometheus. Every label
// takes a value from a closed set, so that no client can add series: known
// methods (others are "other"), the API's route patterns (any other path is
// "other") and the status codes the server writes.
func instrument(reg *prometheus.Registry, next http.Handler) http.Handler {
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "settleflow_http_requests_total", Help: "HTTP requests by method, route and status code.",
	}, []string{"method", "route", "code"})
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "settleflow_http_request_duration_seconds", Help: "HTTP request latency by method and route.", Buckets: prometheus.DefBuckets,
	}, []string{"method", "route"})
	reg.MustRegister(requests, latency)
	opts := []promhttp.Option{
		promhttp.WithLabelFromRequest("method", methodLabel),
		promhttp.WithLabelFromRequest("route", routeLabel),
	}
	return promhttp.InstrumentHandlerCounter(requests, promhttp.InstrumentHandlerDuration(latency, next, opts...), opts...)
}

// methodLabel is the method as sent if it is one the API could answer, else
// "other". (promhttp's own method label calls the rest "unknown" and
// lower-cases the known ones; this keeps the values the metric had.)
func methodLabel(r *http.Request) string {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return r.Method
	}
	return "other"
}

// routeLabel is the API route pattern the path matches, else "other".
func routeLabel(r *http.Request) string {
	switch p := r.URL.Path; {
	case p == "/v1/workflows", p == "/v1/quotes", p == "/v1/products", p == "/v1/events", p == "/v1/refunds", p == "/v1/margins", p == "/v1/openapi.json":
		return p
	case oneSegment(p, "/v1/workflows/", "/cancel"):
		return "/v1/workflows/{id}/cancel"
	case oneSegment(p, "/v1/workflows/", "/refunds"):
		return "/v1/workflows/{id}/refunds"
	case oneSegment(p, "/v1/test_helpers/customers/", "/fund"):
		return "/v1/test_helpers/customers/{customerId}/fund"
	case oneSegment(p, "/v1/events/", ""):
		return "/v1/events/{id}"
	case oneSegment(p, "/v1/workflows/", ""):
		return "/v1/workflows/{id}"
	case oneSegment(p, "/v1/products/", ""):
		return "/v1/products/{name}"
	case oneSegment(p, "/v1/refunds/", ""):
		return "/v1/refunds/{id}"
	case oneSegment(p, "/v1/customers/", ""):
		return "/v1/customers/{customerId}"
	}
	return "other"
}

// oneSegment reports whether p is prefix, one non-empty path segment, then
// suffix.
func oneSegment(p, prefix, suffix string) bool {
	if !strings.HasPrefix(p, prefix) || !strings.HasSuffix(p, suffix) || len(p) <= len(prefix)+len(suffix) {
		return false
	}
	return !strings.Contains(p[len(prefix):len(p)-len(suffix)], "/")
}

// chainConfig is the environment's chain configuration, nil if its flags
// are not given.
func (l chainFlags) chainConfig(env string) (*settlement.ChainConfig, error) {
	if l.rpc == "" {
		if l.contract != "" || l.chainID != 0 || l.keyFile != "" || l.keystore != "" {
			return nil, fmt.Errorf("%s settlement needs -%s-rpc as well", env, env)
		}
		return nil, nil
	}
	if l.chainID == 0 || !common.IsHexAddress(l.contract) || (l.keyFile == "" && l.keystore == "") || l.secretFile == "" {
		return nil, fmt.Errorf("%s settlement needs -%s-chain-id, -%s-contract, -%s-customer-ref-secret-file and -%s-key-file or -%s-keystore", env, env, env, env, env, env)
	}
	secret, err := readSecretFile(l.secretFile)
	if err != nil {
		return nil, fmt.Errorf("-%s-customer-ref-secret-file: %w", env, err)
	}
	cc := &settlement.ChainConfig{
		RPCURL: l.rpc, ChainID: l.chainID, Contract: common.HexToAddress(l.contract),
		KeyFile: l.keyFile, KeystoreFile: l.keystore, KeystorePasswordFile: l.keystorePassFile,
		Confirmations: l.confirmations, CustomerRefSecret: secret, FaucetKeyFile: l.faucetKeyFile,
	}
	for flagName, v := range map[string]struct {
		s   string
		dst *common.Address
	}{"-" + env + "-token": {l.token, &cc.Token}, "-" + env + "-payee": {l.payee, &cc.Payee}} {
		if v.s == "" {
			continue
		}
		if !common.IsHexAddress(v.s) {
			return nil, fmt.Errorf("%s is not an address", flagName)
		}
		*v.dst = common.HexToAddress(v.s)
	}
	return cc, nil
}

// readSecretFile reads a customer reference secret: hex, at least
// settlement.MinCustomerRefSecret bytes.
func readSecretFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	secret, err := hex.DecodeString(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(b)), "0x")))
	if err != nil || len(secret) < settlement.MinCustomerRefSecret {
		return nil, fmt.Errorf("%s does not hold a hex secret of at least %d bytes", path, settlement.MinCustomerRefSecret)
	}
	return secret, nil
}

// stableWorkerID is the engine's lease owner, kept in the data directory: a
// server restarted after a crash takes its leased work back at once. (One
// server per data directory: the listeners' ports enforce that too.)
func stableWorkerID(dataDir string) (string, error) {
	path := filepath.Join(dataDir, "worker-id")
	if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	id := ids.NewWorker()
	return id, os.WriteFile(path, []byte(id+"\n"), 0o600)
}
