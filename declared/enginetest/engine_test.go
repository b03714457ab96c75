package enginetest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/apikey"
	"github.com/settleflow/settleflow/declared"
	"github.com/settleflow/settleflow/httpapi"
	"github.com/settleflow/settleflow/ratelimit"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/storage/sqlite"
)

// The demo products, declared (examples/server/testdata/demo-products.json):
// one of each pricing model.
const demoFile = "../../examples/server/testdata/demo-products.json"

// Declared products on a real engine (SQLite, the simulated chain) beside a
// Go product: each workflow is quoted at create by the declared estimate,
// runs through the Go executor the test supplies, and settles with the
// charge its pricing model gives (worked out by hand below); the HTTP
// catalogue lists declared and Go products alike.
func TestDeclaredProductsOnAnEngine(t *testing.T) {
	ctx := context.Background()
	products, err := declared.Load(demoFile)
	if err != nil {
		t.Fatal(err)
	}
	registry := settleflow.NewProducts()
	type goPayload struct {
		N int `json:"n" jsonschema:"minimum=0"`
	}
	err = settleflow.Register(registry, settleflow.Product[goPayload]{Name: "go-product", Description: "A Go product.",
		Price:    settleflow.Price{TargetMargin: 2000, MinimumCharge: 10},
		Estimate: func(p goPayload) (int64, error) { return int64(10 * p.N), nil },
		Execute: func(context.Context, goPayload) (settleflow.Execution, error) {
			return settleflow.Execution{ActualCost: 5, Result: map[string]any{"ok": true}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	// The executor: what a worker will do, in Go here. It records what
	// ran, and answers each product as its demo does.
	var mu sync.Mutex
	ran := map[string]string{}
	exec := declared.ExecutorFunc(func(ctx context.Context, product string, payload json.RawMessage) (settleflow.Execution, error) {
		mu.Lock()
		ran[settleflow.WorkflowID(ctx)] = product + " " + string(payload)
		mu.Unlock()
		var p map[string]any
		if err := json.Unmarshal(payload, &p); err != nil {
			return settleflow.Execution{}, settleflow.Permanent(err)
		}
		switch product {
		case "ticket-triage":
			return settleflow.Execution{ActualCost: 300, Result: map[string]any{"queue": "billing"}}, nil
		case "document-extraction":
			return settleflow.Execution{ActualCost: 70, Result: map[string]any{"fields": map[string]any{"title": "x"}}}, nil
		case "ticket-resolution":
			if strings.Contains(p["question"].(string), "password") {
				return settleflow.Execution{ActualCost: 15, Result: map[string]any{"status": "resolved", "confidence": 0.93}}, nil
			}
			return settleflow.Execution{ActualCost: 17, Result: map[string]any{"status": "escalated", "confidence": 0.35}}, nil
		case "lead-enrichment":
			return settleflow.Execution{ActualCost: 11, Result: map[string]any{"found": false}}, nil
		}
		return settleflow.Execution{}, settleflow.Permanent(fmt.Errorf("no product %s", product))
	})
	if err := declared.Register(registry, products, exec); err != nil {
		t.Fatal(err)
	}
	// A name a products file declares cannot take a Go product's.
	if err := declared.Register(registry, products[:1], exec); err == nil {
		t.Fatal("registered ticket-triage twice")
	}

	dir := t.TempDir()
	store, err := sqlite.Open(ctx, filepath.Join(dir, "settleflow.db"), sqlite.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	chain, err := settlement.NewSimulated(ctx, settlement.SimulatedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer chain.Close()
	engine, err := settleflow.New(settleflow.Options{Store: store, Settler: chain, Products: registry,
		Notifier: settleflow.NotifierFunc(func(context.Context, []settleflow.Event) error { return nil })})
	if err != nil {
		t.Fatal(err)
	}
	if err := engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer engine.Stop(ctx)

	cases := []struct {
		product, payload string
		estimate         int64 // the declared estimate
		quoted, charged  int64
		outcome          string // "" for products without criteria
	}{
		// fixed: 200 + 50 × 3 = 350; ceil(350 / 0.7) = 500, charged whatever the cost.
		{"ticket-triage", `{"ticketId":"T-1","attachments":3}`, 350, 500, 500, ""},
		// capped: 10 + 4 × 12 + 2 × 12 (scanned) = 82; ceil(82 / 0.7) = 118;
		// charged ceil(70 × 1.3) = 91, under the cap.
		{"document-extraction", `{"documentId":"D-1","pages":12,"quality":"scanned"}`, 82, 118, 91, ""},
		// success_fee: 20 + ceil(27 / 200) = 21; ceil(21 / 0.4) = 53, at least 100.
		{"ticket-resolution", `{"ticketId":"T-2","question":"How do I reset my password?"}`, 21, 100, 100, "succeeded"},
		{"ticket-resolution", `{"ticketId":"T-3","question":"Where is my parcel?"}`, 21, 100, 0, "failed"},
		// hybrid: 23; ceil(23 / 0.6) = 39; not found: the base ceil(39 × 0.3) = 12.
		{"lead-enrichment", `{"email":"jane.doe@acme.example"}`, 23, 39, 12, "failed"},
	}
	ids := make([]string, len(cases))
	for i, c := range cases {
		params := settleflow.CreateParams{Environment: settleflow.Test, Product: c.product, CustomerID: "cus_declared", Payload: json.RawMessage(c.payload)}
		q, err := engine.Quote(ctx, params)
		if err != nil {
			t.Fatalf("%s: quote: %v", c.product, err)
		}
		if q.EstimatedCost != c.estimate || q.Quoted.Amount != c.quoted {
			t.Errorf("%s: quote estimates %d and quotes %d, want %d and %d", c.product, q.EstimatedCost, q.Quoted.Amount, c.estimate, c.quoted)
		}
		wf, _, err := engine.Create(ctx, params)
		if err != nil {
			t.Fatalf("%s: create: %v", c.product, err)
		}
		if wf.Quoted.Amount != c.quoted {
			t.Errorf("%s: created quoted at %d, want %d", c.product, wf.Quoted.Amount, c.quoted)
		}
		ids[i] = wf.ID
	}
	deadline := time.Now().Add(2 * time.Minute)
	for i, c := range cases {
		var wf *settleflow.Workflow
		for {
			if wf, err = engine.Fetch(ctx, settleflow.Test, ids[i]); err != nil {
				t.Fatal(err)
			}
			if wf.Status.Terminal() || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if wf.Status != settleflow.Settled {
			t.Errorf("%s: %s (failure %+v), want Settled", c.product, wf.Status, wf.Failure)
			continue
		}
		charged := int64(0)
		if wf.Charged != nil {
			charged = wf.Charged.Amount
		}
		if charged != c.charged {
			t.Errorf("%s %s: charged %d, want %d", c.product, c.payload, charged, c.charged)
		}
		if want := wf.Pricing.Price(wf.Margin.Target).Charge(c.quoted, *wf.ActualCost, c.outcome != "failed"); want != c.charged {
			t.Errorf("%s: the pricing model charges %d, the case says %d", c.product, want, c.charged)
		}
		if c.outcome != "" && (wf.Outcome == nil || wf.Outcome.Success != (c.outcome == "succeeded")) {
			t.Errorf("%s: outcome %+v, want %s", c.product, wf.Outcome, c.outcome)
		}
		mu.Lock()
		if got := ran[ids[i]]; got != c.product+" "+c.payload {
			t.Errorf("the executor ran %q for %s, want %s %s", got, ids[i], c.product, c.payload)
		}
		mu.Unlock()
	}

	// A payload the schema refuses is refused at create, naming the field
	// as for a Go product, and nothing runs.
	for _, c := range []struct{ product, payload, param string }{
		{"document-extraction", `{"documentId":"D-2","pages":501}`, "payload.pages"},
		{"document-extraction", `{"documentId":"D-2"}`, "payload.pages"},
		{"document-extraction", `{"documentId":"D-2","pages":3,"quality":"blurry"}`, "payload.quality"},
		{"ticket-triage", `{"ticketId":"T","Attachments":1}`, "payload.Attachments"},
		{"ticket-triage", `{"ticketId":"T","attachments":1,"attachments":2}`, "payload.attachments"},
	} {
		_, _, err := engine.Create(ctx, settleflow.CreateParams{Environment: settleflow.Test, Product: c.product, CustomerID: "cus_declared", Payload: json.RawMessage(c.payload)})
		inv, ok := err.(*settleflow.InvalidError)
		if !ok || inv.Param != c.param {
			t.Errorf("%s %s: got %v, want an InvalidError naming %s", c.product, c.payload, err, c.param)
		}
	}

	// GET /v1/products over HTTP: declared and Go products alike.
	keys, err := apikey.New(store.DB(), apikey.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := keys.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	_, secret, err := keys.Create(ctx, apikey.CreateParams{Environment: settleflow.Test, Name: "declared"})
	if err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(httpapi.Options{Engine: engine, Keys: httpapi.APIKeys(keys), Limiter: ratelimit.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/v1/products", nil)
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /v1/products: %d %s", resp.StatusCode, body)
	}
	var list struct {
		Data []map[string]json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatal(err)
	}
	names := map[string]map[string]json.RawMessage{}
	for _, p := range list.Data {
		var name string
		json.Unmarshal(p["name"], &name)
		names[name] = p
	}
	goKeys := keysOf(names["go-product"])
	for _, p := range products {
		entry, ok := names[p.Name]
		if !ok {
			t.Errorf("the catalogue lacks %s", p.Name)
			continue
		}
		if got := keysOf(entry); got != goKeys {
			t.Errorf("%s shows %s, a Go product %s", p.Name, got, goKeys)
		}
		var schema, example map[string]any
		if json.Unmarshal(entry["payloadSchema"], &schema) != nil || schema["type"] != "object" || json.Unmarshal(entry["example"], &example) != nil || len(example) == 0 {
			t.Errorf("%s: schema %s, example %s", p.Name, entry["payloadSchema"], entry["example"])
		}
	}
}

func keysOf(m map[string]json.RawMessage) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}
