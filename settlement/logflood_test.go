package settlement

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"
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
	// A node that refuses every block's logs: each block is read from its
	// receipts (issue 43, finding 5), the same report.
	tight := &floodGuard{Backend: s.Backend.Client(), limit: 0}
	got, err = Reconcile(ctx, tight, nil, o)
	if err != nil {
		t.Fatalf("reconcile from receipts: %v", err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("reconcile from receipts: %+v, want %+v", got, want)
	}
}

// receiptsGuard is a floodGuard whose node also answers
// eth_getBlockReceipts.
type receiptsGuard struct {
	*floodGuard
	receipts atomic.Int64
}

func (g *receiptsGuard) BlockReceipts(ctx context.Context, n rpc.BlockNumberOrHash) ([]*types.Receipt, error) {
	g.receipts.Add(1)
	return g.floodGuard.Backend.(blockReceipts).BlockReceipts(ctx, n)
}

// One block with more followed logs than the node returns (a contract
// looping 1-cent deposits in one transaction, or many depositors in one
// block) no longer stops the follower for good: at a window of one block
// the node's "too many results" is answered by reading the block in parts
// (one query per event signature, then the block's receipts), and the
// follower moves on, every log applied exactly once (issue 43, finding 5).
// Both ways of reading receipts are tried: eth_getBlockReceipts, and each
// transaction's receipt for a node without it.
func TestLogFloodOneBlock(t *testing.T) {
	ctx := context.Background()
	s := newSim(t, SimulatedOptions{ManualCommit: true})
	const flood = 20
	for range flood {
		if _, err := s.Faucet(ctx, settleflow.Test, "cus_oneblock", 1); err != nil {
			t.Fatal(err)
		}
	}
	s.Commit() // every deposit in one block
	for range 3 {
		s.Commit()
	}
	for _, tc := range []struct {
		name  string
		guard func() (Backend, *floodGuard)
	}{
		{"transaction receipts", func() (Backend, *floodGuard) {
			g := &floodGuard{Backend: s.Backend.Client(), limit: 6}
			return g, g
		}},
		{"block receipts", func() (Backend, *floodGuard) {
			g := &floodGuard{Backend: s.Backend.Client(), limit: 6}
			return &receiptsGuard{floodGuard: g}, g
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, guard := tc.guard()
			cc := ChainConfig{Client: client, Contract: s.Addresses.Contract, Token: s.Addresses.Token, Payee: s.Settler.chains[settleflow.Test].payee,
				Key: s.OperatorKey, CustomerRefSecret: s.CustomerRefSecret, Confirmations: 2, Network: "simulated",
				FlushInterval: time.Second, PollInterval: time.Second}
			st, err := New(ctx, Config{Test: &cc, Logger: zaptest.NewLogger(t)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			seen := map[string]bool{}
			var flooded int
			blocks := map[uint64]int{}
			cursor := settleflow.FundsCursor{}
			for calls := 0; ; calls++ {
				if calls > 200 {
					t.Fatal("the follower did not catch up")
				}
				evs, next, err := st.FundsEvents(ctx, settleflow.Test, cursor)
				if err != nil {
					t.Fatalf("FundsEvents over a flooded block (cursor %d): %v", cursor.Block, err)
				}
				if next == cursor {
					break
				}
				for _, ev := range evs {
					key := fmt.Sprintf("%s/%d", ev.TxHash, ev.LogIndex)
					if seen[key] {
						t.Fatalf("log %s followed twice", key)
					}
					seen[key] = true
					if ev.Kind == settleflow.FundsDeposit && ev.Ref == common.Hash(refOf(s, "cus_oneblock")).Hex() {
						flooded++
						blocks[ev.BlockNumber]++
					}
				}
				cursor = next
			}
			if flooded != flood {
				t.Fatalf("followed %d of the flooded block's %d deposits", flooded, flood)
			}
			if len(blocks) != 1 {
				t.Fatalf("the flood spans blocks %v; the test wants one block", blocks)
			}
			if guard.refused.Load() == 0 {
				t.Fatal("the node never refused a query: the test floods nothing")
			}
			if n := st.chains[settleflow.Test].fundsLogs.split.Load(); n == 0 {
				t.Fatal("no block was read in parts")
			}
			if r, ok := client.(*receiptsGuard); ok && r.receipts.Load() == 0 {
				t.Fatal("eth_getBlockReceipts was never asked")
			}
		})
	}
}

// fakeLogs is a unit test's node: it answers each query with the logs of
// block 1 it selects, and refuses more than limit of them.
type fakeLogs struct {
	ethereum.LogFilterer // nil: only FilterLogs is called
	logs                 []types.Log
	limit                int
}

func (f *fakeLogs) FilterLogs(_ context.Context, q ethereum.FilterQuery) ([]types.Log, error) {
	var out []types.Log
	for i := range f.logs {
		if matches(q, &f.logs[i]) {
			out = append(out, f.logs[i])
		}
	}
	if len(out) > f.limit {
		return nil, limitError{f.limit}
	}
	return out, nil
}

// A block whose logs of all followed events pass the node's limit, but
// those of each event alone do not, is read with one query per event, in
// the block's order.
func TestLogWindowSplitsOneBlockByEvent(t *testing.T) {
	a, b := common.Hash{1}, common.Hash{2}
	var logs []types.Log
	for i := range 8 {
		logs = append(logs, types.Log{BlockNumber: 1, Index: uint(i), Topics: []common.Hash{[]common.Hash{a, b}[i%2]}})
	}
	node := &fakeLogs{logs: logs, limit: 5}
	var w logWindow
	got, to, err := w.read(context.Background(), node, ethereum.FilterQuery{Topics: [][]common.Hash{{a, b}}}, 1, 1)
	if err != nil {
		t.Fatalf("one block over the limit, under it per event: %v", err)
	}
	if to != 1 || len(got) != len(logs) {
		t.Fatalf("read %d logs up to block %d, want %d up to 1", len(got), to, len(logs))
	}
	for i, l := range got {
		if l.Index != uint(i) {
			t.Fatalf("log %d has index %d: not in the block's order", i, l.Index)
		}
	}
	if w.split.Load() != 1 {
		t.Fatalf("%d blocks read in parts, want 1", w.split.Load())
	}
	// A node that refuses even one event's logs, and has no receipts to
	// offer: an error naming the block, not a loop.
	node.limit = 3
	if _, _, err := w.read(context.Background(), node, ethereum.FilterQuery{Topics: [][]common.Hash{{a, b}}}, 1, 1); err == nil {
		t.Fatal("a block that cannot be read in any way: no error")
	}
}
