package client_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/client"
	"github.com/settleflow/settleflow/webhook"
)

// Create a workflow against the reference server (go run ./examples/server),
// fetch it once it has settled, and list the customer's workflows.
func Example() {
	ctx := context.Background()

	// The reference server's self-signed certificate.
	pem, err := os.ReadFile("settleflow-data/tls/cert.pem")
	if err != nil {
		log.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)

	c := client.New(os.Getenv("SETTLEFLOW_API_KEY"),
		client.WithBaseURL("https://127.0.0.1:8443"),
		client.WithRootCAs(pool),
	)

	wf, err := c.Workflows.Create(ctx, &client.WorkflowCreateParams{
		Product:    "ticket-triage",
		CustomerID: "cus_123",
		Payload:    map[string]any{"ticketId": "T-42", "subject": "Refund for invoice 7", "attachments": 1},
		// Optional: your own key makes your own retries of this call safe.
		IdempotencyKey: "order-1001",
	})
	var apiErr *client.APIError
	if errors.As(err, &apiErr) {
		log.Fatalf("%s (param %q, request %s)", apiErr.Code, apiErr.Param, apiErr.RequestID)
	} else if err != nil {
		log.Fatal(err)
	}
	fmt.Println(wf.ID, wf.Status, wf.Quoted.Amount) // wf_… Pending 358

	// The outcome arrives by webhook; here, poll for it.
	for !wf.Status.Terminal() {
		time.Sleep(500 * time.Millisecond)
		if wf, err = c.Workflows.Fetch(ctx, wf.ID); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println(wf.Status, wf.Margin.Achieved) // Settled 0.2875

	for w, err := range c.Workflows.ListAutoPaging(ctx, &client.WorkflowListParams{CustomerID: "cus_123", Status: settleflow.Settled}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(w.ID, w.Quoted.Amount, w.CreatedAt)
	}
}

// Errors are told apart with errors.As.
func ExampleRateLimitError() {
	c := client.New(os.Getenv("SETTLEFLOW_API_KEY"), client.WithMaxRetries(0))
	_, err := c.Workflows.List(context.Background(), &client.WorkflowListParams{Limit: 5})

	var rateLimited *client.RateLimitError
	var auth *client.AuthenticationError
	var conn *client.ConnectionError
	switch {
	case errors.As(err, &rateLimited):
		fmt.Println("rate limited; retry in", rateLimited.RetryAfter, "limit", rateLimited.Header.Get("X-RateLimit-Limit"))
	case errors.As(err, &auth):
		fmt.Println("check the API key:", auth.Code)
	case errors.As(err, &conn):
		fmt.Println("no answer:", conn.Err, "timeout:", conn.Timeout())
	}
}

// A webhook receiver verifies each delivery with webhook.ConstructEvent over
// the raw body, before trusting anything in it.
func Example_webhookReceiver() {
	secret := os.Getenv("SETTLEFLOW_WEBHOOK_SECRET") // whsec_…, shown once by `webhooks add`
	http.HandleFunc("POST /webhooks", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		event, err := webhook.ConstructEvent(body, r.Header.Get("service-signature"), secret)
		var sve *webhook.SignatureVerificationError
		if errors.As(err, &sve) {
			log.Printf("webhook refused: %s", sve.Reason)
			http.Error(w, "bad signature", http.StatusBadRequest)
			return
		}
		// Delivery is at least once: dedupe on event.ID.
		if event.Type == settleflow.EventWorkflowCompleted {
			log.Printf("workflow %s settled, margin %v", event.Data.WorkflowID, event.Data.Margin.Achieved)
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"received": true}`)
	})
	log.Fatal(http.ListenAndServe("127.0.0.1:4242", nil))
}
