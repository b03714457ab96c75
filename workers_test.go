package settleflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
)

// A worker says who it is on claim: the registry of workers shows it with
// its tasks in flight, and each attempt of the workflow names the worker
// that ran it and how it ended, read back from the store by an engine
// started after this one stopped.
func TestWorkersAndAttempts(t *testing.T) {
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
	claim := func(key string, info settleflow.WorkerInfo) settleflow.Task {
		t.Helper()
		tasks, err := f.engine.ClaimTasks(ctx, settleflow.ClaimTasksParams{TaskScope: settleflow.TaskScope{Environment: settleflow.Test, Worker: key},
			Products: []string{"remote-triage"}, Max: 5, Wait: 10 * time.Second, WorkerInfo: info})
		if err != nil || len(tasks) != 1 || tasks[0].WorkflowID != wf.ID {
			t.Fatalf("claim: %+v %v", tasks, err)
		}
		return tasks[0]
	}

	// Bad identities are refused and change nothing.
	for _, bad := range []struct {
		info  settleflow.WorkerInfo
		param string
	}{
		{settleflow.WorkerInfo{Host: strings.Repeat("h", 256)}, "worker.host"},
		{settleflow.WorkerInfo{Name: "pid\n42"}, "worker.name"},
		{settleflow.WorkerInfo{SDK: "\xff"}, "worker.sdk"},
	} {
		_, err := f.engine.ClaimTasks(ctx, settleflow.ClaimTasksParams{TaskScope: settleflow.TaskScope{Environment: settleflow.Test, Worker: "key_a"},
			Products: []string{"remote-triage"}, Max: 1, WorkerInfo: bad.info})
		var inv *settleflow.InvalidError
		if !errors.As(err, &inv) || inv.Param != bad.param {
			t.Fatalf("claim with %+v: %v; want an InvalidError naming %s", bad.info, err, bad.param)
		}
	}
	workers := func(e *settleflow.Engine, env settleflow.Environment) []settleflow.WorkerSeen {
		t.Helper()
		ws, err := e.Workers(ctx, env)
		if err != nil {
			t.Fatal(err)
		}
		return ws
	}
	if ws := workers(f.engine, settleflow.Test); len(ws) != 0 {
		t.Fatalf("refused claims registered workers: %+v", ws)
	}

	a := settleflow.WorkerInfo{Host: "box-1", Name: "pid-1", SDK: "settleflow-go/test"}
	first := claim("key_a", a)
	ws := workers(f.engine, settleflow.Test)
	if len(ws) != 1 || ws[0].KeyID != "key_a" || ws[0].WorkerInfo != a || ws[0].Claimed != 1 || ws[0].InFlight["remote-triage"] != 1 ||
		ws[0].FirstSeen.IsZero() || ws[0].LastClaim.Before(ws[0].FirstSeen) || ws[0].Instance == "" {
		t.Fatalf("workers while the first task is held: %+v", ws)
	}
	ws0Instance := ws[0].Instance
	if live := workers(f.engine, settleflow.Live); len(live) != 0 {
		t.Fatalf("live workers: %+v", live)
	}
	running, err := f.engine.Attempts(ctx, settleflow.Test, wf.ID)
	if err != nil || len(running) != 1 || running[0].TaskID != first.ID || running[0].WorkerHost != "box-1" || !running[0].EndedAt.IsZero() {
		t.Fatalf("attempts while the first is held: %+v %v", running, err)
	}
	if _, err := f.engine.FailTask(ctx, settleflow.TaskScope{Environment: settleflow.Test, Worker: "key_a"}, first.ID, "model unreachable", true); err != nil {
		t.Fatal(err)
	}

	b := settleflow.WorkerInfo{Host: "box-2", Name: "pid-2"}
	second := claim("key_b", b)
	if second.Attempt != 2 {
		t.Fatalf("second task: attempt %d", second.Attempt)
	}
	ws = workers(f.engine, settleflow.Test)
	if len(ws) != 2 || ws[0].Host != "box-2" || ws[0].InFlight["remote-triage"] != 1 || ws[1].Host != "box-1" || len(ws[1].InFlight) != 0 {
		t.Fatalf("workers while the second task is held (latest claim first): %+v", ws)
	}
	if _, err := f.engine.CompleteTask(ctx, settleflow.TaskScope{Environment: settleflow.Test, Worker: "key_b"}, second.ID,
		json.RawMessage(`{"queue":"billing"}`), nil); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		w, err := f.engine.Fetch(ctx, settleflow.Test, wf.ID)
		if err != nil {
			t.Fatal(err)
		}
		if w.Status == settleflow.Settled {
			break
		}
		if w.Status.Terminal() || time.Now().After(deadline) {
			t.Fatalf("workflow %s: %+v", w.Status, w.Failure)
		}
	}
	if ws := workers(f.engine, settleflow.Test); len(ws[0].InFlight) != 0 {
		t.Fatalf("workers once every task ended: %+v", ws)
	}
	if err := f.engine.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	next, err := settleflow.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := next.Attempts(ctx, settleflow.Test, wf.ID)
	if err != nil || len(got) != 2 {
		t.Fatalf("attempts after a restart: %+v %v", got, err)
	}
	if g := got[0]; g.TaskID != first.ID || g.Number != 1 || g.WorkerKeyID != "key_a" || g.WorkerHost != "box-1" || g.WorkerName != "pid-1" ||
		g.WorkerSDK != "settleflow-go/test" || g.Outcome != settleflow.AttemptFailed || g.Message != "model unreachable" ||
		g.ClaimedAt.IsZero() || g.EndedAt.Before(g.ClaimedAt) || g.Instance != ws0Instance {
		t.Fatalf("first attempt: %+v", g)
	}
	if g := got[1]; g.TaskID != second.ID || g.Number != 2 || g.WorkerKeyID != "key_b" || g.WorkerHost != "box-2" || g.Outcome != settleflow.AttemptCompleted || g.Message != "" {
		t.Fatalf("second attempt: %+v", g)
	}
	// The workers are kept in the Store: a new engine shows them too.
	if ws := workers(next, settleflow.Test); len(ws) != 2 || ws[0].Host != "box-2" || ws[1].Host != "box-1" || ws[1].Claimed != 1 {
		t.Fatalf("a new engine's workers: %+v", ws)
	}
}
