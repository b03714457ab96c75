package main

// -suite postgres: the engine on Postgres beside River on the same server
// (issue 17). River lives here, in the bench harness only.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/settleflow/settleflow/internal/benchmark"
	"github.com/settleflow/settleflow/storage/sqlite"
)

// pgConfig configures the Postgres suite.
type pgConfig struct {
	dsn        string
	n          int
	rounds     int
	goroutines int // creating (inserting) goroutines of every side
	workers    int // River's MaxWorkers, the engine's Options.Workers
	riverConns int // River's pgxpool MaxConns (0: pgxpool's default)
	instances  int // engines of the multi-instance side
	cpuprofile string
	only       string // run only the sides named (comma-separated)
	noLease    bool   // the instances settle without the settlement lease, each its own charges
}

// pgSide is one measured side of a round.
type pgSide struct {
	name  string
	label string
	// run sets up (not timed), then calls measure around the timed part
	// (from the first insert until all n are complete), then tears down.
	run func(ctx context.Context, m *pgMeasure) error
}

// pgMeasure collects one side's figures.
type pgMeasure struct {
	srv      *benchmark.PGServer
	dbs      []*benchmark.PGDatabase
	rt       benchmark.RoundTrips
	n        int
	profile  string
	elapsed  time.Duration
	rts      int64
	goCPU    time.Duration
	pgCPU    time.Duration
	xacts    int64
	xactBase int64
	active   float64 // mean backends running a statement (samples every 50 ms)
	locked   float64 // mean of them waiting for a lock
	rows     benchmark.RowWork
	rowsBase benchmark.RowWork
}

// database creates a fresh database for the side; the harness drops it.
func (m *pgMeasure) database(ctx context.Context, prefix string) (*benchmark.PGDatabase, error) {
	db, err := m.srv.FreshDatabase(ctx, prefix)
	if err != nil {
		return nil, err
	}
	m.dbs = append(m.dbs, db)
	return db, nil
}

// timed runs fn, the side's measured part, counting its time, round trips
// and CPU.
func (m *pgMeasure) timed(ctx context.Context, fn func() error) error {
	var names []string
	for _, db := range m.dbs {
		names = append(names, db.Name)
	}
	var err error
	if m.xactBase, m.rowsBase, err = m.counters(ctx); err != nil {
		return err
	}
	runtime.GC()
	var server *benchmark.ServerCPU
	if len(names) > 0 {
		var err error
		if server, err = m.srv.StartServerCPU(ctx, names...); err != nil {
			return err
		}
	}
	if m.profile != "" {
		f, err := os.Create(m.profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	rt0, cpu0, start := m.rt.Load(), benchmark.ProcessCPU(), time.Now()
	err = fn()
	m.elapsed = time.Since(start)
	m.goCPU = benchmark.ProcessCPU() - cpu0
	m.rts = m.rt.Load() - rt0
	if server != nil {
		m.pgCPU = server.Stop(ctx)
		m.active, m.locked = server.Waits()
	}
	return err
}

// finish reads the transactions of the side's databases once its
// connections are closed (a backend reports its counts when it exits).
func (m *pgMeasure) finish(ctx context.Context) error {
	if len(m.dbs) == 0 {
		return nil
	}
	time.Sleep(200 * time.Millisecond)
	total, rows, err := m.counters(ctx)
	if err != nil {
		return err
	}
	m.xacts = total - m.xactBase
	m.rows = rows.Minus(m.rowsBase)
	return nil
}

// counters sums the side's databases' transactions and row work so far.
func (m *pgMeasure) counters(ctx context.Context) (xacts int64, rows benchmark.RowWork, err error) {
	for _, db := range m.dbs {
		x, err := db.Transactions(ctx)
		if err != nil {
			return 0, rows, err
		}
		w, err := db.RowWork(ctx)
		if err != nil {
			return 0, rows, err
		}
		xacts += x
		rows = rows.Plus(w)
	}
	return xacts, rows, nil
}

type pgResult struct {
	perSec, rtPerWf, xactPerWf, goCPU, pgCPU float64 // CPU in µs per workflow
	active, locked                           float64
	versions, hot, indexEntries              float64 // per workflow
}

func (m *pgMeasure) result() pgResult {
	n := float64(m.n)
	return pgResult{
		perSec:    n / m.elapsed.Seconds(),
		rtPerWf:   float64(m.rts) / n,
		xactPerWf: float64(m.xacts) / n,
		goCPU:     float64(m.goCPU.Microseconds()) / n,
		pgCPU:     float64(m.pgCPU.Microseconds()) / n,
		active:    m.active,
		locked:    m.locked,

		versions:     float64(m.rows.Versions) / n,
		hot:          float64(m.rows.HOT) / n,
		indexEntries: float64(m.rows.IndexEntries) / n,
	}
}

func runPostgres(cfg pgConfig) error {
	ctx := context.Background()
	srv, err := benchmark.ConnectPG(ctx, cfg.dsn)
	if err != nil {
		return err
	}
	defer srv.Close()
	sides := []pgSide{
		{"river", "River v0.47 (baseline)", func(ctx context.Context, m *pgMeasure) error { return runRiver(ctx, m, cfg) }},
		{"create", "engine create, 1 instance", func(ctx context.Context, m *pgMeasure) error { return runPGEngine(ctx, m, cfg, 1, false) }},
		{"e2e1", "engine end to end, 1 instance", func(ctx context.Context, m *pgMeasure) error { return runPGEngine(ctx, m, cfg, 1, true) }},
		{"e2e3", fmt.Sprintf("engine end to end, %d instances", cfg.instances), func(ctx context.Context, m *pgMeasure) error {
			return runPGEngine(ctx, m, cfg, cfg.instances, true)
		}},
		{"create3", fmt.Sprintf("engine create, %d instances", cfg.instances), func(ctx context.Context, m *pgMeasure) error {
			return runPGEngine(ctx, m, cfg, cfg.instances, false)
		}},
		{"sqlite", "SQLite engine end to end", func(ctx context.Context, m *pgMeasure) error { return runSQLiteE2E(ctx, m, cfg) }},
		// A diagnostic, measured only when named in -only: what the upkeep
		// of the indexes that only the API's filtered lists read costs.
		{"lean", "e2e 1 instance, list indexes dropped", func(ctx context.Context, m *pgMeasure) error {
			return runPGEngineWith(ctx, m, cfg, 1, true, listIndexes)
		}},
		// Another, also only when named: the most a split schema could
		// gain (see splitIndexes).
		{"split", "e2e 1 instance, split's index work", func(ctx context.Context, m *pgMeasure) error {
			return runPGEngineWith(ctx, m, cfg, 1, true, splitIndexes)
		}},
	}
	if cfg.only == "" {
		sides = slices.DeleteFunc(sides, func(s pgSide) bool { return s.name == "lean" || s.name == "split" })
	} else {
		sides = slices.DeleteFunc(sides, func(s pgSide) bool { return !slices.Contains(splitComma(cfg.only), s.name) })
	}
	fmt.Printf("Postgres suite: n = %d, %d creating goroutines, %d workers, fresh database per side\n", cfg.n, cfg.goroutines, cfg.workers)
	fmt.Printf("round trips: reads following writes on the connections (counting dialer); xacts: pg_stat_database commits + rollbacks\n")
	fmt.Printf("CPU: this process (getrusage) and the server (backends of the side's databases, WAL writer, checkpointer, bgwriter: /proc)\n")
	fmt.Printf("active/locked: mean backends of the side's databases running a statement / of them waiting for a lock (pg_stat_activity every 50 ms)\n")
	fmt.Printf("rows/wf: row versions written (inserts + updates), of the updates heap-only (HOT), index entries written (pg_stat_user_tables)\n")
	fmt.Printf("%-6s %-34s %10s %7s %8s %8s %9s %9s %9s %7s %7s %7s %5s %7s\n", "round", "side", "per s", "ratio", "rt/wf", "xact/wf", "Go µs/wf", "PG µs/wf", "all µs/wf", "active", "locked", "rows/wf", "HOT", "idx/wf")
	var rounds []map[string]pgResult
	for r := 0; r < cfg.rounds; r++ {
		res := map[string]pgResult{}
		for _, s := range sides {
			m := &pgMeasure{srv: srv, n: cfg.n}
			if cfg.cpuprofile != "" {
				m.profile = cfg.cpuprofile + "." + s.name
			}
			err := s.run(ctx, m)
			if err == nil {
				err = m.finish(ctx)
			}
			for _, db := range m.dbs {
				if derr := db.Drop(ctx); derr != nil && err == nil {
					err = derr
				}
			}
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			res[s.name] = m.result()
		}
		for _, s := range sides {
			x := res[s.name]
			ratio := 0.0
			if b, ok := res["river"]; ok {
				ratio = x.perSec / b.perSec
			}
			fmt.Printf("%-6d %-34s %10.0f %6.2fx %8.2f %8.3f %9.0f %9.0f %9.0f %7.2f %7.2f %7.2f %5.2f %7.1f\n", r+1, s.label, x.perSec, ratio, x.rtPerWf, x.xactPerWf, x.goCPU, x.pgCPU, x.goCPU+x.pgCPU, x.active, x.locked, x.versions, x.hot, x.indexEntries)
		}
		rounds = append(rounds, res)
	}
	median := func(get func(map[string]pgResult) float64) float64 { return medianOf(rounds, get) }
	fmt.Printf("median of %d rounds (ratio: median of the per-round ratios):\n", len(rounds))
	for _, s := range sides {
		name := s.name
		ratio := 0.0
		if _, ok := rounds[0]["river"]; ok {
			ratio = median(func(r map[string]pgResult) float64 { return r[name].perSec / r["river"].perSec })
		}
		fmt.Printf("%-6s %-34s %10.0f %6.2fx %8.2f %8.3f %9.0f %9.0f %9.0f %7.2f %7.2f %7.2f %5.2f %7.1f\n", "median", s.label,
			median(func(r map[string]pgResult) float64 { return r[name].perSec }), ratio,
			median(func(r map[string]pgResult) float64 { return r[name].rtPerWf }),
			median(func(r map[string]pgResult) float64 { return r[name].xactPerWf }),
			median(func(r map[string]pgResult) float64 { return r[name].goCPU }),
			median(func(r map[string]pgResult) float64 { return r[name].pgCPU }),
			median(func(r map[string]pgResult) float64 { return r[name].goCPU + r[name].pgCPU }),
			median(func(r map[string]pgResult) float64 { return r[name].active }),
			median(func(r map[string]pgResult) float64 { return r[name].locked }),
			median(func(r map[string]pgResult) float64 { return r[name].versions }),
			median(func(r map[string]pgResult) float64 { return r[name].hot }),
			median(func(r map[string]pgResult) float64 { return r[name].indexEntries }))
	}
	return nil
}

// runPGEngine measures engines on one fresh database: create only (the
// engine not started) or end to end.
func runPGEngine(ctx context.Context, m *pgMeasure, cfg pgConfig, instances int, endToEnd bool) error {
	return runPGEngineWith(ctx, m, cfg, instances, endToEnd, nil)
}

// listIndexes are the indexes of the store that only the API's filtered
// lists (and the dashboard) read: the engine's stages never do.
var listIndexes = []string{"settleflow_workflows_env", "settleflow_workflows_status", "settleflow_workflows_customer",
	"settleflow_workflows_product", "settleflow_events_env", "settleflow_events_type", "settleflow_events_created"}

// splitIndexes are dropped to bound from above what splitting the schema
// would gain: each workflow an immutable row (identity, quote: the
// environment, customer and product list indexes, written once) and a
// state row (status, due time, lease, result, sequence: its primary key and
// the due, status and sequence indexes, written at every state change),
// with events whose delivery is tracked in an outbox row of its own (so
// marking one dispatched is a HOT update). Per workflow the split writes
// about 24 index entries against today's 37; dropping these indexes takes
// today's schema to about the same count (the customer and product indexes
// 4 entries each; the event type, creation and dispatched indexes 5 in
// all) without the split's extra rows and joins, so it runs at least as
// fast as the split would.
var splitIndexes = []string{"settleflow_workflows_customer", "settleflow_workflows_product",
	"settleflow_events_type", "settleflow_events_created", "settleflow_events_dispatched"}

// runPGEngineWith is runPGEngine on a schema without the indexes named
// (dropped once the engines have migrated it): a diagnostic.
func runPGEngineWith(ctx context.Context, m *pgMeasure, cfg pgConfig, instances int, endToEnd bool, drop []string) error {
	db, err := m.database(ctx, "sf_bench_engine")
	if err != nil {
		return err
	}
	var es []*benchmark.Engine
	defer func() {
		for _, e := range es {
			e.Close()
		}
	}()
	for i := 0; i < instances; i++ {
		opts := benchmark.EngineOptions{Workers: cfg.workers, WorkerID: fmt.Sprintf("bench-%d", i+1)}
		if instances > 1 && !cfg.noLease {
			// As the reference server's instances: one settles at a time
			// (the chain has one sender), the others hand it their charges.
			opts.Lease = "settleflow bench: settlement sender"
		}
		e, err := benchmark.OpenPGEngine(ctx, db.DSN, &m.rt, opts)
		if err != nil {
			return err
		}
		if i == 0 && opts.Lease != "" {
			// The first holds the lease before the others start.
			deadline := time.Now().Add(30 * time.Second)
			for !e.Leading() {
				if time.Now().After(deadline) {
					e.Close()
					return fmt.Errorf("the settlement lease was not taken in 30 s")
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		es = append(es, e)
	}
	if len(drop) > 0 {
		if err := m.srv.Exec(ctx, db, "DROP INDEX "+strings.Join(drop, ", ")); err != nil {
			return err
		}
	}
	if err := m.timed(ctx, func() error {
		if endToEnd {
			return benchmark.EndToEndMany(ctx, es, cfg.n, cfg.goroutines)
		}
		return benchmark.CreateLoopMany(ctx, es, cfg.n, cfg.goroutines)
	}); err != nil {
		return err
	}
	return benchmark.VerifyPG(ctx, db.DSN, cfg.n, endToEnd)
}

// runSQLiteE2E is the SQLite engine end to end, measured the same way.
func runSQLiteE2E(ctx context.Context, m *pgMeasure, cfg pgConfig) error {
	dir, err := os.MkdirTemp("", "settleflow-pgbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	e, err := benchmark.OpenSQLiteEngine(filepath.Join(dir, "e2e.db"), sqlite.SyncFull, benchmark.EngineOptions{Workers: cfg.workers})
	if err != nil {
		return err
	}
	defer e.Close()
	return m.timed(ctx, func() error { return benchmark.EndToEnd(ctx, e, cfg.n, cfg.goroutines) })
}

// riverNoop is River's no-op job.
type riverNoop struct{}

func (riverNoop) Kind() string { return "settleflow_bench_noop" }

type riverNoopWorker struct {
	river.WorkerDefaults[riverNoop]
}

func (riverNoopWorker) Work(context.Context, *river.Job[riverNoop]) error { return nil }

// runRiver measures River v0.47 on riverpgxv5: n jobs inserted by the
// creating goroutines, one Insert each, worked by a no-op worker, timed
// until n job-completed events (sent once the completion is stored).
func runRiver(ctx context.Context, m *pgMeasure, cfg pgConfig) error {
	db, err := m.database(ctx, "sf_bench_river")
	if err != nil {
		return err
	}
	pcfg, err := pgxpool.ParseConfig(db.DSN)
	if err != nil {
		return err
	}
	pcfg.ConnConfig.DialFunc = m.rt.Dial
	if cfg.riverConns > 0 {
		pcfg.MaxConns = int32(cfg.riverConns)
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Logger: quiet})
	if err != nil {
		return err
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("river migrate: %w", err)
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &riverNoopWorker{})
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Logger:  quiet,
		Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: cfg.workers}},
		Workers: workers,
	})
	if err != nil {
		return err
	}
	completed, cancel := client.SubscribeConfig(&river.SubscribeConfig{Kinds: []river.EventKind{river.EventKindJobCompleted}, ChanSize: cfg.n + 1000})
	defer cancel()
	if err := client.Start(ctx); err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		client.Stop(sctx) //nolint:errcheck // measured already
	}()
	return m.timed(ctx, func() error {
		return riverInsertAndWait(ctx, client, completed, cfg.n, cfg.goroutines)
	})
}

// riverInsertAndWait inserts n no-op jobs into client from goroutines
// goroutines and returns once n JobCompleted events have come on completed
// (or an insert failed, or 10 minutes passed).
func riverInsertAndWait[TTx any](ctx context.Context, client *river.Client[TTx], completed <-chan *river.Event, n, goroutines int) error {
	errs := benchmark.Fanout(n, goroutines, func(int, int64) error {
		_, err := client.Insert(ctx, riverNoop{}, nil)
		return err
	})
	deadline := time.After(10 * time.Minute)
	for done := 0; done < n; {
		select {
		case ev := <-completed:
			if ev != nil {
				done++
			}
		case err, ok := <-errs:
			if !ok {
				errs = nil // every insert made: wait for the rest to complete
				continue
			}
			return err
		case <-deadline:
			return errors.New("river: not all jobs completed in 10 minutes")
		}
	}
	if errs != nil { // wait for the inserting goroutines
		for err := range errs {
			return err
		}
	}
	return nil
}
