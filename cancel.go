package settleflow

import (
	"context"
	"errors"
	"fmt"

	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/internal/stage"
)

// Cancel cancels the workflow id of env while it is still Pending: it moves
// to Canceled, is never executed, nothing is charged, and a
// workflow.canceled event is written in the same transaction and handed to
// the Notifier. It returns the canceled workflow.
//
// Cancel and a worker starting the workflow race for the same database row
// and exactly one wins: a workflow Cancel returned is never executed, and a
// workflow a worker claimed is never canceled. A workflow that is no longer
// Pending (Running, Settling, Settled, Failed, or already Canceled) is a
// *StateError naming its status (errors.Is(err, ErrWorkflowState)); an
// unknown id, or one of the other environment, is ErrNotFound. Cancel works
// whether or not the engine was started.
func (e *Engine) Cancel(ctx context.Context, env Environment, id string) (*Workflow, error) {
	if !env.Valid() {
		return nil, fmt.Errorf("settleflow: environment %q is neither test nor live", env)
	}
	if !ids.Valid(ids.Workflow, id) {
		return nil, ErrNotFound
	}
	if w, ok := e.terminal.get(env, id); ok {
		return nil, &StateError{Op: "cancel", WorkflowID: id, Status: w.Status}
	}
	// The event is built from the workflow as read: what it carries (quote,
	// margin target) never changes while the workflow is Pending, and the
	// store writes it only if the workflow still is.
	w, err := e.store.GetWorkflow(ctx, env, id)
	if err != nil {
		return nil, err
	}
	if w.Status != Pending {
		if e.cacheable(w) {
			e.terminal.put(env, w)
		}
		return nil, &StateError{Op: "cancel", WorkflowID: id, Status: w.Status}
	}
	now := e.now()
	ev := stage.WorkflowEvent(EventWorkflowCanceled, w, Canceled, now, func(*EventData) {})
	got, canceled, err := e.store.CancelWorkflow(ctx, env, id, now, ev)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, ErrNotFound
		}
		return nil, fmt.Errorf("settleflow: cancel: %w", err)
	}
	if e.cacheable(got) {
		e.terminal.put(env, got)
	}
	if !canceled {
		// A worker claimed it between the read and the update.
		return nil, &StateError{Op: "cancel", WorkflowID: id, Status: got.Status}
	}
	stage.Signal(e.eventsWake)
	return got, nil
}
