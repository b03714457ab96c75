package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/driver"
	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/wire"
)

// newTask is a queued task of workflow wf, created at at.
func newTask(wf string, at time.Time, product string, budget *int64) driver.TaskRecord {
	return driver.TaskRecord{ID: ids.New(ids.Task, at), WorkflowID: wf, Product: product, CustomerID: "cus_1", Attempt: 1,
		Payload: json.RawMessage(`{"ticketId":"T-42"}`), Currency: "usd", Budget: budget, State: driver.TaskQueued, CreatedAt: at}
}

func openTask(t *testing.T, s settleflow.Store, rec driver.TaskRecord) *driver.TaskRecord {
	t.Helper()
	got, created, err := s.OpenTask(context.Background(), rec)
	if err != nil || !created || got.ID != rec.ID || got.State != driver.TaskQueued {
		t.Fatalf("open task: %+v created %v, %v", got, created, err)
	}
	return got
}

func claimTasks(t *testing.T, s settleflow.Store, key string, now time.Time, max int, products ...string) []*driver.TaskRecord {
	t.Helper()
	got, err := s.ClaimTasks(context.Background(), driver.TaskClaim{Products: products, Max: max, Now: now, LeaseUntil: now.Add(30 * time.Second),
		Worker: driver.WorkerRecord{KeyID: key, Host: "box-" + key, Name: "pid-1", SDK: "sdk/1", Instance: "e1"}})
	if err != nil {
		t.Fatalf("claim tasks: %v", err)
	}
	return got
}

// testTasks: a task is opened once per attempt (opening again returns the
// open one, or one a worker ended that no update recorded yet), claimed
// by one worker, oldest first and by product and environment, its lease
// extended by its holder only, ended once (a repeated end does not apply
// and reads the task as it ended), and forgotten by PruneTasks only once
// ended and recorded. The workers seen are kept with their tasks held.
func testTasks(t *testing.T, s settleflow.Store) {
	ctx := context.Background()
	w := newWorkflow(settleflow.Test, base, "cus_1", "triage")
	insert(t, s, w)
	first := openTask(t, s, newTask(w.ID, base, "triage", nil))
	again, created, err := s.OpenTask(ctx, newTask(w.ID, base.Add(time.Second), "triage", nil))
	if err != nil || created || again.ID != first.ID {
		t.Fatalf("opening an open task's workflow again: %+v created %v, %v", again, created, err)
	}
	otherProduct := openTask(t, s, newTask("wf_other", base.Add(time.Millisecond), "summarize", nil))
	live := newTask("wf_live", base.Add(2*time.Millisecond), "triage", nil)
	live.Livemode = true
	openTask(t, s, live)
	if _, err := s.GetTask(ctx, settleflow.Live, first.ID); err != settleflow.ErrNotFound {
		t.Fatalf("a test task read as live: %v", err)
	}
	if got := claimTasks(t, s, "key_a", base.Add(time.Second), 5, "triage"); len(got) != 1 || got[0].ID != first.ID ||
		got[0].State != driver.TaskClaimed || got[0].WorkerKeyID != "key_a" || got[0].Instance != "e1" ||
		!got[0].LeaseUntil.Equal(base.Add(31*time.Second)) || string(got[0].Payload) != `{"ticketId":"T-42"}` {
		t.Fatalf("claim: %+v", got)
	}
	if got := claimTasks(t, s, "key_b", base.Add(time.Second), 5, "triage"); len(got) != 0 {
		t.Fatalf("a claimed task was claimed again: %+v", got)
	}
	ws, err := s.ListWorkers(ctx, settleflow.Test, 10)
	if err != nil || len(ws) != 1 || ws[0].KeyID != "key_a" || ws[0].Claimed != 1 || ws[0].InFlight["triage"] != 1 || ws[0].Instance != "e1" {
		t.Fatalf("workers: %+v %v", ws, err)
	}
	if err := s.SawWorker(ctx, driver.WorkerRecord{KeyID: "key_b", Host: "box-key_b", Name: "pid-1", Instance: "e2", LastClaim: base.Add(2 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	if ws, err := s.ListWorkers(ctx, settleflow.Test, 10); err != nil || len(ws) != 2 || ws[0].KeyID != "key_b" || ws[0].Claimed != 0 || len(ws[0].InFlight) != 0 {
		t.Fatalf("workers after an empty claim: %+v %v", ws, err)
	}

	// Only the holder extends the lease.
	hb := driver.TaskHeartbeat{ID: first.ID, WorkerKeyID: "key_b", Now: base.Add(2 * time.Second), LeaseUntil: base.Add(time.Minute),
		Items: []wire.CostItem{{Category: "model", Amount: 5}}, MaxItems: 100, MaxTotal: 1 << 40}
	if _, out, err := s.HeartbeatTask(ctx, hb); err != nil || out != driver.HeartbeatNotHeld {
		t.Fatalf("another worker's heartbeat: %v %v", out, err)
	}
	hb.WorkerKeyID = "key_a"
	got, out, err := s.HeartbeatTask(ctx, hb)
	if err != nil || out != driver.HeartbeatApplied || !got.LeaseUntil.Equal(base.Add(time.Minute)) || got.Spent != 5 || len(got.Items) != 1 {
		t.Fatalf("heartbeat: %+v %v %v", got, out, err)
	}
	hb.MaxItems = 1
	if got, out, err := s.HeartbeatTask(ctx, hb); err != nil || out != driver.HeartbeatOverLimit || got.Spent != 5 {
		t.Fatalf("a heartbeat past the items' bound: %+v %v %v", got, out, err)
	}

	// Ended once; the repeated end reads it as it ended.
	end := driver.TaskEnd{ID: first.ID, From: []driver.TaskState{driver.TaskClaimed}, WorkerKeyID: "key_a", State: driver.TaskCompleted,
		Now: base.Add(3 * time.Second), Result: json.RawMessage(`{"queue":"billing"}`), ResultItems: []wire.CostItem{{Category: "model", Amount: 7}}}
	got, applied, err := s.EndTask(ctx, end)
	if err != nil || !applied || got.State != driver.TaskCompleted || string(got.Result) != `{"queue":"billing"}` || got.ResultItems[0].Amount != 7 {
		t.Fatalf("complete: %+v %v %v", got, applied, err)
	}
	end.State = driver.TaskFailed
	if got, applied, err := s.EndTask(ctx, end); err != nil || applied || got.State != driver.TaskCompleted {
		t.Fatalf("failing a completed task: %+v %v %v", got, applied, err)
	}
	read, err := s.GetTask(ctx, settleflow.Test, first.ID)
	if err != nil || read.State != driver.TaskCompleted || read.Spent != 5 || string(read.Payload) != "{}" || read.Recorded ||
		!read.EndedAt.Equal(base.Add(3*time.Second)) || !read.ClaimedAt.Equal(base.Add(time.Second)) {
		t.Fatalf("completed task read back: %+v %v", read, err)
	}
	// Ended but not recorded: a new execution of the workflow adopts it.
	if again, created, err := s.OpenTask(ctx, newTask(w.ID, base.Add(4*time.Second), "triage", nil)); err != nil || created || again.ID != first.ID ||
		again.State != driver.TaskCompleted {
		t.Fatalf("opening a workflow whose completed task is not recorded: %+v %v %v", again, created, err)
	}
	if n, err := s.PruneTasks(ctx, base.Add(time.Hour), 100); err != nil || n != 0 {
		t.Fatalf("pruned %d unrecorded tasks, %v", n, err)
	}
	// Recorded (the update ending the attempt applied): the next opens anew.
	claim(t, s, "e1", base.Add(time.Second), time.Minute, 1)
	a := settleflow.Attempt{TaskID: first.ID, WorkflowID: w.ID, Number: 1, WorkerKeyID: "key_a", ClaimedAt: base.Add(time.Second),
		EndedAt: base.Add(3 * time.Second), Outcome: settleflow.AttemptCompleted}
	if applied, err := s.UpdateWorkflows(ctx, []settleflow.Update{{ID: w.ID, Owner: "e1", Status: settleflow.Running, Release: true,
		Attempts: 1, RunAt: base, UpdatedAt: base, Attempt: &a}}); err != nil || !applied[0] {
		t.Fatalf("recording the attempt: %v %v", applied, err)
	}
	second := newTask(w.ID, base.Add(5*time.Second), "triage", nil)
	second.Attempt = 2
	if got := openTask(t, s, second); got.Attempt != 2 {
		t.Fatalf("second task: %+v", got)
	}
	if n, err := s.PruneTasks(ctx, base.Add(3*time.Second), 100); err != nil || n != 0 {
		t.Fatalf("pruned %d tasks ended at the bound, %v", n, err)
	}
	if n, err := s.PruneTasks(ctx, base.Add(time.Hour), 100); err != nil || n != 1 {
		t.Fatalf("pruned %d recorded tasks, %v; want 1", n, err)
	}
	if _, err := s.GetTask(ctx, settleflow.Test, first.ID); err != settleflow.ErrNotFound {
		t.Fatalf("a pruned task: %v", err)
	}
	if tasks, err := s.ListTasks(ctx, settleflow.Test, w.ID); err != nil || len(tasks) != 1 || tasks[0].ID != second.ID {
		t.Fatalf("tasks of the workflow: %+v %v", tasks, err)
	}
	// By product: the other product's task waits for its own workers.
	if got := claimTasks(t, s, "key_a", base.Add(6*time.Second), 5, "summarize", "triage"); len(got) != 2 || got[0].ID != otherProduct.ID || got[1].ID != second.ID {
		t.Fatalf("claim of two products, oldest first: %+v", got)
	}
}

// testTaskLease: a task is taken from its worker (Expired) only once its
// lease passed, and then takes no heartbeat and no completion.
func testTaskLease(t *testing.T, s settleflow.Store) {
	ctx := context.Background()
	task := openTask(t, s, newTask("wf_lease", base, "triage", nil))
	claimTasks(t, s, "key_a", base, 1, "triage") // lease until base+30 s
	lost := driver.TaskEnd{ID: task.ID, From: []driver.TaskState{driver.TaskClaimed}, Expired: true, State: driver.TaskLost, Now: base.Add(29 * time.Second)}
	if got, applied, err := s.EndTask(ctx, lost); err != nil || applied || got.State != driver.TaskClaimed {
		t.Fatalf("lost before the lease passed: %+v %v %v", got, applied, err)
	}
	// Past the lease, before anyone ended it as lost: the worker's own
	// heartbeat, completion or failure is refused and changes nothing.
	if _, out, err := s.HeartbeatTask(ctx, driver.TaskHeartbeat{ID: task.ID, WorkerKeyID: "key_a", Now: base.Add(30 * time.Second),
		LeaseUntil: base.Add(time.Minute), MaxItems: 100, MaxTotal: 1 << 40}); err != nil || out != driver.HeartbeatNotHeld {
		t.Fatalf("heartbeat once the lease passed: %v %v", out, err)
	}
	for _, end := range []driver.TaskEnd{
		{ID: task.ID, From: []driver.TaskState{driver.TaskClaimed}, WorkerKeyID: "key_a", Held: true, State: driver.TaskCompleted,
			Now: base.Add(30 * time.Second), Result: json.RawMessage(`{}`)},
		{ID: task.ID, From: []driver.TaskState{driver.TaskClaimed}, WorkerKeyID: "key_a", Held: true, State: driver.TaskFailed,
			Now: base.Add(30 * time.Second), Message: "late"},
	} {
		if got, applied, err := s.EndTask(ctx, end); err != nil || applied || got.State != driver.TaskClaimed {
			t.Fatalf("the worker's %s once the lease passed: %+v %v %v", end.State, got, applied, err)
		}
	}
	lost.Now = base.Add(30 * time.Second)
	if got, applied, err := s.EndTask(ctx, lost); err != nil || !applied || got.State != driver.TaskLost {
		t.Fatalf("lost once the lease passed: %+v %v %v", got, applied, err)
	}
	if _, out, err := s.HeartbeatTask(ctx, driver.TaskHeartbeat{ID: task.ID, WorkerKeyID: "key_a", Now: base.Add(31 * time.Second),
		LeaseUntil: base.Add(time.Minute), MaxItems: 100, MaxTotal: 1 << 40}); err != nil || out != driver.HeartbeatNotHeld {
		t.Fatalf("heartbeat of a lost task: %v %v", out, err)
	}
	if got, applied, err := s.EndTask(ctx, driver.TaskEnd{ID: task.ID, From: []driver.TaskState{driver.TaskClaimed}, WorkerKeyID: "key_a",
		State: driver.TaskCompleted, Now: base.Add(31 * time.Second), Result: json.RawMessage(`{}`)}); err != nil || applied || got.State != driver.TaskLost {
		t.Fatalf("completion of a lost task: %+v %v %v", got, applied, err)
	}
	if got, applied, err := s.EndTask(ctx, driver.TaskEnd{ID: "task_unknown", From: []driver.TaskState{driver.TaskClaimed}, State: driver.TaskLost, Now: base}); err != nil || applied || got != nil {
		t.Fatalf("ending an unknown task: %+v %v %v", got, applied, err)
	}
}

// testTaskClaimConcurrent: concurrent claims (on Postgres, concurrent
// transactions) hand each task to exactly one worker.
func testTaskClaimConcurrent(t *testing.T, s settleflow.Store) {
	const n = 60
	for i := range n {
		openTask(t, s, newTask(fmt.Sprintf("wf_%d", i), base.Add(time.Duration(i)*time.Millisecond), "triage", nil))
	}
	var (
		mu    sync.Mutex
		owner = map[string]string{}
		wg    sync.WaitGroup
		errs  = make(chan error, 8)
	)
	for k := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprintf("key_%d", k)
			for {
				got, err := s.ClaimTasks(context.Background(), driver.TaskClaim{Products: []string{"triage"}, Max: 3, Now: base.Add(time.Second),
					LeaseUntil: base.Add(time.Minute), Worker: driver.WorkerRecord{KeyID: key}})
				if err != nil {
					errs <- err
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, task := range got {
					if prev, ok := owner[task.ID]; ok {
						errs <- fmt.Errorf("task %s claimed by %s and %s", task.ID, prev, key)
					}
					owner[task.ID] = key
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(owner) != n {
		t.Fatalf("%d tasks claimed, want %d", len(owner), n)
	}
}

// testTaskBudget: the spend that decides a task's budget is the Store's
// sum: of concurrent heartbeats, those applied stay within the budget,
// exactly one passes it (the task ends TaskExceeded with its items
// added), and the others find the task not held.
func testTaskBudget(t *testing.T, s settleflow.Store) {
	ctx := context.Background()
	budget := int64(100)
	task := openTask(t, s, newTask("wf_budget", base, "triage", &budget))
	claimTasks(t, s, "key_a", base, 1, "triage")
	var (
		mu                         sync.Mutex
		applied, exceeded, notHeld int
		wg                         sync.WaitGroup
		firstErr                   error
	)
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, out, err := s.HeartbeatTask(ctx, driver.TaskHeartbeat{ID: task.ID, WorkerKeyID: "key_a", Now: base.Add(time.Second),
				LeaseUntil: base.Add(time.Minute), Items: []wire.CostItem{{Category: "model", Amount: 30}}, MaxItems: 100, MaxTotal: 1 << 40})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				firstErr = err
			case out == driver.HeartbeatApplied:
				applied++
			case out == driver.HeartbeatExceeded:
				exceeded++
			case out == driver.HeartbeatNotHeld:
				notHeld++
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatal(firstErr)
	}
	if applied != 3 || exceeded != 1 || notHeld != 6 {
		t.Fatalf("heartbeats of 30 against a budget of 100: %d applied, %d exceeded, %d not held; want 3, 1, 6", applied, exceeded, notHeld)
	}
	got, err := s.GetTask(ctx, settleflow.Test, task.ID)
	if err != nil || got.State != driver.TaskExceeded || got.Spent != 120 || len(got.Items) != 4 {
		t.Fatalf("task after its budget passed: %+v %v", got, err)
	}
}

// testTaskNotices: a subscriber hears of a task queued (its product) and
// of a task ended (its id).
func testTaskNotices(t *testing.T, s settleflow.Store) {
	ctx := context.Background()
	notices := make(chan driver.TaskNotice, 64)
	cancel := s.SubscribeTasks(func(n driver.TaskNotice) {
		select {
		case notices <- n:
		default:
		}
	})
	defer cancel()
	wait := func(match func(driver.TaskNotice) bool) {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case n := <-notices:
				if match(n) {
					return
				}
			case <-deadline:
				t.Fatal("no notice")
			}
		}
	}
	task := openTask(t, s, newTask("wf_notice", base, "triage", nil))
	wait(func(n driver.TaskNotice) bool { return n.Product == "triage" && !n.Livemode })
	if _, applied, err := s.EndTask(ctx, driver.TaskEnd{ID: task.ID, From: []driver.TaskState{driver.TaskQueued}, State: driver.TaskWithdrawn, Now: base}); err != nil || !applied {
		t.Fatalf("withdraw: %v %v", applied, err)
	}
	wait(func(n driver.TaskNotice) bool { return n.TaskID == task.ID })
}
