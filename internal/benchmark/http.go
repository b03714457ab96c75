package benchmark

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/apikey"
	"github.com/settleflow/settleflow/httpapi"
	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/ratelimit"
	"github.com/settleflow/settleflow/storage/bunstore"
	"github.com/settleflow/settleflow/storage/postgres"
	"github.com/settleflow/settleflow/storage/sqlite"
	"github.com/uptrace/bun/driver/pgdriver"
)

// API is the HTTP API over TLS on loopback, on a fresh SQLite file (or a
// Postgres schema of its own), with an enterprise test key whose limits the
// load cannot reach. The engine is not started: the figures are the API's,
// not the workers'.
type API struct {
	URL    string
	Key    string
	Client *http.Client
	engine *settleflow.Engine
	close  func()
}

// Settle starts the engine's workers and waits until every workflow in ids
// is Settled.
func (a *API) Settle(ctx context.Context, ids []string) error {
	if err := a.engine.Start(ctx); err != nil {
		return err
	}
	deadline := time.Now().Add(time.Minute)
	for _, id := range ids {
		for {
			w, err := a.engine.Fetch(ctx, settleflow.Test, id)
			if err != nil {
				return err
			}
			if w.Status == settleflow.Settled {
				break
			}
			if w.Status == settleflow.Failed || time.Now().After(deadline) {
				return fmt.Errorf("workflow %s is %s", id, w.Status)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return nil
}

// Close stops the server and closes the store.
func (a *API) Close() { a.close() }

// tlsServer serves h over TLS 1.2+ on loopback, HTTP/1.1 with keep-alive.
func tlsServer(h http.Handler) (*httptest.Server, *http.Client) {
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: pool},
		MaxIdleConnsPerHost: 256,
		MaxConnsPerHost:     256,
	}}
	return srv, client
}

// APIOptions configure StartAPI.
type APIOptions struct {
	// Exclusive opens the database as the reference server does (reads of
	// the workflows written last served from memory); otherwise every
	// fetch reads SQLite.
	Exclusive bool
	// Synchronous is the database's setting (default FULL).
	Synchronous sqlite.Synchronous
	// DiscardInserts, a diagnostic, puts the engine on a store that
	// answers InsertWorkflows without writing anything: what create costs
	// without its database. Nothing created can be fetched.
	DiscardInserts bool
	// PostgresDSN, if set, puts the API on a Postgres store in a schema of
	// its own (dropped by Close) on that server, instead of SQLite in dir.
	PostgresDSN string
}

// StartAPI starts the API in dir (not used with PostgresDSN).
func StartAPI(dir string, opts APIOptions) (*API, error) {
	ctx := context.Background()
	var store *bunstore.Store
	dropSchema := func() {}
	var err error
	if opts.PostgresDSN != "" {
		store, dropSchema, err = openPostgres(ctx, opts.PostgresDSN)
	} else if err = os.MkdirAll(dir, 0o700); err == nil {
		store, err = sqlite.Open(ctx, filepath.Join(dir, "api.db"), sqlite.OpenOptions{Exclusive: opts.Exclusive, Synchronous: opts.Synchronous})
	}
	if err != nil {
		return nil, err
	}
	var engineStore settleflow.Store = store
	if opts.DiscardInserts {
		engineStore = discardInserts{store}
	}
	products := settleflow.NewProducts()
	if err := settleflow.Register(products, settleflow.Product[noop]{
		Name: Product, Price: settleflow.Price{TargetMargin: 3000},
		Estimate: func(p noop) (int64, error) { return 100 * p.Units, nil },
		Execute:  func(context.Context, noop) (settleflow.Execution, error) { return settleflow.Execution{}, nil },
	}); err != nil {
		return nil, err
	}
	engine, err := settleflow.New(settleflow.Options{Store: engineStore, Settler: &instantSettler{seen: map[string]bool{}}, Products: products,
		Notifier: settleflow.NotifierFunc(func(context.Context, []settleflow.Event) error { return nil })})
	if err != nil {
		return nil, err
	}
	keys, err := apikey.New(store.DB(), apikey.Options{})
	if err != nil {
		return nil, err
	}
	if err := keys.Migrate(ctx); err != nil {
		return nil, err
	}
	_, secret, err := keys.Create(ctx, apikey.CreateParams{Environment: settleflow.Test, Name: "bench", Plan: apikey.Enterprise,
		PerMinute: 1 << 30, PerDay: 1 << 30})
	if err != nil {
		return nil, err
	}
	h, err := httpapi.New(httpapi.Options{Engine: engine, Keys: httpapi.APIKeys(keys), Limiter: ratelimit.NewMemory()})
	if err != nil {
		return nil, err
	}
	srv, client := tlsServer(h)
	return &API{URL: srv.URL, Key: secret, Client: client, engine: engine, close: func() {
		srv.Close()
		engine.Stop(context.Background())
		keys.Close()
		store.Close()
		dropSchema()
	}}, nil
}

// openPostgres opens a Postgres store in a new schema on the server at dsn,
// and returns the function that drops the schema.
func openPostgres(ctx context.Context, dsn string) (*bunstore.Store, func(), error) {
	admin := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(dsn)))
	schema := "settleflow_bench_" + strings.ToLower(ids.New("", time.Now()))
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		return nil, nil, fmt.Errorf("postgres: %w", err)
	}
	drop := func() {
		admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		admin.Close()
	}
	// The store as storage/postgres.Open configures it, in the schema.
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	store, err := postgres.Open(ctx, dsn+sep+"search_path="+schema)
	if err != nil {
		drop()
		return nil, nil, err
	}
	return store, drop, nil
}

// discardInserts is a Store whose InsertWorkflows stores nothing: a
// benchmark's diagnostic, never a Store to run.
type discardInserts struct{ settleflow.Store }

func (discardInserts) InsertWorkflows(_ context.Context, ins []settleflow.Insert) ([]settleflow.InsertResult, error) {
	return make([]settleflow.InsertResult, len(ins)), nil
}

// StartNoop serves a handler that answers {} behind the same TLS server:
// the baseline.
func StartNoop() (*API, error) {
	srv, client := tlsServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("{}\n"))
	}))
	return &API{URL: srv.URL, Client: client, close: srv.Close}, nil
}

// LoadResult is what a load run measured.
//
// (The API's engine is started only by Settle.)
type LoadResult struct {
	Requests int
	Seconds  float64
	P50, P99 time.Duration
	// Latencies are every request's, sorted.
	Latencies []time.Duration
}

// Merge adds up runs of one target: requests over the sum of their times,
// percentiles over all their requests.
func Merge(runs ...LoadResult) LoadResult {
	var m LoadResult
	for _, r := range runs {
		m.Requests += r.Requests
		m.Seconds += r.Seconds
		m.Latencies = append(m.Latencies, r.Latencies...)
	}
	slices.Sort(m.Latencies)
	if n := len(m.Latencies); n > 0 {
		m.P50, m.P99 = m.Latencies[n/2], m.Latencies[n*99/100]
	}
	return m
}

// PerSecond is the throughput.
func (r LoadResult) PerSecond() float64 { return float64(r.Requests) / r.Seconds }

// Load sends requests from `connections` goroutines (one keep-alive
// connection each) for d; every answer must have status want.
func Load(ctx context.Context, a *API, d time.Duration, connections int, want int, newReq func(i int) (*http.Request, error)) (LoadResult, error) {
	var (
		mu    sync.Mutex
		lat   []time.Duration
		next  atomic.Int64
		first error
		wg    sync.WaitGroup
	)
	deadline := time.Now().Add(d)
	start := time.Now()
	for c := 0; c < connections; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]time.Duration, 0, 4096)
			for time.Now().Before(deadline) && ctx.Err() == nil {
				req, err := newReq(int(next.Add(1)))
				if err == nil {
					t0 := time.Now()
					var resp *http.Response
					resp, err = a.Client.Do(req)
					if err == nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						local = append(local, time.Since(t0))
						if resp.StatusCode != want {
							err = fmt.Errorf("%s %s: status %d", req.Method, req.URL.Path, resp.StatusCode)
						}
					}
				}
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					break
				}
			}
			mu.Lock()
			lat = append(lat, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	if first != nil {
		return LoadResult{}, first
	}
	slices.Sort(lat)
	if len(lat) == 0 {
		return LoadResult{}, fmt.Errorf("no request completed")
	}
	return LoadResult{Requests: len(lat), Seconds: elapsed, P50: lat[len(lat)/2], P99: lat[len(lat)*99/100], Latencies: lat}, nil
}

// CreateRequest builds POST /v1/workflows.
func (a *API) CreateRequest(i int) (*http.Request, error) {
	req, err := http.NewRequest("POST", a.URL+"/v1/workflows", strings.NewReader(`{"product":"noop","customerId":"cus_bench","payload":{"units":1}}`))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+a.Key)
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}

// Seed creates n workflows and returns their ids, for fetches.
func (a *API) Seed(n int) ([]string, error) {
	ids := make([]string, 0, n)
	for i := 0; i < n; i++ {
		req, _ := a.CreateRequest(i)
		resp, err := a.Client.Do(req)
		if err != nil {
			return nil, err
		}
		var wf struct {
			ID string `json:"id"`
		}
		err = json.NewDecoder(resp.Body).Decode(&wf)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusCreated {
			return nil, fmt.Errorf("seed: status %d: %v", resp.StatusCode, err)
		}
		ids = append(ids, wf.ID)
	}
	return ids, nil
}

// FetchRequest builds GET /v1/workflows/{id}.
func (a *API) FetchRequest(id string) (*http.Request, error) {
	req, err := http.NewRequest("GET", a.URL+"/v1/workflows/"+id, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+a.Key)
	return req, nil
}

// NoopRequest builds a POST to the baseline with the same body as a create.
func (a *API) NoopRequest(i int) (*http.Request, error) {
	req, err := http.NewRequest("POST", a.URL+"/", strings.NewReader(`{"product":"noop","customerId":"cus_bench","payload":{"units":1}}`))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}
