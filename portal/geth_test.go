package portal

import (
	"context"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
	"go.uber.org/zap/zaptest"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/gethdev"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/settlement/contracts/bindings"
)

// depositPath is the page's connect and deposit of 25.00, as its script
// does them, for customerID with wallet w; it returns once the deposit is
// available, with the states the status showed on the way.
func depositPath(t *testing.T, f *fixture, w wallet, customerID string) []string {
	t.Helper()
	b := f.browser()
	if a := b.signin(f.link(settleflow.Test, customerID)); a.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", a.status)
	}
	if a, _ := b.connect(t, w); a.status != 200 {
		t.Fatalf("connect: %d %s", a.status, a.body)
	}
	waitFor(t, 60*time.Second, "the owner set", func() bool { return strings.EqualFold(f.owner(customerID), w.addr.Hex()) })
	a, prep := b.post("/portal/deposit/prepare", map[string]string{"from": w.addr.Hex(), "amount": "25.00"})
	if a.status != 200 {
		t.Fatalf("prepare: %d %s", a.status, a.body)
	}
	m := prep["authorization"].(map[string]any)
	m["signature"] = signTyped(t, w.key, rawJSON(prep["typedData"]))
	if a, _ := b.post("/portal/deposit", m); a.status != 200 {
		t.Fatalf("relay: %d %s", a.status, a.body)
	}
	var states []string
	waitFor(t, 90*time.Second, "the deposit available", func() bool {
		st := b.get("/portal/status")
		for _, s := range []string{"pending", "confirming", "confirmed", "available"} {
			if strings.Contains(st.body, `"state":"`+s+`"`) && (len(states) == 0 || states[len(states)-1] != s) {
				states = append(states, s)
			}
		}
		return strings.Contains(st.body, `"state":"available"`) && strings.Contains(st.body, `"available":2500`)
	})
	return states
}

// TestDepositPathOnSimulatedChain is the deposit path on the embedded
// chain (the browser test drives the same through the page).
func TestDepositPathOnSimulatedChain(t *testing.T) {
	f := newFixture(t, nil)
	states := depositPath(t, f, f.wallet(5000), "cus_path")
	t.Logf("states: %v", states)
}

// TestDepositPathOnGethDev is the same deposit path on geth --dev: a real
// node, its own blocks every second, the operator's relayed transaction
// mined and followed at depth 2.
func TestDepositPathOnGethDev(t *testing.T) {
	g := gethdev.Start(t, gethdev.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	client, url := g.Client, g.URL
	files := []string{g.KeyFile}
	payeeKey, _ := crypto.GenerateKey()
	faucetKey, _ := crypto.GenerateKey()
	tr := settlement.Transactor{Backend: client, Key: g.DevKey}
	funds, _ := settlement.BaseUnits(1_000_000, 6)
	addrs, err := tr.DeployDev(ctx, settlement.DevDeployment{Payee: crypto.PubkeyToAddress(payeeKey.PublicKey), Faucet: faucetKey, Funds: funds})
	if err != nil {
		t.Fatalf("deploy: %v", err)
	}
	s, err := settlement.New(ctx, settlement.Config{Test: &settlement.ChainConfig{RPCURL: url, ChainID: 1337, Contract: addrs.Contract,
		Token: addrs.Token, Payee: addrs.Payee, KeystoreFile: files[0], Confirmations: 2, FlushInterval: 100 * time.Millisecond,
		PollInterval: 200 * time.Millisecond, CustomerRefSecret: []byte("portal-geth-customer-ref-secret!"), FaucetKey: faucetKey},
		Logger: zaptest.NewLogger(t).Named("settlement")})
	if err != nil {
		t.Fatalf("settlement.New: %v", err)
	}
	defer s.Close()
	f := newFixtureOn(t, s, nil)
	// The customer's wallet holds test dollars (from the faucet) and no
	// gas: connecting and depositing cost it nothing.
	key, _ := crypto.GenerateKey()
	w := wallet{key: key, addr: crypto.PubkeyToAddress(key.PublicKey)}
	v, _ := settlement.BaseUnits(5000, 6)
	faucet := settlement.Transactor{Backend: client, Key: faucetKey}
	if _, err := faucet.Send(ctx, &addrs.Token, bindings.NewTestUSD().PackTransfer(w.addr, v)); err != nil {
		t.Fatal(err)
	}
	operatorBefore, _ := client.BalanceAt(ctx, addrs.Operator, nil)
	states := depositPath(t, f, w, "cus_geth")
	operatorAfter, _ := client.BalanceAt(ctx, addrs.Operator, nil)
	if eth, _ := client.BalanceAt(ctx, w.addr, nil); eth.Sign() != 0 {
		t.Errorf("the wallet paid gas: %s wei left of 0", eth)
	}
	t.Logf("geth --dev: states %v; the operator paid %s wei for the connect and the relay; relay gas %v",
		states, new(big.Int).Sub(operatorBefore, operatorAfter), f.metric("gasUsed", "test"))
}
