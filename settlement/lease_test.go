package settlement

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/settleflow/settleflow"
)

// testLease is a settleflow.SettlementLease the test hands around.
type testLease struct{ term atomic.Uint64 }

func (l *testLease) Term() uint64 { return l.term.Load() }

// Two settlers on one operator account, as two instances on one database
// would have, each with its end of the settlement lease: the one without it
// sends nothing (its charge waits, the account's nonce does not move); each
// new term reads the nonce back from the chain, so the sends after the
// other settler's never meet "nonce too low".
func TestLeaseKeepsOneSender(t *testing.T) {
	ctx := context.Background()
	var la, lb testLease
	la.term.Store(1)
	core, logs := observer.New(zap.DebugLevel)
	a := newSim(t, SimulatedOptions{Lease: &la, Logger: zap.New(core)})
	cc := a.Settler.chains[settleflow.Test].cfg
	cc.Key = a.OperatorKey
	b, err := New(ctx, Config{Test: &cc, Lease: &lb, Logger: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	client := a.Backend.Client()
	nonce := func() uint64 {
		n, err := client.NonceAt(ctx, a.Addresses.Operator, nil)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	settle := func(s settleflow.Settler, id string) {
		t.Helper()
		c := []settleflow.Charge{charge(id, 500)}
		if err := s.Submit(ctx, c); err != nil {
			t.Fatal(err)
		}
		// The simulated chain seals blocks while its own settler (a) waits;
		// b's charges need blocks sealed by hand.
		waitFor(t, s, c, 30*time.Second, a.Commit, confirmed)
	}
	n0 := nonce()
	settle(a, "wf_lease_a1")

	// b does not hold the lease: its charge waits, nothing is sent.
	waiting := []settleflow.Charge{charge("wf_lease_b1", 700)}
	if err := b.Submit(ctx, waiting); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // b's worker steps every 50 ms
	if n := nonce(); n != n0+1 {
		t.Fatalf("the account sent %d transactions, want 1: the settler without the lease sent", n-n0)
	}
	if st, err := b.Status(ctx, waiting); err != nil || st[0].State != settleflow.SettlementPending || st[0].Settlement != nil {
		t.Fatalf("charge of the settler without the lease: %s %v; want pending, unsent", describe(st), err)
	}

	// The lease moves to b: it sends its waiting charge and a new one.
	la.term.Store(0)
	lb.term.Store(1)
	waitFor(t, b, waiting, 30*time.Second, a.Commit, confirmed)
	settle(b, "wf_lease_b2")
	// And back to a, whose nonce from its first term is stale.
	lb.term.Store(0)
	la.term.Store(2)
	settle(a, "wf_lease_a2")
	if n := nonce(); n != n0+3 && n != n0+4 {
		t.Fatalf("the account sent %d transactions, want 3 or 4", n-n0)
	}
	for _, e := range logs.All() {
		for _, f := range e.Context {
			if strings.Contains(strings.ToLower(f.String+errString(f)), "nonce too low") {
				t.Errorf("a settler sent with a stale nonce: %s %v", e.Message, f)
			}
		}
	}
}

func errString(f zap.Field) string {
	if err, ok := f.Interface.(error); ok {
		return err.Error()
	}
	return ""
}
