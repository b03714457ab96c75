package settleflow_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/pgtest"
	"github.com/settleflow/settleflow/storage/postgres"
	"github.com/settleflow/settleflow/storage/sqlite"
)

// windowedLedger is the ledger whose FundsEvents reads one block per call,
// as a follower reading a bounded range does: a restarted engine far behind
// the chain reaches a deposit only after several reads.
type windowedLedger struct{ *ledgerSettler }

func (w windowedLedger) FundsEvents(ctx context.Context, env settleflow.Environment, after settleflow.FundsCursor) ([]settleflow.FundsEvent, settleflow.FundsCursor, error) {
	evs, to, err := w.ledgerSettler.FundsEvents(ctx, env, after)
	if err != nil || to.Block <= after.Block+1 {
		return evs, to, err
	}
	next := after.Block + 1
	var out []settleflow.FundsEvent
	for _, ev := range evs {
		if ev.BlockNumber == next {
			out = append(out, ev)
		}
	}
	return out, settleflow.FundsCursor{Block: next, Hash: blockHash(next)}, nil
}

func faucetStores(t *testing.T, run func(t *testing.T, open func() settleflow.Store)) {
	t.Run("SQLite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "settleflow.db")
		run(t, func() settleflow.Store {
			s, err := sqlite.Open(context.Background(), path, sqlite.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		})
	})
	t.Run("Postgres", func(t *testing.T) {
		db := pgtest.Connect(t).Schema(t, "sf_faucet")
		run(t, func() settleflow.Store {
			s, err := postgres.OpenDB(context.Background(), db())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		})
	})
}

// A test customer the faucet funded, who then withdrew everything, is not
// funded again by a restarted engine (which has forgotten whom it funded)
// once the faucet's mark is older than FaucetTakeover: its create is
// refused 402, and the faucet deposited once.
func TestFaucetFundsOnceAcrossARestartAfterAWithdrawal(t *testing.T) {
	faucetStores(t, func(t *testing.T, open func() settleflow.Store) {
		ctx := context.Background()
		store := open()
		opts := func(o *settleflow.Options) {
			o.Store, o.TestFaucet, o.FaucetTakeover = store, 1000, 100*time.Millisecond
		}
		first, ls := newFundedFixture(t, opts)
		wf, err := createFor(ctx, first.engine, "cus_w", "T-1")
		if err != nil {
			t.Fatalf("first create: %v", err)
		}
		if _, err := first.engine.Cancel(ctx, settleflow.Test, wf.ID); err != nil {
			t.Fatal(err)
		}
		ref, _ := ls.CustomerRef(settleflow.Test, "cus_w")
		ls.block(settleflow.FundsEvent{Kind: settleflow.FundsWithdrawalRequested, Ref: ref, Amount: 1000},
			settleflow.FundsEvent{Kind: settleflow.FundsWithdrawn, Ref: ref, Amount: 1000})
		if err := first.engine.SyncFunds(ctx, settleflow.Test); err != nil {
			t.Fatal(err)
		}
		if c, err := first.engine.Customer(ctx, settleflow.Test, "cus_w"); err != nil || c.Balance.OnChain != 0 {
			t.Fatalf("after the withdrawal: %+v %v", c, err)
		}
		if err := first.engine.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(150 * time.Millisecond) // the faucet's mark is stale
		// The restart: a new engine on the same database and chain.
		restarted := newFixture(t, func(o *settleflow.Options) {
			opts(o)
			o.Settler, o.FundsPollInterval = ls, 20*time.Millisecond
		})
		var ins *settleflow.InsufficientFundsError
		if _, err := createFor(ctx, restarted.engine, "cus_w", "T-2"); !errors.As(err, &ins) {
			t.Fatalf("create after the restart: %v; want 402 insufficient_funds (the customer withdrew its faucet money)", err)
		}
		ls.mu.Lock()
		defer ls.mu.Unlock()
		if ls.faucets != 1 {
			t.Fatalf("faucet deposits %d, want 1: a restarted engine funded the customer again", ls.faucets)
		}
	})
}

// A faucet whose process died after sending its deposit, which confirmed
// while no engine ran: the restarted engine, behind the chain, follows it
// up to that deposit before it considers taking the faucet over, and
// deposits nothing.
func TestFaucetFundsOnceAfterARestartBehindTheChain(t *testing.T) {
	faucetStores(t, func(t *testing.T, open func() settleflow.Store) {
		ctx := context.Background()
		store := open()
		ls := newLedgerSettler(t)
		wl := windowedLedger{ls}
		ref, _ := ls.CustomerRef(settleflow.Test, "cus_lag")
		// The dead process: its mark, then its deposit, far past the
		// follower's cursor (one SyncFunds reads 100 ranges).
		if mine, err := store.MarkFaucet(ctx, settleflow.Test, "cus_lag", ref, time.Now(), time.Time{}); !mine || err != nil {
			t.Fatalf("mark: %v %v", mine, err)
		}
		for range 250 {
			ls.block()
		}
		if _, err := ls.Faucet(ctx, settleflow.Test, "cus_lag", 1000); err != nil {
			t.Fatal(err)
		}
		time.Sleep(150 * time.Millisecond) // the mark is stale
		f := newFixture(t, func(o *settleflow.Options) {
			o.Store, o.Settler, o.TestFaucet, o.FaucetTakeover, o.FundsPollInterval = store, wl, 1000, 100*time.Millisecond, time.Hour
		})
		if _, err := createFor(ctx, f.engine, "cus_lag", "T-lag"); err != nil {
			t.Fatalf("create after the restart: %v", err)
		}
		ls.mu.Lock()
		defer ls.mu.Unlock()
		if ls.faucets != 1 {
			t.Fatalf("faucet deposits %d, want 1: the restarted engine funded the customer again", ls.faucets)
		}
	})
}
