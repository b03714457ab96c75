package client

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/settleflow/settleflow/wire"
)

// MarginService reports margins: c.Margins.
type MarginService struct{ b *backend }

// MarginReportParams asks for a margins report (docs/api.md §14).
type MarginReportParams struct {
	// GroupBy is required: wire.MarginsByProduct, MarginsByCustomer
	// or MarginsByDay (the UTC day a workflow was created).
	GroupBy wire.MarginGroupBy
	// CreatedAfter (inclusive) and CreatedBefore (exclusive) bound when the
	// workflows were created; zero is unbounded.
	CreatedAfter, CreatedBefore time.Time
	// Product, if set, counts that product's workflows only.
	Product string
}

func (p *MarginReportParams) query() url.Values {
	q := url.Values{}
	if p == nil {
		return q
	}
	if p.GroupBy != "" {
		q.Set("groupBy", string(p.GroupBy))
	}
	if !p.CreatedAfter.IsZero() {
		q.Set("createdAfter", p.CreatedAfter.UTC().Format(time.RFC3339Nano))
	}
	if !p.CreatedBefore.IsZero() {
		q.Set("createdBefore", p.CreatedBefore.UTC().Format(time.RFC3339Nano))
	}
	if p.Product != "" {
		q.Set("product", p.Product)
	}
	return q
}

// Report returns the margins report of the key's environment (GET
// /v1/margins, operation reportMargins): its Settled workflows grouped by
// product, customer or day, each group's and the total's workflows,
// charged, refunded and cost in minor units, and the margin achieved on what
// was kept, (charged − refunded − cost) / (charged − refunded), rounded
// toward zero to a basis point (nil when nothing was kept).
//
// Errors: an *InvalidRequestError naming groupBy (missing or unknown; nil
// params have none), product (a product the server does not know),
// createdBefore (not after createdAfter) or createdAfter (a report of more
// than 1000 groups: narrow the range).
func (s *MarginService) Report(ctx context.Context, params *MarginReportParams) (*wire.MarginReport, error) {
	rep := new(wire.MarginReport)
	if _, err := s.b.do(ctx, request{method: http.MethodGet, path: "/v1/margins", query: params.query()}, rep); err != nil {
		return nil, err
	}
	return rep, nil
}
