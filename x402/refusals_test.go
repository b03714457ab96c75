package x402_test

import (
	"context"
	"encoding/base64"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/settleflow/settleflow/x402"
)

// Every payment that does not pay this offer is refused with its reason
// (402 with a fresh PAYMENT-REQUIRED naming it, or 400 for what is
// malformed), and nothing moves: the wallet keeps its tokens, the
// authorization's nonce stays unused, the collector receives nothing and
// the wallet's customer has no workflow.
func TestRefusals(t *testing.T) {
	r := newRig(t)
	wallet := crypto.PubkeyToAddress(r.buyer.PublicKey)
	customer := x402.CustomerID(wallet)
	req := r.offer(body)
	attacker := common.HexToAddress("0x000000000000000000000000000000000000dEaD")
	otherKey, _ := crypto.GenerateKey()

	cases := []struct {
		name   string
		status int
		code   string
		// make returns the header; it may change the requirements the
		// payment accepts and the authorization before signing.
		make func(t *testing.T) (string, *x402.ExactAuthorization)
	}{
		{"another amount", 402, x402.CodeAmount, func(t *testing.T) (string, *x402.ExactAuthorization) {
			acc := req
			acc.Amount = "1"
			a := authorization(acc)
			return header(t, r.buyer, acc, a, r.url), a
		}},
		{"an authorization of another value", 402, x402.CodeAmount, func(t *testing.T) (string, *x402.ExactAuthorization) {
			a := authorization(req)
			a.Value = big.NewInt(1)
			return header(t, r.buyer, req, a, r.url), a
		}},
		{"another asset", 402, x402.CodeAsset, func(t *testing.T) (string, *x402.ExactAuthorization) {
			acc := req
			acc.Asset = attacker.Hex()
			a := authorization(acc)
			return header(t, r.buyer, acc, a, r.url), a
		}},
		{"another network", 402, x402.CodeNetwork, func(t *testing.T) (string, *x402.ExactAuthorization) {
			acc := req
			acc.Network = "eip155:1"
			a := authorization(acc)
			return header(t, r.buyer, acc, a, r.url), a
		}},
		{"a signature for another chain", 402, x402.CodeSignature, func(t *testing.T) (string, *x402.ExactAuthorization) {
			a := authorization(req)
			d := domain(req)
			d.ChainID = big.NewInt(1)
			if err := a.Sign(r.buyer, d); err != nil {
				t.Fatal(err)
			}
			return headerOf(t, req, a, r.url), a
		}},
		{"another payee in the requirements", 402, x402.CodeRecipient, func(t *testing.T) (string, *x402.ExactAuthorization) {
			acc := req
			acc.PayTo = attacker.Hex()
			a := authorization(acc)
			return header(t, r.buyer, acc, a, r.url), a
		}},
		{"an authorization to another payee", 402, x402.CodeRecipient, func(t *testing.T) (string, *x402.ExactAuthorization) {
			a := authorization(req)
			a.To = attacker
			return header(t, r.buyer, req, a, r.url), a
		}},
		{"another resource", 402, x402.CodeResource, func(t *testing.T) (string, *x402.ExactAuthorization) {
			a := authorization(req)
			return header(t, r.buyer, req, a, "https://elsewhere.example/x402/workflows"), a
		}},
		{"another product", 402, x402.CodeResource, func(t *testing.T) (string, *x402.ExactAuthorization) {
			acc := req
			acc.Extra = map[string]string{"name": req.Extra["name"], "version": req.Extra["version"], "product": notForSale}
			a := authorization(acc)
			return header(t, r.buyer, acc, a, r.url), a
		}},
		{"expired", 402, x402.CodeValidBefore, func(t *testing.T) (string, *x402.ExactAuthorization) {
			a := authorization(req)
			a.ValidBefore = big.NewInt(time.Now().Unix() - 1)
			return header(t, r.buyer, req, a, r.url), a
		}},
		{"expiring before it can settle", 402, x402.CodeValidBefore, func(t *testing.T) (string, *x402.ExactAuthorization) {
			a := authorization(req)
			a.ValidBefore = big.NewInt(time.Now().Unix() + 2)
			return header(t, r.buyer, req, a, r.url), a
		}},
		{"not yet valid", 402, x402.CodeValidAfter, func(t *testing.T) (string, *x402.ExactAuthorization) {
			a := authorization(req)
			a.ValidAfter = big.NewInt(time.Now().Unix() + 120)
			return header(t, r.buyer, req, a, r.url), a
		}},
		{"signed by another wallet", 402, x402.CodeSignature, func(t *testing.T) (string, *x402.ExactAuthorization) {
			a := authorization(req)
			if err := a.Sign(otherKey, domain(req)); err != nil {
				t.Fatal(err)
			}
			a.From = wallet
			return headerOf(t, req, a, r.url), a
		}},
		{"not base64", 400, x402.CodeMalformed, func(t *testing.T) (string, *x402.ExactAuthorization) {
			return "not base64!", nil
		}},
		{"not an object", 400, x402.CodeMalformed, func(t *testing.T) (string, *x402.ExactAuthorization) {
			return base64.StdEncoding.EncodeToString([]byte(`[1,2]`)), nil
		}},
		{"an unknown field", 400, x402.CodeMalformed, func(t *testing.T) (string, *x402.ExactAuthorization) {
			h := header(t, r.buyer, req, authorization(req), r.url)
			raw, _ := base64.StdEncoding.DecodeString(h)
			raw = []byte(strings.Replace(string(raw), `{"x402Version":2`, `{"x402Version":2,"extra":1`, 1))
			return base64.StdEncoding.EncodeToString(raw), nil
		}},
		{"version 1", 400, x402.CodeVersion, func(t *testing.T) (string, *x402.ExactAuthorization) {
			h := header(t, r.buyer, req, authorization(req), r.url)
			raw, _ := base64.StdEncoding.DecodeString(h)
			raw = []byte(strings.Replace(string(raw), `"x402Version":2`, `"x402Version":1`, 1))
			return base64.StdEncoding.EncodeToString(raw), nil
		}},
		{"a short signature", 400, x402.CodeMalformed, func(t *testing.T) (string, *x402.ExactAuthorization) {
			h := header(t, r.buyer, req, authorization(req), r.url)
			raw, _ := base64.StdEncoding.DecodeString(h)
			i := strings.Index(string(raw), `"signature":"0x`) + len(`"signature":"0x`)
			raw = append(raw[:i:i], raw[i+2:]...)
			return base64.StdEncoding.EncodeToString(raw), nil
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, a := c.make(t)
			got := r.post(body, h)
			if got.status != c.status || got.err.Error.Code != c.code && (got.required == nil || got.required.Error == "") {
				t.Fatalf("answered %d %s, want %d %s", got.status, got.body, c.status, c.code)
			}
			if c.status == 402 {
				if got.required == nil || got.required.Error == "" || !strings.Contains(string(got.body), c.code) {
					t.Fatalf("a 402 without PAYMENT-REQUIRED naming %s: %s", c.code, got.body)
				}
			} else if got.err.Error.Code != c.code {
				t.Fatalf("answered %d code %q, want %q: %s", got.status, got.err.Error.Code, c.code, got.body)
			}
			r.nothingMoved(t, wallet, customer, a)
		})
	}
}

// nothingMoved checks the wallet holds all its funds, the collector
// nothing, the customer no workflow, and a's nonce is unused.
func (r *rig) nothingMoved(t *testing.T, wallet common.Address, customer string, a *x402.ExactAuthorization) {
	t.Helper()
	if got := r.balance(wallet); got != buyerFunds {
		t.Fatalf("the wallet holds %d, want %d", got, buyerFunds)
	}
	if got := r.balance(r.collector); got != 0 {
		t.Fatalf("the collector holds %d", got)
	}
	if n := r.workflows(customer); n != 0 {
		t.Fatalf("the wallet's customer has %d workflows", n)
	}
	if a != nil {
		used, err := r.fac.Used(context.Background(), a)
		if err != nil || used {
			t.Fatalf("the nonce is used (%v, %v)", used, err)
		}
	}
}

// A payment used for one workflow is refused for another (another
// payload), concurrent uses of one payment make one workflow and one
// transfer, and a wallet without the funds is answered 402 with the reason
// before anything is sent.
func TestReplayAndFunds(t *testing.T) {
	r := newRig(t)
	wallet := crypto.PubkeyToAddress(r.buyer.PublicKey)
	customer := x402.CustomerID(wallet)
	req := r.offer(body)
	pay := header(t, r.buyer, req, authorization(req), r.url)

	// Concurrent uses of one payment.
	const n = 4
	answers := make(chan *answer, n)
	for range n {
		go func() { answers <- r.post(body, pay) }()
	}
	ids := map[string]bool{}
	for range n {
		a := <-answers
		if a.status != http.StatusCreated {
			t.Fatalf("a concurrent use answered %d %s", a.status, a.body)
		}
		ids[a.purchase.Workflow.ID] = true
	}
	if len(ids) != 1 {
		t.Fatalf("%d concurrent uses of one payment made workflows %v, want one", n, ids)
	}
	if got := r.balance(wallet); got != buyerFunds-priceUnits {
		t.Fatalf("the wallet holds %d, want %d (one transfer)", got, buyerFunds-priceUnits)
	}

	// The same payment for another workflow.
	other := `{"product": "summary", "payload": {"text": "another workflow"}}`
	a := r.post(other, pay)
	if a.status != http.StatusPaymentRequired || a.required == nil || !strings.Contains(string(a.body), x402.CodeNonceUsed) {
		t.Fatalf("a replay for another workflow answered %d %s", a.status, a.body)
	}
	if got := r.balance(wallet); got != buyerFunds-priceUnits {
		t.Fatalf("the replay moved money: the wallet holds %d", got)
	}
	if n := r.workflows(customer); n != 1 {
		t.Fatalf("%d workflows after the replay, want 1", n)
	}

	// The same payment again once its window closed (13 hours on): its
	// workflow, not a 402 inviting a second payment; a new payment valid
	// then is still refused at once, and another request with this one
	// too.
	r.skew.Store(int64(13 * time.Hour))
	if a := r.post(body, pay); a.status != http.StatusCreated || !ids[a.purchase.Workflow.ID] || a.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the payment again after its window: %d %s, want its workflow replayed", a.status, a.body)
	}
	if a := r.post(body, header(t, r.buyer, req, authorization(req), r.url)); a.status != http.StatusPaymentRequired || !strings.Contains(string(a.body), x402.CodeValidBefore) {
		t.Fatalf("a new payment out of its window: %d %s", a.status, a.body)
	}
	if a := r.post(other, pay); a.status != http.StatusPaymentRequired {
		t.Fatalf("the payment for another workflow after its window: %d %s", a.status, a.body)
	}
	r.skew.Store(0)
	if got := r.balance(wallet); got != buyerFunds-priceUnits {
		t.Fatalf("the replays moved money: the wallet holds %d", got)
	}

	// A wallet without the funds.
	poor, _ := crypto.GenerateKey()
	poorWallet := crypto.PubkeyToAddress(poor.PublicKey)
	r.fund(poorWallet, priceUnits-1)
	auth := authorization(req)
	a = r.post(body, header(t, poor, req, auth, r.url))
	if a.status != http.StatusPaymentRequired || a.required == nil || !strings.Contains(a.required.Error, "holds 9999999") ||
		!strings.Contains(string(a.body), x402.CodeInsufficientFunds) {
		t.Fatalf("a wallet without the funds: %d %s", a.status, a.body)
	}
	if got := r.balance(poorWallet); got != priceUnits-1 {
		t.Fatalf("the poor wallet holds %d", got)
	}
	if used, _ := r.fac.Used(context.Background(), auth); used {
		t.Fatal("the poor wallet's nonce is used")
	}
	if n := r.workflows(x402.CustomerID(poorWallet)); n != 0 {
		t.Fatalf("the poor wallet has %d workflows", n)
	}
}

// What the product refuses is a 400 before any payment is asked; a product
// not for sale over x402 is a 404.
func TestRequestRefusedBeforePayment(t *testing.T) {
	r := newRig(t)
	for _, c := range []struct {
		body   string
		status int
	}{
		{`{"product": "summary", "payload": {"text": ""}}`, 400},
		{`{"product": "summary", "payload": {"txt": "x"}}`, 400},
		{`{"product": "summary"}`, 400},
		{`{"product": "summary", "payload": {"text": "x"}, "customerId": "cus_1"}`, 400},
		{`{"product": "summary-keyed-only", "payload": {"text": "x"}}`, 404},
		{`{"product": "nope", "payload": {"text": "x"}}`, 404},
	} {
		a := r.post(c.body, "")
		if a.status != c.status || a.required != nil || a.err.Error.Message == "" {
			t.Errorf("%s: answered %d %s, want %d with no PAYMENT-REQUIRED", c.body, a.status, a.body, c.status)
		}
	}
}
