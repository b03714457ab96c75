package webhook

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

// TestPostgres runs the delivery and endpoint tests again on Postgres, each
// in a schema of its own, to keep the SQL dialect-neutral. It needs
// SETTLEFLOW_TEST_POSTGRES_DSN and a reachable server; otherwise it skips.
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
	pgOpen = func(t testing.TB) *bun.DB {
		t.Helper()
		var b [6]byte
		rand.Read(b[:])
		schema := "webhook_test_" + hex.EncodeToString(b[:])
		if _, err := probe.Exec("CREATE SCHEMA " + schema); err != nil {
			t.Fatal(err)
		}
		sqldb := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(dsn),
			pgdriver.WithConnParams(map[string]any{"search_path": schema})))
		db := bun.NewDB(sqldb, pgdialect.New())
		t.Cleanup(func() {
			db.Close()
			if _, err := probe.Exec("DROP SCHEMA " + schema + " CASCADE"); err != nil {
				t.Errorf("drop schema: %v", err)
			}
		})
		return db
	}
	defer func() { pgOpen = nil; probe.Close() }()

	for _, tc := range []struct {
		name string
		test func(*testing.T)
	}{
		{"DeliverySignedAndVerified", TestDeliverySignedAndVerified},
		{"Retries", TestRetries},
		{"ScheduleExhaustedFails", TestScheduleExhaustedFails},
		{"GoneDisablesEndpoint", TestGoneDisablesEndpoint},
		{"RotationOverlap", TestRotationOverlap},
		{"NotifyDedupe", TestNotifyDedupe},
		{"SlowEndpointDoesNotDelay", TestSlowEndpointDoesNotDelayFast},
		{"StopWaitsForInFlight", TestStopWaitsForInFlight},
		{"StopReleasesQueued", TestStopReleasesQueued},
		{"EndpointAPI", TestEndpointAPI},
		{"StandardWebhooksNodeInterop", TestStandardWebhooksNodeInterop},
	} {
		t.Run(tc.name, tc.test)
	}
}
