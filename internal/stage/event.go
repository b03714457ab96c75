package stage

import (
	"errors"
	"time"

	"github.com/settleflow/settleflow/driver"
	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/wire"
)

// WorkflowEvent is the event of type t about w reaching status st at now:
// the workflow's terms and results as of then, completed by fill.
func WorkflowEvent(t wire.EventType, w *wire.Workflow, st wire.Status, now time.Time, fill func(*wire.EventData)) *wire.Event {
	ev := &wire.Event{
		ID:        ids.New(ids.Event, now),
		Object:    "event",
		Type:      t,
		Livemode:  w.Livemode,
		CreatedAt: now,
		Data: wire.EventData{
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
	if fill != nil {
		fill(&ev.Data)
	}
	return ev
}

// Fail turns u into the move to Failed with f, and its event.
func Fail(u *driver.Update, w *wire.Workflow, now time.Time, f *wire.Failure) {
	u.Transition = MustTo(u.Status, wire.Failed)
	u.Failure = f
	u.Release = true
	u.RunAt = now
	u.Event = WorkflowEvent(wire.EventWorkflowFailed, w, wire.Failed, now, func(d *wire.EventData) { d.Failure = f })
}

// MustTo is the transition from one status to the next, which the caller
// knows is allowed.
func MustTo(from, next wire.Status) wire.Transition {
	t, err := from.To(next)
	if err != nil {
		panic(err)
	}
	return t
}

// FailureOf is the Failure err carries, or one of code with err's message
// (a permanent error's own).
func FailureOf(err error, code wire.ErrorCode) *wire.Failure {
	var f *wire.Failure
	if errors.As(err, &f) {
		return f
	}
	var p *driver.PermanentError
	if errors.As(err, &p) {
		err = p.Err
	}
	return &wire.Failure{Code: code, Message: err.Error()}
}

// chargeOf is the charge of a Settling workflow.
func chargeOf(w *wire.Workflow) driver.Charge {
	return driver.Charge{
		WorkflowID:    w.ID,
		Sequence:      w.Sequence,
		Environment:   w.Environment(),
		CustomerID:    w.CustomerID,
		Amount:        w.ChargeAmount(),
		Currency:      w.Quoted.Currency,
		Authorization: w.Authorization,
	}
}
