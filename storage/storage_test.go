package storage_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/settleflow/settleflow/storage"
	"github.com/settleflow/settleflow/storage/sqlite"
)

func openSQLite(t *testing.T) *storage.DB {
	t.Helper()
	db, err := sqlite.OpenDB(filepath.Join(t.TempDir(), "db.sqlite"), sqlite.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Bun().ExecContext(context.Background(), `CREATE TABLE t (n INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	return db
}

func insert(n int) func(ctx context.Context, tx bun.Tx) error {
	return func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO t (n) VALUES (?)`, n)
		return err
	}
}

// Writes merged into one transaction each keep their own outcome: a failing
// write rolls back its own work only, the others commit, in one commit.
func TestGroupKeepsEachWriteApart(t *testing.T) {
	ctx := context.Background()
	db := openSQLite(t)
	boom := errors.New("boom")
	results := make(chan error, 3)
	before := db.Commits()
	if err := db.Locked(func() error {
		go func() { results <- db.Write(ctx, insert(1)) }()
		go func() {
			results <- db.Write(ctx, func(ctx context.Context, tx bun.Tx) error {
				if err := insert(2)(ctx, tx); err != nil {
					return err
				}
				return boom // after its insert: the savepoint must undo it
			})
		}()
		go func() { results <- db.Write(ctx, insert(3)) }()
		for db.Queued() < 2 {
			time.Sleep(time.Millisecond)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var failed int
	for range 3 {
		if err := <-results; errors.Is(err, boom) {
			failed++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if failed != 1 {
		t.Fatalf("%d writes reported the error, want 1", failed)
	}
	if n := db.Commits() - before; n != 1 {
		t.Fatalf("%d commits, want 1", n)
	}
	var got []int
	if err := db.Bun().NewSelect().Table("t").Column("n").Order("n").Scan(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != 1 || got[1] != 3 {
		t.Fatalf("rows %v, want [1 3]", got)
	}
}

// A write whose context ended before the writer took it does nothing; a
// write on a closed DB fails with ErrClosed.
func TestWriteCanceledAndClosed(t *testing.T) {
	db := openSQLite(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	if err := db.Locked(func() error {
		go func() { done <- db.Write(context.Background(), insert(1)) }()
		go func() { done <- db.Write(ctx, insert(2)) }()
		// Both are queued, or the writer holds one and waits for the lock.
		for db.Queued() < 1 {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(10 * time.Millisecond)
		cancel()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	errs := []error{<-done, <-done}
	if !(errors.Is(errs[0], context.Canceled) || errors.Is(errs[1], context.Canceled)) {
		t.Fatalf("results %v: want one context.Canceled", errs)
	}
	var n int
	if err := db.Bun().QueryRowContext(context.Background(), `SELECT count(*) FROM t WHERE n = 2`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the canceled write left %d rows (%v)", n, err)
	}
	db.Close()
	if err := db.Write(context.Background(), insert(3)); !errors.Is(err, storage.ErrClosed) {
		t.Fatalf("write after Close: %v, want ErrClosed", err)
	}
}
