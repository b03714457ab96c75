package settlement

import (
	"bytes"
	"context"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/params"
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

// gasCustomers is how many customers each batch's charges are spread over.
const gasCustomers = 10

// TestGasReport measures, on the simulated chain, the gas per settled
// workflow at batch sizes 1, 10, 100 and 500, each charge debited from one
// of 10 customers' balances, beside one plain ERC-20 transfer per workflow,
// under two rule sets. Each row settles consecutive sequences from a fresh
// bitmap word and reports the mean and the worst batch (the one that opens
// the most new words). It also measures a refund (one per transaction, and
// ten against one batch in one transaction). Run it with -v to read the
// table (BENCHMARKS.md, "Settlement gas per workflow"):
//
//	go test -count=1 -run TestGasReport -v ./settlement
func TestGasReport(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var table, refunds strings.Builder
	fmt.Fprintf(&refunds, "| rules | one refund | per refund, ten in one transaction | plain transfer | ratio | ratio, ten |\n|---|---:|---:|---:|---:|---:|\n")
	// (Each refund transaction resends its word's debits: 256 charges of
	// 64 bytes each, the most calldata a refund carries.)
	fmt.Fprintf(&table, "| rules | batch | batches | workflows | gas per batch | gas per workflow | worst batch, per workflow | plain transfer | ratio | worst ratio |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, rules := range gasRules {
		s := newSim(t, SimulatedOptions{ManualCommit: true, BackendOptions: []func(*node.Config, *ethconfig.Config){
			rules.opt, simulated.WithBlockGasLimit(100_000_000),
		}})
		tr := Transactor{Backend: s.Backend.Client(), Key: s.OperatorKey, Mine: s.Commit}
		// Plain transfers to the payee, which already holds a balance after
		// the first (the cheaper case, so the comparison is the harder one
		// for batching): the mean of 10 after a first one.
		ftr := Transactor{Backend: s.Backend.Client(), Key: s.FaucetKey, Mine: s.Commit}
		if _, err := ftr.Send(ctx, &s.Addresses.Token, erc20ABI.PackTransfer(s.Addresses.Payee, cents(1))); err != nil {
			t.Fatalf("%s: transfer: %v", rules.name, err)
		}
		var transferGas uint64
		const transfers = 10
		for i := range transfers {
			r, err := ftr.Send(ctx, &s.Addresses.Token, erc20ABI.PackTransfer(s.Addresses.Payee, cents(int64(100+i))))
			if err != nil {
				t.Fatalf("%s: transfer: %v", rules.name, err)
			}
			transferGas += r.GasUsed
		}
		transferGas /= transfers

		refs := make([][32]byte, gasCustomers)
		for i := range refs {
			id := fmt.Sprintf("cus_gas_%d", i)
			deposit(t, s, id, 10_000_000)
			refs[i] = refOf(s, id)
		}
		slices.SortFunc(refs, func(a, b [32]byte) int { return bytes.Compare(a[:], b[:]) })
		var row100 []*settleTx // the settles of the batch-100 row, read back
		seq := uint64(255)     // the last sequence of word 0
		perWorkflow := map[int]uint64{}
		for _, row := range gasBatches {
			seq = (seq>>8 + 1) << 8 // the row starts a fresh word
			var used, worst uint64
			for range row.batches {
				customers := refs[:min(row.size, gasCustomers)]
				charges := make([]*big.Int, row.size)
				for i := range charges {
					charges[i] = PackedCharge{Cents: 100 + seq%5000, Customer: uint16(i % len(customers)), Sequence: seq,
						Tag: WorkflowTag(fmt.Sprintf("wf_01JD3Q6Y6F8Q2W9T4M%08d", seq))}.Pack()
					seq++
				}
				data := settlementABI.PackSettle(customers, charges)
				r, err := tr.Send(ctx, &s.Addresses.Contract, data)
				if err != nil {
					t.Fatalf("%s: settle %d: %v", rules.name, row.size, err)
				}
				if r.GasUsed > params.MaxTxGas {
					t.Errorf("%s: a batch of %d needs %d gas, over the transaction cap %d", rules.name, row.size, r.GasUsed, params.MaxTxGas)
				}
				used += r.GasUsed
				worst = max(worst, r.GasUsed)
				if row.size == 100 {
					st, err := decodeSettle(s.Addresses.Contract, r.TxHash, r.BlockNumber.Uint64(), data, r.Logs)
					if err != nil {
						t.Fatal(err)
					}
					row100 = append(row100, st)
				}
			}
			seq-- // the last sequence used
			n := uint64(row.size * row.batches)
			perWorkflow[row.size] = used / n
			worstPer := worst / uint64(row.size)
			fmt.Fprintf(&table, "| %s | %d | %d | %d | %d | %d | %d | %d | %s | %s |\n", rules.name, row.size, row.batches, n,
				used/uint64(row.batches), used/n, worstPer, transferGas, ratio(used/n, transferGas), ratio(worstPer, transferGas))
			if row.size == 100 && rules.name == "osaka" && worstPer*100 > transferGas*8 {
				t.Errorf("%s: the worst batch of 100 costs %d gas per workflow, over 0.08 of a plain transfer (%d)", rules.name, worstPer, transferGas*8/100)
			}
		}
		// Batching amortizes: each larger batch is cheaper per workflow.
		if !(perWorkflow[500] < perWorkflow[100] && perWorkflow[100] < perWorkflow[10] && perWorkflow[10] < perWorkflow[1]) {
			t.Errorf("%s: gas per workflow does not fall with batch size: %v", rules.name, perWorkflow)
		}
		// The target: at batch 100 over 10 customers, at most 0.08 of a
		// plain transfer under today's mainnet rules (osaka). Under the dev
		// chain's state-gas rules (EIP-8037/8038: 110,020 gas a new slot,
		// dearer cold access) the per-customer debits and the new bitmap
		// and commitment slots cost more; it is held at 0.09 there
		// (BENCHMARKS.md says why).
		bound := map[string]uint64{"osaka": 8, "dev-default": 9}[rules.name]
		if perWorkflow[100]*100 > transferGas*bound {
			t.Errorf("%s: batch 100 costs %d gas per workflow, over 0.0%d of a plain transfer (%d)", rules.name, perWorkflow[100], bound, transferGas*bound/100)
		}
		// Refunds of charges of one word of the batch-100 row: one alone,
		// then ten in one transaction. The call resends the word's debits.
		if len(row100) == 0 {
			t.Fatalf("%s: no batch of 100 seen", rules.name)
		}
		word := row100[len(row100)/2].charges[0].charge.Sequence >> 8
		h := newWordHistory(word, row100)
		customers, charges, runs, _ := h.refundArgs()
		refund := func(first, n int) uint64 {
			keys := make([][32]byte, n)
			items := make([]*big.Int, n)
			for i := range n {
				keys[i], _ = RefundKey(fmt.Sprintf("re_%s_%d", rules.name, first+i))
				items[i] = packRefund(50, uint16(first+i))
			}
			r, err := tr.Send(ctx, &s.Addresses.Contract, settlementABI.PackRefund(new(big.Int).SetUint64(word), customers, charges, runs, keys, items))
			if err != nil {
				t.Fatalf("%s: refund: %v", rules.name, err)
			}
			return r.GasUsed
		}
		one, ten := refund(0, 1), refund(1, 10)
		fmt.Fprintf(&refunds, "| %s | %d | %d | %d | %s | %s |\n", rules.name, one, ten/10, transferGas, ratio(one, transferGas), ratio(ten/10, transferGas))
		s.Close()
	}
	t.Logf("gas per settled workflow (params.MaxTxGas=%d), charges spread over %d customers:\n%s\ngas per refund (against a batch of 100):\n%s",
		params.MaxTxGas, gasCustomers, table.String(), refunds.String())
}

func ratio(a, b uint64) string {
	return new(big.Rat).SetFrac64(int64(a), int64(b)).FloatString(3)
}
