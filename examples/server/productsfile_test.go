package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/settleflow/settleflow/client"
)

// A products file with a fault is refused at start, before anything is
// opened, with an error naming the file as given, the line, the column and
// the field.
func TestProductsFileRefusedAtStart(t *testing.T) {
	valid, err := os.ReadFile("testdata/remote-products.json")
	if err != nil {
		t.Fatal(err)
	}
	edit := func(old, new string) string {
		if strings.Count(string(valid), old) != 1 {
			t.Fatalf("%q occurs %d times", old, strings.Count(string(valid), old))
		}
		return strings.Replace(string(valid), old, new, 1)
	}
	for _, c := range []struct {
		name, file, want string
	}{
		{"unknown field", edit(`"pricingSummary"`, `"pricingSumary"`), `:17:7: products[0].pricingSumary: unknown field`},
		{"bad schema", edit(`"minimum": 1,`, `"minimum": "one",`), `:10:51: products[0].payloadSchema.properties.pages.minimum: the payload schema is refused`},
		{"estimate naming a field the schema lacks", edit(`"/pages"`, `"/page"`), `:18:57: products[0].estimate.perUnit[0].pointer: "/page" is not a property of the payload schema`},
		{"not remote", edit(`"remote": true`, `"remote": false`), `:19:17: products[0].remote: "page-count" is not remote`},
		{"not remote, by default", edit(`,
      "remote": true`, ``), `:3:5: products[0].remote: "page-count" is not remote`},
		{"a demo product's name", edit(`"page-count"`, `"ticket-triage"`), `:4:15: products[0].name: product "ticket-triage" cannot be declared here`},
		{"data after the document", string(valid) + "{}", `:23:1: data after the products document`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "products.json")
			if err := os.WriteFile(path, []byte(c.file), 0o600); err != nil {
				t.Fatal(err)
			}
			_, errOut, code := runCmd(t, dir, "-https", "127.0.0.1:0", "-http", "", "-products", path)
			if code != 1 || !strings.Contains(errOut, "server: -products: "+path+c.want) {
				t.Fatalf("exit %d, stderr %q; want exit 1 and %q", code, errOut, path+c.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "settleflow.db")); !os.IsNotExist(err) {
				t.Fatalf("the refused start opened the database: %v", err)
			}
		})
	}
	_, errOut, code := runCmd(t, t.TempDir(), "-products", "/nonexistent/products.json")
	if code != 1 || !strings.Contains(errOut, "-products: open /nonexistent/products.json: no such file") {
		t.Fatalf("a missing file: exit %d, %q", code, errOut)
	}
}

// The products of -products join the demo products: the catalogue shows
// them as it shows Go products, and a worker runs them to a settled charge.
func TestProductsFileServedByWorkers(t *testing.T) {
	dir := t.TempDir()
	s := startServerWith(t, dir, "-products", "testdata/remote-products.json")
	status, _, list := s.do("GET", "/v1/products", s.firstKey, "")
	if status != 200 {
		t.Fatalf("GET /v1/products: %d %v", status, list)
	}
	names := map[string]map[string]any{}
	for _, p := range list["data"].([]any) {
		names[p.(map[string]any)["name"].(string)] = p.(map[string]any)
	}
	if len(names) != 7 || names["ticket-triage"] == nil || names["page-count"] == nil {
		t.Fatalf("catalogue: %v; want the six demo products and page-count", list)
	}
	// The same members, Go or declared.
	for k := range names["ticket-triage"] {
		if _, ok := names["page-count"][k]; !ok && k != "marginFloor" && k != "successCriteria" {
			t.Errorf("the declared product has no %q: %v", k, names["page-count"])
		}
	}
	if status, _, one := s.do("GET", "/v1/products/page-count", s.firstKey, ""); status != 200 || one["pricingSummary"] != "1.00 USD plus 0.10 USD per page" {
		t.Fatalf("GET /v1/products/page-count: %d %v", status, one)
	}

	worker := s.apiClient(t, workerKey(t, dir, nil))
	w := worker.NewWorker(client.WorkerOptions{Wait: 5 * time.Second})
	w.Handle("page-count", func(ctx context.Context, task *client.Task) (client.TaskResult, error) {
		return client.TaskResult{Result: map[string]any{"counted": true},
			CostItems: []client.CostItem{{Category: "compute", Provider: "worker", Units: 1, Amount: 120}}}, nil
	})
	wctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	defer func() { stop(); <-done }()

	id := s.createWorkflow(t, "page-count", "cus_pages", `{"documentId":"D-7","pages":12}`)
	got := s.waitFor(t, id)
	// Estimate 100 + 10 × 12 = 220, quoted ceil(220 / 0.7) = 315: fixed
	// pricing charges the quote.
	if got["status"] != "Settled" || got["quoted"].(map[string]any)["amount"] != 315.0 || got["charged"].(map[string]any)["amount"] != 315.0 {
		t.Fatalf("workflow: %v; want Settled, quoted and charged 315", got)
	}
}
