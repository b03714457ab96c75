package apikey

import (
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
)

var workerSecretRE = regexp.MustCompile(`^rk_(test|live)_[0-9A-Za-z]{40}$`)

// Worker keys: rk_test_/rk_live_ secrets, stored hashed, of their kind and
// products, which a rotation keeps; an rk_ secret with its prefix changed
// to sk_ (or the reverse) is no key; bad kinds and products are refused.
func TestWorkerKeys(t *testing.T) {
	db, _, _ := openDB(t)
	m := newManager(t, db, Options{Clock: newClock()})
	wk, wsecret := create(t, m, CreateParams{Environment: settleflow.Test, Name: "worker", Kind: Worker, Products: []string{"a", "b-2"}})
	lk, lsecret := create(t, m, CreateParams{Environment: settleflow.Live, Name: "live worker", Kind: Worker})
	sk, ssecret := create(t, m, CreateParams{Environment: settleflow.Test, Name: "ordinary"})
	if !workerSecretRE.MatchString(wsecret) || !strings.HasPrefix(wsecret, "rk_test_") || !strings.HasPrefix(lsecret, "rk_live_") {
		t.Fatalf("worker secrets %q %q", wsecret, lsecret)
	}
	if wk.Display != "rk_test_…"+wsecret[len(wsecret)-4:] || !wk.IsWorker() || !slices.Equal(wk.Products, []string{"a", "b-2"}) || lk.Products != nil {
		t.Fatalf("worker keys %+v %+v", wk, lk)
	}
	for secret, want := range map[string]Key{wsecret: wk, lsecret: lk, ssecret: sk} {
		got, err := m.Authenticate(ctx, bearer(secret))
		if err != nil || got.ID != want.ID || got.Kind != want.Kind || !slices.Equal(got.Products, want.Products) {
			t.Fatalf("authenticate %s: %+v, %v; want %+v", want.Name, got, err, want)
		}
	}
	if sk.Kind != Secret || sk.IsWorker() {
		t.Fatalf("an ordinary key is %q", sk.Kind)
	}
	// The same random part under the other kind's prefix is no key.
	for _, forged := range []string{"sk_test_" + wsecret[8:], "rk_test_" + ssecret[8:]} {
		if _, err := m.Authenticate(ctx, bearer(forged)); !errors.Is(err, ErrUnknown) {
			t.Fatalf("authenticate %s…: %v, want ErrUnknown", forged[:8], err)
		}
	}
	// A rotation keeps the kind and the products.
	rk, rsecret, err := m.Rotate(ctx, wk.ID, time.Hour)
	if err != nil || !strings.HasPrefix(rsecret, "rk_test_") || !rk.IsWorker() || !slices.Equal(rk.Products, wk.Products) {
		t.Fatalf("rotated worker key %+v %v", rk, err)
	}
	// The JSON form names the kind and products of worker keys only.
	b, _ := json.Marshal(wk)
	o, _ := json.Marshal(sk)
	if !strings.Contains(string(b), `"kind":"worker","products":["a","b-2"]`) || strings.Contains(string(o), `"kind"`) {
		t.Fatalf("JSON %s / %s", b, o)
	}
	var back Key
	if err := json.Unmarshal(b, &back); err != nil || !back.IsWorker() || !slices.Equal(back.Products, wk.Products) {
		t.Fatalf("round trip %+v %v", back, err)
	}
	for _, p := range []CreateParams{
		{Environment: settleflow.Test, Name: "x", Kind: "admin"},
		{Environment: settleflow.Test, Name: "x", Products: []string{"a"}},
		{Environment: settleflow.Test, Name: "x", Kind: Worker, Products: []string{"Bad"}},
		{Environment: settleflow.Test, Name: "x", Kind: Worker, Products: []string{"a,b"}},
		{Environment: settleflow.Test, Name: "x", Kind: Worker, Products: []string{"a", "a"}},
	} {
		if _, _, err := m.Create(ctx, p); !errors.Is(err, ErrInvalidKind) {
			t.Errorf("create %+v: %v, want ErrInvalidKind", p, err)
		}
	}
	keys, err := m.List(ctx)
	if err != nil || len(keys) != 4 {
		t.Fatalf("%d keys after the refusals, want 4: %v", len(keys), err)
	}
}
