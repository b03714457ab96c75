package apikey

import (
	"testing"

	"github.com/settleflow/settleflow/internal/pgtest"
	"github.com/settleflow/settleflow/storage"
)

// pgOpen, when set, makes openDB open Postgres instead of SQLite.
var pgOpen func(t testing.TB) (*storage.DB, string, func() *storage.DB)

// TestPostgres runs the tests again on Postgres, each in a schema of its
// own, to keep the SQL dialect-neutral. It needs SETTLEFLOW_TEST_POSTGRES_DSN
// and a reachable server; otherwise it skips.
func TestPostgres(t *testing.T) {
	pg := pgtest.Connect(t)
	pgOpen = func(t testing.TB) (*storage.DB, string, func() *storage.DB) {
		t.Helper()
		another := pg.Storage(t, "apikey_test")
		return another(), "", another
	}
	defer func() { pgOpen = nil }()

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
		"WorkerKeys":                TestWorkerKeys,
	} {
		t.Run(name, test)
	}
}
