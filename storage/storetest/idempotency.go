package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
)

// testIdempotencyRefusedFirstUse: a key used more than once in one batch
// whose first use is refused for funds stores nothing under the key, so no
// later use replays it: the same request is refused as the first was, and
// a different one (a cheaper quote the balance covers) is decided on its
// own and inserted; a use after that one replays it.
func testIdempotencyRefusedFirstUse(t *testing.T, s settleflow.Store) {
	ctx := context.Background()
	fund(t, s, settleflow.Test, "0xk", 1000) // less than a quote of 1250
	mk := func(at time.Duration, quote int64) *settleflow.Workflow {
		w := newWorkflow(settleflow.Test, base.Add(at), "cus_k", "triage")
		w.Quoted.Amount = quote
		return w
	}
	keyed := func(w *settleflow.Workflow, hash string) settleflow.Insert {
		in := reserveInsert(w, "0xk")
		in.IdempotencyKey, in.RequestHash = "k-refused", hash
		return in
	}
	first, again := mk(0, 1250), mk(time.Millisecond, 1250)
	cheaper, replay := mk(2*time.Millisecond, 400), mk(3*time.Millisecond, 400)
	res, err := s.InsertWorkflows(ctx, []settleflow.Insert{
		keyed(first, "h-dear"), keyed(again, "h-dear"), keyed(cheaper, "h-cheap"), keyed(replay, "h-cheap"),
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range []*settleflow.Workflow{first, again} {
		if res[i].Existing != nil || res[i].Insufficient == nil || res[i].Insufficient.Available() != 1000 {
			t.Fatalf("use %d of a key whose first use is refused: %+v; want refused as the first (available 1000)", i, res[i])
		}
		if _, err := s.GetWorkflow(ctx, settleflow.Test, w.ID); !errors.Is(err, settleflow.ErrNotFound) {
			t.Fatalf("refused workflow %d stored: %v", i, err)
		}
	}
	if res[2].Existing != nil || res[2].Insufficient != nil {
		t.Fatalf("a different request under the refused key: %+v; want it inserted", res[2])
	}
	mustGet(t, s, settleflow.Test, cheaper.ID)
	if res[3].Existing == nil || res[3].Existing.ID != cheaper.ID || res[3].ExistingHash != "h-cheap" {
		t.Fatalf("a use after the inserted one: %+v; want a replay of %s", res[3], cheaper.ID)
	}
	if _, err := s.GetWorkflow(ctx, settleflow.Test, replay.ID); !errors.Is(err, settleflow.ErrNotFound) {
		t.Fatalf("a replayed insert stored a workflow: %v", err)
	}
	a, err := s.GetAccount(ctx, settleflow.Test, "cus_k", "0xk")
	if err != nil || a.Reserved != 400 {
		t.Fatalf("account %+v %v; want 400 reserved, the one inserted", a, err)
	}
	// In a later batch the key replays the inserted workflow.
	res, err = s.InsertWorkflows(ctx, []settleflow.Insert{keyed(mk(time.Second, 1250), "h-dear")})
	if err != nil || res[0].Existing == nil || res[0].Existing.ID != cheaper.ID {
		t.Fatalf("later batch: %+v %v", res, err)
	}
}
