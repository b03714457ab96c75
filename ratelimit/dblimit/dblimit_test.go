package dblimit_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/settleflow/settleflow/internal/pgtest"
	"github.com/settleflow/settleflow/ratelimit"
	"github.com/settleflow/settleflow/ratelimit/dblimit"
	"github.com/settleflow/settleflow/ratelimit/limitertest"
	"github.com/settleflow/settleflow/storage"
	"github.com/settleflow/settleflow/storage/sqlite"
)

// runConformance runs the Limiter suite; each request is a durable write,
// so its concurrency test takes 1,600 requests, not 16,000.
func runConformance(t *testing.T, newLimiter func(*testing.T) ratelimit.Limiter) {
	limitertest.Run(t, newLimiter, limitertest.Options{Goroutines: 16, PerGoroutine: 100})
}

func newOn(t *testing.T, db *storage.DB) *dblimit.Limiter {
	t.Helper()
	l, err := dblimit.New(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestConformanceSQLite(t *testing.T) {
	runConformance(t, func(t *testing.T) ratelimit.Limiter {
		db, err := sqlite.OpenDB(filepath.Join(t.TempDir(), "limits.db"), sqlite.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return newOn(t, db)
	})
}

func TestConformancePostgres(t *testing.T) {
	pg := pgtest.Connect(t)
	runConformance(t, func(t *testing.T) ratelimit.Limiter {
		return newOn(t, pg.Storage(t, "dblimit_test")())
	})
}

// roundRobin sends each request to the next of several limiters: three
// server instances, each with its own connection pool on one database.
type roundRobin struct {
	ls []ratelimit.Limiter
	n  atomic.Int64
}

func (r *roundRobin) Allow(ctx context.Context, key string, ws []ratelimit.Window, now time.Time) (ratelimit.Decision, error) {
	return r.ls[int(r.n.Add(1))%len(r.ls)].Allow(ctx, key, ws, now)
}

// Three instances on one Postgres database share every window: the whole
// suite passes with its requests spread over them, so no window admits more
// than its limit and every admitted request sees a remaining count of its
// own, whichever instance answered.
func TestThreeInstancesShareTheLimit(t *testing.T) {
	pg := pgtest.Connect(t)
	runConformance(t, func(t *testing.T) ratelimit.Limiter {
		open := pg.Storage(t, "dblimit_shared")
		return &roundRobin{ls: []ratelimit.Limiter{newOn(t, open()), newOn(t, open()), newOn(t, open())}}
	})
}

// A count is a statement of its own, not a write in the group commit: it
// answers while a transaction of the group is held open, on the same
// instance and on another. (When counts joined the group, a hot key's row
// stayed locked for as long as the group's other writes ran, and the other
// instances' requests for that key waited for all of them.)
func TestCountsDoNotWaitForTheGroupCommit(t *testing.T) {
	pg := pgtest.Connect(t)
	open := pg.Storage(t, "dblimit_group")
	dbA, dbB := open(), open()
	la, lb := newOn(t, dbA), newOn(t, dbB)
	ctx := context.Background()
	ws := []ratelimit.Window{ratelimit.Minute(100), ratelimit.Day(1000)}
	now := time.Unix(1_800_000_000, 0)
	if d, err := la.Allow(ctx, "key_group", ws, now); err != nil || !d.Allowed {
		t.Fatalf("first request: %+v, %v", d, err)
	}

	// A group write on A that counts... nothing of the limiter's, and
	// holds its transaction open until released.
	hold, held := make(chan struct{}), make(chan struct{})
	groupDone := make(chan error, 1)
	go func() {
		groupDone <- dbA.WriteWith(ctx, func(ctx context.Context, tx bun.Tx) error {
			select {
			case <-held:
			default:
				close(held)
			}
			<-hold
			return nil
		}, storage.WriteOptions{Rerunnable: true})
	}()
	<-held
	defer func() {
		close(hold)
		if err := <-groupDone; err != nil {
			t.Errorf("group write: %v", err)
		}
	}()

	answered := make(chan error, 2)
	for i, l := range []*dblimit.Limiter{la, lb} {
		go func() {
			d, err := l.Allow(ctx, "key_group", ws, now)
			if err == nil && !d.Allowed {
				err = fmt.Errorf("instance %d: refused: %+v", i, d)
			}
			answered <- err
		}()
	}
	for range 2 {
		select {
		case err := <-answered:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a count waited for the group commit")
		}
	}
}

// The requests that arrive while a statement runs are decided together by
// the next one, in order, each with a remaining count of its own.
func TestRequestsWaitingAreDecidedInOneStatement(t *testing.T) {
	pg := pgtest.Connect(t)
	db := pg.Storage(t, "dblimit_batch")()
	l := newOn(t, db)
	ctx := context.Background()
	ws := []ratelimit.Window{ratelimit.Minute(15)}
	now := time.Unix(1_800_000_000, 0)
	if _, err := l.Allow(ctx, "key_batch", ws, now); err != nil { // creates the row
		t.Fatal(err)
	}

	// Another session locks the key's row: the next statement waits for it.
	lock, err := db.Bun().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.ExecContext(ctx, `SELECT count FROM ratelimit_counters WHERE limit_key = 'key_batch' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	const n = 20
	type answer struct {
		d   ratelimit.Decision
		err error
	}
	answers := make(chan answer, n+1)
	ask := func() {
		d, err := l.Allow(ctx, "key_batch", ws, now)
		answers <- answer{d, err}
	}
	// The batcher that decided the first request may still be winding
	// down (running, nothing queued): the check below would pass before the
	// next request is even queued, and the requests that follow could then
	// join the blocked statement's batch instead of waiting behind it.
	waitFor(t, func() bool { running, _ := l.Waiting(); return !running })
	go ask() // the first statement, blocked on the lock
	waitFor(t, func() bool { running, waiting := l.Waiting(); return running && waiting == 0 })
	before := db.Commits()
	for range n {
		go ask()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		running, waiting := l.Waiting()
		if waiting == n {
			break
		}
		if time.Now().After(deadline) {
			// Say what the blocked statement did, and let go of the row
			// so that the schema can be dropped.
			lock.Rollback() //nolint:errcheck // the test has failed already
			var early []string
			for len(answers) > 0 {
				a := <-answers
				early = append(early, fmt.Sprintf("%+v %v", a.d, a.err))
			}
			t.Fatalf("after 10 s, %d of %d requests wait behind the blocked statement (running %v); answered early: %q", waiting, n, running, early)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := lock.Rollback(); err != nil {
		t.Fatal(err)
	}
	remaining := map[int]bool{}
	admitted := 0
	for range n + 1 {
		a := <-answers
		if a.err != nil {
			t.Fatal(a.err)
		}
		if a.d.Allowed {
			admitted++
			if r := a.d.Windows[0].Remaining; remaining[r] {
				t.Errorf("remaining %d answered twice", r)
			} else {
				remaining[r] = true
			}
		}
	}
	// 15 per minute, one used before: 14 of the 21 admitted, remaining 13..0.
	if admitted != 14 || len(remaining) != 14 || !remaining[0] || !remaining[13] {
		t.Errorf("admitted %d, remaining counts %v", admitted, remaining)
	}
	if got := db.Commits() - before; got != 2 {
		t.Errorf("%d statements decided the blocked request and the %d that waited behind it, want 2", got, n)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A key the counters cannot hold is refused with ErrInvalidKey before it
// reaches the database, on either dialect, and counts nothing.
func TestInvalidKeyRefused(t *testing.T) {
	pg := pgtest.Connect(t)
	sqliteDB, err := sqlite.OpenDB(filepath.Join(t.TempDir(), "limits.db"), sqlite.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sqliteDB.Close() })
	ws := []ratelimit.Window{ratelimit.Minute(1)}
	now := time.Unix(1_800_000_000, 0)
	for name, db := range map[string]*storage.DB{"postgres": pg.Storage(t, "dblimit_keys")(), "sqlite": sqliteDB} {
		l := newOn(t, db)
		for _, key := range []string{strings.Repeat("k", dblimit.MaxKeyLength+1), "auth:\x00", "auth:\xff"} {
			if _, err := l.Allow(context.Background(), key, ws, now); !errors.Is(err, dblimit.ErrInvalidKey) {
				t.Errorf("%s: key %q: %v, want ErrInvalidKey", name, key, err)
			}
		}
		// The longest key is fine, and nothing above was counted.
		long := strings.Repeat("é", dblimit.MaxKeyLength)
		if d, err := l.Allow(context.Background(), long, ws, now); err != nil || !d.Allowed {
			t.Errorf("%s: longest key: %+v, %v", name, d, err)
		}
		var n int
		if err := db.Bun().QueryRowContext(context.Background(), `SELECT count(*) FROM ratelimit_counters`).Scan(&n); err != nil || n != 1 {
			t.Errorf("%s: %d counter rows (%v), want 1", name, n, err)
		}
	}
}
