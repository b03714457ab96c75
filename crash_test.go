package settleflow_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/storage/sqlite"
)

// The crash test runs the engine in a child process (this test binary,
// re-executed) and kills it with SIGKILL at random moments.
const crashChildEnv = "SETTLEFLOW_CRASH_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(crashChildEnv) != "" {
		if err := crashChild(); err != nil {
			fmt.Fprintln(os.Stderr, "crash child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// crashChild creates workflows FROM..TOTAL (idempotency key per index, so a
// re-created index replays) from 8 goroutines, printing "ACK index id" for
// each Create that returned, while the engine settles them. With FINISH set
// it exits once every workflow is terminal and its event dispatched.
func crashChild() error {
	dir := os.Getenv("CRASH_DIR")
	from, _ := strconv.Atoi(os.Getenv("CRASH_FROM"))
	total, _ := strconv.Atoi(os.Getenv("CRASH_TOTAL"))
	finish := os.Getenv("CRASH_FINISH") != ""
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(dir, "settleflow.db"), sqlite.OpenOptions{})
	if err != nil {
		return err
	}
	settler, err := openRecordingSettler(filepath.Join(dir, "chain.db"))
	if err != nil {
		return err
	}
	ps := settleflow.NewProducts()
	err = settleflow.Register(ps, settleflow.Product[triage]{
		Name:     "ticket-triage",
		Price:    settleflow.Price{TargetMargin: 2500, MinimumCharge: 50},
		Estimate: func(p triage) (int64, error) { return p.cost(), nil },
		Execute: func(ctx context.Context, p triage) (settleflow.Execution, error) {
			time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond) // spread work over time
			return settleflow.Execution{ActualCost: p.cost() - 10, Result: map[string]string{"ticketId": p.TicketID}}, nil
		},
	})
	if err != nil {
		return err
	}
	var dispatched atomic.Int64
	engine, err := settleflow.New(settleflow.Options{
		Store: store, Settler: settler, Products: ps,
		Notifier: settleflow.NotifierFunc(func(_ context.Context, evs []settleflow.Event) error {
			dispatched.Add(int64(len(evs)))
			return nil
		}),
		Workers: 32, BatchSize: 64,
		PollInterval: 20 * time.Millisecond, SettlementPollInterval: 20 * time.Millisecond,
		ExecutionTimeout: 500 * time.Millisecond,
		NotifyTimeout:    time.Second,
		Retry:            settleflow.RetryPolicy{Base: 10 * time.Millisecond, Max: 100 * time.Millisecond},
	})
	if err != nil {
		return err
	}
	if err := engine.Start(ctx); err != nil {
		return err
	}
	out := bufio.NewWriter(os.Stdout)
	var outMu sync.Mutex
	next := atomic.Int64{}
	next.Store(int64(from))
	var wg sync.WaitGroup
	var createErr atomic.Value
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= total {
					return
				}
				wf, _, err := engine.Create(ctx, settleflow.CreateParams{
					Environment: settleflow.Test, Product: "ticket-triage", CustomerID: fmt.Sprintf("cus_%d", i%17),
					Payload:        json.RawMessage(fmt.Sprintf(`{"ticketId":"T-%d","attachments":%d}`, i, i%5)),
					IdempotencyKey: fmt.Sprintf("crash-%d", i),
				})
				if err != nil {
					createErr.Store(err)
					return
				}
				outMu.Lock()
				fmt.Fprintf(out, "ACK %d %s\n", i, wf.ID)
				out.Flush()
				outMu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err, _ := createErr.Load().(error); err != nil {
		return err
	}
	if !finish {
		select {} // wait for the SIGKILL
	}
	for {
		var open, undispatched int
		db := store.DB().Bun()
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM settleflow_workflows WHERE status NOT IN ('Settled', 'Failed')`).Scan(&open); err != nil {
			return err
		}
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM settleflow_events WHERE dispatched_at IS NULL`).Scan(&undispatched); err != nil {
			return err
		}
		if open == 0 && undispatched == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := engine.Stop(ctx); err != nil {
		return err
	}
	fmt.Fprintln(out, "DONE")
	return out.Flush()
}

func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash test takes a while; run without -short")
	}
	const total = 2000
	dir := t.TempDir()
	acked := map[int]string{}
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))

	run := func(finish bool, killAfter time.Duration) {
		t.Helper()
		from := 0
		for from < total {
			if _, ok := acked[from]; !ok {
				break
			}
			from++
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), crashChildEnv+"=1", "CRASH_DIR="+dir,
			"CRASH_FROM="+strconv.Itoa(from), "CRASH_TOTAL="+strconv.Itoa(total))
		if finish {
			cmd.Env = append(cmd.Env, "CRASH_FINISH=1")
		}
		cmd.Stderr = os.Stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var killed atomic.Bool
		if !finish {
			timer := time.AfterFunc(killAfter, func() {
				killed.Store(true)
				cmd.Process.Signal(syscall.SIGKILL)
			})
			defer timer.Stop()
		}
		done := false
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			if line == "DONE" {
				done = true
				continue
			}
			var i int
			var id string
			if _, err := fmt.Sscanf(line, "ACK %d %s", &i, &id); err != nil {
				t.Fatalf("child said %q", line)
			}
			if prev, ok := acked[i]; ok && prev != id {
				t.Fatalf("index %d acknowledged as %s and as %s", i, prev, id)
			}
			acked[i] = id
		}
		err = cmd.Wait()
		switch {
		case finish && (err != nil || !done):
			t.Fatalf("final run: %v (done %v)", err, done)
		case !finish && !killed.Load():
			t.Fatalf("child exited before it was killed: %v", err)
		}
	}
	kills := 5
	for k := 0; k < kills; k++ {
		run(false, time.Duration(150+r.IntN(600))*time.Millisecond)
		t.Logf("kill %d: %d workflows acknowledged so far", k+1, len(acked))
	}
	run(true, 0)
	if len(acked) != total {
		t.Fatalf("%d workflows acknowledged, want %d", len(acked), total)
	}

	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(dir, "settleflow.db"), sqlite.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	settler := newRecordingSettler(t, filepath.Join(dir, "chain.db"))
	db := store.DB().Bun()
	for i, id := range acked {
		w, err := store.GetWorkflow(ctx, settleflow.Test, id)
		if err != nil {
			t.Fatalf("acknowledged workflow %d (%s) lost: %v", i, id, err)
		}
		if w.Status != settleflow.Settled {
			t.Fatalf("workflow %s ended %s (%+v)", id, w.Status, w.Failure)
		}
		if a := settler.amount(t, id); a != w.Quoted.Amount {
			t.Fatalf("workflow %s charged %d, quoted %d", id, a, w.Quoted.Amount)
		}
	}
	var workflows, events, perWorkflowMax, completed int
	db.QueryRowContext(ctx, `SELECT count(*) FROM settleflow_workflows`).Scan(&workflows)
	db.QueryRowContext(ctx, `SELECT count(*), count(DISTINCT workflow_id) FROM settleflow_events`).Scan(&events, &completed)
	db.QueryRowContext(ctx, `SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM settleflow_events GROUP BY workflow_id)`).Scan(&perWorkflowMax)
	charges, submits, mismatches := settler.charged(t)
	t.Logf("%d workflows, %d charges from %d submissions, %d events", workflows, charges, submits, events)
	// No workflow beyond the acknowledged ones (idempotency keys replayed the
	// creates that were in flight at a kill), one charge and one event each.
	if workflows != total || charges != total || mismatches != 0 {
		t.Fatalf("workflows %d, charges %d (mismatched %d), want %d each", workflows, charges, mismatches, total)
	}
	if events != total || completed != total || perWorkflowMax != 1 {
		t.Fatalf("outbox has %d events for %d workflows (max %d per workflow), want exactly one each", events, completed, perWorkflowMax)
	}
	var wrongType int
	db.QueryRowContext(ctx, `SELECT count(*) FROM settleflow_events WHERE type <> 'workflow.completed'`).Scan(&wrongType)
	if wrongType != 0 {
		t.Fatalf("%d events are not workflow.completed", wrongType)
	}
}
