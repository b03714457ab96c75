package settleflow

import (
	"context"

	"github.com/settleflow/settleflow/driver"
)

// Backlog reports each stage's queue: how many workflows wait to execute
// or for their settlement, how many events wait to be handed to the
// Notifier, and how long the oldest due item of each has waited. Work is
// claimed oldest first within each customer (workflows to execute are
// taken from customers in turn), so OldestDue is the delay new work of a
// busy customer meets. It reads the store (one query per stage, over the
// unfinished rows only), so call it for health checks and metrics, not per
// request. See docs/operating.md, "Health and backpressure".
func (e *Engine) Backlog(ctx context.Context) ([]StageBacklog, error) {
	now := e.now()
	counts, err := e.store.Backlog(ctx, now)
	if err != nil {
		return nil, err
	}
	out := make([]StageBacklog, 0, 3)
	for _, st := range []string{StageExecute, StageSettle, StageNotify} {
		out = append(out, counts[st].Stage(st, now))
	}
	return out, nil
}

// StageBacklog is one stage's queue at a moment ([driver.StageBacklog]).
type StageBacklog = driver.StageBacklog

// BacklogCounts is what a Store reports per stage for Backlog ([driver.BacklogCounts]).
type BacklogCounts = driver.BacklogCounts

// StoreBacklog is a Store's part of the engine's Backlog, by stage name ([driver.StoreBacklog]).
type StoreBacklog = driver.StoreBacklog

// Stage names of a Backlog, in pipeline order ([driver.StageExecute]).
const (
	StageExecute = driver.StageExecute
	StageSettle  = driver.StageSettle
	StageNotify  = driver.StageNotify
)
