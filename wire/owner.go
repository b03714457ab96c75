package wire

import "encoding/json"

// How an owner change takes effect: the "effective" of an owner_change.
const (
	// OwnerEffectiveNow: the customer had no owner; the address owns the
	// balance once the transaction is mined.
	OwnerEffectiveNow = "now"
	// OwnerEffectiveAfterNotice: the customer had an owner; the address is
	// proposed and owns the balance after the contract's withdrawal notice,
	// unless the current owner cancels the change on chain.
	OwnerEffectiveAfterNotice = "after_notice"
)

// OwnerGrantRequest is an unsigned owner grant for a customer's wallet to
// sign (eth_signTypedData_v4 of TypedData): the wire object "owner_grant"
// answered by POST /v1/customers/{id}/owner_grants.
type OwnerGrantRequest struct {
	Object     string `json:"object"`
	Livemode   bool   `json:"livemode"`
	CustomerID string `json:"customerId"`
	// Address is the address that signs and becomes the owner, 0x-hex.
	Address string `json:"address"`
	// Nonce is the grant's one-time key: 32 random bytes, 0x-hex.
	Nonce string `json:"nonce"`
	// Origin is shown by the wallet: where the grant is signed.
	Origin string `json:"origin"`
	// Deadline is when the grant expires, in Unix seconds (UTC).
	Deadline int64 `json:"deadline"`
	// TypedData is the EIP-712 typed data to sign, as JSON.
	TypedData json.RawMessage `json:"typedData"`
}

// OwnerChange is an owner grant the operator sent to the chain: the wire
// object "owner_change" answered by POST /v1/customers/{id}/owner.
type OwnerChange struct {
	Object     string `json:"object"`
	Livemode   bool   `json:"livemode"`
	CustomerID string `json:"customerId"`
	Address    string `json:"address"`
	// Status is "sent": the transaction is sent, not yet confirmed.
	Status string `json:"status"`
	// TxHash is the operator's setOwner transaction.
	TxHash string `json:"txHash"`
	// Effective is OwnerEffectiveNow or OwnerEffectiveAfterNotice.
	Effective string `json:"effective"`
}
