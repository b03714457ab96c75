package driver

import (
	"time"

	"github.com/settleflow/settleflow/wire"
)

// MarginsParams asks for a margins report.
type MarginsParams struct {
	Environment wire.Environment
	// GroupBy is required.
	GroupBy wire.MarginGroupBy
	// CreatedAfter and CreatedBefore bound the workflows' creation time
	// (after: inclusive, before: exclusive); zero is unbounded.
	CreatedAfter, CreatedBefore time.Time
	// Product, if set, counts that product's workflows only (a chart of
	// one product's margin by day).
	Product string
}

// MarginTotals is one group's sums as a Store computes them.
type MarginTotals struct {
	Key                     string
	Workflows               int64
	Charged, Refunded, Cost int64
}
