package stage

import (
	"context"

	"go.uber.org/zap"

	"github.com/settleflow/settleflow/driver"
	"github.com/settleflow/settleflow/wire"
)

// Recorder writes the workflow updates the finish and settle stages decide,
// and hands the events of those that applied to the dispatch stage in
// memory, already leased. It is the one writer of workflow updates of a
// run.
type Recorder struct {
	env      *Env
	lines    *Lines
	notifier driver.Notifier
	// eventsWake wakes the dispatch stage to claim events handed back to
	// the outbox.
	eventsWake chan struct{}
}

// NewRecorder returns the Recorder of a run; it offers each update's event
// to the Store for notifier to record in the update's own transaction
// (driver.Update.Notifier).
func NewRecorder(env *Env, lines *Lines, notifier driver.Notifier, eventsWake chan struct{}) *Recorder {
	return &Recorder{env: env, lines: lines, notifier: notifier, eventsWake: eventsWake}
}

// Record applies us, retrying the Store until it answers: results the
// engine computed are not thrown away for a passing database error. It gives
// up only when ctx ends (the leases then expire and the work is redone).
// applied[i] reports whether us[i] applied. The events of those that applied
// and that the Store did not have the Notifier record in their transaction
// go to the dispatch stage.
func (r *Recorder) Record(ctx context.Context, us []driver.Update) []bool {
	lease := r.env.Now().Add(2 * r.env.NotifyTimeout)
	for i := range us {
		if us[i].Event != nil {
			us[i].EventLease = lease
			us[i].Notifier = r.notifier
		}
	}
	applied := untilWritten(ctx, r.env, "workflow updates", us, r.env.Store.UpdateWorkflows)
	var evs []wire.Event
	for i, ok := range applied {
		if ok && us[i].Event != nil && !us[i].EventNotified {
			evs = append(evs, *us[i].Event)
		}
	}
	if len(evs) > 0 {
		select {
		case r.lines.handoff <- evs:
		default:
			r.handBack(ctx, evs)
		}
	}
	return applied
}

// handBack returns events the dispatch stage had no room for to the outbox,
// due now, and wakes it to claim them: a missed hand-off costs a claim, not
// the lease they were written with. If even that write fails, the events
// come back when their lease ends.
func (r *Recorder) handBack(ctx context.Context, evs []wire.Event) {
	ids := make([]string, len(evs))
	for i := range evs {
		ids[i] = evs[i].ID
	}
	if err := r.env.Store.RetryEvents(context.WithoutCancel(ctx), ids, r.env.Now()); err != nil {
		r.env.Log.Warn("events not handed back to the outbox; they are dispatched when their lease ends", zap.Int("events", len(ids)), zap.Error(err))
		return
	}
	Signal(r.eventsWake)
}
