package x402_test

import (
	"net/http"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/settleflow/settleflow/x402"
)

// The official x402 client packages from npm (@x402/fetch with
// @x402/evm's exact scheme, unmodified, pinned in
// testdata/node/package-lock.json) pay a fixed-price product by exact on
// the simulated chain (eip155:1337), mining on demand: the keyless create's 402 is answered
// with a PAYMENT-SIGNATURE the server accepts, one workflow is created for
// the wallet's customer, the transfer read back from the chain moved the
// workflow's charge, and the charge settles from the deposit.
func TestOfficialClientPaysExact(t *testing.T) {
	// A chain that mines only on demand, as the reference server's
	// embedded one: the facilitator's Mine brings the deposit to its depth.
	officialClientDir(t)
	r := newRigOn(t, false)
	wallet := crypto.PubkeyToAddress(r.buyer.PublicKey)
	status, resp, purchase := officialPay(t, r, body, priceUnits)
	got := struct {
		Status          int
		PaymentResponse *x402.SettlementResponse
		Body            x402.Purchase
	}{status, resp, purchase}
	if got.Status != http.StatusCreated || got.PaymentResponse == nil || !got.PaymentResponse.Success || got.Body.Workflow == nil {
		t.Fatalf("the official client got %d %+v", got.Status, got.PaymentResponse)
	}
	wf := got.Body.Workflow
	if wf.CustomerID != x402.CustomerID(wallet) || wf.Product != product {
		t.Fatalf("workflow %+v", wf)
	}
	settled := r.waitSettled(got.Body)
	if settled.Charged == nil || settled.Charged.Amount != price {
		t.Fatalf("charged %+v, want %d", settled.Charged, price)
	}
	// The charge read back from the chain: the payment's transfer moved
	// the workflow's charge (in the token's base units) from the wallet.
	if moved := r.transferred(got.PaymentResponse.Transaction, wallet, r.collector); moved != settled.Charged.Amount*10_000 {
		t.Fatalf("the payment moved %d base units; the workflow's charge is %d cents", moved, settled.Charged.Amount)
	}
	if b := r.balance(wallet); b != buyerFunds-priceUnits {
		t.Fatalf("the wallet holds %d, want %d", b, buyerFunds-priceUnits)
	}
	if b := r.contractBalance(wf.CustomerID); b != 0 {
		t.Fatalf("the customer's balance is %d after the charge, want 0", b)
	}
	if n := r.workflows(wf.CustomerID); n != 1 {
		t.Fatalf("%d workflows, want 1", n)
	}
}
