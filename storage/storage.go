// Package storage owns a settleflow database: the one handle through which
// every package that keeps state there (the workflow store in
// storage/bunstore, API keys in apikey, webhooks in webhook, and whatever
// comes later) reads and writes.
//
// A [DB] is built once, by storage/sqlite.OpenDB or storage/postgres (or
// [New] on a *bun.DB), and shared. It gives every package the same
// conventions:
//
//   - Writes go through [DB.Write]. On SQLite, which allows one writer at a
//     time, one goroutine merges the writes that arrive together into one
//     transaction, each caller's work inside its own savepoint (a failing
//     caller rolls back only its own work), so they share one commit and,
//     under synchronous=FULL, one fsync; no caller of this process ever
//     meets SQLITE_BUSY from another. On Postgres the writes declared
//     rerunnable ([WriteOptions.Rerunnable], the workflow store's) are
//     merged the same way but without savepoints, which cost a round trip
//     each there: if one fails, the group is rolled back and each of its
//     writes runs again alone. Other writes on Postgres are each their own
//     transaction.
//   - Migrations run through [DB.Migrate]: one runner, with one lock policy
//     per dialect (an advisory lock on Postgres, a file lock beside the
//     database on SQLite), each lock ending with the process that holds it.
//   - Times are stored as Unix microseconds in UTC ([Micros], [FromMicros]).
//   - Hot statements are prepared once, in one cache ([DB.Stmt], [DB.Exec]).
//
// Reads need no coordination: [DB.Bun] returns the bun handle for queries.
package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/migrate"

	"github.com/settleflow/settleflow/internal/sqlstmt"
)

// DB is a settleflow database and its single writer. Safe for concurrent use.
type DB struct {
	bun      *bun.DB
	postgres bool
	stmts    *sqlstmt.Cache
	lock     func(ctx context.Context) (unlock func(), err error)
	closers  []io.Closer

	// wmu makes the writer the process's only SQLite writer: the group
	// committer holds it for each transaction, and so do migrations. On
	// Postgres each group committer holds it shared for each transaction,
	// and Locked and Close exclusively.
	wmu    sync.RWMutex
	writes chan *writeRequest
	// sendMu orders sends on writes before Close: a write is queued only
	// while the DB is open, so the writer answers every queued write.
	sendMu    sync.RWMutex
	isClosed  bool
	closeOnce sync.Once
	closed    chan struct{}
	commits   atomic.Uint64
	onCommit  func() // tests: after each commit, before the callers learn of it
	closeErr  error
	closeDone chan struct{}

	// wpool holds the connections Postgres writes run on (nil on SQLite).
	wpool *writeConns
}

// Options configure [New].
type Options struct {
	// MigrationLock, if set, replaces the dialect's lock around migrations
	// (see [DB.Migrate]); it returns the function that releases it.
	MigrationLock func(ctx context.Context) (unlock func(), err error)
	// Closers are closed, in order, after the database by [DB.Close] (a
	// lock file held for the handle's lifetime, for instance).
	Closers []io.Closer
}

// ErrClosed is returned by a write on a closed DB.
var ErrClosed = errors.New("storage: database closed")

// New takes ownership of db, which must be SQLite (opened with
// storage/sqlite.OpenDB's settings, which call New) or Postgres. Close the
// DB, not db, when done.
func New(db *bun.DB, opts Options) (*DB, error) {
	d := &DB{bun: db, lock: opts.MigrationLock, closers: opts.Closers, closed: make(chan struct{}), closeDone: make(chan struct{})}
	switch db.Dialect().Name() {
	case dialect.SQLite:
		d.writes = make(chan *writeRequest, 256)
		go d.groupCommit()
	case dialect.PG:
		d.postgres = true
		if d.lock == nil {
			d.lock = advisoryLock(db.DB)
		}
		d.writes = make(chan *writeRequest, 256)
		d.wpool = newWriteConns(db)
		for range pgCommitters {
			go d.groupCommit()
		}
	default:
		return nil, fmt.Errorf("storage: unsupported dialect %s", db.Dialect().Name())
	}
	d.stmts = sqlstmt.New(db.DB, d.postgres)
	return d, nil
}

// Bun returns the bun handle, for reads. Writes go through [DB.Write].
func (d *DB) Bun() *bun.DB { return d.bun }

// Postgres reports whether the database is Postgres (otherwise SQLite).
func (d *DB) Postgres() bool { return d.postgres }

// Commits returns how many write transactions this DB has committed: one
// per group of merged writes, so fewer than the writes.
func (d *DB) Commits() uint64 { return d.commits.Load() }

// Queued returns how many writes wait for the writer, not yet taken into a
// transaction (on Postgres only rerunnable writes queue).
func (d *DB) Queued() int { return len(d.writes) }

// Close stops the writer (writes queued and not begun fail with ErrClosed;
// a group being committed finishes), closes every prepared statement and the
// database, then the Options' closers. It is safe to call more than once.
func (d *DB) Close() error {
	d.closeOnce.Do(func() {
		d.sendMu.Lock()
		d.isClosed = true
		close(d.closed)
		d.sendMu.Unlock()
		d.wmu.Lock() // wait for a group commit in progress
		if d.wpool != nil {
			d.wpool.close()
		}
		d.stmts.Close()
		err := d.bun.Close()
		d.wmu.Unlock()
		for _, c := range d.closers {
			if cerr := c.Close(); err == nil {
				err = cerr
			}
		}
		d.closeErr = err
		close(d.closeDone)
	})
	<-d.closeDone
	return d.closeErr
}

// Stmt returns the prepared statement for query, written with ? placeholders
// (numbered for Postgres), preparing it on first use.
func (d *DB) Stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	st, err := d.stmts.Stmt(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	return st, nil
}

// Exec runs the prepared statement for query, inside tx if tx is not nil.
func (d *DB) Exec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	return d.stmts.Exec(ctx, tx, query, args...)
}

// Write runs fn in a write transaction and returns once it has committed
// or failed; fn must do all its work through tx.
//
// On Postgres it is fn's own transaction under ctx (see [WriteOptions] for
// the writes that are merged there too). On SQLite, fn joins the group
// commit: the writes that arrive together share one transaction, each
// inside its own savepoint, so an error from fn rolls back only fn's work.
// ctx decides whether fn runs at all; once it runs, its statements get ctx
// without cancellation (the transaction is everyone's, and a write is
// short). fn may run on another goroutine and must not call Write itself.
func (d *DB) Write(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error) error {
	return d.WriteWith(ctx, fn, WriteOptions{})
}

// WriteThen is [DB.Write] that also runs committed, if not nil, once fn's
// work has committed. On SQLite committed runs on the writer goroutine, in
// commit order, before the caller learns the outcome and before the next
// group begins, so what it does (updating a cache, say) cannot be overtaken
// by a later write.
func (d *DB) WriteThen(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error, committed func()) error {
	return d.WriteWith(ctx, fn, WriteOptions{Committed: committed})
}

// WriteOptions refine a write ([DB.WriteWith]).
type WriteOptions struct {
	// Committed, if not nil, runs once the write has committed, as for
	// [DB.WriteThen].
	Committed func()
	// Rerunnable declares that fn may run more than once: after it
	// returned nil, its work may be rolled back (another write of its
	// group failed) and fn run again from the start in another
	// transaction. fn must then report only what its last run found
	// (resetting its outputs as it starts) and have no effect outside tx.
	//
	// On Postgres, rerunnable writes that arrive together share one
	// transaction with no savepoint each (a savepoint and its release
	// cost two round trips there; a group's own BEGIN and COMMIT are
	// shared by all): if any of them fails, the whole transaction is
	// rolled back and each write of the group runs again alone, in its
	// own transaction, so each caller learns its own outcome and nothing
	// of a failed write is ever committed. A write that is not rerunnable
	// stays its own transaction on Postgres. On SQLite the option changes
	// nothing: every write joins the group in its own savepoint.
	Rerunnable bool
	// Alone (Postgres, [DB.WriteStatement] only) runs the statement as a
	// transaction of its own rather than in the group: for a write whose
	// latency bounds its caller's throughput (a create, whose caller
	// waits: the stages' writes grow into groups meanwhile), or that holds
	// a lock every process contends for until its commit (a group would
	// hold it while its other writes run).
	Alone bool
}

// WriteStatement runs one statement, query (written as for [DB.Stmt]), as a
// rerunnable write ([WriteOptions.Rerunnable]; it joins the group commit
// with opts). rows, if not nil, reads the rows the statement returns
// (RETURNING): it may be called again, for a rerun, and must then replace
// what it read before; it must not fail once the statement has run (scan,
// do not decode). The write has committed if and only if WriteStatement
// returns nil.
//
// With opts.Alone, on Postgres, the statement runs on its own instead,
// outside any transaction, so that it is its own transaction: one round
// trip with no BEGIN or COMMIT, and no wait for the group's other writes
// (the server still shares one WAL flush among the commits that wait for
// it together); only opts.Committed applies then.
func (d *DB) WriteStatement(ctx context.Context, query string, args []any, rows func(*sql.Rows) error, opts WriteOptions) error {
	if !d.postgres || !opts.Alone {
		opts.Rerunnable = true
		return d.WriteWith(ctx, func(ctx context.Context, tx bun.Tx) error {
			st, err := d.stmts.In(ctx, tx.Tx, query)
			if err != nil {
				return err
			}
			return runStatement(ctx, st, args, rows)
		}, opts)
	}
	d.sendMu.RLock()
	closed := d.isClosed
	d.sendMu.RUnlock()
	if closed {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	wc, err := d.wpool.get(ctx)
	if err != nil {
		return err
	}
	// As in a group: ctx decides whether the write runs, not how it ends.
	ctx = context.WithoutCancel(ctx)
	st, err := wc.stmt(ctx, query)
	if err == nil {
		err = runStatement(ctx, st, args, rows)
	}
	d.wpool.put(wc, err)
	if err != nil {
		return err
	}
	d.commits.Add(1)
	if opts.Committed != nil {
		opts.Committed()
	}
	return nil
}

// runStatement runs st, handing its rows to rows, and reads the server's
// answer to its end: on Postgres an error from the implicit commit comes
// after the rows.
func runStatement(ctx context.Context, st *sql.Stmt, args []any, rows func(*sql.Rows) error) error {
	if rows == nil {
		_, err := st.ExecContext(ctx, args...)
		return err
	}
	r, err := st.QueryContext(ctx, args...)
	if err != nil {
		return err
	}
	err = rows(r)
	if cerr := r.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = r.Err()
	}
	return err
}

// WriteWith is [DB.Write] with options.
func (d *DB) WriteWith(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error, opts WriteOptions) error {
	committed := opts.Committed
	if d.postgres && !opts.Rerunnable {
		d.sendMu.RLock()
		closed := d.isClosed
		d.sendMu.RUnlock()
		if closed {
			return ErrClosed
		}
		tx, err := d.bun.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if err := fn(ctx, tx); err != nil {
			tx.Rollback() //nolint:errcheck // fn's error is the one to report
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		d.commits.Add(1)
		if committed != nil {
			committed()
		}
		return nil
	}
	req := &writeRequest{ctx: ctx, fn: fn, committed: committed, done: make(chan error, 1)}
	d.sendMu.RLock()
	if d.isClosed {
		d.sendMu.RUnlock()
		return ErrClosed
	}
	select {
	case d.writes <- req:
	case <-ctx.Done():
		d.sendMu.RUnlock()
		return ctx.Err()
	}
	d.sendMu.RUnlock()
	// Once queued, wait for the verdict: the caller must know whether its
	// write committed.
	return <-req.done
}

type writeRequest struct {
	ctx       context.Context
	fn        func(ctx context.Context, tx bun.Tx) error
	committed func() // may be nil
	done      chan error
}

// maxGroup bounds how many writes share one transaction.
const maxGroup = 64

// pgCommitters is how many group committers a Postgres DB runs. Each
// takes the writes queued when it is free; with several, a group can run
// while another waits for its commit, but the groups are smaller and the
// writes take more statements: measured end to end (go run ./cmd/bench
// -suite postgres), 2 and 3 committers gave 0.45 and 0.70 round trips per
// workflow against 0.17 with one, and 15-25 % fewer workflows per second.
const pgCommitters = 1

// groupCommit is a writer: it takes the writes queued at once (up to
// maxGroup), commits them together, and answers each.
func (d *DB) groupCommit() {
	lock, unlock := d.wmu.Lock, d.wmu.Unlock
	if d.postgres {
		lock, unlock = d.wmu.RLock, d.wmu.RUnlock
	}
	group := make([]*writeRequest, 0, maxGroup)
	for {
		select {
		case <-d.closed:
			for {
				select {
				case r := <-d.writes:
					r.done <- ErrClosed
				default:
					return
				}
			}
		case first := <-d.writes:
			group = append(group[:0], first)
			// Take the lock before gathering: the writes that queue while
			// a migration (or Locked) holds it join this group.
			lock()
		drain:
			for len(group) < maxGroup {
				select {
				case r := <-d.writes:
					group = append(group, r)
				default:
					break drain
				}
			}
			var errs []error
			select {
			case <-d.closed:
				errs = make([]error, len(group))
				for i := range errs {
					errs[i] = ErrClosed
				}
			default:
				if d.postgres {
					errs = d.commitGroupPG(group)
				} else {
					errs = d.commitGroup(group)
				}
			}
			unlock()
			for i, r := range group {
				r.done <- errs[i]
			}
		}
	}
}

func (d *DB) commitGroup(group []*writeRequest) []error {
	errs := make([]error, len(group))
	fail := func(err error) []error {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	// The transaction is everyone's: no single caller's context may end it.
	ctx := context.Background()
	tx, err := d.bun.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	if len(group) == 1 {
		r := group[0]
		if err := r.ctx.Err(); err != nil {
			tx.Rollback() //nolint:errcheck // nothing was done
			return fail(err)
		}
		if err := r.fn(context.WithoutCancel(r.ctx), tx); err != nil {
			tx.Rollback() //nolint:errcheck // fn's error is the one to report
			return fail(err)
		}
		errs, _ = d.commit(tx, group, errs)
		return errs
	}
	for i, r := range group {
		if err := r.ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		if _, err := tx.Tx.ExecContext(ctx, "SAVEPOINT sf_write"); err != nil {
			tx.Rollback() //nolint:errcheck // the group fails as one
			return fail(err)
		}
		if errs[i] = r.fn(context.WithoutCancel(r.ctx), tx); errs[i] != nil {
			if _, err := tx.Tx.ExecContext(ctx, "ROLLBACK TO sf_write"); err != nil {
				tx.Rollback() //nolint:errcheck // the group fails as one
				return fail(err)
			}
		}
		if _, err := tx.Tx.ExecContext(ctx, "RELEASE sf_write"); err != nil {
			tx.Rollback() //nolint:errcheck // the group fails as one
			return fail(err)
		}
	}
	errs, _ = d.commit(tx, group, errs)
	return errs
}

// commitGroupPG commits a group of rerunnable writes on Postgres in one
// transaction, without savepoints, in the order they arrived. A write
// whose context ended before its turn is answered so and does nothing. If a write fails, the transaction is
// rolled back, that write is answered with its error and every other one
// runs again alone: a failure costs the group its sharing, never a write
// its outcome.
func (d *DB) commitGroupPG(group []*writeRequest) []error {
	errs := make([]error, len(group))
	if len(group) == 1 {
		errs[0] = d.commitAlone(group[0])
		return errs
	}
	wc, tx, err := d.writerTx()
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	ended := make([]bool, len(group)) // answered with their context's error
	for i, r := range group {
		if errs[i] = r.ctx.Err(); errs[i] != nil {
			ended[i] = true
			continue
		}
		if errs[i] = r.fn(context.WithoutCancel(r.ctx), tx); errs[i] != nil {
			d.wpool.put(wc, tx.Rollback())
			for j := range group {
				if j != i && !ended[j] {
					errs[j] = d.commitAlone(group[j])
				}
			}
			return errs
		}
	}
	errs, err = d.commit(tx, group, errs)
	d.wpool.put(wc, err)
	return errs
}

// commitAlone runs r in a transaction of its own (Postgres).
func (d *DB) commitAlone(r *writeRequest) error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	wc, tx, err := d.writerTx()
	if err != nil {
		return err
	}
	if err := r.fn(context.WithoutCancel(r.ctx), tx); err != nil {
		d.wpool.put(wc, tx.Rollback())
		return err
	}
	errs, err := d.commit(tx, []*writeRequest{r}, []error{nil})
	d.wpool.put(wc, err)
	return errs[0]
}

// writerTx begins a transaction on one of the write connections (see
// writeConns), on another if that one cannot begin (it broke).
func (d *DB) writerTx() (*writeConn, bun.Tx, error) {
	ctx := context.Background()
	for attempt := 0; ; attempt++ {
		wc, err := d.wpool.get(ctx)
		if err != nil {
			return nil, bun.Tx{}, err
		}
		tx, err := wc.conn.BeginTx(ctx, nil)
		if err == nil {
			return wc, tx, nil
		}
		d.wpool.put(wc, err)
		if attempt > 0 || serverError(err) {
			return nil, bun.Tx{}, err
		}
	}
}

// commit commits tx for group and runs the committed callbacks; it also
// returns the commit's own error.
func (d *DB) commit(tx bun.Tx, group []*writeRequest, errs []error) ([]error, error) {
	if err := tx.Commit(); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs, err
	}
	d.commits.Add(1)
	if d.onCommit != nil {
		d.onCommit()
	}
	for i, r := range group {
		if errs[i] == nil && r.committed != nil {
			r.committed()
		}
	}
	return errs, nil
}

// Migrations is a set of migrations for [DB.Migrate].
type Migrations struct {
	// Table records which migrations ran. Each package keeps its own, for
	// example "settleflow_migrations" or "webhook_migrations". (bun's
	// locks table beside it, Table without its final "s" + "_locks", is
	// created but never used: the lock is the dialect's, see Migrate.)
	Table string
	// Files holds the migrations as bun's migrate package reads them:
	// NAME.up.sql / NAME.down.sql (".tx." for one transaction), NAME a
	// timestamp followed by a description; "--bun:split" separates
	// statements. A ".tx." migration is recorded in its own transaction, so
	// a process killed while migrating never leaves it half done; one
	// without ".tx." can be.
	Files fs.FS
	// Until, if set, applies only the migrations whose names sort at or
	// before it (tests build databases as older releases left them).
	Until string
	// TemplateData, if set, renders each migration as a text/template.
	TemplateData any
}

// Migrate applies the migrations of ms not yet recorded in ms.Table. Every
// Migrate, in every process, holds the same lock while it runs: on Postgres
// a session advisory lock, on SQLite an exclusive file lock beside the
// database (and this DB's write lock), so two processes never migrate at
// once and a process killed while migrating leaves no lock behind.
func (d *DB) Migrate(ctx context.Context, ms Migrations) error {
	all := migrate.NewMigrations()
	if err := all.Discover(ms.Files); err != nil {
		return fmt.Errorf("storage: %s: %w", ms.Table, err)
	}
	set := all
	if ms.Until != "" {
		set = migrate.NewMigrations()
		for _, m := range all.Sorted() {
			if m.Name <= ms.Until {
				set.Add(m)
			}
		}
	}
	opts := []migrate.MigratorOption{
		migrate.WithTableName(ms.Table),
		migrate.WithLocksTableName(strings.TrimSuffix(ms.Table, "s") + "_locks"),
		// A migration is recorded in its own transaction, after its
		// statements: a process killed at any point leaves it either
		// applied and recorded or neither (bun's own marking, before or
		// after the transaction, leaves one without the other).
		migrate.AfterMigration(func(ctx context.Context, db bun.IConn, mig *migrate.Migration) error {
			idb, ok := db.(bun.IDB)
			if !ok {
				return fmt.Errorf("migration %s: cannot record it on a %T", mig.Name, db)
			}
			_, err := idb.NewInsert().Model(mig).ModelTableExpr(ms.Table).Exec(ctx)
			return err
		}),
	}
	if ms.TemplateData != nil {
		opts = append(opts, migrate.WithTemplateData(ms.TemplateData))
	}
	m := migrate.NewMigrator(d.bun, set, opts...)
	if !d.postgres {
		d.wmu.Lock()
		defer d.wmu.Unlock()
	}
	if d.lock != nil {
		unlock, err := d.lock(ctx)
		if err != nil {
			return fmt.Errorf("storage: %s: lock: %w", ms.Table, err)
		}
		defer unlock()
	}
	if err := m.Init(ctx); err != nil {
		return fmt.Errorf("storage: %s: %w", ms.Table, err)
	}
	// Migrator.Migrate's loop, without its marking: each migration's Up
	// records it in its transaction (the hook above).
	status, err := m.MigrationsWithStatus(ctx)
	if err != nil {
		return fmt.Errorf("storage: %s: %w", ms.Table, err)
	}
	group := status.LastGroupID() + 1
	for _, mig := range status.Unapplied() {
		if mig.Up == nil {
			continue
		}
		mig.GroupID = group
		if err := mig.Up(ctx, m, &mig); err != nil {
			return fmt.Errorf("storage: %s: %s: up: %w", ms.Table, mig.Name, err)
		}
	}
	return nil
}

// Locked runs fn while holding this DB's write lock, so that no write of
// the group committer runs beside it (schema checks in tests, a VACUUM):
// on SQLite no write of this process at all, on Postgres no rerunnable one
// (the others are transactions of their own).
func (d *DB) Locked(fn func() error) error {
	d.wmu.Lock()
	defer d.wmu.Unlock()
	return fn()
}

// TryHold takes, without waiting, a lock named name for as long as the
// caller holds it (until release, or the process's end): on Postgres a
// session advisory lock on a connection of its own, so that of several
// processes on one database only one holds it, and a process that dies lets
// it go. It reports false if another process holds it. On SQLite, whose
// database one process opens for writing, it always succeeds.
//
// An advisory lock belongs to the whole Postgres database, so the lock is
// named after the schema too (see [lockKeySQL]): deployments in schemas of
// their own on one database never wait for each other's locks.
func (d *DB) TryHold(ctx context.Context, name string) (release func(), ok bool, err error) {
	if !d.postgres {
		return func() {}, true, nil
	}
	conn, err := d.bun.DB.Conn(ctx)
	if err != nil {
		return nil, false, err
	}
	if err := conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock("+lockKeySQL+")", name).Scan(&ok); err != nil || !ok {
		conn.Close()
		return nil, false, err
	}
	return func() {
		conn.ExecContext(context.Background(), "SELECT pg_advisory_unlock("+lockKeySQL+")", name) //nolint:errcheck // closing ends it anyway
		conn.Close()
	}, true, nil
}

// lockKeySQL is the advisory lock key of the name $1 on Postgres ([DB.TryHold],
// [DB.Lease]): the name and the schema the connection's tables are in.
const lockKeySQL = "hashtext($1 || ' in schema ' || current_schema())"

// migrationLockKey is the advisory lock every settleflow migration holds.
const migrationLockKey = 0x5e771ef10c0 // "settleflow", roughly

// advisoryLock serializes migrations across processes with a Postgres
// session advisory lock, held on a connection of its own: if the migrating
// process dies, its connection closes and the lock goes with it.
func advisoryLock(db *sql.DB) func(ctx context.Context) (func(), error) {
	return func(ctx context.Context) (func(), error) {
		conn, err := db.Conn(ctx)
		if err != nil {
			return nil, err
		}
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", int64(migrationLockKey)); err != nil {
			conn.Close()
			return nil, err
		}
		return func() {
			conn.ExecContext(context.Background(), "SELECT pg_advisory_unlock($1)", int64(migrationLockKey)) //nolint:errcheck // closing ends it anyway
			conn.Close()
		}, nil
	}
}

// Micros is how every package stores a time: Unix microseconds, UTC.
func Micros(t time.Time) int64 { return t.UnixMicro() }

// FromMicros is the time stored as us by [Micros], in UTC.
func FromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// NullMicros is [Micros] of *t, or nil (SQL NULL) if t is nil.
func NullMicros(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMicro()
}

// FromNullMicros is the time stored by [NullMicros], nil for NULL.
func FromNullMicros(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := FromMicros(n.Int64)
	return &t
}
