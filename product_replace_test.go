package settleflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/settleflow/settleflow"
)

// A product replaced while a workflow runs: the workflow settles at the
// quote it was created with, a workflow created after is quoted by the new
// product. Retired, the product leaves the catalogue and creates are
// refused with product_retired, while the workflows created before finish.
func TestProductReplaceAndRetire(t *testing.T) {
	release := make(chan struct{})
	var ps *settleflow.Products
	f := newFixture(t, func(o *settleflow.Options) { ps = o.Products })
	f.hooks.execute = func(ctx context.Context, p triage) error {
		if p.TicketID == "old" {
			<-release
		}
		return nil
	}
	if err := f.engine.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	old := f.create(t, settleflow.Test, "old", 2) // 300, quoted ceil(300 / 0.7) = 429
	if old.Quoted.Amount != 429 {
		t.Fatalf("quoted %d, want 429", old.Quoted.Amount)
	}

	doubled := settleflow.Product[triage]{
		Name: "ticket-triage", Description: "Classifies a support ticket, twice.",
		Price:    settleflow.Price{TargetMargin: 5000, MinimumCharge: 100},
		Estimate: func(p triage) (int64, error) { return 2 * (200 + 50*int64(p.Attachments)), nil },
		Execute: func(ctx context.Context, p triage) (settleflow.Execution, error) {
			return settleflow.Execution{ActualCost: 10, Result: map[string]any{"by": "new"}}, nil
		},
	}
	if err := settleflow.Replace(ps, doubled); err != nil {
		t.Fatal(err)
	}
	if info, ok := ps.Get("ticket-triage"); !ok || info.Description != "Classifies a support ticket, twice." || info.TargetMargin != 5000 {
		t.Fatalf("the catalogue after Replace: %+v", info)
	}
	fresh := f.create(t, settleflow.Test, "new", 2) // 600, quoted 600 / 0.5 = 1200
	if fresh.Quoted.Amount != 1200 || fresh.Margin.Target != 5000 {
		t.Fatalf("after Replace: quoted %d, target %s; want 1200 at 0.5", fresh.Quoted.Amount, fresh.Margin.Target)
	}
	if err := settleflow.Replace(ps, settleflow.Product[triage]{Name: "nope", Estimate: doubled.Estimate, Execute: doubled.Execute}); err == nil {
		t.Fatal("Replace of a product never registered succeeded")
	}

	if err := ps.Retire("ticket-triage"); err != nil {
		t.Fatal(err)
	}
	if err := ps.Retire("ticket-triage"); err != nil {
		t.Fatalf("retiring twice: %v", err)
	}
	if _, ok := ps.Get("ticket-triage"); ok || len(ps.List()) != 0 || !ps.Retired("ticket-triage") {
		t.Fatalf("a retired product is still in the catalogue: %v", ps.List())
	}
	_, _, err := f.engine.Create(context.Background(), settleflow.CreateParams{Environment: settleflow.Test, Product: "ticket-triage",
		CustomerID: "cus_123", Payload: json.RawMessage(`{"ticketId":"late","attachments":0}`)})
	var inv *settleflow.InvalidError
	if !errors.As(err, &inv) || inv.Code != settleflow.CodeProductRetired || inv.Param != "product" {
		t.Fatalf("a create of a retired product: %v", err)
	}
	if err := settleflow.Register(ps, doubled); err == nil {
		t.Fatal("Register took a retired product's name")
	}

	close(release)
	got := f.waitTerminal(t, settleflow.Test, old.ID, fresh.ID)
	if w := got[old.ID]; w.Status != settleflow.Settled || w.Charged.Amount != 429 || w.Margin.Target != 3000 {
		t.Fatalf("the workflow created before the change: %s, charged %v, target %s; want Settled at its quote of 429", w.Status, w.Charged, w.Margin.Target)
	}
	if w := got[fresh.ID]; w.Status != settleflow.Settled || w.Charged.Amount != 1200 || string(w.Result) != `{"by":"new"}` {
		t.Fatalf("the workflow created before retirement: %s, charged %v, result %s", w.Status, w.Charged, w.Result)
	}

	// Replace brings a retired product back.
	if err := settleflow.Replace(ps, doubled); err != nil || ps.Retired("ticket-triage") || len(ps.List()) != 1 {
		t.Fatalf("Replace of a retired product: %v, retired %v", err, ps.Retired("ticket-triage"))
	}
}

// Replace, Retire, List and Create side by side (run with -race).
func TestProductsConcurrentChanges(t *testing.T) {
	var ps *settleflow.Products
	f := newFixture(t, func(o *settleflow.Options) { ps = o.Products })
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				switch (i + j) % 3 {
				case 0:
					_ = ps.Retire("ticket-triage")
				case 1:
					_ = settleflow.Replace(ps, settleflow.Product[triage]{Name: "ticket-triage", Price: settleflow.Price{TargetMargin: settleflow.BasisPoints(j)},
						Estimate: func(triage) (int64, error) { return 100, nil },
						Execute:  func(context.Context, triage) (settleflow.Execution, error) { return settleflow.Execution{}, nil }})
				default:
					ps.List()
					_, _ = f.engine.Quote(context.Background(), settleflow.CreateParams{Environment: settleflow.Test, Product: "ticket-triage",
						CustomerID: "cus_1", Payload: json.RawMessage(fmt.Sprintf(`{"ticketId":"t%d","attachments":0}`, j))})
				}
			}
		}()
	}
	wg.Wait()
}

// A create retried with its idempotency key after its product was retired
// (or changed so that it no longer quotes the payload) answers the workflow
// it created, replayed, as any retry does; the same key with another body
// is ErrIdempotencyKeyReused, and a new key is refused product_retired.
func TestCreateReplayedAfterRetire(t *testing.T) {
	var ps *settleflow.Products
	f := newFixture(t, func(o *settleflow.Options) { ps = o.Products })
	ctx := context.Background()
	params := func(key, ticket string) settleflow.CreateParams {
		return settleflow.CreateParams{Environment: settleflow.Test, Product: "ticket-triage", CustomerID: "cus_123",
			Payload: json.RawMessage(fmt.Sprintf(`{"ticketId": %q, "attachments": 1}`, ticket)), IdempotencyKey: key}
	}
	first, replayed, err := f.engine.Create(ctx, params("create-1", "T-1"))
	if err != nil || replayed {
		t.Fatalf("first create: %v replayed=%v", err, replayed)
	}
	if err := ps.Retire("ticket-triage"); err != nil {
		t.Fatal(err)
	}
	// The payload compacted differently is the same request.
	p := params("create-1", "T-1")
	p.Payload = json.RawMessage(`{ "ticketId":"T-1",  "attachments":1 }`)
	again, replayed, err := f.engine.Create(ctx, p)
	if err != nil || !replayed || again.ID != first.ID || again.Quoted != first.Quoted {
		t.Fatalf("the retry after Retire: %+v replayed=%v %v; want %s replayed", again, replayed, err, first.ID)
	}
	if _, _, err := f.engine.Create(ctx, params("create-1", "T-2")); !errors.Is(err, settleflow.ErrIdempotencyKeyReused) {
		t.Fatalf("the key with another body: %v; want ErrIdempotencyKeyReused", err)
	}
	var inv *settleflow.InvalidError
	if _, _, err := f.engine.Create(ctx, params("create-2", "T-1")); !errors.As(err, &inv) || inv.Code != settleflow.CodeProductRetired {
		t.Fatalf("a new key: %v; want product_retired", err)
	}
}
