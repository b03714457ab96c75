package portal

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/settlement"
)

var browserOut = flag.String("browser-out", "", "directory for the browser test's screenshots (default: under the test's temporary directory)")

// TestPortalInChromium drives the portal in Debian's Chromium
// (testdata/browser/portal.mjs) with an EIP-1193 wallet injected into the
// page, on the embedded simulated chain: open a link, connect (after
// switching the wallet's chain), deposit 25.00 and watch it become
// available, with the activity list following without a reload, run a
// workflow and find it on the statement, request and cancel a withdrawal,
// request another and withdraw it once due (each step shown pending until
// the chain shows it), switch the wallet's account and network (the page
// follows), sign out, be refused a login CSRF from another origin, and a
// link used twice; at
// each step the withdrawal buttons are on or off (with a reason) as the
// contract would accept them. A screenshot of each page
// lands in -browser-out.
//
// The simulated chain runs in this process and has no RPC endpoint: the
// wallet's eth_sendTransaction goes to a test-only hook started here
// (never part of the portal), which signs with the wallet's key, sends,
// and seals the blocks that confirm it.
func TestPortalInChromium(t *testing.T) {
	if _, err := os.Stat("/usr/bin/chromium"); err != nil {
		t.Skip("needs Debian's chromium at /usr/bin/chromium (apt-get install chromium; .ci/run does)")
	}
	if _, err := os.Stat("testdata/browser/node_modules/playwright-core"); err != nil {
		t.Skip("needs playwright-core and viem: run npm ci in portal/testdata/browser (.ci/run does)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not on the PATH")
	}
	out := *browserOut
	if out == "" {
		out = filepath.Join(t.TempDir(), "screenshots")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	// A short notice, so that the page's "Withdraw now" turns on while
	// the test watches.
	f := newFixtureNotice(t, 20*time.Second, func(o *Options) {
		o.OperatorName = "Acme Compute"
		o.OperatorLogo = "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(
			`<svg xmlns="http://www.w3.org/2000/svg" width="28" height="28"><circle cx="14" cy="14" r="12" fill="#3b5bdb"/></svg>`))
	})
	w := f.wallet(10_000)
	ctx := context.Background()
	const customer = "cus_browser"

	var mu sync.Mutex // one transaction of the wallet at a time
	hook := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		reply := func(status int, v any) {
			rw.Header().Set("Content-Type", "application/json")
			rw.WriteHeader(status)
			json.NewEncoder(rw).Encode(v)
		}
		switch r.URL.Path {
		case "/send":
			var in struct {
				From, To, Data string
				ChainID        int64
			}
			if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
				reply(400, map[string]any{"message": err.Error()})
				return
			}
			ci, _ := f.sim.Chain(settleflow.Test)
			if !strings.EqualFold(in.From, w.addr.Hex()) || in.ChainID != ci.ChainID {
				reply(400, map[string]any{"message": "not this wallet's or chain's transaction", "code": 4100})
				return
			}
			mu.Lock()
			defer mu.Unlock()
			// A real chain seals blocks as time passes; the embedded one
			// only when asked: seal one now, so that the transaction
			// runs at the wall clock's time (a withdrawal due now is
			// due on chain too).
			f.sim.Commit()
			to := common.HexToAddress(in.To)
			tr := settlement.Transactor{Backend: f.sim.Backend.Client(), Key: w.key, Mine: f.sim.Commit}
			rc, err := tr.Send(ctx, &to, hexutil.MustDecode(in.Data))
			if err != nil {
				reply(400, map[string]any{"message": "the transaction reverted: " + err.Error(), "code": -32000})
				return
			}
			// Seal the blocks that confirm it (the embedded chain seals
			// blocks only for the operator's own transactions).
			for range 3 {
				f.sim.Commit()
			}
			reply(200, map[string]any{"hash": rc.TxHash.Hex()})
		case "/evil":
			// Another origin's page (this hook's http://127.0.0.1:port)
			// that posts a link's token to the portal's sign-in as soon as
			// it loads: login CSRF.
			rw.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(rw, `<!doctype html><form id="f" method="post" action="%s/portal/signin"><input name="token" value="%s"></form>`+
				`<script>document.getElementById("f").submit()</script>`, f.srv.URL, html.EscapeString(r.URL.Query().Get("token")))
		case "/workflow":
			wf, _, err := f.engine.Create(ctx, settleflow.CreateParams{Environment: settleflow.Test, Product: "report", CustomerID: customer,
				Payload: rawJSON(job{N: 1})})
			if err != nil {
				reply(400, map[string]any{"message": err.Error()})
				return
			}
			deadline := time.Now().Add(30 * time.Second)
			for wf.Status != settleflow.Settled && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
				wf, _ = f.engine.Fetch(ctx, settleflow.Test, wf.ID)
			}
			if wf.Status != settleflow.Settled {
				reply(500, map[string]any{"message": "the workflow did not settle: " + string(wf.Status)})
				return
			}
			reply(200, map[string]any{"id": wf.ID, "charged": wf.Charged.Amount})
		default:
			http.NotFound(rw, r)
		}
	}))
	defer hook.Close()

	ci, _ := f.sim.Chain(settleflow.Test)
	cmd := exec.Command(node, "portal.mjs")
	cmd.Dir = "testdata/browser"
	cmd.Env = append(os.Environ(), "LINK="+f.link(settleflow.Test, customer), "LINK2="+f.link(settleflow.Test, customer), "BASE="+f.srv.URL, "HOOK="+hook.URL,
		"KEY="+hexutil.Encode(crypto.FromECDSA(w.key)), "CHAIN_ID="+strconv.FormatInt(ci.ChainID, 10), "OUT="+out, "CHROMIUM=/usr/bin/chromium")
	b, err := cmd.CombinedOutput()
	t.Logf("browser:\n%s", b)
	if err != nil {
		t.Fatalf("the browser run failed: %v", err)
	}
	for _, name := range []string{"signin", "account", "wrong-chain", "connected", "deposit-refused", "deposit-pending", "deposit-available",
		"statement", "withdrawal-requested", "withdrawal-canceled", "withdrawal-due", "withdrawn", "account-switched", "network-switched",
		"signed-out", "login-csrf-refused", "link-used"} {
		if fi, err := os.Stat(filepath.Join(out, name+".png")); err != nil || fi.Size() == 0 {
			t.Errorf("no screenshot %s.png: %v", name, err)
		}
	}
	// What the page showed is what the engine and the chain hold.
	bal := f.balance(customer)
	if bal.PendingWithdrawal != 0 || bal.OnChain <= 0 || bal.OnChain >= 2500 {
		t.Errorf("balance after the run: %+v", bal)
	}
	if o := f.owner(customer); !strings.EqualFold(o, w.addr.Hex()) {
		t.Errorf("owner %s, want %s", o, w.addr.Hex())
	}
	if got := f.metric("refused", "", "cross_site"); got != 1 {
		t.Errorf("cross-site sign-ins refused: %v, want the hostile page's 1", got)
	}
}
