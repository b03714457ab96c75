package driver

import (
	"context"
	"time"

	"github.com/settleflow/settleflow/wire"
)

// OwnerGrant is a customer's consent, signed as EIP-712 typed data by the
// address itself, that the address owns the customer's balance in an
// environment's settlement contract: the only address that can withdraw it.
// The contract checks the signature, the deadline and that the nonce was
// never used, so a grant sets an owner once, on the chain and contract it
// was signed for.
type OwnerGrant struct {
	// Owner is the address, 0x-hex.
	Owner string
	// Nonce is 32 random bytes, 0x-hex: the grant's one-time key.
	Nonce string
	// Origin is where the grant was signed (a customer portal's origin, or
	// the operator's application); the owner's wallet shows it.
	Origin string
	// Deadline: the grant is refused after it (whole seconds, UTC).
	Deadline time.Time
	// Signature is the 65-byte signature (r, s, v), 0x-hex.
	Signature string
}

// OwnerSetter is implemented by a [Funds] settler whose contract records
// balance owners set by the operator with the owner's signed grant (the
// shipped settlement.Settler). Every method is safe for concurrent use.
type OwnerSetter interface {
	// OwnerGrantTypedData is the EIP-712 typed data (the JSON that
	// eth_signTypedData_v4 takes) the owner signs for g, whose Signature is
	// ignored.
	OwnerGrantTypedData(env wire.Environment, customerID string, g OwnerGrant) ([]byte, error)
	// SetOwner checks g (signature, deadline, nonce, against the contract
	// as it is now) and sends the operator's setOwner for the customer,
	// returning the transaction's hash once it is sent. A grant that cannot
	// be applied is a *wire.InvalidError naming the field at fault and sends
	// nothing. The owner is the customer's once the transaction is mined
	// (Funds.FundsEvents reports it); for a customer that has an owner it is
	// a proposal that takes effect after the withdrawal notice unless the
	// current owner cancels it.
	SetOwner(ctx context.Context, env wire.Environment, customerID string, g OwnerGrant) (txHash string, err error)
	// Owner is the owner the contract records for the customer now (at
	// the chain's latest block), 0x-hex, or "" if it has none.
	Owner(ctx context.Context, env wire.Environment, customerID string) (string, error)
}

// OwnerChangeReader is implemented by an [OwnerSetter] that reads the
// owner change proposed for a customer on chain (the shipped
// settlement.Settler): Engine.Customer reports it.
type OwnerChangeReader interface {
	// ProposedOwner is the change of owner proposed for the customer now
	// (at the chain's latest block), or nil if none.
	ProposedOwner(ctx context.Context, env wire.Environment, customerID string) (*wire.OwnerChangeProposal, error)
}

// OwnerGrantRecord is an owner grant the engine sent to the chain: what
// `chain reconcile` explains the contract's OwnerSet events with.
type OwnerGrantRecord struct {
	Environment wire.Environment
	CustomerID  string
	// Ref is the customer's reference in the contract (Account.Ref).
	Ref string
	// Owner is the address the grant names, 0x and lowercase hex.
	Owner string
	// Nonce is the grant's nonce, 0x-hex (lowercase): unique per
	// environment, as on chain.
	Nonce    string
	Origin   string
	Deadline time.Time
	// TxHash is the operator's setOwner transaction.
	TxHash string
	// Effective is wire.OwnerEffectiveNow or wire.OwnerEffectiveAfterNotice.
	Effective string
	// IdempotencyKey and RequestHash, when the key is not empty: the
	// request the grant was sent for (a replay within IdempotencyTTL
	// answers this record).
	IdempotencyKey string
	RequestHash    string
	CreatedAt      time.Time
}

// OwnerGrantStore is implemented by a Store that records the owner grants
// the engine sends (storage/bunstore's Store does). Engine.SetOwner needs
// it. Every method is safe for concurrent use.
type OwnerGrantStore interface {
	// InsertOwnerGrant records r unless a grant with its Nonce is recorded
	// in its Environment already; it returns the record stored (r, or the
	// earlier one) and whether it was there before.
	InsertOwnerGrant(ctx context.Context, r OwnerGrantRecord) (*OwnerGrantRecord, bool, error)
	// OwnerGrantByKey returns the grant recorded in env under an
	// idempotency key at or after since, or ErrNotFound.
	OwnerGrantByKey(ctx context.Context, env wire.Environment, key string, since time.Time) (*OwnerGrantRecord, error)
	// ListOwnerGrants returns env's recorded grants, oldest first.
	ListOwnerGrants(ctx context.Context, env wire.Environment) ([]OwnerGrantRecord, error)
}
