package sqlite_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/settleflow/settleflow/storage/sqlite"
)

// migrateChildEnv, set, makes the test binary a child that opens the
// database it names (running every migration) and exits.
const migrateChildEnv = "SETTLEFLOW_TEST_MIGRATE_CHILD"

func init() {
	if path := os.Getenv(migrateChildEnv); path != "" {
		s, err := sqlite.Open(context.Background(), path, sqlite.OpenOptions{})
		if err != nil {
			fmt.Fprintln(os.Stderr, "migrate child:", err)
			os.Exit(1)
		}
		s.Close()
		os.Exit(0)
	}
}

// appliedMigrations counts the migrations recorded in the database at path.
func appliedMigrations(t *testing.T, path string) int {
	t.Helper()
	s, err := sqlite.Open(context.Background(), path, sqlite.OpenOptions{})
	if err != nil {
		t.Fatalf("Open after a process was killed while migrating: %v", err)
	}
	defer s.Close()
	var n int
	if err := s.DB().Bun().QueryRowContext(context.Background(), `SELECT count(*) FROM settleflow_migrations`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A process killed (SIGKILL) at any moment of its first Open, while it
// applies the migrations, leaves a database the next Open completes: each
// migration is recorded in its own transaction, so none is left applied but
// unrecorded (which made the next Open fail on "index ... already exists")
// or recorded but not applied.
func TestOpenAfterKilledWhileMigrating(t *testing.T) {
	if testing.Short() {
		t.Skip("kills child processes; skipped with -short")
	}
	// How long a whole first Open takes here, in a child of its own.
	full := func() time.Duration {
		path := filepath.Join(t.TempDir(), "settleflow.db")
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), migrateChildEnv+"="+path)
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return time.Since(start)
	}()
	want := appliedMigrations(t, filepath.Join(t.TempDir(), "fresh.db"))
	killedMidway := 0
	for i := range 12 {
		path := filepath.Join(t.TempDir(), "settleflow.db")
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), migrateChildEnv+"="+path)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rand.Int64N(int64(full))))
		cmd.Process.Kill()
		cmd.Wait()
		if !cmd.ProcessState.Exited() || cmd.ProcessState.ExitCode() != 0 {
			killedMidway++
		}
		if got := appliedMigrations(t, path); got != want {
			t.Fatalf("round %d: %d migrations recorded after the next Open, want %d", i, got, want)
		}
	}
	t.Logf("a first Open takes %v; %d of 12 children were killed before they finished", full, killedMidway)
	if killedMidway == 0 {
		t.Fatal("no child was killed before it finished: the test did not test the crash")
	}
}
