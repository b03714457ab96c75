package dashboard

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
	"go.uber.org/zap/zaptest"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/portal"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/settlement/contracts/bindings"
)

// TestCustomerOwnerAndPortalInChromium drives a customer's page in headless
// Chromium (testdata/browser/portalops.mjs) against a dashboard and the
// customer portal served together, on the simulated chain's contract: the
// customer opened the portal once, its wallet became the owner
// (customer.owner_set), asked to withdraw 12.34 (customer.withdrawal_requested)
// and a second address was proposed as owner. The page shows the owner, the
// change proposed, the withdrawal and when it is due, the events and the
// portal's activity; "Preview portal" opens a read-only portal session,
// which counts as no session of the customer's. A screenshot of each step
// lands in -browser-out.
func TestCustomerOwnerAndPortalInChromium(t *testing.T) {
	node, out := BrowserSetup(t)
	ctx := context.Background()
	sim, err := settlement.NewSimulated(ctx, settlement.SimulatedOptions{WithdrawalNotice: time.Hour, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	f := newFixtureWith(t, func(o *settleflow.Options) {
		o.Settler = sim
		o.PollInterval, o.FundsPollInterval = 20*time.Millisecond, 20*time.Millisecond
	})
	if err := f.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// The dashboard and the portal on one origin, as the server mounts them.
	mux := http.NewServeMux()
	srv := httptest.NewUnstartedServer(mux)
	p, err := portal.New(ctx, portal.Options{Engine: f.engine, DB: f.h.opts.DB, Chain: sim, BaseURL: func() string { return srv.URL },
		Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	f.h.opts.Portal, f.h.opts.CustomerChain = PortalOf(p, f.h.opts.DB), ChainOf(sim)
	mux.Handle("/portal/", p)
	mux.Handle("/", f.h)
	srv.StartTLS()
	t.Cleanup(srv.Close)

	const customer = "cus_portal_ops"
	if _, err := f.engine.FundTestCustomer(ctx, customer, 5000); err != nil {
		t.Fatal(err)
	}
	// The customer opens the portal from a link of its own.
	ps, err := p.CreateSession(ctx, portal.SessionParams{Environment: settleflow.Test, CustomerID: customer})
	if err != nil {
		t.Fatal(err)
	}
	hc := srv.Client()
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	link, _ := url.Parse(ps.URL)
	resp, err := hc.PostForm(srv.URL+link.Path, url.Values{"token": {link.Query().Get("token")}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("the customer's sign-in: %s", resp.Status)
	}

	// Its wallet becomes the owner; it asks to withdraw 12.34.
	key, _ := crypto.GenerateKey()
	owner := crypto.PubkeyToAddress(key.PublicKey)
	setOwner(t, f.engine, customer, key)
	waitEvent(t, f.engine, sim, settleflow.EventCustomerOwnerSet)
	b := sim.Backend.Client()
	faucet := settlement.Transactor{Backend: b, Key: sim.FaucetKey, Mine: sim.Commit}
	if _, err := faucet.SendValue(ctx, &owner, big.NewInt(1e18), nil); err != nil {
		t.Fatal(err)
	}
	ref, _ := sim.CustomerRef(settleflow.Test, customer)
	wallet := settlement.Transactor{Backend: b, Key: key, Mine: sim.Commit}
	if _, err := wallet.Send(ctx, &sim.Addresses.Contract, bindings.NewSettleflowSettlement().PackRequestWithdrawal(common.HexToHash(ref), big.NewInt(1234*10_000))); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, f.engine, sim, settleflow.EventCustomerWithdrawalRequested)
	// A second address proposed (after the notice, unless the owner cancels).
	key2, _ := crypto.GenerateKey()
	next := crypto.PubkeyToAddress(key2.PublicKey)
	setOwner(t, f.engine, customer, key2)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if oc, err := sim.OwnerChange(ctx, settleflow.Test, customer); err == nil && oc != nil && oc.Next == next.Hex() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the owner change was not proposed on chain")
		}
	}

	signin, err := f.h.SignInLink(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "portalops.mjs")
	cmd.Dir = "testdata/browser"
	cmd.Env = append(os.Environ(), "BASE="+srv.URL, "LINK="+signin, "CUSTOMER="+customer, "OWNER="+owner.Hex(), "NEXT="+next.Hex(),
		"OUT="+out, "CHROMIUM=/usr/bin/chromium")
	got, err := cmd.CombinedOutput()
	t.Logf("browser:\n%s", got)
	if err != nil {
		t.Fatalf("the browser run failed: %v", err)
	}
	for _, name := range []string{"customer-owner", "portal-preview-link", "portal-preview"} {
		if fi, err := os.Stat(filepath.Join(out, name+".png")); err != nil || fi.Size() == 0 {
			t.Errorf("no screenshot %s.png: %v", name, err)
		}
	}
	// The preview is the operator's: still one session of the customer's.
	a, err := f.h.opts.Portal.Activity(ctx, settleflow.Test, customer)
	if err != nil || a.Sessions != 1 {
		t.Errorf("portal activity after the preview: %+v, %v; want the customer's one session", a, err)
	}
}

// setOwner sends key's grant as the customer's owner through the engine.
func setOwner(t *testing.T, e *settleflow.Engine, customer string, key *ecdsa.PrivateKey) {
	t.Helper()
	ctx := context.Background()
	g, err := e.CreateOwnerGrant(ctx, settleflow.OwnerGrantParams{Environment: settleflow.Test, CustomerID: customer,
		Address: crypto.PubkeyToAddress(key.PublicKey).Hex()})
	if err != nil {
		t.Fatal(err)
	}
	var td apitypes.TypedData
	if err := json.Unmarshal(g.TypedData, &td); err != nil {
		t.Fatal(err)
	}
	h, _, err := apitypes.TypedDataAndHash(td)
	if err != nil {
		t.Fatal(err)
	}
	sig, _ := crypto.Sign(h, key)
	sig[64] += 27
	if _, _, err := e.SetOwner(ctx, settleflow.SetOwnerParams{Environment: settleflow.Test, CustomerID: customer,
		Grant: settleflow.OwnerGrant{Owner: g.Address, Nonce: g.Nonce, Origin: g.Origin, Deadline: time.Unix(g.Deadline, 0).UTC(),
			Signature: hexutil.Encode(sig)}}); err != nil {
		t.Fatal(err)
	}
}

// waitEvent mines blocks until the engine wrote an event of typ.
func waitEvent(t *testing.T, e *settleflow.Engine, sim *settlement.Simulated, typ settleflow.EventType) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		pg, err := e.ListEvents(context.Background(), settleflow.EventListParams{Environment: settleflow.Test, Type: typ, Limit: 1})
		if err == nil && len(pg.Data) == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s event within 30s (%v)", typ, err)
		}
		sim.Commit() // the confirmation depth
	}
}
