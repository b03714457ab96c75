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
}
