package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/params"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/settlement/contracts/bindings"
	"github.com/settleflow/settleflow/x402"
)

// X402Config sells products to programs that pay over HTTP 402 (x402
// version 2, the exact scheme: docs/agents.md, "Selling to agents"). The
// handler is mounted at /x402/ of the server's URL: an agent POSTs
// /x402/workflows with {"product", "payload"} and no API key, is answered
// 402 with the price, and pays by retrying with a signed EIP-3009
// transfer to the collector; the server submits it, deposits the amount
// into the wallet's customer balance (customer cus_x402_<wallet>) and
// creates the workflow, charged and settled as any other.
type X402Config struct {
	// Products are the products for sale over x402. Required (at least
	// one). Which pricing models a scheme can sell is x402.New's to say:
	// a product it refuses (or one not in the catalogue) fails
	// [Server.Start] with x402's error.
	Products []string
	// Environment is where the workflows sold run and settle: test
	// (default) or live. Live is never the default: it must be asked for,
	// and Config.Live configured.
	Environment settleflow.Environment
	// CollectorKey (or CollectorKeyFile, a hex private key as
	// go-ethereum's crypto.SaveECDSA writes it) is the collector's: the
	// account the payments go to (payTo), which submits each payment and
	// deposits it into the paying wallet's balance, paying the gas. It
	// needs the chain's native currency, and must be a key of its own:
	// never the settlement operator's (whose nonces the settler owns), the
	// payee's or the test faucet's. Required on a chain over RPC. On the
	// embedded test chain, none given, a collector key is made at the
	// first start and kept in DataDir/x402-collector.key (mode 0600); on
	// that chain the collector is given 10 ETH by the test faucet at New
	// whenever it holds less than 1, before any stage runs.
	CollectorKey     *ecdsa.PrivateKey
	CollectorKeyFile string
	// AccessSecretFile holds the secret (hex, at least 32 bytes) that keys
	// the access tokens with which a paying wallet reads its workflow
	// later; rotating it revokes them all. Made (32 random bytes, mode
	// 0600) if absent. Default DataDir/x402-access-secret.
	AccessSecretFile string
	// Wait bounds how long a paid create waits for the workflow's outcome
	// before it answers (0, the default: answer once created, with an
	// access token to read the outcome later). It must be shorter than
	// Config.RequestTimeout; what is left of the request's deadline
	// bounds the wait for the payment's deposit to be applied.
	Wait time.Duration
}

// Embedded test chain: what the collector is given, and the level below
// which it is given it again; what the test buyer wallet holds.
var (
	collectorGas    = new(big.Int).Mul(big.NewInt(10), big.NewInt(params.Ether))
	collectorGasMin = big.NewInt(params.Ether)
)

const (
	// testWalletFunds and testWalletMin are the embedded chain's test
	// buyer wallet's funds and top-up level, in cents.
	testWalletFunds int64 = 100_000
	testWalletMin   int64 = 10_000
)

// checkX402 refuses the X402Config values no default makes good.
func (c Config) checkX402() error {
	x := c.X402
	if x == nil {
		return nil
	}
	bad := func(format string, args ...any) error {
		return &ConfigError{Field: "X402", Problem: fmt.Sprintf(format, args...)}
	}
	switch {
	case len(x.Products) == 0:
		return bad("Products is empty: name at least one product to sell over x402")
	case x.Environment != "" && !x.Environment.Valid():
		return bad("Environment %q: want test or live", x.Environment)
	case x.CollectorKey != nil && x.CollectorKeyFile != "":
		return bad("CollectorKey and CollectorKeyFile: set one, not both")
	case x.Wait < 0:
		return bad("Wait %v: want 0 or more", x.Wait)
	}
	timeout := c.RequestTimeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	if x.Wait >= timeout {
		return bad("Wait %v: want less than the request timeout (%v): the paid request is answered within it", x.Wait, timeout)
	}
	for _, p := range x.Products {
		if strings.TrimSpace(p) == "" {
			return bad("Products has an empty name")
		}
	}
	return nil
}

// x402Sale is what New prepares for the x402 handler, made at Start once
// the server's URL is known.
type x402Sale struct {
	env    settleflow.Environment
	fac    *x402.Facilitator
	secret []byte
	// handler is the mounted handler (nil until Start).
	handler atomic.Pointer[x402.Handler]
	// wallet is the embedded chain's test buyer wallet (nil elsewhere).
	wallet *testWallet
	// funding is the engine's settler: the server's, taking the charges
	// of workflows paid by an upto permit from their wallets first.
	funding *x402.FundingSettler
}

// testWallet is the embedded test chain's buyer wallet, funded with test
// tokens so that an agent can pay at once.
type testWallet struct {
	address  common.Address
	file     string
	holds    *big.Int
	decimals uint8
}

// openX402 opens the collector's chain and the facilitator, and loads or
// makes the access secret.
func (s *Server) openX402(ctx context.Context) error {
	x := s.cfg.X402
	if x == nil {
		return nil
	}
	env := x.Environment
	if env == "" {
		env = settleflow.Test
	}
	bad := func(format string, args ...any) error {
		return &ConfigError{Field: "X402", Problem: fmt.Sprintf(format, args...)}
	}
	info, ok := s.chainInfo(env)
	if !ok {
		return bad("Environment %s: %s settlement is not configured (Config.Live): x402 sells where workflows settle", env, env)
	}
	sale := &x402Sale{env: env}
	// The chain the collector sends on: the embedded one, or its own
	// connection to the environment's node.
	var (
		backend settlement.Backend
		mine    func()
		faucet  *ecdsa.PrivateKey
	)
	cc := s.cfg.Live
	if env == settleflow.Test {
		cc = s.cfg.Test
	}
	if cc == nil { // the embedded test chain
		backend, mine, faucet = s.sim.Backend.Client(), s.sim.Commit, s.sim.FaucetKey
	} else {
		if backend = cc.Client; backend == nil {
			cl, err := rpc.DialContext(ctx, cc.RPCURL)
			if err != nil {
				return fmt.Errorf("x402: %s chain: %w", env, err)
			}
			s.onClose(cl.Close)
			backend = ethclient.NewClient(cl)
		}
		if faucet = cc.FaucetKey; faucet == nil && cc.FaucetKeyFile != "" && env == settleflow.Test {
			faucet, _ = crypto.LoadECDSA(cc.FaucetKeyFile) // the settler has read it already
		}
	}
	key, err := s.collectorKey(cc == nil)
	if err != nil {
		return err
	}
	collector := crypto.PubkeyToAddress(key.PublicKey)
	for _, other := range []struct {
		who  string
		addr common.Address
	}{{"the settlement operator's", info.Operator}, {"the payee's", info.Payee}} {
		if collector == other.addr {
			return bad("the collector %s is %s account: give the collector a key of its own", collector.Hex(), other.who)
		}
	}
	if faucet != nil && collector == crypto.PubkeyToAddress(faucet.PublicKey) {
		return bad("the collector %s is the test faucet's account: give the collector a key of its own", collector.Hex())
	}
	if cc == nil {
		if err := fundCollector(ctx, backend, faucet, collector, mine); err != nil {
			return fmt.Errorf("x402: giving the collector %s gas on the embedded chain: %w", collector.Hex(), err)
		}
		if sale.wallet, err = s.fundTestWallet(ctx, backend, faucet, info, mine); err != nil {
			return fmt.Errorf("x402: the test buyer wallet: %w", err)
		}
	}
	sale.fac, err = x402.NewFacilitator(ctx, x402.FacilitatorConfig{Backend: backend, Collector: key, Token: info.Token, Contract: info.Contract, Mine: mine})
	if err != nil {
		return err
	}
	// Outcome-priced products are sold by upto: their charges are taken
	// from the wallets as they settle, by the engine's settler.
	switch ch := s.chain.(type) {
	case *settlement.Settler:
		sale.funding = x402.NewFundingSettler(ch, sale.fac, s.log.Named("x402"))
	case *settlement.Simulated:
		sale.funding = x402.NewFundingSettler(ch.Settler, sale.fac, s.log.Named("x402"))
	}
	secretFile := x.AccessSecretFile
	if secretFile == "" {
		secretFile = filepath.Join(s.cfg.DataDir, "x402-access-secret")
	}
	if sale.secret, err = loadOrMakeSecret(secretFile, 32); err != nil {
		return bad("AccessSecretFile: %v", err)
	}
	s.x402 = sale
	return nil
}

// chainInfo is env's chain, if the settler has one.
func (s *Server) chainInfo(env settleflow.Environment) (settlement.ChainInfo, bool) {
	cs, ok := s.chain.(interface {
		Chain(settleflow.Environment) (settlement.ChainInfo, bool)
	})
	if !ok {
		return settlement.ChainInfo{}, false
	}
	return cs.Chain(env)
}

// collectorKey is X402Config's collector key, or on the embedded chain
// (embedded) the one kept in the data directory, made if absent.
func (s *Server) collectorKey(embedded bool) (*ecdsa.PrivateKey, error) {
	x := s.cfg.X402
	switch {
	case x.CollectorKey != nil:
		return x.CollectorKey, nil
	case x.CollectorKeyFile != "":
		k, err := crypto.LoadECDSA(x.CollectorKeyFile)
		if err != nil {
			return nil, &ConfigError{Field: "X402", Problem: fmt.Sprintf("CollectorKeyFile %s: %v (want a hex private key)", x.CollectorKeyFile, err)}
		}
		return k, nil
	case !embedded:
		return nil, &ConfigError{Field: "X402", Problem: "CollectorKey or CollectorKeyFile is required on a chain over RPC: the collector's account receives the payments and pays their gas"}
	}
	return loadOrMakeKey(filepath.Join(s.cfg.DataDir, "x402-collector.key"))
}

// loadOrMakeKey reads a hex private key from file, or makes one and writes
// it there (mode 0600) if the file is absent.
func loadOrMakeKey(file string) (*ecdsa.PrivateKey, error) {
	k, err := crypto.LoadECDSA(file)
	if err == nil {
		return k, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("x402: %s: %w", file, err)
	}
	if k, err = crypto.GenerateKey(); err != nil {
		return nil, err
	}
	if err := crypto.SaveECDSA(file, k); err != nil {
		return nil, fmt.Errorf("x402: %s: %w", file, err)
	}
	return k, nil
}

// loadOrMakeSecret reads a hex secret of at least n bytes from file, or
// makes n random bytes and writes them there (mode 0600) if the file is
// absent.
func loadOrMakeSecret(file string, n int) ([]byte, error) {
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		secret := make([]byte, n)
		if _, err := rand.Read(secret); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			return nil, err
		}
		return secret, os.WriteFile(file, []byte(hex.EncodeToString(secret)+"\n"), 0o600)
	}
	if err != nil {
		return nil, err
	}
	secret, err := hex.DecodeString(strings.TrimPrefix(strings.TrimSpace(string(b)), "0x"))
	if err != nil || len(secret) < n {
		return nil, fmt.Errorf("%s does not hold a hex secret of at least %d bytes", file, n)
	}
	return secret, nil
}

// fundCollector gives the collector gas money from the embedded chain's
// faucet when it holds less than collectorGasMin. It runs in New, before
// the engine's stages (whose faucet deposits send from the same account)
// start.
func fundCollector(ctx context.Context, b settlement.Backend, faucet *ecdsa.PrivateKey, collector common.Address, mine func()) error {
	have, err := b.BalanceAt(ctx, collector, nil)
	if err != nil || have.Cmp(collectorGasMin) >= 0 {
		return err
	}
	tr := settlement.Transactor{Backend: b, Key: faucet, Mine: mine}
	_, err = tr.SendValue(ctx, &collector, collectorGas, nil)
	return err
}

// fundTestWallet keeps the embedded chain's test buyer wallet (its key in
// DataDir/x402-test-wallet.key, made at the first start) holding at least
// testWalletMin cents of the test token, topping it up to testWalletFunds
// from the faucet; like fundCollector, before any stage runs.
func (s *Server) fundTestWallet(ctx context.Context, b settlement.Backend, faucet *ecdsa.PrivateKey, info settlement.ChainInfo, mine func()) (*testWallet, error) {
	file := filepath.Join(s.cfg.DataDir, "x402-test-wallet.key")
	key, err := loadOrMakeKey(file)
	if err != nil {
		return nil, err
	}
	w := &testWallet{address: crypto.PubkeyToAddress(key.PublicKey), file: file, decimals: info.Decimals}
	if w.holds, err = settlement.TokenBalance(ctx, b, info.Token, w.address); err != nil {
		return nil, err
	}
	if err := approvePermit2(ctx, b, faucet, key, info.Token, mine); err != nil {
		return nil, err
	}
	low, err := settlement.BaseUnits(testWalletMin, info.Decimals)
	if err != nil || w.holds.Cmp(low) >= 0 {
		return w, err
	}
	full, err := settlement.BaseUnits(testWalletFunds, info.Decimals)
	if err != nil {
		return nil, err
	}
	top := new(big.Int).Sub(full, w.holds)
	tr := settlement.Transactor{Backend: b, Key: faucet, Mine: mine}
	if _, err := tr.Send(ctx, &info.Token, bindings.NewTestUSD().PackTransfer(w.address, top)); err != nil {
		return nil, err
	}
	w.holds = full
	return w, nil
}

// approvePermit2 has the test buyer wallet approve Permit2 for the test
// token once (what an agent does before it pays by upto), giving it gas
// for that from the faucet.
func approvePermit2(ctx context.Context, b settlement.Backend, faucet, wallet *ecdsa.PrivateKey, token common.Address, mine func()) error {
	usd := bindings.NewTestUSD()
	addr := crypto.PubkeyToAddress(wallet.PublicKey)
	out, err := b.CallContract(ctx, ethereum.CallMsg{To: &token, Data: usd.PackAllowance(addr, settlement.Permit2Address)}, nil)
	if err != nil {
		return err
	}
	half := new(big.Int).Lsh(big.NewInt(1), 255)
	if allowance, err := usd.UnpackAllowance(out); err != nil || allowance.Cmp(half) >= 0 {
		return err
	}
	gas := new(big.Int).Div(big.NewInt(params.Ether), big.NewInt(10))
	if _, err := (settlement.Transactor{Backend: b, Key: faucet, Mine: mine}).SendValue(ctx, &addr, gas, nil); err != nil {
		return err
	}
	maxUint := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
	_, err = settlement.Transactor{Backend: b, Key: wallet, Mine: mine}.Send(ctx, &token, usd.PackApprove(settlement.Permit2Address, maxUint))
	return err
}

// X402ProductsError begins the error of [Server.Start] for a product of
// X402Config.Products that x402 refuses (x402.New's error follows).
const X402ProductsError = "Config.X402.Products: "

// startX402 makes the x402 handler for the server's URL, now known: it
// checks the products (x402.New's errors).
func (s *Server) startX402() error {
	sale := s.x402
	if sale == nil {
		return nil
	}
	c := s.cfg
	x := c.X402
	h, err := x402.New(x402.Config{
		Engine: s.engine, Facilitator: sale.fac, Funding: sale.funding, Environment: sale.env, Products: x.Products,
		BaseURL: s.URL() + "/x402", AccessSecret: sale.secret, Wait: x.Wait,
		// What the request's deadline leaves after the wait for the
		// outcome: past it the agent is told to send the same payment
		// again (it is charged once).
		FundsWait: c.RequestTimeout - x.Wait, Now: c.Clock.Now, Logger: s.log.Named("x402"),
	})
	if err != nil {
		// With the server's own checks done, what x402.New refuses is a
		// product: not in the catalogue, or priced as no scheme sells.
		return fmt.Errorf("%s%w", X402ProductsError, err)
	}
	sale.handler.Store(h)
	return nil
}

// announceX402 writes where agents pay, to whom, and the test wallet.
func (s *Server) announceX402() {
	sale := s.x402
	if sale == nil {
		return
	}
	fmt.Fprintf(s.cfg.Output, "x402: selling %s (%s, %s) at %s/x402/workflows; payments to collector %s\n",
		strings.Join(s.cfg.X402.Products, ", "), sale.env, sale.fac.Network(), s.URL(), sale.fac.Collector().Hex())
	if w := sale.wallet; w != nil {
		fmt.Fprintf(s.cfg.Output, "x402: test buyer wallet %s holds %s test USD (its key: %s)\n",
			w.address.Hex(), settlement.FormatUnits(w.holds, int(w.decimals)), w.file)
	}
}

// withX402 serves the x402 handler under /x402/ (its paths stripped of
// the prefix) once Start made it, and passes every other request to next.
func withX402(sale *x402Sale, next http.Handler) http.Handler {
	if sale == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := sale.handler.Load()
		if h == nil || !strings.HasPrefix(r.URL.Path, "/x402/") {
			next.ServeHTTP(w, r)
			return
		}
		http.StripPrefix("/x402", h).ServeHTTP(w, r)
	})
}
