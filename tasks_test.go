package settleflow_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
)

type remotePayload struct {
	TicketID string `json:"ticketId"`
}

func remoteProduct() settleflow.Product[remotePayload] {
	return settleflow.Product[remotePayload]{Name: "remote-triage", Remote: true,
		Price:    settleflow.Price{TargetMargin: 3000, MinimumCharge: 50},
		Estimate: func(remotePayload) (int64, error) { return 100, nil }}
}

// A remote product has an Estimate and no Execute; the registry names its
// remote products.
func TestRegisterRemote(t *testing.T) {
	ps := settleflow.NewProducts()
	bad := remoteProduct()
	bad.Execute = func(context.Context, remotePayload) (settleflow.Execution, error) { return settleflow.Execution{}, nil }
	if err := settleflow.Register(ps, bad); err == nil {
		t.Fatal("a remote product with an Execute was registered")
	}
	bad = remoteProduct()
	bad.Estimate = nil
	if err := settleflow.Register(ps, bad); err == nil {
		t.Fatal("a remote product without an Estimate was registered")
	}
	if err := settleflow.Register(ps, remoteProduct()); err != nil {
		t.Fatal(err)
	}
	if got := ps.Remote(); !slices.Equal(got, []string{"remote-triage"}) {
		t.Fatalf("Remote() = %v", got)
	}
}

// A task no worker claimed when the engine stops is withdrawn: Stop does
// not wait for it, the workflow is released (not failed, no attempt
// counted), and the next engine on the store hands it to a worker, which
// completes it.
func TestRemoteTaskWithdrawnAtStop(t *testing.T) {
	var opts settleflow.Options
	f := newFixture(t, func(o *settleflow.Options) {
		if err := settleflow.Register(o.Products, remoteProduct()); err != nil {
			t.Fatal(err)
		}
		o.ExecutionTimeout = time.Minute
		opts = *o
	})
	ctx := context.Background()
	if err := f.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	wf, _, err := f.engine.Create(ctx, settleflow.CreateParams{Environment: settleflow.Test, Product: "remote-triage",
		CustomerID: "cus_remote", Payload: json.RawMessage(`{"ticketId":"T-1"}`)})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		w, err := f.engine.Fetch(ctx, settleflow.Test, wf.ID)
		if err != nil {
			t.Fatal(err)
		}
		if w.Status == settleflow.Running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("workflow %s never ran", w.Status)
		}
	}
	stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	began := time.Now()
	if err := f.engine.Stop(stopCtx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Fatalf("Stop waited %v for a task no worker claimed", d)
	}
	w, err := f.store.GetWorkflow(ctx, settleflow.Test, wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	if w.Status != settleflow.Running || w.Attempts != 0 || w.Failure != nil {
		t.Fatalf("after Stop: %s, attempts %d, failure %v; want released Running", w.Status, w.Attempts, w.Failure)
	}

	next, err := settleflow.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := next.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer next.Stop(ctx)
	scope := settleflow.TaskScope{Environment: settleflow.Test, Worker: "test"}
	tasks, err := next.ClaimTasks(ctx, settleflow.ClaimTasksParams{TaskScope: scope, Products: []string{"remote-triage"}, Max: 5, Wait: 10 * time.Second})
	if err != nil || len(tasks) != 1 || tasks[0].WorkflowID != wf.ID || tasks[0].Attempt != 1 || tasks[0].Budget != nil {
		t.Fatalf("claim on the next engine: %+v, %v", tasks, err)
	}
	if _, err := next.CompleteTask(ctx, scope, tasks[0].ID, json.RawMessage(`{"queue":"billing"}`),
		[]settleflow.CostItem{{Category: settleflow.CostModel, Amount: 60}}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		w, err := next.Fetch(ctx, settleflow.Test, wf.ID)
		if err != nil {
			t.Fatal(err)
		}
		if w.Status == settleflow.Settled {
			if w.Cost.Amount != 60 || w.Charged.Amount != w.Quoted.Amount || string(w.Result) != `{"queue":"billing"}` {
				t.Fatalf("settled: %+v", w)
			}
			break
		}
		if w.Status.Terminal() || time.Now().After(deadline) {
			t.Fatalf("workflow %s: %+v", w.Status, w.Failure)
		}
	}
}

// A task a worker holds when the engine stops (Stop's ctx ends before the
// worker finishes) is left to the worker, not lost: the workflow is
// released, and the worker completes the task through the next engine on
// the store, which adopts it: the workflow settles with that result on
// attempt 1.
func TestRemoteTaskHeldAcrossRestart(t *testing.T) {
	var opts settleflow.Options
	f := newFixture(t, func(o *settleflow.Options) {
		if err := settleflow.Register(o.Products, remoteProduct()); err != nil {
			t.Fatal(err)
		}
		o.ExecutionTimeout = time.Minute
		opts = *o
	})
	ctx := context.Background()
	if err := f.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	wf, _, err := f.engine.Create(ctx, settleflow.CreateParams{Environment: settleflow.Test, Product: "remote-triage",
		CustomerID: "cus_held", Payload: json.RawMessage(`{"ticketId":"T-9"}`)})
	if err != nil {
		t.Fatal(err)
	}
	scope := settleflow.TaskScope{Environment: settleflow.Test, Worker: "key_w"}
	tasks, err := f.engine.ClaimTasks(ctx, settleflow.ClaimTasksParams{TaskScope: scope, Products: []string{"remote-triage"}, Max: 1, Wait: 10 * time.Second})
	if err != nil || len(tasks) != 1 || tasks[0].WorkflowID != wf.ID {
		t.Fatalf("claim: %+v %v", tasks, err)
	}
	stopCtx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	_ = f.engine.Stop(stopCtx) // cut short: the worker still holds its task
	if w, err := f.store.GetWorkflow(ctx, settleflow.Test, wf.ID); err != nil || w.Status != settleflow.Running || w.Attempts != 0 {
		t.Fatalf("after Stop: %+v %v; want released Running, no attempt counted", w, err)
	}
	next, err := settleflow.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := next.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer next.Stop(ctx)
	if _, err := next.HeartbeatTask(ctx, scope, tasks[0].ID, nil); err != nil {
		t.Fatalf("heartbeat through the next engine: %v", err)
	}
	if _, err := next.CompleteTask(ctx, scope, tasks[0].ID, json.RawMessage(`{"queue":"billing"}`), nil); err != nil {
		t.Fatalf("completion through the next engine: %v", err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		w, err := next.Fetch(ctx, settleflow.Test, wf.ID)
		if err != nil {
			t.Fatal(err)
		}
		if w.Status == settleflow.Settled {
			if string(w.Result) != `{"queue":"billing"}` {
				t.Fatalf("settled with %s", w.Result)
			}
			break
		}
		if w.Status.Terminal() || time.Now().After(deadline) {
			t.Fatalf("workflow %s: %+v", w.Status, w.Failure)
		}
	}
	as, err := next.Attempts(ctx, settleflow.Test, wf.ID)
	if err != nil || len(as) != 1 || as[0].Number != 1 || as[0].TaskID != tasks[0].ID || as[0].Outcome != settleflow.AttemptCompleted {
		t.Fatalf("attempts: %+v %v", as, err)
	}
}
