// Command webhook-receiver is a minimal settleflow webhook receiver: it
// verifies each delivery's signature with webhook.ConstructEvent and answers
// {"received": true}, or 400 when the signature does not verify.
//
//	SETTLEFLOW_WEBHOOK_SECRET=whsec_... go run ./examples/webhook-receiver -addr 127.0.0.1:4242
//
// Register its URL with the reference server (`webhooks add --env test --url
// http://127.0.0.1:4242/webhooks`) and use the secret it prints.
package main

import (
	"errors"
	"flag"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/settleflow/settleflow/webhook"
	"go.uber.org/zap"
)

// maxBody bounds what the receiver reads of a delivery.
const maxBody = 1 << 20

func main() {
	addr := flag.String("addr", "127.0.0.1:4242", "address to listen on")
	path := flag.String("path", "/webhooks", "path that receives the deliveries")
	header := flag.String("header", webhook.DefaultSignatureHeader, "signature header name (the service's short name + \"-signature\")")
	flag.Parse()

	log, err := zap.NewProduction()
	if err != nil {
		panic(err)
	}
	defer log.Sync()

	secret := os.Getenv("SETTLEFLOW_WEBHOOK_SECRET")
	if secret == "" {
		log.Fatal("SETTLEFLOW_WEBHOOK_SECRET is not set")
	}
	mux := http.NewServeMux()
	mux.Handle("POST "+*path, newHandler(secret, *header, log))
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Info("listening", zap.String("addr", *addr), zap.String("path", *path))
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal("serve", zap.Error(err))
	}
}

// newHandler verifies each delivery against secret and acknowledges it.
// Delivery is at least once: a real receiver would dedupe on event.ID.
func newHandler(secret, header string, log *zap.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			http.Error(w, `{"error": "body unreadable or too large"}`, http.StatusBadRequest)
			return
		}
		event, err := webhook.ConstructEvent(body, r.Header.Get(header), secret)
		if err != nil {
			log.Warn("webhook rejected", zap.Error(err))
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error": "bad signature"}`)
			return
		}
		log.Info("webhook received",
			zap.String("id", event.ID),
			zap.String("type", string(event.Type)),
			zap.String("workflowId", event.Data.WorkflowID))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"received": true}`)
	})
}
