package settleflow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/benchmark"
)

// The benchmarks behind BENCHMARKS.md; `go run ./cmd/bench` prints the same
// figures side by side as a table.

func BenchmarkRawInsertBaseline(b *testing.B) {
	h := benchmark.NewHarness(b, filepath.Join(b.TempDir(), "raw.db"))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := h.RawInsert(context.Background(), i); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCreate(b *testing.B) {
	e := benchmark.NewEngine(b, filepath.Join(b.TempDir(), "engine.db"))
	p := settleflow.CreateParams{Environment: settleflow.Test, Product: benchmark.Product, CustomerID: "cus_bench", Payload: json.RawMessage(`{"units":1}`)}
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := e.Create(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCreateParallel16(b *testing.B) {
	e := benchmark.NewEngine(b, filepath.Join(b.TempDir(), "engine.db"))
	p := settleflow.CreateParams{Environment: settleflow.Test, Product: benchmark.Product, CustomerID: "cus_bench", Payload: json.RawMessage(`{"units":1}`)}
	ctx := context.Background()
	b.SetParallelism(8) // 8 × GOMAXPROCS(2) = 16 goroutines
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, _, err := e.Create(ctx, p); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkCreateParallel16Customers is BenchmarkCreateParallel16 with the
// creates spread over benchmark.FundedCustomers customers (none funded),
// in turn: each batch of the group commit then meets up to 16 customers'
// places in the fair queue instead of one.
func BenchmarkCreateParallel16Customers(b *testing.B) {
	e, err := benchmark.OpenSQLiteEngine(filepath.Join(b.TempDir(), "engine.db"), "", benchmark.EngineOptions{Workers: 512, Customers: benchmark.FundedCustomers})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	ctx := context.Background()
	var next atomic.Int64
	b.SetParallelism(8) // 8 × GOMAXPROCS(2) = 16 goroutines
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		p := settleflow.CreateParams{Environment: settleflow.Test, Product: benchmark.Product, Payload: json.RawMessage(`{"units":1}`)}
		for pb.Next() {
			p.CustomerID = fmt.Sprintf("cus_bench_%02d", next.Add(1)%benchmark.FundedCustomers)
			if _, _, err := e.Create(ctx, p); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkEndToEnd(b *testing.B) {
	e := benchmark.NewEngine(b, filepath.Join(b.TempDir(), "engine.db"))
	b.ResetTimer()
	if err := benchmark.EndToEnd(context.Background(), e, b.N, 64); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkEndToEndFunded is BenchmarkEndToEnd with every charge paid from
// its customer's balance (100 funded customers): admission in the insert,
// the ledger moved when each workflow ends. Compare it with
// BenchmarkEndToEndCustomers, the same creates unfunded.
func BenchmarkEndToEndFunded(b *testing.B) {
	endToEndWith(b, benchmark.EngineOptions{Workers: 512, Funded: true})
}

// BenchmarkEndToEndCustomers is BenchmarkEndToEnd with the creates spread
// over the 100 customers of BenchmarkEndToEndFunded, none of them funded.
func BenchmarkEndToEndCustomers(b *testing.B) {
	endToEndWith(b, benchmark.EngineOptions{Workers: 512, Customers: benchmark.FundedCustomers})
}

func endToEndWith(b *testing.B, opts benchmark.EngineOptions) {
	e, err := benchmark.OpenSQLiteEngine(filepath.Join(b.TempDir(), "engine.db"), "", opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	b.ResetTimer()
	if err := benchmark.EndToEnd(context.Background(), e, b.N, 64); err != nil {
		b.Fatal(err)
	}
}
