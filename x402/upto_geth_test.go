package x402_test

import (
	"context"
	"crypto/rand"
	"math/big"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"go.uber.org/zap/zaptest"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/settlement/contracts/bindings"
	"github.com/settleflow/settleflow/storage/sqlite"
	"github.com/settleflow/settleflow/x402"
)

// The upto flow on geth --dev: the official client pays a capped product
// and a success fee (failing, then passing) through the x402 handler of an
// engine settling on a geth --dev node whose genesis holds Permit2 and the
// proxy; each charge read from the chain equals the workflow's, the rest
// of each permit stays with the wallet, the collector keeps nothing, and
// the settlement contract holds what it owes.
func TestUptoOnGethDev(t *testing.T) {
	genesis, err := settlement.GethDevGenesis()
	if err != nil {
		t.Fatal(err)
	}
	g := startGeth(t, genesis)
	client, url, devKey := g.client, g.url, g.devKey
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	payeeKey, _ := crypto.GenerateKey()
	faucetKey, _ := crypto.GenerateKey()
	dev := settlement.Transactor{Backend: client, Key: devKey}
	addrs, err := dev.DeployDev(ctx, settlement.DevDeployment{Payee: crypto.PubkeyToAddress(payeeKey.PublicKey), Faucet: faucetKey,
		Funds: big.NewInt(1_000_000 * 1_000_000)})
	if err != nil {
		t.Fatalf("deploy: %v", err)
	}
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	s, err := settlement.New(ctx, settlement.Config{Test: &settlement.ChainConfig{RPCURL: url, ChainID: 1337, Contract: addrs.Contract, Token: addrs.Token,
		Payee: crypto.PubkeyToAddress(payeeKey.PublicKey), Key: devKey, Confirmations: 2, FlushInterval: 100 * time.Millisecond,
		PollInterval: 200 * time.Millisecond, CustomerRefSecret: secret, FaucetKey: faucetKey}, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	collectorKey, _ := crypto.GenerateKey()
	collector := crypto.PubkeyToAddress(collectorKey.PublicKey)
	buyerKey, _ := crypto.GenerateKey()
	buyer := crypto.PubkeyToAddress(buyerKey.PublicKey)
	for _, to := range []common.Address{collector, buyer} {
		if _, err := dev.SendValue(ctx, &to, big.NewInt(1e18), nil); err != nil {
			t.Fatal(err)
		}
	}
	faucet := settlement.Transactor{Backend: client, Key: faucetKey}
	if _, err := faucet.Send(ctx, &addrs.Token, bindings.NewTestUSD().PackTransfer(buyer, big.NewInt(buyerFunds))); err != nil {
		t.Fatal(err)
	}
	maxUint := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
	if _, err := (settlement.Transactor{Backend: client, Key: buyerKey}).Send(ctx, &addrs.Token, bindings.NewTestUSD().PackApprove(settlement.Permit2Address, maxUint)); err != nil {
		t.Fatal(err)
	}

	fac, err := x402.NewFacilitator(ctx, x402.FacilitatorConfig{Backend: client, Collector: collectorKey, Token: addrs.Token, Contract: addrs.Contract})
	if err != nil {
		t.Fatal(err)
	}
	funding := x402.NewFundingSettler(s, fac, zaptest.NewLogger(t))
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "settleflow.db"), sqlite.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	products := settleflow.NewProducts()
	if err := registerUpto(products, nil); err != nil {
		t.Fatal(err)
	}
	engine, err := settleflow.New(settleflow.Options{Store: store, Settler: funding, Products: products, Logger: zaptest.NewLogger(t),
		FundsPollInterval: 100 * time.Millisecond, PollInterval: 50 * time.Millisecond, TestFaucet: -1,
		Notifier: settleflow.NotifierFunc(func(context.Context, []settleflow.Event) error { return nil })})
	if err != nil {
		t.Fatal(err)
	}
	funding.Attach(engine)
	if err := engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer engine.Stop(context.Background())
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	h, err := x402.New(x402.Config{Engine: engine, Facilitator: fac, Funding: funding, Environment: settleflow.Test,
		Products: []string{cappedProduct, feeProduct}, Wait: 90 * time.Second, BaseURL: srv.URL + "/x402", AccessSecret: secret,
		Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle("/x402/", http.StripPrefix("/x402", h))

	tokenBalance := func(a common.Address) int64 {
		b, err := settlement.TokenBalance(ctx, client, addrs.Token, a)
		if err != nil {
			t.Fatal(err)
		}
		return b.Int64()
	}
	spent := int64(0)
	for _, c := range uptoCases {
		body := uptoBody(c.product, c.name, c.resolve)
		status, resp, p := officialPayAt(t, srv.URL+"/x402/workflows", buyerKey, addrs.Token.Hex(), body, uptoQuote*10_000)
		if status != http.StatusCreated || p.Workflow == nil {
			t.Fatalf("%s: status %d", c.name, status)
		}
		wf := p.Workflow
		if wf.Status != settleflow.Settled || wf.Charged == nil || wf.Charged.Amount != c.charged {
			t.Fatalf("%s: workflow %s charged %+v, want Settled %d", c.name, wf.Status, wf.Charged, c.charged)
		}
		if resp == nil || !resp.Success || resp.Amount != strconv.FormatInt(c.charged*10_000, 10) {
			t.Fatalf("%s: PAYMENT-RESPONSE %+v", c.name, resp)
		}
		spent += c.charged * 10_000
		if b := tokenBalance(buyer); b != buyerFunds-spent {
			t.Fatalf("%s: the wallet holds %d, want %d", c.name, b, buyerFunds-spent)
		}
		if b := tokenBalance(collector); b != 0 {
			t.Fatalf("%s: the collector holds %d", c.name, b)
		}
	}
	// The contract holds what it owes: its customers' balances (this
	// wallet's is 0: every deposit was charged) and the payee's due.
	held := tokenBalance(addrs.Contract)
	out, err := client.CallContract(ctx, ethereum.CallMsg{To: &addrs.Contract, Data: bindings.NewSettleflowSettlement().PackPayeeOwed()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	owed, _ := bindings.NewSettleflowSettlement().UnpackPayeeOwed(out)
	if owed.Int64() != spent || held != spent {
		t.Fatalf("the contract holds %d and owes the payee %d; the wallet paid %d", held, owed, spent)
	}
}
