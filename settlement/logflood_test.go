package settlement

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/core/types"
	"go.uber.org/zap/zaptest"

	"github.com/settleflow/settleflow"
)

// floodGuard is a node that, like public providers, refuses a log query
// whose answer would hold more than limit logs.
type floodGuard struct {
	Backend
	limit   int
	refused atomic.Int64
	queries atomic.Int64
}

type limitError struct{ limit int }

func (e limitError) Error() string {
	return fmt.Sprintf("query returned more than %d results", e.limit)
}
func (e limitError) ErrorCode() int { return -32005 }

func (g *floodGuard) FilterLogs(ctx context.Context, q ethereum.FilterQuery) ([]types.Log, error) {
	g.queries.Add(1)
	logs, err := g.Backend.FilterLogs(ctx, q)
	if err == nil && len(logs) > g.limit {
		g.refused.Add(1)
		return nil, limitError{g.limit}
	}
	return logs, err
}

// A flood of small deposits is more logs than the node answers in one
// query: the follower and Reconcile halve their window until it answers,
// down to one block, read everything, and grow the window back (issue 37,
// finding 3).
func TestLogFloodHalvesTheWindow(t *testing.T) {
	ctx := context.Background()
	s := newSim(t, SimulatedOptions{ManualCommit: true})
	const flood = 40
	for range flood {
		deposit(t, s, "cus_flood", 1)
	}
	for range 3 {
		s.Commit()
	}
	guard := &floodGuard{Backend: s.Backend.Client(), limit: 6}
	cc := ChainConfig{Client: guard, Contract: s.Addresses.Contract, Token: s.Addresses.Token, Payee: s.Settler.chains[settleflow.Test].payee,
		Key: s.OperatorKey, CustomerRefSecret: s.CustomerRefSecret, Confirmations: 2, Network: "simulated",
		FlushInterval: time.Second, PollInterval: time.Second}
	st, err := New(ctx, Config{Test: &cc, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })

	// The follower: every deposit, in order, however many calls it takes.
	var deposits int
	cursor := settleflow.FundsCursor{}
	for calls := 0; ; calls++ {
		if calls > 200 {
			t.Fatal("the follower did not catch up")
		}
		evs, next, err := st.FundsEvents(ctx, settleflow.Test, cursor)
		if err != nil {
			t.Fatalf("FundsEvents under a log limit: %v", err)
		}
		if next == cursor {
			break
		}
		for _, ev := range evs {
			if ev.Kind == settleflow.FundsDeposit {
				deposits++
			}
		}
		cursor = next
	}
	if deposits != len(testCustomers)+flood {
		t.Fatalf("followed %d deposits, want %d", deposits, len(testCustomers)+flood)
	}
	if guard.refused.Load() == 0 {
		t.Fatal("the node never refused a query: the test floods nothing")
	}
	// Grown back after the flood: the next empty range is one query.
	w := st.chains[settleflow.Test].fundsLogs.current()
	if w <= 1 {
		t.Fatalf("window %d after the flood; want it growing back", w)
	}
	t.Logf("%d queries, %d refused; window now %d blocks", guard.queries.Load(), guard.refused.Load(), w)

	// Reconcile: the same report through the guard as without it.
	head, err := s.Backend.Client().BlockNumber(ctx)
	if err != nil {
		t.Fatal(err)
	}
	o := ReconcileOptions{Contract: s.Addresses.Contract, Decimals: 6, FromBlock: st.chains[settleflow.Test].deployed, ToBlock: head}
	want, err := Reconcile(ctx, s.Backend.Client(), nil, o)
	if err != nil {
		t.Fatal(err)
	}
	refused := guard.refused.Load()
	got, err := Reconcile(ctx, guard, nil, o)
	if err != nil {
		t.Fatalf("Reconcile under a log limit: %v", err)
	}
	if guard.refused.Load() == refused {
		t.Fatal("reconcile's queries were never refused: the test floods nothing")
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("reconcile under a log limit: %+v, want %+v", got, want)
	}
	// One block with more logs than the limit cannot be read: an error,
	// not a loop.
	tight := &floodGuard{Backend: s.Backend.Client(), limit: 0}
	if _, err := Reconcile(ctx, tight, nil, o); err == nil {
		t.Fatal("a node refusing every block's logs: no error")
	}
}
