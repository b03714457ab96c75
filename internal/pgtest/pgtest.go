// Package pgtest gives tests a Postgres database in a schema of their own,
// on the server named by SETTLEFLOW_TEST_POSTGRES_DSN (.ci/run sets it).
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"github.com/settleflow/settleflow/storage"
	"os"
	"strings"
	"testing"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/driver/pgdriver"
)

// EnvDSN names the environment variable holding the test server's DSN.
const EnvDSN = "SETTLEFLOW_TEST_POSTGRES_DSN"

// Server is the test Postgres server.
type Server struct {
	dsn   string
	probe *sql.DB
}

// Connect returns the test server. Without the DSN the test is skipped with
// a message saying so (a laptop); with a DSN that does not answer it fails,
// so CI cannot pass by skipping.
func Connect(t testing.TB) *Server {
	t.Helper()
	dsn := os.Getenv(EnvDSN)
	if dsn == "" {
		t.Skip(EnvDSN + " is not set: the Postgres variant of these tests is skipped (.ci/run sets it)")
	}
	probe := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(dsn)))
	if err := probe.PingContext(context.Background()); err != nil {
		probe.Close()
		t.Fatalf("Postgres at %s does not answer: %v", EnvDSN, err)
	}
	t.Cleanup(func() { probe.Close() })
	return &Server{dsn: dsn, probe: probe}
}

// Schema creates a schema of its own for t, dropped when t ends, and returns
// a function that opens connections to it (each closed when t ends).
func (s *Server) Schema(t testing.TB, prefix string) func() *bun.DB {
	t.Helper()
	return s.SchemaWrapped(t, prefix, nil)
}

// SchemaWrapped is [Server.Schema] with the connector of every handle
// wrapped by wrap (nil: not wrapped), to count or trace statements.
func (s *Server) SchemaWrapped(t testing.TB, prefix string, wrap func(driver.Connector) driver.Connector) func() *bun.DB {
	t.Helper()
	schema := s.newSchema(t, prefix)
	return func() *bun.DB {
		var conn driver.Connector = pgdriver.NewConnector(pgdriver.WithDSN(s.dsn),
			pgdriver.WithConnParams(map[string]any{"search_path": schema}))
		if wrap != nil {
			conn = wrap(conn)
		}
		sqldb := sql.OpenDB(conn)
		db := bun.NewDB(sqldb, pgdialect.New())
		t.Cleanup(func() { db.Close() })
		return db
	}
}

// Storage is [Server.Schema] for packages that take the database's one
// handle: each call opens a storage.DB on the schema (closed when t ends), as
// another process would.
func (s *Server) Storage(t testing.TB, prefix string) func() *storage.DB {
	t.Helper()
	open := s.Schema(t, prefix)
	return func() *storage.DB {
		db, err := storage.New(open(), storage.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
}

// SchemaDSN creates a schema of its own for t, dropped when t ends, and
// returns a DSN whose connections use it: for code that opens its own.
func (s *Server) SchemaDSN(t testing.TB, prefix string) string {
	t.Helper()
	schema := s.newSchema(t, prefix)
	sep := "?"
	if strings.Contains(s.dsn, "?") {
		sep = "&"
	}
	return s.dsn + sep + "search_path=" + schema
}

func (s *Server) newSchema(t testing.TB, prefix string) string {
	t.Helper()
	var b [6]byte
	rand.Read(b[:])
	schema := prefix + "_" + hex.EncodeToString(b[:])
	if _, err := s.probe.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := s.probe.Exec("DROP SCHEMA " + schema + " CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return schema
}
