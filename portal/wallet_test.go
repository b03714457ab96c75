package portal

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/settlement"
)

// connect runs the page's connect: a grant for w, signed, sent.
func (b *browser) connect(t *testing.T, w wallet) (answer, map[string]any) {
	t.Helper()
	a, g := b.post("/portal/connect/grant", map[string]string{"address": w.addr.Hex()})
	if a.status != 200 {
		t.Fatalf("connect/grant: %d %s", a.status, a.body)
	}
	sig := signTyped(t, w.key, rawJSON(g["typedData"]))
	return b.post("/portal/connect", map[string]string{"address": w.addr.Hex(), "nonce": g["nonce"].(string), "signature": sig})
}

func (f *fixture) owner(customerID string) string {
	o, err := f.chain.Owner(context.Background(), settleflow.Test, customerID)
	if err != nil {
		f.t.Fatal(err)
	}
	return o
}

func (f *fixture) balance(customerID string) settleflow.Balance {
	c, err := f.engine.Customer(context.Background(), settleflow.Test, customerID)
	if err != nil {
		f.t.Fatal(err)
	}
	return c.Balance
}

// TestConnectRefusals: a replayed connect signature, one made for another
// origin, chain or customer, and a grant from another session are refused
// and change nothing; the right one sets the owner through the engine.
func TestConnectRefusals(t *testing.T) {
	f := newFixture(t, nil)
	w := f.wallet(0)
	b := f.browser()
	b.signin(f.link(settleflow.Test, "cus_conn"))

	grant := func() map[string]any {
		a, g := b.post("/portal/connect/grant", map[string]string{"address": w.addr.Hex()})
		if a.status != 200 {
			t.Fatalf("connect/grant: %d %s", a.status, a.body)
		}
		if td := string(rawJSON(g["typedData"])); !strings.Contains(td, `"origin":"`+f.srv.URL+`"`) {
			t.Fatalf("the grant does not name the portal's origin: %s", td)
		}
		return g
	}
	// tamper re-signs the grant's typed data with one field changed.
	tamper := func(g map[string]any, edit func(td map[string]any)) string {
		td := map[string]any{}
		_ = jsonRound(g["typedData"], &td)
		edit(td)
		return signTyped(t, w.key, rawJSON(td))
	}
	refused := func(what string, a answer, param string) {
		t.Helper()
		if a.status != http.StatusBadRequest || !strings.Contains(a.body, `"param":"`+param+`"`) {
			t.Fatalf("%s: %d %s", what, a.status, a.body)
		}
		if o := f.owner("cus_conn"); o != "" {
			t.Fatalf("%s changed the owner to %s", what, o)
		}
	}
	for _, c := range []struct {
		what string
		edit func(td map[string]any)
	}{
		{"a signature for another origin", func(td map[string]any) { td["message"].(map[string]any)["origin"] = "https://evil.example" }},
		{"a signature for another chain", func(td map[string]any) { td["domain"].(map[string]any)["chainId"] = 1 }},
		{"a signature for another customer", func(td map[string]any) {
			td["message"].(map[string]any)["customerRef"] = common.Hash(settlement.CustomerRef(f.sim.CustomerRefSecret, settleflow.Test, "cus_other")).Hex()
		}},
	} {
		g := grant()
		a, _ := b.post("/portal/connect", map[string]string{"address": w.addr.Hex(), "nonce": g["nonce"].(string), "signature": tamper(g, c.edit)})
		refused(c.what, a, "signature")
	}
	// A nonce the server never issued to this session.
	a, _ := b.post("/portal/connect", map[string]string{"address": w.addr.Hex(), "nonce": hexutil.Encode(make([]byte, 32)), "signature": "0x00"})
	refused("a nonce not issued", a, "nonce")
	// Another session's grant, carried over.
	b2 := f.browser()
	b2.signin(f.link(settleflow.Test, "cus_conn"))
	g := grant()
	sig := signTyped(t, w.key, rawJSON(g["typedData"]))
	a, _ = b2.post("/portal/connect", map[string]string{"address": w.addr.Hex(), "nonce": g["nonce"].(string), "signature": sig})
	refused("another session's grant", a, "nonce")
	// A request from another origin, or without the CSRF token.
	b.origin = "https://evil.example"
	if a, _ := b.post("/portal/connect", map[string]string{"address": w.addr.Hex(), "nonce": g["nonce"].(string), "signature": sig}); a.status != http.StatusForbidden {
		t.Fatalf("another origin's request: %d", a.status)
	}
	b.origin = f.srv.URL
	// The right one.
	a, out := b.post("/portal/connect", map[string]string{"address": w.addr.Hex(), "nonce": g["nonce"].(string), "signature": sig})
	if a.status != 200 || out["object"] != "owner_change" || out["effective"] != "now" {
		t.Fatalf("connect: %d %s", a.status, a.body)
	}
	waitFor(t, 20*time.Second, "the owner set", func() bool { return strings.EqualFold(f.owner("cus_conn"), w.addr.Hex()) })
	// Replayed: refused, nothing sent.
	a, _ = b.post("/portal/connect", map[string]string{"address": w.addr.Hex(), "nonce": g["nonce"].(string), "signature": sig})
	if a.status != http.StatusBadRequest || !strings.Contains(a.body, "used already") {
		t.Fatalf("a replayed connect: %d %s", a.status, a.body)
	}
	// The owner reaches the engine's view (the funds follower).
	waitFor(t, 20*time.Second, "the owner followed", func() bool {
		c, _ := f.engine.Customer(context.Background(), settleflow.Test, "cus_conn")
		return c.Owner != nil && strings.EqualFold(*c.Owner, w.addr.Hex())
	})
}

// TestDepositRelay: a signed deposit is relayed and becomes available; one
// altered to name another customer or owner, a cookie of another
// customer, an amount below the minimum or above the wallet's, and the
// hourly limit are refused with nothing sent; what the relays cost is
// counted.
func TestDepositRelay(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.RelaysPerHour = 3 })
	w := f.wallet(10_000)
	b := f.browser()
	b.signin(f.link(settleflow.Test, "cus_dep"))
	if a, _ := b.connect(t, w); a.status != 200 {
		t.Fatalf("connect: %d %s", a.status, a.body)
	}
	waitFor(t, 20*time.Second, "the owner set", func() bool { return strings.EqualFold(f.owner("cus_dep"), w.addr.Hex()) })

	prepare := func(b *browser, amount string) (answer, map[string]any) {
		return b.post("/portal/deposit/prepare", map[string]string{"from": w.addr.Hex(), "amount": amount})
	}
	a, prep := prepare(b, "25.00")
	if a.status != 200 {
		t.Fatalf("prepare: %d %s", a.status, a.body)
	}
	auth := prep["authorization"].(map[string]any)
	if auth["amount"].(float64) != 2500 || !strings.EqualFold(auth["owner"].(string), w.addr.Hex()) {
		t.Fatalf("authorization %v", auth)
	}
	sig := signTyped(t, w.key, rawJSON(prep["typedData"]))
	send := func(b *browser, edit func(m map[string]any)) (answer, map[string]any) {
		m := map[string]any{}
		for k, v := range auth {
			m[k] = v
		}
		m["signature"] = sig
		if edit != nil {
			edit(m)
		}
		return b.post("/portal/deposit", m)
	}
	relaysSent := func() float64 { return f.metric("relays", "test") }
	// Altered to name another owner: the token recovers another signer.
	if a, _ := send(b, func(m map[string]any) { m["owner"] = "0x000000000000000000000000000000000000dEaD" }); a.status != http.StatusBadRequest {
		t.Fatalf("another owner: %d %s", a.status, a.body)
	}
	// The same authorization sent with another customer's cookie: the
	// server binds it to that customer, and the signature does not match.
	other := f.browser()
	other.signin(f.link(settleflow.Test, "cus_victim"))
	if a, _ := send(other, nil); a.status != http.StatusBadRequest || !strings.Contains(a.body, "signature") {
		t.Fatalf("another customer's session: %d %s", a.status, a.body)
	}
	// Another amount than signed.
	if a, _ := send(b, func(m map[string]any) { m["amount"] = 9000 }); a.status != http.StatusBadRequest {
		t.Fatalf("another amount: %d %s", a.status, a.body)
	}
	if relaysSent() != 0 || f.balance("cus_victim").OnChain != 0 {
		t.Fatal("a refused deposit was relayed")
	}
	// The portal's pages of one customer never show another's.
	if st := other.get("/portal/status"); !strings.Contains(st.body, `"onChain":0`) {
		t.Fatalf("the victim's status: %s", st.body)
	}
	// The right one.
	a, out := send(b, nil)
	if a.status != 200 || out["state"] != "pending" {
		t.Fatalf("deposit: %d %s", a.status, a.body)
	}
	tx := out["txHash"].(string)
	// Sent twice: answered with the same transaction, not relayed again.
	if a, out2 := send(b, nil); a.status == 200 && out2["txHash"] != tx {
		t.Fatalf("the same authorization relayed twice: %s", a.body)
	}
	// pending → … → available, through the status the page polls.
	var states []string
	waitFor(t, 30*time.Second, "the deposit available", func() bool {
		st := b.get("/portal/status")
		for _, s := range []string{"pending", "confirming", "confirmed", "available"} {
			if strings.Contains(st.body, `"state":"`+s+`"`) && (len(states) == 0 || states[len(states)-1] != s) {
				states = append(states, s)
			}
		}
		return strings.Contains(st.body, `"state":"available"`)
	})
	if bal := f.balance("cus_dep"); bal.Available != 2500 || bal.OnChain != 2500 {
		t.Fatalf("balance after the deposit: %+v", bal)
	}
	t.Logf("states seen: %v", states)
	// What the operator paid is recorded and counted.
	var gas int64
	var fee string
	if err := f.h.opts.DB.Bun().NewRaw("SELECT gas_used, fee_wei FROM portal_relays WHERE tx_hash = ?", strings.ToLower(tx)).Scan(context.Background(), &gas, &fee); err != nil {
		t.Fatal(err)
	}
	if gas == 0 || fee == "0" || f.metric("gasUsed", "test") != float64(gas) {
		t.Fatalf("gas %d, fee %s, metric %v", gas, fee, f.metric("gasUsed", "test"))
	}
	t.Logf("one relayed deposit: %d gas, %s wei", gas, fee)

	// Below the minimum, not whole cents, above the wallet's balance.
	for amount, want := range map[string]string{"0.50": "smallest deposit", "1.001": "dollars and cents", "500.00": "holds"} {
		if a, _ := prepare(b, amount); a.status != http.StatusBadRequest || !strings.Contains(a.body, want) {
			t.Errorf("prepare %s: %d %s", amount, a.status, a.body)
		}
	}
	if a, _ := send(b, func(m map[string]any) { m["amount"] = 1 }); a.status != http.StatusBadRequest || !strings.Contains(a.body, "smallest") {
		t.Errorf("a relay below the minimum: %d %s", a.status, a.body)
	}
}

// TestRelayFlood: 1,000 tiny relay requests and then 1,000 well-formed
// ones are bounded: the tiny ones are refused before anything is signed
// or sent, the others by the hourly limit; the operator's gas is spent on
// the limit's worth only.
func TestRelayFlood(t *testing.T) {
	const limit = 3
	// The node calls' own limit (TestNodeCallLimit) is out of the way.
	f := newFixture(t, func(o *Options) { o.RelaysPerHour = limit; o.NodeCallsPerMinute = 1 << 20 })
	w := f.wallet(100_000)
	b := f.browser()
	b.signin(f.link(settleflow.Test, "cus_flood"))
	for i := range 1000 {
		a, _ := b.post("/portal/deposit", map[string]any{"from": w.addr.Hex(), "owner": "", "amount": 1, "validBefore": time.Now().Add(time.Hour).Unix(),
			"salt": hexutil.Encode(make([]byte, 32)), "signature": "0x"})
		if a.status != http.StatusBadRequest {
			t.Fatalf("tiny request %d: %d %s", i, a.status, a.body)
		}
	}
	sent, limited := 0, 0
	for i := range 1000 {
		a, prep := b.post("/portal/deposit/prepare", map[string]string{"from": w.addr.Hex(), "amount": "1.00"})
		if a.status == http.StatusTooManyRequests {
			limited++
			// The page's prepare is a courtesy: the relay itself is
			// limited too (a client may skip prepare).
			continue
		}
		if a.status != 200 {
			t.Fatalf("prepare %d: %d %s", i, a.status, a.body)
		}
		m := prep["authorization"].(map[string]any)
		m["signature"] = signTyped(t, w.key, rawJSON(prep["typedData"]))
		a, _ = b.post("/portal/deposit", m)
		switch a.status {
		case 200:
			sent++
		case http.StatusTooManyRequests:
			limited++
		default:
			t.Fatalf("relay %d: %d %s", i, a.status, a.body)
		}
	}
	if sent != limit || limited != 1000-limit {
		t.Fatalf("%d relayed, %d limited; want %d and %d", sent, limited, limit, 1000-limit)
	}
	// Signed, well-formed relays sent straight (skipping prepare) are
	// limited as well.
	a, prep := b.post("/portal/deposit/prepare", map[string]string{"from": w.addr.Hex(), "amount": "1.00"})
	if a.status != http.StatusTooManyRequests {
		t.Fatalf("prepare past the limit: %d", a.status)
	}
	_ = prep
	waitFor(t, 30*time.Second, "relays available", func() bool {
		st := b.get("/portal/status")
		return strings.Count(st.body, `"state":"available"`) == limit
	})
	gas := f.metric("gasUsed", "test")
	fee := f.metric("feeWei", "test")
	refusedMin := f.metric("refused", "test", "below_minimum")
	refusedLimit := f.metric("refused", "test", "relay_limit")
	if gas == 0 || refusedMin != 1000 || refusedLimit < 1000-limit {
		t.Fatalf("gas %v, refused below minimum %v, over the limit %v", gas, refusedMin, refusedLimit)
	}
	if bal := f.balance("cus_flood"); bal.OnChain != limit*100 {
		t.Fatalf("balance %+v", bal)
	}
	t.Logf("2,000 relay requests: %d relayed, %v gas, %v wei (%s each), %v refused below the minimum, %v over the limit",
		sent, gas, fee, fmt.Sprintf("%.0f gas", gas/limit), refusedMin, refusedLimit)
}

// TestWithdrawalCalls: the owner's wallet sends the calls the page
// builds: request (the countdown's data), cancel, request, withdraw when
// due.
func TestWithdrawalCalls(t *testing.T) {
	f := newFixture(t, nil)
	w := f.wallet(10_000)
	b := f.browser()
	b.signin(f.link(settleflow.Test, "cus_wd"))
	if a, _ := b.post("/portal/withdrawal/call", map[string]string{"method": "withdraw"}); a.status != http.StatusConflict {
		t.Fatalf("a withdrawal with no owner: %d %s", a.status, a.body)
	}
	if a, _ := b.connect(t, w); a.status != 200 {
		t.Fatal(a.body)
	}
	waitFor(t, 20*time.Second, "the owner set", func() bool { return strings.EqualFold(f.owner("cus_wd"), w.addr.Hex()) })
	_, prep := b.post("/portal/deposit/prepare", map[string]string{"from": w.addr.Hex(), "amount": "40.00"})
	m := prep["authorization"].(map[string]any)
	m["signature"] = signTyped(t, w.key, rawJSON(prep["typedData"]))
	if a, _ := b.post("/portal/deposit", m); a.status != 200 {
		t.Fatal(a.body)
	}
	waitFor(t, 30*time.Second, "available", func() bool { return f.balance("cus_wd").Available == 4000 })

	own := settlement.Transactor{Backend: f.sim.Backend.Client(), Key: w.key, Mine: f.sim.Commit}
	call := func(method, amount string) {
		t.Helper()
		a, c := b.post("/portal/withdrawal/call", map[string]string{"method": method, "amount": amount})
		if a.status != 200 || !strings.EqualFold(c["from"].(string), w.addr.Hex()) {
			t.Fatalf("%s: %d %s", method, a.status, a.body)
		}
		to := common.HexToAddress(c["to"].(string))
		if _, err := own.Send(context.Background(), &to, hexutil.MustDecode(c["data"].(string))); err != nil {
			t.Fatalf("%s sent by the owner: %v", method, err)
		}
	}
	call("requestWithdrawal", "10.00")
	// The embedded chain seals blocks for the operator's own
	// transactions; the owner's need blocks on top to be confirmed.
	waitFor(t, 20*time.Second, "under notice", func() bool { f.sim.Commit(); return f.balance("cus_wd").PendingWithdrawal == 1000 })
	st := b.get("/portal/status")
	if !strings.Contains(st.body, `"pending":1000`) || !strings.Contains(st.body, `"noticeSeconds":3600`) {
		t.Fatalf("status: %s", st.body)
	}
	call("cancelWithdrawal", "")
	waitFor(t, 20*time.Second, "canceled", func() bool { f.sim.Commit(); return f.balance("cus_wd").PendingWithdrawal == 0 })
	if a, _ := b.post("/portal/withdrawal/call", map[string]string{"method": "requestWithdrawal", "amount": "1.234"}); a.status != http.StatusBadRequest {
		t.Fatalf("not whole cents: %d", a.status)
	}
	// Requested again, and withdrawn once the notice has passed: the
	// money goes to the owner.
	call("requestWithdrawal", "10.00")
	waitFor(t, 20*time.Second, "under notice again", func() bool { f.sim.Commit(); return f.balance("cus_wd").PendingWithdrawal == 1000 })
	if a, _ := b.post("/portal/withdrawal/call", map[string]string{"method": "withdraw"}); a.status != 200 {
		t.Fatalf("withdraw call: %d", a.status)
	}
	before, err := f.sim.WalletBalance(context.Background(), settleflow.Test, w.addr.Hex())
	if err != nil {
		t.Fatal(err)
	}
	f.sim.Commit() // the chain's clock moves only on an empty pending block
	if err := f.sim.Backend.AdjustTime(time.Hour + time.Minute); err != nil {
		t.Fatal(err)
	}
	f.sim.Commit()
	call("withdraw", "")
	after, _ := f.sim.WalletBalance(context.Background(), settleflow.Test, w.addr.Hex())
	if after-before != 1000 {
		t.Fatalf("the owner received %d cents, want 1000", after-before)
	}
	waitFor(t, 20*time.Second, "withdrawn", func() bool {
		f.sim.Commit()
		bal := f.balance("cus_wd")
		return bal.PendingWithdrawal == 0 && bal.OnChain == 3000
	})
	// The statement shows them, newest first.
	stmt := b.get("/portal/statement")
	var kinds []string
	for _, m := range regexp.MustCompile(`<tr class="line-(\w+)">`).FindAllStringSubmatch(stmt.body, -1) {
		kinds = append(kinds, m[1])
	}
	if got, want := strings.Join(kinds, " "), "withdrawn withdrawal_requested withdrawal_canceled withdrawal_requested"; !strings.HasPrefix(got, want) {
		t.Fatalf("statement lines %q, want them to begin %q", got, want)
	}
}

// TestPreviewIsReadOnly: the operator's preview shows the customer's pages
// and changes nothing.
func TestPreviewIsReadOnly(t *testing.T) {
	f := newFixture(t, nil)
	ps, err := f.h.CreateSession(context.Background(), SessionParams{Environment: settleflow.Test, CustomerID: "cus_prev", Preview: true})
	if err != nil {
		t.Fatal(err)
	}
	b := f.browser()
	b.signin(ps.URL)
	acc := b.get("/portal/")
	if !strings.Contains(acc.body, `id="preview"`) || strings.Contains(acc.body, `id="deposit"`) || strings.Contains(acc.body, `id="connect"`) {
		t.Fatalf("preview page:\n%s", acc.body)
	}
	for _, p := range []string{"/portal/connect/grant", "/portal/connect", "/portal/deposit/prepare", "/portal/deposit", "/portal/withdrawal/call"} {
		if a, _ := b.post(p, map[string]string{}); a.status != http.StatusForbidden {
			t.Errorf("%s in a preview: %d", p, a.status)
		}
	}
}

// operatorTxs is how many transactions the operator has sent on the
// simulated chain: what it paid for.
func (f *fixture) operatorTxs() uint64 {
	f.t.Helper()
	n, err := f.sim.Backend.Client().NonceAt(context.Background(), crypto.PubkeyToAddress(f.sim.OperatorKey.PublicKey), nil)
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

// TestConnectLoopIsBounded: one session loops connect-grant, sign,
// connect with a new address each pass (and the same one again): the
// operator sends at most one owner change in flight or proposed at a time
// and at most OwnerChangesPerDay a day; the same address again is
// answered with the change under way; every refusal is counted.
func TestConnectLoopIsBounded(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.OwnerChangesPerDay = 3 })
	b := f.browser()
	b.signin(f.link(settleflow.Test, "cus_loop"))
	start := f.operatorTxs()

	first := f.wallet(0)
	if a, out := b.connect(t, first); a.status != 200 || out["effective"] != "now" {
		t.Fatalf("first connect: %d %s", a.status, a.body)
	}
	waitFor(t, 20*time.Second, "the owner set", func() bool { return strings.EqualFold(f.owner("cus_loop"), first.addr.Hex()) })

	// The loop: each pass a new wallet. The first proposes a change (after
	// the notice); every other is refused while it is proposed.
	var proposed wallet
	refused := 0
	for i := 0; i < 8; i++ {
		w := f.wallet(0)
		a, out := b.connect(t, w)
		switch {
		case a.status == 200 && proposed.key == nil:
			if out["effective"] != "after_notice" {
				t.Fatalf("pass %d: %s", i, a.body)
			}
			proposed = w
		case a.status == http.StatusConflict && strings.Contains(a.body, "already proposed") || strings.Contains(a.body, "on its way"):
			refused++
		default:
			t.Fatalf("pass %d: %d %s", i, a.status, a.body)
		}
	}
	if proposed.key == nil || refused != 7 {
		t.Fatalf("proposed %v, refused %d of 8", proposed.key != nil, refused)
	}
	// The same address again: the change under way, nothing sent.
	a, out := b.connect(t, proposed)
	if a.status != 200 || out["already"] != true || !strings.EqualFold(out["address"].(string), proposed.addr.Hex()) {
		t.Fatalf("the same address again: %d %s", a.status, a.body)
	}
	if got := f.operatorTxs() - start; got != 2 {
		t.Fatalf("the operator sent %d transactions for 10 connects, want 2", got)
	}
	// The page shows it: the status names the proposed owner and when.
	st := b.get("/portal/status")
	if !strings.Contains(st.body, `"state":"proposed"`) || !strings.Contains(st.body, proposed.addr.Hex()) || !strings.Contains(st.body, `"effectiveAt":`) {
		t.Fatalf("status shows no proposal: %s", st.body)
	}

	// The owner cancels it (the page builds the call); one more change
	// goes out (the third today), and then the daily limit holds.
	cancel := func() {
		t.Helper()
		waitFor(t, 20*time.Second, "the change proposed on chain", func() bool {
			oc, err := f.sim.OwnerChange(context.Background(), settleflow.Test, "cus_loop")
			return err == nil && oc != nil
		})
		a, c := b.post("/portal/owner/cancel", map[string]string{})
		if a.status != 200 || !strings.EqualFold(c["from"].(string), first.addr.Hex()) {
			t.Fatalf("owner/cancel: %d %s", a.status, a.body)
		}
		own := settlement.Transactor{Backend: f.sim.Backend.Client(), Key: first.key, Mine: f.sim.Commit}
		to := common.HexToAddress(c["to"].(string))
		if _, err := own.Send(context.Background(), &to, hexutil.MustDecode(c["data"].(string))); err != nil {
			t.Fatalf("cancelOwnerChange sent by the owner: %v", err)
		}
		waitFor(t, 20*time.Second, "the change canceled", func() bool {
			oc, err := f.sim.OwnerChange(context.Background(), settleflow.Test, "cus_loop")
			return err == nil && oc == nil
		})
	}
	cancel()
	if a, _ := b.post("/portal/owner/cancel", map[string]string{}); a.status != http.StatusConflict {
		t.Fatalf("a cancel with nothing proposed: %d %s", a.status, a.body)
	}
	if a, _ := b.connect(t, f.wallet(0)); a.status != 200 {
		t.Fatalf("the third change today: %d %s", a.status, a.body)
	}
	cancel()
	for i := 0; i < 3; i++ {
		if a, _ := b.connect(t, f.wallet(0)); a.status != http.StatusTooManyRequests || !strings.Contains(a.body, "at most 3 wallet changes a day") {
			t.Fatalf("past the daily limit: %d %s", a.status, a.body)
		}
	}
	if got := f.operatorTxs() - start; got != 3 {
		t.Fatalf("the operator sent %d transactions, want 3", got)
	}
	// Recorded and counted.
	if got := f.metric("refused", "test", "owner_change_pending"); got != 7 {
		t.Errorf("owner_change_pending refusals counted %v, want 7", got)
	}
	if got := f.metric("refused", "test", "owner_change_limit"); got != 3 {
		t.Errorf("owner_change_limit refusals counted %v, want 3", got)
	}
	if got := f.metric("ownerChanges", "after_notice", "test"); got != 2 {
		t.Errorf("owner changes after notice counted %v, want 2", got)
	}
	var n int
	if err := f.h.opts.DB.Bun().NewRaw("SELECT COUNT(*) FROM portal_owner_changes WHERE environment = 'test' AND customer_id = 'cus_loop' AND tx_hash IS NOT NULL").Scan(context.Background(), &n); err != nil || n != 3 {
		t.Fatalf("recorded owner changes: %d %v", n, err)
	}
}

// TestNodeCallLimit: the requests that reach the node (status polls,
// deposit prepare) are limited per customer and minute, across its
// sessions, with Retry-After and a count; another customer is not held up.
func TestNodeCallLimit(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.NodeCallsPerMinute = 10 })
	w := f.wallet(1_000)
	b1, b2, other := f.browser(), f.browser(), f.browser()
	b1.signin(f.link(settleflow.Test, "cus_node"))
	b2.signin(f.link(settleflow.Test, "cus_node"))
	other.signin(f.link(settleflow.Test, "cus_node_other"))
	ok, limited := 0, 0
	for i := range 30 {
		var a answer
		switch i % 3 {
		case 0:
			a = b1.do("GET", "/portal/status", nil, map[string]string{"Accept": "application/json"})
		case 1:
			a = b2.do("GET", "/portal/status", nil, map[string]string{"Accept": "application/json"})
		default:
			a, _ = b1.post("/portal/deposit/prepare", map[string]string{"from": w.addr.Hex(), "amount": "1.00"})
		}
		switch a.status {
		case http.StatusOK:
			ok++
		case http.StatusTooManyRequests:
			limited++
			if a.header.Get("Retry-After") == "" || !strings.Contains(a.body, "at most 10 a minute") {
				t.Fatalf("refused without Retry-After or reason: %v %s", a.header, a.body)
			}
		default:
			t.Fatalf("request %d: %d %s", i, a.status, a.body)
		}
	}
	// The account page's own load counted one for each session.
	if ok > 10 || limited < 18 {
		t.Fatalf("%d answered, %d limited; want at most 10 a minute", ok, limited)
	}
	if got := f.metric("refused", "test", "node_limit"); got != float64(limited) {
		t.Errorf("node_limit refusals counted %v, want %d", got, limited)
	}
	if a := other.do("GET", "/portal/status", nil, map[string]string{"Accept": "application/json"}); a.status != http.StatusOK {
		t.Fatalf("another customer held up: %d", a.status)
	}
	// A minute later it answers again.
	f.clock.Advance(time.Minute)
	if a := b1.do("GET", "/portal/status", nil, map[string]string{"Accept": "application/json"}); a.status != http.StatusOK {
		t.Fatalf("a minute later: %d %s", a.status, a.body)
	}
}
