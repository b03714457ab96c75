package settleflow

import (
	"context"
	"time"

	"github.com/settleflow/settleflow/driver"
	"github.com/settleflow/settleflow/wire"
)

// Customer funds. With a Settler that implements [Funds] (the shipped
// settlement.Settler does), every charge is paid from its customer's prepaid
// balance in the settlement contract, not by the operator:
//
//	onChain   = deposits − withdrawals − charges + refunds   (confirmed on chain)
//	available = onChain − reserved − pendingWithdrawal
//
// where reserved is the sum of the quoted amounts of the customer's workflows
// not yet Settled, Failed or Canceled. Create admits a workflow only if its
// quote fits available, and admission and reservation are one atomic step in
// the Store (InsertWorkflows). All amounts are integer minor units.

// Balance is a customer's funds in one environment (wire.Balance).
type Balance = wire.Balance

// DepositInfo tells a customer where to deposit (wire.DepositInfo).
type DepositInfo = wire.DepositInfo

// Customer is a customer's funds as the API shows them (wire.Customer).
type Customer = wire.Customer

// Account is a customer's ledger in one environment as a Store keeps it ([driver.Account]).
type Account = driver.Account

// FundsEventKind is what a confirmed balance change on chain was ([driver.FundsEventKind]).
type FundsEventKind = driver.FundsEventKind

// FundsEvent is one balance change a [Funds] settler found on chain, at the environment's confirmation depth ([driver.FundsEvent]).
type FundsEvent = driver.FundsEvent

// FundsCursor is how far the engine has applied an environment's FundsEvents ([driver.FundsCursor]).
type FundsCursor = driver.FundsCursor

// FundsBatch is one step of following an environment's balance changes ([driver.FundsBatch]).
type FundsBatch = driver.FundsBatch

// FundsApplied is what one Store.ApplyFunds did ([driver.FundsApplied]).
type FundsApplied = driver.FundsApplied

// QuarantinedFunds is a balance change on chain a Store could not apply ([driver.QuarantinedFunds]).
type QuarantinedFunds = driver.QuarantinedFunds

// FundsStatus is how far and how well a Store follows an environment's balance changes ([driver.FundsStatus]).
type FundsStatus = driver.FundsStatus

// FundsRewind moves an environment's cursor back after a deep reorg ([driver.FundsRewind]).
type FundsRewind = driver.FundsRewind

// ErrFundsReorg is wrapped by FundsEvents' error when the cursor's block left the chain ([driver.ErrFundsReorg]).
var ErrFundsReorg = driver.ErrFundsReorg

// RefundCharge is one refund handed to a [Funds] settler ([driver.RefundCharge]).
type RefundCharge = driver.RefundCharge

// Funds is implemented by a [Settler] whose charges are paid from customers' prepaid balances on chain (the shipped settlement.Settler) ([driver.Funds]).
type Funds = driver.Funds

// The balance changes a Funds settler reports ([driver.FundsEventKind]).
const (
	FundsDeposit             = driver.FundsDeposit
	FundsWithdrawalRequested = driver.FundsWithdrawalRequested
	FundsWithdrawalCanceled  = driver.FundsWithdrawalCanceled
	FundsWithdrawn           = driver.FundsWithdrawn
	FundsOwnerSet            = driver.FundsOwnerSet
	FundsOwnerChangeProposed = driver.FundsOwnerChangeProposed
	FundsOwnerChangeCanceled = driver.FundsOwnerChangeCanceled
)

// FundsChainTimer is implemented by a [Funds] settler that can tell how
// current its node is (the shipped settlement.Settler does). The engine
// then judges its view of an environment's funds by the chain's time, not
// only by when the follower last found nothing newer: a stalled node that
// still answers has nothing newer, forever.
type FundsChainTimer interface {
	// FundsChainTime returns the block time of the newest block env's node
	// has (the head the confirmation depth is counted from): the view of
	// funds followed up to the confirmation depth is as current as that
	// block. Zero when the chain's block times say nothing of its node (a
	// test chain that seals a block only when a transaction waits): the
	// view is then current whenever the node answers.
	FundsChainTime(ctx context.Context, env Environment) (time.Time, error)
}
