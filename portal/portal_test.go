package portal

import (
	"context"
	"encoding/csv"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/settlement/contracts/bindings"
)

func TestLinkOpensOneSessionOnce(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	ps, err := f.h.CreateSession(ctx, SessionParams{Environment: settleflow.Test, CustomerID: "cus_link"})
	if err != nil {
		t.Fatal(err)
	}
	if ps.Object != "portal_session" || !strings.HasPrefix(ps.ID, "ps_") || ps.CustomerID != "cus_link" || ps.Livemode ||
		!strings.HasPrefix(ps.URL, f.srv.URL+"/portal/signin?token=") {
		t.Fatalf("session %+v", ps)
	}
	if d := time.Until(ps.ExpiresAt); d < 14*time.Minute || d > 15*time.Minute {
		t.Errorf("expires in %s, want 15 minutes", d)
	}
	// Hashed at rest: the token is nowhere in the table.
	tok, _ := url.Parse(ps.URL)
	var n int
	if err := f.h.opts.DB.Bun().NewRaw("SELECT COUNT(*) FROM portal_links WHERE token_hash = ? OR id = ?", tok.Query().Get("token"), tok.Query().Get("token")).Scan(ctx, &n); err != nil || n != 0 {
		t.Fatalf("the token is stored in clear: %d %v", n, err)
	}
	if err := f.h.opts.DB.Bun().NewRaw("SELECT COUNT(*) FROM portal_links WHERE token_hash = ?", hashOf(tok.Query().Get("token"))).Scan(ctx, &n); err != nil || n != 1 {
		t.Fatalf("the token's hash is not stored: %d %v", n, err)
	}

	// A link previewer's GET spends nothing.
	b := f.browser()
	b.get(ps.URL)
	b.get(ps.URL)
	a := b.signin(ps.URL)
	if a.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d %s", a.status, a.body)
	}
	ck := a.header.Get("Set-Cookie")
	for _, want := range []string{CookieName + "=", "Path=/portal/", "HttpOnly", "Secure", "SameSite=Strict"} {
		if !strings.Contains(ck, want) {
			t.Errorf("cookie %q lacks %s", ck, want)
		}
	}
	acc := b.get("/portal/")
	if acc.status != 200 || !strings.Contains(acc.body, `id="available"`) {
		t.Fatalf("account page: %d %s", acc.status, acc.body)
	}
	// What a customer reads: the operator's name, not the internal
	// customer id; the network in plain words; over TLS, HSTS.
	if strings.Contains(acc.body, "cus_link") || !strings.Contains(acc.body, `<span class="brand" id="brand">Your account</span>`) ||
		!strings.Contains(acc.body, "Network: Test network") || strings.Contains(acc.body, "simulated (chain") {
		t.Errorf("account page header or network line:\n%s", acc.body)
	}
	if hsts := acc.header.Get("Strict-Transport-Security"); hsts != "max-age=31536000" {
		t.Errorf("Strict-Transport-Security %q", hsts)
	}
	csp := acc.header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %s", csp, want)
		}
	}
	if strings.Contains(acc.body, "<script>") || strings.Contains(acc.body, " style=") || strings.Contains(acc.body, "https://cdn") {
		t.Error("the page has inline script or style, or a third-party resource")
	}

	// The link used twice: a clear page, and no second session.
	sessions := func() int {
		var n int
		if err := f.h.opts.DB.Bun().NewRaw("SELECT COUNT(*) FROM portal_sessions").Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	other := f.browser()
	again := other.do("POST", "/portal/signin", strings.NewReader(url.Values{"token": {tok.Query().Get("token")}}.Encode()),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if again.status != http.StatusBadRequest || !strings.Contains(again.body, "expired or was used already") || sessions() != 1 {
		t.Fatalf("a link used twice: %d, %d sessions\n%s", again.status, sessions(), again.body)
	}
	if a := other.get("/portal/"); a.status != http.StatusUnauthorized {
		t.Fatalf("no session, yet the account answers %d", a.status)
	}
	// An expired link: the same page, nothing opened.
	late := f.link(settleflow.Test, "cus_link")
	f.clock.Advance(DefaultLinkTTL + time.Second)
	lt, _ := url.Parse(late)
	exp := other.do("POST", "/portal/signin", strings.NewReader(url.Values{"token": {lt.Query().Get("token")}}.Encode()),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if exp.status != http.StatusBadRequest || !strings.Contains(exp.body, "expired or was used already") || sessions() != 1 {
		t.Fatalf("an expired link: %d, %d sessions", exp.status, sessions())
	}
	// A session ends after SessionTTL.
	f.clock.Advance(SessionTTL)
	if a := b.get("/portal/"); a.status != http.StatusUnauthorized {
		t.Fatalf("a session past its TTL answers %d", a.status)
	}
	// Bounds of a link's lifetime.
	if _, err := f.h.CreateSession(ctx, SessionParams{Environment: settleflow.Test, CustomerID: "cus_link", TTL: 30 * time.Second}); err != ErrBadTTL {
		t.Errorf("a 30 s link: %v", err)
	}
	if _, err := f.h.CreateSession(ctx, SessionParams{Environment: settleflow.Test, CustomerID: "bad id"}); err == nil {
		t.Error("a link for an invalid customer id")
	}
}

func TestStatementAndCSV(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	// The faucet funds the customer; a workflow is charged; one refunded.
	if _, err := f.engine.FundTestCustomer(ctx, "cus_stmt", 5000); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 3 {
		wf, _, err := f.engine.Create(ctx, settleflow.CreateParams{Environment: settleflow.Test, Product: "report", CustomerID: "cus_stmt",
			Payload: rawJSON(job{N: i})})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, wf.ID)
	}
	for _, id := range ids {
		waitFor(t, 30*time.Second, "settled", func() bool {
			wf, err := f.engine.Fetch(ctx, settleflow.Test, id)
			return err == nil && wf.Status == settleflow.Settled
		})
	}
	b := f.browser()
	if a := b.signin(f.link(settleflow.Test, "cus_stmt")); a.status != http.StatusSeeOther {
		t.Fatal(a.status)
	}
	st := b.get("/portal/statement")
	if st.status != 200 || strings.Count(st.body, `class="line-charge"`) != 3 || strings.Count(st.body, `class="line-deposit"`) != 1 {
		t.Fatalf("statement: %d\n%s", st.status, st.body)
	}
	if !strings.Contains(st.body, "report") || !strings.Contains(st.body, "−$4.00") || !strings.Contains(st.body, "$50.00") {
		t.Errorf("statement lacks the product or the amounts:\n%s", st.body)
	}
	// Newest first: the deposit came before every charge, so it is last.
	if strings.LastIndex(st.body, "line-charge") > strings.Index(st.body, "line-deposit") {
		t.Error("the deposit is not after (older than) the charges")
	}
	// Keyset pages: 2 lines a page walk all 4 once.
	seen := map[string]bool{}
	before := ""
	c, _ := f.engine.Customer(ctx, settleflow.Test, "cus_stmt")
	for pages := 0; ; pages++ {
		lines, next, err := f.h.statement(ctx, settleflow.Test, "cus_stmt", c.Deposit.CustomerRef, before, time.Time{}, time.Time{}, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			if seen[l.Key] {
				t.Fatalf("line %s on two pages", l.Key)
			}
			seen[l.Key] = true
		}
		if next == "" {
			break
		}
		before = next
	}
	if len(seen) != 4 {
		t.Fatalf("pages walked %d lines, want 4", len(seen))
	}
	if a := b.get("/portal/statement?before=nonsense"); a.status != http.StatusBadRequest {
		t.Errorf("a forged cursor: %d", a.status)
	}

	// The CSV of today: one row per line, cents and a formatted amount.
	day := time.Now().UTC().Format(time.DateOnly)
	a := b.get("/portal/statement.csv?from=" + day + "&to=" + day)
	if a.status != 200 || !strings.HasPrefix(a.header.Get("Content-Type"), "text/csv") {
		t.Fatalf("csv: %d %s", a.status, a.body)
	}
	rows, err := csv.NewReader(strings.NewReader(a.body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 || rows[0][4] != "amount_cents" || rows[0][5] != "amount" {
		t.Fatalf("csv rows: %v", rows)
	}
	var sum int64
	for _, r := range rows[1:] {
		var cents int64
		fmt.Sscan(r[4], &cents)
		sum += cents
		if want := plainAmount(cents); r[5] != want {
			t.Errorf("row %v: amount %q, want %q", r, r[5], want)
		}
	}
	// The statement sums to the balance the engine holds.
	c, _ = f.engine.Customer(ctx, settleflow.Test, "cus_stmt")
	if sum != c.Balance.OnChain {
		t.Errorf("the CSV sums to %d, the balance on chain is %d", sum, c.Balance.OnChain)
	}
	// And to what the contract holds for the customer (what `chain
	// reconcile` compares).
	out, err := f.sim.Backend.Client().CallContract(ctx, ethereum.CallMsg{To: &f.sim.Addresses.Contract,
		Data: bindings.NewSettleflowSettlement().PackBalanceOf(settlement.CustomerRef(f.sim.CustomerRefSecret, settleflow.Test, "cus_stmt"))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	onChain := new(big.Int).SetBytes(out)
	if want, _ := settlement.BaseUnits(sum, 6); onChain.Cmp(want) != 0 {
		t.Errorf("the statement sums to %d cents; the contract holds %s base units for the customer", sum, onChain)
	}
	// `chain reconcile`'s own comparison agrees: every charge on the
	// statement is on chain once, and the statement's sum is the
	// customer's balance in the contract.
	var records []settlement.ReconcileRecord
	for _, id := range ids {
		wf, err := f.engine.Fetch(ctx, settleflow.Test, id)
		if err != nil || wf.Settlement == nil {
			t.Fatalf("%s: %+v %v", id, wf, err)
		}
		records = append(records, settlement.ReconcileRecord{WorkflowID: wf.ID, Sequence: wf.Sequence, CustomerID: wf.CustomerID,
			Amount: wf.Charged.Amount, TxHash: wf.Settlement.TxHash})
	}
	chain := f.sim.Backend.Client()
	head, err := chain.BlockNumber(ctx)
	if err != nil {
		t.Fatal(err)
	}
	refOf := func(id string) [32]byte { return settlement.CustomerRef(f.sim.CustomerRefSecret, settleflow.Test, id) }
	rep, err := settlement.Reconcile(ctx, chain, records, settlement.ReconcileOptions{Contract: f.sim.Addresses.Contract, Decimals: 6,
		ToBlock: head, RefOf: refOf, State: chain,
		Accounts: []settlement.AccountRecord{{CustomerID: "cus_stmt", Ref: refOf("cus_stmt"), OnChain: sum}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Discrepancies) != 0 || rep.OnChain != len(ids) || rep.Customers != 1 {
		t.Errorf("chain reconcile of the statement: %d charges on chain (want %d), %d customers, discrepancies %+v",
			rep.OnChain, len(ids), rep.Customers, rep.Discrepancies)
	}
	if rows[1][1] != LineDeposit {
		t.Errorf("the CSV is not oldest first: %v", rows[1])
	}
	if a := b.get("/portal/statement.csv?from=2026-01-02&to=2026-01-01"); a.status != http.StatusBadRequest {
		t.Errorf("a reversed range: %d", a.status)
	}
}

func TestParseAmount(t *testing.T) {
	for in, want := range map[string]int64{"25": 2500, "25.00": 2500, "25.5": 2550, "$1,000.01": 100001, "0.01": 1} {
		if got, err := parseAmount(in); err != nil || got != want {
			t.Errorf("parseAmount(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"25.001", "-1", "1e3", "", "abc", "25.", ".5", "0x10"} {
		if _, err := parseAmount(in); err == nil {
			t.Errorf("parseAmount(%q) accepted", in)
		}
	}
	if formatUSD(-358) != "−$3.58" || formatUSD(123456789) != "$1,234,567.89" {
		t.Error(formatUSD(-358), formatUSD(123456789))
	}
}

// TestSigninRefusesCrossSite: a hostile page's POST of a link's token
// (login CSRF) is refused, without a cookie and without spending the link,
// however the browser labels it; the portal's own form (Origin: null,
// Sec-Fetch-Site: same-origin, as Chromium sends it under no-referrer)
// signs in and signs out.
func TestSigninRefusesCrossSite(t *testing.T) {
	f := newFixture(t, nil)
	link := f.link(settleflow.Test, "cus_csrf")
	u, _ := url.Parse(link)
	form := url.Values{"token": {u.Query().Get("token")}}.Encode()
	b := f.browser()
	for _, hdr := range []map[string]string{
		{"Origin": "https://evil.example"},
		{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"},
		{"Origin": "null", "Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "cross-site"},
		{"Origin": "null"},
		{"Origin": f.srv.URL, "Sec-Fetch-Site": "same-site"},
	} {
		hdr["Content-Type"] = "application/x-www-form-urlencoded"
		a := b.do("POST", "/portal/signin", strings.NewReader(form), hdr)
		if a.status != http.StatusForbidden || a.header.Get("Set-Cookie") != "" || !strings.Contains(a.body, "another site") {
			t.Fatalf("%v: %d %q %s", hdr, a.status, a.header.Get("Set-Cookie"), a.body)
		}
	}
	if got := f.metric("refused", "", "cross_site"); got != 6 {
		t.Errorf("cross-site refusals counted %v, want 6", got)
	}
	// The link still works from the portal's own page, as Chromium posts it.
	own := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": "null", "Sec-Fetch-Site": "same-origin"}
	a := b.do("POST", "/portal/signin", strings.NewReader(form), own)
	if a.status != http.StatusSeeOther || !strings.Contains(a.header.Get("Set-Cookie"), CookieName+"=") {
		t.Fatalf("the portal's own sign-in: %d %s", a.status, a.body)
	}
	acc := b.get("/portal/")
	m := regexp.MustCompile(`data-csrf="([0-9a-f]+)"`).FindStringSubmatch(acc.body)
	if acc.status != 200 || m == nil {
		t.Fatalf("account page: %d", acc.status)
	}
	// Sign-out from another site is refused; from the page it works.
	out := url.Values{"csrf": {m[1]}}.Encode()
	if a := b.do("POST", "/portal/signout", strings.NewReader(out), map[string]string{"Content-Type": "application/x-www-form-urlencoded",
		"Origin": "null", "Sec-Fetch-Site": "cross-site"}); a.status != http.StatusForbidden {
		t.Fatalf("a cross-site sign-out: %d", a.status)
	}
	if a := b.do("POST", "/portal/signout", strings.NewReader(out), own); a.status != http.StatusSeeOther || a.header.Get("Location") != "/portal/signedout" {
		t.Fatalf("sign-out from the page: %d %s", a.status, a.body)
	}
	if a := b.get("/portal/signedout"); a.status != 200 || !strings.Contains(a.body, "You are signed out") {
		t.Fatalf("signed out: %d %s", a.status, a.body)
	}
	if a := b.get("/portal/"); a.status != http.StatusUnauthorized {
		t.Fatalf("after sign-out: %d", a.status)
	}
}
