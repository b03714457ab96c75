package dashboard

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestOutcomeInChromium opens the workflows of outcome pricing in headless
// Chromium (testdata/browser/outcome.mjs) against the outcome fixture's
// dashboard: the list's charge beside the quote; a hybrid workflow's
// pricing, charge, margin floor, cost by category with its bars (the
// hostile provider shown as text) and its outcome's trace indented as the
// tree; the base fee when the outcome is not met; a success fee charged 0
// (no transaction, nothing to refund); a workflow stopped at its margin
// floor. No dialog, console error, CSP violation or asset failing to load.
// Screenshots land in -browser-out (workflow-outcome.png is the page,
// workflow-outcome-detail.png its cost and outcome).
func TestOutcomeInChromium(t *testing.T) {
	node, out := BrowserSetup(t)
	o := newOutcomeFixture(t)
	link, err := o.h.SignInLink(context.Background(), o.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "outcome.mjs")
	cmd.Dir = "testdata/browser"
	cmd.Env = append(os.Environ(), "BASE="+o.srv.URL, "LINK="+link, "MET="+o.met.ID, "UNMET="+o.unmet.ID, "ZERO="+o.zero.ID,
		"STOPPED="+o.stopped.ID, "PROVIDER="+hostileProvider, "OUT="+out, "CHROMIUM=/usr/bin/chromium")
	b, err := cmd.CombinedOutput()
	t.Logf("browser:\n%s", b)
	if err != nil {
		t.Fatalf("the browser run failed: %v", err)
	}
	for _, name := range []string{"workflows-charged", "workflow-outcome", "workflow-outcome-detail", "workflow-outcome-unmet", "workflow-charged-zero", "workflow-margin-floor"} {
		if fi, err := os.Stat(filepath.Join(out, name+".png")); err != nil || fi.Size() == 0 {
			t.Errorf("no screenshot %s.png: %v", name, err)
		}
	}
	t.Logf("screenshots in %s", out)
}
