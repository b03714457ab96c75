package settleflow

import (
	"context"
	"time"

	"github.com/settleflow/settleflow/driver"

	"github.com/settleflow/settleflow/internal/ids"
)

// Attempts returns which worker ran each attempt of the remote product's
// workflow id of env, oldest first: the attempts recorded in the Store
// (each written with the update that ended it, so they survive a restart)
// and then those workers hold now (through any engine) (EndedAt zero, no
// Outcome). A workflow of an in-process product, or an unknown id, has
// none. An attempt whose engine died before recording its end is not
// recorded; the workflow's next attempt is.
func (e *Engine) Attempts(ctx context.Context, env Environment, id string) ([]Attempt, error) {
	if !ids.Valid(ids.Workflow, id) {
		return nil, nil
	}
	stored, err := e.store.ListAttempts(ctx, env, id)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(stored))
	for _, a := range stored {
		seen[a.TaskID] = true
	}
	tasks, err := e.store.ListTasks(ctx, env, id)
	if err != nil {
		return nil, err
	}
	for _, t := range tasks {
		if t.State != driver.TaskClaimed || seen[t.ID] {
			continue
		}
		if a := attemptOf(t, nil, false, time.Time{}); a != nil {
			stored = append(stored, *a)
		}
	}
	return stored, nil
}

// RemoteProducts names this engine's remote products (Product.Remote):
// those whose tasks workers claim.
func (e *Engine) RemoteProducts() []string { return e.products.Remote() }
