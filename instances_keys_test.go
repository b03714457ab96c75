package settleflow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/pgtest"
	"github.com/settleflow/settleflow/storage/postgres"
)

// Two engines on one Postgres database, each with its own pool as two
// instances have, given the same refund Idempotency-Key at the same
// moment: both answer the one refund, one of them as a replay, never an
// error (one used to fail on the key's unique index: a 500). Rounds with
// an amount, then one refunding all that is left (amount 0), where the
// second used to be refused as exceeding what is left.
func TestRefundKeyAcrossTwoEnginesOnPostgres(t *testing.T) {
	ctx := context.Background()
	open := pgtest.Connect(t).Schema(t, "sf_refundkeys")
	var stores []settleflow.Store
	for range 2 {
		s, err := postgres.OpenDB(ctx, open())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores = append(stores, s)
	}
	a, ls := newFundedFixture(t, func(o *settleflow.Options) { o.Store = stores[0] })
	b := newFixture(t, func(o *settleflow.Options) {
		o.Store, o.Settler, o.TestFaucet, o.FundsPollInterval = stores[1], ls, -1, 20*time.Millisecond
	})
	ls.deposit(t, "cus_r", triageQuote)
	if err := a.engine.SyncFunds(ctx, settleflow.Test); err != nil {
		t.Fatal(err)
	}
	wf, err := createFor(ctx, a.engine, "cus_r", "T-refund")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if w := a.waitTerminal(t, settleflow.Test, wf.ID)[wf.ID]; w.Status != settleflow.Settled {
		t.Fatalf("workflow %s %+v", w.Status, w.Failure)
	}
	engines := []*settleflow.Engine{a.engine, b.engine}
	const rounds = 20
	for round := range rounds + 1 {
		p := settleflow.RefundParams{Environment: settleflow.Test, WorkflowID: wf.ID, Amount: 1, IdempotencyKey: fmt.Sprint("rk-", round)}
		if round == rounds {
			p.Amount = 0 // the rest
		}
		type answer struct {
			r        *settleflow.Refund
			replayed bool
			err      error
		}
		answers := make([]answer, 2)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, e := range engines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				r, replayed, err := e.Refund(ctx, p)
				answers[i] = answer{r, replayed, err}
			}()
		}
		close(start)
		wg.Wait()
		for i, an := range answers {
			if an.err != nil {
				t.Fatalf("round %d (amount %d): engine %d answered %v; want the refund or its replay", round, p.Amount, i, an.err)
			}
		}
		if answers[0].r.ID != answers[1].r.ID || answers[0].replayed == answers[1].replayed {
			t.Fatalf("round %d: refunds %s (replayed %v) and %s (replayed %v); want one refund, answered once as a replay",
				round, answers[0].r.ID, answers[0].replayed, answers[1].r.ID, answers[1].replayed)
		}
	}
	page, err := a.engine.ListRefunds(ctx, settleflow.RefundListParams{Environment: settleflow.Test, WorkflowID: wf.ID, Limit: 100})
	if err != nil || len(page.Data) != rounds+1 {
		t.Fatalf("%d refunds stored (%v), want %d: one per key", len(page.Data), err, rounds+1)
	}
}

// Two engines on one Postgres database given the same create
// Idempotency-Key at the same moment: one workflow, answered to both, one
// of them as a replay; never an error.
func TestCreateKeyAcrossTwoEnginesOnPostgres(t *testing.T) {
	ctx := context.Background()
	open := pgtest.Connect(t).Schema(t, "sf_createkeys")
	var stores []settleflow.Store
	for range 2 {
		s, err := postgres.OpenDB(ctx, open())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores = append(stores, s)
	}
	a, ls := newFundedFixture(t, func(o *settleflow.Options) { o.Store = stores[0] })
	b := newFixture(t, func(o *settleflow.Options) {
		o.Store, o.Settler, o.TestFaucet, o.FundsPollInterval = stores[1], ls, -1, 20*time.Millisecond
	})
	ls.deposit(t, "cus_k", 100*triageQuote)
	if err := a.engine.SyncFunds(ctx, settleflow.Test); err != nil {
		t.Fatal(err)
	}
	if err := b.engine.SyncFunds(ctx, settleflow.Test); err != nil {
		t.Fatal(err)
	}
	engines := []*settleflow.Engine{a.engine, b.engine}
	const rounds = 20
	for round := range rounds {
		p := settleflow.CreateParams{Environment: settleflow.Test, Product: "ticket-triage", CustomerID: "cus_k",
			Payload: json.RawMessage(fmt.Sprintf(`{"ticketId": "T-%d"}`, round)), IdempotencyKey: fmt.Sprint("ck-", round)}
		type answer struct {
			w        *settleflow.Workflow
			replayed bool
			err      error
		}
		answers := make([]answer, 2)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, e := range engines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				w, replayed, err := e.Create(ctx, p)
				answers[i] = answer{w, replayed, err}
			}()
		}
		close(start)
		wg.Wait()
		for i, an := range answers {
			if an.err != nil {
				t.Fatalf("round %d: engine %d answered %v; want the workflow or its replay", round, i, an.err)
			}
		}
		if answers[0].w.ID != answers[1].w.ID || answers[0].replayed == answers[1].replayed {
			t.Fatalf("round %d: workflows %s (replayed %v) and %s (replayed %v); want one workflow, answered once as a replay",
				round, answers[0].w.ID, answers[0].replayed, answers[1].w.ID, answers[1].replayed)
		}
		if _, err := b.engine.Fetch(ctx, settleflow.Test, answers[0].w.ID); err != nil {
			t.Fatalf("round %d: the workflow answered: %v", round, err)
		}
	}
	c, err := a.engine.Customer(ctx, settleflow.Test, "cus_k")
	if err != nil || c.Balance.Reserved != rounds*triageQuote {
		t.Fatalf("customer %+v %v; want %d reserved: one workflow per key", c, err, rounds*triageQuote)
	}
}
