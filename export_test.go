package settleflow

import "context"

// SettleOnce runs one round of the settle stage over ws, as the engine's
// settle loop does for a batch; fresh[i] tells whether ws[i] was just moved
// to Settling by this engine (so never submitted). The workflows must be
// Settling and leased to the engine's WorkerID.
func (e *Engine) SettleOnce(ctx context.Context, ws []*Workflow, fresh []bool) {
	batch := make([]settleItem, len(ws))
	for i, w := range ws {
		batch[i] = settleItem{wf: w, fresh: fresh[i]}
	}
	e.settleBatch(ctx, &runState{handoff: make(chan []Event, 64)}, batch, &heldItems{})
}

// SetHandoffCapacity sets the room for event batches handed to the
// dispatcher in memory; call it before Start.
func (e *Engine) SetHandoffCapacity(n int) { e.handoffCap = n }
