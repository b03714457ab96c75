package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/ids"
)

// testAttempts: an update's Attempt is recorded if and only if the update
// applies, once per task, and read back per workflow and environment,
// oldest first, exactly as written.
func testAttempts(t *testing.T, s settleflow.Store) {
	ctx := context.Background()
	w := newWorkflow(settleflow.Test, base, "cus_1", "triage")
	other := newWorkflow(settleflow.Test, base.Add(time.Millisecond), "cus_2", "triage")
	insert(t, s, w, other)
	if got, err := s.ListAttempts(ctx, settleflow.Test, w.ID); err != nil || len(got) != 0 {
		t.Fatalf("attempts of a workflow never run: %+v %v", got, err)
	}
	claimed := claim(t, s, "e1", base.Add(time.Second), time.Minute, 2)
	if len(claimed) != 2 {
		t.Fatalf("claimed %d workflows, want 2", len(claimed))
	}
	first := settleflow.Attempt{TaskID: ids.New(ids.Task, base), WorkflowID: w.ID, Number: 1,
		WorkerKeyID: "key_01", WorkerHost: "box-7", WorkerName: "pid-42", WorkerSDK: "settleflow-go/1.0.0",
		ClaimedAt: base.Add(time.Second), EndedAt: base.Add(2 * time.Second), Outcome: settleflow.AttemptFailed, Message: "model unreachable"}
	lost := first
	lost.TaskID, lost.WorkflowID = ids.New(ids.Task, base.Add(time.Millisecond)), other.ID
	lost.Outcome, lost.Message = settleflow.AttemptLeaseLost, "the lease ended"
	applied, err := s.UpdateWorkflows(ctx, []settleflow.Update{
		// The wrong owner: skipped, its attempt not recorded.
		{ID: w.ID, Owner: "e9", Status: settleflow.Running, Release: true, Attempts: 1, RunAt: base, UpdatedAt: base, Attempt: &first},
		{ID: other.ID, Owner: "e1", Status: settleflow.Running, Release: true, Attempts: 1, RunAt: base, UpdatedAt: base, Attempt: &lost},
	})
	if err != nil || applied[0] || !applied[1] {
		t.Fatalf("updates: applied %v, %v", applied, err)
	}
	if got, err := s.ListAttempts(ctx, settleflow.Test, w.ID); err != nil || len(got) != 0 {
		t.Fatalf("the attempt of a skipped update was recorded: %+v %v", got, err)
	}
	applied, err = s.UpdateWorkflows(ctx, []settleflow.Update{
		{ID: w.ID, Owner: "e1", Status: settleflow.Running, Release: true, Attempts: 1, RunAt: base, UpdatedAt: base, Attempt: &first},
	})
	if err != nil || !applied[0] {
		t.Fatalf("update: applied %v, %v", applied, err)
	}
	// The second attempt, by another worker, completes.
	again := claim(t, s, "e2", base.Add(time.Minute), time.Minute, 2)
	if len(again) != 2 {
		t.Fatalf("claimed %d workflows again, want 2", len(again))
	}
	second := settleflow.Attempt{TaskID: ids.New(ids.Task, base.Add(time.Minute)), WorkflowID: w.ID, Number: 2,
		WorkerKeyID: "key_02", ClaimedAt: base.Add(time.Minute), EndedAt: base.Add(time.Minute + time.Second), Outcome: settleflow.AttemptCompleted}
	tr, _ := settleflow.Running.To(settleflow.Failed)
	repeat := lost // an attempt already recorded is not recorded twice
	repeat.Message = "again"
	applied, err = s.UpdateWorkflows(ctx, []settleflow.Update{
		{ID: w.ID, Owner: "e2", Status: settleflow.Running, Transition: tr, RunAt: base, UpdatedAt: base.Add(time.Minute), Attempt: &second,
			Failure: &settleflow.Failure{Code: settleflow.FailureExecutionFailed, Message: "x"}},
		{ID: other.ID, Owner: "e2", Status: settleflow.Running, Release: true, Attempts: 2, RunAt: base, UpdatedAt: base, Attempt: &repeat},
	})
	if err != nil || !applied[0] || !applied[1] {
		t.Fatalf("second updates: applied %v, %v", applied, err)
	}
	got, err := s.ListAttempts(ctx, settleflow.Test, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := []settleflow.Attempt{first, second}; !reflect.DeepEqual(got, want) {
		t.Fatalf("attempts of %s:\n got %+v\nwant %+v", w.ID, got, want)
	}
	got, err = s.ListAttempts(ctx, settleflow.Test, other.ID)
	if err != nil || !reflect.DeepEqual(got, []settleflow.Attempt{lost}) {
		t.Fatalf("attempts of %s: %+v %v; want only its lost one", other.ID, got, err)
	}
	// Another environment sees none of them.
	if got, err := s.ListAttempts(ctx, settleflow.Live, w.ID); err != nil || len(got) != 0 {
		t.Fatalf("live attempts of a test workflow: %+v %v", got, err)
	}
}
