package webhook

import (
	"database/sql/driver"
	"testing"

	"github.com/settleflow/settleflow/internal/pgtest"
	"github.com/settleflow/settleflow/storage"
)

// TestPostgres runs the delivery and endpoint tests again on Postgres, each
// in a schema of its own, to keep the SQL dialect-neutral. It needs
// SETTLEFLOW_TEST_POSTGRES_DSN and a reachable server; otherwise it skips.
func TestPostgres(t *testing.T) {
	pg := pgtest.Connect(t)
	pgOpen = func(t testing.TB) *storage.DB {
		t.Helper()
		return pg.Storage(t, "webhook_test")()
	}
	pgOpenWrapped = func(t testing.TB, wrap func(driver.Connector) driver.Connector) *storage.DB {
		t.Helper()
		db, err := storage.New(pg.SchemaWrapped(t, "webhook_test", wrap)(), storage.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	defer func() { pgOpen, pgOpenWrapped = nil, nil }()

	for _, tc := range []struct {
		name string
		test func(*testing.T)
	}{
		{"DeliverySignedAndVerified", TestDeliverySignedAndVerified},
		{"NoticeRerunRecordsOnce", TestNoticeRerunRecordsOnce},
		{"Retries", TestRetries},
		{"ScheduleExhaustedFails", TestScheduleExhaustedFails},
		{"GoneDisablesEndpoint", TestGoneDisablesEndpoint},
		{"RotationOverlap", TestRotationOverlap},
		{"NotifyDedupe", TestNotifyDedupe},
		{"SlowEndpointDoesNotDelay", TestSlowEndpointDoesNotDelayFast},
		{"StopWaitsForInFlight", TestStopWaitsForInFlight},
		{"StopReleasesQueued", TestStopReleasesQueued},
		{"EndpointAPI", TestEndpointAPI},
		{"Prune", TestPrune},
		{"FairClaim", TestFairClaim},
		{"FairDelivery", TestFairDelivery},
		{"FairQueueMigration", TestFairQueueMigration},
		{"NotifyConcurrent", TestNotifyConcurrent},
		{"AttemptsHeldOnDelivery", TestAttemptsHeldOnDelivery},
		{"AttemptsTwiceInOneBatch", TestAttemptsTwiceInOneBatch},
		{"LastAttemptMigration", TestLastAttemptMigration},
		{"NotifyRecordsClaimed", TestNotifyRecordsClaimed},
		{"NotifyClaimedKeepsLineOrder", TestNotifyClaimedKeepsLineOrder},
		{"NotifyBackloggedEndpoint", TestNotifyBackloggedEndpoint},
		{"NotifyBacklogRecordsUnleased", TestNotifyBacklogRecordsUnleased},
		{"StopReleasesPreclaimed", TestStopReleasesPreclaimed},
		{"PreclaimedOutlivesItsProcess", TestPreclaimedOutlivesItsProcess},
		{"NotifyBurstRecordsClaimed", TestNotifyBurstRecordsClaimed},
		{"QueuedPastLeaseReleased", TestQueuedPastLeaseReleased},
		{"StandardWebhooksNodeInterop", TestStandardWebhooksNodeInterop},
	} {
		t.Run(tc.name, tc.test)
	}
}
