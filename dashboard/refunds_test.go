package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/fundstest"
)

var (
	postFormRE = regexp.MustCompile(`(?s)<form[^>]*method="post"[^>]*>(.*?)</form>`)
	idAttrRE   = regexp.MustCompile(`\sid="([^"]+)"`)
	hrefRE     = regexp.MustCompile(`href="(/dashboard/[^"]*)"`)
	keyRE      = regexp.MustCompile(`name="key" value="([^"]+)"`)
	amountRE   = regexp.MustCompile(`id="refund-amount" value="([^"]*)"`)
)

// checkPage GETs path and checks what every dashboard page must be: 200,
// every POST form carrying the session's CSRF token, no inline script or
// style (the CSP forbids them), ids unique, and every dashboard link on it
// answering 200. It returns the body.
func (f *fixture) checkPage(path, csrf string) string {
	f.t.Helper()
	r := f.do("GET", path, nil)
	if r.status != http.StatusOK {
		f.t.Fatalf("GET %s: %d\n%s", path, r.status, r.body)
	}
	f.checkHTML(path, r.body, csrf)
	for _, m := range hrefRE.FindAllStringSubmatch(r.body, -1) {
		if l := f.do("GET", m[1], nil); l.status != http.StatusOK {
			f.t.Errorf("%s links to %s: %d", path, m[1], l.status)
		}
	}
	return r.body
}

func (f *fixture) checkHTML(path, body, csrf string) {
	f.t.Helper()
	for _, m := range postFormRE.FindAllStringSubmatch(body, -1) {
		if !strings.Contains(m[1], `name="csrf" value="`+csrf+`"`) {
			f.t.Errorf("%s: a POST form without the session's CSRF token: %.200s", path, m[0])
		}
	}
	for _, bad := range []string{" style=", "<style", "<script>", " onclick=", " onsubmit="} {
		if strings.Contains(body, bad) {
			f.t.Errorf("%s: inline %q, which the CSP refuses", path, bad)
		}
	}
	seen := map[string]bool{}
	for _, m := range idAttrRE.FindAllStringSubmatch(body, -1) {
		if seen[m[1]] {
			f.t.Errorf("%s: id %q twice", path, m[1])
		}
		seen[m[1]] = true
	}
}

func (f *fixture) refunds(env settleflow.Environment, wfID string) []*settleflow.Refund {
	f.t.Helper()
	pg, err := f.engine.ListRefunds(context.Background(), settleflow.RefundListParams{Environment: env, WorkflowID: wfID, Limit: 100})
	if err != nil {
		f.t.Fatal(err)
	}
	return pg.Data
}

// The Customers page: recent customers with their balances, a lookup by id
// (a customer never seen shows zeros and where to deposit), clear errors
// for a malformed id, and links from the workflow pages.
func TestCustomersPage(t *testing.T) {
	f, fs := newFundedFixture(t)
	csrf := f.signIn()
	wf := f.settled(settleflow.Test, "cus_alice", "A")
	if wf.Quoted.Amount != 134 {
		t.Fatalf("quoted %d; the test expects 134", wf.Quoted.Amount)
	}
	body := f.checkPage("/dashboard/customers", csrf)
	if !strings.Contains(body, `href="/dashboard/customers/cus_alice"`) || !strings.Contains(body, "USD 998.66") {
		t.Fatalf("customers page lacks cus_alice with its available balance 998.66:\n%s", body)
	}
	body = f.checkPage("/dashboard/customers/cus_alice", csrf)
	if n := strings.Count(body, "USD 998.66"); n != 2 {
		t.Errorf("customer page: %d amounts of 998.66, want 2 (available and on chain: 1000.00 from the faucet less the charge of 1.34)", n)
	}
	for _, want := range []string{`id="reserved">USD 0.00`, strconv.Itoa(fundstest.ChainID), fundstest.Network, fundstest.Contract,
		fundstest.Token, `href="/dashboard/workflows/` + wf.ID + `"`,
		// How to deposit and withdraw, in the contract's own terms.
		"<code>approve(contract, amount)</code>", "<code>deposit(bytes32 ref, address owner, uint256 amount)</code>",
		"<code>ReceiveWithAuthorization</code>", "<code>keccak256(abi.encode(ref, owner, salt))</code>",
		"<code>depositWithAuthorization(bytes32 ref, address owner, address from, uint256 amount, uint256 validAfter, uint256 validBefore, bytes32 salt, uint8 v, bytes32 r, bytes32 s)</code>",
		"must be whole cents", "a multiple of 10,000", "A deposit never makes anyone the owner",
		"the only address that can withdraw", "<code>requestWithdrawal(ref, amount)</code>", "<code>withdraw(ref)</code>", "24 h"} {
		if !strings.Contains(body, want) {
			t.Errorf("customer page lacks %q", want)
		}
	}
	ref, _ := fs.CustomerRef(settleflow.Test, "cus_alice")
	if !strings.Contains(body, ref) {
		t.Error("customer page lacks the customer reference")
	}
	// The workflow pages link the customer.
	for _, p := range []string{"/dashboard/workflows", "/dashboard/workflows/" + wf.ID} {
		if b := f.checkPage(p, csrf); !strings.Contains(b, `href="/dashboard/customers/cus_alice"`) {
			t.Errorf("%s does not link the customer", p)
		}
	}

	// A customer never seen: the lookup leads to its page, with zeros.
	r := f.do("GET", "/dashboard/customers?id=+cus_new+", nil)
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/dashboard/customers/cus_new" {
		t.Fatalf("lookup: %d %q", r.status, r.header.Get("Location"))
	}
	body = f.checkPage("/dashboard/customers/cus_new", csrf)
	if n := strings.Count(body, "USD 0.00"); n != 4 {
		t.Errorf("a customer never seen: %d zero amounts, want 4 (available, on chain, reserved, under notice)", n)
	}
	ref, _ = fs.CustomerRef(settleflow.Test, "cus_new")
	if !strings.Contains(body, ref) {
		t.Error("a customer never seen has no deposit instructions")
	}
	// Malformed ids: a clear error.
	for _, p := range []string{"/dashboard/customers?id=alice", "/dashboard/customers/alice", "/dashboard/customers?id=cus_%3Cb%3E"} {
		if r := f.do("GET", p, nil); r.status != http.StatusBadRequest || !strings.Contains(r.body, "No such customer id: customerId must be cus_") {
			t.Errorf("%s: %d", p, r.status)
		}
	}
	// Live mode here charges no balances: zeros and nothing to deposit.
	if r := f.do("POST", "/dashboard/env", url.Values{"csrf": {csrf}, "env": {"live"}}); r.status != http.StatusSeeOther {
		t.Fatalf("switch: %d", r.status)
	}
	body = f.checkPage("/dashboard/customers/cus_alice", csrf)
	if !strings.Contains(body, `id="no-deposit"`) || strings.Contains(body, "USD 998.66") || strings.Contains(body, wf.ID) {
		t.Error("live mode shows test funds or deposit instructions")
	}
	if b := f.checkPage("/dashboard/customers", csrf); strings.Contains(b, "cus_alice") {
		t.Error("live mode lists a test customer")
	}
}

// A refund form without the session's CSRF token is refused and creates
// nothing, at both steps.
func TestRefundCSRFRefused(t *testing.T) {
	f, fs := newFundedFixture(t)
	csrf := f.signIn()
	wf := f.settled(settleflow.Test, "cus_alice", "A")
	wrong := "0" + csrf[1:]
	if csrf[0] == '0' {
		wrong = "1" + csrf[1:]
	}
	for _, step := range []string{"/refund", "/refund/confirm"} {
		for _, token := range []string{"", wrong} {
			form := url.Values{"amount": {"134"}, "key": {"k-csrf"}}
			if token != "" {
				form.Set("csrf", token)
			}
			if r := f.do("POST", "/dashboard/workflows/"+wf.ID+step, form); r.status != http.StatusForbidden || !strings.Contains(r.body, "CSRF") {
				t.Fatalf("%s with CSRF %q: %d", step, token, r.status)
			}
		}
	}
	time.Sleep(100 * time.Millisecond) // a refund would have been submitted by now
	if rs := f.refunds(settleflow.Test, wf.ID); len(rs) != 0 || fs.Refunds() != 0 {
		t.Fatalf("a refused form made %d refunds (%d on chain)", len(rs), fs.Refunds())
	}
}

// The refund form: the review creates nothing and states the refund; the
// confirmation creates it once however often it is sent; the page lists
// it, and what is left to refund follows.
func TestRefundReviewedAndConfirmed(t *testing.T) {
	f, fs := newFundedFixture(t)
	csrf := f.signIn()
	wf := f.settled(settleflow.Test, "cus_alice", "A")
	path := "/dashboard/workflows/" + wf.ID
	body := f.checkPage(path, csrf)
	if m := amountRE.FindStringSubmatch(body); m == nil || m[1] != "1.34" {
		t.Fatalf("the refund form's default amount: %v, want 1.34 (all of the charge)", m)
	}
	key := keyRE.FindStringSubmatch(body)
	if key == nil {
		t.Fatal("the refund form has no idempotency key")
	}
	if k2 := keyRE.FindStringSubmatch(f.do("GET", path, nil).body); k2 == nil || k2[1] == key[1] {
		t.Fatal("two loads of the page share an idempotency key")
	}

	r := f.do("POST", path+"/refund", url.Values{"csrf": {csrf}, "key": {key[1]}, "amount": {" $0.5 "}, "reason": {"duplicate ticket"}})
	if r.status != http.StatusOK {
		t.Fatalf("review: %d\n%s", r.status, r.body)
	}
	f.checkHTML("review", r.body, csrf)
	if want := "Refund $0.50 of " + wf.ID + " to cus_alice"; !strings.Contains(r.body, want) {
		t.Fatalf("the review does not say %q:\n%s", want, r.body)
	}
	for _, want := range []string{`name="amount" value="50"`, `name="key" value="` + key[1] + `"`, `name="reason" value="duplicate ticket"`} {
		if !strings.Contains(r.body, want) {
			t.Errorf("the confirmation form lacks %s", want)
		}
	}
	if rs := f.refunds(settleflow.Test, wf.ID); len(rs) != 0 {
		t.Fatal("the review created a refund")
	}

	confirm := url.Values{"csrf": {csrf}, "key": {key[1]}, "amount": {"50"}, "reason": {"duplicate ticket"}}
	first := f.do("POST", path+"/refund/confirm", confirm)
	loc, _ := url.Parse(first.header.Get("Location"))
	if first.status != http.StatusSeeOther || loc == nil || loc.Path != path || !strings.HasPrefix(loc.Query().Get("refund"), "re_") {
		t.Fatalf("confirm: %d %q\n%s", first.status, first.header.Get("Location"), first.body)
	}
	id := loc.Query().Get("refund")
	// Sent twice (a double click, a resubmitted form): the same refund.
	again := f.do("POST", path+"/refund/confirm", confirm)
	loc2, _ := url.Parse(again.header.Get("Location"))
	if again.status != http.StatusSeeOther || loc2.Query().Get("refund") != id || loc2.Query().Get("replayed") != "1" {
		t.Fatalf("confirm again: %d %q", again.status, again.header.Get("Location"))
	}
	rs := f.refunds(settleflow.Test, wf.ID)
	if len(rs) != 1 || rs[0].ID != id || rs[0].Amount != 50 || rs[0].Reason != "duplicate ticket" {
		t.Fatalf("refunds after two confirmations: %+v", rs)
	}
	if b := f.do("GET", loc2.String(), nil).body; !strings.Contains(b, "sent twice") {
		t.Error("the replay's notice does not say the form was sent twice")
	}
	body = f.checkPage(loc.String(), csrf)
	if !strings.Contains(body, "Refund "+id+" of $0.50 to cus_alice recorded") {
		t.Errorf("no notice of the refund")
	}
	if !regexp.MustCompile(`data-refund="`+id+`">\s*<td><code>`+id+`</code></td><td class="num">\$0\.50</td>`).MatchString(body) ||
		!strings.Contains(body, "duplicate ticket") {
		t.Fatalf("the workflow page does not list the refund:\n%s", body)
	}
	if m := amountRE.FindStringSubmatch(body); m == nil || m[1] != "0.84" {
		t.Fatalf("the default amount after a refund of 0.50: %v, want 0.84", m)
	}

	// It succeeds on chain; the workflow's refunded follows.
	deadline := time.Now().Add(20 * time.Second)
	for {
		w, err := f.engine.Fetch(context.Background(), settleflow.Test, wf.ID)
		if err != nil {
			t.Fatal(err)
		}
		if w.Refunded.Amount == 50 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("refunded %d, want 50", w.Refunded.Amount)
		}
		time.Sleep(10 * time.Millisecond)
	}
	body = f.checkPage(path, csrf)
	if !strings.Contains(body, `id="refunded">USD 0.50`) || !strings.Contains(body, `rstatus r-Succeeded">Succeeded`) {
		t.Errorf("the page does not show the refund Succeeded and 0.50 refunded:\n%s", body)
	}
	if fs.Refunds() != 1 {
		t.Errorf("%d refunds on chain, want 1", fs.Refunds())
	}
	// The rest, with the default amount: then nothing is left.
	key = keyRE.FindStringSubmatch(body)
	r = f.do("POST", path+"/refund", url.Values{"csrf": {csrf}, "key": {key[1]}, "amount": {"0.84"}})
	if r.status != http.StatusOK || !strings.Contains(r.body, "Refund $0.84 of "+wf.ID+" to cus_alice") {
		t.Fatalf("review of the rest: %d", r.status)
	}
	if r := f.do("POST", path+"/refund/confirm", url.Values{"csrf": {csrf}, "key": {key[1]}, "amount": {"84"}}); r.status != http.StatusSeeOther {
		t.Fatalf("confirm the rest: %d\n%s", r.status, r.body)
	}
	body = f.checkPage(path, csrf)
	if !strings.Contains(body, "All of the charge is refunded") || strings.Contains(body, `id="refund-form"`) {
		t.Error("a fully refunded workflow still offers the refund form")
	}
}

// Bad refund forms: a clear error, and nothing created.
func TestRefundRefused(t *testing.T) {
	f, fs := newFundedFixture(t)
	csrf := f.signIn()
	wf := f.settled(settleflow.Test, "cus_alice", "A")
	path := "/dashboard/workflows/" + wf.ID
	for _, c := range []struct {
		step, amount, reason, key string
		status                    int
		says                      string
	}{
		{"/refund", "1.35", "", "k1", http.StatusBadRequest, "A refund of $1.35 is more than is left to refund of " + wf.ID + " ($1.34 of its $1.34 charge"},
		{"/refund/confirm", "135", "", "k1", http.StatusBadRequest, "A refund of $1.35 is more than is left to refund"},
		{"/refund", "abc", "", "k1", http.StatusBadRequest, "The amount is not valid"},
		{"/refund", "-1", "", "k1", http.StatusBadRequest, "The amount is not valid"},
		{"/refund", "0", "", "k1", http.StatusBadRequest, "The amount is not valid"},
		{"/refund", "0.001", "", "k1", http.StatusBadRequest, "The amount is not valid"},
		{"/refund", "1.", "", "k1", http.StatusBadRequest, "The amount is not valid"},
		{"/refund", "", "", "k1", http.StatusBadRequest, "The amount is not valid"},
		{"/refund", "99999999999999999999", "", "k1", http.StatusBadRequest, "The amount is not valid"},
		{"/refund/confirm", "1.00", "", "k1", http.StatusBadRequest, "The amount is not valid"},
		{"/refund/confirm", "0", "", "k1", http.StatusBadRequest, "The amount is not valid"},
		{"/refund", "1", strings.Repeat("é", 501), "k1", http.StatusBadRequest, "The reason must be at most 500 characters"},
		{"/refund", "1", "", "", http.StatusBadRequest, "idempotency key is missing"},
	} {
		r := f.do("POST", path+c.step, url.Values{"csrf": {csrf}, "amount": {c.amount}, "reason": {c.reason}, "key": {c.key}})
		if r.status != c.status || !strings.Contains(r.body, c.says) || !strings.Contains(r.body, "Nothing was refunded") && !strings.Contains(r.body, "nothing was refunded") {
			t.Errorf("%s amount %q: %d, want %d saying %q", c.step, c.amount, r.status, c.status, c.says)
		}
		// The page comes back with what was typed, for a correction.
		if c.step == "/refund" && c.amount != "" && !strings.Contains(r.body, `id="refund-amount" value="`+c.amount+`"`) {
			t.Errorf("amount %q: the form does not keep what was typed", c.amount)
		}
	}
	// An unknown workflow.
	if r := f.do("POST", "/dashboard/workflows/wf_01ARZ3NDEKTSV4RRFFQ69G5FAV/refund/confirm", url.Values{"csrf": {csrf}, "amount": {"1"}, "key": {"k"}}); r.status != http.StatusNotFound {
		t.Errorf("an unknown workflow: %d", r.status)
	}
	// Not Settled.
	slow := f.settled(settleflow.Test, slowCustomer, "S")
	for _, step := range []string{"/refund", "/refund/confirm"} {
		r := f.do("POST", "/dashboard/workflows/"+slow.ID+step, url.Values{"csrf": {csrf}, "amount": {"1"}, "key": {"k2"}})
		if r.status != http.StatusConflict || !strings.Contains(r.body, slow.ID+" is Settling, not Settled") {
			t.Errorf("not Settled, %s: %d", step, r.status)
		}
	}
	if b := f.checkPage("/dashboard/workflows/"+slow.ID, csrf); strings.Contains(b, `id="refund-form"`) || !strings.Contains(b, "this one is Settling") {
		t.Error("a Settling workflow offers the refund form")
	}
	// One form's key used for another refund.
	if r := f.do("POST", path+"/refund/confirm", url.Values{"csrf": {csrf}, "amount": {"10"}, "key": {"k3"}}); r.status != http.StatusSeeOther {
		t.Fatalf("a good refund: %d\n%s", r.status, r.body)
	}
	if r := f.do("POST", path+"/refund/confirm", url.Values{"csrf": {csrf}, "amount": {"11"}, "key": {"k3"}}); r.status != http.StatusConflict || !strings.Contains(r.body, "used already for a different refund") {
		t.Errorf("a reused key: %d", r.status)
	}
	if rs := f.refunds(settleflow.Test, wf.ID); len(rs) != 1 || rs[0].Amount != 10 {
		t.Fatalf("refunds: %+v, want the one of 0.10", rs)
	}
	// Live charges here are not paid from balances: refunds are refused.
	if r := f.do("POST", "/dashboard/env", url.Values{"csrf": {csrf}, "env": {"live"}}); r.status != http.StatusSeeOther {
		t.Fatalf("switch: %d", r.status)
	}
	live := f.settled(settleflow.Live, "cus_alice", "L")
	r := f.do("POST", "/dashboard/workflows/"+live.ID+"/refund/confirm", url.Values{"csrf": {csrf}, "amount": {"1"}, "key": {"k4"}})
	if r.status != http.StatusConflict || !strings.Contains(r.body, "Refunds are not available in live mode") {
		t.Errorf("a live refund: %d", r.status)
	}
	if b := f.checkPage("/dashboard/workflows/"+live.ID, csrf); strings.Contains(b, `id="refund-form"`) || !strings.Contains(b, "Refunds are not available in live mode") {
		t.Error("the live workflow offers the refund form")
	}
	// And a test workflow is not found from a live session.
	if r := f.do("POST", path+"/refund/confirm", url.Values{"csrf": {csrf}, "amount": {"1"}, "key": {"k5"}}); r.status != http.StatusNotFound {
		t.Errorf("a test workflow from live: %d", r.status)
	}
	if rs := f.refunds(settleflow.Live, live.ID); len(rs) != 0 {
		t.Fatal("a live refund was made")
	}
	time.Sleep(100 * time.Millisecond)
	if n := fs.Refunds(); n > 1 {
		t.Fatalf("%d refunds on chain, want at most the one good one", n)
	}
}

func TestAmounts(t *testing.T) {
	for c, want := range map[int64]string{0: "0.00", 5: "0.05", 134: "1.34", -50: "-0.50", -134: "-1.34", 100_000: "1000.00", -9223372036854775808: "-92233720368547758.08"} {
		if got := formatCents(c); got != want {
			t.Errorf("formatCents(%d) = %q, want %q", c, got, want)
		}
	}
	if got := formatPrice(-50, "usd"); got != "-$0.50" {
		t.Errorf("formatPrice(-50) = %q", got)
	}
	for in, want := range map[string]int64{"1": 100, "1.5": 150, "1.05": 105, "$0.01": 1, " 12.34 ": 1234, "000.10": 10, "1000000000000": settleflow.MaxAmount} {
		if got, err := parseCents(in); err != nil || got != want {
			t.Errorf("parseCents(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "0.00", "-1", "+1", "1.", ".5", "1.234", "1,00", "1e3", "abc", "1 000", "1000000000000.01", "$", "0x10"} {
		if got, err := parseCents(in); err == nil {
			t.Errorf("parseCents(%q) = %d; want an error", in, got)
		}
	}
}
