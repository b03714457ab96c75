package x402_test

import (
	"context"
	"math/big"
	"net/http"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/settlement/contracts/bindings"
	"github.com/settleflow/settleflow/x402"
)

// frontRun submits a signed exact authorization to the token itself, as a
// mempool observer (or anyone holding the header) can: the wallet's
// amount goes to the collector, and the server's own transfer would
// revert.
func (r *rig) frontRun(a *x402.ExactAuthorization) {
	r.t.Helper()
	key, _ := crypto.GenerateKey()
	addr := crypto.PubkeyToAddress(key.PublicKey)
	faucet := settlement.Transactor{Backend: r.backend, Key: r.sim.FaucetKey, Mine: r.sim.Commit}
	if _, err := faucet.SendValue(context.Background(), &addr, big.NewInt(1e17), nil); err != nil {
		r.t.Fatal(err)
	}
	v, rr, s := a.VRS()
	tr := settlement.Transactor{Backend: r.backend, Key: key, Mine: r.sim.Commit}
	if _, err := tr.Send(context.Background(), &r.sim.Addresses.Token,
		bindings.NewTestUSD().PackTransferWithAuthorization(a.From, a.To, a.Value, a.ValidAfter, a.ValidBefore, a.Nonce, v, rr, s)); err != nil {
		r.t.Fatal(err)
	}
}

// A payment that reached the collector without its deposit (here a
// front-runner submitted the buyer's authorization to the token; a crash
// between the transfer and the deposit leaves the same) is never lost:
// the buyer's retry of the same request makes the deposit and creates the
// workflow, charged once; a sweep credits one whose buyer never came back;
// each is credited once however often either runs. An authorization whose
// nonce the wallet spent on another transfer paid nothing, and nothing is
// credited for it.
func TestStrandedPaymentIsRecoveredAndSwept(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	wallet := crypto.PubkeyToAddress(r.buyer.PublicKey)
	customer := x402.CustomerID(wallet)
	req := r.offer(body)

	// Front-run, then the buyer's retry: recovered on the retry.
	a := authorization(req)
	h := header(t, r.buyer, req, a, r.url)
	r.frontRun(a)
	if b := r.balance(r.collector); b != priceUnits {
		t.Fatalf("the collector holds %d after the front-run, want %d", b, priceUnits)
	}
	got := r.post(body, h)
	if got.status != http.StatusCreated {
		t.Fatalf("the buyer's retry after a front-run: %d %s", got.status, got.body)
	}
	if wf := r.waitSettled(got.purchase); wf.Charged == nil || wf.Charged.Amount != price {
		t.Fatalf("charged %+v", wf.Charged)
	}
	if b := r.balance(r.collector); b != 0 {
		t.Fatalf("the collector holds %d", b)
	}
	if again := r.post(body, h); again.status != http.StatusCreated || again.purchase.Workflow.ID != got.purchase.Workflow.ID {
		t.Fatalf("the same request again: %d %s", again.status, again.body)
	}

	// Front-run and never retried: the sweep credits it, once.
	b := authorization(req)
	if err := b.Sign(r.buyer, domain(req)); err != nil {
		t.Fatal(err)
	}
	r.frontRun(b)
	sweep := func() []x402.Swept {
		t.Helper()
		h := r.handler
		swept, err := h.Sweep(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		return swept
	}
	swept := sweep()
	if len(swept) != 1 || swept[0].Payer != wallet || swept[0].Amount.Int64() != priceUnits {
		t.Fatalf("swept %+v, want the one stranded payment", swept)
	}
	if again := sweep(); len(again) != 0 {
		t.Fatalf("a second sweep credited %+v", again)
	}
	if bal := r.contractBalance(customer); bal != priceUnits {
		t.Fatalf("the wallet's balance is %d after the sweep, want %d", bal, priceUnits)
	}
	if c := r.balance(r.collector); c != 0 {
		t.Fatalf("the collector holds %d after the sweep", c)
	}

	// A nonce the wallet spent on a transfer elsewhere: not a payment.
	c := authorization(req)
	elsewhere := *c
	elsewhere.To = common.HexToAddress("0x000000000000000000000000000000000000bEEF")
	if err := elsewhere.Sign(r.buyer, domain(req)); err != nil {
		t.Fatal(err)
	}
	r.frontRun(&elsewhere)
	before := r.contractBalance(customer)
	refused := r.post(`{"product": "summary", "payload": {"text": "spent nonce"}}`, header(t, r.buyer, req, c, r.url))
	if refused.status != http.StatusPaymentRequired {
		t.Fatalf("an authorization whose nonce paid someone else: %d %s", refused.status, refused.body)
	}
	if len(sweep()) != 0 || r.contractBalance(customer) != before {
		t.Fatal("a transfer elsewhere was credited")
	}
	if n := r.workflows(customer); n != 1 {
		t.Fatalf("%d workflows, want 1", n)
	}
}
