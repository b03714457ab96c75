package settleflow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/dbcount"
	"github.com/settleflow/settleflow/internal/pgtest"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/storage/bunstore"
	"github.com/settleflow/settleflow/storage/postgres"
	"github.com/settleflow/settleflow/storage/sqlite"
	"github.com/settleflow/settleflow/webhook"
)

// maxWritesPerWorkflow bounds the durable writes (rows changed plus commits:
// see internal/dbcount) one workflow costs from Create to its
// workflow.completed webhook delivered, in a batch of 100: about 6.55 (6.5 on
// Postgres), with a margin. The workflow's row is written three times
// (inserted already claimed, Running, as a worker is free; Settling;
// Settled): on the simulated chain a charge confirms within a
// second, so its pending settlement is never written (showPendingAfter in
// settle.go; it was two updates). The event is written once, already
// dispatched: the webhook deliverer records its delivery in the Settled
// update's own transaction (storage.TxNotifier). The delivery is inserted
// already claimed and updated once, when delivered.
const maxWritesPerWorkflow = 7.2

// TestDurableWritesPerWorkflow counts, on SQLite and Postgres, every row the
// engine and the webhook deliverer change and every commit they make while
// 100 workflows of ten customers go from Create to a delivered webhook, on
// the simulated chain with customer balances, and prints the figure per
// workflow with where the writes go.
func TestDurableWritesPerWorkflow(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) {
		c := dbcount.New()
		store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "settleflow.db"),
			sqlite.OpenOptions{WrapConnector: c.Wrap})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
		countWrites(t, store, c, nil)
	})
	t.Run("Postgres", func(t *testing.T) {
		c := dbcount.New()
		open := pgtest.Connect(t).SchemaWrapped(t, "writes", c.Wrap)
		store, err := postgres.OpenDB(context.Background(), open())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
		// A row a writing CTE changes is not among the rows its statement
		// returns: the rows come from Postgres's own counts instead, once
		// every connection has reported them.
		countWrites(t, store, c, func() map[string]int64 { return pgRowsChanged(t, store) })
	})
}

// pgRowsChanged returns the rows inserted, updated and deleted in each table
// of the store's schema, as Postgres counts them, once the counts have
// stopped changing. A server process reports its counts when it exits (and
// at times while idle): the pool keeps no idle connection meanwhile, so each
// connection's process exits as soon as it is put back.
func pgRowsChanged(t *testing.T, store *bunstore.Store) map[string]int64 {
	t.Helper()
	pool := store.DB().Bun().DB
	pool.SetMaxIdleConns(0)
	defer pool.SetMaxIdleConns(64)
	read := func() map[string]int64 {
		var rows []struct {
			Table string `bun:"relname"`
			N     int64  `bun:"n"`
		}
		if err := store.DB().Bun().NewRaw(`SELECT relname, n_tup_ins + n_tup_upd + n_tup_del AS n
			FROM pg_stat_user_tables WHERE schemaname = current_schema()`).Scan(context.Background(), &rows); err != nil {
			t.Fatal(err)
		}
		out := map[string]int64{}
		for _, r := range rows {
			if r.N != 0 {
				out[r.Table] = r.N
			}
		}
		return out
	}
	last, since := read(), time.Now()
	for time.Since(since) < 1500*time.Millisecond {
		time.Sleep(250 * time.Millisecond)
		if now := read(); !maps.Equal(now, last) {
			last, since = now, time.Now()
		}
	}
	return last
}

// countWrites runs the workflows and checks their writes; rows, if set,
// replaces the counter's rows by table (Postgres).
func countWrites(t *testing.T, store *bunstore.Store, c *dbcount.Counter, rows func() map[string]int64) {
	ctx := context.Background()
	const customers, perCustomer = 10, 10

	var completed atomic.Int64
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev settleflow.Event
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &ev); err == nil && ev.Type == settleflow.EventWorkflowCompleted {
			completed.Add(1)
		}
	}))
	t.Cleanup(receiver.Close)

	chain, err := settlement.NewSimulated(ctx, settlement.SimulatedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { chain.Close() })
	hooks, err := webhook.New(ctx, store.DB(), webhook.Config{PollInterval: 50 * time.Millisecond, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := hooks.CreateEndpoint(ctx, webhook.EndpointParams{Environment: settleflow.Test, URL: receiver.URL}); err != nil {
		t.Fatal(err)
	}
	products := settleflow.NewProducts()
	type job struct {
		N int `json:"n"`
	}
	if err := settleflow.Register(products, settleflow.Product[job]{
		Name:     "job",
		Price:    settleflow.Price{TargetMargin: 3000},
		Estimate: func(job) (int64, error) { return 100, nil },
		Execute: func(context.Context, job) (settleflow.Execution, error) {
			return settleflow.Execution{ActualCost: 90, Result: map[string]bool{"ok": true}}, nil
		},
	}); err != nil {
		t.Fatal(err)
	}
	e, err := settleflow.New(settleflow.Options{
		Store: store, Settler: chain, Notifier: hooks, Products: products,
		Logger: zaptest.NewLogger(t), Workers: 100, BatchSize: 100,
		PollInterval: 50 * time.Millisecond, SettlementPollInterval: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := hooks.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hooks.Stop(context.Background()) })
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Stop(context.Background()) })

	run := func(n int) {
		t.Helper()
		want := completed.Load() + int64(n)
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _, err := e.Create(ctx, settleflow.CreateParams{Environment: settleflow.Test, Product: "job",
					CustomerID: fmt.Sprintf("cus_writes_%d", i%customers), Payload: json.RawMessage(`{"n": 1}`)})
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		waitQuiet(t, e, hooks, func() bool { return completed.Load() >= want })
	}
	// The first workflow of each customer funds it from the test faucet:
	// not what a workflow costs, so it is left out of the count.
	run(customers)
	snapshot := func() dbcount.Counts {
		n := c.Snapshot()
		if rows != nil {
			n.ByStatement, n.Rows = rows(), 0
			for _, v := range n.ByStatement {
				n.Rows += v
			}
		}
		return n
	}
	before := snapshot()
	run(customers * perCustomer)
	got := snapshot().Sub(before)
	per := float64(got.Writes()) / float64(customers*perCustomer)
	n := float64(customers * perCustomer)
	t.Logf("durable writes per workflow from Create to a delivered webhook (%.0f workflows): %.2f (%.2f rows changed, %.2f commits; %.2f statements changed rows); rows by table:\n%s",
		n, per, float64(got.Rows)/n, float64(got.Commits)/n, float64(got.Statements)/n, got)
	if per > maxWritesPerWorkflow {
		t.Errorf("%.2f durable writes per workflow, want at most %.1f", per, maxWritesPerWorkflow)
	}
	// Each workflow's event is written once, already dispatched: the
	// deliverer recorded its delivery in the Settled update's transaction.
	// (Keys are "INSERT settleflow_events" and the like on SQLite, the
	// table alone on Postgres.)
	var events int64
	for k, v := range got.ByStatement {
		if k == "settleflow_events" || strings.HasSuffix(k, " settleflow_events") {
			events += v
		}
	}
	if events != int64(customers*perCustomer) {
		t.Errorf("%d event rows written for %d workflows (one event each), want each written once", events, customers*perCustomer)
	}
}

// waitQuiet waits until done reports true and neither the engine nor the
// webhook deliverer has anything left to do.
func waitQuiet(t *testing.T, e *settleflow.Engine, hooks *webhook.Service, done func() bool) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if done() {
			stages, err := e.Backlog(ctx)
			if err != nil {
				t.Fatal(err)
			}
			wh, err := hooks.Backlog(ctx)
			if err != nil {
				t.Fatal(err)
			}
			quiet := wh.Depth == 0
			for _, s := range stages {
				quiet = quiet && s.Depth == 0
			}
			if quiet {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the engine did not finish its work in time")
}
