package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/apikey"
	"github.com/settleflow/settleflow/httpapi"
	"github.com/settleflow/settleflow/ratelimit"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/storage/sqlite"
)

// exampleAPI builds the API on a fresh database with one test key, as an
// application would, and returns it, the key and what closes it all.
func exampleAPI() (api http.Handler, secret string, closeAll func()) {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "httpapi-example")
	var closers []func()
	closeAll = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	closers = append(closers, func() { os.RemoveAll(dir) })
	store, err := sqlite.Open(ctx, filepath.Join(dir, "settleflow.db"), sqlite.OpenOptions{})
	if err != nil {
		panic(err)
	}
	closers = append(closers, func() { store.Close() })
	keys, err := apikey.New(store.DB(), apikey.Options{})
	if err != nil {
		panic(err)
	}
	if err := keys.Migrate(ctx); err != nil {
		panic(err)
	}
	_, secret, err = keys.Create(ctx, apikey.CreateParams{Environment: settleflow.Test, Name: "example"})
	if err != nil {
		panic(err)
	}
	chain, err := settlement.NewSimulated(ctx, settlement.SimulatedOptions{})
	if err != nil {
		panic(err)
	}
	closers = append(closers, func() { chain.Close() })
	engine, err := settleflow.New(settleflow.Options{Store: store, Settler: chain, Products: settleflow.NewProducts(),
		Notifier: settleflow.NotifierFunc(func(context.Context, []settleflow.Event) error { return nil })})
	if err != nil {
		panic(err)
	}
	closers = append(closers, func() { engine.Stop(ctx) })
	api, err = httpapi.New(httpapi.Options{Engine: engine, Keys: httpapi.APIKeys(keys), Limiter: ratelimit.NewMemory()})
	if err != nil {
		panic(err)
	}
	return api, secret, closeAll
}

// The API mounted on an application's own mux, beside its other routes:
// one key created with the apikey package, one request with it.
func ExampleNew() {
	api, secret, closeAll := exampleAPI()
	defer closeAll()
	mux := http.NewServeMux()
	mux.Handle("/v1/", api)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	srv := httptest.NewTLSServer(mux)
	defer srv.Close()

	for _, key := range []string{secret, ""} {
		req, _ := http.NewRequest("GET", srv.URL+"/v1/products", nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			panic(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		b := strings.TrimSpace(string(body))
		fmt.Println(resp.StatusCode, b[:min(len(b), 40)])
	}
	// Output:
	// 200 {"object":"list","url":"/v1/products","d
	// 401 {"error":{"type":"authentication_error",
}

// The API mounted under a prefix of the application's choosing: its routes
// are ServeMux patterns from /v1 on, so http.StripPrefix is all it takes.
func ExampleNew_mount() {
	api, secret, closeAll := exampleAPI()
	defer closeAll()
	mux := http.NewServeMux()
	mux.Handle("/payments/", http.StripPrefix("/payments", api))
	srv := httptest.NewTLSServer(mux)
	defer srv.Close()

	for _, path := range []string{"/payments/v1/products", "/payments/v1/workflows/wf_nope", "/v1/products"} {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+secret)
		resp, err := srv.Client().Do(req)
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		fmt.Println(path, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	// Output:
	// /payments/v1/products 200 application/json
	// /payments/v1/workflows/wf_nope 404 application/json
	// /v1/products 404 text/plain; charset=utf-8
}
