// Package dblimit is a ratelimit.Limiter kept in the database, so that every
// instance of the server on one database (Postgres, see README "Running
// several instances") shares each key's windows and the rate-limit headers
// stay truthful across instances.
//
// Each Allow is one write through the database's writer (on Postgres it
// shares the group commit of the process's other writes): it counts the
// request in every window (an upsert that returns the new counts) and, if
// a window is over its limit, takes the request's counts back in the same
// transaction, so a refused request consumes nothing. The rows the upsert
// touches stay locked until the transaction ends, so callers racing on one
// key are serialized by the database and no window ever admits more than
// its limit, however many instances ask at once.
//
// When the database cannot be reached, Allow returns the error and the API
// answers 500 api_error (the request is neither admitted nor counted): the
// server could do nothing for that request anyway, since the workflows live
// in the same database. There is no fallback to a per-instance limiter,
// which would silently multiply every limit by the number of instances.
package dblimit

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/settleflow/settleflow/ratelimit"
	"github.com/settleflow/settleflow/storage"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Limiter is a [ratelimit.Limiter] on a database.
type Limiter struct {
	db *storage.DB
}

var _ ratelimit.Limiter = (*Limiter)(nil)

// New returns a Limiter on db after creating or upgrading its table
// (ratelimit_counters, migrations recorded in ratelimit_migrations).
func New(ctx context.Context, db *storage.DB) (*Limiter, error) {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx, storage.Migrations{Table: "ratelimit_migrations", Files: sub}); err != nil {
		return nil, fmt.Errorf("dblimit: %w", err)
	}
	return &Limiter{db: db}, nil
}

type counted struct {
	Name        string `bun:"name"`
	LengthS     int64  `bun:"length_s"`
	WindowStart int64  `bun:"window_start"`
	Count       int64  `bun:"count"`
}

// Allow implements [ratelimit.Limiter].
func (l *Limiter) Allow(ctx context.Context, key string, windows []ratelimit.Window, now time.Time) (ratelimit.Decision, error) {
	if err := ratelimit.ValidateWindows(windows); err != nil {
		return ratelimit.Decision{}, err
	}
	var (
		values []string
		args   []any
	)
	for i, w := range windows {
		for _, v := range windows[:i] {
			if v.Name == w.Name && v.Length == w.Length {
				return ratelimit.Decision{}, fmt.Errorf("%w: window %s given twice", ratelimit.ErrInvalidWindow, w.Name)
			}
		}
		length := int64(w.Length / time.Second)
		start := floorDiv(now.Unix(), length) * length
		values = append(values, "(?, ?, ?, ?, 1)")
		args = append(args, key, w.Name, length, start)
	}
	undoArgs := []any{key}
	for _, w := range windows {
		undoArgs = append(undoArgs, w.Name, int64(w.Length/time.Second))
	}
	var rows []counted
	allowed := true
	// The write is rerunnable (it resets what it found and does nothing
	// outside tx), so on Postgres the counts of concurrent requests share
	// the group commit of the process's other writes instead of a
	// transaction each. It never fails for a request over its limit: that
	// request's counts are taken back in the same transaction, so a stream
	// of refused requests cannot break up the group (whose writes would
	// then all run again alone).
	err := l.db.WriteWith(ctx, func(ctx context.Context, tx bun.Tx) error {
		rows, allowed = rows[:0], true
		if err := tx.NewRaw(`INSERT INTO ratelimit_counters (limit_key, name, length_s, window_start, count)
			VALUES `+strings.Join(values, ", ")+`
			ON CONFLICT (limit_key, name, length_s) DO UPDATE SET
				count = CASE WHEN excluded.window_start > ratelimit_counters.window_start
					THEN 1 ELSE ratelimit_counters.count + 1 END,
				window_start = CASE WHEN excluded.window_start > ratelimit_counters.window_start
					THEN excluded.window_start ELSE ratelimit_counters.window_start END
			RETURNING name, length_s, window_start, count`, args...).Scan(ctx, &rows); err != nil {
			return err
		}
		for _, r := range rows {
			for _, w := range windows {
				if w.Name == r.Name && int64(w.Length/time.Second) == r.LengthS && r.Count > int64(w.Limit) {
					allowed = false
				}
			}
		}
		if allowed {
			return nil
		}
		// Over a limit: the request is not counted in any window.
		_, err := tx.NewRaw(`UPDATE ratelimit_counters SET count = count - 1
			WHERE limit_key = ? AND (`+strings.Repeat("(name = ? AND length_s = ?) OR ", len(windows)-1)+`(name = ? AND length_s = ?))`,
			undoArgs...).Exec(ctx)
		return err
	}, storage.WriteOptions{Rerunnable: true})
	if err != nil {
		return ratelimit.Decision{}, fmt.Errorf("dblimit: %w", err)
	}
	states := make([]ratelimit.WindowState, len(windows))
	for i, w := range windows {
		length := int64(w.Length / time.Second)
		for _, r := range rows {
			if r.Name != w.Name || r.LengthS != length {
				continue
			}
			used := r.Count
			if !allowed {
				used-- // rolled back
			}
			states[i] = ratelimit.WindowState{Window: w, Remaining: int(max(int64(w.Limit)-used, 0)),
				Reset: time.Unix(r.WindowStart+length, 0).UTC()}
		}
	}
	return ratelimit.NewDecision(allowed, states, now), nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
