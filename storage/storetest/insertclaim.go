package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
)

// testInsertClaimed: an insert with a Claim is inserted Running and leased
// when its customer has no Pending workflow, stored or earlier in the
// batch; otherwise it is Pending in line. A workflow inserted claimed is
// not claimed again until its lease ends (or its owner releases it), and
// its owner updates it as one it claimed. An idempotent replay is never
// claimed.
func testInsertClaimed(t *testing.T, s settleflow.Store) {
	ctx := context.Background()
	at := func(i int) time.Time { return base.Add(time.Duration(i) * time.Millisecond) }
	waiting := newWorkflow(settleflow.Test, at(0), "cus_3", "triage")
	insert(t, s, waiting)

	lease := &settleflow.InsertClaim{Owner: "w1", LeaseUntil: at(10).Add(time.Minute)}
	a := newWorkflow(settleflow.Test, at(10), "cus_1", "triage")      // claimed
	b := newWorkflow(settleflow.Test, at(11), "cus_1", "triage")      // claimed: a runs, none waits
	c := newWorkflow(settleflow.Test, at(12), "cus_2", "triage")      // no claim asked: Pending
	d := newWorkflow(settleflow.Test, at(13), "cus_2", "triage")      // behind c: Pending
	e := newWorkflow(settleflow.Test, at(14), "cus_3", "triage")      // behind the stored one: Pending
	f := newWorkflow(settleflow.Live, at(15), "cus_3", "triage")      // cus_3 of the other environment: claimed
	g := newWorkflow(settleflow.Test, at(16), "cus_4", "triage")      // claimed, under a key
	replay := newWorkflow(settleflow.Test, at(17), "cus_5", "triage") // g's key again: a replay
	ins := []settleflow.Insert{
		{Workflow: a, Claim: lease}, {Workflow: b, Claim: lease}, {Workflow: c}, {Workflow: d, Claim: lease},
		{Workflow: e, Claim: lease}, {Workflow: f, Claim: lease},
		{Workflow: g, Claim: lease, IdempotencyKey: "k-claim", RequestHash: "h"},
		{Workflow: replay, Claim: lease, IdempotencyKey: "k-claim", RequestHash: "h"},
	}
	res, err := s.InsertWorkflows(ctx, ins)
	if err != nil {
		t.Fatal(err)
	}
	want := []bool{true, true, false, false, false, true, true, false}
	for i, r := range res {
		if r.Claimed != want[i] {
			t.Errorf("insert %d (%s): Claimed %v, want %v", i, ins[i].Workflow.CustomerID, r.Claimed, want[i])
		}
	}
	if res[7].Existing == nil {
		t.Fatal("the replay was inserted")
	}
	claimed := []*settleflow.Workflow{a, b, f, g}
	for _, w := range claimed {
		got := mustGet(t, s, w.Environment(), w.ID)
		if got.Status != settleflow.Running || !got.UpdatedAt.Equal(w.CreatedAt) {
			t.Errorf("%s inserted claimed: status %s, updatedAt %v; want Running at its creation", w.CustomerID, got.Status, got.UpdatedAt)
		}
	}
	for _, w := range []*settleflow.Workflow{c, d, e} {
		if got := mustGet(t, s, settleflow.Test, w.ID); got.Status != settleflow.Pending {
			t.Errorf("%s: status %s, want Pending", w.CustomerID, got.Status)
		}
	}

	// While the lease lasts a claim takes only those in line.
	var line []string
	for _, w := range claim(t, s, "w2", at(100), time.Hour, 10) {
		line = append(line, w.ID)
	}
	slices.Sort(line)
	if wantLine := []string{waiting.ID, c.ID, d.ID, e.ID}; !slices.Equal(line, wantLine) {
		t.Fatalf("claimed %v while the insert's lease lasts, want only those in line %v", line, wantLine)
	}

	// The owner updates what it was given as it would a claimed workflow
	// (moveTo releases it, Settling and due).
	moveTo(t, s, &settleflow.Workflow{ID: a.ID, Status: settleflow.Running}, "w1", settleflow.Settling)

	// Its owner gone (a crash), a released lease makes the rest due again.
	if err := s.ReleaseLeases(ctx, "w1", at(200)); err != nil {
		t.Fatal(err)
	}
	var again []string
	for _, w := range claim(t, s, "w3", at(200), time.Hour, 10) {
		if w.ID == a.ID {
			if w.Status != settleflow.Settling {
				t.Errorf("a claimed again as %s, want Settling", w.Status)
			}
			continue
		}
		if w.Status != settleflow.Running {
			t.Errorf("%s claimed again as %s, want Running", w.ID, w.Status)
		}
		again = append(again, w.ID)
	}
	slices.Sort(again)
	wantAgain := []string{b.ID, f.ID, g.ID}
	slices.Sort(wantAgain)
	if !slices.Equal(again, wantAgain) {
		t.Fatalf("after the owner's release, claimed %v, want %v", again, wantAgain)
	}

	// A lease that simply ends does as much: a workflow inserted claimed by
	// an engine that died is run by another.
	h := newWorkflow(settleflow.Test, at(300), "cus_6", "triage")
	res, err = s.InsertWorkflows(ctx, []settleflow.Insert{{Workflow: h, Claim: &settleflow.InsertClaim{Owner: "dead", LeaseUntil: at(300).Add(time.Minute)}}})
	if err != nil || !res[0].Claimed {
		t.Fatalf("insert claimed: %+v, %v", res, err)
	}
	if n := len(claim(t, s, "w4", at(300).Add(time.Minute-time.Millisecond), time.Minute, 10)); n != 0 {
		t.Fatalf("claimed %d before the lease ended", n)
	}
	late := claim(t, s, "w4", at(300).Add(time.Minute), time.Minute, 10)
	if len(late) != 1 || late[0].ID != h.ID || late[0].Status != settleflow.Running {
		t.Fatalf("after the lease ended: %+v, want h Running", late)
	}
}
