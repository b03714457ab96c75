package httpapi

import (
	"net/http"
	"time"

	"github.com/settleflow/settleflow"
)

var marginParams = map[string]bool{"groupBy": true, "createdAfter": true, "createdBefore": true, "product": true}

// margins answers GET /v1/margins (docs/api.md §14): the margins report of
// the key's environment, its Settled workflows grouped by product, customer
// or UTC day. The engine checks groupBy, product, the range and the number
// of groups; this parses the query.
func (h *handler) margins(w http.ResponseWriter, r *http.Request) {
	q, apiErr := listQuery(r, marginParams)
	if apiErr != nil {
		writeError(w, r, apiErr)
		return
	}
	p := settleflow.MarginsParams{
		Environment: principalFrom(r.Context()).Environment,
		GroupBy:     settleflow.MarginGroupBy(q.Get("groupBy")),
		Product:     q.Get("product"),
	}
	for _, t := range []struct {
		name string
		dst  *time.Time
	}{{"createdAfter", &p.CreatedAfter}, {"createdBefore", &p.CreatedBefore}} {
		v := q.Get(t.name)
		if v == "" {
			continue
		}
		parsed, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			writeError(w, r, invalid(settleflow.CodeParameterInvalid, t.name, t.name+" must be an RFC 3339 time, e.g. 2026-11-01T00:00:00Z"))
			return
		}
		*t.dst = parsed.UTC()
	}
	rep, err := h.opts.Engine.Margins(r.Context(), p)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}
