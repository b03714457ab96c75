package x402_test

import (
	"context"
	"math/big"
	"net/http"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/x402"
)

// An attacker who holds a wallet's PAYMENT-SIGNATURE (a proxy that logs
// it, or the server's own transfer seen in the mempool) submits it to the
// token first: the transfer lands with the collector, which deposits
// nothing. When the wallet's customer balance holds money of its own (here
// a refund of its earlier workflow), the server must not answer the
// authorization with a workflow charged to that balance: the wallet would
// pay twice for one workflow (the authorization's amount, stranded with
// the collector, and the balance), and the PAYMENT-RESPONSE would say the
// authorization paid it. Either the request is refused (402
// invalid_exact_evm_nonce_already_used) and the balance is untouched, or
// the server credits the front-run payment to the wallet's balance before
// it creates the workflow, so that the balance is untouched all the same
// and nothing is left with the collector.
func TestFrontRunSpendsNoBalance(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	wallet := crypto.PubkeyToAddress(r.buyer.PublicKey)
	customer := x402.CustomerID(wallet)

	// A first workflow, settled and refunded in full: its price is back in
	// the wallet's customer balance.
	req := r.offer(body)
	first := r.post(body, header(t, r.buyer, req, authorization(req), r.url))
	if first.status != http.StatusCreated {
		t.Fatalf("the first paid create: %d %s", first.status, first.body)
	}
	r.waitSettled(first.purchase)
	rf, _, err := r.engine.Refund(ctx, settleflow.RefundParams{Environment: settleflow.Test, WorkflowID: first.purchase.Workflow.ID})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		got, err := r.engine.FetchRefund(ctx, settleflow.Test, rf.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status == settleflow.RefundSucceeded {
			break
		}
		if got.Status == settleflow.RefundFailed || time.Now().After(deadline) {
			t.Fatalf("the refund is %s", got.Status)
		}
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		c, err := r.engine.Customer(ctx, settleflow.Test, customer)
		if err != nil {
			t.Fatal(err)
		}
		if c.Balance.Available == price {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the refunded balance is %+v, want %d available", c.Balance, price)
		}
	}
	if got := r.contractBalance(customer); got != priceUnits {
		t.Fatalf("the wallet's balance holds %d after the refund, want %d", got, priceUnits)
	}

	// The wallet's next payment, front-run by the attacker.
	other := `{"product": "summary", "payload": {"text": "the second workflow"}}`
	req = r.offer(other)
	a := authorization(req)
	pay := header(t, r.buyer, req, a, r.url)
	attackerKey, _ := crypto.GenerateKey()
	attackerAddr := crypto.PubkeyToAddress(attackerKey.PublicKey)
	faucet := settlement.Transactor{Backend: r.backend, Key: r.sim.FaucetKey, Mine: r.sim.Commit}
	if _, err := faucet.SendValue(ctx, &attackerAddr, big1e17(), nil); err != nil {
		t.Fatal(err)
	}
	attacker := settlement.Transactor{Backend: r.backend, Key: attackerKey, Mine: r.sim.Commit}
	if _, err := attacker.Send(ctx, &r.sim.Addresses.Token, frontRun(a)); err != nil {
		t.Fatalf("the front-run: %v", err)
	}
	if got := r.balance(wallet); got != buyerFunds-2*priceUnits {
		t.Fatalf("the wallet holds %d after the front-run, want %d", got, buyerFunds-2*priceUnits)
	}

	got := r.post(other, pay)
	switch got.status {
	case http.StatusPaymentRequired:
		if got.code() != x402.CodeNonceUsed {
			t.Fatalf("the front-run payment answered %d %s, want 402 %s", got.status, got.body, x402.CodeNonceUsed)
		}
		if n := r.workflows(customer); n != 1 {
			t.Fatalf("%d workflows after a refused payment, want 1", n)
		}
	case http.StatusCreated:
		r.waitSettled(got.purchase)
		if n := r.workflows(customer); n != 2 {
			t.Fatalf("%d workflows, want 2", n)
		}
	default:
		t.Fatalf("the front-run payment answered %d %s", got.status, got.body)
	}
	time.Sleep(500 * time.Millisecond) // any charge of the balance on its way
	collector := r.balance(r.collector)
	if b := r.contractBalance(customer); b != priceUnits {
		t.Fatalf("answered %d; the wallet's balance holds %d, was %d before the front-run payment (the collector holds %d): the balance paid for a workflow the authorization was sent for",
			got.status, b, priceUnits, collector)
	}
	if got.status == http.StatusCreated && collector != 0 {
		t.Fatalf("a workflow was created and the front-run payment is still with the collector (%d)", collector)
	}
	t.Logf("the front-run payment answered %d %s; the collector holds %d", got.status, got.code(), collector)
}

func big1e17() *big.Int { return big.NewInt(1e17) }
