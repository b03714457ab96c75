package settleflow

import (
	"context"
	"time"

	"github.com/settleflow/settleflow/internal/ids"
	"go.uber.org/zap"
)

func (e *Engine) event(t EventType, w *Workflow, st Status, now time.Time, fill func(*EventData)) *Event {
	ev := &Event{
		ID:        ids.New(ids.Event, now),
		Object:    "event",
		Type:      t,
		Livemode:  w.Livemode,
		CreatedAt: now,
		Data: EventData{
			WorkflowID: w.ID,
			CustomerID: w.CustomerID,
			Status:     st,
			Quoted:     w.Quoted,
			Margin:     w.Margin,
			Result:     w.Result,
			Charged:    w.Charged,
			Cost:       w.Cost,
			Outcome:    w.Outcome,
		},
	}
	if w.Pricing.Model != "" {
		pr := w.Pricing
		ev.Data.Pricing = &pr
	}
	fill(&ev.Data)
	return ev
}

// dispatchLoop hands events to the Notifier: those this engine just wrote
// (handed over in memory, already leased) and, by polling, those in the
// outbox that nobody holds (written before a crash, or by another engine).
func (e *Engine) dispatchLoop(ctx context.Context, rs *runState) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	failures := 0
	for {
		var batch []Event
		select {
		case <-ctx.Done():
			return
		case batch = <-rs.handoff:
		drain:
			for len(batch) < e.opts.BatchSize {
				select {
				case more := <-rs.handoff:
					batch = append(batch, more...)
				default:
					break drain
				}
			}
			if err := e.dispatch(ctx, batch, failures); err != nil {
				failures++
			} else {
				failures = 0
			}
			continue
		case <-timer.C:
		case <-e.eventsWake:
		}
		wait := e.opts.PollInterval
		for ctx.Err() == nil {
			now := e.now()
			evs, err := e.store.ClaimEvents(ctx, Claim{Owner: e.opts.WorkerID, Now: now, LeaseUntil: now.Add(2 * e.opts.NotifyTimeout), Limit: e.opts.BatchSize})
			if err == nil && len(evs) > 0 {
				err = e.dispatch(ctx, evs, failures)
			}
			if err != nil {
				failures++
				wait = e.opts.Retry.Backoff(failures)
				break
			}
			failures = 0
			if len(evs) < e.opts.BatchSize {
				break
			}
		}
		timer.Reset(wait)
	}
}

// dispatch hands leased events to the Notifier and records the outcome.
func (e *Engine) dispatch(ctx context.Context, evs []Event, failures int) error {
	idList := make([]string, len(evs))
	for i := range evs {
		idList[i] = evs[i].ID
	}
	nctx, cancel := context.WithTimeout(ctx, e.opts.NotifyTimeout)
	err := e.notifier.Notify(nctx, evs)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			e.log.Error("handing events to the notifier failed", zap.Int("attempt", failures+1), zap.Error(err))
		}
		retryAt := e.now().Add(e.opts.Retry.Backoff(failures + 1))
		if rerr := e.store.RetryEvents(context.WithoutCancel(ctx), idList, retryAt); rerr != nil {
			e.log.Error("rescheduling events failed; their lease will expire", zap.Error(rerr))
		}
		return err
	}
	if err := e.store.MarkEventsDispatched(context.WithoutCancel(ctx), idList, e.now()); err != nil {
		e.log.Error("recording dispatched events failed; they will be handed over again", zap.Error(err))
		return err
	}
	return nil
}
