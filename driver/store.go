package driver

import (
	"context"
	"encoding/json"
	"time"

	"github.com/settleflow/settleflow/wire"
)

// Store persists workflows and the event outbox. The engine depends on
// nothing else for state: whatever a Store method has acknowledged must
// survive a crash of the process.
//
// Implementations live in storage/ (SQLite, Postgres); every one must pass
// the conformance suite in storage/storetest. All methods are safe for
// concurrent use.
type Store interface {
	// TaskStore keeps remote products' tasks (task.go).
	TaskStore

	// InsertWorkflows inserts new Pending workflows in one transaction. An
	// insert that carries an idempotency key whose record (same environment,
	// younger than IdempotencyTTL) already exists inserts nothing and reports
	// the existing record instead. A key used more than once in ins is
	// answered as if the uses came one after the other: a later use replays
	// the first only if the first was inserted; if the first was refused for
	// funds, nothing is recorded under the key and the next use is decided
	// on its own (see the storetest IdempotencyRefusedFirstUse case), so a
	// replay never names a workflow that was not stored. Results are in the
	// order of ins. An
	// inserted workflow has no Sequence yet (0): it gets one when it is
	// first to be settled (Update.Sequence, ClaimWorkflows).
	//
	// An insert with Claim set may be inserted already claimed: Running and
	// leased to Claim.Owner until Claim.LeaseUntil, as ClaimWorkflows would
	// leave it, which the result reports (InsertResult.Claimed). A Store does
	// so only when the workflow's customer (environment and CustomerID) has
	// no Pending workflow, neither stored nor earlier in ins, so a claim at
	// insert never goes ahead of a workflow its customer already has waiting
	// (the fair queue's order within one customer is kept). The conformance
	// suite requires the claim; a Store written before Claim existed, which
	// ignores it and reports Claimed false, is still safe: the workflow is
	// Pending and claimed later as any other.
	InsertWorkflows(ctx context.Context, ins []Insert) ([]InsertResult, error)

	// GetWorkflow returns the workflow with id in env, or ErrNotFound.
	GetWorkflow(ctx context.Context, env wire.Environment, id string) (*wire.Workflow, error)

	// ListWorkflows returns one page of q, newest first, and whether more
	// workflows lie beyond it in the direction of travel.
	ListWorkflows(ctx context.Context, q ListQuery) (ws []*wire.Workflow, hasMore bool, err error)

	// ClaimWorkflows leases up to c.Limit due workflows to c.Owner: those
	// Pending, Running or Settling whose due time is at or before c.Now.
	// Running and Settling ones (their lease ended, or their next check is
	// due) come first, earliest due first; then Pending ones in a fair
	// queue by customer: customers in turn, each customer's workflows in
	// the order they were inserted, so that one customer's burst does not
	// hold back another customer's workflow created after it (a workflow
	// is placed one past its customer's last Pending workflow, or one past
	// the head of the line if its customer has none; see the storetest
	// FairQueue case). A claimed workflow's due time becomes c.LeaseUntil,
	// so it is claimed again if its owner vanishes; a claimed Pending workflow
	// moves to Running in the same statement (claiming is starting it). A
	// claimed Settling workflow without a Sequence gets the next Sequence of
	// its environment in the same transaction (claiming it is settling it),
	// unless it is charged 0 (Workflow.Charged): nothing of it goes to the
	// chain.
	ClaimWorkflows(ctx context.Context, c Claim) ([]*wire.Workflow, error)

	// UpdateWorkflows applies us in one transaction. Each update applies only
	// if the workflow still has status u.Status and is leased to u.Owner;
	// otherwise it is skipped (another worker took it over). An applied
	// update's Event is written to the outbox in the same transaction, and
	// an applied update with a Sequence gets its workflow numbered in it
	// (see Update.Sequence). applied[i] reports whether us[i] applied.
	UpdateWorkflows(ctx context.Context, us []Update) (applied []bool, err error)

	// CancelWorkflow moves the workflow id of env from Pending to Canceled,
	// with updated_at set to at and ev written to the outbox, in one
	// transaction, if and only if the workflow is still Pending when the
	// transaction runs: a cancel and a ClaimWorkflows racing for the same
	// workflow cannot both win. It returns the workflow as it is after the
	// call and whether this call canceled it; when it did not, the workflow
	// is returned in its current status and nothing is written. An unknown
	// id, or one of the other environment, is ErrNotFound.
	CancelWorkflow(ctx context.Context, env wire.Environment, id string, at time.Time, ev *wire.Event) (w *wire.Workflow, canceled bool, err error)

	// ListEvents returns one page of the events of q, newest first, and
	// whether more events lie beyond it in the direction of travel. Events
	// are read back exactly as they were written to the outbox, dispatched
	// or not.
	ListEvents(ctx context.Context, q EventQuery) (evs []wire.Event, hasMore bool, err error)

	// GetEvent returns the event with id in env, or ErrNotFound.
	GetEvent(ctx context.Context, env wire.Environment, id string) (*wire.Event, error)

	// ClaimEvents leases up to c.Limit undispatched outbox events that are due
	// at c.Now, oldest first, until c.LeaseUntil.
	ClaimEvents(ctx context.Context, c Claim) ([]wire.Event, error)

	// MarkEventsDispatched records that the Notifier took the events.
	MarkEventsDispatched(ctx context.Context, ids []string, at time.Time) error

	// RetryEvents ends the lease on undispatched events and makes them due
	// again at the given time (the Notifier failed; back off).
	RetryEvents(ctx context.Context, ids []string, at time.Time) error

	// ReleaseLeases ends every lease held by owner on workflows and events,
	// making them due at once. An engine calls it when it starts: leases
	// under its id are left from a previous run of it that died.
	ReleaseLeases(ctx context.Context, owner string, now time.Time) error

	// ReleaseSettling ends every lease on Settling workflows, whoever holds
	// it, making them due at once. An engine calls it when it takes the
	// SettlementLease: no other engine settles then, so a Settling workflow
	// leased to another engine belongs to a former holder (perhaps dead),
	// and waits for nobody.
	ReleaseSettling(ctx context.Context, now time.Time) error

	// Prune deletes, in one transaction, up to p.Limit events dispatched
	// before p.EventsDispatchedBefore and up to p.Limit idempotency records
	// created before p.IdempotencyCreatedBefore, oldest first (a zero time
	// deletes none of that kind). Workflows are never deleted, nor an event
	// not yet dispatched. It reports how many of each it deleted.
	Prune(ctx context.Context, p Prune) (PruneResult, error)

	// GetAccount returns the account of a customer of env by its Ref, with
	// CustomerID as given; the zero Account (Environment, CustomerID and Ref
	// set) when the Store holds none. It creates nothing.
	GetAccount(ctx context.Context, env wire.Environment, customerID, ref string) (*Account, error)

	// MarkFaucet records, once per account, that the test faucet funds it:
	// it sets the account's FaucetAt to at (creating the account, with
	// CustomerID, if needed) and reports true if and only if FaucetAt was
	// zero, or was before staleBefore while nothing was ever deposited
	// (an earlier faucet that never arrived: its process died before
	// sending it, or it was lost). A zero staleBefore never takes over. Of
	// concurrent callers for one account exactly one gets true.
	MarkFaucet(ctx context.Context, env wire.Environment, customerID, ref string, at, staleBefore time.Time) (bool, error)

	// FundsCursor returns how far env's balance changes on chain are
	// applied (the zero cursor if never).
	FundsCursor(ctx context.Context, env wire.Environment) (FundsCursor, error)

	// ApplyFunds applies b in one transaction if the Store's cursor for
	// b.Environment still equals b.From, and moves it to b.To; it reports
	// whether it applied. Each event is applied at most once, by (TxHash,
	// LogIndex): a deposit adds to Deposited (creating the account by Ref
	// if needed), a withdrawal request sets PendingWithdrawal, a
	// cancellation zeroes it, a withdrawal subtracts its Amount from
	// Deposited and zeroes PendingWithdrawal, an owner change sets Owner.
	// An event it cannot apply (Invalid set, a negative amount, a sum that
	// would pass the bounds of int64) is quarantined instead, with its
	// reason, and counted in its account's Quarantined; the others are
	// applied. The event b.EventsFor builds for each event applied for the
	// first time is written to the outbox in the same transaction.
	ApplyFunds(ctx context.Context, b FundsBatch) (FundsApplied, error)

	// FundsStatus returns env's cursor, when the follower was last current
	// and how many of env's events are quarantined.
	FundsStatus(ctx context.Context, env wire.Environment) (FundsStatus, error)

	// MarkFundsCurrent records at as the time the follower found nothing
	// newer on chain than cursor, if cursor is still env's cursor.
	MarkFundsCurrent(ctx context.Context, env wire.Environment, cursor FundsCursor, at time.Time) error

	// FundsHistory returns up to limit of the cursors env's batches moved
	// to, newest first, the current one included: the blocks a rewind after
	// a reorg can go back to.
	FundsHistory(ctx context.Context, env wire.Environment, limit int) ([]FundsCursor, error)

	// RewindFunds moves env's cursor back from r.From to r.To in one
	// transaction, if the cursor still equals r.From: it reverts the events
	// applied in blocks after r.To (newest first), drops the events
	// quarantined there and the history after r.To, so the events of the
	// new chain are applied by the next batches (an event applied again
	// after being reverted announces nothing new). It reports whether it
	// rewound.
	RewindFunds(ctx context.Context, r FundsRewind) (bool, error)

	// InsertRefund records a Pending refund of a Settled workflow, in one
	// transaction with the checks that admit it: the workflow (in the
	// refund's environment) must exist (else ErrNotFound) and be Settled
	// (else a *StateError with Op "refund"); the amount (0: all that is
	// left) must be at most the workflow's charge less the amounts of its
	// refunds that are not Failed (else a *RefundableError). An idempotency
	// key works as in InsertWorkflows (its own namespace: refund keys never
	// collide with workflow keys).
	InsertRefund(ctx context.Context, in RefundInsert) (RefundInsertResult, error)

	// GetRefund returns the refund with id in env, or ErrNotFound.
	GetRefund(ctx context.Context, env wire.Environment, id string) (*wire.Refund, error)

	// ListRefunds returns one page of q, newest first, and whether more
	// refunds lie beyond it in the direction of travel.
	ListRefunds(ctx context.Context, q RefundQuery) ([]*wire.Refund, bool, error)

	// Margins sums p.Environment's Settled workflows created in p's range,
	// grouped by p.GroupBy, in one query: per group the workflows counted
	// and the sums of their charges (Workflow.ChargeAmount), refunded amounts and
	// actual costs, ordered by key, at most limit groups.
	Margins(ctx context.Context, p MarginsParams, limit int) ([]MarginTotals, error)

	// ClaimRefunds leases up to c.Limit Pending refunds due at c.Now,
	// earliest due first, until c.LeaseUntil.
	ClaimRefunds(ctx context.Context, c Claim) ([]*wire.Refund, error)

	// UpdateRefunds applies us in one transaction (see RefundUpdate);
	// applied[i] reports whether us[i] applied.
	UpdateRefunds(ctx context.Context, us []RefundUpdate) (applied []bool, err error)

	// Backlog counts, as of now, the unfinished workflows of the execute
	// stage (Pending and Running) and of the settle stage (Settling), and
	// the events not yet dispatched (stage notify): each stage's rows, those
	// due (run_at at or before now), and the earliest due run_at.
	Backlog(ctx context.Context, now time.Time) (StoreBacklog, error)

	// ListAttempts returns the attempts recorded (Update.Attempt) of the
	// workflow id of env, oldest first; none for an unknown workflow.
	ListAttempts(ctx context.Context, env wire.Environment, workflowID string) ([]Attempt, error)
}

// Prune is what one call of [Store.Prune] deletes.
type Prune struct {
	EventsDispatchedBefore   time.Time
	IdempotencyCreatedBefore time.Time
	// Limit bounds the rows of each kind deleted by one call.
	Limit int
}

// PruneResult counts the rows one call of [Store.Prune] deleted.
type PruneResult struct {
	Events          int
	IdempotencyKeys int
}

// IdempotencyReader is implemented by a Store that can read a workflow's
// idempotency record without inserting anything. The engine uses it when a
// create cannot be quoted any more (its product was retired or changed
// since the key's first use): a retry of a request that created a workflow
// must still answer that workflow. A Store without it keeps the behaviour
// from before it existed: such a retry gets the quote's error.
type IdempotencyReader interface {
	// IdempotencyRecord returns the record under key in env that is younger
	// than IdempotencyTTL at now (Existing and ExistingHash set), or nil if
	// there is none. It changes nothing.
	IdempotencyRecord(ctx context.Context, env wire.Environment, key string, now time.Time) (*InsertResult, error)
}

// IdempotencyTTL is how long an idempotency key is remembered.
const IdempotencyTTL = 24 * time.Hour

// Insert is one workflow to insert, optionally under an idempotency key.
type Insert struct {
	Workflow *wire.Workflow
	// IdempotencyKey, when not empty, is remembered with RequestHash and the
	// workflow as created, in the same transaction as the workflow.
	IdempotencyKey string
	RequestHash    string
	// Reserve, when true, admits the workflow only if its customer's
	// account (Environment, CustomerID, Ref) has Available() of at least
	// Workflow.Quoted.Amount, and then adds it to the account's Reserved and
	// sets Workflow.Reserved and Workflow.AccountRef, in the same
	// transaction as the insert: of
	// concurrent inserts for one customer, across every engine sharing the
	// Store, no more are admitted than the balance covers. A refused insert
	// stores nothing and reports the account as it was in Insufficient.
	// The idempotency check comes first: a replay is never refused.
	Reserve bool
	// Ref is the customer's Account.Ref, when Reserve is set.
	Ref string
	// Claim, when not nil, asks for the workflow to be inserted already
	// claimed (see Store.InsertWorkflows): the engine sets it when it has a
	// worker free to run the workflow at once, so the claim costs no write
	// of its own.
	Claim *InsertClaim
}

// InsertClaim is the lease an Insert asks its workflow to be inserted with.
type InsertClaim struct {
	Owner      string
	LeaseUntil time.Time
}

// InsertResult reports what an Insert did.
type InsertResult struct {
	// Existing is the workflow as it was created under the same idempotency
	// key, when the key was already taken; nil when the insert happened.
	Existing *wire.Workflow
	// ExistingHash is the request hash stored with the existing key.
	ExistingHash string
	// Insufficient, when not nil, says the insert was refused for lack of
	// funds (Insert.Reserve): the account as the admission saw it. Nothing
	// was stored.
	Insufficient *Account
	// Claimed reports that the workflow was inserted Running, leased to
	// Insert.Claim.Owner until Insert.Claim.LeaseUntil (see
	// Store.InsertWorkflows).
	Claimed bool
}

// ListQuery selects a page of workflows. Workflows are ordered by id, which
// sorts by creation time; pages run newest first.
type ListQuery struct {
	Environment wire.Environment
	// Optional filters; zero values match everything.
	Status     wire.Status
	CustomerID string
	Product    string
	// At most one of StartingAfter and EndingBefore: the id of a workflow on
	// the previous page. StartingAfter returns older workflows, EndingBefore
	// newer ones (still ordered newest first).
	StartingAfter string
	EndingBefore  string
	Limit         int
}

// EventQuery selects a page of events. Events are ordered by id, which
// sorts by creation time; pages run newest first, as ListQuery's do.
type EventQuery struct {
	Environment wire.Environment
	// Optional filters; zero values match everything.
	Type       wire.EventType
	WorkflowID string
	// CreatedAfter, if not zero, keeps the events created strictly after it.
	CreatedAfter time.Time
	// At most one of StartingAfter and EndingBefore: the id of an event on
	// the previous page. StartingAfter returns older events, EndingBefore
	// newer ones (still ordered newest first).
	StartingAfter string
	EndingBefore  string
	Limit         int
}

// Claim is a lease request for workflows or events.
type Claim struct {
	Owner      string
	Now        time.Time
	LeaseUntil time.Time
	Limit      int
	// ExcludeSettling, for ClaimWorkflows, claims only Pending and Running
	// workflows and leaves Settling ones to the engine that settles: of
	// several engines sharing a Store, the one holding the SettlementLease
	// (see Options.SettlementLease).
	ExcludeSettling bool
}

// Update changes one leased workflow.
type Update struct {
	ID string
	// Owner must hold the workflow's lease.
	Owner string
	// Status is the status the workflow must have. If Transition is not zero,
	// its From must equal Status.
	Status     wire.Status
	Transition wire.Transition
	// RunAt is when the workflow is next due for a worker (ignored once it
	// reaches a terminal status).
	RunAt time.Time
	// Release ends the lease; otherwise Owner keeps it until RunAt.
	Release  bool
	Attempts int
	// Fields set when non-nil.
	Result     json.RawMessage
	ActualCost *int64
	// Charged, Cost (its items; ActualCost carries its amount) and Outcome
	// are set with the move out of Running.
	Charged    *int64
	Cost       *wire.Cost
	Outcome    *wire.Outcome
	Achieved   *wire.BasisPoints
	Settlement *wire.Settlement
	Failure    *wire.Failure
	UpdatedAt  time.Time
	// Event is written to the outbox if and only if the update applies.
	Event *wire.Event
	// A workflow with an account (Workflow.AccountRef: a reservation, or a
	// charge paid by an Authorization) that reaches a terminal status gives
	// its reservation back to its customer's account in the same
	// transaction (Account.Reserved −= Workflow.Reserved, 0 for an
	// authorization); reaching Settled also adds its charge
	// (Workflow.ChargeAmount: Charged, or the quoted amount when Charged was
	// never set) to Account.Charged.
	// CancelWorkflow does the same for Canceled.
	//
	// Sequence, if not nil, asks for the workflow's Sequence, for the
	// engine that settles it: the update must move the workflow to
	// Settling. If it applies, a workflow without a Sequence gets the next
	// one of its environment in the same transaction, and *Sequence is set
	// to the workflow's Sequence (which is never changed once given).
	// A workflow charged 0 is never numbered (it goes nowhere near the
	// chain): the engine asks no Sequence for it, and ClaimWorkflows gives
	// none to it.
	// Sequences are given only here and in ClaimWorkflows, so in an
	// environment they are dense and run in the order charges are first
	// settled: failed and canceled workflows take none, and creating a
	// workflow locks nothing that another creator waits for.
	Sequence *uint64
	// EventLease, if not zero, writes the event already leased to Owner
	// until then: the engine hands it to the Notifier itself, without
	// claiming it. If the engine dies first, the lease expires and any
	// engine claims it.
	EventLease time.Time
	// Notifier, if not nil, is the Notifier the engine hands Event to. A
	// Store that can have it record the event inside the update's own
	// transaction (storage/bunstore, when the Notifier is a
	// storage.TxNotifier on the same database, as a webhook.Service sharing
	// it is) does so, writes Event already dispatched and sets
	// EventNotified: the event is then written once, and the engine does
	// not hand it over. Any other Store ignores it.
	Notifier Notifier
	// Attempt, if not nil, is the attempt of a remote product that the
	// update ends: it is recorded in the update's transaction if and only
	// if the update applies (ListAttempts). Its TaskID is unique.
	Attempt *Attempt
	// EventNotified is set by UpdateWorkflows, on the caller's update,
	// when the update applied and its Event was handed to Notifier in the
	// update's transaction.
	EventNotified bool
}
