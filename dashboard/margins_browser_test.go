package dashboard

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMarginsInChromium opens the Margins page in headless Chromium
// (testdata/browser/margins.mjs) against the margins fixture's dashboard:
// the chart drawn and styled by the page's stylesheet (two series, the
// negative margins below 0 %), the legend and the totals, a range chosen
// through the form, a refused range and the empty state, with no console
// error, CSP violation or asset failing to load. Screenshots land in the
// test's artifact directory (go test -artifacts keeps them), or in
// -browser-out when it is given.
func TestMarginsInChromium(t *testing.T) {
	node, out := BrowserSetup(t)
	m := newMarginsFixture(t)
	link, err := m.h.SignInLink(context.Background(), m.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "margins.mjs")
	cmd.Dir = "testdata/browser"
	cmd.Env = append(os.Environ(), "BASE="+m.srv.URL, "LINK="+link, "DAYS="+strings.Join(m.days[:], ","),
		"OUT="+out, "CHROMIUM=/usr/bin/chromium")
	b, err := cmd.CombinedOutput()
	t.Logf("browser:\n%s", b)
	if err != nil {
		t.Fatalf("the browser run failed: %v", err)
	}
	for _, name := range []string{"margins", "margins-chart", "margins-two-days", "margins-refused", "margins-empty"} {
		if fi, err := os.Stat(filepath.Join(out, name+".png")); err != nil || fi.Size() == 0 {
			t.Errorf("no screenshot %s.png: %v", name, err)
		}
	}
	t.Logf("screenshots in %s", out)
}
