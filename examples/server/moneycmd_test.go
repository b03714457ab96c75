package main

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/apikey"
	"github.com/settleflow/settleflow/httpapi"
	"github.com/settleflow/settleflow/internal/fundstest"
	"github.com/settleflow/settleflow/ratelimit"
	"github.com/settleflow/settleflow/storage/sqlite"
)

// fundedAPI serves the real HTTP API over an engine whose settler charges
// customer balances (the fundstest double, which settles at once and lets
// the live environment be funded too), so that the customers and refunds
// commands, and their refusals, can be run end to end quickly. It returns the API's URL, a file holding its certificate,
// a test and a live key, and the engine.
func fundedAPI(t *testing.T) (url, caFile, testKey, liveKey string, engine *settleflow.Engine) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	store, err := sqlite.Open(ctx, filepath.Join(dir, "api.db"), sqlite.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	products, err := demoProducts()
	if err != nil {
		t.Fatal(err)
	}
	chain := fundstest.New()
	chain.Live = true
	engine, err = settleflow.New(settleflow.Options{Store: store, Settler: chain, Products: products,
		Notifier:     settleflow.NotifierFunc(func(context.Context, []settleflow.Event) error { return nil }),
		PollInterval: 10 * time.Millisecond, SettlementPollInterval: 10 * time.Millisecond, FundsPollInterval: 10 * time.Millisecond,
		TestFaucet: zeroIsOff[int64](0)})
	if err != nil {
		t.Fatal(err)
	}
	if err := engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engine.Stop(context.Background()) })
	keys, err := openKeys(ctx, store.DB())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { keys.Close() })
	_, testKey, err = keys.Create(ctx, apikey.CreateParams{Environment: settleflow.Test, Name: "cli", Plan: apikey.Pro})
	if err != nil {
		t.Fatal(err)
	}
	_, liveKey, err = keys.Create(ctx, apikey.CreateParams{Environment: settleflow.Live, Name: "cli", Plan: apikey.Pro})
	if err != nil {
		t.Fatal(err)
	}
	h, err := httpapi.New(httpapi.Options{Engine: engine, Keys: httpapi.APIKeys(keys), Limiter: ratelimit.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(h)
	t.Cleanup(srv.Close)
	caFile = filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return srv.URL, caFile, testKey, liveKey, engine
}

// customers show and fund, refunds create and list, through a running API:
// text and JSON, the key from -key or $SETTLEFLOW_API_KEY, and every
// refusal (exit 2 for usage, 1 with one sentence for the API's errors).
func TestMoneyCommands(t *testing.T) {
	url, ca, key, live, engine := fundedAPI(t)
	dir := t.TempDir()
	api := []string{"-api-url", url, "-ca", ca}
	cmd := func(args ...string) (string, string, int) {
		t.Helper()
		return runCmd(t, dir, append(args, api...)...)
	}

	out, errOut, code := cmd("customers", "show", "cus_cli", "-key", key)
	if code != 0 || !regexp.MustCompile(`(?m)^available\s+0\.00 usd$`).MatchString(out) || !strings.Contains(out, "customer ref") ||
		!strings.Contains(out, "cus_cli (test)") {
		t.Fatalf("customers show: exit %d\n%s%s", code, out, errOut)
	}
	t.Setenv(apiKeyEnv, key)
	out, errOut, code = cmd("customers", "fund", "cus_cli", "-amount", "123456")
	if code != 0 || !strings.Contains(out, "deposited 1234.56 usd for cus_cli from the test faucet") ||
		!regexp.MustCompile(`(?m)^on chain\s+1234\.56 usd$`).MatchString(out) {
		t.Fatalf("customers fund: exit %d\n%s%s", code, out, errOut)
	}
	out, _, code = cmd("customers", "show", "cus_cli", "--json")
	var cus settleflow.Customer
	if err := json.Unmarshal([]byte(out), &cus); err != nil || code != 0 || cus.Balance.Available != 123456 || cus.Deposit == nil {
		t.Fatalf("customers show --json: exit %d %v\n%s", code, err, out)
	}

	wf, _, err := engine.Create(context.Background(), settleflow.CreateParams{Environment: settleflow.Test, Product: "ticket-triage",
		CustomerID: "cus_cli", Payload: json.RawMessage(`{"ticketId":"T-1","subject":"Refund","attachments":0}`)})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for wf.Status != settleflow.Settled {
		if time.Now().After(deadline) || wf.Status.Terminal() {
			t.Fatalf("workflow %s %+v", wf.Status, wf.Failure)
		}
		time.Sleep(20 * time.Millisecond)
		if wf, err = engine.Fetch(context.Background(), settleflow.Test, wf.ID); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, code = cmd("refunds", "create", wf.ID, "-amount", "100", "-reason", "late answer", "-idempotency-key", "cli-1")
	first := regexp.MustCompile(`^refund (re_\w{26}) of ` + wf.ID + `: 1\.00 usd, Pending\n$`).FindStringSubmatch(out)
	if code != 0 || first == nil {
		t.Fatalf("refunds create: exit %d %q %s", code, out, errOut)
	}
	if out, _, code := cmd("refunds", "create", wf.ID, "-amount", "100", "-reason", "late answer", "-idempotency-key", "cli-1"); code != 0 || !strings.Contains(out, first[1]) {
		t.Fatalf("refunds create again with the key: exit %d %q", code, out)
	}
	out, _, code = cmd("refunds", "create", wf.ID, "--json")
	var rest settleflow.Refund
	if err := json.Unmarshal([]byte(out), &rest); err != nil || code != 0 || rest.Amount != wf.Quoted.Amount-100 {
		t.Fatalf("refunds create (the rest) --json: exit %d %v %q", code, err, out)
	}
	out, _, code = cmd("refunds", "list", "-workflow", wf.ID)
	if lines := strings.Split(strings.TrimSpace(out), "\n"); code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") ||
		!strings.HasPrefix(lines[1], rest.ID) || !strings.HasPrefix(lines[2], first[1]) || !strings.Contains(lines[2], "late answer") {
		t.Fatalf("refunds list: exit %d\n%s", code, out)
	}
	if out, _, code := cmd("refunds", "list", "-limit", "1", "--json"); code != 0 || strings.Count(out, `"object": "refund"`) != 1 {
		t.Fatalf("refunds list -limit 1 --json: exit %d\n%s", code, out)
	}
	if out, _, code := cmd("refunds", "list", "-status", "Failed", "--json"); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("refunds list -status Failed --json: exit %d %q", code, out)
	}

	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"customers", "fund", "cus_cli"}, 2, "customers fund needs -amount N"},
		{[]string{"customers", "fund", "cus_cli", "-amount", "-5"}, 2, "customers fund needs -amount N"},
		{[]string{"customers", "fund", "cus_cli", "-amount", "1.5"}, 2, "invalid value"},
		{[]string{"customers", "fund", "cus_cli", "-amount", "5", "-key", live}, 1, "test_mode_only"},
		{[]string{"customers", "show"}, 2, "customers show takes CUSTOMER_ID"},
		{[]string{"customers", "show", "123"}, 1, "parameter_invalid (param customerId)"},
		{[]string{"refunds", "create", wf.ID, "-amount", "1"}, 1, "amount_exceeds_refundable"},
		{[]string{"refunds", "create", wf.ID, "-amount", "-1"}, 2, "want a positive amount"},
		{[]string{"refunds", "create", "wf_01JD3Q6Y6F8Q2W9T4M5N7P8R0S"}, 1, "resource_missing"},
		{[]string{"refunds", "create"}, 2, "refunds create takes WORKFLOW_ID"},
		{[]string{"refunds", "list", "-status", "done"}, 2, `--status "done"`},
		{[]string{"refunds", "list", "-limit", "0"}, 2, "--limit 0"},
		{[]string{"refunds", "list", "-workflow", "nope"}, 1, "parameter_invalid (param workflowId)"},
		{[]string{"customers", "show", "cus_cli", "-key", "sk_test_" + strings.Repeat("A", 40)}, 1, "api_key_invalid"},
	} {
		_, errOut, code := cmd(c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 && c.code == 1 {
			t.Errorf("server %s: exit %d, stderr %q; want exit %d and %q", strings.Join(c.args, " "), code, errOut, c.code, c.want)
		}
	}
	// No key anywhere: a usage error, before anything is sent.
	t.Setenv(apiKeyEnv, "")
	if _, errOut, code := cmd("customers", "show", "cus_cli"); code != 2 || !strings.Contains(errOut, "no API key: pass -key sk_test_… or set $"+apiKeyEnv) {
		t.Fatalf("no key: exit %d %q", code, errOut)
	}
	// No server there: exit 1, one sentence pointing at -api-url.
	_, errOut, code = runCmd(t, dir, "customers", "show", "cus_cli", "-key", key, "-api-url", "https://127.0.0.1:1")
	if code != 1 || !strings.Contains(errOut, "is the server running at https://127.0.0.1:1? -api-url says where") {
		t.Fatalf("no server: exit %d %q", code, errOut)
	}
}

// Against the reference server itself, whose embedded test chain charges
// customer balances: the URL is given (the test server listens on a random
// port), the certificate is the data directory's. A customer funded with
// customers fund (which marks it funded, so the faucet adds nothing on its
// first workflow) pays for a workflow created over HTTPS, gets part of the
// charge back, then the rest, and can get no more; its balance moves by
// exactly each amount, as customers show reports it.
func TestMoneyCommandsAgainstTheServer(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	api := []string{"-api-url", "https://" + s.https, "-key", s.firstKey}
	cmd := func(args ...string) (string, string, int) {
		t.Helper()
		return runCmd(t, dir, append(args, api...)...)
	}
	balance := func() settleflow.Balance {
		t.Helper()
		out, errOut, code := cmd("customers", "show", "cus_cli", "--json")
		var cus settleflow.Customer
		if err := json.Unmarshal([]byte(out), &cus); err != nil || code != 0 || cus.ID != "cus_cli" || cus.Livemode || cus.Deposit == nil {
			t.Fatalf("customers show --json: exit %d %v\n%s%s", code, err, out, errOut)
		}
		return cus.Balance
	}
	// waitBalance polls until the balance is want (refunds settle on chain
	// in the background).
	waitBalance := func(what string, want settleflow.Balance) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for got := balance(); got != want; got = balance() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: balance %+v; want %+v", what, got, want)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	out, errOut, code := cmd("customers", "show", "cus_cli")
	if code != 0 || !regexp.MustCompile(`(?m)^available\s+0\.00 usd$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^deposit to\s+contract 0x[0-9a-fA-F]{40} on chain 1337 \(simulated\)$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^customer ref\s+0x[0-9a-f]{64}$`).MatchString(out) {
		t.Fatalf("customers show: exit %d\n%s%s", code, out, errOut)
	}

	const funded = 5_000
	out, errOut, code = cmd("customers", "fund", "cus_cli", "-amount", fmt.Sprint(funded))
	if code != 0 || !strings.Contains(out, "deposited 50.00 usd for cus_cli from the test faucet") ||
		!regexp.MustCompile(`(?m)^on chain\s+50\.00 usd$`).MatchString(out) || !regexp.MustCompile(`(?m)^available\s+50\.00 usd$`).MatchString(out) {
		t.Fatalf("customers fund: exit %d\n%s%s", code, out, errOut)
	}
	if b := balance(); b != (settleflow.Balance{OnChain: funded, Available: funded, Currency: "usd"}) {
		t.Fatalf("after customers fund: %+v", b)
	}

	// A workflow over HTTPS: its quote is reserved at once, and charged
	// when it settles.
	status, _, wf := s.do("POST", "/v1/workflows", s.firstKey, `{"product":"ticket-triage","customerId":"cus_cli","payload":{"ticketId":"T-1","subject":"Refund please","attachments":2}}`)
	if status != 201 {
		t.Fatalf("create: %d %v", status, wf)
	}
	id := wf["id"].(string)
	quoted, _ := wf["quoted"].(map[string]any)
	charge := int64(quoted["amount"].(float64))
	if charge <= 100 || charge >= funded {
		t.Fatalf("create: quoted %v; want more than 1.00 and less than the deposit", quoted)
	}
	if b := balance(); b.Available != funded-charge || b.OnChain-b.Reserved != funded-charge {
		t.Fatalf("after create: %+v; want %d available", b, funded-charge)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		_, _, got := s.do("GET", "/v1/workflows/"+id, s.firstKey, "")
		if got["status"] == "Settled" {
			break
		}
		if got["status"] == "Failed" || got["status"] == "Canceled" || time.Now().After(deadline) {
			t.Fatalf("workflow ended %v", got)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if b := balance(); b != (settleflow.Balance{OnChain: funded - charge, Available: funded - charge, Currency: "usd"}) {
		t.Fatalf("after the workflow settled: %+v; want %d on chain and available", b, funded-charge)
	}

	// Part of the charge back, then the rest.
	out, errOut, code = cmd("refunds", "create", id, "-amount", "100", "-reason", "late answer", "-idempotency-key", "cli-1")
	first := regexp.MustCompile(`^refund (re_\w{26}) of ` + id + `: 1\.00 usd, Pending\n$`).FindStringSubmatch(out)
	if code != 0 || first == nil {
		t.Fatalf("refunds create -amount 100: exit %d %q %s", code, out, errOut)
	}
	waitBalance("after the refund of 1.00", settleflow.Balance{OnChain: funded - charge + 100, Available: funded - charge + 100, Currency: "usd"})
	out, errOut, code = cmd("refunds", "create", id, "--json")
	var rest settleflow.Refund
	if err := json.Unmarshal([]byte(out), &rest); err != nil || code != 0 || rest.Amount != charge-100 || rest.WorkflowID != id {
		t.Fatalf("refunds create (the rest) --json: exit %d %v %q %s", code, err, out, errOut)
	}
	waitBalance("after the refund of the rest", settleflow.Balance{OnChain: funded, Available: funded, Currency: "usd"})

	out, _, code = cmd("refunds", "list", "-workflow", id)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") ||
		!regexp.MustCompile(`^`+rest.ID+`\s+`+id+`\s+`+regexp.QuoteMeta(money(charge-100, "usd"))+`\s+Succeeded\s`).MatchString(lines[1]) ||
		!regexp.MustCompile(`^`+first[1]+`\s+`+id+`\s+1\.00 usd\s+Succeeded\s.*late answer$`).MatchString(lines[2]) {
		t.Fatalf("refunds list -workflow: exit %d\n%s", code, out)
	}
	if out, _, code := cmd("refunds", "list", "-status", "Succeeded", "--json"); code != 0 || strings.Count(out, `"object": "refund"`) != 2 {
		t.Fatalf("refunds list -status Succeeded --json: exit %d\n%s", code, out)
	}

	// Nothing is left to refund: one sentence on stderr, exit 1, and the
	// balance is as it was.
	out, errOut, code = cmd("refunds", "create", id, "-amount", "1")
	if code != 1 || out != "" || !strings.Contains(errOut, "amount_exceeds_refundable") || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
		t.Fatalf("a third refunds create: exit %d, stdout %q, stderr %q; want exit 1 and amount_exceeds_refundable", code, out, errOut)
	}
	if b := balance(); b != (settleflow.Balance{OnChain: funded, Available: funded, Currency: "usd"}) {
		t.Fatalf("after the refused refund: %+v", b)
	}
	_, _, got := s.do("GET", "/v1/workflows/"+id, s.firstKey, "")
	if refunded, _ := got["refunded"].(map[string]any); refunded["amount"] != float64(charge) {
		t.Fatalf("GET /v1/workflows/%s: refunded %v; want %d", id, got["refunded"], charge)
	}
}

// The API URL defaults to the server's public address; -test-faucet 0 is
// the engine's "off", and a negative one is refused.
func TestMoneyCommandDefaults(t *testing.T) {
	for _, c := range []struct {
		c    config
		want string
	}{
		{config{httpsAddr: "127.0.0.1:8443"}, "127.0.0.1:8443"},
		{config{httpsAddr: "0.0.0.0:8443"}, "localhost:8443"},
		{config{httpsAddr: ":8443"}, "localhost:8443"},
		{config{httpsAddr: "[::]:8443"}, "localhost:8443"},
		{config{httpsAddr: "0.0.0.0:8443", publicHTTPS: "api.example.com"}, "api.example.com"},
	} {
		if got := publicAddr(c.c); got != c.want {
			t.Errorf("publicAddr(%+v) = %q, want %q", c.c, got, c.want)
		}
	}
	if zeroIsOff[int64](0) >= 0 || zeroIsOff[int64](100_000) != 100_000 {
		t.Fatalf("zeroIsOff: 0 → %d, 100000 → %d", zeroIsOff[int64](0), zeroIsOff[int64](100_000))
	}
	if _, errOut, code := runCmd(t, t.TempDir(), "-test-faucet", "-1", "keys", "list"); code != 2 || !strings.Contains(errOut, "-test-faucet -1") {
		t.Fatalf("-test-faucet -1: exit %d %q", code, errOut)
	}
	out, _, code := runCmd(t, t.TempDir(), "customers", "-h")
	if code != 0 || !strings.Contains(strings.Join(strings.Fields(out), " "), settleflow.TestCustomerInsufficientFunds+", which is never funded in test mode") {
		t.Fatalf("customers -h: exit %d\n%s", code, out)
	}
}
