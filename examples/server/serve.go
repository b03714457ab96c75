package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/httpapi"
	"github.com/settleflow/settleflow/ratelimit"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/webhook"
)

// shutdownGrace bounds a graceful shutdown: in-flight requests (30 s
// deadline each) finish, then the engine hands over its work.
const shutdownGrace = 40 * time.Second

func serve(ctx context.Context, c config, stdout io.Writer) error {
	log, err := newLogger(c.logLevel)
	if err != nil {
		return err
	}
	defer log.Sync() //nolint:errcheck

	store, err := openStore(ctx, c.dataDir)
	if err != nil {
		return err
	}
	defer store.Close()
	keys, err := openKeys(ctx, store.DB())
	if err != nil {
		return err
	}
	defer keys.Close()
	if err := firstStartKey(ctx, keys, stdout); err != nil {
		return err
	}

	live, err := c.live.chainConfig()
	if err != nil {
		return usageError{err}
	}
	chain, err := settlement.NewSimulated(ctx, settlement.SimulatedOptions{Logger: log.Named("settlement"), Live: live})
	if err != nil {
		return fmt.Errorf("settlement: %w", err)
	}
	defer chain.Close()

	hooks, err := webhook.New(ctx, store.DB(), webhook.Config{Logger: log.Named("webhook"), ShortName: c.shortName, StrictTestURLs: c.strictTestURLs})
	if err != nil {
		return fmt.Errorf("webhooks: %w", err)
	}
	products, err := demoProducts()
	if err != nil {
		return err
	}
	workerID, err := stableWorkerID(c.dataDir)
	if err != nil {
		return err
	}
	engine, err := settleflow.New(settleflow.Options{
		Store: store, Settler: chain, Notifier: hooks, Products: products, Logger: log.Named("engine"),
		WorkerID: workerID,
	})
	if err != nil {
		return err
	}
	api, err := httpapi.New(httpapi.Options{
		Engine:         engine,
		Keys:           httpapi.APIKeys(keys),
		Limiter:        ratelimit.NewMemory(),
		Logger:         log.Named("http"),
		LiveConfigured: func() bool { return chain.Configured(settleflow.Live) },
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
	handler := instrument(reg, api)

	httpsLn, err := net.Listen("tcp", c.httpsAddr)
	if err != nil {
		return err
	}
	httpsSrv := &http.Server{
		Handler:           handler,
		TLSConfig:         tlsConfig(cert),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          zap.NewStdLog(log.Named("https")),
	}
	servers := []*http.Server{httpsSrv}
	errc := make(chan error, 3)
	var redirectAddr string
	go func() { errc <- httpsSrv.ServeTLS(httpsLn, "", "") }()
	if c.httpAddr != "" {
		ln, err := net.Listen("tcp", c.httpAddr)
		if err != nil {
			return err
		}
		redirectAddr = ln.Addr().String()
		srv := &http.Server{Handler: redirectToHTTPS(httpsLn.Addr().String()), ReadHeaderTimeout: 10 * time.Second, ErrorLog: zap.NewStdLog(log.Named("http-redirect"))}
		servers = append(servers, srv)
		go func() { errc <- srv.Serve(ln) }()
	}
	if c.metricsAddr != "" {
		ln, err := net.Listen("tcp", c.metricsAddr)
		if err != nil {
			return err
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
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
	fmt.Fprintf(stdout, "listening on https://%s (certificate %s)\n", httpsLn.Addr(), certFile)
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
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	for _, s := range servers {
		if err := s.Shutdown(sctx); err != nil {
			log.Warn("server shutdown", zap.Error(err))
		}
	}
	if err := engine.Stop(sctx); err != nil {
		log.Warn("engine stop cut work short; it resumes at the next start", zap.Error(err))
	}
	if err := hooks.Stop(sctx); err != nil {
		log.Warn("webhook stop cut deliveries short; they resume at the next start", zap.Error(err))
	}
	log.Info("stopped")
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return nil
}

// redirectToHTTPS answers every plain-HTTP request with 308 to the same path
// on the HTTPS address, so the method and body are kept.
func redirectToHTTPS(httpsAddr string) http.Handler {
	_, port, _ := net.SplitHostPort(httpsAddr)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if host == "" {
			host = "127.0.0.1"
		}
		target := "https://" + net.JoinHostPort(host, port) + r.URL.RequestURI()
		w.Header().Set("Location", target)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusPermanentRedirect)
		fmt.Fprintf(w, `{"error":{"type":"invalid_request_error","code":"https_required","message":"Use HTTPS: %s"}}`+"\n", target)
	})
}

// instrument counts requests and their latency for Prometheus.
func instrument(reg *prometheus.Registry, next http.Handler) http.Handler {
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "settleflow_http_requests_total", Help: "HTTP requests by method and status.",
	}, []string{"method", "status"})
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "settleflow_http_request_duration_seconds", Help: "HTTP request latency.", Buckets: prometheus.DefBuckets,
	}, []string{"method"})
	reg.MustRegister(requests, latency)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		requests.WithLabelValues(r.Method, strconv.Itoa(rec.status)).Inc()
		latency.WithLabelValues(r.Method).Observe(time.Since(start).Seconds())
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (l liveFlags) chainConfig() (*settlement.ChainConfig, error) {
	if l.rpc == "" {
		if l.contract != "" || l.chainID != 0 || l.keyFile != "" || l.keystore != "" {
			return nil, errors.New("live settlement needs -live-rpc as well")
		}
		return nil, nil
	}
	if l.chainID == 0 || !common.IsHexAddress(l.contract) || (l.keyFile == "" && l.keystore == "") {
		return nil, errors.New("live settlement needs -live-chain-id, -live-contract and -live-key-file or -live-keystore")
	}
	cc := &settlement.ChainConfig{
		RPCURL: l.rpc, ChainID: l.chainID, Contract: common.HexToAddress(l.contract),
		KeyFile: l.keyFile, KeystoreFile: l.keystore, KeystorePasswordFile: l.keystorePassFile,
		Confirmations: l.confirmations,
	}
	for flagName, v := range map[string]struct {
		s   string
		dst *common.Address
	}{"-live-token": {l.token, &cc.Token}, "-live-payee": {l.payee, &cc.Payee}} {
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

// stableWorkerID is the engine's lease owner, kept in the data directory: a
// server restarted after a crash takes its leased work back at once. (One
// server per data directory: the listeners' ports enforce that too.)
func stableWorkerID(dataDir string) (string, error) {
	path := filepath.Join(dataDir, "worker-id")
	if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	var buf [8]byte
	if _, err := rand.Read(buf[:]); err != nil {
		return "", err
	}
	id := "server_" + hex.EncodeToString(buf[:])
	return id, os.WriteFile(path, []byte(id+"\n"), 0o600)
}
