package sqlite

import (
	"context"
	"path/filepath"
	"testing"
)

func TestOpenDBPragmas(t *testing.T) {
	db, err := OpenDB(filepath.Join(t.TempDir(), "a b.db"), OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	var mode string
	if err := db.Bun().QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v; want wal", mode, err)
	}
	var sync int
	if err := db.Bun().QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync); err != nil || sync != 2 {
		t.Fatalf("synchronous = %d, %v; want 2 (FULL)", sync, err)
	}
	var busy int
	if err := db.Bun().QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy); err != nil || busy != 10000 {
		t.Fatalf("busy_timeout = %d, %v", busy, err)
	}
	if _, err := OpenDB(filepath.Join(t.TempDir(), "x.db"), OpenOptions{Synchronous: "OFF"}); err == nil {
		t.Fatal("synchronous OFF accepted")
	}
}
