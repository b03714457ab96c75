package bunstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/settleflow/settleflow"
)

// attemptColumns are settleflow_attempts' columns, in the order
// insertAttempts writes them and ListAttempts reads them.
const attemptColumns = `task_id, workflow_id, livemode, number, worker_key_id, worker_host, worker_name, worker_sdk, instance,
	claimed_at, ended_at, outcome, message`

// hasAttempts reports whether an update of us records an attempt.
func hasAttempts(us []settleflow.Update) bool {
	for _, u := range us {
		if u.Attempt != nil {
			return true
		}
	}
	return false
}

// insertAttempts records, in tx, the attempts of the updates of us that
// applied (Update.Attempt).
func (s *Store) insertAttempts(ctx context.Context, tx *sql.Tx, us []settleflow.Update, applied []bool) error {
	var args []any
	k := 0
	flush := func() error {
		if k == 0 {
			return nil
		}
		row := "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
		_, err := s.exec(ctx, tx, `INSERT INTO settleflow_attempts (`+attemptColumns+`) VALUES `+
			strings.TrimSuffix(strings.Repeat(row+", ", k), ", ")+` ON CONFLICT (task_id) DO NOTHING`, args...)
		args, k = args[:0], 0
		if err != nil {
			return fmt.Errorf("bunstore: attempts: %w", err)
		}
		return nil
	}
	for i, u := range us {
		a := u.Attempt
		if !applied[i] || a == nil {
			continue
		}
		args = append(args, a.TaskID, a.WorkflowID, a.Livemode, a.Number, a.WorkerKeyID, a.WorkerHost, a.WorkerName, a.WorkerSDK, a.Instance,
			micros(a.ClaimedAt), micros(a.EndedAt), string(a.Outcome), a.Message)
		if k++; k == maxUpdateRows {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// ListAttempts implements settleflow.Store.
func (s *Store) ListAttempts(ctx context.Context, env settleflow.Environment, workflowID string) ([]settleflow.Attempt, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+attemptColumns+` FROM settleflow_attempts
		WHERE livemode = ? AND workflow_id = ? ORDER BY claimed_at, task_id`, env.Livemode(), workflowID)
	if err != nil {
		return nil, fmt.Errorf("bunstore: attempts: %w", err)
	}
	defer rows.Close()
	var out []settleflow.Attempt
	for rows.Next() {
		var a settleflow.Attempt
		var claimed, ended int64
		var outcome string
		if err := rows.Scan(&a.TaskID, &a.WorkflowID, &a.Livemode, &a.Number, &a.WorkerKeyID, &a.WorkerHost, &a.WorkerName, &a.WorkerSDK, &a.Instance,
			&claimed, &ended, &outcome, &a.Message); err != nil {
			return nil, fmt.Errorf("bunstore: attempts: %w", err)
		}
		a.ClaimedAt, a.EndedAt, a.Outcome = fromMicros(claimed), fromMicros(ended), settleflow.AttemptOutcome(outcome)
		out = append(out, a)
	}
	return out, rows.Err()
}
