package settleflow

import "github.com/settleflow/settleflow/driver"

// Store persists workflows and the event outbox ([driver.Store]).
type Store = driver.Store

// Prune is what one call of [Store.Prune] deletes ([driver.Prune]).
type Prune = driver.Prune

// PruneResult counts the rows one call of [Store.Prune] deleted ([driver.PruneResult]).
type PruneResult = driver.PruneResult

// Insert is one workflow to insert, optionally under an idempotency key ([driver.Insert]).
type Insert = driver.Insert

// InsertClaim is the lease an Insert asks its workflow to be inserted with ([driver.InsertClaim]).
type InsertClaim = driver.InsertClaim

// InsertResult reports what an Insert did ([driver.InsertResult]).
type InsertResult = driver.InsertResult

// ListQuery selects a page of workflows ([driver.ListQuery]).
type ListQuery = driver.ListQuery

// EventQuery selects a page of events ([driver.EventQuery]).
type EventQuery = driver.EventQuery

// Claim is a lease request for workflows or events ([driver.Claim]).
type Claim = driver.Claim

// Update changes one leased workflow ([driver.Update]).
type Update = driver.Update

// IdempotencyReader is a Store that reads an idempotency record without
// inserting ([driver.IdempotencyReader]).
type IdempotencyReader = driver.IdempotencyReader

// IdempotencyTTL is how long an idempotency key is remembered.
const IdempotencyTTL = driver.IdempotencyTTL

// Attempt records which worker ran one attempt of a remote product's
// workflow ([driver.Attempt]).
type Attempt = driver.Attempt

// AttemptOutcome is how an attempt ended ([driver.AttemptOutcome]).
type AttemptOutcome = driver.AttemptOutcome

// The outcomes of an attempt ([driver.AttemptOutcome]).
const (
	AttemptCompleted           = driver.AttemptCompleted
	AttemptFailed              = driver.AttemptFailed
	AttemptLeaseLost           = driver.AttemptLeaseLost
	AttemptMarginFloorExceeded = driver.AttemptMarginFloorExceeded
)
