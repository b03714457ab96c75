package dbcount_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"modernc.org/sqlite"

	"github.com/settleflow/settleflow/internal/dbcount"
)

func open(t *testing.T) (*sql.DB, *dbcount.Counter) {
	t.Helper()
	base, err := sqlite.NewConnector("file:" + filepath.Join(t.TempDir(), "c.db") + "?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	c := dbcount.New()
	db := sql.OpenDB(c.Wrap(base))
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	return db, c
}

func TestCountsRowsAndCommits(t *testing.T) {
	ctx := context.Background()
	db, c := open(t)
	check := func(step string, rows, statements, commits int64) {
		t.Helper()
		got := c.Snapshot()
		if got.Rows != rows || got.Statements != statements || got.Commits != commits {
			t.Fatalf("%s: %d rows, %d statements, %d commits; want %d, %d, %d\n%s", step,
				got.Rows, got.Statements, got.Commits, rows, statements, commits, got)
		}
	}
	check("schema", 0, 0, 0)

	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`INSERT INTO t (id, v) VALUES (1, 0), (2, 0), (3, 0)`); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`UPDATE t SET v = 0 WHERE id > 100`); err != nil {
		t.Fatal(err)
	}
	check("before the commit", 0, 0, 0)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	check("a transaction of 3 inserts", 3, 1, 1)

	if _, err := db.Exec(`UPDATE t SET v = 1 WHERE id <= 2`); err != nil {
		t.Fatal(err)
	}
	check("an update alone", 5, 2, 2)

	if _, err := db.Exec(`UPDATE t SET v = 1 WHERE id > 100`); err != nil {
		t.Fatal(err)
	}
	check("an update that changes nothing", 5, 2, 2)

	tx, _ = db.BeginTx(ctx, nil)
	if _, err := tx.Exec(`DELETE FROM t`); err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	check("a rolled back delete", 5, 2, 2)

	rs, err := db.Query(`UPDATE t SET v = v + 1 WHERE id IN (1, 3) RETURNING id`)
	if err != nil {
		t.Fatal(err)
	}
	for rs.Next() {
	}
	rs.Close()
	check("an update returning its rows", 7, 3, 3)

	st, err := db.Prepare(`DELETE FROM t WHERE id = ?`)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Exec(3); err != nil {
		t.Fatal(err)
	}
	check("a prepared delete", 8, 4, 4)

	var n int
	if err := db.QueryRow(`WITH x AS (SELECT v FROM t) SELECT count(*) FROM x`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	check("a read", 8, 4, 4)

	got := c.Snapshot().ByStatement
	want := map[string]int64{"INSERT t": 3, "UPDATE t": 4, "DELETE t": 1}
	if len(got) != len(want) {
		t.Fatalf("by statement %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("by statement %v, want %v", got, want)
		}
	}
}

func TestKindSkipsLocksAndConflictClauses(t *testing.T) {
	for q, want := range map[string]string{
		`WITH c AS (SELECT id FROM w WHERE s = 1 FOR UPDATE SKIP LOCKED) UPDATE w SET s = 2 FROM c WHERE w.id = c.id RETURNING w.id`: "UPDATE w",
		`INSERT INTO "ev" (id) VALUES (1) ON CONFLICT (id) DO UPDATE SET id = excluded.id`:                                           "INSERT ev",
		`WITH c AS (SELECT id FROM w FOR NO KEY UPDATE) SELECT * FROM c`:                                                             "other",
	} {
		if got := dbcount.Kind(q); got != want {
			t.Errorf("Kind(%q) = %q, want %q", q, got, want)
		}
	}
}
