package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/storage/sqlite"
	"github.com/settleflow/settleflow/storage/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) settleflow.Store {
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "settleflow.db"), sqlite.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// The database itself refuses an illegal transition, whatever SQL asks.
func TestDatabaseRefusesIllegalTransition(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "settleflow.db"), sqlite.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	db := s.DB()
	_, err = db.ExecContext(ctx, `INSERT INTO settleflow_workflows (id, livemode, product, customer_id, payload, quoted_amount, currency,
		target_margin_bps, status, run_at, created_at, updated_at) VALUES ('wf_x', 0, 'p', 'cus_1', '{}', 1, 'usd', 0, 'Pending', 0, 0, 0)`)
	if err != nil {
		t.Fatal(err)
	}
	for _, to := range []string{"Settled", "Settling", "Failed", "Bogus"} {
		if _, err := db.ExecContext(ctx, `UPDATE settleflow_workflows SET status = ? WHERE id = 'wf_x'`, to); err == nil {
			t.Fatalf("Pending → %s was accepted by the database", to)
		}
	}
	for _, to := range []string{"Running", "Settling", "Settled"} {
		if _, err := db.ExecContext(ctx, `UPDATE settleflow_workflows SET status = ? WHERE id = 'wf_x'`, to); err != nil {
			t.Fatalf("legal move to %s refused: %v", to, err)
		}
	}
	if _, err := db.ExecContext(ctx, `UPDATE settleflow_workflows SET status = 'Running' WHERE id = 'wf_x'`); err == nil {
		t.Fatal("Settled → Running was accepted by the database")
	}
}
