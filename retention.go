package settleflow

import (
	"context"
	"errors"
	"time"
)

// Retention says how long the engine keeps what it no longer needs. A
// background task, started by [Engine.Start], deletes it in small batches,
// as River's job cleaner does, so no transaction holds the database for
// long. Workflows are never deleted: a Settled workflow is the record of a
// charge.
type Retention struct {
	// Events is how long an event is kept after the Notifier took it
	// (dispatched); an event not yet dispatched is always kept. Default
	// 30 days; negative keeps events forever.
	Events time.Duration
	// IdempotencyKeys is how long an idempotency record is kept after it
	// was created. It cannot be shorter than IdempotencyTTL (24 h), for
	// which a key is honoured. Default IdempotencyTTL; negative keeps them
	// forever.
	IdempotencyKeys time.Duration
	// Interval is how often the task looks for rows to delete. Default
	// 1 min.
	Interval time.Duration
	// BatchSize bounds the rows of each kind one transaction deletes.
	// Default 1,000.
	BatchSize int
}

// DefaultEventRetention is how long dispatched events are kept by default.
const DefaultEventRetention = 30 * 24 * time.Hour

func (r *Retention) setDefaults() error {
	setDefault(&r.Events, DefaultEventRetention)
	setDefault(&r.IdempotencyKeys, IdempotencyTTL)
	setDefault(&r.Interval, time.Minute)
	setDefault(&r.BatchSize, 1000)
	switch {
	case r.IdempotencyKeys > 0 && r.IdempotencyKeys < IdempotencyTTL:
		return errors.New("settleflow: Retention.IdempotencyKeys must be at least IdempotencyTTL (24h), or negative to keep them")
	case r.Interval < 0 || r.BatchSize < 0:
		return errors.New("settleflow: Retention.Interval and Retention.BatchSize must be positive")
	}
	return nil
}

// Prune runs one round of retention now: it deletes, batch after batch,
// the dispatched events and idempotency records past their retention (see
// [Options.Retention]), and reports how many of each. The background task
// calls it every Retention.Interval; an operator may call it at any time.
func (e *Engine) Prune(ctx context.Context) (PruneResult, error) {
	r := e.opts.Retention
	now := e.now()
	p := Prune{Limit: r.BatchSize}
	if r.Events > 0 {
		p.EventsDispatchedBefore = now.Add(-r.Events)
	}
	if r.IdempotencyKeys > 0 {
		p.IdempotencyCreatedBefore = now.Add(-r.IdempotencyKeys)
	}
	var total PruneResult
	if p.EventsDispatchedBefore.IsZero() && p.IdempotencyCreatedBefore.IsZero() {
		return total, nil
	}
	for {
		res, err := e.store.Prune(ctx, p)
		total.Events += res.Events
		total.IdempotencyKeys += res.IdempotencyKeys
		if err != nil {
			return total, err
		}
		// A kind whose batch came back short is done.
		if res.Events < p.Limit {
			p.EventsDispatchedBefore = time.Time{}
		}
		if res.IdempotencyKeys < p.Limit {
			p.IdempotencyCreatedBefore = time.Time{}
		}
		if p.EventsDispatchedBefore.IsZero() && p.IdempotencyCreatedBefore.IsZero() {
			return total, nil
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}
