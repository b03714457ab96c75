package portal

import (
	"context"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/settlement"
)

// Chain is what the portal asks of the settlement chain: the shipped
// *settlement.Settler (and *settlement.Simulated) implement it.
type Chain interface {
	// Chain describes env's chain (chain id, contract, token).
	Chain(env settleflow.Environment) (settlement.ChainInfo, bool)
	// DepositTypedData is the typed data a wallet signs to deposit.
	DepositTypedData(ctx context.Context, env settleflow.Environment, customerID string, a settlement.DepositAuthorization) ([]byte, error)
	// RelayDeposit checks and sends a signed deposit; the operator pays.
	RelayDeposit(ctx context.Context, env settleflow.Environment, customerID string, a settlement.DepositAuthorization) (string, error)
	// RelayReceipt says what became of a relayed transaction.
	RelayReceipt(ctx context.Context, env settleflow.Environment, tx string) (settlement.RelayReceipt, error)
	// OwnerCall builds a call the owner's wallet sends.
	OwnerCall(env settleflow.Environment, customerID, method string, cents int64) (settlement.Call, error)
	// Withdrawal reads the customer's withdrawal under notice.
	Withdrawal(ctx context.Context, env settleflow.Environment, customerID string) (settlement.Withdrawal, error)
	// Owner is the owner the contract records for the customer ("" none).
	Owner(ctx context.Context, env settleflow.Environment, customerID string) (string, error)
	// OwnerChange is the owner change proposed for the customer on chain
	// (nil if none).
	OwnerChange(ctx context.Context, env settleflow.Environment, customerID string) (*settlement.OwnerChange, error)
	// WalletBalance is what an address holds of the token, in cents.
	WalletBalance(ctx context.Context, env settleflow.Environment, address string) (int64, error)
}

var _ Chain = (*settlement.Settler)(nil)
