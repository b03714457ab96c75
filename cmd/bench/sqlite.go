package main

// -suite sqlite: the engine end to end on SQLite beside River v0.47 on its
// SQLite driver, riversqlite (issue 27). River lives here, in the bench
// harness only.

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	_ "modernc.org/sqlite" // database/sql driver "sqlite", River's side

	"github.com/settleflow/settleflow/internal/benchmark"
	"github.com/settleflow/settleflow/storage/sqlite"
)

// sqliteConfig configures the SQLite suite.
type sqliteConfig struct {
	n          int
	rounds     int
	goroutines int // creating (inserting) goroutines of both sides
	workers    int // River's MaxWorkers, the engine's Options.Workers
	riverConns int // River's database/sql MaxOpenConns (riversqlite's advice: 1)
}

// sqliteRun is one side's figures in a round.
type sqliteRun struct {
	perSec float64
	goCPU  float64 // this process's CPU, µs per workflow (job)
}

// runSQLite measures, per round and each on a fresh database in a fresh
// directory, River on riversqlite and the engine on its SQLite store, both
// end to end at synchronous=FULL in WAL mode, which one goes first
// alternating between rounds.
func runSQLite(cfg sqliteConfig) error {
	ctx := context.Background()
	fmt.Printf("SQLite suite: n = %d, %d creating goroutines, %d workers, synchronous=FULL, WAL; River's MaxOpenConns %d\n",
		cfg.n, cfg.goroutines, cfg.workers, cfg.riverConns)
	fmt.Printf("timed from the first create (insert) until all n are complete; Go µs/wf: this process's CPU (getrusage) per workflow\n")
	fmt.Printf("%-6s %-6s %12s %10s %12s %10s %8s\n", "round", "first", "River/s", "µs/job", "engine/s", "µs/wf", "ratio")
	var rivers, engines, ratios []float64
	for r := 0; r < cfg.rounds; r++ {
		dir, err := os.MkdirTemp("", "settleflow-sqlitebench-")
		if err != nil {
			return err
		}
		var rv, en sqliteRun
		sides := []struct {
			name string
			run  func() error
		}{
			{"River", func() (err error) { rv, err = runRiverSQLite(ctx, filepath.Join(dir, "river.db"), cfg); return err }},
			{"engine", func() (err error) { en, err = runEngineSQLite(ctx, filepath.Join(dir, "engine.db"), cfg); return err }},
		}
		if r%2 == 1 {
			slices.Reverse(sides)
		}
		for _, s := range sides {
			if err := s.run(); err != nil {
				os.RemoveAll(dir)
				return fmt.Errorf("round %d, %s: %w", r+1, s.name, err)
			}
		}
		os.RemoveAll(dir)
		ratio := en.perSec / rv.perSec
		fmt.Printf("%-6d %-6s %12.0f %10.0f %12.0f %10.0f %7.2fx\n", r+1, sides[0].name, rv.perSec, rv.goCPU, en.perSec, en.goCPU, ratio)
		rivers, engines, ratios = append(rivers, rv.perSec), append(engines, en.perSec), append(ratios, ratio)
	}
	median := func(v []float64) float64 { return medianOf(v, func(x float64) float64 { return x }) }
	fmt.Printf("%-6s %-6s %12.0f %10s %12.0f %10s %7.2fx  (ratio: median of the per-round ratios)\n", "median", "",
		median(rivers), "", median(engines), "", median(ratios))
	return nil
}

// sqliteTimed runs fn, a side's measured part, and returns its rate and CPU
// per workflow.
func sqliteTimed(n int, fn func() error) (sqliteRun, error) {
	runtime.GC()
	cpu0, start := benchmark.ProcessCPU(), time.Now()
	err := fn()
	elapsed, cpu := time.Since(start), benchmark.ProcessCPU()-cpu0
	return sqliteRun{perSec: float64(n) / elapsed.Seconds(), goCPU: float64(cpu.Microseconds()) / float64(n)}, err
}

// runEngineSQLite is the engine end to end on a fresh SQLite database at
// path, as the Postgres suite's sqlite side: synchronous=FULL, the store
// the sole writer of its file, cfg.workers workers.
func runEngineSQLite(ctx context.Context, path string, cfg sqliteConfig) (sqliteRun, error) {
	e, err := benchmark.OpenSQLiteEngine(path, sqlite.SyncFull, benchmark.EngineOptions{Workers: cfg.workers})
	if err != nil {
		return sqliteRun{}, err
	}
	defer e.Close()
	return sqliteTimed(cfg.n, func() error { return benchmark.EndToEnd(ctx, e, cfg.n, cfg.goroutines) })
}

// openRiverSQLite opens River's database at path through database/sql on
// modernc.org/sqlite, as riversqlite's documentation and River's own test
// pools do (WAL journal, MaxOpenConns 1 unless conns says otherwise), with
// synchronous=FULL as the engine's, and checks that the settings took.
func openRiverSQLite(path string, conns int) (*sql.DB, error) {
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "busy_timeout(10000)")
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	db.SetConnMaxLifetime(0)
	var journal string
	var syncMode int
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&journal); err != nil {
		db.Close()
		return nil, err
	}
	if err := db.QueryRow("PRAGMA synchronous").Scan(&syncMode); err != nil {
		db.Close()
		return nil, err
	}
	if journal != "wal" || syncMode != 2 {
		db.Close()
		return nil, fmt.Errorf("river's database: journal_mode %s, synchronous %d; want wal, 2 (FULL)", journal, syncMode)
	}
	return db, nil
}

// runRiverSQLite measures River v0.47 on riversqlite, on a fresh database
// at path, as the Postgres suite measures it on riverpgxv5.
func runRiverSQLite(ctx context.Context, path string, cfg sqliteConfig) (sqliteRun, error) {
	db, err := openRiverSQLite(path, cfg.riverConns)
	if err != nil {
		return sqliteRun{}, err
	}
	defer db.Close()
	res, err := runRiverOn(ctx, riversqlite.New(db), cfg.n, cfg.goroutines, cfg.workers)
	if err != nil {
		return res, err
	}
	var completed int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM river_job WHERE state = 'completed'").Scan(&completed); err != nil {
		return res, err
	}
	if completed != cfg.n {
		return res, fmt.Errorf("river: %d jobs completed, want %d", completed, cfg.n)
	}
	return res, nil
}

// runRiverOn migrates River's schema with driver, then measures River with
// a no-op worker and MaxWorkers workers: n jobs inserted by goroutines
// goroutines, one Insert each, timed from the first insert until n
// job-completed events (sent once the completion is stored), as runRiver
// does on Postgres.
func runRiverOn[TTx any](ctx context.Context, driver riverdriver.Driver[TTx], n, goroutines, maxWorkers int) (sqliteRun, error) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	migrator, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: quiet})
	if err != nil {
		return sqliteRun{}, err
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return sqliteRun{}, fmt.Errorf("river migrate: %w", err)
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &riverNoopWorker{})
	client, err := river.NewClient(driver, &river.Config{
		Logger:  quiet,
		Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: maxWorkers}},
		Workers: workers,
	})
	if err != nil {
		return sqliteRun{}, err
	}
	completed, cancel := client.SubscribeConfig(&river.SubscribeConfig{Kinds: []river.EventKind{river.EventKindJobCompleted}, ChanSize: n + 1000})
	defer cancel()
	if err := client.Start(ctx); err != nil {
		return sqliteRun{}, err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		client.Stop(sctx) //nolint:errcheck // measured already
	}()
	return sqliteTimed(n, func() error {
		return riverInsertAndWait(ctx, client, completed, n, goroutines)
	})
}
