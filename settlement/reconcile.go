package settlement

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"math/big"
	"slices"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// Reconciliation: the contract's records against the database's. The
// chain is the record of what was charged and refunded; the database is
// what clients were told. They must agree exactly: every Settled workflow
// debited once, for its amount, from its customer; every Succeeded refund
// applied once, within its charge; every customer's balance in the
// contract equal to deposits − withdrawals − charges + refunds, as the
// contract's events add up and as the database's ledger has it.

// ReconcileRecord is a Settled workflow as the database has it.
type ReconcileRecord struct {
	WorkflowID string
	Sequence   uint64
	CustomerID string
	// Amount is the charge in minor units (cents).
	Amount int64
	// TxHash is the transaction the workflow's settlement names.
	TxHash string
}

// RefundRecord is a Succeeded refund as the database has it.
type RefundRecord struct {
	RefundID   string
	WorkflowID string
	// Sequence is the refunded charge's.
	Sequence uint64
	Amount   int64
	TxHash   string
}

// AccountRecord is a customer's ledger as the database has it.
type AccountRecord struct {
	CustomerID string // empty for an account known only by its reference
	Ref        [32]byte
	// OnChain is what the database says the contract holds for the
	// customer: deposits − withdrawals − charges + refunds, in cents.
	OnChain int64
}

// DiscrepancyKind says what disagrees.
type DiscrepancyKind string

// The kinds of discrepancy.
const (
	// MissingOnChain: a Settled workflow whose sequence no batch debited.
	MissingOnChain DiscrepancyKind = "missing_on_chain"
	// NotInDatabase: a charge debited on chain with no Settled workflow of
	// that sequence (a settlement sent outside the engine, or a workflow
	// that changed since).
	NotInDatabase DiscrepancyKind = "not_in_database"
	// AmountMismatch: the charge on chain is not the workflow's.
	AmountMismatch DiscrepancyKind = "amount_mismatch"
	// WorkflowMismatch: the charge under the sequence carries another
	// workflow's tag.
	WorkflowMismatch DiscrepancyKind = "workflow_mismatch"
	// CustomerMismatch: the charge was debited from another customer.
	CustomerMismatch DiscrepancyKind = "customer_mismatch"
	// DuplicateOnChain: two debits of one sequence (the contract forbids
	// it: seeing it means the wrong contract or a broken node).
	DuplicateOnChain DiscrepancyKind = "duplicate_on_chain"
	// TxMismatch: the workflow names another transaction than the one
	// that debited it.
	TxMismatch DiscrepancyKind = "tx_mismatch"
	// RefundMissingOnChain: a Succeeded refund the contract never applied.
	RefundMissingOnChain DiscrepancyKind = "refund_missing_on_chain"
	// RefundNotInDatabase: a refund applied on chain that the database
	// does not hold as Succeeded.
	RefundNotInDatabase DiscrepancyKind = "refund_not_in_database"
	// RefundMismatch: a refund's amount, charge or transaction differs.
	RefundMismatch DiscrepancyKind = "refund_mismatch"
	// RefundDuplicate: one refund key applied twice (the contract forbids it).
	RefundDuplicate DiscrepancyKind = "refund_duplicate"
	// RefundExceedsCharge: the refunds of a charge add up to more than it.
	RefundExceedsCharge DiscrepancyKind = "refund_exceeds_charge"
	// BalanceMismatch: the contract's balance of a customer is not what
	// its events add up to.
	BalanceMismatch DiscrepancyKind = "balance_mismatch"
	// LedgerMismatch: the database's balance of a customer is not the
	// contract's.
	LedgerMismatch DiscrepancyKind = "ledger_mismatch"
	// HoldingsMismatch: the token balance of the contract is less than the
	// sum of its customers' balances plus what the payee is owed (a
	// shortfall; tokens sent straight to the contract are a surplus,
	// reported in ReconcileReport.Surplus, not a discrepancy).
	HoldingsMismatch DiscrepancyKind = "holdings_mismatch"
	// OwnerNotSetByEngine: an owner the contract recorded (an OwnerSet
	// event), or an owner change it was asked to make after the notice (an
	// OwnerChangeProposed event: the operator can still cancel it), that no
	// owner grant the engine sent explains: the operator's key used outside
	// the engine, or a grant the database lost. An owner that moved its
	// balance to an address of its own (changeOwner) is explained when the
	// owner it replaced was.
	OwnerNotSetByEngine DiscrepancyKind = "owner_not_set_by_engine"
)

// OwnerGrantRecord is an owner grant the engine sent, as the database has
// it (settleflow.OwnerGrantRecord).
type OwnerGrantRecord struct {
	CustomerID string
	Ref        [32]byte
	Owner      common.Address
	TxHash     string
}

// Discrepancy is one disagreement.
type Discrepancy struct {
	Kind     DiscrepancyKind
	Sequence uint64
	// WorkflowID is the database's, or the chain's tag when the database
	// has none; for refunds, the refund id; for balances, the customer.
	WorkflowID string
	Detail     string
}

// ReconcileReport is the outcome of [Reconcile].
type ReconcileReport struct {
	FromBlock, ToBlock uint64
	// OnChain counts charges debited; InDatabase the records given.
	OnChain, InDatabase int
	// Totals in minor units.
	TotalOnChain, TotalInDatabase int64
	// Refunds applied on chain and their total; Declined charges.
	Refunds, Declined int
	TotalRefunded     int64
	// Customers counts the customers with a balance checked; Held is what
	// the contract holds for them (cents) and PayeeOwed what the payee is
	// owed.
	Customers       int
	Held, PayeeOwed int64
	// Surplus is what the contract holds beyond its customers' balances and
	// what the payee is owed (base units): tokens sent to it directly, by
	// transfer rather than deposit, which no one is owed. Nil if the
	// holdings were not checked.
	Surplus       *big.Int
	Discrepancies []Discrepancy
}

// ReconcileOptions say where to look and what else to compare.
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
	// RefOf is the customer reference of a customer id (CustomerRef with
	// the deployment's secret); nil skips the customer check of charges.
	RefOf func(customerID string) [32]byte
	// Refunds are the database's Succeeded refunds of the environment.
	Refunds []RefundRecord
	// Accounts are the database's customer ledgers of the environment.
	Accounts []AccountRecord
	// State reads the contract's balances at ToBlock; nil skips the
	// balance checks.
	State ethereum.ContractCaller
	// CheckOwners compares the contract's OwnerSet events with
	// OwnerGrants, the database's grants sent by the engine: an owner no
	// grant of its customer and address explains is OwnerNotSetByEngine.
	CheckOwners bool
	OwnerGrants []OwnerGrantRecord
}

// ownerSet is one OwnerSet event, or an OwnerChangeProposed one (proposed,
// with the time it is due).
type ownerSet struct {
	ref   [32]byte
	owner common.Address
	tx    common.Hash
	block uint64
	// proposed: an OwnerChangeProposed, due at effectiveAt (Unix seconds).
	proposed    bool
	effectiveAt *big.Int
}

// ownerChangeProposedEventID is the OwnerChangeProposed event's topic.
var ownerChangeProposedEventID = settlementABI.GetABI().Events["OwnerChangeProposed"].ID

// ReconcileBackend is what Reconcile reads the chain with: logs, and the
// settle transactions' calldata and receipts. *ethclient.Client and the
// simulated backend's client satisfy it.
type ReconcileBackend interface {
	ethereum.LogFilterer
	TransactionByHash(ctx context.Context, hash common.Hash) (tx *types.Transaction, isPending bool, err error)
	TransactionReceipt(ctx context.Context, hash common.Hash) (*types.Receipt, error)
}

type debit struct {
	charge PackedCharge
	ref    [32]byte
	tx     common.Hash
	block  uint64
}

type applied struct {
	key    [32]byte
	seq    uint64
	ref    [32]byte
	amount int64
	tx     common.Hash
}

// Reconcile reads the contract's events in [FromBlock, ToBlock], in pages
// of blocks, and compares them with the database's records (see the types
// above). An error means the chain could not be read; disagreements are in
// the report.
func Reconcile(ctx context.Context, b ReconcileBackend, records []ReconcileRecord, o ReconcileOptions) (*ReconcileReport, error) {
	if o.PageBlocks == 0 {
		o.PageBlocks = 5000
	}
	if o.Decimals < 2 {
		return nil, fmt.Errorf("settlement: reconcile: token decimals %d", o.Decimals)
	}
	unit, _ := BaseUnits(1, o.Decimals)
	cents := func(v *big.Int) int64 { return new(big.Int).Quo(v, unit).Int64() }
	rep := &ReconcileReport{FromBlock: o.FromBlock, ToBlock: o.ToBlock, InDatabase: len(records)}
	debits := map[uint64][]debit{}
	var refunds []applied
	flows := map[[32]byte]int64{} // per customer: deposits − withdrawals − charges + refunds
	settles := map[common.Hash]bool{}
	var owners []ownerSet
	for from := o.FromBlock; from <= o.ToBlock; from += o.PageBlocks {
		to := min(from+o.PageBlocks-1, o.ToBlock)
		logs, err := b.FilterLogs(ctx, ethereum.FilterQuery{
			FromBlock: new(big.Int).SetUint64(from), ToBlock: new(big.Int).SetUint64(to),
			Addresses: []common.Address{o.Contract},
			Topics:    [][]common.Hash{{wordSettledEventID, chargeDeclinedEventID, refundedEventID, depositedEventID, withdrawnEventID, ownerSetEventID, ownerChangeProposedEventID}},
		})
		if err != nil {
			return nil, fmt.Errorf("settlement: reconcile: logs of blocks %d–%d: %w", from, to, err)
		}
		for i := range logs {
			l := &logs[i]
			if l.Removed || len(l.Topics) == 0 {
				continue
			}
			bad := func(err error) error {
				return fmt.Errorf("settlement: reconcile: event in %s: %w", l.TxHash.Hex(), err)
			}
			switch l.Topics[0] {
			case wordSettledEventID, chargeDeclinedEventID:
				// A settle: read its calldata back, once.
				if settles[l.TxHash] {
					continue
				}
				settles[l.TxHash] = true
				tx, _, err := b.TransactionByHash(ctx, l.TxHash)
				if err != nil {
					return nil, bad(err)
				}
				r, err := b.TransactionReceipt(ctx, l.TxHash)
				if err != nil {
					return nil, bad(err)
				}
				st, err := decodeSettle(o.Contract, l.TxHash, l.BlockNumber, tx.Data(), r.Logs)
				if err != nil {
					return nil, bad(err)
				}
				for _, ch := range st.charges {
					switch ch.outcome {
					case debited:
						debits[ch.charge.Sequence] = append(debits[ch.charge.Sequence], debit{ch.charge, ch.ref, l.TxHash, l.BlockNumber})
						rep.OnChain++
						rep.TotalOnChain += int64(ch.charge.Cents)
						flows[ch.ref] -= int64(ch.charge.Cents)
					case declined:
						rep.Declined++
					}
				}
			case refundedEventID:
				ev, err := settlementABI.UnpackRefundedEvent(l)
				if err != nil {
					return nil, bad(err)
				}
				a := applied{ev.Key, ev.Sequence.Uint64(), ev.CustomerRef, cents(ev.Amount), l.TxHash}
				refunds = append(refunds, a)
				rep.Refunds++
				rep.TotalRefunded += a.amount
				flows[a.ref] += a.amount
			case depositedEventID:
				ev, err := settlementABI.UnpackDepositedEvent(l)
				if err != nil {
					return nil, bad(err)
				}
				flows[ev.CustomerRef] += cents(ev.Amount)
			case withdrawnEventID:
				ev, err := settlementABI.UnpackWithdrawnEvent(l)
				if err != nil {
					return nil, bad(err)
				}
				flows[ev.CustomerRef] -= cents(ev.Amount)
			case ownerSetEventID:
				if len(l.Topics) != 3 {
					return nil, bad(fmt.Errorf("OwnerSet with %d topics", len(l.Topics)))
				}
				owners = append(owners, ownerSet{ref: l.Topics[1], owner: common.BytesToAddress(l.Topics[2][12:]), tx: l.TxHash, block: l.BlockNumber})
			case ownerChangeProposedEventID:
				if len(l.Topics) != 3 || len(l.Data) != 32 {
					return nil, bad(fmt.Errorf("OwnerChangeProposed with %d topics and %d bytes", len(l.Topics), len(l.Data)))
				}
				owners = append(owners, ownerSet{ref: l.Topics[1], owner: common.BytesToAddress(l.Topics[2][12:]), tx: l.TxHash, block: l.BlockNumber,
					proposed: true, effectiveAt: new(big.Int).SetBytes(l.Data)})
			}
		}
		if to == o.ToBlock {
			break
		}
	}
	add := func(k DiscrepancyKind, seq uint64, wf, format string, args ...any) {
		rep.Discrepancies = append(rep.Discrepancies, Discrepancy{Kind: k, Sequence: seq, WorkflowID: wf, Detail: fmt.Sprintf(format, args...)})
	}

	// Charges.
	seen := map[uint64]bool{}
	for _, r := range records {
		rep.TotalInDatabase += r.Amount
		seen[r.Sequence] = true
		ds := debits[r.Sequence]
		if len(ds) == 0 {
			add(MissingOnChain, r.Sequence, r.WorkflowID, "Settled in the database, but no batch on chain debited sequence %d", r.Sequence)
			continue
		}
		if len(ds) > 1 {
			add(DuplicateOnChain, r.Sequence, r.WorkflowID, "%d debits of sequence %d on chain", len(ds), r.Sequence)
		}
		d := ds[0]
		if d.charge.Tag != WorkflowTag(r.WorkflowID) {
			add(WorkflowMismatch, r.Sequence, r.WorkflowID, "sequence %d was debited on chain for another workflow (tag %016x) in %s", r.Sequence, d.charge.Tag, d.tx.Hex())
			continue
		}
		if int64(d.charge.Cents) != r.Amount {
			add(AmountMismatch, r.Sequence, r.WorkflowID, "charged %d cents in the database, %d cents on chain in %s", r.Amount, d.charge.Cents, d.tx.Hex())
		}
		if o.RefOf != nil && o.RefOf(r.CustomerID) != d.ref {
			add(CustomerMismatch, r.Sequence, r.WorkflowID, "debited on chain from customer reference %s, not %s's", common.Hash(d.ref).Hex(), r.CustomerID)
		}
		if r.TxHash != "" && common.HexToHash(r.TxHash) != d.tx {
			add(TxMismatch, r.Sequence, r.WorkflowID, "the workflow names transaction %s, the debit is in %s", r.TxHash, d.tx.Hex())
		}
	}
	for seq, ds := range debits {
		if !seen[seq] {
			add(NotInDatabase, seq, fmt.Sprintf("tag %016x", ds[0].charge.Tag), "debited on chain in %s (block %d) for %d cents, but no Settled workflow has sequence %d",
				ds[0].tx.Hex(), ds[0].block, ds[0].charge.Cents, seq)
		}
	}

	// Refunds: each applied once, as the database has it, within its charge.
	dbRefunds := map[[32]byte]RefundRecord{}
	for _, r := range o.Refunds {
		key, err := RefundKey(r.RefundID)
		if err != nil {
			add(RefundMismatch, r.Sequence, r.RefundID, "%v", err)
			continue
		}
		dbRefunds[key] = r
	}
	refundedOf := map[uint64]int64{}
	keys := map[[32]byte]int{}
	for _, a := range refunds {
		id := WorkflowIDFromKey(a.key)
		keys[a.key]++
		if keys[a.key] == 2 {
			add(RefundDuplicate, a.seq, id, "refund %s applied more than once on chain", id)
		}
		refundedOf[a.seq] += a.amount
		r, ok := dbRefunds[a.key]
		if !ok {
			add(RefundNotInDatabase, a.seq, id, "refund %s of sequence %d applied on chain in %s for %d cents, but the database holds no Succeeded refund of that id", id, a.seq, a.tx.Hex(), a.amount)
			continue
		}
		switch {
		case r.Sequence != a.seq:
			add(RefundMismatch, a.seq, id, "refund %s refunds sequence %d on chain, %d in the database", id, a.seq, r.Sequence)
		case r.Amount != a.amount:
			add(RefundMismatch, a.seq, id, "refund %s is %d cents on chain, %d in the database", id, a.amount, r.Amount)
		case r.TxHash != "" && common.HexToHash(r.TxHash) != a.tx:
			add(RefundMismatch, a.seq, id, "refund %s names transaction %s, it was applied in %s", id, r.TxHash, a.tx.Hex())
		}
	}
	for key, r := range dbRefunds {
		if keys[key] == 0 {
			add(RefundMissingOnChain, r.Sequence, r.RefundID, "Succeeded in the database, but refund %s was never applied on chain", r.RefundID)
		}
	}
	for seq, total := range refundedOf {
		if ds := debits[seq]; len(ds) > 0 && total > int64(ds[0].charge.Cents) {
			add(RefundExceedsCharge, seq, "", "the refunds of sequence %d add up to %d cents, more than its charge of %d", seq, total, ds[0].charge.Cents)
		}
	}

	// Owners.
	if o.CheckOwners {
		if err := reconcileOwners(ctx, b, o, owners, add); err != nil {
			return nil, err
		}
	}

	// Balances.
	if o.State != nil {
		at := new(big.Int).SetUint64(o.ToBlock)
		view := func(data []byte) ([]byte, error) {
			return o.State.CallContract(ctx, ethereum.CallMsg{To: &o.Contract, Data: data}, at)
		}
		refs := map[[32]byte]AccountRecord{}
		for _, a := range o.Accounts {
			refs[a.Ref] = a
		}
		for ref := range flows {
			if _, ok := refs[ref]; !ok {
				refs[ref] = AccountRecord{Ref: ref, OnChain: math.MinInt64}
			}
		}
		var held int64
		for ref, a := range refs {
			out, err := view(settlementABI.PackBalanceOf(ref))
			if err != nil {
				return nil, fmt.Errorf("settlement: reconcile: balance of %s: %w", common.Hash(ref).Hex(), err)
			}
			bal, err := settlementABI.UnpackBalanceOf(out)
			if err != nil {
				return nil, fmt.Errorf("settlement: reconcile: balance of %s: %w", common.Hash(ref).Hex(), err)
			}
			onChain := cents(bal)
			held += onChain
			rep.Customers++
			who := a.CustomerID
			if who == "" {
				who = common.Hash(ref).Hex()
			}
			if f := flows[ref]; f != onChain {
				add(BalanceMismatch, 0, who, "the contract holds %d cents for %s, but its events add up to %d (deposits − withdrawals − charges + refunds)", onChain, who, f)
			}
			switch {
			case a.OnChain == math.MinInt64 && onChain != 0:
				add(LedgerMismatch, 0, who, "the contract holds %d cents for %s, whom the database has no account of", onChain, who)
			case a.OnChain != math.MinInt64 && a.OnChain != onChain:
				add(LedgerMismatch, 0, who, "the database says the contract holds %d cents for %s; it holds %d", a.OnChain, who, onChain)
			}
		}
		rep.Held = held
		out, err := view(settlementABI.PackPayeeOwed())
		if err != nil {
			return nil, fmt.Errorf("settlement: reconcile: payee owed: %w", err)
		}
		owed, err := settlementABI.UnpackPayeeOwed(out)
		if err != nil {
			return nil, fmt.Errorf("settlement: reconcile: payee owed: %w", err)
		}
		rep.PayeeOwed = cents(owed)
		if out, err = view(settlementABI.PackToken()); err == nil && len(out) == 32 {
			token := common.BytesToAddress(out[12:])
			if out, err = o.State.CallContract(ctx, ethereum.CallMsg{To: &token, Data: erc20ABI.PackBalanceOf(o.Contract)}, at); err == nil {
				var tb *big.Int
				if tb, err = erc20ABI.UnpackBalanceOf(out); err == nil {
					// Customers not seen in events (none) hold nothing.
					sum := new(big.Int).Add(new(big.Int).Mul(big.NewInt(held), unit), owed)
					if tb.Cmp(sum) < 0 {
						add(HoldingsMismatch, 0, "", "the contract holds %s base units of its token, less than its customers' balances (%d cents) and what the payee is owed (%s base units): %s", tb, held, owed, sum)
					} else {
						rep.Surplus = new(big.Int).Sub(tb, sum)
					}
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("settlement: reconcile: the contract's token holdings: %w", err)
		}
	}
	slices.SortFunc(rep.Discrepancies, func(a, b Discrepancy) int {
		return cmp.Or(cmp.Compare(a.Sequence, b.Sequence), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.WorkflowID, b.WorkflowID))
	})
	return rep, nil
}

// ContractInfo is what a settlement contract says of itself.
type ContractInfo struct {
	// Version is the contract's version() (ContractVersion for a contract
	// this package deploys).
	Version    uint64
	DeployedAt uint64 // the block it was deployed in
	Token      common.Address
	Decimals   uint8
	Payee      common.Address
	Operator   common.Address
	// WithdrawalNotice is how long an owner waits between asking for a
	// withdrawal and withdrawing.
	WithdrawalNotice time.Duration
	// Holdings is the contract's token balance (base units): its
	// customers' balances plus PayeeOwed.
	Holdings *big.Int
	// PayeeOwed is what the payee has earned and not claimed (base units).
	PayeeOwed *big.Int
}

// Held is what the contract holds for its customers (base units).
func (i ContractInfo) Held() *big.Int { return new(big.Int).Sub(i.Holdings, i.PayeeOwed) }

// Inspect reads a settlement contract's deployment block, token (and its
// decimals), payee, operator, withdrawal notice and holdings. A contract
// of the first version (the operator paid every charge) is an error.
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
	out, err = call(contract, settlementABI.PackWithdrawalNotice())
	var notice *big.Int
	if err == nil {
		notice, err = settlementABI.UnpackWithdrawalNotice(out)
	}
	if err != nil || !notice.IsInt64() {
		return info, fmt.Errorf("settlement: %s is a settlement contract of the first version (the operator paid every charge), or not one: it has no withdrawal notice; deploy the current contract (chain deploy)", contract)
	}
	info.WithdrawalNotice = time.Duration(notice.Int64()) * time.Second
	if info.Version, err = contractVersion(ctx, b, contract); err != nil {
		return info, fmt.Errorf("settlement: %s is settlement contract %s; this build settles with version %d: deploy it (chain deploy)", contract, versionName(0, err), ContractVersion)
	}
	if out, err = call(contract, settlementABI.PackPayeeOwed()); err != nil {
		return info, err
	}
	if info.PayeeOwed, err = settlementABI.UnpackPayeeOwed(out); err != nil {
		return info, err
	}
	if out, err = call(info.Token, erc20ABI.PackBalanceOf(contract)); err != nil {
		return info, err
	}
	if info.Holdings, err = erc20ABI.UnpackBalanceOf(out); err != nil {
		return info, err
	}
	return info, nil
}

// changeOwnerSelector is the 4-byte selector of the contract's changeOwner.
var changeOwnerSelector = settlementABI.GetABI().Methods["changeOwner"].ID

// reconcileOwners reports each OwnerSet event, in chain order, that no
// grant the engine sent explains (same customer reference and address); an
// owner's own move (changeOwner, which only the current owner can call)
// is explained when the owner it replaced was.
func reconcileOwners(ctx context.Context, b ReconcileBackend, o ReconcileOptions, sets []ownerSet,
	add func(k DiscrepancyKind, seq uint64, wf, format string, args ...any)) error {
	granted := map[[32]byte]map[common.Address]bool{}
	who := map[[32]byte]string{}
	for _, a := range o.Accounts {
		if a.CustomerID != "" {
			who[a.Ref] = a.CustomerID
		}
	}
	for _, g := range o.OwnerGrants {
		if granted[g.Ref] == nil {
			granted[g.Ref] = map[common.Address]bool{}
		}
		granted[g.Ref][g.Owner] = true
		who[g.Ref] = g.CustomerID
	}
	explained := map[[32]byte]bool{} // whether each customer's current owner is explained
	for _, s := range sets {
		ok := granted[s.ref][s.owner]
		if s.proposed {
			if !ok {
				name := who[s.ref]
				if name == "" {
					name = common.Hash(s.ref).Hex()
				}
				add(OwnerNotSetByEngine, 0, name, "the contract was asked in %s (block %d) to make %s the owner of %s's balance from %s (Unix time %s; cancelOwnerChange stops it), but the engine sent no grant of that address for that customer",
					s.tx.Hex(), s.block, s.owner.Hex(), name, time.Unix(s.effectiveAt.Int64(), 0).UTC().Format(time.RFC3339), s.effectiveAt)
			}
			continue
		}
		if !ok && explained[s.ref] {
			tx, _, err := b.TransactionByHash(ctx, s.tx)
			if err != nil {
				return fmt.Errorf("settlement: reconcile: owner set in %s: %w", s.tx.Hex(), err)
			}
			ok = bytes.HasPrefix(tx.Data(), changeOwnerSelector)
		}
		explained[s.ref] = ok
		if ok {
			continue
		}
		name := who[s.ref]
		if name == "" {
			name = common.Hash(s.ref).Hex()
		}
		add(OwnerNotSetByEngine, 0, name, "the contract made %s the owner of %s's balance in %s (block %d), but the engine sent no grant of that address for that customer",
			s.owner.Hex(), name, s.tx.Hex(), s.block)
	}
	return nil
}
