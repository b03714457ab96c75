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

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/dbcount"
	"github.com/settleflow/settleflow/internal/pgtest"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/storage/bunstore"
	"github.com/settleflow/settleflow/storage/postgres"
	"github.com/settleflow/settleflow/storage/sqlite"
	"github.com/settleflow/settleflow/webhook"
)

// ownRowsPerWorkflow is the rows one workflow writes, exactly, from Create
// to its workflow.completed webhook delivered, when its charge confirms
// within showPendingAfter: its row three times (inserted already claimed,
// Running, as a worker is free; Settling; Settled: a charge that confirms
// within a second never has its pending settlement written, showPendingAfter
// in internal/stage/settle.go; it was two updates), its event once, already
// dispatched (the webhook deliverer records its delivery in the Settled
// update's own transaction, storage.TxNotifier), and its delivery twice
// (inserted already claimed, as the deliverer has room and the endpoint's
// line is clear; updated once when delivered). By table: ownRows. Load adds
// to two of them, counted exactly apart: a charge pending longer than
// showPendingAfter has its pending settlement written (one update, two if
// its block changes), and a delivery recorded unclaimed, behind others
// waiting for the endpoint, is claimed later (one update).
const ownRowsPerWorkflow = 6

// ownRows is ownRowsPerWorkflow by table.
var ownRows = map[string]int64{"settleflow_workflows": 3, "settleflow_events": 1, "webhook_deliveries": 2}

// maxWritesPerWorkflow bounds the durable writes (rows changed plus commits:
// see internal/dbcount) one workflow costs from Create to its
// workflow.completed webhook delivered, in a batch of 100, leaving out what
// load adds to ownRows (counted exactly apart): about 6.55 (6.5 on
// Postgres) on a quiet machine. Of it, ownRowsPerWorkflow is exact; the
// rest, up to maxSharedWritesPerWorkflow, is the writes workflows share,
// which depend on how many a batch carries.
const maxWritesPerWorkflow = ownRowsPerWorkflow + maxSharedWritesPerWorkflow

// maxSharedWritesPerWorkflow bounds, per workflow, the writes that batches
// of workflows share: commits (a group commit of Creates, a batch of
// updates), the customers' accounts (reserved at Create, charged at
// Settled: one row per customer in a batch), the settlement sequences, the
// funds cursors and history and the webhook lanes. How many workflows a
// batch carries depends on timing, so this is a bound and not a count:
// 0.45 to 0.72 measured alone, up to 0.96 with the machine loaded (load
// average 12 to 15 on 2 cores: commits 0.39, accounts 0.40, lanes 0.20 at
// worst); without batching it would be 3 or more (a commit each for Create,
// Settling and Settled).
const maxSharedWritesPerWorkflow = 1.5

// TestDurableWritesPerWorkflow counts, on SQLite and Postgres, every row the
// engine and the webhook deliverer change and every commit they make while
// 100 workflows of ten customers go from Create to a delivered webhook, on
// the simulated chain with customer balances, and prints the figure per
// workflow with where the writes go. The rows of the workflows' own tables
// are checked exactly (ownRows), with what a loaded machine adds counted
// apart: the writes of charges pending longer than showPendingAfter, seen
// from the Store's side and checked to come no sooner than that, and the
// claims of deliveries recorded unclaimed, from the deliverer's log.
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
	// The deliverer's log says how many deliveries each recording
	// inserted claimed: the others are claimed later, an update each.
	obs, logs := observer.New(zap.DebugLevel)
	claimedAtInsert := func() (n int64) {
		for _, e := range logs.FilterMessage("webhook deliveries recorded").All() {
			v, ok := e.ContextMap()["claimed"].(int64)
			if !ok {
				t.Fatalf("the deliverer's log %q has no claimed count: %v", e.Message, e.ContextMap())
			}
			n += v
		}
		return n
	}
	hookLog := zaptest.NewLogger(t, zaptest.WrapOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core { return zapcore.NewTee(c, obs) })))
	hooks, err := webhook.New(ctx, store.DB(), webhook.Config{PollInterval: 50 * time.Millisecond, Logger: hookLog})
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
	// The Store records the updates that keep a workflow Settling (a
	// pending settlement written, a lease renewed) and when each workflow
	// moved to Settling.
	ps := &pendingWritesStore{Store: store, writes: map[string][]settleflow.Update{},
		holds: map[string][]settleflow.Update{}, settling: map[string]time.Time{}}
	e, err := settleflow.New(settleflow.Options{
		Store: ps, Settler: chain, Notifier: hooks, Products: products,
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

	// run creates n workflows and waits for their webhooks; it returns
	// their IDs.
	run := func(n int) []string {
		t.Helper()
		want := completed.Load() + int64(n)
		var wg sync.WaitGroup
		errs := make(chan error, n)
		ids := make(chan string, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				w, _, err := e.Create(ctx, settleflow.CreateParams{Environment: settleflow.Test, Product: "job",
					CustomerID: fmt.Sprintf("cus_writes_%d", i%customers), Payload: json.RawMessage(`{"n": 1}`)})
				errs <- err
				if err == nil {
					ids <- w.ID
				}
			}()
		}
		wg.Wait()
		close(errs)
		close(ids)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		waitQuiet(t, e, hooks, func() bool { return completed.Load() >= want })
		var out []string
		for id := range ids {
			out = append(out, id)
		}
		return out
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
	before, claimedBefore := snapshot(), claimedAtInsert()
	ids := run(customers * perCustomer)
	got := snapshot().Sub(before)
	n := float64(customers * perCustomer)
	// One delivery per workflow (one endpoint): those not inserted claimed.
	lateClaims := int64(n) - (claimedAtInsert() - claimedBefore)
	if lateClaims < 0 {
		t.Fatalf("%d deliveries inserted claimed for %.0f workflows", int64(n)-lateClaims, n)
	}

	// The writes of charges pending longer than showPendingAfter: each
	// comes no sooner than that after its workflow's move to Settling
	// (the charge is submitted after it).
	var holds, early int64
	ps.mu.Lock()
	for _, id := range ids {
		for _, u := range ps.holds[id] {
			holds++
			if after := u.UpdatedAt.Sub(ps.settling[id]); ps.settling[id].IsZero() || after < showPendingAfter {
				if early++; early == 1 {
					t.Errorf("%s: written while Settling (settlement %+v) %s after its move to Settling, want none sooner than %s",
						id, u.Settlement, after, showPendingAfter)
				}
			}
		}
	}
	ps.mu.Unlock()
	if early > 1 {
		t.Errorf("%d writes to %d Settling workflows came sooner than %s after their move to Settling", early, len(ids), showPendingAfter)
	}

	// Rows by table (keys are "INSERT settleflow_events" and the like on
	// SQLite, the table alone on Postgres): the workflows' own tables
	// exactly, the rest shared.
	byTable := map[string]int64{}
	var own int64
	for k, v := range got.ByStatement {
		table := k[strings.LastIndexByte(k, ' ')+1:]
		byTable[table] += v
		if ownRows[table] != 0 {
			own += v
		}
	}
	for table, each := range ownRows {
		want, pending := each*int64(n), ""
		switch table {
		case "settleflow_workflows":
			want += holds
			pending = fmt.Sprintf(", plus %d writes of charges pending over %s", holds, showPendingAfter)
		case "webhook_deliveries":
			want += lateClaims
			pending = fmt.Sprintf(", plus %d claims of deliveries inserted unclaimed", lateClaims)
		}
		if byTable[table] != want {
			t.Errorf("%d rows of %s written for %.0f workflows, want %d: %d each%s", byTable[table], table, n, want, each, pending)
		}
	}
	shared := got.Writes() - own
	per := float64(got.Writes()-holds-lateClaims) / n
	t.Logf("durable writes per workflow from Create to a delivered webhook (%.0f workflows): %.2f (%.2f rows changed, %.2f commits; %.2f statements changed rows); "+
		"of them %.2f in the workflows' own tables (%d ownRowsPerWorkflow, %.2f of charges pending over %s, %.2f late delivery claims), %.2f shared; rows by table:\n%s",
		n, float64(got.Writes())/n, float64(got.Rows)/n, float64(got.Commits)/n, float64(got.Statements)/n,
		float64(own)/n, ownRowsPerWorkflow, float64(holds)/n, showPendingAfter, float64(lateClaims)/n, float64(shared)/n, got)
	if s := float64(shared) / n; s > maxSharedWritesPerWorkflow {
		t.Errorf("%.2f shared writes per workflow (commits, accounts, sequences, funds, webhook lanes), want at most %.1f", s, maxSharedWritesPerWorkflow)
	}
	if per > maxWritesPerWorkflow {
		t.Errorf("%.2f durable writes per workflow, leaving out %d of charges pending over %s and %d late delivery claims, want at most %.1f",
			per, holds, showPendingAfter, lateClaims, maxWritesPerWorkflow)
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
