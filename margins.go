package settleflow

import (
	"context"
	"fmt"

	"github.com/settleflow/settleflow/driver"
	"github.com/settleflow/settleflow/wire"
)

// Margin reports: what an environment's Settled workflows charged, what
// they cost and the margin achieved, grouped by product, customer or day,
// computed by the Store in one query.

// MarginGroupBy is what a margins report groups workflows by
// (wire.MarginGroupBy).
type MarginGroupBy = wire.MarginGroupBy

// The groupings of a margins report.
const (
	// MarginsByProduct groups by product name.
	MarginsByProduct = wire.MarginsByProduct
	// MarginsByCustomer groups by customer id.
	MarginsByCustomer = wire.MarginsByCustomer
	// MarginsByDay groups by the UTC day a workflow was created.
	MarginsByDay = wire.MarginsByDay
)

// MaxMarginRows is the most groups a margins report returns; a report
// that would hold more is an error asking for a narrower date range.
const MaxMarginRows = 1000

// MarginRow is one group of a margins report (wire.MarginRow).
type MarginRow = wire.MarginRow

// MarginReport is a margins report: the wire object of GET /v1/margins
// (wire.MarginReport).
type MarginReport = wire.MarginReport

// knownProduct reports whether a product of that name is registered (a
// report may name a product retired since; only names never registered are
// refused, and only if the catalogue does not know them).
func (e *Engine) knownProduct(name string) bool {
	_, ok := e.products.get(name) // retired ones included
	return ok
}

// marginOf is (kept − cost) / kept in basis points, toward zero; nil if
// nothing was kept.
func marginOf(kept, cost int64) *BasisPoints {
	if kept <= 0 {
		return nil
	}
	m := BasisPoints((kept - cost) * 10000 / kept)
	return &m
}

func marginRow(t MarginTotals) MarginRow {
	return MarginRow{Key: t.Key, Workflows: t.Workflows, Charged: Money{Amount: t.Charged, Currency: Currency},
		Refunded: Money{Amount: t.Refunded, Currency: Currency}, Cost: Money{Amount: t.Cost, Currency: Currency},
		Margin: marginOf(t.Charged-t.Refunded, t.Cost)}
}

// Margins reports env's Settled workflows grouped by product, customer or
// day, with what they charged, what was refunded, what they cost and the
// margin achieved, summed in the Store (not by loading the workflows).
//
// Errors: an *InvalidError naming groupBy (missing or unknown),
// createdBefore (not after createdAfter), or createdAfter (a range with
// more than MaxMarginRows groups).
func (e *Engine) Margins(ctx context.Context, p MarginsParams) (*MarginReport, error) {
	switch {
	case p.GroupBy == "":
		return nil, &InvalidError{Code: CodeParameterMissing, Param: "groupBy", Message: "groupBy is required: product, customer or day"}
	case !p.GroupBy.Valid():
		return nil, &InvalidError{Code: CodeParameterInvalid, Param: "groupBy", Message: fmt.Sprintf("groupBy %q is not one of product, customer, day", p.GroupBy)}
	case p.Product != "" && !e.knownProduct(p.Product):
		return nil, &InvalidError{Code: CodeParameterInvalid, Param: "product", Message: fmt.Sprintf("no product named %q", p.Product)}
	case !p.CreatedAfter.IsZero() && !p.CreatedBefore.IsZero() && !p.CreatedBefore.After(p.CreatedAfter):
		return nil, &InvalidError{Code: CodeParameterInvalid, Param: "createdBefore", Message: "createdBefore must be after createdAfter"}
	}
	totals, err := e.store.Margins(ctx, p, MaxMarginRows+1)
	if err != nil {
		return nil, err
	}
	if len(totals) > MaxMarginRows {
		return nil, &InvalidError{Code: CodeParameterInvalid, Param: "createdAfter",
			Message: fmt.Sprintf("the report would hold more than %d groups: narrow it with createdAfter and createdBefore", MaxMarginRows)}
	}
	rep := &MarginReport{Object: "margin_report", Livemode: p.Environment == Live, GroupBy: p.GroupBy, Product: p.Product, Currency: Currency, Data: make([]MarginRow, len(totals))}
	if !p.CreatedAfter.IsZero() {
		t := p.CreatedAfter.UTC()
		rep.CreatedAfter = &t
	}
	if !p.CreatedBefore.IsZero() {
		t := p.CreatedBefore.UTC()
		rep.CreatedBefore = &t
	}
	var sum MarginTotals
	for i, t := range totals {
		rep.Data[i] = marginRow(t)
		sum.Workflows += t.Workflows
		sum.Charged += t.Charged
		sum.Refunded += t.Refunded
		sum.Cost += t.Cost
	}
	rep.Total = marginRow(sum)
	return rep, nil
}

// MarginsParams asks for a margins report ([driver.MarginsParams]).
type MarginsParams = driver.MarginsParams

// MarginTotals is one group's sums as a Store computes them ([driver.MarginTotals]).
type MarginTotals = driver.MarginTotals
