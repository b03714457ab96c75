package driver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/settleflow/settleflow/wire"
)

// Charge is one workflow's quoted charge, handed to a [Settler]. WorkflowID is
// the idempotency key: however often a charge is submitted, it is charged at
// most once.
type Charge struct {
	WorkflowID string
	// Sequence is the workflow's number in its environment: dense, from 1,
	// assigned durably before its charge is first submitted (in the order
	// charges are first settled) and never changed or reused. A
	// settler may key its on-chain record by it (one bit per workflow) rather
	// than by WorkflowID; it is as stable an idempotency key.
	Sequence    uint64
	Environment wire.Environment
	CustomerID  string
	// Amount is the amount charged, in minor units of Currency.
	Amount   int64
	Currency string
	// Authorization is the workflow's payment authorization
	// (wire.Workflow.Authorization), empty for a charge paid from the
	// customer's balance as reserved at creation. A settler that takes such
	// charges moves the authorized funds into the customer's balance before
	// it charges it (x402.FundingSettler).
	Authorization []byte
}

// SettlementLease says which of several engines sharing a Store settles
// charges. A chain account has one nonce sequence, so its transactions must
// come from one sender at a time; the engine holding the lease claims the
// Settling workflows of every engine (they hand their charges over through
// the Store) and submits them, and the others leave them alone. The
// contract's idempotency keeps each charge single whatever happens; the
// lease keeps the senders to one.
//
// storage.DB.Lease implements it with a Postgres advisory lock (always held
// on SQLite, which one process opens).
type SettlementLease interface {
	// Term is 0 while this process does not hold the lease, and otherwise
	// a number that is new each time the lease is taken: two calls that
	// return the same non-zero term were made within one holding. It is
	// called before every claim and settler batch, so it must not block.
	Term() uint64
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
	Settlement *wire.Settlement
	Failure    *wire.Failure
	// Err, when set, says the settler could not learn this charge's state
	// just now (its chain's node is unreachable, or no chain is configured
	// for its environment any more). State is then meaningless: the engine
	// neither fails nor resubmits the charge, and asks again after a backoff.
	// A settler that cannot tell must say so here rather than answer
	// SettlementFailed, which the engine takes to mean nothing was charged.
	Err error
	// CheckAfter, for a pending charge, is how soon the settler expects its
	// state to change (its batch sent, the next block, the last
	// confirmation): the engine asks again after that long, though never
	// later than Options.SettlementPollInterval nor sooner than 10 ms. Zero
	// leaves it to SettlementPollInterval.
	CheckAfter time.Duration
}

// RefusedError is what a Settler's Submit returns when it refused some
// charges of the batch for good and took every other one. Refused holds the
// reason for each refused charge, by workflow id. The engine fails a refused
// charge that it never submitted before at once; a refused charge that may
// have been submitted earlier (by this process before a restart, say) fails
// only after Status confirms it is not settled.
type RefusedError struct {
	Refused map[string]*wire.Failure
}

func (e *RefusedError) Error() string {
	ids := make([]string, 0, len(e.Refused))
	for id := range e.Refused {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var b strings.Builder
	fmt.Fprintf(&b, "settleflow: %d charge(s) refused:", len(ids))
	for i, id := range ids {
		if i == 3 {
			fmt.Fprintf(&b, " and %d more", len(ids)-3)
			break
		}
		fmt.Fprintf(&b, " %s (%s)", id, e.Refused[id].Error())
	}
	return b.String()
}

// Settler settles charges on chain. Submission is separate from confirmation:
// a charge may wait minutes for finality, and the engine holds neither a
// worker nor a transaction open meanwhile; it asks Status again later.
//
// Both methods take batches and must be idempotent per Charge.WorkflowID: a
// charge submitted twice, or submitted again after the settler forgot it, is
// charged at most once (the shipped settler guarantees this on chain). Both
// may be called concurrently.
//
// Errors are per charge. Submit refuses charges for good with a
// *[RefusedError] naming each one (the others are taken). Any other error
// from Submit is transient and the batch is submitted again after a backoff,
// except an error wrapped with [Permanent] that names no charge: the engine
// then submits the batch in halves until it has found the charges refused.
// An error from Status is always transient: the engine never fails a charge
// it cannot account for.
type Settler interface {
	// Configured reports whether the settler can settle charges of env.
	// The engine refuses to quote or create a workflow for an environment
	// it cannot settle, before anything runs.
	Configured(env wire.Environment) bool
	// Submit accepts charges for settlement. It returns once the settler has
	// taken them (they may not be on chain yet).
	Submit(ctx context.Context, charges []Charge) error
	// Status reports each charge's state, in the order given, without waiting
	// for confirmations. SettlementUnknown must mean the charge is neither
	// settled nor on its way; if the settler cannot tell, it sets Err.
	Status(ctx context.Context, charges []Charge) ([]SettlementStatus, error)
}
