package dblimit_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

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
