package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/settleflow/settleflow"
	// As sfserver: the tests call their running server "server".
	sfserver "github.com/settleflow/settleflow/server"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/webhook"
)

// serve runs the reference server until ctx ends: the server package,
// configured from the flags, selling the demo products.
func serve(ctx context.Context, c config, stdout io.Writer) error {
	log, err := newLogger(c.logLevel, c.logFormat)
	if err != nil {
		return err
	}
	defer log.Sync() //nolint:errcheck
	cfg, err := c.serverConfig()
	if err != nil {
		return err
	}
	cfg.Logger, cfg.Output = log, stdout
	srv, err := sfserver.New(ctx, cfg)
	if err != nil {
		return err
	}
	// The products kept in the database (the products commands) join
	// the catalogue before the server starts, and follow it while it runs.
	follow, release, err := followCatalog(ctx, srv.DB(), c.postgres != "", cfg.Products)
	if err != nil {
		srv.Stop(context.Background()) //nolint:errcheck // not started: it only closes
		return err
	}
	defer release()
	fctx, cancel := context.WithCancel(ctx)
	followed := make(chan struct{})
	go func() { defer close(followed); follow(fctx, log.Named("products")) }()
	defer func() { cancel(); <-followed }()
	err = srv.Run(ctx)
	if err != nil && strings.HasPrefix(err.Error(), sfserver.X402ProductsError) {
		// Said as the flag that named the product.
		return errors.New("-x402-products: " + strings.TrimPrefix(err.Error(), sfserver.X402ProductsError))
	}
	return err
}

// timeouts are the listeners' bounds: sfserver.Config's RequestTimeout,
// ReadHeaderTimeout, IdleTimeout and ShutdownGrace.
type timeouts struct {
	request, readHeader, idle, shutdown time.Duration
}

// serverConfig is the server's Config for the flags, with the demo
// products; a flag's value the server would refuse is a usage error naming
// the flag.
func (c config) serverConfig() (sfserver.Config, error) {
	live, err := c.live.chainConfig("live")
	if err != nil {
		return sfserver.Config{}, usageError{err}
	}
	test, err := c.test.chainConfig("test")
	if err != nil {
		return sfserver.Config{}, usageError{err}
	}
	explorers := map[settleflow.Environment]string{}
	for env, u := range map[settleflow.Environment]string{settleflow.Test: c.testExplorer, settleflow.Live: c.liveExplorer} {
		if u == "" {
			continue
		}
		if !strings.HasPrefix(u, "https://") {
			return sfserver.Config{}, usageError{fmt.Errorf("-%s-explorer %q: want an https:// URL prefix", env, u)}
		}
		explorers[env] = u
	}
	// The server's 0 is its default: these flags' own 0 is no value.
	if err := need(c.workers >= 0 && c.readyMaxLag > 0 && c.fundsMaxAge >= 0, "-workers and -funds-max-age must not be negative, -ready-max-lag must be positive"); err != nil {
		return sfserver.Config{}, err
	}
	if (c.tlsCert == "") != (c.tlsKey == "") {
		return sfserver.Config{}, errors.New("tls: -tls-cert and -tls-key go together")
	}
	var remote []string
	if c.remote != "" {
		remote = strings.Split(c.remote, ",")
	}
	products, err := demoProducts(remote...)
	if err != nil {
		return sfserver.Config{}, err
	}
	if c.productsFile != "" {
		if err := loadProductsFile(c.productsFile, products); err != nil {
			return sfserver.Config{}, err
		}
	}
	x402, err := c.x402.config()
	if err != nil {
		return sfserver.Config{}, err
	}
	if x402 != nil && c.x402.wait >= c.timeouts.request {
		return sfserver.Config{}, usageError{fmt.Errorf("-x402-wait %v: want less than -request-timeout (%v): the paid request is answered within it", c.x402.wait, c.timeouts.request)}
	}
	if x402 != nil && x402.Environment == settleflow.Live && live == nil {
		return sfserver.Config{}, usageError{errors.New("-x402-env live needs live settlement: -live-rpc, -live-chain-id, -live-contract, ... (see -h)")}
	}
	return sfserver.Config{
		Products: products, X402: x402, DataDir: c.dataDir, Postgres: c.postgres,
		Addr: c.httpsAddr, RedirectAddr: c.httpAddr, PublicAddr: c.publicHTTPS, MetricsAddr: c.metricsAddr,
		TLSCert: c.tlsCert, TLSKey: c.tlsKey, Test: test, Live: live, TestFaucet: zeroIsOff(c.testFaucet),
		Workers: c.workers, ExecutionTimeout: c.executionTimeout, TaskLease: c.taskLease,
		WebhookShortName: c.shortName, WebhookStrictTestURLs: c.strictTestURLs, WebhookRetry: c.webhookRetry,
		Explorers: explorers, PortalOperatorName: c.portalName, PortalOperatorLogo: c.portalLogo,
		RequestTimeout: c.timeouts.request, ReadHeaderTimeout: c.timeouts.readHeader, IdleTimeout: c.timeouts.idle,
		ShutdownGrace: c.timeouts.shutdown, ReadyMaxLag: c.readyMaxLag, FundsMaxAge: noBound(c.fundsMaxAge),
		MaxConnsPerAddr: zeroIsOff(c.maxConnsPerAddr), AuthFailuresPerMinute: zeroIsOff(c.authFailuresPerMinute),
	}, nil
}

// zeroIsOff is the server's value for a flag whose 0 turns a limit off:
// the server's negative (its 0 means the default).
func zeroIsOff[T int | int64](flagValue T) T {
	if flagValue == 0 {
		return -1
	}
	return flagValue
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

// parseRetrySchedule reads -webhook-retry-schedule: comma-separated
// durations, none negative, at least one.
func parseRetrySchedule(v string) (webhook.RetryPolicy, error) {
	var sched []time.Duration
	for _, part := range strings.Split(v, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil || d < 0 {
			return webhook.RetryPolicy{}, fmt.Errorf("%q is not a duration of zero or more, such as 0s, 5s or 30m", strings.TrimSpace(part))
		}
		sched = append(sched, d)
	}
	return webhook.RetryPolicy{Schedule: sched, Jitter: webhook.DefaultJitter}, nil
}

// noBound is a duration flag's 0 ("no bound") as the library's options say
// it: negative (their 0 is the default).
func noBound(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}
