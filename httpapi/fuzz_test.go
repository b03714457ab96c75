package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/httpapi"
	"github.com/settleflow/settleflow/ratelimit"
	"github.com/settleflow/settleflow/storage/sqlite"
)

// FuzzCreateWorkflow feeds arbitrary bodies, content types and idempotency
// keys to POST /v1/workflows: no input panics or yields a 500, and every
// answer is 201 or a JSON error of the documented kinds.
func FuzzCreateWorkflow(f *testing.F) {
	for _, seed := range []string{
		body1,
		`{}`, `[]`, `null`, ``, `{"product":`, `{"product":"ticket-triage"}`,
		`{"product":"ticket-triage","customerId":"cus_1","payload":{"ticketId":"x","attachments":3}}`,
		`{"product":"ticket-triage","customerId":"cus_1","payload":{"ticketId":"x","attachments":-3}}`,
		`{"product":"ticket-triage","customerId":"cus_1","payload":{"ticketId":"x","attachments":1e400}}`,
		`{"product":"ticket-triage","customerId":"cus_\u0000","payload":{"ticketId":"x"}}`,
		`{"product":"ticket-triage","customerId":"cus_1","payload":{"ticketId":"x"}} trailing`,
		`{"product":["a"],"customerId":{},"payload":[]}`,
		`{"product":"ticket-triage","product":"x","customerId":"cus_1","payload":{"ticketId":"x"}}`,
		"\xff\xfe{}",
		`{"product":"ticket-triage","customerId":"cus_1","payload":{"ticketId":"` + strings.Repeat("é", 300) + `"}}`,
	} {
		f.Add(seed, "application/json", "")
	}
	f.Add(body1, "application/json; charset=utf-8", "key-1")
	f.Add(body1, "text/json", "")
	f.Add(body1, "application/json", strings.Repeat("k", 300))

	store, err := sqlite.Open(context.Background(), filepath.Join(f.TempDir(), "fuzz.db"), sqlite.OpenOptions{Synchronous: sqlite.SyncNormal})
	if err != nil {
		f.Fatal(err)
	}
	defer store.Close()
	products := settleflow.NewProducts()
	settleflow.Register(products, settleflow.Product[ticket]{
		Name: "ticket-triage", Price: settleflow.Price{TargetMargin: 3000, MinimumCharge: 50},
		Estimate: func(t ticket) (int64, error) { return 200 + 50*int64(t.Attachments), nil },
		Execute:  func(context.Context, ticket) (settleflow.Execution, error) { return settleflow.Execution{}, nil },
	})
	engine, err := settleflow.New(settleflow.Options{Store: store, Settler: idleSettler{}, Products: products,
		Notifier: settleflow.NotifierFunc(func(context.Context, []settleflow.Event) error { return nil })})
	if err != nil {
		f.Fatal(err)
	}
	defer engine.Stop(context.Background())
	auth := authFunc(func(context.Context, string) (httpapi.Principal, error) {
		return httpapi.Principal{KeyID: "key_fuzz", Environment: settleflow.Test, RateLimitKey: "fuzz",
			Windows: []ratelimit.Window{ratelimit.Minute(1 << 30), ratelimit.Day(1 << 30)}}, nil
	})
	h, err := httpapi.New(httpapi.Options{Engine: engine, Keys: auth, Limiter: ratelimit.NewMemory()})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body, contentType, idemKey string) {
		req := httptest.NewRequest("POST", "/v1/workflows", strings.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		if idemKey != "" {
			req.Header.Set("Idempotency-Key", idemKey)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusCreated, http.StatusBadRequest, http.StatusConflict, http.StatusUnsupportedMediaType, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("status %d for body %q: %s", rec.Code, body, rec.Body)
		}
		if rec.Code != http.StatusCreated && !strings.HasPrefix(rec.Body.String(), `{"error":{"type":"`) {
			t.Fatalf("error body %s", rec.Body)
		}
	})
}
