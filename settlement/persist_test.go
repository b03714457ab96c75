package settlement

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"go.uber.org/zap/zaptest"

	"github.com/settleflow/settleflow"
)

// A simulated chain with a DataDir survives its process: after a restart
// the same contract is there, a settlement made before still has its
// receipt, the settler finds it settled on chain (and would not charge it
// again), and new charges settle on the same chain, in later blocks.
func TestSimulatedChainSurvivesRestart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "chain")
	ctx := context.Background()
	open := func() *Simulated {
		t.Helper()
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		s, err := NewSimulated(cctx, SimulatedOptions{Logger: zaptest.NewLogger(t), DataDir: dir,
			Tuning: ChainConfig{FlushInterval: 10 * time.Millisecond, PollInterval: 20 * time.Millisecond}})
		if err != nil {
			t.Fatalf("NewSimulated: %v", err)
		}
		return s
	}
	s := open()
	first := []settleflow.Charge{charge("wf_before_restart", 1234)}
	deposit(t, s, first[0].CustomerID, 5000)
	if err := s.Submit(ctx, first); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, s, first, 30*time.Second, func() {}, confirmed)
	tx, block := st[0].Settlement.TxHash, st[0].Settlement.BlockNumber
	addrs := s.Addresses
	if fi, err := os.Stat(filepath.Join(dir, chainStateFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state file: %v %v; want mode 0600", fi, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = open()
	defer s.Close()
	if s.Addresses != addrs {
		t.Fatalf("after the restart the deployment is %+v, before %+v", s.Addresses, addrs)
	}
	r, err := s.Backend.Client().TransactionReceipt(ctx, common.HexToHash(tx))
	if err != nil || r.BlockNumber.Uint64() != block {
		t.Fatalf("the receipt of %s after the restart: %v, %v", tx, r, err)
	}
	// The new settler has no memory of the charge: it finds it on chain.
	if st, err := s.Status(ctx, first); err != nil || st[0].State != settleflow.SettlementConfirmed || st[0].Settlement.TxHash != tx {
		t.Fatalf("status of the charge settled before the restart: %+v %v", st, err)
	}
	second := []settleflow.Charge{charge("wf_after_restart", 99)}
	deposit(t, s, second[0].CustomerID, 5000)
	if err := s.Submit(ctx, second); err != nil {
		t.Fatal(err)
	}
	if st := waitFor(t, s, second, 30*time.Second, func() {}, confirmed); st[0].Settlement.BlockNumber <= block {
		t.Fatalf("settled after the restart in block %d, not after block %d", st[0].Settlement.BlockNumber, block)
	}
}

// A state file whose chain database is gone is refused with the way out,
// not silently paired with a new, empty chain.
func TestSimulatedChainWithoutItsDatabase(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "chain")
	s, err := NewSimulated(context.Background(), SimulatedOptions{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := os.RemoveAll(filepath.Join(dir, "geth")); err != nil {
		t.Fatal(err)
	}
	if _, err := NewSimulated(context.Background(), SimulatedOptions{DataDir: dir}); err == nil {
		t.Fatal("a chain without its database started")
	}
}
