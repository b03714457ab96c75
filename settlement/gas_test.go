package settlement

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/core/types"
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

// TestGasReport measures, on the simulated chain, the gas per settled
// workflow at batch sizes 1, 10, 100 and 500, beside one plain ERC-20
// transfer per workflow, under two rule sets. Run it with -v to read the
// table (BENCHMARKS.md, "Settlement gas per workflow"):
//
//	go test -run TestGasReport -v ./settlement
func TestGasReport(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var table strings.Builder
	fmt.Fprintf(&table, "| rules | batch | transactions | gas per transaction | gas per workflow | plain transfer | ratio |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, rules := range gasRules {
		s := newSim(t, SimulatedOptions{ManualCommit: true, BackendOptions: []func(*node.Config, *ethconfig.Config){
			rules.opt, simulated.WithBlockGasLimit(500_000_000),
		}})
		tr := Transactor{Backend: s.Backend.Client(), Key: s.OperatorKey, Mine: s.Commit}
		var seq int
		perWorkflow := map[int]uint64{}
		perTx := map[int]uint64{}
		txCount := map[int]int{}
		for _, n := range []int{1, 10, 100, 500} {
			charges := make([]bindings.SettleflowSettlementCharge, n)
			for i := range charges {
				seq++
				k, _ := WorkflowKey(fmt.Sprintf("wf_01JD3Q6Y6F8Q2W9T4M%08d", seq))
				charges[i] = bindings.SettleflowSettlementCharge{WorkflowId: k, CustomerRef: CustomerRef(fmt.Sprintf("cus_%d", seq%37)), Amount: cents(int64(100 + seq%5000))}
			}
			// A batch over the transaction gas cap (EIP-7825: 16,777,216)
			// goes out in equal parts, as the settler would send it.
			var used uint64
			for parts := 1; ; parts *= 2 {
				if parts > n {
					t.Fatalf("%s: a single charge does not fit a transaction", rules.name)
				}
				used = 0
				var err error
				size := (n + parts - 1) / parts
				for lo := 0; lo < n && err == nil; lo += size {
					var r *types.Receipt
					if r, err = tr.Send(ctx, &s.Addresses.Contract, settlementABI.PackSettle(charges[lo:min(n, lo+size)])); err == nil {
						used += r.GasUsed
					}
				}
				if err == nil {
					txCount[n] = parts
					break
				}
				if used != 0 || !strings.Contains(err.Error(), "exceeds allowance") {
					t.Fatalf("%s: settle %d: %v", rules.name, n, err)
				}
			}
			perTx[n] = used / uint64(txCount[n])
			perWorkflow[n] = used / uint64(n)
		}
		// Plain transfers to the payee, which already holds a balance (the
		// cheaper case, so the comparison is the harder one for batching).
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
		for _, n := range []int{1, 10, 100, 500} {
			ratio := new(big.Rat).SetFrac64(int64(perWorkflow[n]), int64(transferGas))
			fmt.Fprintf(&table, "| %s | %d | %d | %d | %d | %d | %s |\n", rules.name, n, txCount[n], perTx[n], perWorkflow[n], transferGas, ratio.FloatString(3))
		}
		// Batching amortizes: each larger batch is cheaper per workflow.
		if !(perWorkflow[500] < perWorkflow[100] && perWorkflow[100] < perWorkflow[10] && perWorkflow[10] < perWorkflow[1]) {
			t.Errorf("%s: gas per workflow does not fall with batch size: %v", rules.name, perWorkflow)
		}
		if rules.name == "osaka" && perWorkflow[100] >= transferGas {
			t.Errorf("%s: a batch of 100 costs %d per workflow, not under a plain transfer's %d", rules.name, perWorkflow[100], transferGas)
		}
		if perWorkflow[100]*5 > transferGas {
			t.Logf("%s: batch 100 is %d gas per workflow, above the one-fifth target (%d): each workflow's idempotency record is a new storage slot", rules.name, perWorkflow[100], transferGas/5)
		}
		s.Close()
	}
	t.Logf("gas per settled workflow (params.MaxTxGas=%d):\n%s", params.MaxTxGas, table.String())
}
