package x402_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/x402"
)

const body = `{"product": "summary", "payload": {"text": "pay per outcome"}}`

// A wallet pays the fixed price by exact with a client that follows the
// spec: the 402 names the price, the retry creates one workflow for the
// wallet's customer, the transfer moved exactly the price from the wallet,
// the workflow is charged it from the deposit (the balance ends at 0) and
// the same payment again answers the same workflow and moves nothing.
func TestGoClientPaysExact(t *testing.T) {
	r := newRig(t)
	wallet := crypto.PubkeyToAddress(r.buyer.PublicKey)
	customer := x402.CustomerID(wallet)

	req := r.offer(body)
	if req.Scheme != "exact" || req.Network != "eip155:1337" || req.Amount != "10000000" ||
		req.PayTo != r.collector.Hex() || req.Asset != r.sim.Addresses.Token.Hex() ||
		req.Extra["name"] != "Settleflow Test USD" || req.Extra["version"] != "1" || req.Extra["product"] != product {
		t.Fatalf("requirements %+v", req)
	}
	pay := header(t, r.buyer, req, authorization(req), r.url)
	start := time.Now()
	a := r.post(body, pay)
	t.Logf("the paid create answered in %s (verify, transfer, deposit, its confirmation at depth 2 with a block every 150 ms, create)", time.Since(start).Round(time.Millisecond))
	if a.status != http.StatusCreated {
		t.Fatalf("paid create: %d %s", a.status, a.body)
	}
	if a.response == nil || !a.response.Success || a.response.Payer != wallet.Hex() || a.response.Network != "eip155:1337" ||
		a.response.Amount != "10000000" || a.response.Transaction == "" {
		t.Fatalf("PAYMENT-RESPONSE %+v", a.response)
	}
	wf := a.purchase.Workflow
	if wf.CustomerID != customer || wf.Product != product || wf.Quoted.Amount != price {
		t.Fatalf("workflow %+v", wf)
	}
	if got := r.transferred(a.response.Transaction, wallet, r.collector); got != priceUnits {
		t.Fatalf("the payment's transaction moved %d from the wallet to the collector, want %d", got, priceUnits)
	}
	settled := r.waitSettled(a.purchase)
	if settled.Charged == nil || settled.Charged.Amount != price {
		t.Fatalf("charged %+v, want %d", settled.Charged, price)
	}
	if got := r.balance(wallet); got != buyerFunds-priceUnits {
		t.Fatalf("the wallet holds %d, want %d", got, buyerFunds-priceUnits)
	}
	// The deposit paid the charge: nothing left in the balance, nothing
	// with the collector.
	if got := r.contractBalance(customer); got != 0 {
		t.Fatalf("the customer's contract balance is %d after the charge, want 0", got)
	}
	if got := r.balance(r.collector); got != 0 {
		t.Fatalf("the collector holds %d, want 0 (all deposited)", got)
	}

	// The same payment again: the same workflow, nothing moves.
	again := r.post(body, pay)
	if again.status != http.StatusCreated || again.purchase.Workflow.ID != wf.ID || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the same payment again: %d %s", again.status, again.body)
	}
	if got := r.balance(wallet); got != buyerFunds-priceUnits {
		t.Fatalf("the replay moved money: the wallet holds %d", got)
	}
	if n := r.workflows(customer); n != 1 {
		t.Fatalf("%d workflows, want 1", n)
	}

	// The access token reads this workflow only.
	other := a.purchase
	other.Workflow = &settleflow.Workflow{ID: "wf_00000000000000000000000000"}
	req2, _ := http.NewRequest("GET", r.srv.URL+"/x402/workflows/"+wf.ID, nil)
	req2.Header.Set("Authorization", "Bearer x4at_wrong")
	res, err := http.DefaultClient.Do(req2)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("a wrong access token: %d, want 404", res.StatusCode)
	}
}
