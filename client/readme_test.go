package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestREADME builds the Go programs of README.md and runs the first, the
// quickstart, against the reference server, so the README cannot rot.
func TestREADME(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```go\n(package main\n.*?)```").FindAllSubmatch(readme, -1)
	if len(blocks) != 2 {
		t.Fatalf("%d Go programs in README.md, want the quickstart and the webhook receiver", len(blocks))
	}
	// Build them as if they were packages of this module, without writing
	// into the source tree: an overlay places them there for the go command.
	tmp := t.TempDir()
	overlay := map[string]string{}
	var pkgs []string
	for i, b := range blocks {
		src := filepath.Join(tmp, fmt.Sprintf("readme%d.go", i))
		if err := os.WriteFile(src, b[1], 0o644); err != nil {
			t.Fatal(err)
		}
		virtual, err := filepath.Abs(filepath.Join("internal", fmt.Sprintf("readme%d", i), "main.go"))
		if err != nil {
			t.Fatal(err)
		}
		overlay[virtual] = src
		pkgs = append(pkgs, fmt.Sprintf("./internal/readme%d", i))
	}
	o, _ := json.Marshal(map[string]any{"Replace": overlay})
	overlayFile := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(overlayFile, o, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(tmp, "bin")
	os.Mkdir(bin, 0o755)
	build := exec.Command(goTool(), append([]string{"build", "-overlay", overlayFile, "-o", bin + string(filepath.Separator)}, pkgs...)...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the README's programs: %v\n%s", err, out)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	run := exec.CommandContext(ctx, filepath.Join(bin, "readme0"))
	run.Env = append(os.Environ(), "SETTLEFLOW_API_KEY="+ref.key, "SETTLEFLOW_CA="+ref.certFile, "SETTLEFLOW_BASE_URL="+ref.baseURL)
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("the quickstart: %v\n%s", err, out)
	}
	for _, want := range []string{
		`(?m)^quote: \d+ usd$`,
		`(?m)^created: wf_\w{26} Pending \d+$`,
		`(?m)^fetched: wf_\w{26} Settled margin -?0\.\d+ tx 0x[0-9a-f]{64}$`,
		`(?m)^first page: \d+ workflows, more: (true|false)$`,
		`(?m)^settled workflows of cus_123: [1-9]\d*$`,
		`(?m)^refused: 400 parameter_missing param payload$`,
	} {
		if !regexp.MustCompile(want).Match(out) {
			t.Errorf("the quickstart printed no line like %s:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), ref.key) {
		t.Fatal("the quickstart printed the key")
	}
}
