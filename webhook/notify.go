package webhook

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/storage"
	"github.com/uptrace/bun"
	"go.uber.org/zap"
)

var _ settleflow.Notifier = (*Service)(nil)

// insertChunk bounds the rows of one multi-row statement: each size up to it
// is prepared once (storage.DB.Stmt), so a hot Notify is not parsed again.
const insertChunk = 64

// values returns n rows of width placeholders: "(?, ?), (?, ?)" for 2, 2.
func values(n, width int) string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", width), ", ") + ")"
	return strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
}

// insertDeliveriesSQL inserts n deliveries; the columns not listed keep
// their defaults (no attempt yet, no lease).
func insertDeliveriesSQL(n int) string {
	return `INSERT INTO webhook_deliveries (id, event_id, event_type, endpoint_id, environment, lane, fair_key,
		payload, status, next_attempt_at, created_at, updated_at) VALUES ` + values(n, 12) + `
		ON CONFLICT (event_id, endpoint_id) DO NOTHING`
}

// Notify records one delivery per enabled endpoint of each event's
// environment, in one transaction, and returns nil once it has committed:
// from then on delivery survives a crash. An event handed over again (same
// id) records nothing new for an endpoint that already has it. Each event is
// marshalled once here; every attempt sends exactly those bytes.
//
// Events of an environment without enabled endpoints are dropped: an
// endpoint receives the events recorded after it was created.
//
// Each delivery gets its place in its endpoint's fair queue here (see
// eventLane and fairKeys): deliveries are taken from customers in turn.
func (s *Service) Notify(ctx context.Context, events []settleflow.Event) error {
	if len(events) == 0 {
		return nil
	}
	var endpoints []endpointRow
	if err := s.db.NewSelect().Model(&endpoints).Column("id", "environment").
		Where("disabled_at IS NULL").Order("id").Scan(ctx); err != nil {
		return fmt.Errorf("webhook: notify: %w", err)
	}
	byEnv := map[string][]string{}
	for _, e := range endpoints {
		byEnv[e.Environment] = append(byEnv[e.Environment], e.ID)
	}
	now := s.now()
	due := storage.Micros(now.Add(s.delay(0)))
	var rows []deliveryRow
	for i := range events {
		ev := &events[i]
		if ev.ID == "" {
			return errors.New("webhook: notify: event without id")
		}
		env := ev.Environment()
		lane := eventLane(ev)
		if len(byEnv[string(env)]) == 0 {
			continue
		}
		body, err := json.Marshal(ev)
		if err != nil {
			return fmt.Errorf("webhook: notify: marshal %s: %w", ev.ID, err)
		}
		for _, ep := range byEnv[string(env)] {
			rows = append(rows, deliveryRow{
				ID:            ids.New(ids.Delivery, now),
				EventID:       ev.ID,
				EventType:     string(ev.Type),
				EndpointID:    ep,
				Environment:   string(env),
				Lane:          lane,
				Payload:       string(body),
				Status:        string(DeliveryPending),
				NextAttemptAt: due,
				CreatedAt:     storage.Micros(now),
				UpdatedAt:     storage.Micros(now),
			})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	var inserted int64
	err := s.sdb.Write(ctx, func(ctx context.Context, tx bun.Tx) error {
		inserted = 0
		if err := fairKeys(ctx, s.sdb, tx.Tx, rows); err != nil {
			return err
		}
		for start := 0; start < len(rows); start += insertChunk {
			chunk := rows[start:min(start+insertChunk, len(rows))]
			args := make([]any, 0, 12*len(chunk))
			for _, r := range chunk {
				args = append(args, r.ID, r.EventID, r.EventType, r.EndpointID, r.Environment, r.Lane, r.FairKey,
					r.Payload, r.Status, r.NextAttemptAt, r.CreatedAt, r.UpdatedAt)
			}
			// An endpoint removed since the read above fails the foreign
			// key; the engine offers the events again and they skip it.
			res, err := s.sdb.Exec(ctx, tx.Tx, insertDeliveriesSQL(len(chunk)), args...)
			if err != nil {
				return err
			}
			n, _ := res.RowsAffected()
			inserted += n
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("webhook: notify: %w", err)
	}
	s.log.Debug("webhook deliveries recorded", zap.Int("events", len(events)), zap.Int64("deliveries", inserted))
	if inserted > 0 {
		s.poke()
	}
	return nil
}

// eventLane returns the lane of an event's deliveries in the fair queue: the
// customer the event names (a workflow.* event's customerId, a
// customer.funded event's customer, a refund's
// customer while the refund carries it: the engine's own events do, a refund
// event read back from the outbox does not), or "" when it names none. The
// events of no customer form a lane of their own, served in turn with the
// customers' like any other. Lanes are per endpoint, and an endpoint serves
// one environment, so a customer's test and live deliveries never share one.
func eventLane(ev *settleflow.Event) string {
	switch {
	case ev.Data.CustomerID != "":
		return ev.Data.CustomerID
	case ev.Data.Refund != nil:
		return ev.Data.Refund.CustomerID
	}
	return ""
}

// line is one lane's line to one endpoint.
type line struct{ endpoint, lane string }

// fairKeys gives each of rows, new deliveries in the order they are
// recorded, its place in its endpoint's fair queue: one past its lane's last
// key on that endpoint or, when that is behind the head of the endpoint's
// line (see fairKeysSQL), one past the head; never below 1. So a lane with a
// long queue takes every later turn, not the next N, a lane that was served
// waits for no one's past, and within one lane and endpoint keys grow in the
// order deliveries are recorded. Per batch (of insertChunk lines) one read and
// one upsert of webhook_lanes, inside the recording transaction: on SQLite
// the writes are serialized, so what is read is what the insert follows;
// on Postgres two Notify calls at once may read the same last key, and equal
// keys are served in id order.
func fairKeys(ctx context.Context, db *storage.DB, tx *sql.Tx, rows []deliveryRow) error {
	last := make(map[line]int64)
	var lines []line
	for i := range rows {
		l := line{rows[i].EndpointID, rows[i].Lane}
		if _, seen := last[l]; !seen {
			last[l] = 0
			lines = append(lines, l)
		}
	}
	for start := 0; start < len(lines); start += insertChunk {
		chunk := lines[start:min(start+insertChunk, len(lines))]
		args := make([]any, 0, 2*len(chunk))
		for _, l := range chunk {
			args = append(args, l.endpoint, l.lane)
		}
		if err := readLasts(ctx, db, tx, fairKeysSQL(len(chunk)), args, last); err != nil {
			return fmt.Errorf("fair queue: %w", err)
		}
	}
	for i := range rows {
		l := line{rows[i].EndpointID, rows[i].Lane}
		last[l]++
		rows[i].FairKey = last[l]
	}
	// Rows locked in one order by every writer: two Notify calls at once on
	// Postgres wait for each other instead of deadlocking.
	slices.SortFunc(lines, func(a, b line) int {
		return cmp.Or(strings.Compare(a.endpoint, b.endpoint), strings.Compare(a.lane, b.lane))
	})
	for start := 0; start < len(lines); start += insertChunk {
		chunk := lines[start:min(start+insertChunk, len(lines))]
		args := make([]any, 0, 3*len(chunk))
		for _, l := range chunk {
			args = append(args, l.endpoint, l.lane, last[l])
		}
		if _, err := db.Exec(ctx, tx, upsertLanesSQL(len(chunk)), args...); err != nil {
			return fmt.Errorf("fair queue: %w", err)
		}
	}
	return nil
}

// readLasts runs the fairKeysSQL query and sets last of each line it
// returns to where the line's next key follows: its last key or the head,
// whichever is further, and at least 0.
func readLasts(ctx context.Context, db *storage.DB, tx *sql.Tx, query string, args []any, last map[line]int64) error {
	st, err := db.Stmt(ctx, query)
	if err != nil {
		return err
	}
	rs, err := tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	if err != nil {
		return err
	}
	defer rs.Close()
	for rs.Next() {
		var l line
		var lastKey, head int64
		if err := rs.Scan(&l.endpoint, &l.lane, &lastKey, &head); err != nil {
			return err
		}
		last[l] = max(lastKey, head, 0)
	}
	return rs.Err()
}

// upsertLanesSQL records the last keys of n lines; a key never moves back.
func upsertLanesSQL(n int) string {
	return `INSERT INTO webhook_lanes (endpoint_id, lane, last_key) VALUES ` + values(n, 3) + `
		ON CONFLICT (endpoint_id, lane) DO UPDATE SET last_key = CASE
			WHEN excluded.last_key > webhook_lanes.last_key THEN excluded.last_key ELSE webhook_lanes.last_key END`
}

// fairKeysSQL reads, for n (endpoint, lane) pairs, the lane's last key on
// the endpoint (0 if none) and the head of the endpoint's line: its least
// key pending and not yet attempted (retries waiting out their delay do not
// hold the head back), or with none the greatest key given there (0 if
// none). Index probes only: webhook_lanes' key, webhook_deliveries_fair.
func fairKeysSQL(n int) string {
	return `SELECT c.column1 AS endpoint_id, c.column2 AS lane,
		coalesce((SELECT l.last_key FROM webhook_lanes l
			WHERE l.endpoint_id = c.column1 AND l.lane = c.column2), 0) AS last,
		coalesce((SELECT min(h.fair_key) FROM webhook_deliveries h
			WHERE h.status = 'pending' AND h.attempts = h.schedule_start AND h.endpoint_id = c.column1),
			(SELECT max(g.last_key) FROM webhook_lanes g WHERE g.endpoint_id = c.column1), 0) AS head
	FROM (VALUES ` + values(n, 2) + `) AS c`
}
