package settlement

import (
	"cmp"
	"context"
	"fmt"
	"math/big"
	"slices"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
)

// Reconciliation: the contract's Settled events against the database's
// Settled workflows. The chain is the record of what was charged; the
// database is what clients were told. They must agree exactly.

// ReconcileRecord is a Settled workflow as the database has it.
type ReconcileRecord struct {
	WorkflowID string
	Sequence   uint64
	CustomerID string
	// Amount is the quoted charge in minor units (cents).
	Amount int64
	// TxHash is the transaction the workflow's settlement names.
	TxHash string
}

// DiscrepancyKind says what disagrees.
type DiscrepancyKind string

// The kinds of discrepancy.
const (
	// MissingOnChain: a Settled workflow whose sequence has no Settled event.
	MissingOnChain DiscrepancyKind = "missing_on_chain"
	// NotInDatabase: a Settled event with no Settled workflow of that
	// sequence (a settlement sent outside the engine, or a workflow that
	// changed since).
	NotInDatabase DiscrepancyKind = "not_in_database"
	// AmountMismatch: the event's amount is not the workflow's quoted one.
	AmountMismatch DiscrepancyKind = "amount_mismatch"
	// WorkflowMismatch: the event under the sequence names another workflow.
	WorkflowMismatch DiscrepancyKind = "workflow_mismatch"
	// CustomerMismatch: the event's customer reference is not the
	// workflow's customer's.
	CustomerMismatch DiscrepancyKind = "customer_mismatch"
	// DuplicateOnChain: two Settled events for one sequence (the contract
	// forbids it: seeing it means the wrong contract or a broken node).
	DuplicateOnChain DiscrepancyKind = "duplicate_on_chain"
	// TxMismatch: the workflow names another transaction than the one the
	// event is in.
	TxMismatch DiscrepancyKind = "tx_mismatch"
)

// Discrepancy is one disagreement.
type Discrepancy struct {
	Kind       DiscrepancyKind
	Sequence   uint64
	WorkflowID string // the database's, or the chain's when the database has none
	Detail     string
}

// ReconcileReport is the outcome of [Reconcile].
type ReconcileReport struct {
	FromBlock, ToBlock uint64
	// OnChain counts Settled events; InDatabase the records given.
	OnChain, InDatabase int
	// Totals in minor units.
	TotalOnChain, TotalInDatabase int64
	Discrepancies                 []Discrepancy
}

// ReconcileOptions say where to look.
type ReconcileOptions struct {
	Contract common.Address
	// Decimals of the token (6 for the stablecoins settleflow uses).
	Decimals uint8
	// FromBlock is the contract's deployment block; ToBlock the last block
	// to read (the confirmed head).
	FromBlock, ToBlock uint64
	// PageBlocks bounds the blocks of one log query (default 5,000), so a
	// long history needs no huge query.
	PageBlocks uint64
}

type onChain struct {
	workflowKey [32]byte
	customerRef [32]byte
	amount      *big.Int
	tx          common.Hash
	block       uint64
}

// Reconcile reads every Settled event of the contract in [FromBlock,
// ToBlock], in pages of blocks, and compares them with records, the Settled
// workflows of the environment: every workflow has exactly one settlement of
// exactly its quoted amount under its sequence, for its customer, in the
// transaction it names; no settlement lacks its workflow; and the totals.
// An error means the chain could not be read; disagreements are in the
// report.
func Reconcile(ctx context.Context, b ethereum.LogFilterer, records []ReconcileRecord, o ReconcileOptions) (*ReconcileReport, error) {
	if o.PageBlocks == 0 {
		o.PageBlocks = 5000
	}
	if o.Decimals < 2 {
		return nil, fmt.Errorf("settlement: reconcile: token decimals %d", o.Decimals)
	}
	unit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(o.Decimals-2)), nil) // base units per cent
	rep := &ReconcileReport{FromBlock: o.FromBlock, ToBlock: o.ToBlock, InDatabase: len(records)}
	events := map[uint64][]onChain{}
	for from := o.FromBlock; from <= o.ToBlock; from += o.PageBlocks {
		to := min(from+o.PageBlocks-1, o.ToBlock)
		logs, err := b.FilterLogs(ctx, ethereum.FilterQuery{
			FromBlock: new(big.Int).SetUint64(from), ToBlock: new(big.Int).SetUint64(to),
			Addresses: []common.Address{o.Contract}, Topics: [][]common.Hash{{settledEventID}},
		})
		if err != nil {
			return nil, fmt.Errorf("settlement: reconcile: logs of blocks %d–%d: %w", from, to, err)
		}
		for i := range logs {
			l := &logs[i]
			if l.Removed {
				continue
			}
			ev, err := settlementABI.UnpackSettledEvent(l)
			if err != nil {
				return nil, fmt.Errorf("settlement: reconcile: event in %s: %w", l.TxHash, err)
			}
			seq := ev.Sequence.Uint64()
			events[seq] = append(events[seq], onChain{ev.WorkflowId, ev.CustomerRef, ev.Amount, l.TxHash, l.BlockNumber})
			rep.OnChain++
			cents := new(big.Int).Quo(ev.Amount, unit)
			rep.TotalOnChain += cents.Int64()
		}
		if to == o.ToBlock {
			break
		}
	}
	add := func(k DiscrepancyKind, seq uint64, wf, format string, args ...any) {
		rep.Discrepancies = append(rep.Discrepancies, Discrepancy{Kind: k, Sequence: seq, WorkflowID: wf, Detail: fmt.Sprintf(format, args...)})
	}
	seen := map[uint64]bool{}
	for _, r := range records {
		rep.TotalInDatabase += r.Amount
		seen[r.Sequence] = true
		evs := events[r.Sequence]
		if len(evs) == 0 {
			add(MissingOnChain, r.Sequence, r.WorkflowID, "Settled in the database, but no Settled event has sequence %d", r.Sequence)
			continue
		}
		if len(evs) > 1 {
			add(DuplicateOnChain, r.Sequence, r.WorkflowID, "%d Settled events for sequence %d", len(evs), r.Sequence)
		}
		ev := evs[0]
		if key, err := WorkflowKey(r.WorkflowID); err != nil || key != ev.workflowKey {
			add(WorkflowMismatch, r.Sequence, r.WorkflowID, "sequence %d was settled on chain for workflow %q", r.Sequence, WorkflowIDFromKey(ev.workflowKey))
			continue
		}
		want, err := BaseUnits(r.Amount, o.Decimals)
		if err != nil || want.Cmp(ev.amount) != 0 {
			add(AmountMismatch, r.Sequence, r.WorkflowID, "quoted %d cents, charged on chain %s base units (%d decimals) in %s",
				r.Amount, ev.amount, o.Decimals, ev.tx.Hex())
		}
		if CustomerRef(r.CustomerID) != ev.customerRef {
			add(CustomerMismatch, r.Sequence, r.WorkflowID, "charged on chain to another customer reference than %s's", r.CustomerID)
		}
		if r.TxHash != "" && common.HexToHash(r.TxHash) != ev.tx {
			add(TxMismatch, r.Sequence, r.WorkflowID, "the workflow names transaction %s, the event is in %s", r.TxHash, ev.tx.Hex())
		}
	}
	for seq, evs := range events {
		if !seen[seq] {
			add(NotInDatabase, seq, WorkflowIDFromKey(evs[0].workflowKey), "settled on chain in %s (block %d) for %s base units, but no Settled workflow has sequence %d",
				evs[0].tx.Hex(), evs[0].block, evs[0].amount, seq)
		}
	}
	slices.SortFunc(rep.Discrepancies, func(a, b Discrepancy) int {
		return cmp.Or(cmp.Compare(a.Sequence, b.Sequence), cmp.Compare(a.Kind, b.Kind))
	})
	return rep, nil
}

// ContractInfo is what a settlement contract says of itself.
type ContractInfo struct {
	DeployedAt uint64 // the block it was deployed in
	Token      common.Address
	Decimals   uint8
	Payee      common.Address
	Operator   common.Address
}

// Inspect reads a settlement contract's deployment block, token (and its
// decimals), payee and operator.
func Inspect(ctx context.Context, b ethereum.ContractCaller, contract common.Address) (ContractInfo, error) {
	var info ContractInfo
	call := func(to common.Address, data []byte) ([]byte, error) {
		out, err := b.CallContract(ctx, ethereum.CallMsg{To: &to, Data: data}, nil)
		if err != nil {
			return nil, fmt.Errorf("settlement: call %s: %w", to, err)
		}
		return out, nil
	}
	addr := func(data []byte) (common.Address, error) {
		out, err := call(contract, data)
		if err != nil {
			return common.Address{}, err
		}
		if len(out) != 32 {
			return common.Address{}, fmt.Errorf("settlement: %s is not a SettleflowSettlement contract", contract)
		}
		return common.BytesToAddress(out[12:]), nil
	}
	var err error
	if info.Token, err = addr(settlementABI.PackToken()); err != nil {
		return info, err
	}
	if info.Payee, err = addr(settlementABI.PackPayee()); err != nil {
		return info, err
	}
	if info.Operator, err = addr(settlementABI.PackOperator()); err != nil {
		return info, err
	}
	out, err := call(contract, settlementABI.PackDeployedAt())
	if err != nil {
		return info, err
	}
	deployed, err := settlementABI.UnpackDeployedAt(out)
	if err != nil || !deployed.IsUint64() {
		return info, fmt.Errorf("settlement: %s is not a SettleflowSettlement contract with a deployment block", contract)
	}
	info.DeployedAt = deployed.Uint64()
	if out, err = call(info.Token, erc20ABI.PackDecimals()); err != nil {
		return info, err
	}
	if info.Decimals, err = erc20ABI.UnpackDecimals(out); err != nil {
		return info, fmt.Errorf("settlement: token %s: decimals: %w", info.Token, err)
	}
	return info, nil
}
