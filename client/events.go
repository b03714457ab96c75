package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/settleflow/settleflow/wire"
)

// EventService reads events back: c.Events. They are the events webhooks
// deliver (workflow.completed, workflow.failed, workflow.canceled), byte for
// byte; reading them is how a receiver that was down catches up.
type EventService struct{ b *backend }

// EventListParams filters and pages a list of events. The zero value lists
// the ten newest.
type EventListParams struct {
	// Type keeps only events of this type.
	Type wire.EventType
	// WorkflowID keeps only the events of this workflow.
	WorkflowID string
	// CreatedAfter, when not zero, keeps only events created strictly after
	// it.
	CreatedAfter time.Time
	// Limit is the page size, 1–100; 0 means the server's default (10).
	Limit int
	// StartingAfter, an event id, asks for the page of older events after
	// it; EndingBefore for the page of newer events before it. At most one
	// may be set.
	StartingAfter string
	EndingBefore  string
}

func (p *EventListParams) query(c cursors) url.Values {
	q := url.Values{}
	if p != nil {
		if p.Type != "" {
			q.Set("type", string(p.Type))
		}
		if p.WorkflowID != "" {
			q.Set("workflowId", p.WorkflowID)
		}
		if !p.CreatedAfter.IsZero() {
			q.Set("createdAfter", p.CreatedAfter.UTC().Format(time.RFC3339Nano))
		}
		if p.Limit != 0 {
			q.Set("limit", strconv.Itoa(p.Limit))
		}
	}
	if c.startingAfter != "" {
		q.Set("startingAfter", c.startingAfter)
	}
	if c.endingBefore != "" {
		q.Set("endingBefore", c.endingBefore)
	}
	return q
}

func (p *EventListParams) cursors() cursors {
	if p == nil {
		return cursors{}
	}
	return cursors{startingAfter: p.StartingAfter, endingBefore: p.EndingBefore}
}

// List returns one page of events, newest first (GET /v1/events, operation
// listEvents). params may be nil.
func (s *EventService) List(ctx context.Context, params *EventListParams) (*Page[*wire.Event], error) {
	return s.list(ctx, params, params.cursors())
}

func (s *EventService) list(ctx context.Context, params *EventListParams, c cursors) (*Page[*wire.Event], error) {
	return getPage[*wire.Event](ctx, s.b, "/v1/events", params.query(c))
}

// ListAutoPaging iterates over every event params selects, as
// [WorkflowService.ListAutoPaging] does over workflows: newest to oldest, or
// with params.EndingBefore from just after it to the newest, oldest first.
func (s *EventService) ListAutoPaging(ctx context.Context, params *EventListParams) iter.Seq2[*wire.Event, error] {
	return autoPage(ctx, params.cursors(), func(ctx context.Context, c cursors) (*Page[*wire.Event], error) {
		return s.list(ctx, params, c)
	}, func(e *wire.Event) string { return e.ID })
}

// Fetch returns the event with this id (GET /v1/events/{id}, operation
// fetchEvent).
func (s *EventService) Fetch(ctx context.Context, id string) (*wire.Event, error) {
	if id == "" {
		return nil, errEmptyID("event")
	}
	ev := new(wire.Event)
	if _, err := s.b.do(ctx, request{method: http.MethodGet, path: "/v1/events/" + url.PathEscape(id)}, ev); err != nil {
		return nil, err
	}
	return ev, nil
}
