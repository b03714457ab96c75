package driver

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/settleflow/settleflow/wire"
)

// Account is a customer's ledger in one environment as a Store keeps it. A
// Store returns the zero Account (with Environment, CustomerID and Ref set)
// for a customer it holds no row for.
type Account struct {
	Environment wire.Environment
	// CustomerID is empty for an account known only by its Ref (a deposit
	// made on chain before the engine saw the customer).
	CustomerID string
	// Ref is the customer's reference in the settlement contract (see
	// Funds.CustomerRef): the account's key.
	Ref string
	// Deposited is confirmed deposits less confirmed withdrawals.
	Deposited int64
	// Charged is the sum of the charges of the customer's Settled workflows.
	Charged int64
	// Refunded is the sum of the customer's Succeeded refunds.
	Refunded int64
	// Reserved is the sum of the quoted amounts of the customer's workflows
	// not yet Settled, Failed or Canceled.
	Reserved int64
	// PendingWithdrawal is the amount under withdrawal notice.
	PendingWithdrawal int64
	// Owner is the address that owns the customer's balance in the
	// contract (the last FundsOwnerSet followed), 0x-hex; empty if none.
	Owner string
	// Quarantined counts the customer's balance changes on chain the
	// engine could not apply (see FundsEvent.Invalid): while it is not
	// zero the customer's balance is unknown, and admission refuses every
	// workflow that needs funds.
	Quarantined int64
	// FaucetAt is when the test faucet funded the customer; zero if never.
	FaucetAt time.Time
	// UpdatedAt is the last change; zero for an account never written.
	UpdatedAt time.Time
}

// OnChain is Deposited − Charged + Refunded, saturated at the bounds of
// int64 (never wrapped).
func (a *Account) OnChain() int64 { return SubSat(AddSat(a.Deposited, a.Refunded), a.Charged) }

// Available is OnChain − Reserved − PendingWithdrawal, saturated at the
// bounds of int64: a pending withdrawal or reservations larger than the
// balance make it negative, never wrap it positive.
func (a *Account) Available() int64 {
	return SubSat(SubSat(a.OnChain(), a.Reserved), a.PendingWithdrawal)
}

// Admits reports whether a workflow quoted amount may be admitted against
// the account: its balance is known (nothing quarantined) and Available
// covers amount.
func (a *Account) Admits(amount int64) bool { return a.Quarantined == 0 && a.Available() >= amount }

// AddSat is x + y saturated at math.MaxInt64 and math.MinInt64.
func AddSat(x, y int64) int64 {
	s := x + y
	switch {
	case x > 0 && y > 0 && s < 0:
		return math.MaxInt64
	case x < 0 && y < 0 && s >= 0:
		return math.MinInt64
	}
	return s
}

// SubSat is x − y saturated at math.MaxInt64 and math.MinInt64.
func SubSat(x, y int64) int64 {
	if y == math.MinInt64 {
		if x >= 0 {
			return math.MaxInt64
		}
		return x - y
	}
	return AddSat(x, -y)
}

// Balance is the account's wire balance.
func (a *Account) Balance() wire.Balance {
	return wire.Balance{OnChain: a.OnChain(), Reserved: a.Reserved, PendingWithdrawal: a.PendingWithdrawal,
		Available: a.Available(), Currency: wire.Currency}
}

// FundsEventKind is what a confirmed balance change on chain was.
type FundsEventKind string

// The balance changes a [Funds] settler reports.
const (
	// FundsDeposit: Amount was deposited for the customer.
	FundsDeposit FundsEventKind = "deposit"
	// FundsWithdrawalRequested: the owner put Amount under withdrawal notice
	// (replacing any earlier request).
	FundsWithdrawalRequested FundsEventKind = "withdrawal_requested"
	// FundsWithdrawalCanceled: the owner canceled the pending request.
	FundsWithdrawalCanceled FundsEventKind = "withdrawal_canceled"
	// FundsWithdrawn: Amount left the contract to the owner; the request
	// is over.
	FundsWithdrawn FundsEventKind = "withdrawn"
	// FundsOwnerSet: the balance's owner became Owner (set for the first
	// time or changed); Amount is 0.
	FundsOwnerSet FundsEventKind = "owner_set"
	// FundsOwnerChangeProposed: the operator proposed Owner as the
	// balance's next owner, effective at AvailableAt unless the owner
	// cancels it; nothing on the account changes (Amount is 0).
	FundsOwnerChangeProposed FundsEventKind = "owner_change_proposed"
	// FundsOwnerChangeCanceled: the change to Owner proposed earlier was
	// dropped; nothing on the account changes (Amount is 0).
	FundsOwnerChangeCanceled FundsEventKind = "owner_change_canceled"
)

// FundsEvent is one balance change a [Funds] settler found on chain, at the
// environment's confirmation depth.
type FundsEvent struct {
	Kind FundsEventKind
	// Ref is the customer's reference in the contract (Account.Ref).
	Ref string
	// Amount in minor units.
	Amount int64
	// Owner is the balance's new owner (0x-hex) of a FundsOwnerSet, or the
	// proposed one of a FundsOwnerChangeProposed or
	// FundsOwnerChangeCanceled.
	Owner string
	// AvailableAt is when a FundsWithdrawalRequested's amount can be
	// withdrawn (the end of the contract's notice), or when a
	// FundsOwnerChangeProposed takes effect, if the settler knows it; zero
	// otherwise.
	AvailableAt time.Time
	TxHash      string
	BlockNumber uint64
	// LogIndex is the event's index in its block: with TxHash, the
	// event's identity (a Store applies each at most once).
	LogIndex uint
	// Invalid, when not empty, says why the event cannot be applied (an
	// amount that is not whole minor units or does not fit an int64, a log
	// that does not decode): the Store quarantines it instead (see
	// Store.ApplyFunds) and goes on with the others.
	Invalid string
}

// QuarantinedFunds is a balance change on chain a Store could not apply:
// kept with the reason, it makes its customer's balance unknown
// (Account.Quarantined) until an operator resolves it.
type QuarantinedFunds struct {
	Event  FundsEvent
	Reason string
}

// FundsApplied is what one Store.ApplyFunds did.
type FundsApplied struct {
	// Applied is false when the Store's cursor was not the batch's From
	// (another engine applied it, or the cursor moved): nothing was done.
	Applied bool
	// Quarantined are the batch's events set aside instead of applied.
	Quarantined []QuarantinedFunds
}

// FundsStatus is how far and how well a Store follows an environment's
// balance changes.
type FundsStatus struct {
	Cursor FundsCursor
	// CurrentAt is when the follower last found nothing newer on chain
	// than Cursor (at the confirmation depth); zero if never.
	CurrentAt time.Time
	// Quarantined counts the environment's quarantined events.
	Quarantined int64
}

// FundsRewind moves an environment's cursor back to a block both the
// Store's history and the chain share, after a reorg deeper than the
// confirmation depth (see Store.RewindFunds).
type FundsRewind struct {
	Environment wire.Environment
	// From must be the cursor the Store holds (compare and set).
	From FundsCursor
	// To is the cursor to go back to (a block of the Store's history
	// still on the chain), or the zero cursor.
	To        FundsCursor
	UpdatedAt time.Time
}

// ErrFundsReorg is wrapped by the error of FundsEvents when the cursor's
// block is no longer on the canonical chain (a reorg deeper than the
// confirmation depth): the caller rewinds to an older cursor.
var ErrFundsReorg = errors.New("the cursor's block is no longer on the chain")

// FundsCursor is how far the engine has applied an environment's
// FundsEvents: every event in blocks up to and including Block (whose hash
// is Hash) is applied. The zero cursor means "from the contract's
// deployment".
type FundsCursor struct {
	Block uint64
	Hash  string
}

// FundsBatch is one step of following an environment's balance changes:
// the events after From up to To, applied in one transaction.
type FundsBatch struct {
	Environment wire.Environment
	// From must be the cursor the Store holds (compare and set): a batch
	// applied already, or by another engine, is skipped.
	From   FundsCursor
	To     FundsCursor
	Events []FundsEvent
	// EventsFor builds the outbox event of each event applied for the
	// first time (a deposit's customer.funded, an owner change's
	// customer.owner_set, a withdrawal request's
	// customer.withdrawal_requested), given the account after it; nil: no
	// event. It is called inside the transaction, never for an event
	// applied again after a rewind.
	EventsFor func(ev FundsEvent, after *Account) *wire.Event
	UpdatedAt time.Time
}

// RefundCharge is one refund handed to a [Funds] settler: part or all of a
// settled charge given back to its customer's balance. RefundID is its
// idempotency key on chain: however often it is submitted, it is applied at
// most once.
type RefundCharge struct {
	RefundID    string
	WorkflowID  string
	Environment wire.Environment
	CustomerID  string
	// Sequence is the refunded charge's Charge.Sequence.
	Sequence uint64
	// Amount in minor units, at least 1.
	Amount   int64
	Currency string
}

// Funds is implemented by a [Settler] whose charges are paid from customers'
// prepaid balances on chain (the shipped settlement.Settler). With it the
// engine gates Create on the customer's available balance, follows deposits
// and withdrawals, and settles refunds. Every method is safe for concurrent
// use.
type Funds interface {
	// Funded reports whether charges of env are debited from customer
	// balances. An engine whose settler is not Funded for env admits every
	// workflow of env, and refunds of env are refused.
	Funded(env wire.Environment) bool
	// CustomerRef is the customer's key in env's contract (0x-hex, 32
	// bytes), derived with the deployment's secret.
	CustomerRef(env wire.Environment, customerID string) (string, error)
	// DepositInfo says where a customer of env deposits.
	DepositInfo(env wire.Environment, customerID string) (wire.DepositInfo, error)
	// FundsEvents returns the balance changes confirmed on chain (at env's
	// confirmation depth) in blocks after cursor, oldest first, and the
	// cursor after them; a bounded range of blocks per call, so the caller
	// calls again while the cursor moves. A cursor whose block is no longer
	// on the canonical chain is an error wrapping ErrFundsReorg. An event
	// that cannot be read is returned with Invalid set, never an error.
	FundsEvents(ctx context.Context, env wire.Environment, after FundsCursor) ([]FundsEvent, FundsCursor, error)
	// Faucet deposits amount for a customer of the test environment from
	// the operator's test tokens. It returns once the deposit is sent;
	// FundsEvents reports it once confirmed. Live is never funded: it is
	// an error for Live.
	Faucet(ctx context.Context, env wire.Environment, customerID string, amount int64) (txHash string, err error)
	// SubmitRefunds and RefundStatus are Submit and Status for refunds,
	// with the same contract: idempotent per RefundID, errors per refund
	// (*RefusedError keyed by refund id), Status errors transient.
	SubmitRefunds(ctx context.Context, refunds []RefundCharge) error
	RefundStatus(ctx context.Context, refunds []RefundCharge) ([]SettlementStatus, error)
}
