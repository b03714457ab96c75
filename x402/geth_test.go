package x402_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"go.uber.org/zap/zaptest"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/gethdev"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/settlement/contracts/bindings"
	"github.com/settleflow/settleflow/x402"
)

// gethChain is a [settlement.ChainBackend] over a geth --dev node: geth
// seals its own blocks (--dev.period 1), so Commit does nothing, and the
// rig's transactors and facilitator wait for geth's blocks instead of
// mining.
type gethChain struct{ client *ethclient.Client }

func (g gethChain) Client() simulated.Client { return g.client }
func (g gethChain) Commit() common.Hash      { return common.Hash{} }
func (g gethChain) Rollback()                {}
func (g gethChain) Fork(common.Hash) error   { return errors.New("geth --dev: no forks") }
func (g gethChain) AdjustTime(time.Duration) error {
	return errors.New("geth --dev: its clock is the wall clock")
}
func (g gethChain) Close() error { return nil }

// gethNode is a running geth --dev node on loopback.
type gethNode struct {
	client  *ethclient.Client
	url     string
	keyfile string // the dev account's keystore file (empty password)
	devKey  *ecdsa.PrivateKey
}

// startGeth starts a geth --dev node (gethdev.Start), on genesis if set.
func startGeth(t *testing.T, genesis []byte) *gethNode {
	t.Helper()
	n := gethdev.Start(t, gethdev.Options{Genesis: genesis})
	return &gethNode{client: n.Client, url: n.URL, keyfile: n.KeyFile, devKey: n.DevKey}
}

// newGethRig is the tests' rig (harness_test.go) on a geth --dev node: the
// test stablecoin and the settlement contract deployed by the dev account
// (the operator), the engine's settler following the node at depth 2, the
// collector and the buyer funded from a faucet. The rig's Simulated holds
// the deployment and the settler over geth (gethChain: no mining).
func newGethRig(t *testing.T) *rig {
	t.Helper()
	g := startGeth(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	faucetKey, _ := crypto.GenerateKey()
	payeeKey, _ := crypto.GenerateKey()
	op := settlement.Transactor{Backend: g.client, Key: g.devKey}
	funds, _ := settlement.BaseUnits(1_000_000, 6)
	addrs, err := op.DeployDev(ctx, settlement.DevDeployment{Payee: crypto.PubkeyToAddress(payeeKey.PublicKey), Faucet: faucetKey, Funds: funds})
	if err != nil {
		t.Fatalf("deploy: %v", err)
	}
	// The faucet gives the collector gas money (the rig sends it 1 ETH).
	faucetAddr := crypto.PubkeyToAddress(faucetKey.PublicKey)
	eth := new(big.Int).Mul(big.NewInt(100), big.NewInt(1e18))
	if _, err := op.SendValue(ctx, &faucetAddr, eth, nil); err != nil {
		t.Fatal(err)
	}
	secret := []byte("x402-geth-dev-customer-ref-secret")
	s, err := settlement.New(ctx, settlement.Config{Test: &settlement.ChainConfig{RPCURL: g.url, ChainID: 1337, Contract: addrs.Contract,
		Token: addrs.Token, Payee: addrs.Payee, KeystoreFile: g.keyfile, Confirmations: 2, FlushInterval: 100 * time.Millisecond,
		PollInterval: 200 * time.Millisecond, CustomerRefSecret: secret}, Logger: zaptest.NewLogger(t).Named("settlement")})
	if err != nil {
		t.Fatalf("settlement.New: %v", err)
	}
	t.Cleanup(func() { s.Close() }) // after the engine's stop (cleanups run last first)
	sim := &settlement.Simulated{Settler: s, Backend: gethChain{g.client}, Addresses: addrs, OperatorKey: g.devKey, PayeeKey: payeeKey,
		FaucetKey: faucetKey, CustomerRefSecret: secret}
	r, err := finishRig(t, sim)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// recorder is a reverse proxy in front of the rig's server that keeps
// every PAYMENT-SIGNATURE it forwards: the official client's payment, to
// replay.
type recorder struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []string
}

func newRecorder(t *testing.T, target string) *recorder {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	rec.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if h := req.Header.Get(x402.HeaderPaymentSignature); h != "" {
			rec.mu.Lock()
			rec.seen = append(rec.seen, h)
			rec.mu.Unlock()
		}
		proxy.ServeHTTP(w, req)
	}))
	t.Cleanup(rec.srv.Close)
	return rec
}

func (rec *recorder) payments() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]string(nil), rec.seen...)
}

// payeeOwed is what the settlement contract owes its payee, in base units.
func (r *rig) payeeOwed() int64 {
	r.t.Helper()
	abi := bindings.NewSettleflowSettlement()
	out, err := r.backend.CallContract(context.Background(), ethereum.CallMsg{To: &r.sim.Addresses.Contract, Data: abi.PackPayeeOwed()}, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	v, err := abi.UnpackPayeeOwed(out)
	if err != nil {
		r.t.Fatal(err)
	}
	return v.Int64()
}

// settledCents is the charge the contract settled for workflow wf, read
// from the chain: the charge word tagged with wf's tag in its settlement's
// settle transaction (whose customer must be customer's reference), whose
// sequence the contract marks settled and not declined; in cents.
func (r *rig) settledCents(wf *settleflow.Workflow, customer string) int64 {
	r.t.Helper()
	ctx := context.Background()
	if wf.Settlement == nil {
		r.t.Fatalf("workflow %s has no settlement", wf.ID)
	}
	tx, _, err := r.backend.TransactionByHash(ctx, common.HexToHash(wf.Settlement.TxHash))
	if err != nil {
		r.t.Fatal(err)
	}
	parsed, err := bindings.SettleflowSettlementMetaData.ParseABI()
	if err != nil {
		r.t.Fatal(err)
	}
	m := parsed.Methods["settle"]
	if len(tx.Data()) < 4 || !bytes.Equal(tx.Data()[:4], m.ID) || *tx.To() != r.sim.Addresses.Contract {
		r.t.Fatalf("the settlement %s of %s is not a settle of the contract", wf.Settlement.TxHash, wf.ID)
	}
	args, err := m.Inputs.Unpack(tx.Data()[4:])
	if err != nil {
		r.t.Fatal(err)
	}
	customers, words := args[0].([][32]byte), args[1].([]*big.Int)
	c, err := r.engine.Customer(ctx, settleflow.Test, customer)
	if err != nil {
		r.t.Fatal(err)
	}
	ref := common.HexToHash(c.Deposit.CustomerRef)
	tag := settlement.WorkflowTag(wf.ID)
	var found []settlement.PackedCharge
	for _, w := range words {
		pc, err := settlement.UnpackCharge(w)
		if err != nil {
			r.t.Fatal(err)
		}
		if pc.Tag == tag {
			found = append(found, pc)
		}
	}
	if len(found) != 1 {
		r.t.Fatalf("the settlement %s holds %d charges tagged with %s, want 1", wf.Settlement.TxHash, len(found), wf.ID)
	}
	pc := found[0]
	if int(pc.Customer) >= len(customers) || customers[pc.Customer] != ref {
		r.t.Fatalf("the charge of %s in %s is not to %s's balance", wf.ID, wf.Settlement.TxHash, customer)
	}
	abi := bindings.NewSettleflowSettlement()
	seq := new(big.Int).SetUint64(pc.Sequence)
	for _, q := range []struct {
		data []byte
		want bool
	}{{abi.PackSettled(seq), true}, {abi.PackDeclined(seq), false}} {
		out, err := r.backend.CallContract(ctx, ethereum.CallMsg{To: &r.sim.Addresses.Contract, Data: q.data}, nil)
		if err != nil {
			r.t.Fatal(err)
		}
		if got := new(big.Int).SetBytes(out).Sign() != 0; got != q.want {
			r.t.Fatalf("the contract's settled/declined of sequence %d (%s): %v, want %v", pc.Sequence, wf.ID, got, q.want)
		}
	}
	return int64(pc.Cents)
}

// The official x402 client (node pay.mjs: @x402/fetch with @x402/evm,
// pinned) pays a fixed-price product by exact through the handler on a
// geth --dev node making a block a second, with the engine settling there
// at depth 2: the payment's transfer moved exactly the price from the
// wallet to the collector, the collector deposited it into the wallet's
// customer balance, the workflow ran and settled, and the charge the
// contract recorded (its WordSettled word), the customer's balance
// movement (the deposit less the charge: 0) and the payee's credit all
// equal the workflow's charge. The same PAYMENT-SIGNATURE again answers
// the same workflow and moves nothing; for another payload it is refused
// (402 invalid_exact_evm_nonce_already_used).
func TestGethDevOfficialClientPaysExact(t *testing.T) {
	start := time.Now()
	if os.Getenv("SETTLEFLOW_GETH") == "" {
		t.Skip("SETTLEFLOW_GETH is not set: build geth with settlement/scripts/install-geth.sh DIR and set SETTLEFLOW_GETH=DIR/geth to run the x402 geth --dev test")
	}
	officialClientDir(t)
	t.Parallel() // mostly waiting for geth's blocks
	r := newGethRig(t)
	ready := time.Since(start)
	wallet := crypto.PubkeyToAddress(r.buyer.PublicKey)
	customer := x402.CustomerID(wallet)
	rec := newRecorder(t, r.srv.URL)

	paidAt := time.Now()
	status, resp, purchase := officialPayAt(t, rec.srv.URL+"/x402/workflows", r.buyer, r.sim.Addresses.Token.Hex(), body, priceUnits)
	paid := time.Since(paidAt)
	got := struct {
		Status          int
		PaymentResponse *x402.SettlementResponse
		Body            x402.Purchase
	}{status, resp, purchase}
	if got.Status != http.StatusCreated || got.PaymentResponse == nil || !got.PaymentResponse.Success || got.Body.Workflow == nil ||
		got.PaymentResponse.Network != "eip155:1337" || got.PaymentResponse.Payer != wallet.Hex() {
		t.Fatalf("the official client got %d %+v", got.Status, got.PaymentResponse)
	}
	pays := rec.payments()
	if len(pays) != 1 {
		t.Fatalf("the official client sent %d PAYMENT-SIGNATUREs, want 1", len(pays))
	}
	wf := got.Body.Workflow
	if wf.CustomerID != customer || wf.Product != product || wf.Quoted.Amount != price {
		t.Fatalf("workflow %+v", wf)
	}
	if moved := r.transferred(got.PaymentResponse.Transaction, wallet, r.collector); moved != priceUnits {
		t.Fatalf("the payment's transfer moved %d base units from the wallet to the collector, want %d", moved, priceUnits)
	}

	settled := r.waitSettled(got.Body)
	charged := settled.Charged.Amount
	if charged != price {
		t.Fatalf("the workflow was charged %d, want the price %d", charged, price)
	}
	if settled.Settlement.ChainID != 1337 || settled.Settlement.Confirmations < 2 {
		t.Fatalf("settlement %+v", settled.Settlement)
	}
	// The chain's view: the contract recorded the workflow's charge, the
	// customer's balance was credited the price and debited the charge, the
	// payee is owed the charge, and the contract holds exactly that.
	if cents := r.settledCents(settled, customer); cents != charged {
		t.Fatalf("the contract settled %d cents for %s; the workflow's charge is %d", cents, wf.ID, charged)
	}
	if b := r.contractBalance(customer); b != priceUnits-charged*10_000 {
		t.Fatalf("the customer's balance is %d after the deposit of %d and the charge of %d cents", b, priceUnits, charged)
	}
	if owed := r.payeeOwed(); owed != charged*10_000 {
		t.Fatalf("the payee is owed %d base units, want the charge %d cents", owed, charged)
	}
	if held := r.balance(r.sim.Addresses.Contract); held != r.payeeOwed()+r.contractBalance(customer) {
		t.Fatalf("the contract holds %d, owes %d", held, r.payeeOwed()+r.contractBalance(customer))
	}
	if b := r.balance(wallet); b != buyerFunds-priceUnits {
		t.Fatalf("the wallet holds %d, want %d: its start less exactly the price", b, buyerFunds-priceUnits)
	}
	if b := r.balance(r.collector); b != 0 {
		t.Fatalf("the collector kept %d", b)
	}

	// The same PAYMENT-SIGNATURE again, straight to the server: the same
	// workflow, nothing moves.
	again := r.post(body, pays[0])
	if again.status != http.StatusCreated || again.purchase.Workflow.ID != wf.ID || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the replay answered %d %s", again.status, again.body)
	}
	other := r.post(`{"product": "summary", "payload": {"text": "another workflow"}}`, pays[0])
	if other.status != http.StatusPaymentRequired || !strings.Contains(string(other.body), x402.CodeNonceUsed) {
		t.Fatalf("the payment replayed for another payload answered %d %s", other.status, other.body)
	}
	if b := r.balance(wallet); b != buyerFunds-priceUnits {
		t.Fatalf("a replay moved money: the wallet holds %d", b)
	}
	if n := r.workflows(customer); n != 1 {
		t.Fatalf("%d workflows after the replays, want 1", n)
	}
	if b := r.balance(r.collector); b != 0 {
		t.Fatalf("the collector holds %d after the replays", b)
	}
	if owed := r.payeeOwed(); owed != charged*10_000 {
		t.Fatalf("the payee is owed %d after the replays", owed)
	}
	t.Logf("geth --dev: deployed and funded in %s; the official client's paid create answered in %s; settled at depth 2 %s after it; %s in all",
		ready.Round(time.Millisecond), paid.Round(time.Millisecond), time.Since(paidAt).Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}
