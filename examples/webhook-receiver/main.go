// Command webhook-receiver is a minimal settleflow webhook receiver: it
// verifies each delivery's signature with signature.ConstructEvent and
// answers {"received": true}, or 400 when the signature does not verify.
//
//	SETTLEFLOW_WEBHOOK_SECRET=whsec_... go run ./examples/webhook-receiver -addr 127.0.0.1:4242
//
// Register its URL with the reference server (`webhooks add --env test --url
// http://127.0.0.1:4242/webhooks`) and use the secret it prints.
//
// It depends on the standard library and on settleflow's packages
// webhook/signature and wire only (a test checks it), so it is what a
// receiver in another code base copies.
package main

import (
	"errors"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/settleflow/settleflow/webhook/signature"
)

// maxBody bounds what the receiver reads of a delivery.
const maxBody = 1 << 20

func main() {
	addr := flag.String("addr", "127.0.0.1:4242", "address to listen on")
	path := flag.String("path", "/webhooks", "path that receives the deliveries")
	header := flag.String("header", signature.DefaultHeader, "signature header name (the service's short name + \"-signature\")")
	flag.Parse()

	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	secret := os.Getenv("SETTLEFLOW_WEBHOOK_SECRET")
	if secret == "" {
		log.Error("SETTLEFLOW_WEBHOOK_SECRET is not set")
		os.Exit(1)
	}
	mux := http.NewServeMux()
	mux.Handle("POST "+*path, newHandler(secret, *header, log))
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Info("listening", "addr", *addr, "path", *path)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error("serve", "error", err)
		os.Exit(1)
	}
}

// newHandler verifies each delivery against secret and acknowledges it.
// Delivery is at least once: a real receiver would dedupe on event.ID.
func newHandler(secret, header string, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			http.Error(w, `{"error": "body unreadable or too large"}`, http.StatusBadRequest)
			return
		}
		event, err := signature.ConstructEvent(body, r.Header.Get(header), secret)
		if err != nil {
			log.Warn("webhook rejected", "error", err)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error": "bad signature"}`)
			return
		}
		log.Info("webhook received",
			"id", event.ID,
			"type", string(event.Type),
			"workflowId", event.Data.WorkflowID)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"received": true}`)
	})
}
