// Package postgres is the Postgres Store of settleflow, for several engine
// processes sharing one database: bun's pgdriver and the queries of
// storage/bunstore, whose claims take rows with FOR UPDATE SKIP LOCKED.
package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/settleflow/settleflow/storage/bunstore"
)

// Open connects to the database at dsn (postgres://user:pass@host:port/db?
// sslmode=...), brings its schema up to date and returns the Store on it.
// Close the Store when done.
func Open(ctx context.Context, dsn string) (*bunstore.Store, error) {
	sqldb := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(dsn)))
	// database/sql keeps 2 idle connections by default: under concurrent
	// requests nearly every query would then dial and authenticate anew
	// (fetches through the API measured 5 times slower, p99 135–150 ms
	// instead of about 6 ms: BENCHMARKS.md). The number open stays
	// unbounded, as before: a bound could deadlock a transaction that
	// needs a second connection to prepare a statement.
	sqldb.SetMaxIdleConns(max(64, 8*runtime.GOMAXPROCS(0)))
	sqldb.SetConnMaxIdleTime(5 * time.Minute)
	if err := sqldb.PingContext(ctx); err != nil {
		sqldb.Close()
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	return OpenDB(ctx, bun.NewDB(sqldb, pgdialect.New()))
}

// OpenDB is Open on a database handle of the caller's (a pool configured
// its own way, a search_path). The Store closes db when it is closed.
func OpenDB(ctx context.Context, db *bun.DB) (*bunstore.Store, error) {
	s, err := bunstore.NewWithOptions(db, bunstore.Options{MigrationLock: MigrationLock(db.DB)})
	if err != nil {
		db.Close()
		return nil, err
	}
	if err := s.Migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// migrationLockKey is the advisory lock settleflow's migrations hold.
const migrationLockKey = 0x5e771ef10c0 // "settleflow", roughly

// MigrationLock serializes migrations across processes with a Postgres
// session advisory lock, held on a connection of its own: if the migrating
// process dies, its connection closes and the lock goes with it (bun's lock
// row would stay behind and stop every later start).
func MigrationLock(db *sql.DB) func(ctx context.Context) (func(), error) {
	return func(ctx context.Context) (func(), error) {
		conn, err := db.Conn(ctx)
		if err != nil {
			return nil, err
		}
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", int64(migrationLockKey)); err != nil {
			conn.Close()
			return nil, fmt.Errorf("postgres: migration lock: %w", err)
		}
		return func() {
			conn.ExecContext(context.Background(), "SELECT pg_advisory_unlock($1)", int64(migrationLockKey)) //nolint:errcheck // closing ends it anyway
			conn.Close()
		}, nil
	}
}
