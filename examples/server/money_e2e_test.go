package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/pgtest"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/settlement/contracts/bindings"
	"github.com/settleflow/settleflow/webhook"
)

// Issue 25's money, end to end over HTTPS against reference-server
// processes: a customer with no funds gets 402 and nothing is stored; a
// deposit raises its available balance once confirmed; 50 concurrent
// creates against a balance that covers 20 admit exactly 20, across every
// instance; the 20 settle and the customer's balance in the contract falls
// by exactly their quotes; a partial then a full refund give exactly those
// amounts back on chain, a third is 400, and each refund's webhook arrives
// verified.

// moneyHooks receives webhooks and verifies them.
type moneyHooks struct {
	srv    *httptest.Server
	secret atomic.Value // string
	mu     sync.Mutex
	events map[settleflow.EventType][]settleflow.Event
	bad    int
}

func newMoneyHooks(t *testing.T) *moneyHooks {
	h := &moneyHooks{events: map[settleflow.EventType][]settleflow.Event{}}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sec, _ := h.secret.Load().(string)
		ev, err := webhook.ConstructEvent(body, r.Header.Get("service-signature"), sec)
		if err == nil {
			err = webhook.VerifyStandard(body, r.Header, sec)
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		if err != nil {
			h.bad++
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		h.events[ev.Type] = append(h.events[ev.Type], ev)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// refundEvents are the verified refund.succeeded events, by refund id.
func (h *moneyHooks) refundEvents() map[string]*settleflow.Refund {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]*settleflow.Refund{}
	for _, ev := range h.events[settleflow.EventRefundSucceeded] {
		if ev.Data.Refund != nil {
			out[ev.Data.Refund.ID] = ev.Data.Refund
		}
	}
	return out
}

// call sends a JSON request to one of the servers and decodes the answer.
func call(t *testing.T, s *processServer, key, method, path, body string, idem string) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, s.url+path, rd)
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if idem != "" {
		req.Header.Set("Idempotency-Key", idem)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var out map[string]any
	b, _ := io.ReadAll(resp.Body)
	if len(b) > 0 {
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%s %s: HTTP %d, not JSON: %s", method, path, resp.StatusCode, b)
		}
	}
	return resp.StatusCode, out
}

func num(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}

func balanceOf(m map[string]any) map[string]int64 {
	b, _ := m["balance"].(map[string]any)
	out := map[string]int64{}
	for k, v := range b {
		if k != "currency" {
			out[k] = num(v)
		}
	}
	return out
}

const moneyPayload = `{"imageUrls":["https://example.com/money.png"]}`

// moneyScenario runs the money assertions against servers (requests go
// round-robin over them). onChain reads a customer's balance in the
// contract, in cents; it may be called only at the end (when the servers
// are stopped, for the embedded chain): it is called with done.
func moneyScenario(t *testing.T, servers []*processServer, key string, hooks *moneyHooks, customer string, onChain func(customerID string) int64) {
	t.Helper()
	var rr atomic.Int64
	pick := func() *processServer { return servers[int(rr.Add(1))%len(servers)] }
	count := func() int {
		_, list := call(t, pick(), key, "GET", "/v1/workflows?limit=100", "", "")
		data, _ := list["data"].([]any)
		return len(data)
	}

	// 1. No funds: 402, nothing stored.
	before := count()
	code, body := call(t, pick(), key, "POST", "/v1/workflows", `{"product":"image-moderation","customerId":"cus_insufficient_funds","payload":`+moneyPayload+`}`, "money-poor")
	e, _ := body["error"].(map[string]any)
	if code != http.StatusPaymentRequired || e["type"] != "payment_error" || e["code"] != "insufficient_funds" || num(e["amount"]) <= 0 ||
		e["customerId"] != "cus_insufficient_funds" || !strings.Contains(fmt.Sprint(e["message"]), "available") {
		t.Fatalf("a customer with no funds: HTTP %d %v", code, body)
	}
	if after := count(); after != before {
		t.Fatalf("a 402 stored a workflow: %d workflows before, %d after", before, after)
	}

	// 2. The quote, and a deposit that covers 20 workflows and half.
	code, quote := call(t, pick(), key, "POST", "/v1/quotes", `{"product":"image-moderation","customerId":"`+customer+`","payload":`+moneyPayload+`}`, "")
	q := num(quote["quoted"].(map[string]any)["amount"])
	if code != http.StatusOK || q <= 0 {
		t.Fatalf("quote: HTTP %d %v", code, quote)
	}
	_, c0 := call(t, pick(), key, "GET", "/v1/customers/"+customer, "", "")
	if b := balanceOf(c0); b["available"] != 0 || b["onChain"] != 0 || c0["deposit"] == nil {
		t.Fatalf("a customer never seen: %v", c0)
	}
	deposit := 20*q + q/2
	code, c1 := call(t, pick(), key, "POST", "/v1/test_helpers/customers/"+customer+"/fund", fmt.Sprintf(`{"amount":%d}`, deposit), "")
	if code != http.StatusOK || balanceOf(c1)["available"] != deposit {
		t.Fatalf("fund %d: HTTP %d %v", deposit, code, c1)
	}
	for _, s := range servers { // every instance sees it (one database)
		if _, c := call(t, s, key, "GET", "/v1/customers/"+customer, "", ""); balanceOf(c)["onChain"] != deposit {
			t.Fatalf("an instance sees %v after the deposit of %d", c, deposit)
		}
	}

	// 3. 50 concurrent creates: exactly 20 admitted.
	var admitted []string
	var mu sync.Mutex
	refused := 0
	goRange(0, 50, 16, func(i int) {
		code, wf := call(t, pick(), key, "POST", "/v1/workflows", `{"product":"image-moderation","customerId":"`+customer+`","payload":`+moneyPayload+`}`, fmt.Sprintf("money-%s-%d", customer, i))
		mu.Lock()
		defer mu.Unlock()
		switch code {
		case http.StatusCreated:
			admitted = append(admitted, wf["id"].(string))
		case http.StatusPaymentRequired:
			refused++
		default:
			t.Errorf("create %d: HTTP %d %v", i, code, wf)
		}
	})()
	if len(admitted) != 20 || refused != 30 {
		t.Fatalf("50 concurrent creates against a balance for 20: %d admitted, %d refused", len(admitted), refused)
	}

	// 4. Every admitted workflow settles; the balance falls by their quotes.
	for _, id := range admitted {
		waitStatus(t, pick(), key, "/v1/workflows/"+id, "Settled")
	}
	_, c2 := call(t, pick(), key, "GET", "/v1/customers/"+customer, "", "")
	if b := balanceOf(c2); b["onChain"] != deposit-20*q || b["reserved"] != 0 || b["available"] != deposit-20*q {
		t.Fatalf("after 20 charges of %d from %d: %v", q, deposit, c2)
	}

	// 5. A partial then a full refund; a third is 400.
	wf := admitted[0]
	part := max(1, q/3)
	code, r1 := call(t, pick(), key, "POST", "/v1/workflows/"+wf+"/refunds", fmt.Sprintf(`{"amount":%d,"reason":"partial"}`, part), "money-refund-1")
	if code != http.StatusCreated || num(r1["amount"]) != part || r1["status"] != "Pending" {
		t.Fatalf("partial refund: HTTP %d %v", code, r1)
	}
	code, r2 := call(t, pick(), key, "POST", "/v1/workflows/"+wf+"/refunds", "", "money-refund-2")
	if code != http.StatusCreated || num(r2["amount"]) != q-part {
		t.Fatalf("refund of the rest: HTTP %d %v", code, r2)
	}
	code, r3 := call(t, pick(), key, "POST", "/v1/workflows/"+wf+"/refunds", `{"amount":1}`, "money-refund-3")
	if e, _ := r3["error"].(map[string]any); code != http.StatusBadRequest || e["code"] != "amount_exceeds_refundable" || e["param"] != "amount" {
		t.Fatalf("a third refund: HTTP %d %v", code, r3)
	}
	for _, r := range []map[string]any{r1, r2} {
		waitStatus(t, pick(), key, "/v1/refunds/"+r["id"].(string), "Succeeded")
	}
	_, w := call(t, pick(), key, "GET", "/v1/workflows/"+wf, "", "")
	if ref, _ := w["refunded"].(map[string]any); num(ref["amount"]) != q {
		t.Errorf("the workflow's refunded: %v", w["refunded"])
	}
	_, c3 := call(t, pick(), key, "GET", "/v1/customers/"+customer, "", "")
	want := deposit - 20*q + q
	if b := balanceOf(c3); b["onChain"] != want {
		t.Fatalf("after refunds of %d: %v, want onChain %d", q, c3, want)
	}
	// Each refund's webhook, verified.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		evs := hooks.refundEvents()
		if evs[r1["id"].(string)] != nil && evs[r2["id"].(string)] != nil {
			if evs[r1["id"].(string)].Amount != part || evs[r2["id"].(string)].Amount != q-part {
				t.Errorf("refund webhooks: %+v", evs)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("refund.succeeded webhooks: %v", evs)
		}
	}
	hooks.mu.Lock()
	funded, bad := len(hooks.events[settleflow.EventCustomerFunded]), hooks.bad
	hooks.mu.Unlock()
	if funded == 0 || bad != 0 {
		t.Errorf("webhooks: %d customer.funded, %d failed verification", funded, bad)
	}

	// 6. The chain agrees.
	if onChain != nil {
		if got := onChain(customer); got != want {
			t.Errorf("the contract holds %d cents for %s; want %d", got, customer, want)
		}
	}
}

// waitStatus polls path until its status is want.
func waitStatus(t *testing.T, s *processServer, key, path, want string) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		_, m := call(t, s, key, "GET", path, "", "")
		if m["status"] == want {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v, want status %s", path, m, want)
		}
	}
}

// contractBalance reads a customer's balance in the contract, in cents.
func contractBalance(t *testing.T, b ethereum.ContractCaller, contract common.Address, secret []byte, customerID string) int64 {
	t.Helper()
	abi := bindings.NewSettleflowSettlement()
	out, err := b.CallContract(context.Background(), ethereum.CallMsg{To: &contract, Data: abi.PackBalanceOf(settlement.CustomerRef(secret, settleflow.Test, customerID))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := abi.UnpackBalanceOf(out)
	if err != nil {
		t.Fatal(err)
	}
	return new(big.Int).Quo(v, big.NewInt(10_000)).Int64()
}

// The money assertions on the embedded chain, one process; then `chain
// reconcile` finds nothing to report.
func TestMoneyOverHTTPS(t *testing.T) {
	dir := t.TempDir()
	hooks := newMoneyHooks(t)
	hooks.secret.Store(addEndpoint(t, dir, hooks.srv.URL))
	out := cli(t, dir, "keys", "create", "--env", "test", "--name", "money", "--plan", "enterprise", "--per-minute", "100000", "--per-day", "1000000")
	key := regexp.MustCompile(`sk_test_[0-9A-Za-z]+`).FindString(out)
	s := startProcessServer(t, dir, "-test-faucet", "0")
	var chainBalance int64 = -1
	moneyScenario(t, []*processServer{s}, key, hooks, "cus_money_e2e", nil)
	s.kill()
	chain, err := settlement.NewSimulated(context.Background(), settlement.SimulatedOptions{DataDir: filepath.Join(dir, "chain"), ManualCommit: true})
	if err != nil {
		t.Fatal(err)
	}
	chainBalance = contractBalance(t, chain.Backend.Client(), chain.Addresses.Contract, chain.CustomerRefSecret, "cus_money_e2e")
	chain.Close()
	s2 := startProcessServer(t, dir, "-test-faucet", "0")
	_, c := call(t, s2, key, "GET", "/v1/customers/cus_money_e2e", "", "")
	if b := balanceOf(c); b["onChain"] != chainBalance {
		t.Errorf("the contract holds %d cents for the customer; the server says %v", chainBalance, c)
	}
	s2.kill()
	if out, errOut, code := runCmd(t, dir, "chain", "reconcile", "--env", "test"); code != 0 || !strings.Contains(out, "no discrepancy") || !strings.Contains(out, "2 refunds") {
		t.Fatalf("chain reconcile: exit %d\n%s%s", code, out, errOut)
	}
}

// gethCluster is n server processes on one Postgres schema settling on a
// `geth --dev` chain, with a test key and a webhook endpoint.
type gethCluster struct {
	admin    string   // the directory of the CLI's commands
	flags    []string // every server's and the CLI's flags
	key      string
	hooks    *moneyHooks
	servers  []*processServer
	client   *ethclient.Client
	secret   []byte
	contract common.Address
}

func startGethCluster(t *testing.T, schema string, n int) *gethCluster {
	t.Helper()
	url, opKey := startGethDev(t)
	pg := pgtest.Connect(t)
	dsn := pg.SchemaDSN(t, schema)
	c := &gethCluster{admin: t.TempDir()}
	keyFile := filepath.Join(c.admin, "operator.key")
	if err := os.WriteFile(keyFile, []byte(common.Bytes2Hex(opKey)), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCmd(t, c.admin, "chain", "deploy", "--env", "test", "--rpc", url, "--chain-id", "1337",
		"--key-file", keyFile, "--payee", "0x000000000000000000000000000000000000dEaD", "--confirmations", "2")
	if code != 0 {
		t.Fatalf("chain deploy: exit %d\n%s%s", code, out, errOut)
	}
	c.flags = append([]string{"-postgres", dsn}, strings.Fields(out)...)
	c.hooks = newMoneyHooks(t)
	c.hooks.secret.Store(addEndpoint(t, c.admin, c.hooks.srv.URL, c.flags...))
	out = cli(t, c.admin, append(append([]string{}, c.flags...), "keys", "create", "--env", "test", "--name", schema, "--plan", "enterprise", "--per-minute", "100000", "--per-day", "1000000")...)
	c.key = regexp.MustCompile(`sk_test_[0-9A-Za-z]+`).FindString(out)
	for range n {
		c.servers = append(c.servers, startProcessServer(t, t.TempDir(), append(append([]string{}, c.flags...), "-test-faucet", "0")...))
	}
	var err error
	if c.client, err = ethclient.Dial(url); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.client.Close)
	if c.secret, err = readSecretFile(flagValue(c.flags, "-test-customer-ref-secret-file")); err != nil {
		t.Fatal(err)
	}
	c.contract = common.HexToAddress(flagValue(c.flags, "-test-contract"))
	return c
}

// reconcile runs `chain reconcile` over the cluster's chain and database.
func (c *gethCluster) reconcile(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return runCmd(t, c.admin, append(append(append([]string{}, c.flags...), "chain", "reconcile", "--env", "test"), args...)...)
}

// The same on `geth --dev` with three server processes on one Postgres
// database: reservations shared across instances, one settlement sender.
func TestMoneyOnGethDevThreeInstances(t *testing.T) {
	c := startGethCluster(t, "money", 3)
	servers, key, hooks, client, contract, secret := c.servers, c.key, c.hooks, c.client, c.contract, c.secret
	moneyScenario(t, servers, key, hooks, "cus_money_geth", func(id string) int64 {
		return contractBalance(t, client, contract, secret, id)
	})
	for _, s := range servers {
		s.kill()
	}
	time.Sleep(3 * time.Second) // the last refunds two blocks deep
	if out, errOut, code := c.reconcile(t); code != 0 || !strings.Contains(out, "no discrepancy") {
		t.Fatalf("chain reconcile: exit %d\n%s%s", code, out, errOut)
	}
}

// A SIGKILL while charges and refunds are in flight: after the restart
// every workflow settles and every refund succeeds, nothing is charged or
// refunded twice (the contract records each once; `chain reconcile`
// compares every debit, refund and balance with the database) and each
// customer's balance is exactly its deposits less its charges plus its
// refunds.
func TestMoneySurvivesKill(t *testing.T) {
	dir := t.TempDir()
	out := cli(t, dir, "keys", "create", "--env", "test", "--name", "kill", "--plan", "enterprise", "--per-minute", "100000", "--per-day", "1000000")
	key := regexp.MustCompile(`sk_test_[0-9A-Za-z]+`).FindString(out)
	s := startProcessServer(t, dir)
	ids := s.createMany(t, key, 0, 40) // customers cus_0..cus_6, each funded by the faucet
	var settled []string
	for deadline := time.Now().Add(2 * time.Minute); len(settled) < 10; time.Sleep(100 * time.Millisecond) {
		settled = settled[:0]
		for _, id := range ids {
			if _, w := call(t, s, key, "GET", "/v1/workflows/"+id, "", ""); w["status"] == "Settled" {
				settled = append(settled, id)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d settled", len(settled), len(ids))
		}
	}
	// Refunds of ten settled workflows (all of each charge), and more
	// charges, then SIGKILL while they are in flight.
	var refunds []string
	for i, id := range settled[:10] {
		code, r := call(t, s, key, "POST", "/v1/workflows/"+id+"/refunds", "", fmt.Sprintf("kill-refund-%d", i))
		if code != http.StatusCreated {
			t.Fatalf("refund of %s: HTTP %d %v", id, code, r)
		}
		refunds = append(refunds, r["id"].(string))
	}
	ids = append(ids, s.createMany(t, key, 40, 80)...)
	s.kill()

	s = startProcessServer(t, dir)
	for _, id := range ids {
		waitStatus(t, s, key, "/v1/workflows/"+id, "Settled")
	}
	for _, id := range refunds {
		waitStatus(t, s, key, "/v1/refunds/"+id, "Succeeded")
	}
	// The customers' balances: 1,000.00 from the faucet, less the charges,
	// plus the refunds.
	spent := map[string]int64{}
	for _, id := range ids {
		_, w := call(t, s, key, "GET", "/v1/workflows/"+id, "", "")
		q := num(w["quoted"].(map[string]any)["amount"])
		r := num(w["refunded"].(map[string]any)["amount"])
		spent[w["customerId"].(string)] += q - r
	}
	for cus, net := range spent {
		if _, c := call(t, s, key, "GET", "/v1/customers/"+cus, "", ""); balanceOf(c)["onChain"] != settleflow.DefaultTestFaucet-net {
			t.Errorf("%s: %v, want onChain %d", cus, c["balance"], settleflow.DefaultTestFaucet-net)
		}
	}
	s.kill()
	if out, errOut, code := runCmd(t, dir, "chain", "reconcile", "--env", "test"); code != 0 || !strings.Contains(out, "no discrepancy") ||
		!strings.Contains(out, fmt.Sprintf("%d charges", len(ids))) || !strings.Contains(out, fmt.Sprintf("%d refunds", len(refunds))) {
		t.Fatalf("chain reconcile: exit %d\n%s%s", code, out, errOut)
	}
}
