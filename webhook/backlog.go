package webhook

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/storage"
)

// StageWebhooks is the name of the deliverer's stage in a backlog.
const StageWebhooks = "webhooks"

// Backlog reports the deliverer's queue as a pipeline stage: the pending
// deliveries (Depth), those due now and not leased (Due), and how long the
// oldest due one has waited. Deliveries waiting out a retry delay are pending
// but not due. One aggregate query over the pending deliveries, read from
// the two indexes that hold them (those not yet attempted in their retry
// schedule, and the retries: attempts never fall below schedule_start).
func (s *Service) Backlog(ctx context.Context) (settleflow.StageBacklog, error) {
	now := s.now()
	at := storage.Micros(now)
	var row struct {
		Depth       int64         `bun:"depth"`
		Due         sql.NullInt64 `bun:"due"`
		EarliestDue sql.NullInt64 `bun:"earliest_due"`
	}
	err := s.db.NewRaw(backlogSQL, at, at).Scan(ctx, &row)
	if err != nil {
		return settleflow.StageBacklog{}, fmt.Errorf("webhook: backlog: %w", err)
	}
	c := settleflow.BacklogCounts{Depth: row.Depth, Due: row.Due.Int64}
	if row.EarliestDue.Valid {
		c.EarliestDue = storage.FromMicros(row.EarliestDue.Int64)
	}
	return c.Stage(StageWebhooks, now), nil
}

// backlogSQL aggregates the pending deliveries from the indexes that hold
// them. Parameters: now, now.
const backlogSQL = `SELECT COUNT(*) AS depth,
		SUM(CASE WHEN next_attempt_at <= ? THEN 1 ELSE 0 END) AS due,
		MIN(CASE WHEN next_attempt_at <= ? THEN next_attempt_at END) AS earliest_due
	FROM (SELECT next_attempt_at FROM webhook_deliveries
			WHERE status = 'pending' AND attempts = schedule_start
		UNION ALL SELECT next_attempt_at FROM webhook_deliveries
			WHERE status = 'pending' AND attempts > schedule_start) AS p`
