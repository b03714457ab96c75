// Package postgres is the Postgres Store of settleflow, for several engine
// processes sharing one database: bun's pgdriver and the queries of
// storage/bunstore, whose claims take rows with FOR UPDATE SKIP LOCKED.
package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"net"
	"runtime"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/settleflow/settleflow/storage"
	"github.com/settleflow/settleflow/storage/bunstore"
)

// Open connects to the database at dsn (postgres://user:pass@host:port/db?
// sslmode=...), brings its schema up to date and returns the Store on it.
// Close the Store when done.
func Open(ctx context.Context, dsn string) (*bunstore.Store, error) {
	return OpenWithOptions(ctx, dsn, Options{})
}

// Options configure [OpenWithOptions].
type Options struct {
	// Dialer, if set, opens the network connections to the server instead
	// of the driver's TCP dialer (a benchmark counts round trips with it).
	Dialer func(ctx context.Context, network, addr string) (net.Conn, error)
	// WrapConnector, if set, wraps the database/sql connector every
	// connection is opened through (a test counts the writes with it).
	WrapConnector func(driver.Connector) driver.Connector
}

// OpenWithOptions is [Open] with options.
func OpenWithOptions(ctx context.Context, dsn string, opts Options) (*bunstore.Store, error) {
	popts := []pgdriver.Option{pgdriver.WithDSN(dsn)}
	if opts.Dialer != nil {
		popts = append(popts, func(c *pgdriver.Config) { c.Dialer = opts.Dialer })
	}
	var conn driver.Connector = pgdriver.NewConnector(popts...)
	if opts.WrapConnector != nil {
		conn = opts.WrapConnector(conn)
	}
	sqldb := sql.OpenDB(conn)
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
// its own way, a search_path). The Store closes db when it is closed; other
// packages on the same database (apikey, webhook) take the Store's handle,
// s.DB().
func OpenDB(ctx context.Context, db *bun.DB) (*bunstore.Store, error) {
	sdb, err := storage.New(db, storage.Options{})
	if err != nil {
		db.Close()
		return nil, err
	}
	s, err := bunstore.New(sdb)
	if err != nil {
		sdb.Close()
		return nil, err
	}
	if err := s.Migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}
