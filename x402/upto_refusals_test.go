package x402_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/json"
	"math/big"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/x402"
)

// permit is what a wallet signs for an upto offer: the offer's maximum to
// its payTo, settled by its facilitator, valid from now for the offer's
// timeout.
func permit(req x402.PaymentRequirements) *x402.UptoAuthorization {
	max, _ := new(big.Int).SetString(req.Amount, 10)
	n := make([]byte, 32)
	_, _ = rand.Read(n)
	now := time.Now().Unix()
	return &x402.UptoAuthorization{Token: common.HexToAddress(req.Asset), Max: max, Spender: settlement.UptoProxyAddress,
		Nonce: new(big.Int).SetBytes(n), Deadline: big.NewInt(now + req.MaxTimeoutSeconds),
		To: common.HexToAddress(req.PayTo), Facilitator: common.HexToAddress(req.Extra["facilitatorAddress"]), ValidAfter: big.NewInt(0)}
}

// uptoHeader signs a with key on req's chain and wraps it for accepted.
func uptoHeader(t *testing.T, key *ecdsa.PrivateKey, accepted x402.PaymentRequirements, a *x402.UptoAuthorization) string {
	t.Helper()
	if err := a.Sign(key, big.NewInt(1337)); err != nil {
		t.Fatal(err)
	}
	return uptoHeaderOf(t, accepted, a)
}

func uptoHeaderOf(t *testing.T, accepted x402.PaymentRequirements, a *x402.UptoAuthorization) string {
	t.Helper()
	raw, _ := json.Marshal(a.Wire())
	h, err := x402.EncodeHeader(x402.PaymentPayload{X402Version: 2, Accepted: &accepted, Payload: raw})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func uptoBody(product, text string, resolve bool) string {
	return `{"product":"` + product + `","payload":{"text":"` + text + `","resolve":` + strconv.FormatBool(resolve) + `}}`
}

// Every upto permit that does not pay this offer is refused with its
// reason and nothing moves: the wallet keeps its tokens, Permit2 keeps the
// nonce unused, the wallet's customer has no workflow.
func TestUptoRefusals(t *testing.T) {
	r := newUptoRig(t, true)
	wallet := crypto.PubkeyToAddress(r.buyer.PublicKey)
	customer := x402.CustomerID(wallet)
	b := uptoBody(cappedProduct, "refused", true)
	req := r.offer(b)
	attacker := common.HexToAddress("0x000000000000000000000000000000000000dEaD")
	otherKey, _ := crypto.GenerateKey()
	unapproved, _ := crypto.GenerateKey()
	r.fund(crypto.PubkeyToAddress(unapproved.PublicKey), buyerFunds)
	poor, _ := crypto.GenerateKey()
	r.approvePermit2(poor)

	type maker = func(t *testing.T) (string, *x402.UptoAuthorization)
	// signed is this offer's permit with one field changed, then signed
	// by the buyer; alteredAfterSigning changes it after.
	signed := func(change func(a *x402.UptoAuthorization)) maker {
		return func(t *testing.T) (string, *x402.UptoAuthorization) {
			a := permit(req)
			change(a)
			return uptoHeader(t, r.buyer, req, a), a
		}
	}
	alteredAfterSigning := func(change func(a *x402.UptoAuthorization)) maker {
		return func(t *testing.T) (string, *x402.UptoAuthorization) {
			a := permit(req)
			if err := a.Sign(r.buyer, big.NewInt(1337)); err != nil {
				t.Fatal(err)
			}
			change(a)
			return uptoHeaderOf(t, req, a), a
		}
	}
	cases := []struct {
		name   string
		status int
		code   string
		make   maker
	}{
		{"a maximum below the quote", 402, x402.CodeAmount, signed(func(a *x402.UptoAuthorization) { a.Max = big.NewInt(1) })},
		{"another token", 402, x402.CodeAsset, signed(func(a *x402.UptoAuthorization) { a.Token = attacker })},
		{"another recipient", 402, x402.CodeRecipient, signed(func(a *x402.UptoAuthorization) { a.To = attacker })},
		{"another facilitator", 402, x402.CodeUptoFacilitator, signed(func(a *x402.UptoAuthorization) { a.Facilitator = attacker })},
		{"another spender", 402, x402.CodeUptoSpender, signed(func(a *x402.UptoAuthorization) { a.Spender = attacker })},
		{"another network in the requirements", 402, x402.CodeNetwork, func(t *testing.T) (string, *x402.UptoAuthorization) {
			acc := req
			acc.Network = "eip155:1"
			return uptoHeader(t, r.buyer, acc, permit(req)), nil
		}},
		{"a signature for another chain", 402, x402.CodeSignature, func(t *testing.T) (string, *x402.UptoAuthorization) {
			a := permit(req)
			if err := a.Sign(r.buyer, big.NewInt(1)); err != nil {
				t.Fatal(err)
			}
			return uptoHeaderOf(t, req, a), a
		}},
		{"a signature by another wallet", 402, x402.CodeSignature, func(t *testing.T) (string, *x402.UptoAuthorization) {
			a := permit(req)
			if err := a.Sign(otherKey, big.NewInt(1337)); err != nil {
				t.Fatal(err)
			}
			a.From = wallet
			return uptoHeaderOf(t, req, a), a
		}},
		{"a nonce altered after signing", 402, x402.CodeSignature, alteredAfterSigning(func(a *x402.UptoAuthorization) { a.Nonce = new(big.Int).Add(a.Nonce, big.NewInt(1)) })},
		{"a deadline extended after signing", 402, x402.CodeSignature, alteredAfterSigning(func(a *x402.UptoAuthorization) { a.Deadline = new(big.Int).Add(a.Deadline, big.NewInt(3600)) })},
		{"an expired permit", 402, x402.CodeValidBefore, signed(func(a *x402.UptoAuthorization) { a.Deadline = big.NewInt(time.Now().Unix() - 1) })},
		{"a deadline too soon for the work", 402, x402.CodeValidBefore, signed(func(a *x402.UptoAuthorization) { a.Deadline = big.NewInt(time.Now().Unix() + 60) })},
		{"a permit not yet valid", 402, x402.CodeValidAfter, signed(func(a *x402.UptoAuthorization) { a.ValidAfter = big.NewInt(time.Now().Unix() + 3600) })},
		{"a wallet that has not approved Permit2", 412, x402.CodePermit2Allowance, func(t *testing.T) (string, *x402.UptoAuthorization) {
			a := permit(req)
			return uptoHeader(t, unapproved, req, a), a
		}},
		{"a wallet without the funds", 402, x402.CodeInsufficientFunds, func(t *testing.T) (string, *x402.UptoAuthorization) {
			a := permit(req)
			return uptoHeader(t, poor, req, a), a
		}},
		{"a malformed permit", 400, x402.CodeMalformed, func(t *testing.T) (string, *x402.UptoAuthorization) {
			acc := req
			h, _ := x402.EncodeHeader(x402.PaymentPayload{X402Version: 2, Accepted: &acc, Payload: json.RawMessage(`{"signature":"0x00","permit2Authorization":{}}`)})
			return h, nil
		}},
	}
	before := r.balance(wallet)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, a := c.make(t)
			got := r.post(b, h)
			if got.status != c.status {
				t.Fatalf("status %d, want %d: %s", got.status, c.status, got.body)
			}
			code := got.err.Error.Code
			if got.status == 402 {
				var pr struct {
					Code string `json:"code"`
				}
				_ = json.Unmarshal(got.body, &pr)
				code = pr.Code
				if got.required == nil || got.required.Error == "" {
					t.Fatalf("a 402 without PAYMENT-REQUIRED and its reason: %s", got.body)
				}
			}
			if code != c.code {
				t.Fatalf("code %q, want %q: %s", code, c.code, got.body)
			}
			if a != nil {
				if used, err := r.fac.Permit2NonceUsed(context.Background(), a.From, a.Nonce); err != nil || used {
					t.Fatalf("the nonce is used (%v, %v)", used, err)
				}
			}
		})
	}
	if b := r.balance(wallet); b != before {
		t.Fatalf("the wallet holds %d, held %d", b, before)
	}
	if n := r.workflows(customer); n != 0 {
		t.Fatalf("%d workflows for refused permits", n)
	}
}

// One permit pays for one workflow: the same request again answers the
// same workflow (however many send it at once), another request with it
// is refused, and once its charge is taken it cannot be used again; a
// permit whose wallet is drained before its workflow's charge settles
// takes nothing, and the workflow's charge fails (insufficient_funds).
func TestUptoReplayAndDrain(t *testing.T) {
	r := newUptoRig(t, true)
	wallet := crypto.PubkeyToAddress(r.buyer.PublicKey)
	b := uptoBody(cappedProduct, "once", true)
	req := r.offer(b)
	a := permit(req)
	h := uptoHeader(t, r.buyer, req, a)

	// Concurrent double use: one workflow.
	const n = 6
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got := r.post(b, h)
			if got.status != http.StatusCreated {
				t.Errorf("send %d: %d %s", i, got.status, got.body)
				return
			}
			ids[i] = got.purchase.Workflow.ID
		}()
	}
	wg.Wait()
	for i := range ids {
		if ids[i] != ids[0] {
			t.Fatalf("one permit made workflows %v", ids)
		}
	}
	if got := r.post(uptoBody(feeProduct, "once", true), h); got.status != 402 {
		t.Fatalf("the permit for another request: %d %s", got.status, got.body)
	}
	// Its charge taken (waited for by the paid create), the permit is used.
	if n := r.workflows(x402.CustomerID(wallet)); n != 1 {
		t.Fatalf("%d workflows, want 1", n)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		wf, err := r.engine.Fetch(context.Background(), settleflow.Test, ids[0])
		if err != nil {
			t.Fatal(err)
		}
		if wf.Status.Terminal() {
			if wf.Status != settleflow.Settled || wf.Charged.Amount != cappedCharge {
				t.Fatalf("the workflow ended %s charged %+v", wf.Status, wf.Charged)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %s", wf.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if b := r.balance(wallet); b != buyerFunds-cappedCharge*10_000 {
		t.Fatalf("the wallet holds %d, want %d", b, buyerFunds-cappedCharge*10_000)
	}
	if got := r.post(uptoBody(feeProduct, "again", true), h); got.status != 402 {
		t.Fatalf("a used permit for another request: %d %s", got.status, got.body)
	}
	// The same request again once the permit's deadline leaves too little
	// room (13 hours on): its workflow, not a 402 inviting a new permit.
	r.skew.Store(int64(13 * time.Hour))
	if got := r.post(b, h); got.status != http.StatusCreated || got.purchase.Workflow.ID != ids[0] || got.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the permit again after its deadline: %d %s, want workflow %s replayed", got.status, got.body, ids[0])
	}
	if got := r.post(uptoBody(feeProduct, "later", true), h); got.status != 402 {
		t.Fatalf("the permit for another request after its deadline: %d %s", got.status, got.body)
	}
	r.skew.Store(0)
	if n := r.workflows(x402.CustomerID(wallet)); n != 1 {
		t.Fatalf("%d workflows, want 1", n)
	}

}

// A wallet drained between its paid create and its workflow's charge:
// the permit can no longer be settled, nothing is taken, and the
// workflow's charge fails (insufficient_funds) instead of settling unpaid.
func TestUptoWalletDrainedBeforeTheCharge(t *testing.T) {
	gate := make(chan struct{})
	r := newUptoRigGated(t, true, gate)
	wallet := crypto.PubkeyToAddress(r.buyer.PublicKey)
	b := uptoBody(cappedProduct, "wait", true)
	req := r.offer(b)
	a := permit(req)
	h := uptoHeader(t, r.buyer, req, a)
	answered := make(chan *answer, 1)
	go func() { answered <- r.post(b, h) }()
	// The workflow exists (the create is waiting for its outcome): drain
	// the wallet, then let the work finish.
	deadline := time.Now().Add(30 * time.Second)
	for r.workflows(x402.CustomerID(wallet)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no workflow")
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.spend(r.buyer, buyerFunds)
	close(gate)
	got := <-answered
	if got.status != http.StatusCreated {
		t.Fatalf("%d %s", got.status, got.body)
	}
	wf := got.purchase.Workflow
	if wf.Status != settleflow.Failed || wf.Failure == nil || wf.Failure.Code != settleflow.FailureInsufficientFunds {
		t.Fatalf("the workflow ended %s (%+v), want Failed insufficient_funds", wf.Status, wf.Failure)
	}
	if got.response == nil || got.response.Success || got.response.ErrorReason != string(settleflow.FailureInsufficientFunds) || got.response.Amount != "0" {
		t.Fatalf("PAYMENT-RESPONSE %+v, want no success, insufficient_funds, nothing taken", got.response)
	}
	if used, err := r.fac.Permit2NonceUsed(context.Background(), wallet, a.Nonce); err != nil || used {
		t.Fatalf("the permit's nonce is used (%v, %v)", used, err)
	}
	if b := r.balance(r.collector); b != 0 {
		t.Fatalf("the collector holds %d", b)
	}
	if b := r.contractBalance(wf.CustomerID); b != 0 {
		t.Fatalf("the customer's balance is %d", b)
	}
	// The same request again, the wallet still empty and the permit
	// unused: its workflow answers, not a 402 for funds it no longer owes.
	again := r.post(b, h)
	if again.status != http.StatusCreated || again.purchase.Workflow.ID != wf.ID || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the request again: %d %s, want its workflow %s replayed", again.status, again.body, wf.ID)
	}
}
