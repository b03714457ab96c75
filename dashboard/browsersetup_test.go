package dashboard

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BrowserSetup skips the test without Debian's Chromium or playwright-core,
// and returns node's path and the directory screenshots go to
// (-browser-out, else one of the test's own). Exported for the external
// browser test.
func BrowserSetup(t *testing.T) (node, out string) {
	t.Helper()
	if _, err := os.Stat("/usr/bin/chromium"); err != nil {
		t.Skip("needs Debian's chromium at /usr/bin/chromium (apt-get install chromium; .ci/run does)")
	}
	if _, err := os.Stat("testdata/browser/node_modules/playwright-core"); err != nil {
		t.Skip("needs playwright-core: run npm ci in dashboard/testdata/browser (.ci/run does)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not on the PATH")
	}
	if fl := flag.Lookup("browser-out"); fl != nil && fl.Value.String() != "" {
		out = fl.Value.String()
	} else {
		out = filepath.Join(t.TempDir(), "screenshots")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	return node, out
}
