package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/ids"
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

// testRefundKeyTTL: a refund's idempotency key is honoured for
// IdempotencyTTL after the refund it recorded, as a workflow's is, and may
// then be used again (a fresh refund).
func testRefundKeyTTL(t *testing.T, s settleflow.Store) {
	ctx := context.Background()
	fund(t, s, settleflow.Test, "0xt", 1250)
	w := newWorkflow(settleflow.Test, base, "cus_t", "triage")
	if res, err := s.InsertWorkflows(ctx, []settleflow.Insert{reserveInsert(w, "0xt")}); err != nil || res[0].Insufficient != nil {
		t.Fatal(res, err)
	}
	settle(t, s, []*settleflow.Workflow{w}, []settleflow.Status{settleflow.Settled})
	first := base.Add(2 * time.Hour)
	refund := func(at time.Time, hash string) (settleflow.RefundInsertResult, error) {
		r := &settleflow.Refund{ID: ids.New(ids.Refund, at), Object: "refund", WorkflowID: w.ID, Amount: 100, Currency: "usd",
			Status: settleflow.RefundPending, CreatedAt: at, UpdatedAt: at}
		return s.InsertRefund(ctx, settleflow.RefundInsert{Refund: r, IdempotencyKey: "rk-ttl", RequestHash: hash})
	}
	orig, err := refund(first, "h")
	if err != nil || orig.Existing {
		t.Fatalf("first refund: %+v %v", orig, err)
	}
	within, err := refund(first.Add(settleflow.IdempotencyTTL-time.Second), "h2")
	if err != nil || !within.Existing || within.Refund.ID != orig.Refund.ID || within.ExistingHash != "h" {
		t.Fatalf("within the TTL: %+v %v; want the first refund replayed", within, err)
	}
	late, err := refund(first.Add(settleflow.IdempotencyTTL), "h3")
	if err != nil || late.Existing || late.Refund.ID == orig.Refund.ID {
		t.Fatalf("at the TTL: %+v %v; want a fresh refund, the key free again", late, err)
	}
	again, err := refund(first.Add(settleflow.IdempotencyTTL+time.Second), "h3")
	if err != nil || !again.Existing || again.Refund.ID != late.Refund.ID {
		t.Fatalf("after the key's reuse: %+v %v; want the new refund replayed", again, err)
	}
}

// testIdempotencyRecord: a Store that reads idempotency records
// (settleflow.IdempotencyReader) answers the workflow created under a key
// and its request hash, changes nothing, and answers nil for a key never
// used, for the other environment and once IdempotencyTTL has passed.
func testIdempotencyRecord(t *testing.T, s settleflow.Store) {
	r, ok := s.(settleflow.IdempotencyReader)
	if !ok {
		t.Skip("this Store does not read idempotency records (settleflow.IdempotencyReader is optional)")
	}
	ctx := context.Background()
	w := newWorkflow(settleflow.Test, base, "cus_rec", "triage")
	in := settleflow.Insert{Workflow: w, IdempotencyKey: "k-record", RequestHash: "h-record"}
	if res, err := s.InsertWorkflows(ctx, []settleflow.Insert{in}); err != nil || res[0].Existing != nil {
		t.Fatalf("insert: %+v %v", res, err)
	}
	for range 2 {
		rec, err := r.IdempotencyRecord(ctx, settleflow.Test, "k-record", base.Add(time.Hour))
		if err != nil || rec == nil || rec.Existing == nil || rec.Existing.ID != w.ID || rec.ExistingHash != "h-record" {
			t.Fatalf("record: %+v %v; want %s under h-record", rec, err, w.ID)
		}
	}
	for _, c := range []struct {
		env settleflow.Environment
		key string
		at  time.Time
	}{
		{settleflow.Test, "k-never", base},
		{settleflow.Live, "k-record", base},
		{settleflow.Test, "k-record", base.Add(settleflow.IdempotencyTTL)},
	} {
		if rec, err := r.IdempotencyRecord(ctx, c.env, c.key, c.at); err != nil || rec != nil {
			t.Fatalf("%s %s at %s: %+v %v; want none", c.env, c.key, c.at, rec, err)
		}
	}
	// Reading changed nothing: the key still replays.
	again := newWorkflow(settleflow.Test, base.Add(time.Second), "cus_rec", "triage")
	res, err := s.InsertWorkflows(ctx, []settleflow.Insert{{Workflow: again, IdempotencyKey: "k-record", RequestHash: "h-record"}})
	if err != nil || res[0].Existing == nil || res[0].Existing.ID != w.ID {
		t.Fatalf("replay after reading: %+v %v", res, err)
	}
}
