package x402_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"go.uber.org/zap/zaptest"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/settlement/contracts/bindings"
	"github.com/settleflow/settleflow/storage/sqlite"
	"github.com/settleflow/settleflow/x402"
)

// summary is the fixed-price product sold in the tests: cost 700, margin
// 0.3, so every workflow is quoted and charged 1000 cents (10.00 USD).
type summary struct {
	Text string `json:"text"`
}

func (s summary) Validate() error {
	if s.Text == "" {
		return &settleflow.FieldError{Field: "text", Message: "is required"}
	}
	return nil
}

const (
	price      = 1000                 // cents
	priceUnits = price * 10_000       // the token's base units (6 decimals)
	buyerFunds = 50 * 1_000_000       // 50.00 USD in base units
	product    = "summary"            // for sale over x402
	notForSale = "summary-keyed-only" // registered, not for sale
)

// rig is a reference setup: the simulated chain, an engine on SQLite with
// the summary product, the x402 handler at /x402 on a loopback server, a
// collector with gas, and a buyer holding buyerFunds of the test token.
type rig struct {
	t         *testing.T
	sim       *settlement.Simulated
	engine    *settleflow.Engine
	fac       *x402.Facilitator
	srv       *httptest.Server
	url       string // the create
	buyer     *ecdsa.PrivateKey
	collector common.Address
	backend   settlement.Backend
	funding   *x402.FundingSettler // with rigOptions.upto
	handler   *x402.Handler
	skew      atomic.Int64 // added to the handler's clock (Config.Now), in nanoseconds
}

func newRig(t *testing.T) *rig { return newRigOn(t, true) }

// newRigOn is newRig on a chain that makes a block every 150 ms (blocks),
// as geth --dev and every real chain do, or only on demand (the simulated
// chain's committer, and the facilitator's Mine while it waits).
func newRigOn(t *testing.T, blocks bool) *rig {
	t.Helper()
	ctx := context.Background()
	sim, err := settlement.NewSimulated(ctx, settlement.SimulatedOptions{Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	if blocks {
		startBlocks(t, sim, nil)
	}
	r, err := finishRig(t, sim)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// startBlocks makes a block every 150 ms until the test ends, except
// while hold (if not nil) is held.
func startBlocks(t *testing.T, sim *settlement.Simulated, hold *sync.Mutex) {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(150 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if hold != nil {
					hold.Lock()
				}
				sim.Commit()
				if hold != nil {
					hold.Unlock()
				}
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
}

func finishRig(t *testing.T, sim *settlement.Simulated) (*rig, error) {
	return finishRigWith(t, sim, rigOptions{})
}

// rigOptions adds to the reference rig: more products for sale (each
// registered by its function), sold through a FundingSettler (upto), and a
// bound on how long a paid create waits for its outcome.
type rigOptions struct {
	products []func(*settleflow.Products) error
	forSale  []string
	upto     bool
	wait     time.Duration
}

func finishRigWith(t *testing.T, sim *settlement.Simulated, o rigOptions) (*rig, error) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "settleflow.db"), sqlite.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	products := settleflow.NewProducts()
	for _, name := range []string{product, notForSale} {
		err := settleflow.Register(products, settleflow.Product[summary]{
			Name:     name,
			Price:    settleflow.Price{TargetMargin: 3000},
			Estimate: func(summary) (int64, error) { return 700, nil },
			Execute: func(ctx context.Context, s summary) (settleflow.Execution, error) {
				return settleflow.Execution{ActualCost: 650, Result: map[string]string{"summary": strings.ToUpper(s.Text)}}, nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, register := range o.products {
		if err := register(products); err != nil {
			t.Fatal(err)
		}
	}
	r := &rig{t: t, sim: sim, backend: sim.Backend.Client()}
	collectorKey, _ := crypto.GenerateKey()
	r.collector = crypto.PubkeyToAddress(collectorKey.PublicKey)
	r.buyer, _ = crypto.GenerateKey()
	r.fac, err = x402.NewFacilitator(ctx, x402.FacilitatorConfig{Backend: r.backend, Collector: collectorKey,
		Token: sim.Addresses.Token, Contract: sim.Addresses.Contract, Mine: sim.Commit})
	if err != nil {
		t.Fatal(err)
	}
	var settler settleflow.Settler = sim
	if o.upto {
		r.funding = x402.NewFundingSettler(sim.Settler, r.fac, zaptest.NewLogger(t))
		settler = r.funding
	}
	engine, err := settleflow.New(settleflow.Options{Store: store, Settler: settler, Products: products, Logger: zaptest.NewLogger(t),
		FundsPollInterval: 20 * time.Millisecond, PollInterval: 20 * time.Millisecond, TestFaucet: -1,
		Notifier: settleflow.NotifierFunc(func(context.Context, []settleflow.Event) error { return nil })})
	if err != nil {
		t.Fatal(err)
	}
	if r.funding != nil {
		r.funding.Attach(engine)
	}
	if err := engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engine.Stop(context.Background()) })
	r.engine = engine

	faucet := settlement.Transactor{Backend: r.backend, Key: sim.FaucetKey, Mine: sim.Commit}
	if _, err := faucet.SendValue(ctx, &r.collector, big.NewInt(1e18), nil); err != nil {
		t.Fatal(err)
	}
	r.fund(crypto.PubkeyToAddress(r.buyer.PublicKey), buyerFunds)

	mux := http.NewServeMux()
	r.srv = httptest.NewServer(mux)
	t.Cleanup(r.srv.Close)
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	h, err := x402.New(x402.Config{Engine: engine, Facilitator: r.fac, Funding: r.funding, Environment: settleflow.Test,
		Products: append([]string{product}, o.forSale...), Wait: o.wait,
		BaseURL: r.srv.URL + "/x402", AccessSecret: secret, Logger: zaptest.NewLogger(t),
		Now: func() time.Time { return time.Now().Add(time.Duration(r.skew.Load())) }})
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle("/x402/", http.StripPrefix("/x402", h))
	r.handler = h
	r.url = r.srv.URL + "/x402/workflows"
	return r, nil
}

// fund sends units of the test token from the faucet.
func (r *rig) fund(to common.Address, units int64) { r.fundGas(to, units) }

// fundGas is fund, returning the transfer's gas.
func (r *rig) fundGas(to common.Address, units int64) uint64 {
	r.t.Helper()
	faucet := settlement.Transactor{Backend: r.backend, Key: r.sim.FaucetKey, Mine: r.sim.Commit}
	rcpt, err := faucet.Send(context.Background(), &r.sim.Addresses.Token, bindings.NewTestUSD().PackTransfer(to, big.NewInt(units)))
	if err != nil {
		r.t.Fatal(err)
	}
	return rcpt.GasUsed
}

// spend has a wallet send units of its tokens away (to an address nobody
// holds): a buyer emptying itself between steps.
func (r *rig) spend(wallet *ecdsa.PrivateKey, units int64) {
	r.t.Helper()
	tr := settlement.Transactor{Backend: r.backend, Key: wallet, Mine: r.sim.Commit}
	sink := common.HexToAddress("0x000000000000000000000000000000000000bEEF")
	if _, err := tr.Send(context.Background(), &r.sim.Addresses.Token, bindings.NewTestUSD().PackTransfer(sink, big.NewInt(units))); err != nil {
		r.t.Fatal(err)
	}
}

// balance is an account's token balance in base units.
func (r *rig) balance(a common.Address) int64 {
	r.t.Helper()
	b, err := settlement.TokenBalance(context.Background(), r.backend, r.sim.Addresses.Token, a)
	if err != nil {
		r.t.Fatal(err)
	}
	return b.Int64()
}

// contractBalance is a customer's balance in the settlement contract.
func (r *rig) contractBalance(customer string) int64 {
	r.t.Helper()
	c, err := r.engine.Customer(context.Background(), settleflow.Test, customer)
	if err != nil {
		r.t.Fatal(err)
	}
	ref := common.HexToHash(c.Deposit.CustomerRef)
	abi := bindings.NewSettleflowSettlement()
	out, err := r.backend.CallContract(context.Background(), ethereum.CallMsg{To: &r.sim.Addresses.Contract, Data: abi.PackBalanceOf(ref)}, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	v, err := abi.UnpackBalanceOf(out)
	if err != nil {
		r.t.Fatal(err)
	}
	return v.Int64()
}

// workflows is how many workflows a customer has.
func (r *rig) workflows(customer string) int {
	r.t.Helper()
	p, err := r.engine.List(context.Background(), settleflow.ListParams{Environment: settleflow.Test, CustomerID: customer, Limit: 100})
	if err != nil {
		r.t.Fatal(err)
	}
	return len(p.Data)
}

type answer struct {
	status   int
	header   http.Header
	body     []byte
	required *x402.PaymentRequired
	response *x402.SettlementResponse
	purchase x402.Purchase
	err      struct {
		Error struct {
			Type, Code, Message, Param string
		} `json:"error"`
	}
}

// post sends a create with an optional PAYMENT-SIGNATURE and reads the
// answer's x402 headers.
func (r *rig) post(body, payment string) *answer {
	r.t.Helper()
	req, _ := http.NewRequest("POST", r.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if payment != "" {
		req.Header.Set(x402.HeaderPaymentSignature, payment)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer res.Body.Close()
	a := &answer{status: res.StatusCode, header: res.Header}
	a.body, _ = io.ReadAll(res.Body)
	if h := res.Header.Get(x402.HeaderPaymentRequired); h != "" {
		if a.required, err = x402.DecodePaymentRequired(h); err != nil {
			r.t.Fatalf("PAYMENT-REQUIRED: %v", err)
		}
	}
	if h := res.Header.Get(x402.HeaderPaymentResponse); h != "" {
		if a.response, err = x402.DecodePaymentResponse(h); err != nil {
			r.t.Fatalf("PAYMENT-RESPONSE: %v", err)
		}
	}
	if res.StatusCode == http.StatusCreated {
		if err := json.Unmarshal(a.body, &a.purchase); err != nil {
			r.t.Fatal(err)
		}
	} else {
		_ = json.Unmarshal(a.body, &a.err)
	}
	return a
}

// offer asks for the body's payment requirements (the 402).
func (r *rig) offer(body string) x402.PaymentRequirements {
	r.t.Helper()
	a := r.post(body, "")
	if a.status != http.StatusPaymentRequired || a.required == nil || len(a.required.Accepts) != 1 {
		r.t.Fatalf("the keyless create answered %d %s, want 402 with one requirement", a.status, a.body)
	}
	return a.required.Accepts[0]
}

// authorization is what a wallet signs for req, valid from a minute ago
// for req's timeout.
func authorization(req x402.PaymentRequirements) *x402.ExactAuthorization {
	var nonce [32]byte
	_, _ = rand.Read(nonce[:])
	v, _ := new(big.Int).SetString(req.Amount, 10)
	now := time.Now().Unix()
	return &x402.ExactAuthorization{To: common.HexToAddress(req.PayTo), Value: v, Nonce: nonce,
		ValidAfter: big.NewInt(now - 60), ValidBefore: big.NewInt(now + req.MaxTimeoutSeconds)}
}

// domain is the EIP-712 domain req names.
func domain(req x402.PaymentRequirements) x402.Domain {
	id, _ := new(big.Int).SetString(strings.TrimPrefix(req.Network, "eip155:"), 10)
	return x402.Domain{Name: req.Extra["name"], Version: req.Extra["version"], ChainID: id, Contract: common.HexToAddress(req.Asset)}
}

// header is the PAYMENT-SIGNATURE of a signed by key for accepted (the
// requirements the payment says it accepts), as the spec's client sends it.
func header(t *testing.T, key *ecdsa.PrivateKey, accepted x402.PaymentRequirements, a *x402.ExactAuthorization, resource string) string {
	t.Helper()
	if err := a.Sign(key, domain(accepted)); err != nil {
		t.Fatal(err)
	}
	return headerOf(t, accepted, a, resource)
}

// headerOf is the PAYMENT-SIGNATURE of a, signed already.
func headerOf(t *testing.T, accepted x402.PaymentRequirements, a *x402.ExactAuthorization, resource string) string {
	t.Helper()
	raw, _ := json.Marshal(a.Wire())
	p := x402.PaymentPayload{X402Version: 2, Accepted: &accepted, Payload: raw,
		Resource: &x402.ResourceInfo{URL: resource, Description: "a workflow of " + accepted.Extra["product"], MimeType: "application/json"}}
	h, err := x402.EncodeHeader(p)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// waitSettled polls the workflow with the purchase's access token until it
// is Settled.
func (r *rig) waitSettled(p x402.Purchase) *settleflow.Workflow {
	r.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		req, _ := http.NewRequest("GET", r.srv.URL+"/x402/workflows/"+p.Workflow.ID, nil)
		req.Header.Set("Authorization", "Bearer "+p.AccessToken)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			r.t.Fatal(err)
		}
		var wf settleflow.Workflow
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			r.t.Fatalf("GET with the access token: %d %s", res.StatusCode, body)
		}
		if err := json.Unmarshal(body, &wf); err != nil {
			r.t.Fatal(err)
		}
		if wf.Status.Terminal() {
			if wf.Status != settleflow.Settled {
				r.t.Fatalf("workflow %s ended %s: %s", wf.ID, wf.Status, body)
			}
			return &wf
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("workflow %s still %s after 60 s", wf.ID, wf.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// transferred is the token amount a transaction moved from one address to
// another (its Transfer logs).
func (r *rig) transferred(tx string, from, to common.Address) int64 {
	r.t.Helper()
	rcpt, err := r.backend.TransactionReceipt(context.Background(), common.HexToHash(tx))
	if err != nil {
		r.t.Fatal(err)
	}
	topic := crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))
	var sum int64
	for _, l := range rcpt.Logs {
		if l.Address == r.sim.Addresses.Token && len(l.Topics) == 3 && l.Topics[0] == topic &&
			common.BytesToAddress(l.Topics[1][:]) == from && common.BytesToAddress(l.Topics[2][:]) == to {
			sum += new(big.Int).SetBytes(l.Data).Int64()
		}
	}
	return sum
}

var _ = hexutil.Encode
