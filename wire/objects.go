package wire

import (
	"encoding/json"
	"fmt"
	"time"
)

// Settlement tells where a charge landed on chain. It is the workflow's
// "settlement" object on the wire.
type Settlement struct {
	ChainID       int64  `json:"chainId"`
	Network       string `json:"network"`
	TxHash        string `json:"txHash"`
	BlockNumber   uint64 `json:"blockNumber"`
	Confirmations uint64 `json:"confirmations"`
	// GasUsed is the workflow's share of its batch transaction's gas (the
	// transaction's gas over the charges it settled); 0 when not known (a
	// settlement found on chain by a settler that did not send it).
	GasUsed uint64 `json:"gasUsed,omitempty"`
	// Fee is the same share of the transaction's fee (gas used × effective
	// gas price) in the chain's native unit (ETH), as a decimal string;
	// empty when not known.
	Fee string `json:"fee,omitempty"`
}

// RefundStatus is a refund's state. The names are part of the wire contract.
type RefundStatus string

// The states of a refund: Pending until the chain confirms it (Succeeded) or
// refuses it for good (Failed; nothing was given back).
const (
	RefundPending   RefundStatus = "Pending"
	RefundSucceeded RefundStatus = "Succeeded"
	RefundFailed    RefundStatus = "Failed"
)

// Valid reports whether s is a refund status.
func (s RefundStatus) Valid() bool {
	return s == RefundPending || s == RefundSucceeded || s == RefundFailed
}

// ParseRefundStatus returns the refund status named by s, exactly as on the
// wire.
func ParseRefundStatus(s string) (RefundStatus, error) {
	st := RefundStatus(s)
	if !st.Valid() {
		return "", fmt.Errorf("settleflow: unknown refund status %q (want one of Pending, Succeeded, Failed)", s)
	}
	return st, nil
}

// Refund gives part or all of a Settled workflow's charge back to its
// customer's balance on chain. Its JSON form is the wire object of the HTTP
// API.
type Refund struct {
	ID         string `json:"id"`
	Object     string `json:"object"`
	Livemode   bool   `json:"livemode"`
	WorkflowID string `json:"workflowId"`
	// Amount is what is given back, in minor units of Currency, at least 1.
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
	// Reason is the caller's, at most 500 characters; empty if none.
	Reason     string       `json:"reason"`
	Status     RefundStatus `json:"status"`
	Settlement *Settlement  `json:"settlement"`
	Failure    *Failure     `json:"failure"`
	CreatedAt  time.Time    `json:"createdAt"`
	UpdatedAt  time.Time    `json:"updatedAt"`

	// CustomerID is the refunded workflow's customer.
	CustomerID string `json:"-"`
	// Sequence is the refunded charge's sequence (Workflow.Sequence).
	Sequence uint64 `json:"-"`
	// Attempts counts settlement checks that ended in a transient error
	// since the refund was created.
	Attempts int `json:"-"`
}

// Environment returns the environment the refund belongs to.
func (r *Refund) Environment() Environment {
	if r.Livemode {
		return Live
	}
	return Test
}

// Balance is a customer's funds in one environment: the "balance" object of a
// customer on the wire.
type Balance struct {
	// OnChain is what the customer holds in the settlement contract as the
	// engine has confirmed it: deposits less withdrawals less charges plus
	// refunds.
	OnChain int64 `json:"onChain"`
	// Reserved is the quoted amounts of the customer's unfinished workflows.
	Reserved int64 `json:"reserved"`
	// PendingWithdrawal is balance under withdrawal notice: no new charge
	// is admitted against it.
	PendingWithdrawal int64 `json:"pendingWithdrawal"`
	// Available is OnChain − Reserved − PendingWithdrawal: what a new
	// workflow may reserve. It is negative when charges admitted before a
	// withdrawal request exceed what the request left.
	Available int64  `json:"available"`
	Currency  string `json:"currency"`
}

// DepositInfo tells a customer (or anyone paying for it) where to deposit:
// the "deposit" object of a customer on the wire.
type DepositInfo struct {
	ChainID  int64  `json:"chainId"`
	Network  string `json:"network"`
	Contract string `json:"contract"`
	Token    string `json:"token"`
	// CustomerRef is the customer's key in the contract (0x-prefixed hex of
	// 32 bytes), derived from the customer id with a secret of the
	// deployment, so that it does not reveal the id to whoever guesses ids.
	CustomerRef string `json:"customerRef"`
}

// Customer is a customer's funds in one environment: the wire object of
// GET /v1/customers/{id}.
type Customer struct {
	ID       string       `json:"id"`
	Object   string       `json:"object"`
	Livemode bool         `json:"livemode"`
	Balance  Balance      `json:"balance"`
	Deposit  *DepositInfo `json:"deposit"`
	// Owner is the address that owns the customer's balance in the
	// contract (it alone can withdraw), 0x-hex as the chain reports it;
	// null while the balance has no owner or customer funds are off.
	Owner *string `json:"owner"`
	// OwnerChange is the change of owner proposed on chain (the operator's
	// setOwner for a balance that has an owner): the proposed owner takes
	// the balance at its effectiveAt unless the current owner cancels it
	// first; null while none is proposed, or customer funds are off.
	OwnerChange *OwnerChangeProposal `json:"ownerChange"`
}

// OwnerChangeProposal is a change of a balance's owner proposed on chain,
// read at the chain's latest block.
type OwnerChangeProposal struct {
	// Address is the proposed owner, checksummed 0x-hex.
	Address     string    `json:"address"`
	EffectiveAt time.Time `json:"effectiveAt"`
}

// ProductInfo describes a registered product: the catalogue entry.
type ProductInfo struct {
	Name           string      `json:"name"`
	Description    string      `json:"description"`
	TargetMargin   BasisPoints `json:"targetMargin"`
	MinimumCharge  Money       `json:"minimumCharge"`
	PricingSummary string      `json:"pricingSummary"`
	// Pricing is the product's pricing model.
	Pricing Pricing `json:"pricing"`
	// SuccessCriteria is the product's default criteria tree, or null.
	SuccessCriteria json.RawMessage `json:"successCriteria"`
	// MarginFloor is the product's margin floor, or null when it has none.
	MarginFloor *BasisPoints `json:"marginFloor"`
	// PayloadSchema is the JSON Schema (2020-12) of the payload, reflected
	// from the product's Go type P: field names from the json tags, types,
	// and what the fields' jsonschema tags state (required, bounds,
	// patterns); unknown fields are refused as the decoder refuses them.
	PayloadSchema json.RawMessage `json:"payloadSchema"`
	// Example is Product.Example as JSON, or null.
	Example json.RawMessage `json:"example"`
}

// MarginGroupBy is what a margins report groups workflows by. The names
// are part of the wire contract.
type MarginGroupBy string

// The groupings of a margins report.
const (
	MarginsByProduct  MarginGroupBy = "product"
	MarginsByCustomer MarginGroupBy = "customer"
	// MarginsByDay groups by the UTC day a workflow was created
	// (YYYY-MM-DD).
	MarginsByDay MarginGroupBy = "day"
)

// Valid reports whether g is a grouping.
func (g MarginGroupBy) Valid() bool {
	return g == MarginsByProduct || g == MarginsByCustomer || g == MarginsByDay
}

// MarginRow is one group of a margins report: the group's Settled
// workflows. Every amount is in minor units of the report's currency.
type MarginRow struct {
	// Key is the product's name, the customer's id or the day
	// (YYYY-MM-DD, UTC).
	Key string `json:"key"`
	// Workflows counts the group's Settled workflows.
	Workflows int64 `json:"workflows"`
	// Charged is what they charged; Refunded what was given back of it.
	Charged  Money `json:"charged"`
	Refunded Money `json:"refunded"`
	// Cost is their actual cost.
	Cost Money `json:"cost"`
	// Margin is the margin achieved on what was kept:
	// (charged − refunded − cost) / (charged − refunded), rounded toward
	// zero to a basis point; nil when nothing was kept.
	Margin *BasisPoints `json:"margin"`
}

// MarginReport is a margins report: the wire object of GET /v1/margins.
type MarginReport struct {
	Object        string        `json:"object"`
	Livemode      bool          `json:"livemode"`
	GroupBy       MarginGroupBy `json:"groupBy"`
	CreatedAfter  *time.Time    `json:"createdAfter"`
	CreatedBefore *time.Time    `json:"createdBefore"`
	// Product is the product the report counts; "" for all.
	Product  string `json:"product"`
	Currency string `json:"currency"`
	// Data are the groups, by key.
	Data []MarginRow `json:"data"`
	// Total sums every group.
	Total MarginRow `json:"total"`
}
