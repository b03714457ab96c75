package apikey

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"testing"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/driver/pgdriver"
)

// pgOpen, when set, makes openDB open Postgres instead of SQLite.
var pgOpen func(t testing.TB) (*bun.DB, string, func() *bun.DB)

// TestPostgres runs the tests again on Postgres, each in a schema of its
// own, to keep the SQL dialect-neutral. It needs SETTLEFLOW_TEST_POSTGRES_DSN
// and a reachable server; otherwise it skips.
func TestPostgres(t *testing.T) {
	dsn := os.Getenv("SETTLEFLOW_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("SETTLEFLOW_TEST_POSTGRES_DSN is not set")
	}
	probe := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(dsn)))
	if err := probe.PingContext(context.Background()); err != nil {
		probe.Close()
		t.Skipf("Postgres at SETTLEFLOW_TEST_POSTGRES_DSN is not reachable: %v", err)
	}
	pgOpen = func(t testing.TB) (*bun.DB, string, func() *bun.DB) {
		t.Helper()
		var b [6]byte
		rand.Read(b[:])
		schema := "apikey_test_" + hex.EncodeToString(b[:])
		if _, err := probe.Exec("CREATE SCHEMA " + schema); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if _, err := probe.Exec("DROP SCHEMA " + schema + " CASCADE"); err != nil {
				t.Errorf("drop schema: %v", err)
			}
		})
		another := func() *bun.DB {
			sqldb := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(dsn),
				pgdriver.WithConnParams(map[string]any{"search_path": schema})))
			db := bun.NewDB(sqldb, pgdialect.New())
			t.Cleanup(func() { db.Close() })
			return db
		}
		return another(), "", another
	}
	defer func() { pgOpen = nil; probe.Close() }()

	for name, test := range map[string]func(*testing.T){
		"CreateListAuthenticate":    TestCreateListAuthenticate,
		"AuthErrors":                TestAuthErrors,
		"Rotate":                    TestRotate,
		"Revoke":                    TestRevoke,
		"OtherProcess":              TestOtherProcess,
		"LastUsedAtMostOnceAMinute": TestLastUsedAtMostOnceAMinute,
		"PlansAndValidation":        TestPlansAndValidation,
		"MigrateTwice":              TestMigrateTwice,
		"ConcurrentAuthenticate":    TestConcurrentAuthenticate,
	} {
		t.Run(name, test)
	}
}
