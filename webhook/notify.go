package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/storage"
	"github.com/uptrace/bun"
	"go.uber.org/zap"
)

var _ settleflow.Notifier = (*Service)(nil)

// insertChunk bounds the rows of one INSERT statement (SQLite allows 32766
// bound parameters; a delivery row takes 15).
const insertChunk = 500

// Notify records one delivery per enabled endpoint of each event's
// environment, in one transaction, and returns nil once it has committed:
// from then on delivery survives a crash. An event handed over again (same
// id) records nothing new for an endpoint that already has it. Each event is
// marshalled once here; every attempt sends exactly those bytes.
//
// Events of an environment without enabled endpoints are dropped: an
// endpoint receives the events recorded after it was created.
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
