// Package bunstore is the settleflow Store on bun: one set of models and
// queries for SQLite and Postgres, with a dialect switch only where the SQL
// really differs (row locks on Postgres, a single in-process writer on
// SQLite). Most programs open it through storage/sqlite or storage/postgres.
package bunstore

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/migrate"

	"github.com/settleflow/settleflow"
)

//go:embed migrations
var migrationFiles embed.FS

// Store implements settleflow.Store on a *bun.DB.
type Store struct {
	db       *bun.DB
	postgres bool
	// wmu serializes this process's write transactions on SQLite, which
	// allows one writer at a time: waiting on a mutex is far cheaper than
	// SQLite's busy-retry sleeps. Other processes still meet busy_timeout.
	wmu sync.Mutex
}

var _ settleflow.Store = (*Store)(nil)

// New returns a Store on db, which must be SQLite (opened with
// storage/sqlite.OpenDB's settings) or Postgres. Call Migrate before use.
func New(db *bun.DB) (*Store, error) {
	switch db.Dialect().Name() {
	case dialect.SQLite:
		return &Store{db: db}, nil
	case dialect.PG:
		return &Store{db: db, postgres: true}, nil
	default:
		return nil, fmt.Errorf("bunstore: unsupported dialect %s", db.Dialect().Name())
	}
}

// DB returns the underlying database handle.
func (s *Store) DB() *bun.DB { return s.db }

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Migrate brings the schema up to date. It is safe to call from several
// processes at once.
func (s *Store) Migrate(ctx context.Context) error {
	dir := "migrations/sqlite"
	if s.postgres {
		dir = "migrations/postgres"
	}
	sub, err := fs.Sub(migrationFiles, dir)
	if err != nil {
		return err
	}
	ms := migrate.NewMigrations()
	if err := ms.Discover(sub); err != nil {
		return fmt.Errorf("bunstore: migrations: %w", err)
	}
	var statuses []string
	for _, st := range settleflow.Statuses {
		statuses = append(statuses, "'"+string(st)+"'")
	}
	m := migrate.NewMigrator(s.db, ms,
		migrate.WithTableName("settleflow_migrations"),
		migrate.WithLocksTableName("settleflow_migration_locks"),
		migrate.WithMarkAppliedOnSuccess(true),
		migrate.WithTemplateData(map[string]any{
			"StatusList":  strings.Join(statuses, ", "),
			"Transitions": settleflow.Transitions(),
		}))
	return s.write(ctx, func() error {
		if err := m.Init(ctx); err != nil {
			return fmt.Errorf("bunstore: migrations: %w", err)
		}
		if err := m.Lock(ctx); err != nil {
			return fmt.Errorf("bunstore: migrations: %w", err)
		}
		defer m.Unlock(context.WithoutCancel(ctx)) //nolint:errcheck // best effort
		if _, err := m.Migrate(ctx); err != nil {
			return fmt.Errorf("bunstore: migrate: %w", err)
		}
		return nil
	})
}

// write runs fn as this process's only SQLite writer.
func (s *Store) write(ctx context.Context, fn func() error) error {
	if !s.postgres {
		s.wmu.Lock()
		defer s.wmu.Unlock()
	}
	return fn()
}

// tx runs fn in a write transaction.
func (s *Store) tx(ctx context.Context, fn func(tx bun.Tx) error) error {
	return s.write(ctx, func() error {
		return s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error { return fn(tx) })
	})
}

// workflowRow is a workflow as stored. Times are Unix microseconds (UTC),
// money integer minor units, margins basis points.
type workflowRow struct {
	bun.BaseModel `bun:"table:settleflow_workflows"`

	ID                string  `bun:"id,pk"`
	Livemode          bool    `bun:"livemode"`
	Product           string  `bun:"product"`
	CustomerID        string  `bun:"customer_id"`
	Payload           string  `bun:"payload"`
	QuotedAmount      int64   `bun:"quoted_amount"`
	Currency          string  `bun:"currency"`
	TargetMarginBps   int64   `bun:"target_margin_bps"`
	AchievedMarginBps *int64  `bun:"achieved_margin_bps"`
	ActualCost        *int64  `bun:"actual_cost"`
	Status            string  `bun:"status"`
	Result            *string `bun:"result"`
	Settlement        *string `bun:"settlement"`
	Failure           *string `bun:"failure"`
	Attempts          int     `bun:"attempts"`
	RunAt             int64   `bun:"run_at"`
	LeaseOwner        *string `bun:"lease_owner"`
	CreatedAt         int64   `bun:"created_at"`
	UpdatedAt         int64   `bun:"updated_at"`
}

const workflowColumns = "id, livemode, product, customer_id, payload, quoted_amount, currency, target_margin_bps, achieved_margin_bps, actual_cost, status, result, settlement, failure, attempts, run_at, lease_owner, created_at, updated_at"

func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func jsonText[T any](v *T) *string {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // Settlement and Failure are plain structs
	}
	s := string(b)
	return &s
}

func rawText(b json.RawMessage) *string {
	if len(b) == 0 {
		return nil
	}
	s := string(b)
	return &s
}

func toRow(w *settleflow.Workflow) *workflowRow {
	r := &workflowRow{
		ID:              w.ID,
		Livemode:        w.Livemode,
		Product:         w.Product,
		CustomerID:      w.CustomerID,
		Payload:         string(w.Payload),
		QuotedAmount:    w.Quoted.Amount,
		Currency:        w.Quoted.Currency,
		TargetMarginBps: int64(w.Margin.Target),
		ActualCost:      w.ActualCost,
		Status:          string(w.Status),
		Result:          rawText(w.Result),
		Settlement:      jsonText(w.Settlement),
		Failure:         jsonText(w.Failure),
		Attempts:        w.Attempts,
		RunAt:           micros(w.CreatedAt),
		CreatedAt:       micros(w.CreatedAt),
		UpdatedAt:       micros(w.UpdatedAt),
	}
	if w.Margin.Achieved != nil {
		a := int64(*w.Margin.Achieved)
		r.AchievedMarginBps = &a
	}
	return r
}

func (r *workflowRow) workflow() (*settleflow.Workflow, error) {
	w := &settleflow.Workflow{
		ID:         r.ID,
		Object:     "workflow",
		Livemode:   r.Livemode,
		Product:    r.Product,
		CustomerID: r.CustomerID,
		Payload:    json.RawMessage(r.Payload),
		Quoted:     settleflow.Money{Amount: r.QuotedAmount, Currency: r.Currency},
		Margin:     settleflow.Margin{Target: settleflow.BasisPoints(r.TargetMarginBps)},
		Status:     settleflow.Status(r.Status),
		ActualCost: r.ActualCost,
		Attempts:   r.Attempts,
		CreatedAt:  fromMicros(r.CreatedAt),
		UpdatedAt:  fromMicros(r.UpdatedAt),
	}
	if r.AchievedMarginBps != nil {
		a := settleflow.BasisPoints(*r.AchievedMarginBps)
		w.Margin.Achieved = &a
	}
	if r.Result != nil {
		w.Result = json.RawMessage(*r.Result)
	}
	if r.Settlement != nil {
		w.Settlement = new(settleflow.Settlement)
		if err := json.Unmarshal([]byte(*r.Settlement), w.Settlement); err != nil {
			return nil, fmt.Errorf("bunstore: workflow %s: settlement: %w", r.ID, err)
		}
	}
	if r.Failure != nil {
		w.Failure = new(settleflow.Failure)
		if err := json.Unmarshal([]byte(*r.Failure), w.Failure); err != nil {
			return nil, fmt.Errorf("bunstore: workflow %s: failure: %w", r.ID, err)
		}
	}
	return w, nil
}

func rowsToWorkflows(rows []workflowRow) ([]*settleflow.Workflow, error) {
	out := make([]*settleflow.Workflow, len(rows))
	for i := range rows {
		w, err := rows[i].workflow()
		if err != nil {
			return nil, err
		}
		out[i] = w
	}
	return out, nil
}

type idempotencyRow struct {
	bun.BaseModel `bun:"table:settleflow_idempotency_keys"`

	Livemode    bool   `bun:"livemode,pk"`
	Key         string `bun:"key,pk"`
	RequestHash string `bun:"request_hash"`
	WorkflowID  string `bun:"workflow_id"`
	Response    string `bun:"response"`
	CreatedAt   int64  `bun:"created_at"`
}

// InsertWorkflows implements settleflow.Store.
func (s *Store) InsertWorkflows(ctx context.Context, ins []settleflow.Insert) ([]settleflow.InsertResult, error) {
	results := make([]settleflow.InsertResult, len(ins))
	if len(ins) == 0 {
		return results, nil
	}
	err := s.tx(ctx, func(tx bun.Tx) error {
		rows := make([]*workflowRow, 0, len(ins))
		for i, in := range ins {
			w := in.Workflow
			if in.IdempotencyKey != "" {
				var existing idempotencyRow
				err := tx.NewSelect().Model(&existing).
					Where("livemode = ? AND key = ?", w.Livemode, in.IdempotencyKey).
					Scan(ctx)
				switch {
				case err == nil && existing.CreatedAt > micros(w.CreatedAt.Add(-settleflow.IdempotencyTTL)):
					var first settleflow.Workflow
					if err := json.Unmarshal([]byte(existing.Response), &first); err != nil {
						return fmt.Errorf("bunstore: idempotency record: %w", err)
					}
					results[i] = settleflow.InsertResult{Existing: &first, ExistingHash: existing.RequestHash}
					continue
				case err == nil: // expired: the key may be used again
					if _, err := tx.NewDelete().Model(&existing).WherePK().Exec(ctx); err != nil {
						return err
					}
				case !errors.Is(err, sql.ErrNoRows):
					return err
				}
				snapshot, err := json.Marshal(w)
				if err != nil {
					return err
				}
				row := &idempotencyRow{Livemode: w.Livemode, Key: in.IdempotencyKey, RequestHash: in.RequestHash,
					WorkflowID: w.ID, Response: string(snapshot), CreatedAt: micros(w.CreatedAt)}
				// Inserted now, so a second request with this key later in the
				// same batch finds it.
				rows = append(rows, toRow(w))
				if _, err := tx.NewInsert().Model(&rows).Exec(ctx); err != nil {
					return err
				}
				rows = rows[:0]
				if _, err := tx.NewInsert().Model(row).Exec(ctx); err != nil {
					return err
				}
				continue
			}
			rows = append(rows, toRow(w))
		}
		if len(rows) > 0 {
			if _, err := tx.NewInsert().Model(&rows).Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return results, nil
}

// GetWorkflow implements settleflow.Store.
func (s *Store) GetWorkflow(ctx context.Context, env settleflow.Environment, id string) (*settleflow.Workflow, error) {
	var row workflowRow
	err := s.db.NewSelect().Model(&row).Where("id = ? AND livemode = ?", id, env.Livemode()).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, settleflow.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return row.workflow()
}

// ListWorkflows implements settleflow.Store.
func (s *Store) ListWorkflows(ctx context.Context, q settleflow.ListQuery) ([]*settleflow.Workflow, bool, error) {
	if q.Limit < 1 {
		return nil, false, errors.New("bunstore: list limit must be positive")
	}
	var rows []workflowRow
	sel := s.db.NewSelect().Model(&rows).Where("livemode = ?", q.Environment.Livemode())
	if q.Status != "" {
		sel.Where("status = ?", string(q.Status))
	}
	if q.CustomerID != "" {
		sel.Where("customer_id = ?", q.CustomerID)
	}
	if q.Product != "" {
		sel.Where("product = ?", q.Product)
	}
	backwards := q.EndingBefore != ""
	switch {
	case backwards:
		sel.Where("id > ?", q.EndingBefore).OrderExpr("id ASC")
	case q.StartingAfter != "":
		sel.Where("id < ?", q.StartingAfter).OrderExpr("id DESC")
	default:
		sel.OrderExpr("id DESC")
	}
	if err := sel.Limit(int64(q.Limit + 1)).Scan(ctx); err != nil {
		return nil, false, err
	}
	more := len(rows) > q.Limit
	if more {
		rows = rows[:q.Limit]
	}
	if backwards {
		for i, j := 0, len(rows)-1; i < j; i, j = i+1, j-1 {
			rows[i], rows[j] = rows[j], rows[i]
		}
	}
	ws, err := rowsToWorkflows(rows)
	return ws, more, err
}

// ClaimWorkflows implements settleflow.Store.
func (s *Store) ClaimWorkflows(ctx context.Context, c settleflow.Claim) ([]*settleflow.Workflow, error) {
	if c.Limit < 1 {
		return nil, nil
	}
	lock := ""
	if s.postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	now := micros(c.Now)
	q := `UPDATE settleflow_workflows SET
		status = CASE status WHEN 'Pending' THEN 'Running' ELSE status END,
		updated_at = CASE status WHEN 'Pending' THEN ? ELSE updated_at END,
		lease_owner = ?, run_at = ?
	WHERE id IN (SELECT id FROM settleflow_workflows
		WHERE status IN ('Pending', 'Running', 'Settling') AND run_at <= ?
		ORDER BY run_at LIMIT ?` + lock + `)
	RETURNING ` + workflowColumns
	var rows []workflowRow
	err := s.tx(ctx, func(tx bun.Tx) error {
		return tx.NewRaw(q, now, c.Owner, micros(c.LeaseUntil), now, c.Limit).Scan(ctx, &rows)
	})
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	return rowsToWorkflows(rows)
}

type eventRow struct {
	bun.BaseModel `bun:"table:settleflow_events"`

	ID           string  `bun:"id,pk"`
	WorkflowID   string  `bun:"workflow_id"`
	Type         string  `bun:"type"`
	Livemode     bool    `bun:"livemode"`
	Data         string  `bun:"data"`
	CreatedAt    int64   `bun:"created_at"`
	RunAt        int64   `bun:"run_at"`
	LeaseOwner   *string `bun:"lease_owner"`
	DispatchedAt *int64  `bun:"dispatched_at"`
}

// UpdateWorkflows implements settleflow.Store.
func (s *Store) UpdateWorkflows(ctx context.Context, us []settleflow.Update) ([]bool, error) {
	applied := make([]bool, len(us))
	for _, u := range us {
		if !u.Transition.IsZero() && u.Transition.From() != u.Status {
			return nil, fmt.Errorf("bunstore: update of %s: transition from %s but status %s", u.ID, u.Transition.From(), u.Status)
		}
	}
	err := s.tx(ctx, func(tx bun.Tx) error {
		var events []*eventRow
		for i, u := range us {
			status := u.Status
			if !u.Transition.IsZero() {
				status = u.Transition.Next()
			}
			var owner *string
			if !u.Release && !status.Terminal() {
				owner = &u.Owner
			}
			set := tx.NewUpdate().Table("settleflow_workflows").
				Set("status = ?", string(status)).
				Set("run_at = ?", micros(u.RunAt)).
				Set("lease_owner = ?", owner).
				Set("attempts = ?", u.Attempts).
				Set("updated_at = ?", micros(u.UpdatedAt))
			if u.Result != nil {
				set.Set("result = ?", string(u.Result))
			}
			if u.ActualCost != nil {
				set.Set("actual_cost = ?", *u.ActualCost)
			}
			if u.Achieved != nil {
				set.Set("achieved_margin_bps = ?", int64(*u.Achieved))
			}
			if u.Settlement != nil {
				set.Set("settlement = ?", *jsonText(u.Settlement))
			}
			if u.Failure != nil {
				set.Set("failure = ?", *jsonText(u.Failure))
			}
			res, err := set.Where("id = ? AND status = ? AND lease_owner = ?", u.ID, string(u.Status), u.Owner).Exec(ctx)
			if err != nil {
				return fmt.Errorf("bunstore: update %s: %w", u.ID, err)
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			applied[i] = n == 1
			if applied[i] && u.Event != nil {
				ev, err := toEventRow(u.Event)
				if err != nil {
					return err
				}
				events = append(events, ev)
			}
		}
		if len(events) > 0 {
			if _, err := tx.NewInsert().Model(&events).Exec(ctx); err != nil {
				return fmt.Errorf("bunstore: outbox: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return applied, nil
}

func toEventRow(e *settleflow.Event) (*eventRow, error) {
	data, err := json.Marshal(e.Data)
	if err != nil {
		return nil, fmt.Errorf("bunstore: event %s: %w", e.ID, err)
	}
	return &eventRow{
		ID:         e.ID,
		WorkflowID: e.Data.WorkflowID,
		Type:       string(e.Type),
		Livemode:   e.Livemode,
		Data:       string(data),
		CreatedAt:  micros(e.CreatedAt),
		RunAt:      micros(e.CreatedAt),
	}, nil
}

// ClaimEvents implements settleflow.Store.
func (s *Store) ClaimEvents(ctx context.Context, c settleflow.Claim) ([]settleflow.Event, error) {
	if c.Limit < 1 {
		return nil, nil
	}
	lock := ""
	if s.postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	q := `UPDATE settleflow_events SET lease_owner = ?, run_at = ?
	WHERE id IN (SELECT id FROM settleflow_events
		WHERE dispatched_at IS NULL AND run_at <= ?
		ORDER BY run_at, id LIMIT ?` + lock + `)
	RETURNING id, workflow_id, type, livemode, data, created_at, run_at, lease_owner, dispatched_at`
	var rows []eventRow
	err := s.tx(ctx, func(tx bun.Tx) error {
		return tx.NewRaw(q, c.Owner, micros(c.LeaseUntil), micros(c.Now), c.Limit).Scan(ctx, &rows)
	})
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	out := make([]settleflow.Event, len(rows))
	for i, r := range rows {
		out[i] = settleflow.Event{
			ID:        r.ID,
			Object:    "event",
			Type:      settleflow.EventType(r.Type),
			Livemode:  r.Livemode,
			CreatedAt: fromMicros(r.CreatedAt),
		}
		if err := json.Unmarshal([]byte(r.Data), &out[i].Data); err != nil {
			return nil, fmt.Errorf("bunstore: event %s: %w", r.ID, err)
		}
	}
	// RETURNING does not keep the subquery's order.
	sortEvents(out)
	return out, nil
}

func sortEvents(evs []settleflow.Event) {
	slices.SortFunc(evs, func(a, b settleflow.Event) int { return strings.Compare(a.ID, b.ID) })
}

// MarkEventsDispatched implements settleflow.Store.
func (s *Store) MarkEventsDispatched(ctx context.Context, ids []string, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	return s.tx(ctx, func(tx bun.Tx) error {
		_, err := tx.NewUpdate().Table("settleflow_events").
			Set("dispatched_at = ?", micros(at)).
			Set("lease_owner = NULL").
			Where("id IN (?)", bun.In(ids)).
			Exec(ctx)
		return err
	})
}

// RetryEvents implements settleflow.Store.
func (s *Store) RetryEvents(ctx context.Context, ids []string, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	return s.tx(ctx, func(tx bun.Tx) error {
		_, err := tx.NewUpdate().Table("settleflow_events").
			Set("run_at = ?", micros(at)).
			Set("lease_owner = NULL").
			Where("id IN (?) AND dispatched_at IS NULL", bun.In(ids)).
			Exec(ctx)
		return err
	})
}
