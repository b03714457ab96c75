package settleflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
	"go.uber.org/zap/zaptest"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/storage/sqlite"
)

// The engine's owner grants on the simulated chain, across a restart: a
// created grant is checked field by field; a signed one is sent and
// recorded; after the process restarts (a new settler on the same chain
// and database) the same request under its Idempotency-Key answers the
// first change from the record, while the grant resent without the key is
// refused by the contract (its nonce is used).
func TestEngineOwnerGrants(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := sqlite.Open(ctx, filepath.Join(dir, "settleflow.db"), sqlite.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	start := func() (*settlement.Simulated, *settleflow.Engine) {
		t.Helper()
		chain, err := settlement.NewSimulated(ctx, settlement.SimulatedOptions{DataDir: filepath.Join(dir, "chain"), Logger: zaptest.NewLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		e, err := settleflow.New(settleflow.Options{Store: store, Settler: chain, Products: settleflow.NewProducts(), Logger: zaptest.NewLogger(t),
			Notifier: settleflow.NotifierFunc(func(context.Context, []settleflow.Event) error { return nil })})
		if err != nil {
			t.Fatal(err)
		}
		return chain, e
	}
	chain, e := start()
	key, _ := crypto.GenerateKey()
	addr := crypto.PubkeyToAddress(key.PublicKey)
	param := func(err error) string {
		var ie *settleflow.InvalidError
		if !errors.As(err, &ie) {
			t.Fatalf("%v: not an InvalidError", err)
		}
		return ie.Param
	}
	for _, c := range []struct {
		p     settleflow.OwnerGrantParams
		param string
	}{
		{settleflow.OwnerGrantParams{CustomerID: "bad id", Address: addr.Hex()}, "customerId"},
		{settleflow.OwnerGrantParams{CustomerID: "cus_eo", Address: "0x12"}, "address"},
		{settleflow.OwnerGrantParams{CustomerID: "cus_eo", Address: addr.Hex(), Origin: "a\nb"}, "origin"},
		{settleflow.OwnerGrantParams{CustomerID: "cus_eo", Address: addr.Hex(), Origin: strings.Repeat("o", 257)}, "origin"},
		{settleflow.OwnerGrantParams{CustomerID: "cus_eo", Address: addr.Hex(), Deadline: time.Now().Add(-time.Second).Truncate(time.Second)}, "deadline"},
		{settleflow.OwnerGrantParams{CustomerID: "cus_eo", Address: addr.Hex(), Deadline: time.Now().Add(25 * time.Hour).Truncate(time.Second)}, "deadline"},
		{settleflow.OwnerGrantParams{CustomerID: "cus_eo", Address: addr.Hex(), Deadline: time.Now().Add(time.Hour)}, "deadline"}, // not whole seconds
	} {
		c.p.Environment = settleflow.Test
		if _, err := e.CreateOwnerGrant(ctx, c.p); err == nil || param(err) != c.param {
			t.Errorf("%+v: %v, want an error naming %s", c.p, err, c.param)
		}
	}
	g, err := e.CreateOwnerGrant(ctx, settleflow.OwnerGrantParams{Environment: settleflow.Test, CustomerID: "cus_eo", Address: addr.Hex()})
	if err != nil {
		t.Fatal(err)
	}
	if g.Origin != settleflow.DefaultOwnerGrantOrigin || g.Address != strings.ToLower(addr.Hex()) {
		t.Errorf("grant %+v", g)
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
	p := settleflow.SetOwnerParams{Environment: settleflow.Test, CustomerID: "cus_eo", IdempotencyKey: "owner-eo",
		Grant: settleflow.OwnerGrant{Owner: g.Address, Nonce: g.Nonce, Origin: g.Origin, Deadline: time.Unix(g.Deadline, 0).UTC(), Signature: hexutil.Encode(sig)}}
	ch, replayed, err := e.SetOwner(ctx, p)
	if err != nil || replayed || ch.Effective != "now" || ch.Status != "sent" {
		t.Fatalf("SetOwner: %+v, %v, %v", ch, replayed, err)
	}
	grants, err := store.ListOwnerGrants(ctx, settleflow.Test)
	if err != nil || len(grants) != 1 || grants[0].TxHash != ch.TxHash || grants[0].Owner != g.Address || grants[0].CustomerID != "cus_eo" {
		t.Fatalf("recorded %+v, %v", grants, err)
	}
	// Mined: the contract records the owner.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if o, err := chain.Owner(ctx, settleflow.Test, "cus_eo"); err == nil && o == addr.Hex() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the owner was not set on chain")
		}
	}
	chain.Close()

	// A restart: a new settler, which never sent the grant.
	chain, e = start()
	t.Cleanup(func() { chain.Close() })
	again, replayed, err := e.SetOwner(ctx, p)
	if err != nil || !replayed || *again != *ch {
		t.Fatalf("the request replayed under its key after a restart: %+v, %v, %v; want %+v", again, replayed, err, ch)
	}
	p.IdempotencyKey = ""
	if _, _, err := e.SetOwner(ctx, p); err == nil || param(err) != "nonce" {
		t.Fatalf("the grant resent without a key after a restart: %v, want its nonce refused", err)
	}
	p.IdempotencyKey = "owner-eo"
	p.Grant.Origin = "https://other.example"
	if _, _, err := e.SetOwner(ctx, p); !errors.Is(err, settleflow.ErrIdempotencyKeyReused) {
		t.Fatalf("the key with another grant: %v", err)
	}
	if grants, _ := store.ListOwnerGrants(ctx, settleflow.Test); len(grants) != 1 {
		t.Fatalf("%d grants recorded, want 1", len(grants))
	}
}
