package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/storage/sqlite"
)

// BenchmarkInsertWorkflows measures the store's insert of a batch of new
// workflows (one transaction per batch), per workflow, at batch sizes the
// engine's group commit produces.
func BenchmarkInsertWorkflows(b *testing.B) {
	for _, sync := range []sqlite.Synchronous{sqlite.SyncFull, sqlite.SyncNormal} {
		for _, n := range []int{1, 8, 32} {
			b.Run(fmt.Sprintf("sync=%s/batch=%d", sync, n), func(b *testing.B) {
				ctx := context.Background()
				s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), sqlite.OpenOptions{Synchronous: sync})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				b.ResetTimer()
				for done := 0; done < b.N; done += n {
					if _, err := s.InsertWorkflows(ctx, newInserts(n)); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkGetWorkflow measures a read of one workflow by id, the store's
// half of GET /v1/workflows/{id}, from 2 goroutines.
func BenchmarkGetWorkflow(b *testing.B) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), sqlite.OpenOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ins := newInserts(1000)
	if _, err := s.InsertWorkflows(ctx, ins); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	b.SetParallelism(1)
	var n atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id := ins[n.Add(1)%int64(len(ins))].Workflow.ID
			if _, err := s.GetWorkflow(ctx, settleflow.Test, id); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// newInserts returns n new Pending workflows to insert.
func newInserts(n int) []settleflow.Insert {
	now := time.Now().UTC().Truncate(time.Microsecond)
	ins := make([]settleflow.Insert, n)
	for i := range ins {
		ins[i] = settleflow.Insert{Workflow: &settleflow.Workflow{
			ID: ids.New(ids.Workflow, now), Object: "workflow", Product: "noop", CustomerID: "cus_bench",
			Payload: []byte(`{"units":1}`), Quoted: settleflow.Money{Amount: 143, Currency: settleflow.Currency},
			Margin: settleflow.Margin{Target: 3000}, Status: settleflow.Pending, CreatedAt: now, UpdatedAt: now,
		}}
	}
	return ins
}
