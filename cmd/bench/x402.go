package main

// -suite x402: the paid path beside the keyed path, on one engine, one
// HTTPS server and one simulated chain, in the same rounds. The keyed side
// is POST /v1/workflows with an API key, for customers funded beforehand;
// the paid side is POST /x402/workflows with a PAYMENT-SIGNATURE (x402's
// exact scheme: an EIP-3009 authorization signed in Go, before the clock
// starts, as an agent signs before it sends), which the server verifies,
// submits (the wallet's transfer to the collector), deposits into the
// wallet's customer balance, waits to see confirmed, and only then creates
// the workflow. Both create the same fixed-price product; every answer
// must be 201. Each side runs -connections clients (the paid side one
// wallet each, as agents are), -n creates per side and round, the sides'
// order alternating by round.

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/params"
	"go.uber.org/zap"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/apikey"
	"github.com/settleflow/settleflow/httpapi"
	"github.com/settleflow/settleflow/ratelimit"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/settlement/contracts/bindings"
	"github.com/settleflow/settleflow/storage/sqlite"
	"github.com/settleflow/settleflow/x402"
)

type x402Config struct {
	n, rounds, connections int
}

// x402Product is the fixed-price product both sides create: cost 100
// cents, margin 30 %; x402MaxPrice is more than its price, in cents, for
// the funds of wallets and customers.
const (
	x402Product  = "bench-fixed"
	x402MaxPrice = 300
)

type x402Payload struct {
	Text string `json:"text"`
}

func (x402Payload) Validate() error { return nil }

// x402Rig is the server of the suite.
type x402Rig struct {
	url, key string
	client   *http.Client
	engine   *settleflow.Engine
	offer    x402.PaymentRequirements
	resource x402.ResourceInfo
	upto     x402.PaymentRequirements // the capped product's offer
	wallets  []*ecdsa.PrivateKey
	close    func()
}

const (
	x402Body     = `{"product": "bench-fixed", "payload": {"text": "hello"}}`
	x402UptoBody = `{"product": "bench-capped", "payload": {"text": "hello"}}`
)

func runX402(c x402Config) error {
	if c.n < c.connections {
		return fmt.Errorf("-n %d: want at least -connections (%d)", c.n, c.connections)
	}
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "settleflow-x402bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Printf("one engine (SQLite, synchronous=FULL), one HTTPS server on loopback, the simulated chain (blocks on demand, 2 confirmations);\n")
	fmt.Printf("%d clients per side (the paid side: one wallet each), %d creates per side and round\n", c.connections, c.n)
	rig, err := startX402Rig(ctx, dir, c)
	if err != nil {
		return err
	}
	defer rig.close()
	fmt.Printf("%-6s %-40s %12s %10s %10s\n", "round", "side", "creates/s", "p50", "p99")
	type row struct{ keyed, paid, upto loadResult }
	var rows []row
	for r := 0; r < c.rounds; r++ {
		var res row
		sides := []func() error{
			func() (err error) { res.keyed, err = rig.keyedLoad(ctx, c.n, c.connections, r); return err },
			func() (err error) { res.paid, err = rig.paidLoad(ctx, c.n, c.connections); return err },
			func() (err error) { res.upto, err = rig.uptoLoad(ctx, c.n, c.connections); return err },
		}
		if r%2 == 1 {
			slices.Reverse(sides)
		}
		for _, side := range sides {
			if err := side(); err != nil {
				return err
			}
		}
		fmt.Printf("%-6d %-40s %12.1f %10s %10s\n", r+1, "keyed: POST /v1/workflows, API key", res.keyed.perSecond(), res.keyed.p50.Round(time.Microsecond), res.keyed.p99.Round(time.Microsecond))
		fmt.Printf("%-6d %-40s %12.1f %10s %10s   %.4fx\n", r+1, "paid: POST /x402/workflows, exact", res.paid.perSecond(), res.paid.p50.Round(time.Microsecond), res.paid.p99.Round(time.Microsecond),
			res.paid.perSecond()/res.keyed.perSecond())
		fmt.Printf("%-6d %-40s %12.1f %10s %10s   %.4fx\n", r+1, "paid: POST /x402/workflows, upto", res.upto.perSecond(), res.upto.p50.Round(time.Microsecond), res.upto.p99.Round(time.Microsecond),
			res.upto.perSecond()/res.keyed.perSecond())
		rows = append(rows, res)
	}
	fmt.Printf("median: keyed %.1f creates/s, exact %.1f creates/s, upto %.1f creates/s; exact / keyed %.4fx, upto / keyed %.4fx (medians of the rounds' ratios)\n",
		medianOf(rows, func(r row) float64 { return r.keyed.perSecond() }), medianOf(rows, func(r row) float64 { return r.paid.perSecond() }),
		medianOf(rows, func(r row) float64 { return r.upto.perSecond() }),
		medianOf(rows, func(r row) float64 { return r.paid.perSecond() / r.keyed.perSecond() }),
		medianOf(rows, func(r row) float64 { return r.upto.perSecond() / r.keyed.perSecond() }))
	fmt.Printf("gas: go test -count=1 -v -run 'TestPaymentGas|TestUptoChargeGas' ./x402\n")
	return nil
}

// startX402Rig starts the chain, the engine, the API (with a key) and the
// x402 handler on one HTTPS server, funds a keyed customer per client, a
// collector with gas and a wallet per client with test tokens.
func startX402Rig(ctx context.Context, dir string, c x402Config) (_ *x402Rig, err error) {
	var closers []func()
	rig := &x402Rig{close: func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}}
	defer func() {
		if err != nil {
			rig.close()
		}
	}()
	sim, err := settlement.NewSimulated(ctx, settlement.SimulatedOptions{})
	if err != nil {
		return nil, err
	}
	closers = append(closers, func() { sim.Close() })
	store, err := sqlite.Open(ctx, filepath.Join(dir, "settleflow.db"), sqlite.OpenOptions{Exclusive: true})
	if err != nil {
		return nil, err
	}
	closers = append(closers, func() { store.Close() })
	products := settleflow.NewProducts()
	if err := settleflow.Register(products, settleflow.Product[x402Payload]{
		Name: x402Product, Price: settleflow.Price{TargetMargin: 3000},
		Estimate: func(x402Payload) (int64, error) { return 100, nil },
		Execute: func(context.Context, x402Payload) (settleflow.Execution, error) {
			return settleflow.Execution{ActualCost: 100}, nil
		},
	}); err != nil {
		return nil, err
	}
	// Sold by upto: quoted 143, charged its cost plus 20 %: 96.
	if err := settleflow.Register(products, settleflow.Product[x402Payload]{
		Name: "bench-capped", Price: settleflow.Price{Model: settleflow.PricingCapped, TargetMargin: 3000, Markup: 2000},
		Estimate: func(x402Payload) (int64, error) { return 100, nil },
		Execute: func(context.Context, x402Payload) (settleflow.Execution, error) {
			return settleflow.Execution{ActualCost: 80}, nil
		},
	}); err != nil {
		return nil, err
	}
	b := sim.Backend.Client()
	collectorKey, _ := crypto.GenerateKey()
	fac, err := x402.NewFacilitator(ctx, x402.FacilitatorConfig{Backend: b, Collector: collectorKey, Token: sim.Addresses.Token,
		Contract: sim.Addresses.Contract, Mine: sim.Commit})
	if err != nil {
		return nil, err
	}
	funding := x402.NewFundingSettler(sim.Settler, fac, errorLogger())
	rig.engine, err = settleflow.New(settleflow.Options{Store: store, Settler: funding, Products: products, TestFaucet: -1,
		Notifier: settleflow.NotifierFunc(func(context.Context, []settleflow.Event) error { return nil })})
	if err != nil {
		return nil, err
	}
	funding.Attach(rig.engine)
	if err := rig.engine.Start(ctx); err != nil {
		return nil, err
	}
	closers = append(closers, func() { rig.engine.Stop(context.Background()) })
	keys, err := apikey.New(store.DB(), apikey.Options{})
	if err != nil {
		return nil, err
	}
	closers = append(closers, func() { keys.Close() })
	if err := keys.Migrate(ctx); err != nil {
		return nil, err
	}
	if _, rig.key, err = keys.Create(ctx, apikey.CreateParams{Environment: settleflow.Test, Name: "bench", Plan: apikey.Enterprise,
		PerMinute: 1 << 30, PerDay: 1 << 30}); err != nil {
		return nil, err
	}
	api, err := httpapi.New(httpapi.Options{Engine: rig.engine, Keys: httpapi.APIKeys(keys), Limiter: ratelimit.NewMemory()})
	if err != nil {
		return nil, err
	}

	// The collector, with gas; the wallets, with test tokens for every
	// round and the warm-up, and Permit2 approved (with gas for that).
	faucet := settlement.Transactor{Backend: b, Key: sim.FaucetKey, Mine: sim.Commit}
	collector := crypto.PubkeyToAddress(collectorKey.PublicKey)
	if _, err := faucet.SendValue(ctx, &collector, new(big.Int).Mul(big.NewInt(100), big.NewInt(params.Ether)), nil); err != nil {
		return nil, err
	}
	perWallet := big.NewInt(int64(c.rounds*(c.n/c.connections+2)+2) * 2 * x402MaxPrice * 10_000)
	token := bindings.NewTestUSD()
	maxUint := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
	for range c.connections {
		k, _ := crypto.GenerateKey()
		rig.wallets = append(rig.wallets, k)
		addr := crypto.PubkeyToAddress(k.PublicKey)
		if _, err := faucet.Send(ctx, &sim.Addresses.Token, token.PackTransfer(addr, perWallet)); err != nil {
			return nil, err
		}
		if _, err := faucet.SendValue(ctx, &addr, big.NewInt(params.Ether), nil); err != nil {
			return nil, err
		}
		w := settlement.Transactor{Backend: b, Key: k, Mine: sim.Commit}
		if _, err := w.Send(ctx, &sim.Addresses.Token, token.PackApprove(settlement.Permit2Address, maxUint)); err != nil {
			return nil, err
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/", api)
	srv := httptest.NewUnstartedServer(mux)
	srv.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	closers = append(closers, srv.Close)
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	h, err := x402.New(x402.Config{Engine: rig.engine, Facilitator: fac, Funding: funding, Environment: settleflow.Test,
		Products: []string{x402Product, "bench-capped"}, UptoTimeout: 6 * time.Hour,
		BaseURL: srv.URL + "/x402", AccessSecret: secret, Logger: errorLogger()})
	if err != nil {
		return nil, err
	}
	mux.Handle("/x402/", http.StripPrefix("/x402", h))
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	rig.url = srv.URL
	rig.client = &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool},
		MaxIdleConnsPerHost: 256, MaxConnsPerHost: 256}}

	// The keyed customers, funded for every round.
	for i := range c.connections {
		if _, err := rig.engine.FundTestCustomer(ctx, keyedCustomer(i), int64(c.rounds*(c.n/c.connections+2)+2)*x402MaxPrice); err != nil {
			return nil, err
		}
	}
	// The offer, from a create without payment.
	resp, err := rig.post(rig.url+"/x402/workflows", x402Body, nil)
	if err != nil {
		return nil, err
	}
	pr, err := x402.DecodePaymentRequired(resp.Header.Get(x402.HeaderPaymentRequired))
	if resp.StatusCode != http.StatusPaymentRequired || err != nil || len(pr.Accepts) != 1 {
		return nil, fmt.Errorf("a create without payment answered %d: %v", resp.StatusCode, err)
	}
	rig.offer, rig.resource = pr.Accepts[0], pr.Resource
	resp, err = rig.post(rig.url+"/x402/workflows", x402UptoBody, nil)
	if err != nil {
		return nil, err
	}
	if pr, err = x402.DecodePaymentRequired(resp.Header.Get(x402.HeaderPaymentRequired)); err != nil || len(pr.Accepts) != 1 || pr.Accepts[0].Scheme != x402.SchemeUpto {
		return nil, fmt.Errorf("the capped product's offer: %v %+v", err, pr)
	}
	rig.upto = pr.Accepts[0]
	// Warm-up, not timed: a create of each side per client (the first
	// payment also makes the collector's approval of the contract).
	if _, err := rig.keyedLoad(ctx, c.connections, c.connections, -1); err != nil {
		return nil, err
	}
	if _, err := rig.paidLoad(ctx, c.connections, c.connections); err != nil {
		return nil, err
	}
	if _, err := rig.uptoLoad(ctx, c.connections, c.connections); err != nil {
		return nil, err
	}
	return rig, nil
}

// errorLogger logs errors to stderr: a refused payment the suite did not
// expect says why.
func errorLogger() *zap.Logger {
	cfg := zap.NewDevelopmentConfig()
	cfg.Level = zap.NewAtomicLevelAt(zap.ErrorLevel)
	cfg.DisableStacktrace = true
	l, err := cfg.Build()
	if err != nil {
		return zap.NewNop()
	}
	return l
}

func keyedCustomer(i int) string { return fmt.Sprintf("cus_keyed_%d", i) }

// post sends a JSON create, with the headers of h.
func (rig *x402Rig) post(url, body string, h map[string]string) (*http.Response, error) {
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := rig.client.Do(req)
	if err != nil {
		return nil, err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated && (resp.StatusCode != http.StatusPaymentRequired || len(h) > 0) {
		return nil, fmt.Errorf("POST %s answered %d: %s", url, resp.StatusCode, b)
	}
	return resp, nil
}

// paymentHeader is a PAYMENT-SIGNATURE of wallet for the offer: a fresh
// EIP-3009 authorization, valid from a minute ago for six hours (x402.MaxValidity allows twelve). (Not for the
// offer's timeout, as the official client signs: the simulated chain seals
// each block at least a second after the one before, so while it makes
// more than a block a second, as under this load, its clock runs ahead of
// the wall clock, by minutes within a round, and the token would refuse
// an authorization the wall clock holds valid: AuthorizationExpired.)
func (rig *x402Rig) paymentHeader(wallet *ecdsa.PrivateKey) (string, error) {
	o := rig.offer
	var nonce [32]byte
	_, _ = rand.Read(nonce[:])
	v, _ := new(big.Int).SetString(o.Amount, 10)
	id, _ := new(big.Int).SetString(strings.TrimPrefix(o.Network, "eip155:"), 10)
	now := time.Now().Unix()
	a := &x402.ExactAuthorization{To: common.HexToAddress(o.PayTo), Value: v, Nonce: nonce,
		ValidAfter: big.NewInt(now - 60), ValidBefore: big.NewInt(now + 6*3600)}
	if err := a.Sign(wallet, x402.Domain{Name: o.Extra["name"], Version: o.Extra["version"], ChainID: id, Contract: common.HexToAddress(o.Asset)}); err != nil {
		return "", err
	}
	raw, err := json.Marshal(a.Wire())
	if err != nil {
		return "", err
	}
	res := rig.resource
	return x402.EncodeHeader(x402.PaymentPayload{X402Version: 2, Accepted: &o, Payload: raw, Resource: &res})
}

// loadResult is one side's run.
type loadResult struct {
	n        int
	seconds  float64
	p50, p99 time.Duration
}

func (r loadResult) perSecond() float64 { return float64(r.n) / r.seconds }

// runLoad sends n requests from c clients, client i's next as soon as its
// last answered; prepare makes request j of client i (untimed), every
// answer must be 201.
func runLoad(n, c int, prepare func(client, j int) (func() (*http.Response, error), error)) (loadResult, error) {
	// Prepared before the clock starts: the paid side's signatures.
	reqs := make([][]func() (*http.Response, error), c)
	for i := range n {
		f, err := prepare(i%c, len(reqs[i%c]))
		if err != nil {
			return loadResult{}, err
		}
		reqs[i%c] = append(reqs[i%c], f)
	}
	var (
		mu    sync.Mutex
		lat   []time.Duration
		first atomic.Pointer[error]
		wg    sync.WaitGroup
	)
	start := time.Now()
	for i := range c {
		wg.Go(func() {
			for _, send := range reqs[i] {
				t0 := time.Now()
				resp, err := send()
				if err == nil && resp.StatusCode != http.StatusCreated {
					err = fmt.Errorf("answered %d", resp.StatusCode)
				}
				if err != nil {
					first.CompareAndSwap(nil, &err)
					return
				}
				d := time.Since(t0)
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	if e := first.Load(); e != nil {
		return loadResult{}, *e
	}
	slices.Sort(lat)
	return loadResult{n: n, seconds: secs, p50: lat[len(lat)/2], p99: lat[len(lat)*99/100]}, nil
}

// keyedLoad: n keyed creates from c clients, client i for customer i; the
// idempotency keys are the round's (r).
func (rig *x402Rig) keyedLoad(_ context.Context, n, c, r int) (loadResult, error) {
	return runLoad(n, c, func(i, j int) (func() (*http.Response, error), error) {
		body := fmt.Sprintf(`{"product": %q, "customerId": %q, "payload": {"text": "hello"}}`, x402Product, keyedCustomer(i))
		h := map[string]string{"Authorization": "Bearer " + rig.key, "Idempotency-Key": fmt.Sprintf("bench-%d-%d-%d", r, i, j)}
		return func() (*http.Response, error) { return rig.post(rig.url+"/v1/workflows", body, h) }, nil
	})
}

// paidLoad: n paid creates from c clients, client i paying with wallet i.
func (rig *x402Rig) paidLoad(_ context.Context, n, c int) (loadResult, error) {
	return runLoad(n, c, func(i, _ int) (func() (*http.Response, error), error) {
		hdr, err := rig.paymentHeader(rig.wallets[i])
		if err != nil {
			return nil, err
		}
		return func() (*http.Response, error) {
			resp, err := rig.post(rig.url+"/x402/workflows", x402Body, map[string]string{x402.HeaderPaymentSignature: hdr})
			if err == nil && resp.StatusCode == http.StatusCreated {
				pr, derr := x402.DecodePaymentResponse(resp.Header.Get(x402.HeaderPaymentResponse))
				if derr != nil || !pr.Success || pr.Transaction == "" {
					return nil, fmt.Errorf("a paid create's PAYMENT-RESPONSE: %v %+v", derr, pr)
				}
			}
			return resp, err
		}, nil
	})
}

// uptoHeader is a PAYMENT-SIGNATURE of wallet for the capped product's
// upto offer: a fresh Permit2 permit of at most the quote (valid for the
// offer's timeout, six hours here for the reason paymentHeader gives).
func (rig *x402Rig) uptoHeader(wallet *ecdsa.PrivateKey) (string, error) {
	o := rig.upto
	max, _ := new(big.Int).SetString(o.Amount, 10)
	id, _ := new(big.Int).SetString(strings.TrimPrefix(o.Network, "eip155:"), 10)
	n := make([]byte, 32)
	_, _ = rand.Read(n)
	a := &x402.UptoAuthorization{Token: common.HexToAddress(o.Asset), Max: max, Spender: settlement.UptoProxyAddress,
		Nonce: new(big.Int).SetBytes(n), Deadline: big.NewInt(time.Now().Unix() + o.MaxTimeoutSeconds),
		To: common.HexToAddress(o.PayTo), Facilitator: common.HexToAddress(o.Extra["facilitatorAddress"]), ValidAfter: big.NewInt(0)}
	if err := a.Sign(wallet, id); err != nil {
		return "", err
	}
	raw, err := json.Marshal(a.Wire())
	if err != nil {
		return "", err
	}
	return x402.EncodeHeader(x402.PaymentPayload{X402Version: 2, Accepted: &o, Payload: raw})
}

// uptoLoad: n creates of the capped product paid by upto permits from c
// clients, client i with wallet i. Nothing is sent to the chain at the
// create (the permit is checked by calls); each charge is taken when it
// settles, after the answer.
func (rig *x402Rig) uptoLoad(_ context.Context, n, c int) (loadResult, error) {
	return runLoad(n, c, func(i, _ int) (func() (*http.Response, error), error) {
		hdr, err := rig.uptoHeader(rig.wallets[i])
		if err != nil {
			return nil, err
		}
		return func() (*http.Response, error) {
			return rig.post(rig.url+"/x402/workflows", x402UptoBody, map[string]string{x402.HeaderPaymentSignature: hdr})
		}, nil
	})
}
