package storage_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/settleflow/settleflow/internal/pgtest"
	"github.com/settleflow/settleflow/storage"
)

// openPostgres is a storage.DB on a schema of its own on the test server,
// with a table t (n integer primary key, tx bigint: the transaction that
// wrote the row).
func openPostgres(t *testing.T) *storage.DB {
	t.Helper()
	db := pgtest.Connect(t).Storage(t, "sf_storage")()
	if _, err := db.Bun().ExecContext(context.Background(), `CREATE TABLE t (n INTEGER PRIMARY KEY, tx BIGINT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	return db
}

// pgInsert inserts n, recording the inserting transaction.
func pgInsert(n int) func(ctx context.Context, tx bun.Tx) error {
	return func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO t (n, tx) VALUES (?, txid_current())`, n)
		return err
	}
}

var rerunnable = storage.WriteOptions{Rerunnable: true}

// pgRows returns t's rows: n → the transaction that wrote it.
func pgRows(t *testing.T, db *storage.DB) map[int]int64 {
	t.Helper()
	rows, err := db.Bun().QueryContext(context.Background(), `SELECT n, tx FROM t`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[int]int64{}
	for rows.Next() {
		var n int
		var tx int64
		if err := rows.Scan(&n, &tx); err != nil {
			t.Fatal(err)
		}
		got[n] = tx
	}
	return got
}

// queue runs writes while the group committer is held (Locked), so that
// they queue and are taken as one group, and returns their results in
// the order given.
func queue(t *testing.T, db *storage.DB, writes ...func() error) []error {
	t.Helper()
	results := make([]chan error, len(writes))
	if err := db.Locked(func() error {
		for i, w := range writes {
			results[i] = make(chan error, 1)
			go func() { results[i] <- w() }()
			// One at a time, in order: the committer takes the first and
			// waits for the lock, the others queue behind it.
			if i == 0 {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			deadline := time.Now().Add(10 * time.Second)
			for db.Queued() < i {
				if time.Now().After(deadline) {
					return errors.New("writes not queued")
				}
				time.Sleep(time.Millisecond)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	errs := make([]error, len(writes))
	for i := range results {
		errs[i] = <-results[i]
	}
	return errs
}

// On Postgres, rerunnable writes that arrive together share one
// transaction: one commit, one transaction id for all their rows.
func TestPostgresGroupSharesTransaction(t *testing.T) {
	ctx := context.Background()
	db := openPostgres(t)
	before := db.Commits()
	var ws []func() error
	for n := 1; n <= 4; n++ {
		ws = append(ws, func() error { return db.WriteWith(ctx, pgInsert(n), rerunnable) })
	}
	for _, err := range queue(t, db, ws...) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := db.Commits() - before; n != 1 {
		t.Fatalf("%d commits, want 1", n)
	}
	got := pgRows(t, db)
	if len(got) != 4 {
		t.Fatalf("rows %v, want 4", got)
	}
	for n, tx := range got {
		if tx != got[1] {
			t.Fatalf("row %d written by transaction %d, row 1 by %d: want one transaction", n, tx, got[1])
		}
	}
}

// A failing write of a group rolls back its own work only: the group's
// transaction is rolled back and every other write runs again alone, so
// each caller learns its own outcome. That holds whether the write returns
// an error of its own after its statements succeeded, or a statement fails
// (which aborts the shared transaction on Postgres).
func TestPostgresGroupFailureRollsBackOnlyItsOwn(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		fail func(ctx context.Context, tx bun.Tx) error
	}{
		{"error after its work", func(ctx context.Context, tx bun.Tx) error {
			if err := pgInsert(2)(ctx, tx); err != nil {
				return err
			}
			return boom
		}},
		{"statement fails", func(ctx context.Context, tx bun.Tx) error {
			if err := pgInsert(2)(ctx, tx); err != nil {
				return err
			}
			return pgInsert(2)(ctx, tx) // duplicate key: the transaction aborts
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := openPostgres(t)
			// Each write counts its runs: the others run again.
			runs := make([]int, 3)
			counted := func(i int, fn func(ctx context.Context, tx bun.Tx) error) func() error {
				return func() error {
					return db.WriteWith(ctx, func(ctx context.Context, tx bun.Tx) error {
						runs[i]++
						return fn(ctx, tx)
					}, rerunnable)
				}
			}
			errs := queue(t, db, counted(0, pgInsert(1)), counted(1, tc.fail), counted(2, pgInsert(3)))
			if errs[0] != nil || errs[2] != nil {
				t.Fatalf("the other writes failed: %v", errs)
			}
			if errs[1] == nil {
				t.Fatal("the failing write reported success")
			}
			if tc.name == "error after its work" && !errors.Is(errs[1], boom) {
				t.Fatalf("the failing write reported %v, want its own error", errs[1])
			}
			got := pgRows(t, db)
			if _, ok := got[2]; ok || len(got) != 2 {
				t.Fatalf("rows %v, want 1 and 3 only", got)
			}
			// 1 ran in the group and again alone; 3 came after the
			// failure, so it ran alone only.
			if runs[0] != 2 || runs[1] != 1 || runs[2] != 1 {
				t.Fatalf("runs %v, want [2 1 1]", runs)
			}
		})
	}
}

// A write that is not rerunnable is a transaction of its own on Postgres,
// and so is a WriteStatement asked to be Alone: neither waits for the group
// committer.
func TestPostgresOwnTransactions(t *testing.T) {
	ctx := context.Background()
	db := openPostgres(t)
	if err := db.Locked(func() error {
		if err := db.Write(ctx, pgInsert(1)); err != nil {
			return err
		}
		var n int
		err := db.WriteStatement(ctx, `INSERT INTO t (n, tx) VALUES (?, txid_current()) RETURNING n`, []any{2},
			func(rows *sql.Rows) error {
				for rows.Next() {
					if err := rows.Scan(&n); err != nil {
						return err
					}
				}
				return rows.Err()
			}, storage.WriteOptions{Alone: true})
		if err == nil && n != 2 {
			t.Errorf("RETURNING gave %d, want 2", n)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	got := pgRows(t, db)
	if len(got) != 2 || got[1] == got[2] {
		t.Fatalf("rows %v: want 1 and 2, each its own transaction", got)
	}
	// A statement refused by the server leaves nothing and reports why.
	if err := db.WriteStatement(ctx, `INSERT INTO t (n, tx) VALUES (?, 0)`, []any{2}, nil, storage.WriteOptions{Alone: true}); err == nil {
		t.Fatal("duplicate key: no error")
	}
	if err := db.WriteStatement(ctx, `INSERT INTO t (n, tx) VALUES (?, 0)`, []any{3}, nil, storage.WriteOptions{Alone: true}); err != nil {
		t.Fatalf("after a refused statement: %v", err)
	}
	db.Close()
	for _, err := range []error{
		db.WriteWith(ctx, pgInsert(4), rerunnable),
		db.Write(ctx, pgInsert(5)),
		db.WriteStatement(ctx, `INSERT INTO t (n, tx) VALUES (?, 0)`, []any{6}, nil, storage.WriteOptions{Alone: true}),
	} {
		if !errors.Is(err, storage.ErrClosed) {
			t.Fatalf("write after Close: %v, want ErrClosed", err)
		}
	}
}
