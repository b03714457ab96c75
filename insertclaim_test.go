package settleflow_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
)

// A Create on a running engine with a worker free is stored already
// claimed: the workflow is Running the moment Create returns, and its
// execution has begun, without a claim of its own. With no worker free it
// waits in line, Pending, and a customer's workflows still start in the
// order they were created. The Create's answer is the workflow as created,
// Pending, either way.
func TestCreateStartsOnAFreeWorker(t *testing.T) {
	release := make(chan struct{})
	started := make(chan string, 10)
	f := newFixture(t, func(o *settleflow.Options) {
		o.Workers = 2
		o.PollInterval = time.Hour // no claim but the one a Create or a slot wakes
	})
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	t.Cleanup(open) // before the fixture's Stop, which waits for the executions
	f.hooks.execute = func(ctx context.Context, p triage) error {
		started <- p.TicketID
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}
	ctx := context.Background()
	if err := f.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	create := func(customer, ticket string) *settleflow.Workflow {
		t.Helper()
		wf, _, err := f.engine.Create(ctx, settleflow.CreateParams{Environment: settleflow.Test, Product: "ticket-triage",
			CustomerID: customer, Payload: json.RawMessage(`{"ticketId":"` + ticket + `"}`)})
		if err != nil {
			t.Fatal(err)
		}
		if wf.Status != settleflow.Pending {
			t.Fatalf("Create answered %s, want the workflow as created, Pending", wf.Status)
		}
		return wf
	}
	status := func(wf *settleflow.Workflow) settleflow.Status {
		t.Helper()
		w, err := f.engine.Fetch(ctx, settleflow.Test, wf.ID)
		if err != nil {
			t.Fatal(err)
		}
		return w.Status
	}
	a1 := create("cus_a", "A-1")
	if s := status(a1); s != settleflow.Running {
		t.Fatalf("a workflow created with a worker free is %s when Create returns, want Running", s)
	}
	if got := <-started; got != "A-1" {
		t.Fatalf("started %s, want A-1", got)
	}
	a2 := create("cus_a", "A-2") // the second worker: a1 runs, nothing of cus_a waits
	if s := status(a2); s != settleflow.Running {
		t.Fatalf("a2: %s, want Running", s)
	}
	<-started
	// No worker free: in line, in order.
	a3 := create("cus_a", "A-3")
	a4 := create("cus_a", "A-4")
	for _, wf := range []*settleflow.Workflow{a3, a4} {
		if s := status(wf); s != settleflow.Pending {
			t.Fatalf("%s with no worker free: %s, want Pending", wf.ID, s)
		}
	}
	release <- struct{}{} // one execution ends: its worker takes the head of cus_a's line
	if got := <-started; got != "A-3" {
		t.Fatalf("started %s after a worker freed up, want A-3, the first of the customer's line", got)
	}
	open()
	f.waitTerminal(t, settleflow.Test, a1.ID, a2.ID, a3.ID, a4.ID)
	if n := f.hooks.runs.Load(); n != 4 {
		t.Fatalf("%d executions for 4 workflows", n)
	}
}
