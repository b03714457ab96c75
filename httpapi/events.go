package httpapi

import (
	"errors"
	"net/http"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/wire"
)

// cancelWorkflow answers POST /v1/workflows/{id}/cancel: the canceled
// workflow, or 409 with a code naming the status that refused it.
func (h *handler) cancelWorkflow(w http.ResponseWriter, r *http.Request, id string) {
	if refuseQuery(w, r) {
		return
	}
	wf, err := h.opts.Engine.Cancel(r.Context(), principalFrom(r.Context()).Environment, id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wf)
}

var eventListParams = map[string]bool{"type": true, "workflowId": true, "createdAfter": true, "startingAfter": true, "endingBefore": true, "limit": true}

// listEvents answers GET /v1/events: the environment's events, newest first,
// in the envelope their webhook deliveries carry.
func (h *handler) listEvents(w http.ResponseWriter, r *http.Request) {
	q, apiErr := listQuery(r, eventListParams)
	if apiErr != nil {
		writeError(w, r, apiErr)
		return
	}
	p := settleflow.EventListParams{
		Environment:   principalFrom(r.Context()).Environment,
		Type:          settleflow.EventType(q.Get("type")),
		WorkflowID:    q.Get("workflowId"),
		StartingAfter: q.Get("startingAfter"),
		EndingBefore:  q.Get("endingBefore"),
	}
	if v := q.Get("createdAfter"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			writeError(w, r, invalid(settleflow.CodeParameterInvalid, "createdAfter", "createdAfter must be an RFC 3339 time, e.g. 2026-11-21T10:00:00Z"))
			return
		}
		p.CreatedAfter = t.UTC()
	}
	if p.Limit, apiErr = pageLimit(q); apiErr != nil {
		writeError(w, r, apiErr)
		return
	}
	page, err := h.opts.Engine.ListEvents(r.Context(), p)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := list[settleflow.Event]{Object: "list", URL: "/v1/events", Data: page.Data, HasMore: page.HasMore}
	if out.Data == nil {
		out.Data = []settleflow.Event{}
	}
	writeJSON(w, http.StatusOK, out)
}

// fetchEvent answers GET /v1/events/{id}.
func (h *handler) fetchEvent(w http.ResponseWriter, r *http.Request, id string) {
	if refuseQuery(w, r) {
		return
	}
	ev, err := h.opts.Engine.FetchEvent(r.Context(), principalFrom(r.Context()).Environment, id)
	if errors.Is(err, settleflow.ErrNotFound) {
		writeError(w, r, &Error{Status: http.StatusNotFound, Type: TypeInvalidRequest, Code: wire.CodeResourceMissing, Message: "No such event."})
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ev)
}
