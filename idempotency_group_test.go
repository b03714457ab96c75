package settleflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/pgtest"
	"github.com/settleflow/settleflow/storage/postgres"
	"github.com/settleflow/settleflow/storage/sqlite"
)

// plugStore is a real Store whose first InsertWorkflows waits until the
// test lets it go, so the creates queued meanwhile reach the next group
// commit together; it records each group's idempotency keys.
type plugStore struct {
	settleflow.Store
	entered, release chan struct{}
	once             sync.Once
	mu               sync.Mutex
	groups           [][]string
}

func newPlugStore(s settleflow.Store) *plugStore {
	return &plugStore{Store: s, entered: make(chan struct{}), release: make(chan struct{})}
}

func (s *plugStore) InsertWorkflows(ctx context.Context, ins []settleflow.Insert) ([]settleflow.InsertResult, error) {
	first := false
	s.once.Do(func() { first = true })
	if first {
		close(s.entered)
		<-s.release
	}
	keys := make([]string, len(ins))
	for i, in := range ins {
		keys[i] = in.IdempotencyKey
	}
	s.mu.Lock()
	s.groups = append(s.groups, keys)
	s.mu.Unlock()
	return s.Store.InsertWorkflows(ctx, ins)
}

// grouped reports whether one group commit carried key n times.
func (s *plugStore) grouped(key string, n int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range s.groups {
		c := 0
		for _, k := range g {
			if k == key {
				c++
			}
		}
		if c >= n {
			return true
		}
	}
	return false
}

// Two creates with one Idempotency-Key and body in one group commit, the
// customer unable to pay: both are refused 402 and neither answers a
// workflow (the second used to answer `replayed` with the id of the first,
// which was never stored). Once the customer is funded the key creates
// one workflow, and a replay answers it, stored.
func TestCreateReplayInOneGroupOfARefusedCreate(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) {
		store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "settleflow.db"), sqlite.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
		testReplayOfARefusedCreate(t, store)
	})
	t.Run("Postgres", func(t *testing.T) {
		open := pgtest.Connect(t).Schema(t, "sf_replay402")
		store, err := postgres.OpenDB(context.Background(), open())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
		testReplayOfARefusedCreate(t, store)
	})
}

func testReplayOfARefusedCreate(t *testing.T, store settleflow.Store) {
	ctx := context.Background()
	plug := newPlugStore(store)
	f, ls := newFundedFixture(t, func(o *settleflow.Options) { o.Store = plug })
	const key = "key-402"
	params := settleflow.CreateParams{Environment: settleflow.Test, Product: "ticket-triage", CustomerID: "cus_poor",
		Payload: json.RawMessage(`{"ticketId": "T-402"}`), IdempotencyKey: key}
	// The plug: a create the commit stage holds while the two queue.
	plugDone := make(chan error, 1)
	ls.deposit(t, "cus_plug", triageQuote)
	if err := f.engine.SyncFunds(ctx, settleflow.Test); err != nil {
		t.Fatal(err)
	}
	go func() { _, err := createFor(ctx, f.engine, "cus_plug", "T-plug"); plugDone <- err }()
	<-plug.entered
	type answer struct {
		wf       *settleflow.Workflow
		replayed bool
		err      error
	}
	answers := make(chan answer, 2)
	for range 2 {
		go func() {
			wf, replayed, err := f.engine.Create(ctx, params)
			answers <- answer{wf, replayed, err}
		}()
	}
	time.Sleep(300 * time.Millisecond) // both queue behind the plug
	close(plug.release)
	if err := <-plugDone; err != nil {
		t.Fatalf("plug create: %v", err)
	}
	for range 2 {
		a := <-answers
		var ins *settleflow.InsufficientFundsError
		if !errors.As(a.err, &ins) || a.wf != nil || a.replayed {
			id := ""
			if a.wf != nil {
				id = a.wf.ID
				if _, err := f.engine.Fetch(ctx, settleflow.Test, id); err != nil {
					t.Errorf("the answered workflow %s fetches: %v", id, err)
				}
			}
			t.Fatalf("create of a customer who cannot pay: workflow %q, replayed %v, err %v; want 402 insufficient_funds for both", id, a.replayed, a.err)
		}
	}
	if !plug.grouped(key, 2) {
		t.Fatalf("the two creates were not committed in one group (groups %v): the test proves nothing", plug.groups)
	}
	// Funded, the key creates one workflow; its replay answers it.
	ls.deposit(t, "cus_poor", triageQuote)
	if err := f.engine.SyncFunds(ctx, settleflow.Test); err != nil {
		t.Fatal(err)
	}
	wf, replayed, err := f.engine.Create(ctx, params)
	if err != nil || replayed {
		t.Fatalf("create once funded: %v (replayed %v)", err, replayed)
	}
	again, replayed, err := f.engine.Create(ctx, params)
	if err != nil || !replayed || again.ID != wf.ID {
		t.Fatalf("replay: %+v %v %v", again, replayed, err)
	}
	if _, err := f.engine.Fetch(ctx, settleflow.Test, wf.ID); err != nil {
		t.Fatalf("the replayed workflow: %v", err)
	}
}
