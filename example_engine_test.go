package settleflow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/storage/sqlite"
)

// A whole engine in-process: SQLite, the simulated chain, one product. Create
// answers at once with the quote; the workflow then runs and settles on chain
// in the background.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "settleflow-example")
	defer os.RemoveAll(dir)
	store, err := sqlite.Open(ctx, filepath.Join(dir, "settleflow.db"), sqlite.OpenOptions{})
	if err != nil {
		panic(err)
	}
	defer store.Close()
	chain, err := settlement.NewSimulated(ctx, settlement.SimulatedOptions{})
	if err != nil {
		panic(err)
	}
	defer chain.Close()

	type ticket struct {
		TicketID string `json:"ticketId" jsonschema:"required,minLength=1"`
	}
	products := settleflow.NewProducts()
	err = settleflow.Register(products, settleflow.Product[ticket]{
		Name:     "ticket-triage",
		Price:    settleflow.Price{TargetMargin: 3000, MinimumCharge: 50}, // 30 %, 0.50 USD
		Estimate: func(ticket) (int64, error) { return 200, nil },         // cost in cents
		Execute: func(ctx context.Context, t ticket) (settleflow.Execution, error) {
			return settleflow.Execution{ActualCost: 180, Result: map[string]string{"queue": "billing"}}, nil
		},
	})
	if err != nil {
		panic(err)
	}
	events := make(chan settleflow.Event, 1)
	engine, err := settleflow.New(settleflow.Options{
		Store: store, Settler: chain, Products: products,
		Notifier: settleflow.NotifierFunc(func(_ context.Context, evs []settleflow.Event) error {
			for _, ev := range evs {
				if ev.Type == settleflow.EventWorkflowCompleted { // (also: customer.funded, from the test faucet)
					events <- ev
				}
			}
			return nil
		}),
	})
	if err != nil {
		panic(err)
	}
	if err := engine.Start(ctx); err != nil {
		panic(err)
	}
	defer engine.Stop(ctx)

	wf, _, err := engine.Create(ctx, settleflow.CreateParams{Environment: settleflow.Test,
		Product: "ticket-triage", CustomerID: "cus_123", Payload: json.RawMessage(`{"ticketId": "T-42"}`)})
	if err != nil {
		panic(err)
	}
	fmt.Println(wf.Status, wf.Quoted.Amount, wf.Quoted.Currency)

	select {
	case ev := <-events:
		fmt.Println(ev.Type, ev.Data.Status, *ev.Data.Margin.Achieved, ev.Data.Settlement.Network)
	case <-time.After(time.Minute):
		fmt.Println("no event")
	}
	// Output:
	// Pending 286 usd
	// workflow.completed Settled 0.3706 simulated
}

// The engine embedded in a program, as README.md shows it (TestREADMEEmbedding
// keeps the two the same): SQLite in a directory of yours, test charges on
// the in-process simulated chain, one product. Create answers at once with
// the quote, Pending; the workflow then runs and settles in the background.
// (ticket is the product's payload type: a struct with json tags, and here a
// Validate method.)
func Example_embedding() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "settleflow")
	defer os.RemoveAll(dir)
	store, _ := sqlite.Open(ctx, filepath.Join(dir, "settleflow.db"), sqlite.OpenOptions{})
	chain, _ := settlement.NewSimulated(ctx, settlement.SimulatedOptions{}) // test mode's chain, in process
	defer func() { chain.Close(); store.Close() }()
	products := settleflow.NewProducts()
	settleflow.Register(products, settleflow.Product[ticket]{Name: "ticket-triage",
		Price:    settleflow.Price{TargetMargin: 3000, MinimumCharge: 50}, // 30 %, at least 0.50 USD
		Estimate: func(ticket) (int64, error) { return 200, nil },         // cost in cents
		Execute: func(ctx context.Context, t ticket) (settleflow.Execution, error) {
			return settleflow.Execution{ActualCost: 180, Result: map[string]string{"queue": "billing"}}, nil
		},
	})
	engine, _ := settleflow.New(settleflow.Options{Store: store, Settler: chain, Products: products,
		Notifier: settleflow.NotifierFunc(func(context.Context, []settleflow.Event) error { return nil })}) // webhook.New in production
	engine.Start(ctx)
	defer engine.Stop(ctx)
	wf, _, _ := engine.Create(ctx, settleflow.CreateParams{Environment: settleflow.Test,
		Product: "ticket-triage", CustomerID: "cus_123", Payload: json.RawMessage(`{"ticketId":"T-42"}`)})
	fmt.Println(wf.Status, wf.Quoted.Amount) // answered before the product runs
	for ; !wf.Status.Terminal(); time.Sleep(10 * time.Millisecond) {
		wf, _ = engine.Fetch(ctx, settleflow.Test, wf.ID)
	}
	fmt.Println(wf.Status, wf.Charged.Amount, *wf.Margin.Achieved, wf.Settlement.Network)
	// Output:
	// Pending 286
	// Settled 286 0.3706 simulated
}

// TestREADMEEmbedding keeps README.md's embedding example the one above:
// the README shows Example_embedding's body, up to its Output comment and
// one tab less indented, as a go block.
func TestREADMEEmbedding(t *testing.T) {
	src, err := os.ReadFile("example_engine_test.go")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	start := strings.Index(s, "\nfunc Example_embedding() {\n")
	if start < 0 {
		t.Fatal("no Example_embedding in example_engine_test.go")
	}
	s = s[start+len("\nfunc Example_embedding() {\n"):]
	s = s[:strings.Index(s, "\t// Output:\n")]
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, "\t")
	}
	if len(lines) > 25 {
		t.Errorf("Example_embedding has %d lines before its Output; the README's example is at most 25", len(lines))
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if block := "```go\n" + strings.Join(lines, "\n") + "\n```\n"; !strings.Contains(string(readme), block) {
		t.Errorf("README.md does not show Example_embedding as it is; copy its body (up to // Output:) into the README:\n%s", block)
	}
}
