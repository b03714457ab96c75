package client_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// TestDocsWorkersGo compiles docs/workers.md's Go worker, the body of a
// function given what the page leaves to the reader (ctx, a certificate
// pool), so the page's Go example cannot drift from the client's API. (Its
// Python and Node.js examples run against the reference server in those
// clients' suites.)
func TestDocsWorkersGo(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile(filepath.Join("..", "docs", "workers.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllSubmatch(page, -1)
	if len(blocks) != 1 {
		t.Fatalf("%d Go blocks in docs/workers.md, want the worker", len(blocks))
	}
	src := `package main

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"os"
	"strings"

	"github.com/settleflow/settleflow/client"
)

func main() {
	ctx := context.Background()
	pool := x509.NewCertPool()
` + string(blocks[0][1]) + `	_ = err
}
`
	tmp := t.TempDir()
	file := filepath.Join(tmp, "main.go")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	virtual, err := filepath.Abs(filepath.Join("internal", "docsworkers", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	o, _ := json.Marshal(map[string]any{"Replace": map[string]string{virtual: file}})
	overlay := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(overlay, o, 0o644); err != nil {
		t.Fatal(err)
	}
	build := exec.Command(goTool(), "build", "-overlay", overlay, "-o", filepath.Join(tmp, "docsworkers"), "./internal/docsworkers")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("docs/workers.md's Go worker does not build: %v\n%s\n%s", err, out, src)
	}
}
