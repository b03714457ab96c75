package settlement

import (
	"context"
	"errors"
	"math/big"
	"sync/atomic"
	"testing"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"go.uber.org/zap/zaptest"

	"github.com/settleflow/settleflow"
)

// reorgOnLogs is a node whose chain reorganizes (once armed) while a log
// query is under way: before answering it, reorg runs.
type reorgOnLogs struct {
	Backend
	armed atomic.Bool
	reorg func()
}

func (n *reorgOnLogs) FilterLogs(ctx context.Context, q ethereum.FilterQuery) ([]types.Log, error) {
	if n.armed.CompareAndSwap(true, false) {
		n.reorg()
	}
	return n.Backend.FilterLogs(ctx, q)
}

// A reorg while the follower reads a range's logs: the logs are of the new
// chain, the safe head it read before them of the old one. The follower
// stores no cursor of another fork than the logs it applied: it reads the
// range again, and the next calls follow the new chain without a reorg
// error (today's follower stored the old head's hash, and its next call
// found that block gone: ErrFundsReorg) (issue 43, low finding).
func TestFollowerCursorIsTheLogsFork(t *testing.T) {
	ctx := context.Background()
	s := newSim(t, SimulatedOptions{ManualCommit: true})
	client := s.Backend.Client()
	node := &reorgOnLogs{Backend: client}
	cc := ChainConfig{Client: node, Contract: s.Addresses.Contract, Token: s.Addresses.Token, Payee: s.Settler.chains[settleflow.Test].payee,
		Key: s.OperatorKey, CustomerRefSecret: s.CustomerRefSecret, Confirmations: 1, Network: "simulated", BlocksOnDemand: true}
	st, err := New(ctx, Config{Test: &cc, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	follow := func() settleflow.FundsCursor {
		t.Helper()
		cursor := settleflow.FundsCursor{}
		for calls := 0; ; calls++ {
			if calls > 100 {
				t.Fatal("the follower did not catch up")
			}
			_, next, err := st.FundsEvents(ctx, settleflow.Test, cursor)
			if errors.Is(err, settleflow.ErrFundsReorg) {
				t.Fatalf("FundsEvents after a reorg while reading: %v", err)
			}
			if err != nil {
				t.Logf("read again: %v", err)
				continue
			}
			if next == cursor {
				return cursor
			}
			cursor = next
		}
	}
	follow()
	// The head block holds a deposit; a reorg replaces it (and the
	// deposit moves) while the next range is read.
	deposit(t, s, "cus_fork", 100)
	head, err := client.HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	node.reorg = func() {
		if err := s.Backend.Fork(head.ParentHash); err != nil {
			t.Error(err)
			return
		}
		s.Backend.Commit()
		s.Backend.Commit()
	}
	node.armed.Store(true)
	cursor := follow()
	if node.armed.Load() {
		t.Fatal("the chain never reorganized: the test forks nothing")
	}
	now, err := client.HeaderByNumber(ctx, new(big.Int).SetUint64(cursor.Block))
	if err != nil {
		t.Fatal(err)
	}
	if now.Hash() != common.HexToHash(cursor.Hash) {
		t.Fatalf("cursor %d %s; the chain has %s there", cursor.Block, cursor.Hash, now.Hash().Hex())
	}
	if old, err := client.HeaderByHash(ctx, head.Hash()); err == nil && old.Number.Uint64() == cursor.Block && cursor.Hash == head.Hash().Hex() {
		t.Fatal("the cursor names the replaced block")
	}
}
