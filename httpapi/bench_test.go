package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/apikey"
	"github.com/settleflow/settleflow/httpapi"
	"github.com/settleflow/settleflow/ratelimit"
	"github.com/settleflow/settleflow/storage/sqlite"
)

// The handler's own cost per request, without TLS or a network: the
// complement of cmd/bench -suite http, which measures the whole path.

func BenchmarkHandlerDirect(b *testing.B) {
	h, key, id := benchHandler(b)
	for _, c := range []struct {
		name   string
		method string
		path   string
		body   string
		want   int
	}{
		{"fetch", "GET", "/v1/workflows/" + id, "", 200},
		{"products", "GET", "/v1/products", "", 200},
		{"create", "POST", "/v1/workflows", body1, 201},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				var body *strings.Reader
				if c.body != "" {
					body = strings.NewReader(c.body)
				}
				var req *http.Request
				if body != nil {
					req = httptest.NewRequest(c.method, c.path, body)
					req.Header.Set("Content-Type", "application/json")
				} else {
					req = httptest.NewRequest(c.method, c.path, nil)
				}
				req.Header.Set("Authorization", "Bearer "+key)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != c.want {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
			}
		})
	}
}

func benchHandler(b *testing.B) (http.Handler, string, string) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), sqlite.OpenOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	products := settleflow.NewProducts()
	settleflow.Register(products, settleflow.Product[ticket]{
		Name: "ticket-triage", Price: settleflow.Price{TargetMargin: 3000, MinimumCharge: 50},
		Estimate: func(t ticket) (int64, error) { return 200, nil },
		Execute:  func(context.Context, ticket) (settleflow.Execution, error) { return settleflow.Execution{}, nil },
	})
	engine, err := settleflow.New(settleflow.Options{Store: store, Settler: idleSettler{}, Products: products,
		Notifier: settleflow.NotifierFunc(func(context.Context, []settleflow.Event) error { return nil })})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { engine.Stop(ctx) })
	keys, err := apikey.New(store.DB(), apikey.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := keys.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { keys.Close() })
	_, secret, err := keys.Create(ctx, apikey.CreateParams{Environment: settleflow.Test, Name: "bench", Plan: apikey.Enterprise, PerMinute: 1 << 30, PerDay: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	h, err := httpapi.New(httpapi.Options{Engine: engine, Keys: httpapi.APIKeys(keys), Limiter: ratelimit.NewMemory()})
	if err != nil {
		b.Fatal(err)
	}
	wf, _, err := engine.Create(ctx, settleflow.CreateParams{Environment: settleflow.Test, Product: "ticket-triage", CustomerID: "cus_1", Payload: []byte(`{"ticketId":"T"}`)})
	if err != nil {
		b.Fatal(err)
	}
	return h, secret, wf.ID
}
