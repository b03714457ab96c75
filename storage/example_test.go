package storage_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/uptrace/bun"

	"github.com/settleflow/settleflow/storage/sqlite"
)

// A package that keeps state in the settleflow database takes the one
// handle and writes through it: on SQLite its writes then share commits with
// every other package's, and never meet SQLITE_BUSY from them.
func ExampleDB_Write() {
	dir, _ := os.MkdirTemp("", "settleflow-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	db, err := sqlite.OpenDB(filepath.Join(dir, "settleflow.db"), sqlite.OpenOptions{})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	if _, err := db.Bun().ExecContext(ctx, `CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)`); err != nil {
		panic(err)
	}

	err = db.Write(ctx, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO notes (body) VALUES (?)`, "written through the one writer")
		return err
	})
	if err != nil {
		panic(err)
	}
	var body string
	if err := db.Bun().QueryRowContext(ctx, `SELECT body FROM notes`).Scan(&body); err != nil {
		panic(err)
	}
	fmt.Println(body)
	// Output: written through the one writer
}
