// Command bench measures settleflow against baselines run side by side in
// the same process, so a noisy machine affects both sides alike.
//
//	go run ./cmd/bench [-suite engine|http] [-n 20000] [-rounds 3] [-sync FULL|NORMAL]
//	go run ./cmd/bench -suite http [-rounds 3] [-duration 5s] [-turns 5] [-connections 32]
//	go run ./cmd/bench -suite pipeline [-n 10000] [-rounds 3] [-connections 32] [-rate 500] [-steady 30s]
//	go run ./cmd/bench -suite pipeline -postgres DSN [-instances 3] [-geth PATH] ...
//	go run ./cmd/bench -suite postgres [-postgres DSN] [-n 20000] [-rounds 3] [-workers 1000] [-goroutines 16]
//	go run ./cmd/bench -suite sqlite [-n 20000] [-rounds 3] [-workers 1000] [-goroutines 16]
//	go run ./cmd/bench -suite fairness [-n 20000] [-rounds 3] [-duration 20s] [-work 100ms] [-fair-workers 100] [-sync FULL|NORMAL]
//	go run ./cmd/bench -suite workers [-python 4] [-python-concurrency 8] [-n 20000] [-rounds 3] [-probes 50] [-connections 32]
//	go run ./cmd/bench -suite workers -postgres DSN [-instances 3] [-geth PATH] [-python 4] [-n 2000] [-probes 50] ...
//	go run ./cmd/bench -suite x402 [-n 200] [-rounds 3] [-connections 8]
//
// -suite x402: paid creates (POST /x402/workflows with an x402 exact
// payment, signed in Go) beside keyed creates (POST /v1/workflows with an
// API key) of one fixed-price product, on one engine, HTTPS server and
// simulated chain, in alternating turns of the same rounds: creates per
// second of each and their ratio; see x402.go.
//
// -suite workers: a no-op declared product in process beside the same
// product served by -python Python worker processes, verified webhooks per
// second of each and the idle worker's create→handler latency; see
// workers.go. With -postgres, the remote side only, on one reference server
// and on -instances (3) on one Postgres database and a geth --dev chain,
// and an idle claim on one instance answered with a task created on
// another; see remote.go.
//
// -suite fairness: nine light customers' create→Settled latency on an idle
// engine and behind another customer's burst of -n; see fairness.go.
//
// -suite sqlite: River v0.47 on its SQLite driver (riversqlite) beside the
// engine end to end on SQLite, both at synchronous=FULL in WAL mode, each on
// a fresh database, in the same round; see sqlite.go. (-river-conns sets
// River's MaxOpenConns there, default 1 as riversqlite advises.)
//
// -suite postgres: River v0.47 (riverpgxv5) as the baseline beside the engine
// on Postgres (create only; end to end with 1 and with -instances engines
// sharing one database) and the SQLite engine end to end, each on a fresh
// database, in the same round; see postgres.go.
//
// -suite pipeline: the reference server in its own process, create over
// HTTPS to verified webhook; see pipeline.go.
//
// -suite http: the HTTP API over TLS on loopback against a no-op handler
// behind the same TLS server (the baseline): requests/s and p50/p99 latency
// of POST /v1/workflows and GET /v1/workflows/{id}. The load generator is
// this command: Go's net/http client, -connections keep-alive HTTP/1.1
// connections, each sending its next request as soon as the last answered.
// Within a round the baseline and the targets take -turns turns of
// -duration/-turns each, so a change in the machine's load falls on all.
//
// -suite engine (the default):
// It prints, per round and as the median of the rounds: raw bun single-row
// insert transactions per second (the baseline), engine Create per second
// from 1 and from 16 goroutines, and end-to-end workflows per second (no-op
// product, instant settler) from Create to Settled with the
// workflow.completed event handed to the notifier. Ratios are against the
// baseline of the same round, so a noisy machine affects both sides alike.
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/settleflow/settleflow/internal/benchmark"
	"github.com/settleflow/settleflow/storage/sqlite"
)

func main() {
	n := flag.Int("n", 20000, "operations per measurement")
	rounds := flag.Int("rounds", 3, "rounds; the median is reported")
	sync := flag.String("sync", "FULL", "SQLite synchronous setting for every side: FULL or NORMAL")
	suite := flag.String("suite", "engine", "engine, http, pipeline, postgres, sqlite, fairness, workers or x402")
	workers := flag.Int("workers", 1000, "postgres: River's MaxWorkers and the engine's Options.Workers")
	goroutines := flag.Int("goroutines", 16, "postgres: creating (inserting) goroutines of every side")
	riverConns := flag.Int("river-conns", 0, "postgres: River's pgxpool MaxConns (0: pgxpool's default)")
	instances := flag.Int("instances", 0, "postgres: engines of the multi-instance side (default 3); pipeline with -postgres: reference servers sharing the database, creates round-robin over them (default 1)")
	noLease := flag.Bool("no-lease", false, "postgres: the engines of the multi-instance side settle without the settlement lease (each its own charges; by default one holds the lease and settles for all, as the reference server's instances do)")
	only := flag.String("only", "", "postgres: measure only these sides (comma-separated: river,create,e2e1,e2e3,create3,sqlite; and two diagnostics measured only when named: lean, end to end with the indexes only the API's lists read dropped; split, end to end with at most the index work of a split schema)")
	rate := flag.Int("rate", 500, "pipeline: offered creates per second of the steady phase")
	steady := flag.Duration("steady", 30*time.Second, "pipeline: length of the steady phase (0 to skip it)")
	serverBin := flag.String("server-bin", "", "pipeline: reference server `binary` (default: built from ./examples/server)")
	keep := flag.Bool("keep", false, "pipeline: keep each round's data directory and server log")
	duration := flag.Duration("duration", 5*time.Second, "http: length of each load run")
	connections := flag.Int("connections", 32, "http: keep-alive connections")
	turns := flag.Int("turns", 5, "http: turns the targets take within a round")
	pgDSN := flag.String("postgres", "", "http: also measure create and fetch on a Postgres store, on the server at this `DSN` (in a schema of its own, dropped after); postgres: the server (default "+defaultPGDSN+"), a fresh database per side; pipeline: run the servers on this Postgres server (a fresh database each round) and settle on a geth --dev chain (-geth)")
	geth := flag.String("geth", os.Getenv("SETTLEFLOW_GETH"), "pipeline with -postgres: the geth `binary` for the shared chain (settlement/scripts/install-geth.sh builds it)")
	diagnose := flag.Bool("diagnose", false, "http: also measure create with commits not flushed (synchronous=NORMAL) and with a store that discards inserts, to show where create's time goes")
	customers := flag.Int("customers", benchmark.FundedCustomers, fmt.Sprintf("engine: customers the funded end to end and its unfunded baseline spread their creates over (1 to %d)", benchmark.FundedCustomers))
	python := flag.Int("python", 4, "workers: Python worker processes serving the remote side")
	pyConcurrency := flag.Int("python-concurrency", 8, "workers: each Python worker's concurrency (tasks at once)")
	pyprofile := flag.String("python-profile", "", "workers: profile the Python workers (cProfile, every thread) into `path`.PID")
	probes := flag.Int("probes", 50, "workers: workflows created one at a time on idle workers, per round and side, for the create→handler latency")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile to `file` (http: one per target, of its last turn, to file.noop, file.create, file.fetch, file.settled; workers: one per side, of its burst, to file.inprocess, file.remote)")
	flag.Parse()
	if *suite == "x402" {
		set := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
		c := x402Config{n: 200, rounds: *rounds, connections: 8}
		if set["n"] {
			c.n = *n
		}
		if set["connections"] {
			c.connections = *connections
		}
		if err := runX402(c); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *suite == "fairness" {
		if err := runFairness(fairConfig{n: *n, rounds: *rounds, sync: sqlite.Synchronous(*sync), duration: *duration, cpuprofile: *cpuprofile}); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *suite == "workers" {
		c := workersConfig{n: *n, rounds: *rounds, connections: *connections, python: *python,
			concurrency: *pyConcurrency, probes: *probes, cpuprofile: *cpuprofile, pyprofile: *pyprofile}
		run := func() error { return runWorkers(c) }
		if *pgDSN != "" {
			run = func() error {
				return runWorkersPostgres(c, pipelineConfig{pgDSN: *pgDSN, geth: *geth, serverBin: *serverBin, instances: cmp.Or(*instances, 3)})
			}
		}
		if err := run(); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *suite == "postgres" {
		dsn := *pgDSN
		if dsn == "" {
			dsn = defaultPGDSN
		}
		if err := runPostgres(pgConfig{dsn: dsn, n: *n, rounds: *rounds, goroutines: *goroutines, workers: *workers,
			riverConns: *riverConns, instances: cmp.Or(*instances, 3), cpuprofile: *cpuprofile, only: *only, noLease: *noLease}); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *suite == "sqlite" {
		if err := runSQLite(sqliteConfig{n: *n, rounds: *rounds, goroutines: *goroutines, workers: *workers, riverConns: cmp.Or(*riverConns, 1)}); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *suite == "pipeline" {
		if err := runPipeline(pipelineConfig{n: *n, rounds: *rounds, connections: *connections, rate: *rate,
			steady: *steady, serverBin: *serverBin, keep: *keep, instances: cmp.Or(*instances, 1), pgDSN: *pgDSN, geth: *geth}); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *suite == "http" {
		if err := runHTTP(*rounds, *duration, *turns, *connections, *cpuprofile, *diagnose, *pgDSN); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	if err := run(*n, *rounds, *customers, sqlite.Synchronous(*sync)); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// defaultPGDSN is the Postgres suite's server.
const defaultPGDSN = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

func splitComma(s string) []string { return strings.Split(s, ",") }

type result struct{ raw, create1, create16, e2e, e2eSpread, e2eFunded float64 }

func run(n, rounds, customers int, sync sqlite.Synchronous) error {
	if customers < 1 || customers > benchmark.FundedCustomers {
		return fmt.Errorf("-customers %d: want 1 to %d", customers, benchmark.FundedCustomers)
	}
	ctx := context.Background()
	var rs []result
	fmt.Printf("%-6s %14s %14s %14s %14s %14s %14s\n", "round", "raw insert/s", "create×1/s", "create×16/s", "end-to-end/s", fmt.Sprintf("e2e ×%d cus/s", customers), "funded e2e/s")
	for r := 0; r < rounds; r++ {
		dir, err := os.MkdirTemp("", "settleflow-bench-")
		if err != nil {
			return err
		}
		var res result
		res.raw, err = measure(n, func() error {
			raw, err := benchmark.OpenRaw(filepath.Join(dir, "raw.db"), sync)
			if err != nil {
				return err
			}
			defer raw.Close()
			for i := 0; i < n; i++ {
				if err := raw.RawInsert(ctx, i); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		e2e := func(e *benchmark.Engine) error { return benchmark.EndToEnd(ctx, e, n, 64) }
		for _, m := range []struct {
			out       *float64
			name      string
			funded    bool
			customers int
			fn        func(e *benchmark.Engine) error
		}{
			{&res.create1, "c1", false, 0, func(e *benchmark.Engine) error { return benchmark.CreateLoop(ctx, e, n, 1) }},
			{&res.create16, "c16", false, 0, func(e *benchmark.Engine) error { return benchmark.CreateLoop(ctx, e, n, 16) }},
			{&res.e2e, "e2e", false, 0, e2e},
			// The same end to end with the creates spread over the
			// funded run's customers (-customers): the baseline that run
			// is compared with (the fair queue takes customers in turn,
			// which costs something of its own).
			{&res.e2eSpread, "e2e100", false, customers, e2e},
			// The same end to end with every charge paid from its
			// customer's balance: each create admitted against it and
			// reserving it, each settlement turning the reservation into
			// a debit.
			{&res.e2eFunded, "e2ef", true, customers, e2e},
		} {
			e, err := benchmark.OpenSQLiteEngine(filepath.Join(dir, m.name+".db"), sync,
				benchmark.EngineOptions{Workers: 512, Funded: m.funded, Customers: m.customers})
			if err != nil {
				return err
			}
			*m.out, err = measure(n, func() error { return m.fn(e) })
			e.Close()
			if err != nil {
				return err
			}
		}
		os.RemoveAll(dir)
		fmt.Printf("%-6d %14.0f %14.0f %14.0f %14.0f %14.0f %14.0f\n", r+1, res.raw, res.create1, res.create16, res.e2e, res.e2eSpread, res.e2eFunded)
		rs = append(rs, res)
	}
	med := func(get func(result) float64) float64 { return medianOf(rs, get) }
	ratio := func(get func(result) float64) float64 {
		return medianOf(rs, func(r result) float64 { return get(r) / r.raw })
	}
	fmt.Printf("%-6s %14.0f %14.0f %14.0f %14.0f %14.0f %14.0f\n", "median", med(func(r result) float64 { return r.raw }),
		med(func(r result) float64 { return r.create1 }), med(func(r result) float64 { return r.create16 }), med(func(r result) float64 { return r.e2e }),
		med(func(r result) float64 { return r.e2eSpread }), med(func(r result) float64 { return r.e2eFunded }))
	fmt.Printf("%-6s %14s %13.2fx %13.2fx %13.2fx %13.2fx %13.2fx\n", "ratio", "1.00x",
		ratio(func(r result) float64 { return r.create1 }), ratio(func(r result) float64 { return r.create16 }), ratio(func(r result) float64 { return r.e2e }),
		ratio(func(r result) float64 { return r.e2eSpread }), ratio(func(r result) float64 { return r.e2eFunded }))
	fmt.Printf("funded end to end / end to end over the same %d customers (median of the rounds' ratios): %.3f\n",
		customers, med(func(r result) float64 { return r.e2eFunded / r.e2eSpread }))
	fmt.Printf("end to end over %d customers / over one (median of the rounds' ratios): %.3f\n",
		customers, med(func(r result) float64 { return r.e2eSpread / r.e2e }))
	return nil
}

func measure(n int, fn func() error) (float64, error) {
	start := time.Now()
	if err := fn(); err != nil {
		return 0, err
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

func runHTTP(rounds int, d time.Duration, turns, connections int, cpuprofile string, diagnose bool, pgDSN string) error {
	ctx := context.Background()
	// load runs one target, under a CPU profile of its own when asked
	// (appended to across rounds is not possible, so the last round's wins).
	load := func(name string, a *benchmark.API, want int, newReq func(int) (*http.Request, error)) (benchmark.LoadResult, error) {
		if cpuprofile != "" {
			f, err := os.Create(cpuprofile + "." + name)
			if err != nil {
				return benchmark.LoadResult{}, err
			}
			defer f.Close()
			if err := pprof.StartCPUProfile(f); err != nil {
				return benchmark.LoadResult{}, err
			}
			defer pprof.StopCPUProfile()
		}
		return benchmark.Load(ctx, a, d/time.Duration(turns), connections, want, newReq)
	}
	fmt.Printf("%d keep-alive connections, %s per target and round in %d turns, TLS 1.3 on loopback\n", connections, d, turns)
	fmt.Printf("%-6s %-28s %12s %10s %10s %8s\n", "round", "target", "requests/s", "p50", "p99", "ratio")
	// Each round's results by target name.
	var rows []map[string]benchmark.LoadResult
	var order []string
	labels := map[string]string{
		"noop": "no-op handler", "create": "POST /v1/workflows", "fetch": "GET (Pending)",
		"shared": "GET (Pending, SQLite)", "settled": "GET (Settled)",
		"create-normal": "POST, synchronous=NORMAL", "create-discard": "POST, inserts discarded",
		"create-pg": "POST, Postgres", "fetch-pg": "GET (Pending, Postgres)",
	}
	for r := 0; r < rounds; r++ {
		dir, err := os.MkdirTemp("", "settleflow-httpbench-")
		if err != nil {
			return err
		}
		noop, err := benchmark.StartNoop()
		if err != nil {
			return err
		}
		api, err := benchmark.StartAPI(dir, benchmark.APIOptions{Exclusive: true})
		if err != nil {
			return err
		}
		// Fetching workflows in flight on the same database opened shared:
		// no cache, every fetch reads SQLite.
		shared, err := benchmark.StartAPI(filepath.Join(dir, "shared"), benchmark.APIOptions{})
		if err != nil {
			return err
		}
		sharedIDs, err := shared.Seed(1000)
		if err != nil {
			return err
		}
		// Fetching settled workflows, on an API whose workers ran.
		api2, err := benchmark.StartAPI(filepath.Join(dir, "settled"), benchmark.APIOptions{Exclusive: true})
		if err != nil {
			return err
		}
		done, err := api2.Seed(1000)
		if err != nil {
			return err
		}
		if err := api2.Settle(ctx, done); err != nil {
			return err
		}
		apis := []*benchmark.API{noop, api, shared, api2}
		var ids []string
		type target struct {
			name   string
			api    *benchmark.API
			want   int
			newReq func(int) (*http.Request, error)
		}
		targets := []target{
			{"noop", noop, 200, noop.NoopRequest},
			{"create", api, 201, api.CreateRequest},
			{"fetch", api, 200, func(i int) (*http.Request, error) { return api.FetchRequest(ids[i%len(ids)]) }},
			{"shared", shared, 200, func(i int) (*http.Request, error) { return shared.FetchRequest(sharedIDs[i%len(sharedIDs)]) }},
			{"settled", api2, 200, func(i int) (*http.Request, error) { return api2.FetchRequest(done[i%len(done)]) }},
		}
		if diagnose {
			// Where create's time goes: the same API whose commits are
			// not flushed, and one whose store keeps nothing.
			normal, err := benchmark.StartAPI(filepath.Join(dir, "normal"), benchmark.APIOptions{Exclusive: true, Synchronous: sqlite.SyncNormal})
			if err != nil {
				return err
			}
			discard, err := benchmark.StartAPI(filepath.Join(dir, "discard"), benchmark.APIOptions{Exclusive: true, DiscardInserts: true})
			if err != nil {
				return err
			}
			apis = append(apis, normal, discard)
			targets = append(targets, target{"create-normal", normal, 201, normal.CreateRequest},
				target{"create-discard", discard, 201, discard.CreateRequest})
		}
		var pgIDs []string
		if pgDSN != "" {
			pg, err := benchmark.StartAPI("", benchmark.APIOptions{PostgresDSN: pgDSN})
			if err != nil {
				return err
			}
			if pgIDs, err = pg.Seed(1000); err != nil {
				return err
			}
			apis = append(apis, pg)
			targets = append(targets, target{"create-pg", pg, 201, pg.CreateRequest},
				target{"fetch-pg", pg, 200, func(i int) (*http.Request, error) { return pg.FetchRequest(pgIDs[i%len(pgIDs)]) }})
		}
		// The targets take turns, `turns` times each, so that a change in
		// the machine's load during the round falls on all of them alike.
		// The in-flight workflows fetched from the exclusive API are created
		// just before each turn, as a client polls what it just created
		// (the creates of the turn before would otherwise have pushed them
		// out of the store's memory).
		parts := map[string][]benchmark.LoadResult{}
		for i := 0; i < turns; i++ {
			for _, t := range targets {
				if t.name == "fetch" {
					if ids, err = api.Seed(1000); err != nil {
						return err
					}
				}
				res, err := load(t.name, t.api, t.want, t.newReq)
				if err != nil {
					return err
				}
				parts[t.name] = append(parts[t.name], res)
			}
		}
		res := map[string]benchmark.LoadResult{}
		order = order[:0]
		for _, t := range targets {
			res[t.name] = benchmark.Merge(parts[t.name]...)
			order = append(order, t.name)
		}
		for _, a := range apis {
			a.Close()
		}
		os.RemoveAll(dir)
		for _, name := range order {
			x := res[name]
			fmt.Printf("%-6d %-28s %12.0f %10s %10s %7.2fx\n", r+1, labels[name], x.PerSecond(), x.P50.Round(time.Microsecond), x.P99.Round(time.Microsecond), x.PerSecond()/res["noop"].PerSecond())
		}
		rows = append(rows, res)
	}
	ratio := func(name string) float64 {
		return medianOf(rows, func(r map[string]benchmark.LoadResult) float64 { return r[name].PerSecond() / r["noop"].PerSecond() })
	}
	fmt.Printf("median ratio: create %.2fx, fetch of a Pending workflow %.2fx (%.2fx read from SQLite), of a Settled one %.2fx of the no-op baseline\n",
		ratio("create"), ratio("fetch"), ratio("shared"), ratio("settled"))
	if pgDSN != "" {
		fmt.Printf("on Postgres: create %.2fx, fetch of a Pending workflow %.2fx\n", ratio("create-pg"), ratio("fetch-pg"))
	}
	if diagnose {
		fmt.Printf("diagnosis: create %.2fx with commits not flushed (synchronous=NORMAL), %.2fx with inserts discarded (the API without its database)\n",
			ratio("create-normal"), ratio("create-discard"))
	}
	return nil
}

// medianOf returns the median of get over rounds (the upper one of an even
// count): each figure of a median row is the median of the rounds' own.
func medianOf[R any, V cmp.Ordered](rounds []R, get func(R) V) V {
	v := make([]V, len(rounds))
	for i, r := range rounds {
		v[i] = get(r)
	}
	slices.Sort(v)
	return v[len(v)/2]
}
