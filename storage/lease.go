package storage

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// LeaseOptions configure [DB.Lease].
type LeaseOptions struct {
	// Check is how often the holder makes sure it still holds the lease
	// (its connection is alive) and a process without it tries to take it.
	// Default 1 s.
	Check time.Duration
	// Grace is how long a process waits after taking the lease before it
	// reports holding it: a predecessor that lost its connection learns so
	// at its next check, within Check, and stops before the new holder
	// starts. Default 2 × Check.
	Grace time.Duration
	// Logger receives "lease acquired" and "lease lost"; default none.
	Logger *zap.Logger
}

// Lease is a named lease held by at most one process on the database (its
// schema: the name is scoped as [DB.TryHold]'s) at a time, taken and kept in the background: on Postgres a session advisory
// lock on a connection of its own, which the holder checks every
// LeaseOptions.Check, and which the server releases when the holder's
// connection ends (a process killed with SIGKILL lets it go at once). A
// process that loses it (its connection failed) reports so at its next
// check; one that takes it reports holding it only after LeaseOptions.Grace.
// On SQLite, which one process opens, the lease is always held.
//
// Lease implements settleflow.SettlementLease.
type Lease struct {
	d    *DB
	name string
	opts LeaseOptions
	log  *zap.Logger

	term  atomic.Uint64 // 0: not held
	terms uint64        // terms handed out (under the loop)
	// checked is when the holder last found its connection alive, as
	// nanoseconds on the monotonic clock since base: a holding is trusted
	// for Grace after its last check, so a holder whose checks stall (a
	// frozen process, a database it cannot reach) stops by itself before
	// a successor can start.
	base    time.Time
	checked atomic.Int64
	expires bool // false on SQLite
	cancel  context.CancelFunc
	done    chan struct{}
	once    sync.Once
}

// leaseCheckHook, set by tests, runs before each check of a holding.
var leaseCheckHook func()

// Lease starts taking and keeping the lease name in the background, until
// Close. The name is shared by every process that competes for the lease.
func (d *DB) Lease(name string, opts LeaseOptions) *Lease {
	if opts.Check <= 0 {
		opts.Check = time.Second
	}
	if opts.Grace <= 0 {
		opts.Grace = 2 * opts.Check
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	l := &Lease{d: d, name: name, opts: opts, log: opts.Logger.With(zap.String("lease", name)), done: make(chan struct{}), base: time.Now()}
	if !d.postgres {
		l.term.Store(1)
		close(l.done)
		l.cancel = func() {}
		return l
	}
	l.expires = true
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	go l.loop(ctx)
	return l
}

// Term is 0 while this process does not hold the lease, and otherwise a
// number that is new each time this process takes it. A holding whose last
// successful check is older than LeaseOptions.Grace reads as 0 until the
// next one succeeds.
func (l *Lease) Term() uint64 {
	t := l.term.Load()
	if t != 0 && l.expires && time.Since(l.base)-time.Duration(l.checked.Load()) > l.opts.Grace {
		return 0
	}
	return t
}

// Held reports whether this process holds the lease now.
func (l *Lease) Held() bool { return l.Term() != 0 }

// Close gives the lease up (if held) and stops competing for it.
func (l *Lease) Close() {
	l.once.Do(func() {
		l.cancel()
		<-l.done
	})
}

func (l *Lease) loop(ctx context.Context) {
	defer close(l.done)
	t := time.NewTicker(l.opts.Check)
	defer t.Stop()
	for {
		conn := l.take(ctx)
		if conn != nil {
			l.hold(ctx, conn, t.C)
			conn.Close()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// take tries once to take the lock, on a connection of its own; it returns
// the connection holding it, or nil.
func (l *Lease) take(ctx context.Context) *sql.Conn {
	conn, err := l.d.bun.DB.Conn(ctx)
	if err != nil {
		if ctx.Err() == nil {
			l.log.Warn("lease: no connection to the database", zap.Error(err))
		}
		return nil
	}
	var ok bool
	if err := conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock("+lockKeySQL+")", l.name).Scan(&ok); err != nil || !ok {
		if err != nil && ctx.Err() == nil {
			l.log.Warn("lease: taking it failed", zap.Error(err))
		}
		conn.Close()
		return nil
	}
	// A holder cut off from the database without its connection closing
	// would keep the lock until TCP gives up (hours). The server ends the
	// session, and the lock with it, once no check has come for a few
	// check intervals (Postgres 14 and later).
	idle := 5 * l.opts.Check
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("SET idle_session_timeout = %d", idle.Milliseconds())); err != nil {
		l.log.Warn("lease: the server cannot end a vanished holder's session (idle_session_timeout needs Postgres 14); a holder cut off from the database keeps the lease until its connection times out", zap.Error(err))
	}
	return conn
}

// hold keeps the lease taken on conn: it reports holding it after the
// grace, checks the connection at every tick, and returns when the check
// fails (lease lost) or ctx ends (lease given up).
func (l *Lease) hold(ctx context.Context, conn *sql.Conn, tick <-chan time.Time) {
	taken := time.Now()
	l.log.Info("lease taken; held once the grace has passed", zap.Duration("grace", l.opts.Grace))
	defer func() {
		if l.term.Swap(0) != 0 {
			l.log.Warn("lease lost")
		}
	}()
	for {
		select {
		case <-ctx.Done():
			if l.term.Swap(0) != 0 {
				l.log.Info("lease given up")
			}
			unlock, cancel := context.WithTimeout(context.Background(), l.opts.Check)
			conn.ExecContext(unlock, "SELECT pg_advisory_unlock("+lockKeySQL+")", l.name) //nolint:errcheck // closing the connection ends it anyway
			cancel()
			return
		case <-tick:
		}
		if leaseCheckHook != nil {
			leaseCheckHook()
		}
		check, cancel := context.WithTimeout(ctx, l.opts.Check)
		err := conn.PingContext(check)
		if err == nil {
			_, err = conn.ExecContext(check, "SELECT 1")
		}
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				l.log.Warn("lease: its connection failed; no longer held", zap.Error(err))
			}
			return
		}
		l.checked.Store(int64(time.Since(l.base)))
		if l.term.Load() == 0 && time.Since(taken) >= l.opts.Grace {
			l.terms++
			l.term.Store(l.terms)
			l.log.Info("lease held", zap.Uint64("term", l.terms))
		}
	}
}
