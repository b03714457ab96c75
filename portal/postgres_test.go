package portal

import (
	"context"
	"testing"

	"github.com/settleflow/settleflow/internal/pgtest"
	"github.com/settleflow/settleflow/storage/bunstore"
	"github.com/settleflow/settleflow/storage/postgres"
)

// TestPostgres runs the portal's tests again on Postgres, each in a schema
// of its own, to keep its SQL (the statement's union, the relay limit's
// upsert) dialect-neutral. It needs SETTLEFLOW_TEST_POSTGRES_DSN and a
// reachable server; otherwise it skips.
func TestPostgres(t *testing.T) {
	pg := pgtest.Connect(t)
	sqliteStore := openStore
	openStore = func(t *testing.T) *bunstore.Store {
		t.Helper()
		s, err := postgres.OpenDB(context.Background(), pg.Schema(t, "portal_test")())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	defer func() { openStore = sqliteStore }()
	for _, tc := range []struct {
		name string
		test func(*testing.T)
	}{
		{"LinkOpensOneSessionOnce", TestLinkOpensOneSessionOnce},
		{"StatementAndCSV", TestStatementAndCSV},
		{"ConnectRefusals", TestConnectRefusals},
		{"DepositRelay", TestDepositRelay},
		{"WithdrawalCalls", TestWithdrawalCalls},
		{"PortalSessionsEndpoint", TestPortalSessionsEndpoint},
	} {
		t.Run(tc.name, tc.test)
	}
}
