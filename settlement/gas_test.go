package settlement

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/params"

	"github.com/settleflow/settleflow/settlement/contracts/bindings"
)

// gasRules are the chain rules the gas report runs under.
var gasRules = []struct {
	name string
	opt  func(*node.Config, *ethconfig.Config)
}{
	{"osaka", func(_ *node.Config, ec *ethconfig.Config) {
		// Today's mainnet rules: no EIP-8037 state gas, no EIP-8038 repricing.
		cfg := *ec.Genesis.Config
		cfg.BogotaTime, cfg.AmsterdamTime = nil, nil
		ec.Genesis.Config = &cfg
	}},
	{"dev-default", func(*node.Config, *ethconfig.Config) {
		// go-ethereum v1.17.10's simulated/dev chain as shipped (Bogota:
		// EIP-8037 state gas + EIP-8038), the reference server's test chain.
	}},
}

// gasBatches are the batch sizes of the report and how many consecutive
// batches each row sends: enough that the row's workflows span several
// 256-sequence words of the bitmap, so the mean carries its fair share of
// new storage slots (one per 256 workflows).
var gasBatches = []struct{ size, batches int }{{1, 16}, {10, 26}, {100, 26}, {500, 6}}

// TestGasReport measures, on the simulated chain, the gas per settled
// workflow at batch sizes 1, 10, 100 and 500, beside one plain ERC-20
// transfer per workflow, under two rule sets. Each row settles consecutive
// sequences from a fresh bitmap word and reports the mean and the worst
// batch (the one that opens the most new words). Run it with -v to read the
// table (BENCHMARKS.md, "Settlement gas per workflow"):
//
//	go test -count=1 -run TestGasReport -v ./settlement
func TestGasReport(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var table strings.Builder
	fmt.Fprintf(&table, "| rules | batch | batches | workflows | gas per batch | gas per workflow | worst batch, per workflow | plain transfer | ratio | worst ratio |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, rules := range gasRules {
		s := newSim(t, SimulatedOptions{ManualCommit: true, BackendOptions: []func(*node.Config, *ethconfig.Config){
			rules.opt, simulated.WithBlockGasLimit(100_000_000),
		}})
		tr := Transactor{Backend: s.Backend.Client(), Key: s.OperatorKey, Mine: s.Commit}
		// Plain transfers to the payee, which already holds a balance after
		// the first (the cheaper case, so the comparison is the harder one
		// for batching): the mean of 10 after a first one.
		if _, err := tr.Send(ctx, &s.Addresses.Token, erc20ABI.PackTransfer(s.Addresses.Payee, cents(1))); err != nil {
			t.Fatalf("%s: transfer: %v", rules.name, err)
		}
		var transferGas uint64
		const transfers = 10
		for i := range transfers {
			r, err := tr.Send(ctx, &s.Addresses.Token, erc20ABI.PackTransfer(s.Addresses.Payee, cents(int64(100+i))))
			if err != nil {
				t.Fatalf("%s: transfer: %v", rules.name, err)
			}
			transferGas += r.GasUsed
		}
		transferGas /= transfers

		seq := uint64(255) // the last sequence of word 0
		perWorkflow := map[int]uint64{}
		for _, row := range gasBatches {
			seq = (seq>>8 + 1) << 8 // the row starts a fresh word
			var used, worst uint64
			for range row.batches {
				charges := make([]bindings.SettleflowSettlementCharge, row.size)
				for i := range charges {
					k, _ := WorkflowKey(fmt.Sprintf("wf_01JD3Q6Y6F8Q2W9T4M%08d", seq))
					charges[i] = bindings.SettleflowSettlementCharge{WorkflowId: k, Sequence: new(big.Int).SetUint64(seq),
						CustomerRef: CustomerRef(fmt.Sprintf("cus_%d", seq%37)), Amount: cents(int64(100 + seq%5000))}
					seq++
				}
				r, err := tr.Send(ctx, &s.Addresses.Contract, settlementABI.PackSettle(charges))
				if err != nil {
					t.Fatalf("%s: settle %d: %v", rules.name, row.size, err)
				}
				if r.GasUsed > params.MaxTxGas {
					t.Errorf("%s: a batch of %d needs %d gas, over the transaction cap %d", rules.name, row.size, r.GasUsed, params.MaxTxGas)
				}
				used += r.GasUsed
				worst = max(worst, r.GasUsed)
			}
			seq-- // the last sequence used
			n := uint64(row.size * row.batches)
			perWorkflow[row.size] = used / n
			worstPer := worst / uint64(row.size)
			fmt.Fprintf(&table, "| %s | %d | %d | %d | %d | %d | %d | %d | %s | %s |\n", rules.name, row.size, row.batches, n,
				used/uint64(row.batches), used/n, worstPer, transferGas, ratio(used/n, transferGas), ratio(worstPer, transferGas))
			if row.size == 100 && worstPer*5 > transferGas {
				t.Errorf("%s: the worst batch of 100 costs %d gas per workflow, over one fifth of a plain transfer (%d)", rules.name, worstPer, transferGas/5)
			}
		}
		// Batching amortizes: each larger batch is cheaper per workflow.
		if !(perWorkflow[500] < perWorkflow[100] && perWorkflow[100] < perWorkflow[10] && perWorkflow[10] < perWorkflow[1]) {
			t.Errorf("%s: gas per workflow does not fall with batch size: %v", rules.name, perWorkflow)
		}
		// The target: at batch 100, at most one fifth of a plain transfer.
		if perWorkflow[100]*5 > transferGas {
			t.Errorf("%s: batch 100 costs %d gas per workflow, over one fifth of a plain transfer (%d)", rules.name, perWorkflow[100], transferGas/5)
		}
		s.Close()
	}
	t.Logf("gas per settled workflow (params.MaxTxGas=%d):\n%s", params.MaxTxGas, table.String())
}

func ratio(a, b uint64) string {
	return new(big.Rat).SetFrac64(int64(a), int64(b)).FloatString(3)
}
