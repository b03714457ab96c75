package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/storage"
	"github.com/uptrace/bun"
	"go.uber.org/zap"
)

var _ settleflow.Notifier = (*Service)(nil)

// insertChunk bounds the rows of one INSERT statement (SQLite allows 32766
// bound parameters; a delivery row takes 18).
const insertChunk = 500

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
		if err := fairKeys(ctx, tx, rows); err != nil {
			return err
		}
		for start := 0; start < len(rows); start += insertChunk {
			chunk := rows[start:min(start+insertChunk, len(rows))]
			// An endpoint removed since the read above fails the foreign
			// key; the engine offers the events again and they skip it.
			res, err := tx.NewInsert().Model(&chunk).
				On("CONFLICT (event_id, endpoint_id) DO NOTHING").Exec(ctx)
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
// customer the event names (a customer.funded event's customer, a refund's
// customer while the refund carries it), or "" when it names none. The events
// of no customer form a lane of their own, served in turn with the
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

// fairKeysChunk bounds the (endpoint, lane) pairs one fairKeys statement
// reads (two bound parameters each).
const fairKeysChunk = 500

// line is one lane's line to one endpoint.
type line struct{ endpoint, lane string }

// fairKeys gives each of rows, new deliveries in the order they are
// recorded, its place in its endpoint's fair queue: one past its lane's last
// pending delivery to that endpoint or, when the lane has none there, one
// past the head of the endpoint's line (its least pending key), and never
// below 1. So a lane with a long queue takes every later turn, not the next
// N, and within one lane and endpoint keys grow in the order deliveries are
// recorded. One read per batch (per fairKeysChunk lines), inside the
// recording transaction: on SQLite the writes are serialized, so what is
// read is what the insert follows; on Postgres two Notify calls at once may
// read the same last key, and equal keys are served in id order.
func fairKeys(ctx context.Context, tx bun.Tx, rows []deliveryRow) error {
	last := make(map[line]int64)
	var lines []line
	for i := range rows {
		l := line{rows[i].EndpointID, rows[i].Lane}
		if _, seen := last[l]; !seen {
			last[l] = 0
			lines = append(lines, l)
		}
	}
	for start := 0; start < len(lines); start += fairKeysChunk {
		chunk := lines[start:min(start+fairKeysChunk, len(lines))]
		args := make([]any, 0, 2*len(chunk))
		for _, l := range chunk {
			args = append(args, l.endpoint, l.lane)
		}
		var got []struct {
			Endpoint string `bun:"endpoint_id"`
			Lane     string `bun:"lane"`
			Last     int64  `bun:"last"`
			Head     int64  `bun:"head"`
		}
		if err := tx.NewRaw(fairKeysSQL(len(chunk)), args...).Scan(ctx, &got); err != nil {
			return fmt.Errorf("fair queue: %w", err)
		}
		for _, g := range got {
			last[line{g.Endpoint, g.Lane}] = max(g.Last, g.Head, 0)
		}
	}
	for i := range rows {
		l := line{rows[i].EndpointID, rows[i].Lane}
		last[l]++
		rows[i].FairKey = last[l]
	}
	return nil
}

// fairKeysSQL reads, for n (endpoint, lane) pairs, the lane's last pending
// key on the endpoint and the head of the endpoint's line (0 if none): two
// probes of the partial indexes on pending deliveries each.
func fairKeysSQL(n int) string {
	return `SELECT c.column1 AS endpoint_id, c.column2 AS lane,
		coalesce((SELECT max(d.fair_key) FROM webhook_deliveries d
			WHERE d.status = 'pending' AND d.endpoint_id = c.column1 AND d.lane = c.column2), 0) AS last,
		coalesce((SELECT min(h.fair_key) FROM webhook_deliveries h
			WHERE h.status = 'pending' AND h.endpoint_id = c.column1), 0) AS head
	FROM (VALUES ` + strings.TrimSuffix(strings.Repeat("(?, ?), ", n), ", ") + `) AS c`
}
