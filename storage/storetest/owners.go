package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
)

// testOwnerGrants: a grant is recorded once per nonce and environment (a
// second insert answers the first), found by its idempotency key only
// within the window asked, and listed oldest first, per environment.
func testOwnerGrants(t *testing.T, st settleflow.Store) {
	s, ok := st.(settleflow.OwnerGrantStore)
	if !ok {
		t.Skip("the Store does not record owner grants (settleflow.OwnerGrantStore)")
	}
	ctx := context.Background()
	g1 := settleflow.OwnerGrantRecord{Environment: settleflow.Test, CustomerID: "cus_a", Ref: "0xaa", Owner: "0x00000000000000000000000000000000000000a1",
		Nonce: "0x01", Origin: "https://app.example", Deadline: time.Unix(1_900_000_000, 0).UTC(), TxHash: "0xt1", Effective: "now",
		IdempotencyKey: "k1", RequestHash: "h1", CreatedAt: base}
	got, existed, err := s.InsertOwnerGrant(ctx, g1)
	if err != nil || existed || !reflect.DeepEqual(*got, g1) {
		t.Fatalf("insert: %+v, %v, %v", got, existed, err)
	}
	// The grant names the account's customer (its balance unchanged).
	if a, err := st.GetAccount(ctx, settleflow.Test, "", "0xaa"); err != nil || a.CustomerID != "cus_a" || a.Deposited != 0 {
		t.Fatalf("the account of a granted reference: %+v, %v; want it named cus_a", a, err)
	}
	// The same nonce again (another transaction, another key): the first.
	again := g1
	again.TxHash, again.IdempotencyKey, again.Effective = "0xt2", "k2", "after_notice"
	if got, existed, err = s.InsertOwnerGrant(ctx, again); err != nil || !existed || !reflect.DeepEqual(*got, g1) {
		t.Fatalf("insert of a recorded nonce: %+v, %v, %v; want the first record", got, existed, err)
	}
	// The same nonce in live is another grant; one without a key.
	live := g1
	live.Environment, live.IdempotencyKey, live.RequestHash, live.CreatedAt = settleflow.Live, "", "", base.Add(time.Second)
	if _, existed, err := s.InsertOwnerGrant(ctx, live); err != nil || existed {
		t.Fatalf("live insert: %v, %v", existed, err)
	}
	g2 := g1
	g2.Nonce, g2.Owner, g2.TxHash, g2.IdempotencyKey, g2.Effective, g2.CreatedAt = "0x02", "0x00000000000000000000000000000000000000a2", "0xt3", "", "after_notice", base.Add(time.Minute)
	g2.RequestHash = ""
	if _, _, err := s.InsertOwnerGrant(ctx, g2); err != nil {
		t.Fatal(err)
	}
	if r, err := s.OwnerGrantByKey(ctx, settleflow.Test, "k1", base.Add(-time.Hour)); err != nil || !reflect.DeepEqual(*r, g1) {
		t.Errorf("by key: %+v, %v", r, err)
	}
	if _, err := s.OwnerGrantByKey(ctx, settleflow.Test, "k1", base.Add(time.Second)); !errors.Is(err, settleflow.ErrNotFound) {
		t.Errorf("a key older than since: %v, want ErrNotFound", err)
	}
	for _, k := range []string{"k2", ""} {
		if _, err := s.OwnerGrantByKey(ctx, settleflow.Test, k, base.Add(-time.Hour)); !errors.Is(err, settleflow.ErrNotFound) {
			t.Errorf("key %q: %v, want ErrNotFound", k, err)
		}
	}
	if _, err := s.OwnerGrantByKey(ctx, settleflow.Live, "k1", base.Add(-time.Hour)); !errors.Is(err, settleflow.ErrNotFound) {
		t.Errorf("a test key in live: %v, want ErrNotFound", err)
	}
	list, err := s.ListOwnerGrants(ctx, settleflow.Test)
	if err != nil || !reflect.DeepEqual(list, []settleflow.OwnerGrantRecord{g1, g2}) {
		t.Errorf("list: %+v, %v", list, err)
	}
	if list, err := s.ListOwnerGrants(ctx, settleflow.Live); err != nil || len(list) != 1 || list[0].Nonce != "0x01" {
		t.Errorf("live list: %+v, %v", list, err)
	}
}
