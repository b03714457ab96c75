// Command bench measures the engine against a raw bun baseline, side by
// side in one run, on fresh SQLite files with the same settings:
//
//	go run ./cmd/bench [-n 20000] [-rounds 3] [-sync FULL|NORMAL]
//
// It prints, per round and as the median of the rounds: raw bun single-row
// insert transactions per second (the baseline), engine Create per second
// from 1 and from 16 goroutines, and end-to-end workflows per second (no-op
// product, instant settler) from Create to Settled with the
// workflow.completed event handed to the notifier. Ratios are against the
// baseline of the same round, so a noisy machine affects both sides alike.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/settleflow/settleflow/internal/benchmark"
	"github.com/settleflow/settleflow/storage/sqlite"
)

func main() {
	n := flag.Int("n", 20000, "operations per measurement")
	rounds := flag.Int("rounds", 3, "rounds; the median is reported")
	sync := flag.String("sync", "FULL", "SQLite synchronous setting for every side: FULL or NORMAL")
	flag.Parse()
	if err := run(*n, *rounds, sqlite.Synchronous(*sync)); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type result struct{ raw, create1, create16, e2e float64 }

func run(n, rounds int, sync sqlite.Synchronous) error {
	ctx := context.Background()
	var rs []result
	fmt.Printf("%-6s %14s %14s %14s %14s\n", "round", "raw insert/s", "create×1/s", "create×16/s", "end-to-end/s")
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
		for _, m := range []struct {
			out  *float64
			name string
			fn   func(e *benchmark.Engine) error
		}{
			{&res.create1, "c1", func(e *benchmark.Engine) error { return benchmark.CreateLoop(ctx, e, n, 1) }},
			{&res.create16, "c16", func(e *benchmark.Engine) error { return benchmark.CreateLoop(ctx, e, n, 16) }},
			{&res.e2e, "e2e", func(e *benchmark.Engine) error { return benchmark.EndToEnd(ctx, e, n, 64) }},
		} {
			e, err := benchmark.OpenEngine(filepath.Join(dir, m.name+".db"), sync)
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
		fmt.Printf("%-6d %14.0f %14.0f %14.0f %14.0f\n", r+1, res.raw, res.create1, res.create16, res.e2e)
		rs = append(rs, res)
	}
	med := func(get func(result) float64) float64 {
		var v []float64
		for _, r := range rs {
			v = append(v, get(r))
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	ratio := func(get func(result) float64) float64 {
		var v []float64
		for _, r := range rs {
			v = append(v, get(r)/r.raw)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	fmt.Printf("%-6s %14.0f %14.0f %14.0f %14.0f\n", "median", med(func(r result) float64 { return r.raw }),
		med(func(r result) float64 { return r.create1 }), med(func(r result) float64 { return r.create16 }), med(func(r result) float64 { return r.e2e }))
	fmt.Printf("%-6s %14s %13.2fx %13.2fx %13.2fx\n", "ratio", "1.00x",
		ratio(func(r result) float64 { return r.create1 }), ratio(func(r result) float64 { return r.create16 }), ratio(func(r result) float64 { return r.e2e }))
	return nil
}

func measure(n int, fn func() error) (float64, error) {
	start := time.Now()
	if err := fn(); err != nil {
		return 0, err
	}
	return float64(n) / time.Since(start).Seconds(), nil
}
