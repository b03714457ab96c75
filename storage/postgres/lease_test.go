package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/pgtest"
	"github.com/settleflow/settleflow/storage"
	"github.com/settleflow/settleflow/storage/postgres"
)

// leaseName is a lease name no other test (or test run) uses: advisory
// locks belong to the database, not to a schema.
func leaseName(t *testing.T) string {
	b := make([]byte, 8)
	rand.Read(b)
	return "settleflow test lease " + t.Name() + " " + hex.EncodeToString(b)
}

// terminateHolder ends the server session holding the advisory lock of
// name, as a crashed or partitioned holder's connection would end.
func terminateHolder(t *testing.T, db *storage.DB, name string) {
	t.Helper()
	var n int
	err := db.Bun().DB.QueryRowContext(context.Background(), `SELECT count(pg_terminate_backend(pid)) FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND objsubid = 1
		AND objid = (hashtext($1 || ' in schema ' || current_schema())::bigint & 4294967295)::oid`, name).Scan(&n)
	if err != nil || n != 1 {
		t.Fatalf("terminating the lease's holder: %d sessions, %v", n, err)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// One process holds a lease at a time; a holder whose connection ends
// learns so and stops holding before another takes over (never both at
// once); a new holding has a new term; Close gives the lease up.
func TestLeaseOneHolderAtATime(t *testing.T) {
	open := pgtest.Connect(t).Storage(t, "sf_lease")
	a, b := open(), open()
	name := leaseName(t)
	opts := storage.LeaseOptions{Check: 20 * time.Millisecond}
	la := a.Lease(name, opts)
	defer la.Close()
	waitFor(t, "the first lease", la.Held)
	termA := la.Term()
	lb := b.Lease(name, opts)
	defer lb.Close()

	var both atomic.Bool
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if la.Held() && lb.Held() {
				both.Store(true)
			}
			time.Sleep(time.Millisecond)
		}
	}()
	time.Sleep(200 * time.Millisecond)
	if lb.Held() {
		t.Fatal("a second process holds a held lease")
	}
	terminateHolder(t, a, name)
	waitFor(t, "the second process to take over", lb.Held)
	if la.Held() {
		t.Fatal("the first process still holds the lease after losing its connection")
	}
	lb.Close()
	waitFor(t, "the first process to take it again", la.Held)
	if la.Term() == termA {
		t.Fatalf("a new holding kept term %d", termA)
	}
	close(stop)
	wg.Wait()
	if both.Load() {
		t.Fatal("both processes held the lease at once")
	}
}

// leasedSettler is a settler of one engine sharing a chain (chain): it
// records every submission made while its engine's lease was not held.
type leasedSettler struct {
	*countingSettler
	lease    *storage.Lease
	engine   int
	unheld   atomic.Int64
	byEngine *[3]atomic.Int64
	// hang, when set, makes Submit hang until it is closed: a holder that
	// stopped answering, its Settling workflows leased to it.
	hang atomic.Pointer[chan struct{}]
	hung atomic.Int64
}

func (s *leasedSettler) Submit(ctx context.Context, cs []settleflow.Charge) error {
	if !s.lease.Held() {
		s.unheld.Add(1)
	}
	if h := s.hang.Load(); h != nil {
		s.hung.Add(int64(len(cs)))
		<-*h
		return context.DeadlineExceeded
	}
	s.byEngine[s.engine].Add(int64(len(cs)))
	return s.countingSettler.Submit(ctx, cs)
}

// Three engines on one database, each with the settlement lease: only the
// holder submits charges (the others hand theirs over through the
// database); when the holder hangs and its connection ends, another takes
// over, with the Settling workflows leased to the former holder, and every
// workflow is still settled, each under one sequence.
func TestSettlementLeaseHandsChargesOver(t *testing.T) {
	ctx := context.Background()
	open := pgtest.Connect(t).Schema(t, "sf_lease_engines")
	name := leaseName(t)
	chain := &countingSettler{seq: map[string]map[uint64]bool{}}
	var byEngine [3]atomic.Int64
	var engines []*settleflow.Engine
	var settlers []*leasedSettler
	var dbs []*storage.DB
	for i := range 3 {
		store, err := postgres.OpenDB(ctx, open())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
		// Checks every 100 ms: with 20 ms (a grace of 40 ms, the server
		// ending a session idle for 100 ms) a loaded machine running the
		// race detector could stall a check long enough to hand the lease
		// over before the first phase is counted.
		lease := store.DB().Lease(name, storage.LeaseOptions{Check: 100 * time.Millisecond})
		t.Cleanup(lease.Close)
		if i == 0 {
			waitFor(t, "engine 0 to hold the lease", lease.Held)
		}
		ls := &leasedSettler{countingSettler: chain, lease: lease, engine: i, byEngine: &byEngine}
		settlers = append(settlers, ls)
		dbs = append(dbs, store.DB())
		engines = append(engines, startNoopEngine(t, store, ls, fmt.Sprintf("engine-%d", i), lease))
	}
	create := func(from, to int) []string {
		ids := make([]string, to-from)
		var wg sync.WaitGroup
		for i := from; i < to; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				w, _, err := engines[i%3].Create(ctx, settleflow.CreateParams{Environment: settleflow.Test, Product: "noop",
					CustomerID: "cus_pg", Payload: []byte(`{"units":1}`)})
				if err != nil {
					t.Error(err)
					return
				}
				ids[i-from] = w.ID
			}()
		}
		wg.Wait()
		return ids
	}
	settled := func(ids []string) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for _, id := range ids {
			for {
				w, err := engines[2].Fetch(ctx, settleflow.Test, id)
				if err != nil {
					t.Fatal(err)
				}
				if w.Status == settleflow.Settled {
					break
				}
				if w.Status == settleflow.Failed || time.Now().After(deadline) {
					t.Fatalf("%s is %s", id, w.Status)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
	first := create(0, 150)
	if t.Failed() {
		return
	}
	settled(first)
	if n1, n2 := byEngine[1].Load(), byEngine[2].Load(); n1 != 0 || n2 != 0 || byEngine[0].Load() < 150 {
		t.Fatalf("charges submitted by engine 0/1/2: %d/%d/%d; want all by engine 0, the holder", byEngine[0].Load(), n1, n2)
	}
	// The holder hangs in the settler with charges leased to it (for
	// minutes: the engine's lease), then its connection ends: another
	// engine takes over and settles them at once.
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) }) // before the engines stop (cleanups run last first)
	settlers[0].hang.Store(&hang)
	stuck := create(300, 330)
	waitFor(t, "the holder to hang with charges", func() bool { return settlers[0].hung.Load() > 0 })
	terminateHolder(t, dbs[1], name)
	waitFor(t, "another engine to take the lease", func() bool { return settlers[1].lease.Held() || settlers[2].lease.Held() })
	before := byEngine[1].Load() + byEngine[2].Load()
	second := create(150, 300)
	if t.Failed() {
		return
	}
	settled(second)
	settled(stuck)
	if after := byEngine[1].Load() + byEngine[2].Load(); after-before < 150 {
		t.Fatalf("the new holder submitted %d charges, want the 150 new ones", after-before)
	}
	for i, s := range settlers {
		if n := s.unheld.Load(); n != 0 {
			t.Errorf("engine %d submitted %d times without the lease", i, n)
		}
	}
	chain.mu.Lock()
	defer chain.mu.Unlock()
	for _, id := range append(append(first, second...), stuck...) {
		if got := len(chain.seq[id]); got != 1 {
			t.Errorf("%s charged under %d sequences, want 1", id, got)
		}
	}
}
