// Command embed runs the settleflow engine in-process: it registers a
// product, creates a few workflows on the embedded SQLite default and prints
// each as it moves from Pending to Settled. Charges settle on go-ethereum's
// in-process simulated chain, which lives in memory (a restart forgets it;
// the engine then resubmits, and the contract keeps each charge single).
//
//	go run ./examples/embed [-data DIR] [-n 5]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/storage/sqlite"
)

// summary is the payload of the example product.
type summary struct {
	Text string `json:"text"`
}

// Validate names the field at fault, so a bad payload is a clear 400.
func (s summary) Validate() error {
	if s.Text == "" {
		return &settleflow.FieldError{Field: "text", Message: "is required"}
	}
	return nil
}

func main() {
	dir := flag.String("data", "", "data directory (default: a temporary one)")
	n := flag.Int("n", 5, "workflows to create")
	flag.Parse()
	if err := run(*dir, *n); err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
}

func run(dir string, n int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if dir == "" {
		tmp, err := os.MkdirTemp("", "settleflow-embed-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	log, _ := zap.NewDevelopment(zap.IncreaseLevel(zap.WarnLevel))
	defer log.Sync() //nolint:errcheck

	store, err := sqlite.Open(ctx, filepath.Join(dir, "settleflow.db"), sqlite.OpenOptions{})
	if err != nil {
		return err
	}
	defer store.Close()
	chain, err := settlement.NewSimulated(ctx, settlement.SimulatedOptions{Logger: log})
	if err != nil {
		return err
	}
	defer chain.Close()

	products := settleflow.NewProducts()
	err = settleflow.Register(products, settleflow.Product[summary]{
		Name:           "summarize",
		Description:    "Summarizes a text.",
		Price:          settleflow.Price{TargetMargin: 3000, MinimumCharge: 50},
		PricingSummary: "0.01 USD per 10 characters",
		Estimate:       func(s summary) (int64, error) { return int64(len(s.Text)+9) / 10, nil },
		Execute: func(ctx context.Context, s summary) (settleflow.Execution, error) {
			words := len(s.Text) / 5
			return settleflow.Execution{ActualCost: int64(len(s.Text)) / 12, Result: map[string]any{"words": words}}, nil
		},
	})
	if err != nil {
		return err
	}
	done := make(chan settleflow.Event, n)
	engine, err := settleflow.New(settleflow.Options{
		Store:    store,
		Settler:  chain,
		Products: products,
		Logger:   log,
		Notifier: settleflow.NotifierFunc(func(_ context.Context, evs []settleflow.Event) error {
			for _, e := range evs {
				done <- e
			}
			return nil
		}),
		SettlementPollInterval: 200 * time.Millisecond,
	})
	if err != nil {
		return err
	}
	if err := engine.Start(ctx); err != nil {
		return err
	}
	defer engine.Stop(context.Background())

	for i := 0; i < n; i++ {
		payload, err := json.Marshal(summary{Text: fmt.Sprint("Text number ", i, ": ", strings.Repeat("lorem ipsum ", 10*i))})
		if err != nil {
			return err
		}
		wf, _, err := engine.Create(ctx, settleflow.CreateParams{
			Environment: settleflow.Test, Product: "summarize",
			CustomerID: fmt.Sprintf("cus_%03d", i), Payload: payload,
		})
		if err != nil {
			return err
		}
		fmt.Printf("%s  %-8s  quoted %d %s (target margin %s)\n", wf.ID, wf.Status, wf.Quoted.Amount, wf.Quoted.Currency, wf.Margin.Target)
	}
	for i := 0; i < n; i++ {
		select {
		case e := <-done:
			wf, err := engine.Fetch(ctx, settleflow.Test, e.Data.WorkflowID)
			if err != nil {
				return err
			}
			achieved := "-"
			if wf.Margin.Achieved != nil {
				achieved = wf.Margin.Achieved.String()
			}
			s := wf.Settlement
			if s == nil {
				s = &settleflow.Settlement{}
			}
			fmt.Printf("%s  %-8s  margin %s  %s tx %s… block %d (%d confirmations)\n",
				wf.ID, wf.Status, achieved, s.Network, short(s.TxHash), s.BlockNumber, s.Confirmations)
		case <-ctx.Done():
			return fmt.Errorf("waiting for settlements: %w", ctx.Err())
		}
	}
	return nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
