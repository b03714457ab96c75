package httpapi_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestOpenAPISpectralClean lints openapi.json with Stoplight Spectral's
// spectral:oas ruleset (httpapi/testdata/spectral: the CLI pinned in its
// package-lock.json, the ruleset in its .spectral.yaml) and fails on any
// warning or error: every operation tagged and described, every tag
// defined, the info complete, so reference docs generated from it group the
// operations by resource. It skips, saying so, only where Spectral is not
// installed; .ci/run installs it, so it runs in CI.
func TestOpenAPISpectralClean(t *testing.T) {
	dir := filepath.Join("testdata", "spectral")
	bin, err := filepath.Abs(filepath.Join(dir, "node_modules", ".bin", "spectral"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skip("Spectral is not installed: run `npm ci` in httpapi/testdata/spectral (.ci/run does) to lint openapi.json against spectral:oas")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("Spectral is installed but node is not on PATH: %v", err)
	}
	report := filepath.Join(t.TempDir(), "spectral.json")
	cmd := exec.Command(bin, "lint", "--ruleset", ".spectral.yaml", "--fail-severity", "warn", "--format", "json", "--output", report,
		filepath.Join("..", "..", "openapi.json"))
	cmd.Dir = dir
	stdout, err := cmd.Output()
	var stderr []byte
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		stderr = ee.Stderr
	}
	out, rerr := os.ReadFile(report)
	if rerr != nil {
		t.Fatalf("spectral wrote no report: %v (%v)\nstdout: %s\nstderr: %s", rerr, err, stdout, stderr)
	}
	var results []struct {
		Code     string   `json:"code"`
		Message  string   `json:"message"`
		Path     []string `json:"path"`
		Severity int      `json:"severity"` // 0 error, 1 warning, 2 info, 3 hint
		Range    struct {
			Start struct {
				Line int `json:"line"`
			} `json:"start"`
		} `json:"range"`
	}
	if jerr := json.Unmarshal(out, &results); jerr != nil {
		t.Fatalf("spectral: %v (%v)\nreport: %s\nstdout: %s\nstderr: %s", err, jerr, out, stdout, stderr)
	}
	names := []string{"error", "warning", "info", "hint"}
	failed := 0
	for _, r := range results {
		sev := "unknown"
		if r.Severity >= 0 && r.Severity < len(names) {
			sev = names[r.Severity]
		}
		line := r.Range.Start.Line + 1
		if r.Severity <= 1 {
			failed++
			t.Errorf("openapi.json:%d: %s %s: %s (at %v)", line, sev, r.Code, r.Message, r.Path)
		} else {
			t.Logf("openapi.json:%d: %s %s: %s (at %v)", line, sev, r.Code, r.Message, r.Path)
		}
	}
	if err != nil && failed == 0 {
		t.Fatalf("spectral failed without a warning or error to show: %v\nstderr: %s", err, stderr)
	}
}
