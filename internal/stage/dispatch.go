package stage

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/settleflow/settleflow/driver"
	"github.com/settleflow/settleflow/wire"
)

// Dispatch is the dispatch stage: it hands events to the Notifier, those
// this engine just wrote (handed over in memory, already leased) and, by
// polling, those in the outbox that nobody holds (written before a crash,
// or by another engine). Events are durable in the outbox, so Stop cuts it
// short: what it has not handed over goes at the next Start.
type Dispatch struct {
	*Loop
	env      *Env
	lines    *Lines
	notifier driver.Notifier
	wake     <-chan struct{}
}

// NewDispatch returns the dispatch stage of a run; wake tells it an event is
// in the outbox unleased (a cancel's), to be handed over now.
func NewDispatch(env *Env, lines *Lines, notifier driver.Notifier, wake <-chan struct{}) *Dispatch {
	d := &Dispatch{env: env, lines: lines, notifier: notifier, wake: wake}
	d.Loop = NewLoop("dispatch", d.loop)
	return d
}

func (d *Dispatch) loop(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	failures := 0
	for {
		var batch []wire.Event
		select {
		case <-ctx.Done():
			return
		case batch = <-d.lines.handoff:
		drain:
			for len(batch) < d.env.BatchSize {
				select {
				case more := <-d.lines.handoff:
					batch = append(batch, more...)
				default:
					break drain
				}
			}
			if err := d.dispatch(ctx, batch, failures); err != nil {
				failures++
			} else {
				failures = 0
			}
			continue
		case <-timer.C:
		case <-d.wake:
		}
		wait := d.env.PollInterval
		for ctx.Err() == nil {
			now := d.env.Now()
			evs, err := d.env.Store.ClaimEvents(ctx, driver.Claim{Owner: d.env.WorkerID, Now: now, LeaseUntil: now.Add(2 * d.env.NotifyTimeout), Limit: d.env.BatchSize})
			if err == nil && len(evs) > 0 {
				err = d.dispatch(ctx, evs, failures)
			}
			if err != nil {
				failures++
				wait = d.env.Backoff(failures)
				break
			}
			failures = 0
			if len(evs) < d.env.BatchSize {
				break
			}
		}
		timer.Reset(wait)
	}
}

// dispatch hands leased events to the Notifier and records the outcome.
func (d *Dispatch) dispatch(ctx context.Context, evs []wire.Event, failures int) error {
	idList := make([]string, len(evs))
	for i := range evs {
		idList[i] = evs[i].ID
	}
	nctx, cancel := context.WithTimeout(ctx, d.env.NotifyTimeout)
	err := d.notifier.Notify(nctx, evs)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			d.env.Log.Error("handing events to the notifier failed", zap.Int("attempt", failures+1), zap.Error(err))
		}
		retryAt := d.env.Now().Add(d.env.Backoff(failures + 1))
		if rerr := d.env.Store.RetryEvents(context.WithoutCancel(ctx), idList, retryAt); rerr != nil {
			d.env.Log.Error("rescheduling events failed; their lease will expire", zap.Error(rerr))
		}
		return err
	}
	if err := d.env.Store.MarkEventsDispatched(context.WithoutCancel(ctx), idList, d.env.Now()); err != nil {
		d.env.Log.Error("recording dispatched events failed; they will be handed over again", zap.Error(err))
		return err
	}
	return nil
}
