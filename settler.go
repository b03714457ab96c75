package settleflow

import "context"

// Charge is one workflow's quoted charge, handed to a [Settler]. WorkflowID is
// the idempotency key: however often a charge is submitted, it is charged at
// most once.
type Charge struct {
	WorkflowID string
	// Sequence is the workflow's number in its environment: dense, from 1,
	// assigned durably when the workflow was created and never reused. A
	// settler may key its on-chain record by it (one bit per workflow) rather
	// than by WorkflowID; it is as stable an idempotency key.
	Sequence    uint64
	Environment Environment
	CustomerID  string
	// Amount is the quoted amount in minor units of Currency.
	Amount   int64
	Currency string
}

// Settlement tells where a charge landed on chain. It is the workflow's
// "settlement" object on the wire.
type Settlement struct {
	ChainID       int64  `json:"chainId"`
	Network       string `json:"network"`
	TxHash        string `json:"txHash"`
	BlockNumber   uint64 `json:"blockNumber"`
	Confirmations uint64 `json:"confirmations"`
}

// SettlementState is how far a submitted charge has come.
type SettlementState int

// The states a Settler reports for a charge.
const (
	// SettlementUnknown: the settler holds no record of the charge (never
	// submitted, or forgotten, e.g. after a restart of an in-memory chain). The
	// engine submits it (again); idempotency keeps it single.
	SettlementUnknown SettlementState = iota
	// SettlementPending: accepted, not yet final. Settlement may already carry a
	// transaction hash.
	SettlementPending
	// SettlementConfirmed: final at the configured depth; Settlement is set.
	SettlementConfirmed
	// SettlementFailed: failed for good (for example a reverted transaction);
	// Failure is set and nothing was charged.
	SettlementFailed
)

// String returns the state's name.
func (s SettlementState) String() string {
	switch s {
	case SettlementPending:
		return "pending"
	case SettlementConfirmed:
		return "confirmed"
	case SettlementFailed:
		return "failed"
	default:
		return "unknown"
	}
}

// SettlementStatus is a Settler's answer for one charge.
type SettlementStatus struct {
	WorkflowID string
	State      SettlementState
	Settlement *Settlement
	Failure    *Failure
}

// Settler settles charges on chain. Submission is separate from confirmation:
// a charge may wait minutes for finality, and the engine holds neither a
// worker nor a transaction open meanwhile; it asks Status again later.
//
// Both methods take batches and must be idempotent per Charge.WorkflowID: a
// charge submitted twice, or submitted again after the settler forgot it, is
// charged at most once (the shipped settler guarantees this on chain). Both
// may be called concurrently. An error wrapped with [Permanent] fails the
// whole batch for good; any other error is transient and retried with backoff.
type Settler interface {
	// Submit accepts charges for settlement. It returns once the settler has
	// taken them (they may not be on chain yet).
	Submit(ctx context.Context, charges []Charge) error
	// Status reports each charge's state, in the order given, without waiting
	// for confirmations.
	Status(ctx context.Context, charges []Charge) ([]SettlementStatus, error)
}
