package sqlite_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/benchmark"
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
	db := s.DB().Bun()
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

// The conformance suite again with the store as its database's sole writer,
// which answers reads of the workflows it wrote last from memory.
func TestConformanceExclusive(t *testing.T) {
	storetest.Run(t, func(t *testing.T) settleflow.Store {
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "settleflow.db"), sqlite.OpenOptions{Exclusive: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestExclusiveLock(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "settleflow.db")
	shared, err := sqlite.Open(ctx, path, sqlite.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Open(ctx, path, sqlite.OpenOptions{Exclusive: true}); err == nil || !strings.Contains(err.Error(), "another store has it open") {
		t.Fatalf("exclusive open beside a shared one: %v; want refused", err)
	}
	shared2, err := sqlite.Open(ctx, path, sqlite.OpenOptions{})
	if err != nil {
		t.Fatalf("two shared opens: %v", err)
	}
	shared.Close()
	shared2.Close()
	excl, err := sqlite.Open(ctx, path, sqlite.OpenOptions{Exclusive: true})
	if err != nil {
		t.Fatalf("exclusive open once the others closed: %v", err)
	}
	if _, err := sqlite.Open(ctx, path, sqlite.OpenOptions{}); err == nil || !strings.Contains(err.Error(), "exclusively") {
		t.Fatalf("shared open beside an exclusive one: %v; want refused", err)
	}
	if _, err := sqlite.Open(ctx, path, sqlite.OpenOptions{Exclusive: true}); err == nil {
		t.Fatal("two exclusive opens")
	}
	// A plain database handle (API keys, webhooks) is not a Store: allowed.
	db, err := sqlite.OpenDB(path, sqlite.OpenOptions{})
	if err != nil {
		t.Fatalf("OpenDB beside an exclusive store: %v", err)
	}
	db.Close()
	excl.Close()
	again, err := sqlite.Open(ctx, path, sqlite.OpenOptions{Exclusive: true})
	if err != nil {
		t.Fatalf("exclusive open after Close: %v", err)
	}
	again.Close()
}

// TestExclusiveReadsNeverGoBack polls workflows through the engine while its
// workers take them from Pending to Settled on an exclusive store: no read
// may show a workflow older than one read before it, whether it came from
// the cache or from SQLite.
func TestExclusiveReadsNeverGoBack(t *testing.T) {
	ctx := context.Background()
	e := benchmark.NewEngine(t, filepath.Join(t.TempDir(), "settleflow.db"))
	rank := map[settleflow.Status]int{settleflow.Pending: 0, settleflow.Running: 1, settleflow.Settling: 2, settleflow.Settled: 3}
	const n = 400
	ids := make([]string, n)
	for i := range ids {
		w, _, err := e.Create(ctx, settleflow.CreateParams{Environment: settleflow.Test, Product: benchmark.Product,
			CustomerID: "cus_poll", Payload: []byte(`{"units":1}`)})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = w.ID
	}
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			seen := make([]*settleflow.Workflow, n)
			deadline := time.Now().Add(time.Minute)
			for settled := 0; settled < n; {
				settled = 0
				for i, id := range ids {
					w, err := e.Fetch(ctx, settleflow.Test, id)
					if err != nil {
						t.Error(err)
						return
					}
					if p := seen[i]; p != nil && (rank[w.Status] < rank[p.Status] || w.UpdatedAt.Before(p.UpdatedAt)) {
						t.Errorf("%s went back from %s (updated %s) to %s (updated %s)", id, p.Status, p.UpdatedAt, w.Status, w.UpdatedAt)
						return
					}
					seen[i] = w
					if w.Status == settleflow.Settled {
						settled++
					}
				}
				if time.Now().After(deadline) {
					t.Errorf("only %d of %d settled in a minute", settled, n)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// A process killed while it migrated leaves nothing that stops the next
// Open: the migration lock is a file lock, which ends with its process (bun's
// lock row, which used to be taken, would stay behind).
func TestOpenAfterMigrationKilled(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "settleflow.db")
	s, err := sqlite.Open(ctx, path, sqlite.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// What a killed migrator left: bun's lock row.
	if _, err := s.DB().Bun().ExecContext(ctx, `INSERT INTO settleflow_migration_locks (table_name) VALUES ('settleflow_migrations')`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	again, err := sqlite.Open(ctx, path, sqlite.OpenOptions{})
	if err != nil {
		t.Fatalf("Open after a killed migration: %v", err)
	}
	again.Close()
}
