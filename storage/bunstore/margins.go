package bunstore

import (
	"context"
	"fmt"
	"math"

	"github.com/settleflow/settleflow"
)

// Margins implements settleflow.Store: one GROUP BY over the workflows.
func (s *Store) Margins(ctx context.Context, p settleflow.MarginsParams, limit int) ([]settleflow.MarginTotals, error) {
	var key string
	switch p.GroupBy {
	case settleflow.MarginsByProduct:
		key = "product"
	case settleflow.MarginsByCustomer:
		key = "customer_id"
	case settleflow.MarginsByDay:
		// created_at is microseconds since the Unix epoch, UTC.
		key = "strftime('%Y-%m-%d', created_at / 1000000, 'unixepoch')"
		if s.postgres {
			key = "to_char(to_timestamp(created_at / 1000000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD')"
		}
	default:
		return nil, fmt.Errorf("bunstore: margins grouped by %q", p.GroupBy)
	}
	after, before := int64(math.MinInt64), int64(math.MaxInt64)
	if !p.CreatedAfter.IsZero() {
		after = micros(p.CreatedAfter)
	}
	if !p.CreatedBefore.IsZero() {
		before = micros(p.CreatedBefore)
	}
	args := []any{p.Environment.Livemode(), after, before}
	product := ""
	if p.Product != "" {
		product = " AND product = ?"
		args = append(args, p.Product)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+key+` AS k, count(*), coalesce(sum(coalesce(charged, quoted_amount)), 0), coalesce(sum(refunded), 0), coalesce(sum(actual_cost), 0)
		FROM settleflow_workflows
		WHERE livemode = ? AND status = 'Settled' AND created_at >= ? AND created_at < ?`+product+`
		GROUP BY k ORDER BY k LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("bunstore: margins: %w", err)
	}
	defer rows.Close()
	var out []settleflow.MarginTotals
	for rows.Next() {
		var t settleflow.MarginTotals
		if err := rows.Scan(&t.Key, &t.Workflows, &t.Charged, &t.Refunded, &t.Cost); err != nil {
			return nil, fmt.Errorf("bunstore: margins: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}
