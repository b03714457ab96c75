package settleflow

import (
	"context"

	"github.com/settleflow/settleflow/internal/stage"
)

// SettleOnce runs one round of the settle stage over ws, as the engine's
// settle stage does for a batch; fresh[i] tells whether ws[i] was just moved
// to Settling by this engine (so never submitted). The workflows must be
// Settling and leased to the engine's WorkerID.
func (e *Engine) SettleOnce(ctx context.Context, ws []*Workflow, fresh []bool) {
	lines := stage.NewLines(len(ws)+1, 64)
	defer lines.CancelWork()
	rec := stage.NewRecorder(e.env, lines, e.notifier, e.eventsWake)
	stage.NewSettle(e.env, lines, rec, e.wake, e.settler).Round(ctx, ws, fresh)
}

// SetHandoffCapacity sets the room for event batches handed to the
// dispatcher in memory; call it before Start.
func (e *Engine) SetHandoffCapacity(n int) { e.handoffCap = n }
