package client_test

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/settleflow/settleflow/client"
	"github.com/settleflow/settleflow/webhook"
	"github.com/settleflow/settleflow/wire"
)

// signOwnerGrant signs a grant's typed data as a wallet does
// (eth_signTypedData_v4): EIP-712's hash as go-ethereum computes it, v as
// 27 or 28.
func signOwnerGrant(t *testing.T, key *ecdsa.PrivateKey, g *wire.OwnerGrantRequest) string {
	t.Helper()
	var td apitypes.TypedData
	if err := json.Unmarshal(g.TypedData, &td); err != nil {
		t.Fatalf("typed data %s: %v", g.TypedData, err)
	}
	h, _, err := apitypes.TypedDataAndHash(td)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := crypto.Sign(h, key)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27
	return hexutil.Encode(sig)
}

func signed(g *wire.OwnerGrantRequest, sig string) *client.SetOwnerParams {
	return &client.SetOwnerParams{Address: g.Address, Nonce: g.Nonce, Origin: g.Origin, Deadline: g.Deadline, Signature: sig}
}

// A customer's wallet signs the grant the server prepares; the server sends
// it and the contract on the reference server's embedded chain records the
// owner (a grant of the same address is then refused: it owns the balance
// already). A grant signed for another customer is refused and sends
// nothing; a replay with the same Idempotency-Key answers the first change;
// a second address of a customer that has an owner takes effect after the
// notice.
func TestRealServerOwner(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newClient(t)
	customer, other := uniqueCustomer(t), uniqueCustomer(t)+"_other"
	key, _ := crypto.GenerateKey()
	addr := strings.ToLower(crypto.PubkeyToAddress(key.PublicKey).Hex())
	invalid := func(err error, param string) {
		t.Helper()
		var ie *client.InvalidRequestError
		if !errors.As(err, &ie) || ie.Param != param {
			t.Fatalf("%v, want a 400 naming %s", err, param)
		}
	}

	// Funded before it has an owner (the faucet's deposits name none).
	if _, err := c.TestHelpers.FundCustomer(ctx, customer, 10_000); err != nil {
		t.Fatal(err)
	}
	g, err := c.Customers.CreateOwnerGrant(ctx, customer, &client.OwnerGrantCreateParams{Address: crypto.PubkeyToAddress(key.PublicKey).Hex(), Origin: "https://portal.example"})
	if err != nil {
		t.Fatal(err)
	}
	if g.Object != "owner_grant" || g.CustomerID != customer || g.Address != addr || g.Origin != "https://portal.example" || len(g.Nonce) != 66 {
		t.Fatalf("grant %+v", g)
	}
	if d := time.Until(time.Unix(g.Deadline, 0)); d < 14*time.Minute || d > 16*time.Minute {
		t.Errorf("deadline %s away, want 15 minutes", d)
	}
	// The same wallet's signature of a grant for another customer.
	og, err := c.Customers.CreateOwnerGrant(ctx, other, &client.OwnerGrantCreateParams{Address: addr})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Customers.SetOwner(ctx, customer, signed(og, signOwnerGrant(t, key, og)))
	invalid(err, "signature")
	// Another origin than the one signed.
	bad := signed(g, signOwnerGrant(t, key, g))
	bad.Origin = "https://evil.example"
	_, err = c.Customers.SetOwner(ctx, customer, bad)
	invalid(err, "signature")

	p := signed(g, signOwnerGrant(t, key, g))
	p.IdempotencyKey = "owner-" + customer
	ch, err := c.Customers.SetOwner(ctx, customer, p)
	if err != nil {
		t.Fatal(err)
	}
	if ch.Object != "owner_change" || ch.Status != "sent" || ch.Effective != wire.OwnerEffectiveNow || ch.Address != addr || len(ch.TxHash) != 66 {
		t.Fatalf("owner change %+v", ch)
	}
	again, err := c.Customers.SetOwner(ctx, customer, p)
	if err != nil || *again != *ch {
		t.Fatalf("a replay: %+v, %v; want %+v", again, err, ch)
	}
	// A workflow settled after it: the operator's setOwner went out first
	// (its nonce is lower), so it is mined and confirmed by then.
	wf, err := c.Workflows.Create(ctx, ticketParams(customer))
	if err != nil {
		t.Fatal(err)
	}
	if w := waitTerminalFunds(t, c, wf.ID); w.Status != wire.Settled {
		t.Fatalf("workflow %s", w.Status)
	}
	// Once confirmed, the funds follower announces the owner: a signed
	// customer.owner_set webhook naming the wallet, checksummed.
	d := ref.hooks.wait(t, "customer.owner_set/"+customer, 60*time.Second)
	ev, err := webhook.ConstructEvent(d.body, d.header.Get(webhook.DefaultSignatureHeader), ref.webhookSecret)
	if err != nil {
		t.Fatal(err)
	}
	if o := ev.Data.Owner; o == nil || o.Address != crypto.PubkeyToAddress(key.PublicKey).Hex() || o.TxHash != ch.TxHash || ev.Data.Balance == nil {
		t.Fatalf("customer.owner_set %+v (owner %+v); want %s set in %s", ev.Data, ev.Data.Owner, crypto.PubkeyToAddress(key.PublicKey).Hex(), ch.TxHash)
	}
	// The contract records the owner: a new grant of the same address is
	// refused, naming the address, and nothing is sent.
	g2, err := c.Customers.CreateOwnerGrant(ctx, customer, &client.OwnerGrantCreateParams{Address: addr})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Customers.SetOwner(ctx, customer, signed(g2, signOwnerGrant(t, key, g2)))
	invalid(err, "address")
	// A second address: a proposal, effective after the notice.
	key2, _ := crypto.GenerateKey()
	g3, err := c.Customers.CreateOwnerGrant(ctx, customer, &client.OwnerGrantCreateParams{Address: crypto.PubkeyToAddress(key2.PublicKey).Hex()})
	if err != nil {
		t.Fatal(err)
	}
	ch3, err := c.Customers.SetOwner(ctx, customer, signed(g3, signOwnerGrant(t, key2, g3)))
	if err != nil || ch3.Effective != wire.OwnerEffectiveAfterNotice {
		t.Fatalf("a second owner: %+v, %v; want effective after_notice", ch3, err)
	}
	// The replay's key with another body.
	p.Signature = signOwnerGrant(t, key, og)
	var ie *client.IdempotencyError
	if _, err := c.Customers.SetOwner(ctx, customer, p); !errors.As(err, &ie) {
		t.Fatalf("the key with another body: %v, want an IdempotencyError", err)
	}
}
