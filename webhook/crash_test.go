package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/storage/sqlite"
	"go.uber.org/zap"
)

const (
	childEnv   = "SETTLEFLOW_WEBHOOK_CHILD"
	childDBEnv = "SETTLEFLOW_WEBHOOK_CHILD_DB"
)

// TestDeliveryChildProcess is the delivering process of
// TestAtLeastOnceAcrossSIGKILL; it does nothing in a normal run.
func TestDeliveryChildProcess(t *testing.T) {
	if os.Getenv(childEnv) != "1" {
		t.Skip("helper process for TestAtLeastOnceAcrossSIGKILL")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	db, err := sqlite.OpenDB(os.Getenv(childDBEnv), sqlite.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	log, _ := zap.NewDevelopment()
	s, err := New(ctx, db, Config{
		Logger:         log,
		Retry:          RetryPolicy{Schedule: []time.Duration{0, 100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond}},
		Timeout:        3 * time.Second,
		Lease:          4 * time.Second,
		PollInterval:   50 * time.Millisecond,
		MaxConcurrency: 4,
		MaxPerEndpoint: 4,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Stop(sctx); err != nil {
		t.Fatal(err)
	}
}

// TestAtLeastOnceAcrossSIGKILL runs the deliverer in a child process,
// SIGKILLs it while deliveries are in flight, starts it again, and checks
// that every event reached the receiver, each time with its own id as
// webhook-id, and that what was in flight at the kill was delivered again.
func TestAtLeastOnceAcrossSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "crash.db")
	db, err := sqlite.OpenDB(dbPath, sqlite.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := New(ctx, db, Config{})
	if err != nil {
		t.Fatal(err)
	}

	var (
		mu       sync.Mutex
		phase    = 1
		got      = map[string]int{} // webhook-id → requests
		answered = map[string]bool{}
		held     = map[string]bool{} // in flight when the child died
		quick    = 0
	)
	heldNow := make(chan struct{}, 100)
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) {
		id := r.Header.Get("webhook-id")
		var ev settleflow.Event
		rcBody, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(rcBody, &ev); err != nil || ev.ID != id {
			t.Errorf("webhook-id %q for body %s", id, rcBody)
		}
		mu.Lock()
		got[id]++
		if phase == 1 && quick >= 5 {
			held[id] = true
			mu.Unlock()
			heldNow <- struct{}{}
			<-r.Context().Done() // hold it until the child dies
			return
		}
		quick++
		answered[id] = true
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	})
	createEndpoint(t, s, settleflow.Test, rc.URL)
	events := make([]settleflow.Event, 30)
	for i := range events {
		events[i] = testEvent(false)
	}
	if err := s.Notify(ctx, events); err != nil {
		t.Fatal(err)
	}

	start := func() (*exec.Cmd, *bytes.Buffer) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDeliveryChildProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), childEnv+"=1", childDBEnv+"="+dbPath)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &out
	}
	child, out1 := start()
	// Wait until four deliveries hang in the child, then kill it.
	for range 4 {
		select {
		case <-heldNow:
		case <-time.After(20 * time.Second):
			child.Process.Kill()
			child.Wait()
			t.Fatalf("child never had deliveries in flight; its output:\n%s", out1)
		}
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	mu.Lock()
	phase = 2
	inFlight := make([]string, 0, len(held))
	for id := range held {
		inFlight = append(inFlight, id)
	}
	mu.Unlock()
	t.Logf("killed the child with %d deliveries in flight", len(inFlight))

	child2, out2 := start()
	defer func() {
		child2.Process.Signal(syscall.SIGTERM)
		if err := child2.Wait(); err != nil {
			t.Errorf("child did not stop gracefully: %v\n%s", err, out2)
		}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		done := len(answered) == len(events)
		mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			mu.Lock()
			t.Fatalf("only %d of %d events answered after the restart; child output:\n%s", len(answered), len(events), out2)
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, ev := range events {
		if got[ev.ID] == 0 || !answered[ev.ID] {
			t.Errorf("event %s never delivered", ev.ID)
		}
	}
	for _, id := range inFlight {
		if got[id] < 2 {
			t.Errorf("event %s, in flight at the kill, was not delivered again", id)
		}
	}
	for id := range got {
		found := false
		for _, ev := range events {
			found = found || ev.ID == id
		}
		if !found {
			t.Errorf("unknown webhook-id %s", id)
		}
	}
	waitFor(t, 10*time.Second, "every delivery recorded as succeeded", func() bool {
		ds, _ := s.ListDeliveries(ctx, DeliveryQuery{Status: DeliverySucceeded})
		return len(ds) == len(events)
	})
}
