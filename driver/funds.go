package driver

import (
	"context"
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
	// FaucetAt is when the test faucet funded the customer; zero if never.
	FaucetAt time.Time
	// UpdatedAt is the last change; zero for an account never written.
	UpdatedAt time.Time
}

// OnChain is Deposited − Charged + Refunded.
func (a *Account) OnChain() int64 { return a.Deposited - a.Charged + a.Refunded }

// Available is OnChain − Reserved − PendingWithdrawal.
func (a *Account) Available() int64 { return a.OnChain() - a.Reserved - a.PendingWithdrawal }

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
)

// FundsEvent is one balance change a [Funds] settler found on chain, at the
// environment's confirmation depth.
type FundsEvent struct {
	Kind FundsEventKind
	// Ref is the customer's reference in the contract (Account.Ref).
	Ref string
	// Amount in minor units.
	Amount int64
	// Owner is the customer's owner address named by the deposit (the
	// first deposit's owner is the only one that counts on chain).
	Owner       string
	TxHash      string
	BlockNumber uint64
	LogIndex    uint
}

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
	// EventsFor builds the customer.funded event of each deposit, given
	// the account after it (nil: no event). It is called inside the
	// transaction.
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
	// on the canonical chain is an error: nothing is applied.
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
