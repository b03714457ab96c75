package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/settleflow/settleflow/client"
	"github.com/settleflow/settleflow/internal/pgtest"
)

// productFile writes a products file of one remote product, estimated base
// plus 10 per page, and returns its path.
func productFile(t *testing.T, dir, name string, base int, margin string, extra string) string {
	t.Helper()
	fileCount++
	path := filepath.Join(dir, fmt.Sprintf("%s-%d.json", name, fileCount))
	src := fmt.Sprintf(`{
  "products": [{
    "name": %q,
    "description": "Counts pages.",
    "payloadSchema": {"type": "object", "properties": {"pages": {"type": "integer", "minimum": 1, "maximum": 500}},
      "required": ["pages"], "additionalProperties": false},
    "pricing": {"model": "fixed", "targetMargin": %s},
    "estimate": {"base": %d, "perUnit": [{"pointer": "/pages", "unit": "value", "cost": 10}]}%s
  }]
}
`, name, margin, base, extra)
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

var fileCount int

func regexpMatch(pattern, s string) bool { return regexp.MustCompile(pattern).MatchString(s) }

const remoteField = `,
    "remote": true`

// waitCatalogue polls GET /v1/products/NAME until ok says the answer is
// the one awaited (a running server applies a change within catalogPoll).
func (s *server) waitCatalogue(t *testing.T, name string, ok func(status int, p map[string]any) bool) {
	t.Helper()
	deadline := time.Now().Add(3*catalogPoll + 5*time.Second)
	for {
		status, _, p := s.do("GET", "/v1/products/"+name, s.firstKey, "")
		if ok(status, p) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET /v1/products/%s: %d %v", name, status, p)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The products commands on the database a server runs on: a product added
// before the start is sold from it, an update applies to the workflows
// created after it while one created before settles at its quote, a
// product added while the server runs is sold within seconds, a retired
// one is refused (product_retired) while its workflows in flight finish,
// and a restart keeps all of it.
func TestProductsCommands(t *testing.T) {
	dir := t.TempDir()
	files := t.TempDir()
	v1 := productFile(t, files, "page-count", 100, "0.3", remoteField)

	// Refused, each naming the file, line and field, with nothing stored.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"products", "add", productFile(t, files, "page-count", 100, "0.3", "")}, `:2:16: products[0].remote: "page-count" is not remote`},
		{[]string{"products", "add", productFile(t, files, "ticket-triage", 100, "0.3", remoteField)}, `:3:13: products[0].name: product "ticket-triage" cannot be declared here`},
		{[]string{"products", "add", productFile(t, files, "page-count", 100, "1.5", remoteField)}, `:7:51: products[0].pricing.targetMargin: 1.5 must be at least 0 and below 1`},
		{[]string{"products", "add", productFile(t, files, "page-count", 100, "0.3", `, "colour": 1, "remote": true`)}, `:8:97: products[0].colour: unknown field`},
		{[]string{"products", "update", v1}, "no product page-count in the catalogue: add it with products add"},
		{[]string{"products", "retire", "page-count"}, "no product page-count in the catalogue"},
		{[]string{"products", "show", "page-count"}, "no product page-count in the catalogue"},
	} {
		_, errOut, code := runCmd(t, dir, c.args...)
		if code != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("server %s: exit %d, %q; want exit 1 and %q", strings.Join(c.args, " "), code, errOut, c.want)
		}
	}
	if out := cli(t, dir, "products", "list", "-json"); strings.TrimSpace(out) != "[]" {
		t.Fatalf("after the refusals, products list: %s", out)
	}
	two := filepath.Join(files, "two.json")
	os.WriteFile(two, []byte(`{"products": [`+productJSON(t, v1)+`, `+productJSON(t, v1)+`]}`), 0o600)
	if _, errOut, code := runCmd(t, dir, "products", "add", two); code != 1 || !strings.Contains(errOut, "products[1]: a second product: this file must declare one product") {
		t.Fatalf("a file of two products: exit %d, %q", code, errOut)
	}

	if out := cli(t, dir, "products", "add", v1); !strings.Contains(out, "added page-count (version 1)") {
		t.Fatalf("products add: %q", out)
	}
	if _, errOut, code := runCmd(t, dir, "products", "add", v1); code != 1 || !strings.Contains(errOut, "product page-count is in the catalogue already: change it with products update") {
		t.Fatalf("products add twice: exit %d, %q", code, errOut)
	}

	s := startServer(t, dir)
	s.waitCatalogue(t, "page-count", func(status int, p map[string]any) bool { return status == 200 && p["targetMargin"] == 0.3 })
	// 100 + 10 × 12 = 220, quoted ceil(220 / 0.7) = 315.
	before := s.createQuoted(t, "page-count", `{"pages":12}`, 315)

	cli(t, dir, "products", "update", productFile(t, files, "page-count", 200, "0.5", remoteField))
	s.waitCatalogue(t, "page-count", func(status int, p map[string]any) bool { return status == 200 && p["targetMargin"] == 0.5 })
	// 200 + 120 = 320, quoted 320 / 0.5 = 640.
	after := s.createQuoted(t, "page-count", `{"pages":12}`, 640)

	cli(t, dir, "products", "add", productFile(t, files, "word-count", 10, "0.2", remoteField))
	s.waitCatalogue(t, "word-count", func(status int, p map[string]any) bool { return status == 200 })
	words := s.createQuoted(t, "word-count", `{"pages":1}`, 25) // 20 / 0.8

	if out := cli(t, dir, "products", "retire", "page-count"); !strings.Contains(out, "retired page-count") {
		t.Fatalf("products retire: %q", out)
	}
	s.waitCatalogue(t, "page-count", func(status int, p map[string]any) bool { return status == 404 })
	status, _, body := s.do("POST", "/v1/workflows", s.firstKey, `{"product":"page-count","customerId":"cus_pages","payload":{"pages":1}}`)
	wantError(t, "a create of a retired product", status, body, 400, "product_retired", "product")
	_, _, list := s.do("GET", "/v1/products", s.firstKey, "")
	for _, p := range list["data"].([]any) {
		if p.(map[string]any)["name"] == "page-count" {
			t.Fatalf("the catalogue lists a retired product: %v", list)
		}
	}

	// The workflows created before finish: a worker serves them (a
	// retired product's tasks are still claimed), each at its quote.
	w := s.apiClient(t, workerKey(t, dir, nil)).NewWorker(client.WorkerOptions{Wait: 5 * time.Second})
	for _, name := range []string{"page-count", "word-count"} {
		w.Handle(name, func(ctx context.Context, task *client.Task) (client.TaskResult, error) {
			return client.TaskResult{Result: map[string]any{"ok": true},
				CostItems: []client.CostItem{{Category: "compute", Provider: "worker", Units: 1, Amount: 5}}}, nil
		})
	}
	wctx, stopWorker := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	for id, charge := range map[string]float64{before: 315, after: 640, words: 25} {
		got := s.waitFor(t, id)
		if got["status"] != "Settled" || got["charged"].(map[string]any)["amount"] != charge {
			t.Errorf("workflow %s: %v; want Settled, charged %v", id, got, charge)
		}
	}
	stopWorker()
	<-done

	// list, list -json and show.
	out := cli(t, dir, "products", "list")
	if !strings.Contains(out, "NAME") || !regexpMatch(`page-count\s+2\s+fixed\s+0.5\s+retired `, out) || !regexpMatch(`word-count\s+1\s+fixed\s+0.2\s+active`, out) {
		t.Fatalf("products list:\n%s", out)
	}
	var entries []map[string]any
	if err := json.Unmarshal([]byte(cli(t, dir, "products", "list", "-json")), &entries); err != nil || len(entries) != 2 ||
		entries[0]["state"] != "retired" || entries[0]["product"].(map[string]any)["estimate"].(map[string]any)["base"] != 200.0 {
		t.Fatalf("products list -json: %v, %v", entries, err)
	}
	if out := cli(t, dir, "products", "show", "word-count"); !strings.HasPrefix(out, "word-count, version 1, active\n") || !strings.Contains(out, `"remote": true`) {
		t.Fatalf("products show:\n%s", out)
	}

	// A restart keeps it: word-count sold, page-count retired.
	if err := s.shutdown(); err != nil {
		t.Fatal(err)
	}
	key := s.firstKey
	s = startServer(t, dir)
	s.firstKey = key // made at the first start only
	if status, _, _ := s.do("GET", "/v1/products/word-count", s.firstKey, ""); status != 200 {
		t.Fatalf("after a restart, word-count: %d", status)
	}
	status, _, body = s.do("POST", "/v1/workflows", s.firstKey, `{"product":"page-count","customerId":"cus_pages","payload":{"pages":1}}`)
	wantError(t, "after a restart, a create of a retired product", status, body, 400, "product_retired", "product")
	// Added again, it is back.
	cli(t, dir, "products", "add", v1)
	s.waitCatalogue(t, "page-count", func(status int, p map[string]any) bool { return status == 200 && p["targetMargin"] == 0.3 })
}

// productJSON is the product object of the products file at path.
func productJSON(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Products []json.RawMessage }
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return string(f.Products[0])
}

// createQuoted creates a workflow and checks its quote.
func (s *server) createQuoted(t *testing.T, product, payload string, quoted float64) string {
	t.Helper()
	status, _, wf := s.do("POST", "/v1/workflows", s.firstKey, fmt.Sprintf(`{"product":%q,"customerId":"cus_pages","payload":%s}`, product, payload))
	if status != 201 || wf["quoted"].(map[string]any)["amount"] != quoted {
		t.Fatalf("create %s %s: %d %v; want quoted %v", product, payload, status, wf, quoted)
	}
	return wf["id"].(string)
}

// The products commands on Postgres: a product added before the start is
// sold, one added while the server runs too, and a retired one is refused.
func TestProductsCommandsOnPostgres(t *testing.T) {
	pg := pgtest.Connect(t)
	dsn := pg.SchemaDSN(t, "products_test")
	dir, files := t.TempDir(), t.TempDir()
	cli(t, dir, "-postgres", dsn, "products", "add", productFile(t, files, "page-count", 100, "0.3", remoteField))
	s := startServerWith(t, dir, "-postgres", dsn)
	s.createQuoted(t, "page-count", `{"pages":12}`, 315)
	cli(t, dir, "-postgres", dsn, "products", "add", productFile(t, files, "word-count", 10, "0.2", remoteField))
	s.waitCatalogue(t, "word-count", func(status int, p map[string]any) bool { return status == 200 })
	cli(t, dir, "-postgres", dsn, "products", "retire", "page-count")
	s.waitCatalogue(t, "page-count", func(status int, p map[string]any) bool { return status == 404 })
	status, _, body := s.do("POST", "/v1/workflows", s.firstKey, `{"product":"page-count","customerId":"cus_pages","payload":{"pages":1}}`)
	wantError(t, "a create of a retired product", status, body, 400, "product_retired", "product")
	if out := cli(t, dir, "-postgres", dsn, "products", "list"); !regexpMatch(`page-count\s+1\s+fixed\s+0.3\s+retired `, out) {
		t.Fatalf("products list on Postgres:\n%s", out)
	}
}
