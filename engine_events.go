package settleflow

import (
	"context"
	"fmt"
	"strings"

	"github.com/settleflow/settleflow/internal/ids"
)

// EventListParams select a page of events; see EventQuery.
type EventListParams = EventQuery

// EventPage is one page of events, newest first.
type EventPage struct {
	Data    []Event
	HasMore bool
}

// ListEvents returns a page of the events of p.Environment matching the
// filters, newest first, as Engine.List does for workflows: Limit is 1–100
// (0 means 10), pagination by keyset. Errors in the parameters are
// *InvalidError naming the parameter as on the wire (type, workflowId,
// createdAfter, startingAfter, endingBefore, limit).
//
// Events are kept at least 30 days: the Store deletes none today, and
// retention, when it comes, keeps them that long.
func (e *Engine) ListEvents(ctx context.Context, p EventListParams) (*EventPage, error) {
	if err := checkPage(p.Environment, &p.Limit, p.StartingAfter, p.EndingBefore, ids.Event, "an event"); err != nil {
		return nil, err
	}
	switch {
	case p.Type != "" && !p.Type.Valid():
		return nil, &InvalidError{Code: CodeParameterInvalid, Param: "type", Message: "type must be one of " + eventTypeNames()}
	case p.WorkflowID != "" && !ids.Valid(ids.Workflow, p.WorkflowID):
		return nil, &InvalidError{Code: CodeParameterInvalid, Param: "workflowId", Message: "workflowId must be a workflow id (wf_…)"}
	case !p.CreatedAfter.IsZero() && p.CreatedAfter.Unix() < 0:
		// Stored times are microseconds since 1970: an earlier bound is
		// a mistake, not a filter.
		return nil, &InvalidError{Code: CodeParameterInvalid, Param: "createdAfter", Message: "createdAfter must not be before 1970"}
	}
	if !p.CreatedAfter.IsZero() {
		p.CreatedAfter = p.CreatedAfter.UTC()
	}
	evs, more, err := e.store.ListEvents(ctx, p)
	if err != nil {
		return nil, err
	}
	if evs == nil {
		evs = []Event{}
	}
	return &EventPage{Data: evs, HasMore: more}, nil
}

// FetchEvent returns the event with id in env, or ErrNotFound (also for an
// id of the other environment). json.Marshal of it is byte for byte the
// body its webhook deliveries carry.
func (e *Engine) FetchEvent(ctx context.Context, env Environment, id string) (*Event, error) {
	if !env.Valid() {
		return nil, fmt.Errorf("settleflow: environment %q is neither test nor live", env)
	}
	if !ids.Valid(ids.Event, id) {
		return nil, ErrNotFound
	}
	return e.store.GetEvent(ctx, env, id)
}

// eventTypeNames lists EventTypes for a message: "a, b, c".
func eventTypeNames() string {
	names := make([]string, len(EventTypes))
	for i, t := range EventTypes {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}
