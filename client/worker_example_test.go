package client_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/settleflow/settleflow/client"
)

// Serve the remote product ticket-triage from your own process: start the
// reference server with -remote ticket-triage, make a worker key with
// `go run ./examples/server keys create -env test -name triage -kind worker
// -products ticket-triage`, and run this with SETTLEFLOW_WORKER_KEY set to
// it. Every ticket-triage workflow created with an ordinary key is then
// run here, and the server quotes, meters, judges and settles it as before.
// SIGTERM (or Ctrl-C) stops claiming and lets the tasks in flight finish
// within 30 s.
func ExampleWorker() {
	pem, err := os.ReadFile("settleflow-data/tls/cert.pem")
	if err != nil {
		log.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	c := client.New(os.Getenv("SETTLEFLOW_WORKER_KEY"), // rk_test_…
		client.WithBaseURL("https://127.0.0.1:8443"), client.WithRootCAs(pool))

	w := c.NewWorker(client.WorkerOptions{Concurrency: 8})
	w.Handle("ticket-triage", func(ctx context.Context, task *client.Task) (client.TaskResult, error) {
		var ticket struct {
			TicketID    string `json:"ticketId"`
			Subject     string `json:"subject"`
			Attachments int    `json:"attachments"`
		}
		if err := json.Unmarshal(task.Payload, &ticket); err != nil {
			return client.TaskResult{}, client.Permanent(err) // retrying will not help
		}
		// The budget the margin floor leaves, if the workflow has one.
		if budget, ok := client.SpendBudget(ctx); ok && budget < 100 {
			return client.TaskResult{}, client.Permanent(errors.New("the budget cannot pay for the model call"))
		}
		// Report spend as it happens: past the budget the server stops the
		// task (ctx is canceled, ReportSpend returns ErrMarginFloorExceeded).
		if err := client.ReportSpend(ctx, client.CostItem{Category: "model", Provider: "openai", Units: 1200, Amount: 90}); err != nil {
			return client.TaskResult{}, err
		}
		select { // the work itself; stop when the task is stopped
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			return client.TaskResult{}, context.Cause(ctx)
		}
		return client.TaskResult{
			Result:    map[string]any{"ticketId": ticket.TicketID, "queue": "billing"},
			CostItems: []client.CostItem{{Category: "compute", Provider: "worker", Units: 1, Amount: 5}},
		}, nil
	})

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := w.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		log.Fatal(err)
	}
}
