package dashboard

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/fundstest"
)

// TestRefundInChromium drives the Customers page and a refund in headless
// Chromium (testdata/browser/refund.mjs) against a dashboard whose engine
// charges test customers' balances (fundstest, an in-memory chain, so
// the dashboard is tested without the settlement package): the customers
// listed with their balances, a customer never seen looked up (zeros, how
// to deposit and who can withdraw), a refund of
// a Settled workflow reviewed, confirmed and succeeded, the balance grown
// by it, and a refund of too much refused. A screenshot of each step lands
// in -browser-out.
func TestRefundInChromium(t *testing.T) {
	node, out := BrowserSetup(t)
	f, _ := newFundedFixture(t)
	wf := f.settled(settleflow.Test, "cus_browser", "B")
	link, err := f.h.SignInLink(context.Background(), f.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "refund.mjs")
	cmd.Dir = "testdata/browser"
	cmd.Env = append(os.Environ(), "BASE="+f.srv.URL, "LINK="+link, "WF="+wf.ID, "CUSTOMER=cus_browser",
		"CHAIN_ID="+strconv.Itoa(fundstest.ChainID),
		"OUT="+out, "CHROMIUM=/usr/bin/chromium")
	b, err := cmd.CombinedOutput()
	t.Logf("browser:\n%s", b)
	if err != nil {
		t.Fatalf("the browser run failed: %v", err)
	}
	for _, name := range []string{"customers", "customer-new", "refund-review", "workflow-refunded", "customer-refunded", "refund-too-much"} {
		if fi, err := os.Stat(filepath.Join(out, name+".png")); err != nil || fi.Size() == 0 {
			t.Errorf("no screenshot %s.png: %v", name, err)
		}
	}
}
