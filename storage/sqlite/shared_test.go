package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/apikey"
	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/storage/bunstore"
	"github.com/settleflow/settleflow/storage/sqlite"
	"github.com/settleflow/settleflow/webhook"
)

// One database, three packages writing: the workflow store, apikey (a key's
// last-used time) and webhook (delivery records and attempts) all write
// through the store's handle, so on SQLite their writes go through one
// writer. Under concurrent load none meets SQLITE_BUSY (every write
// succeeds, on synchronous=FULL), and they share commits: far fewer
// transactions than writes.
func TestPackagesShareTheWriter(t *testing.T) {
	ctx := context.Background()
	store, keys := openStoreAndKeys(t, sqlite.OpenOptions{Exclusive: true})
	db := store.DB()
	var (
		mu       sync.Mutex
		received int
	)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		received++
		mu.Unlock()
	}))
	defer recv.Close()
	hooks, err := webhook.New(ctx, db, webhook.Config{PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := hooks.CreateEndpoint(ctx, webhook.EndpointParams{Environment: settleflow.Test, URL: recv.URL}); err != nil {
		t.Fatal(err)
	}
	if err := hooks.Start(ctx); err != nil {
		t.Fatal(err)
	}

	const nKeys, nWorkflows, nEvents = 40, 400, 100
	secrets := make([]string, nKeys)
	for i := range secrets {
		_, secrets[i], err = keys.Create(ctx, apikey.CreateParams{Environment: settleflow.Test, Name: fmt.Sprint("k", i)})
		if err != nil {
			t.Fatal(err)
		}
	}

	before := db.Commits()
	errs := make(chan error, nWorkflows+nKeys+nEvents)
	var wg sync.WaitGroup
	for i := range nWorkflows {
		wg.Go(func() {
			w := workflow(i)
			_, err := store.InsertWorkflows(ctx, []settleflow.Insert{{Workflow: w}})
			errs <- err
		})
	}
	for _, s := range secrets {
		wg.Go(func() {
			_, err := keys.Authenticate(ctx, "Bearer "+s) // writes last_used_at
			errs <- err
		})
	}
	for i := range nEvents {
		wg.Go(func() {
			errs <- hooks.Notify(ctx, []settleflow.Event{event(i)}) // writes a delivery
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a write failed under load: %v", err)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		ds, err := hooks.ListDeliveries(ctx, webhook.DeliveryQuery{Status: webhook.DeliverySucceeded, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) == nEvents {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d deliveries recorded as succeeded", len(ds), nEvents)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := hooks.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := keys.Close(); err != nil { // waits for the last-used writes
		t.Fatal(err)
	}
	ks, err := keys.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range ks {
		if k.LastUsedAt == nil {
			t.Fatalf("key %s: its last-used write was lost", k.ID)
		}
	}
	// Writes: the workflows, the last-used times, the deliveries recorded by
	// Notify, and for each delivery its claim and its attempt record.
	writes := uint64(nWorkflows + nKeys + 3*nEvents)
	commits := db.Commits() - before
	t.Logf("%d writes in %d commits", writes, commits)
	if commits >= writes/2 {
		t.Fatalf("%d commits for %d writes: the packages' writes are not being merged", commits, writes)
	}
}

// While the writer is held, one write from each package queues; released,
// they commit in one transaction.
func TestPackagesCommitTogether(t *testing.T) {
	ctx := context.Background()
	store, keys := openStoreAndKeys(t, sqlite.OpenOptions{})
	db := store.DB()
	hooks, err := webhook.New(ctx, db, webhook.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := hooks.CreateEndpoint(ctx, webhook.EndpointParams{Environment: settleflow.Test, URL: "http://127.0.0.1:9/hook"}); err != nil {
		t.Fatal(err)
	}
	key, _, err := keys.Create(ctx, apikey.CreateParams{Environment: settleflow.Test, Name: "revoked together"})
	if err != nil {
		t.Fatal(err)
	}

	before := db.Commits()
	errs := make(chan error, 3)
	err = db.Locked(func() error {
		go func() {
			_, err := store.InsertWorkflows(ctx, []settleflow.Insert{{Workflow: workflow(0)}})
			errs <- err
		}()
		go func() { errs <- keys.Revoke(ctx, key.ID) }()
		go func() { errs <- hooks.Notify(ctx, []settleflow.Event{event(0)}) }()
		// The writer holds the first write and waits for the lock; the
		// other two queue behind it.
		deadline := time.Now().Add(5 * time.Second)
		for db.Queued() < 2 {
			if time.Now().After(deadline) {
				return fmt.Errorf("only %d writes queued", db.Queued())
			}
			time.Sleep(time.Millisecond)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := db.Commits() - before; n != 1 {
		t.Fatalf("the three packages' writes took %d commits, want 1", n)
	}
}

// openStoreAndKeys opens a workflow Store on a fresh database and an API key
// Manager on the Store's handle; both are closed when t ends.
func openStoreAndKeys(t *testing.T, opts sqlite.OpenOptions) (*bunstore.Store, *apikey.Manager) {
	t.Helper()
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "shared.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	keys, err := apikey.New(store.DB(), apikey.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { keys.Close() })
	if err := keys.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return store, keys
}

func workflow(i int) *settleflow.Workflow {
	now := time.Now().UTC().Truncate(time.Microsecond)
	return &settleflow.Workflow{
		ID: ids.New(ids.Workflow, now), Object: "workflow", Product: "ticket-triage",
		CustomerID: fmt.Sprint("cus_", i), Payload: json.RawMessage(`{"ticketId":"T-42"}`),
		Quoted: settleflow.Money{Amount: 1250, Currency: "usd"}, Margin: settleflow.Margin{Target: 3000},
		Status: settleflow.Pending, CreatedAt: now, UpdatedAt: now,
	}
}

func event(i int) settleflow.Event {
	now := time.Now().UTC().Truncate(time.Microsecond)
	achieved := settleflow.BasisPoints(2875)
	return settleflow.Event{
		ID: ids.New(ids.Event, now), Object: "event", Type: settleflow.EventWorkflowCompleted, CreatedAt: now,
		Data: settleflow.EventData{WorkflowID: ids.New(ids.Workflow, now), Status: settleflow.Settled,
			Quoted: settleflow.Money{Amount: int64(100 + i), Currency: "usd"}, Margin: settleflow.Margin{Target: 3000, Achieved: &achieved}},
	}
}
