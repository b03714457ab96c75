package postgres_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/internal/pgtest"
	"github.com/settleflow/settleflow/storage/postgres"
)

// Three Stores (three pools, as three instances have) on one database: of
// 100 concurrent reserving inserts for one customer whose balance covers 10,
// exactly 10 are admitted, and the account reserves exactly their quotes.
func TestAdmissionAcrossThreeInstances(t *testing.T) {
	ctx := context.Background()
	open := pgtest.Connect(t).Schema(t, "sf_funds3")
	var stores []settleflow.Store
	for range 3 {
		s, err := postgres.OpenDB(ctx, open())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores = append(stores, s)
	}
	at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	res, err := stores[0].ApplyFunds(ctx, settleflow.FundsBatch{Environment: settleflow.Test, To: settleflow.FundsCursor{Block: 1, Hash: "0x1"},
		Events: []settleflow.FundsEvent{{Kind: settleflow.FundsDeposit, Ref: "0xc", Amount: 10 * 500, TxHash: "0xd"}}, UpdatedAt: at})
	if err != nil || !res.Applied {
		t.Fatal(res, err)
	}
	var admitted, refused atomic.Int64
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			now := at.Add(time.Duration(i) * time.Millisecond)
			w := &settleflow.Workflow{ID: ids.New(ids.Workflow, now), Object: "workflow", Product: "p", CustomerID: "cus_c",
				Payload: json.RawMessage(`{}`), Quoted: settleflow.Money{Amount: 500, Currency: "usd"}, Status: settleflow.Pending,
				Refunded: settleflow.Money{Currency: "usd"}, CreatedAt: now, UpdatedAt: now}
			res, err := stores[i%3].InsertWorkflows(ctx, []settleflow.Insert{{Workflow: w, Reserve: true, Ref: "0xc"}})
			switch {
			case err != nil:
				t.Error(err)
			case res[0].Insufficient != nil:
				refused.Add(1)
			default:
				admitted.Add(1)
			}
		}()
	}
	wg.Wait()
	if admitted.Load() != 10 || refused.Load() != 90 {
		t.Fatalf("admitted %d, refused %d; want 10 and 90", admitted.Load(), refused.Load())
	}
	a, err := stores[1].GetAccount(ctx, settleflow.Test, "cus_c", "0xc")
	if err != nil || a.Reserved != 10*500 || a.Available() != 0 {
		t.Fatalf("account %+v %v", a, err)
	}
	var n int
	if err := open().QueryRowContext(ctx, `SELECT count(*) FROM settleflow_workflows WHERE reserved = 500`).Scan(&n); err != nil || n != 10 {
		t.Fatalf("%d reserving workflows stored (%v), want 10", n, err)
	}
}
