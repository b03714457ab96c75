package driver

import "time"

// Stage names of a Backlog, in pipeline order.
const (
	// StageExecute holds Pending workflows waiting for a worker, and Running
	// ones being executed.
	StageExecute = "execute"
	// StageSettle holds Settling workflows: charges submitted, waiting for
	// the chain.
	StageSettle = "settle"
	// StageNotify holds events not yet handed to the Notifier.
	StageNotify = "notify"
)

// StageBacklog is one stage's queue at a moment.
type StageBacklog struct {
	// Stage is one of StageExecute, StageSettle, StageNotify, or a name a
	// Notifier adds (the webhook package's "webhooks").
	Stage string `json:"stage"`
	// Depth counts the items in the stage: waiting, being worked on, or
	// waiting to be checked again.
	Depth int64 `json:"depth"`
	// Due counts the items whose time has come and that nobody holds: the
	// queue proper.
	Due int64 `json:"due"`
	// OldestDue is how long the oldest due item has been waiting since its
	// time came; 0 when nothing is due. A pipeline that keeps up keeps it
	// near zero; one that falls behind shows it growing.
	OldestDue time.Duration `json:"-"`
	// OldestDueSeconds is OldestDue in seconds, for JSON.
	OldestDueSeconds float64 `json:"oldestDueSeconds"`
}

// BacklogCounts is what a Store reports per stage for Backlog: the items of
// the stage, those due at the time asked, and the due time of the earliest
// due one (zero when none is due).
type BacklogCounts struct {
	Depth, Due  int64
	EarliestDue time.Time
}

// StoreBacklog is a Store's part of the engine's Backlog, by stage name.
type StoreBacklog map[string]BacklogCounts

// Stage turns counts into a StageBacklog as of now.
func (c BacklogCounts) Stage(name string, now time.Time) StageBacklog {
	b := StageBacklog{Stage: name, Depth: c.Depth, Due: c.Due}
	if c.Due > 0 && !c.EarliestDue.IsZero() && now.After(c.EarliestDue) {
		b.OldestDue = now.Sub(c.EarliestDue)
		b.OldestDueSeconds = b.OldestDue.Seconds()
	}
	return b
}
