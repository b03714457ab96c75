// Package sqlite is the SQLite Store of settleflow, the embedded default: a
// single file, no server, on modernc.org/sqlite (pure Go, no cgo) through bun.
package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"io"
	"net/url"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"modernc.org/sqlite"

	"github.com/settleflow/settleflow/storage"
)

// Synchronous is SQLite's PRAGMA synchronous setting for the write-ahead log.
type Synchronous string

// The synchronous settings that keep WAL mode consistent.
const (
	// SyncFull fsyncs the WAL at every commit: a commit survives power loss.
	// The default.
	SyncFull Synchronous = "FULL"
	// SyncNormal fsyncs only at checkpoints: a commit survives the death of
	// the process (kill -9) but the last commits may be lost on power loss.
	SyncNormal Synchronous = "NORMAL"
)

// OpenOptions tune OpenDB. The zero value is the recommended setting.
type OpenOptions struct {
	// Synchronous defaults to SyncFull.
	Synchronous Synchronous
	// BusyTimeoutMillis is how long a connection waits for another process's
	// write lock before failing with SQLITE_BUSY. Default 10000.
	BusyTimeoutMillis int
	// Exclusive, for Open: the Store is to be the only one on the file, in
	// any process, while it is open. Open then takes an exclusive lock on
	// path+".lock" (every Store takes it, shared otherwise) and fails at
	// once if another Store holds it; in exchange the Store serves reads
	// of the workflows it wrote last from memory (see bunstore.Options).
	// The reference server opens its database this way. A plain OpenDB of
	// the same file (for API keys or webhooks) is not affected. Unix only.
	Exclusive bool
	// WrapConnector, if set, wraps the database/sql connector every
	// connection is opened through (a test counts the writes with it).
	WrapConnector func(driver.Connector) driver.Connector
}

// OpenDB opens (creating if needed) the SQLite database at path and returns
// its handle, the one every package on the database writes through (see
// package storage): the process's single writer, migrations under a file
// lock beside the database (path+".lock.migrate"). The connections have
// the settings settleflow relies on: WAL journal, a busy timeout (for other
// processes' writes), foreign keys, and write transactions that take the
// write lock at BEGIN (BEGIN IMMEDIATE), so two writers never deadlock
// upgrading a read lock. Close the DB when done.
//
// It takes no Store lock: the keys and webhooks commands open the database
// this way beside a running server. Open opens a workflow Store.
func OpenDB(path string, opts OpenOptions) (*storage.DB, error) {
	return openDB(path, opts, nil)
}

func openDB(path string, opts OpenOptions, closers []io.Closer) (*storage.DB, error) {
	bdb, err := openBun(path, opts)
	if err != nil {
		return nil, err
	}
	db, err := storage.New(bdb, storage.Options{MigrationLock: migrationLock(path + ".lock"), Closers: closers})
	if err != nil {
		bdb.Close()
		return nil, err
	}
	return db, nil
}

func openBun(path string, opts OpenOptions) (*bun.DB, error) {
	if opts.Synchronous == "" {
		opts.Synchronous = SyncFull
	}
	if opts.Synchronous != SyncFull && opts.Synchronous != SyncNormal {
		return nil, fmt.Errorf("sqlite: synchronous must be FULL or NORMAL, not %q", opts.Synchronous)
	}
	if opts.BusyTimeoutMillis == 0 {
		opts.BusyTimeoutMillis = 10000
	}
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", opts.BusyTimeoutMillis))
	q.Add("_pragma", "synchronous("+string(opts.Synchronous)+")")
	q.Add("_pragma", "foreign_keys(1)")
	// Savepoints of the group commit journal to memory, not a temp file.
	q.Add("_pragma", "temp_store(MEMORY)")
	q.Add("_pragma", "cache_size(-16000)") // 16 MB of page cache per connection
	q.Add("_txlock", "immediate")
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
	conn, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if opts.WrapConnector != nil {
		conn = opts.WrapConnector(conn)
	}
	sqldb := sql.OpenDB(conn)
	// Readers run in parallel under WAL; writes go through the one writer
	// of storage.DB, so a handful of connections is plenty.
	sqldb.SetMaxOpenConns(8)
	sqldb.SetMaxIdleConns(8)
	sqldb.SetConnMaxLifetime(0)
	if err := sqldb.PingContext(context.Background()); err != nil {
		sqldb.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	return bun.NewDB(sqldb, sqlitedialect.New()), nil
}
