// Package dblimit is a ratelimit.Limiter kept in the database, so that every
// instance of the server on one database (Postgres, see README "Running
// several instances") shares each key's windows and the rate-limit headers
// stay truthful across instances.
//
// On Postgres the requests that reach one Limiter together are decided by
// one statement (the function ratelimit_allow, created by the migrations),
// which is a transaction of its own: it counts each request in every
// window, in arrival order, and takes back the counts of a request over a
// limit, so a refused request consumes nothing. The rows of the keys it
// counts are locked for that statement and its commit only (always in one
// order, so batches of several instances never deadlock), and instances
// racing on one key are serialized by the database: no window ever admits
// more than its limit, however many instances ask at once. (Counting within
// the process's group commit instead, as the first version did, held a hot
// key's row for as long as the whole group of workflow writes ran: the other
// instances' requests for that key waited for it, and their own groups
// behind them.)
//
// On SQLite, which one process writes, each request is one write through
// the database's group commit.
//
// When the database cannot be reached, Allow returns the error and the API
// answers 500 api_error (the request is neither admitted nor counted): the
// server could do nothing for that request anyway, since the workflows live
// in the same database. There is no fallback to a per-instance limiter,
// which would silently multiply every limit by the number of instances.
package dblimit

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/uptrace/bun"

	"github.com/settleflow/settleflow/ratelimit"
	"github.com/settleflow/settleflow/storage"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// MaxKeyLength is the longest key, in characters, the counters hold.
const MaxKeyLength = 200

// ErrInvalidKey is returned by Allow for a key the counters cannot hold:
// longer than MaxKeyLength characters, not valid UTF-8, or containing a NUL
// byte. Nothing is counted. (A key built from request data, such as a
// client address taken from a header, can be any of these; it is refused
// before it reaches the database, where it would fail the statement that
// decides the other requests waiting with it.)
var ErrInvalidKey = errors.New("dblimit: invalid key")

// Limiter is a [ratelimit.Limiter] on a database.
type Limiter struct {
	db *storage.DB
	pg *batcher // Postgres only
}

var _ ratelimit.Limiter = (*Limiter)(nil)

// New returns a Limiter on db after creating or upgrading its table
// (ratelimit_counters, migrations recorded in ratelimit_migrations).
func New(ctx context.Context, db *storage.DB) (*Limiter, error) {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx, storage.Migrations{Table: "ratelimit_migrations", Files: sub,
		TemplateData: map[string]any{"Postgres": db.Postgres()}}); err != nil {
		return nil, fmt.Errorf("dblimit: %w", err)
	}
	l := &Limiter{db: db}
	if db.Postgres() {
		l.pg = &batcher{db: db}
	}
	return l, nil
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
	if !utf8.ValidString(key) || strings.IndexByte(key, 0) >= 0 || utf8.RuneCountInString(key) > MaxKeyLength {
		return ratelimit.Decision{}, fmt.Errorf("%w: %d bytes, at most %d characters of UTF-8 without NUL", ErrInvalidKey, len(key), MaxKeyLength)
	}
	for i, w := range windows {
		for _, v := range windows[:i] {
			if v.Name == w.Name && v.Length == w.Length {
				return ratelimit.Decision{}, fmt.Errorf("%w: window %s given twice", ratelimit.ErrInvalidWindow, w.Name)
			}
		}
	}
	var (
		rows    []counted
		allowed bool
		err     error
	)
	if l.pg != nil {
		rows, allowed, err = l.pg.allow(ctx, key, windows, now)
	} else {
		rows, allowed, err = l.allowSQLite(ctx, key, windows, now)
	}
	if err != nil {
		return ratelimit.Decision{}, fmt.Errorf("dblimit: %w", err)
	}
	states := make([]ratelimit.WindowState, len(windows))
	for i, w := range windows {
		length := windowLength(w)
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

// allowSQLite counts one request as one write through the database's group
// commit (SQLite: one process writes).
func (l *Limiter) allowSQLite(ctx context.Context, key string, windows []ratelimit.Window, now time.Time) ([]counted, bool, error) {
	var (
		values []string
		args   []any
	)
	for _, w := range windows {
		length := windowLength(w)
		values = append(values, "(?, ?, ?, ?, 1)")
		args = append(args, key, w.Name, length, windowStart(now, length))
	}
	undoArgs := []any{key}
	for _, w := range windows {
		undoArgs = append(undoArgs, w.Name, windowLength(w))
	}
	var rows []counted
	allowed := true
	// The write is rerunnable (it resets what it found and does nothing
	// outside tx). It never fails for a request over its limit: that
	// request's counts are taken back in the same transaction, so a stream
	// of refused requests cannot break up the group.
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
				if w.Name == r.Name && windowLength(w) == r.LengthS && r.Count > int64(w.Limit) {
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
	return rows, allowed, err
}

func windowLength(w ratelimit.Window) int64 { return int64(w.Length / time.Second) }

func windowStart(now time.Time, length int64) int64 {
	return floorDiv(now.Unix(), length) * length
}

// maxBatch bounds the requests one ratelimit_allow statement decides.
const maxBatch = 256

// batcher decides the requests of a Limiter on Postgres: those that arrive
// while a statement runs wait and are decided together by the next one. A
// goroutine runs the statements while requests keep coming and ends when
// none waits.
type batcher struct {
	db *storage.DB

	mu      sync.Mutex
	queue   []*pgRequest
	running bool
}

type pgRequest struct {
	ctx     context.Context
	key     string
	windows []ratelimit.Window
	now     time.Time
	done    chan struct{}
	// Set before done is closed.
	rows    []counted
	allowed bool
	err     error
}

func (b *batcher) allow(ctx context.Context, key string, windows []ratelimit.Window, now time.Time) ([]counted, bool, error) {
	r := &pgRequest{ctx: ctx, key: key, windows: windows, now: now, done: make(chan struct{})}
	b.mu.Lock()
	b.queue = append(b.queue, r)
	if !b.running {
		b.running = true
		go b.run()
	}
	b.mu.Unlock()
	// Once queued, wait for the verdict: a request that was counted must
	// not be answered as if it had not been.
	<-r.done
	return r.rows, r.allowed, r.err
}

// run decides the queued requests, a batch at a time, until none is left.
func (b *batcher) run() {
	for {
		b.mu.Lock()
		n := min(len(b.queue), maxBatch)
		if n == 0 {
			b.running = false
			b.mu.Unlock()
			return
		}
		batch := b.queue[:n:n]
		b.queue = b.queue[n:]
		if len(b.queue) == 0 {
			b.queue = nil
		}
		b.mu.Unlock()
		b.decide(batch)
	}
}

type batchRequest struct {
	Key     string        `json:"k"`
	Windows []batchWindow `json:"w"`
}

type batchWindow struct {
	Name   string `json:"n"`
	Length int64  `json:"l"`
	Start  int64  `json:"s"`
	Limit  int    `json:"m"`
}

const allowSQL = `SELECT r_req, r_window, r_window_start, r_count, r_allowed FROM ratelimit_allow(?::jsonb)`

// decide runs one statement for batch and answers each request. A request
// whose context ended before the statement is answered with its error and
// not counted.
func (b *batcher) decide(batch []*pgRequest) {
	var (
		reqs []batchRequest
		live []*pgRequest
	)
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.err = err
			close(r.done)
			continue
		}
		q := batchRequest{Key: r.key, Windows: make([]batchWindow, len(r.windows))}
		for i, w := range r.windows {
			length := windowLength(w)
			q.Windows[i] = batchWindow{Name: w.Name, Length: length, Start: windowStart(r.now, length), Limit: w.Limit}
		}
		reqs = append(reqs, q)
		live = append(live, r)
	}
	if len(live) == 0 {
		return
	}
	doc, err := json.Marshal(reqs)
	if err == nil {
		err = b.db.WriteStatement(context.Background(), allowSQL, []any{string(doc)}, func(rows *sql.Rows) error {
			for _, r := range live {
				r.rows, r.allowed = r.rows[:0], false
			}
			for rows.Next() {
				var (
					req, win int
					c        counted
					allowed  bool
				)
				if err := rows.Scan(&req, &win, &c.WindowStart, &c.Count, &allowed); err != nil {
					return err
				}
				if req < 0 || req >= len(live) || win < 0 || win >= len(live[req].windows) {
					return fmt.Errorf("ratelimit_allow answered request %d window %d of %d requests", req, win, len(live))
				}
				r := live[req]
				w := r.windows[win]
				c.Name, c.LengthS = w.Name, windowLength(w)
				r.rows = append(r.rows, c)
				r.allowed = allowed
			}
			return rows.Err()
		}, storage.WriteOptions{Alone: true})
	}
	for _, r := range live {
		r.err = err
		if err == nil && len(r.rows) != len(r.windows) {
			r.err = fmt.Errorf("ratelimit_allow answered %d windows of %d", len(r.rows), len(r.windows))
		}
		if r.err != nil {
			r.rows, r.allowed = nil, false
		}
		close(r.done)
	}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
