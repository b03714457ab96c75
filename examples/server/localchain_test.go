package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/params"

	"github.com/settleflow/settleflow/internal/pgtest"
)

// localChainEnv runs the local-chain walk-through's tests: each starts
// geth --dev and reference servers of its own, which would take
// examples/server past go test's 10 minutes per package, so `go test
// ./...` skips them and .ci/run runs them in a step of their own.
const localChainEnv = "SETTLEFLOW_TEST_LOCAL_CHAIN"

// needLocalChain skips t unless localChainEnv and SETTLEFLOW_GETH are set.
func needLocalChain(t *testing.T) {
	t.Helper()
	if os.Getenv(localChainEnv) == "" {
		t.Skip(localChainEnv + " is not set: this geth --dev walk-through runs in a step of its own (.ci/run; docs/operating.md, \"Running the tests\"): " +
			localChainEnv + "=1 SETTLEFLOW_GETH=… SETTLEFLOW_TEST_POSTGRES_DSN=… go test -race -run 'TestSeveralInstancesOnALocalChain|TestFirstCreateOnAChainWithoutBlocks' ./examples/server")
	}
	if os.Getenv("SETTLEFLOW_GETH") == "" {
		t.Skip("SETTLEFLOW_GETH is not set: build geth with settlement/scripts/install-geth.sh DIR and set SETTLEFLOW_GETH=DIR/geth (.ci/run does)")
	}
}

// post sends a create to s and returns the status, the headers and the
// decoded body.
func (s *processServer) post(t *testing.T, key, path, body string) (int, http.Header, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", s.url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("POST %s: HTTP %d, not JSON: %s", path, resp.StatusCode, raw)
	}
	return resp.StatusCode, resp.Header, m
}

// localChainDeploy writes an operator key file as docs/operating.md's
// walk-through does (32 random bytes, hex), runs geth --dev with it as the
// developer account (period "" for geth's default), and deploys with
// `chain deploy` from dir; it returns the flags deploy printed and the RPC
// URL.
func localChainDeploy(t *testing.T, dir, period string) ([]string, string) {
	t.Helper()
	needLocalChain(t)
	var raw [32]byte
	rand.Read(raw[:])
	keyFile := filepath.Join(dir, "operator.key")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, []byte(hex.EncodeToString(raw[:])+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url, devKey := startGeth(t, gethOptions{period: period, keyFile: keyFile})
	if hex.EncodeToString(devKey) != hex.EncodeToString(raw[:]) {
		t.Fatal("geth --dev did not take the imported key as its developer account")
	}
	payee := crypto.PubkeyToAddress(mustKey(t).PublicKey).Hex()
	out, errOut, code := runCmd(t, dir, "chain", "deploy", "--env", "test", "--rpc", url, "--chain-id", "1337",
		"--key-file", keyFile, "--payee", payee)
	if code != 0 || !strings.HasPrefix(out, "-test-rpc ") {
		t.Fatalf("chain deploy: exit %d\n%s%s", code, out, errOut)
	}
	return strings.Fields(out), url
}

// docs/operating.md, "Several instances on a local chain", run as written:
// geth --dev with --dev.period and the operator's key as its developer
// account, `chain deploy` (which gives the test faucet 1 ETH of gas money),
// two reference-server instances on one Postgres database started with the
// same printed flags (the same customer reference secret and test faucet
// key), a new customer's first create on each admitted and settled, and
// `chain reconcile` over RPC, beside the running instances, clean.
func TestSeveralInstancesOnALocalChain(t *testing.T) {
	needLocalChain(t)
	pg := pgtest.Connect(t) // skips without SETTLEFLOW_TEST_POSTGRES_DSN
	began := time.Now()
	shared := filepath.Join(t.TempDir(), "shared")
	flags, url := localChainDeploy(t, shared, "1")
	for _, name := range []string{"-test-customer-ref-secret-file", "-test-faucet-key-file"} {
		if v := flagValue(flags, name); !filepath.IsAbs(v) || !strings.HasPrefix(v, shared) {
			t.Fatalf("chain deploy printed %s %q: want an absolute path in its -data directory", name, v)
		}
	}
	// The faucet's gas money: 1 ETH from the operator, less its approve.
	faucetKey, err := crypto.LoadECDSA(flagValue(flags, "-test-faucet-key-file"))
	if err != nil {
		t.Fatal(err)
	}
	ec, err := ethclient.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	defer ec.Close()
	gas, err := ec.BalanceAt(context.Background(), crypto.PubkeyToAddress(faucetKey.PublicKey), nil)
	oneEth := big.NewInt(params.Ether)
	if err != nil || gas.Cmp(oneEth) > 0 || gas.Cmp(new(big.Int).Div(new(big.Int).Mul(oneEth, big.NewInt(99)), big.NewInt(100))) < 0 {
		t.Fatalf("the test faucet holds %v wei for gas (%v): want a little under 1 ETH", gas, err)
	}

	dsn := pg.SchemaDSN(t, "localchain")
	out := cli(t, shared, "-postgres", dsn, "keys", "create", "--env", "test", "--name", "local")
	key := regexp.MustCompile(`sk_test_[0-9A-Za-z]+`).FindString(out)
	instance := append(append([]string{}, flags...), "-postgres", dsn)
	a := startProcessServer(t, t.TempDir(), instance...)
	b := startProcessServer(t, t.TempDir(), instance...)

	var ids []string
	for i, s := range []*processServer{a, b} {
		customer := []string{"cus_local_a", "cus_local_b"}[i]
		status, _, wf := s.post(t, key, "/v1/workflows", `{"product":"ticket-triage","customerId":"`+customer+`","payload":{"ticketId":"T-1"}}`)
		if status != http.StatusCreated {
			t.Fatalf("instance %d: a new customer's first create: HTTP %d %v", i, status, wf)
		}
		ids = append(ids, wf["id"].(string))
	}
	for _, id := range ids {
		a.settled(t, key, id)
	}
	out, errOut, code := runCmd(t, shared, append(append([]string{}, instance...), "chain", "reconcile", "--env", "test")...)
	if code != 0 || !strings.Contains(out, "no discrepancy") || !strings.Contains(out, "2 charges") {
		t.Fatalf("chain reconcile beside the running instances: exit %d\n%s%s", code, out, errOut)
	}
	t.Logf("the walk-through took %s", time.Since(began).Round(time.Second))
}

// On geth --dev at its default period (a block only when a transaction
// arrives) the test faucet's deposit for a new customer is mined and never
// confirmed: the customer's first create is refused 503 funds_unconfirmed,
// naming why, before the request's deadline (not 504 request_timeout), and
// nothing is stored.
func TestFirstCreateOnAChainWithoutBlocks(t *testing.T) {
	needLocalChain(t)
	began := time.Now()
	dir := t.TempDir()
	flags, _ := localChainDeploy(t, dir, "")
	out := cli(t, dir, "keys", "create", "--env", "test", "--name", "local")
	key := regexp.MustCompile(`sk_test_[0-9A-Za-z]+`).FindString(out)
	s := startProcessServer(t, dir, append(append([]string{}, flags...), "-request-timeout", "6s")...)
	sent := time.Now()
	status, h, body := s.post(t, key, "/v1/workflows", `{"product":"ticket-triage","customerId":"cus_no_blocks","payload":{"ticketId":"T-1"}}`)
	took := time.Since(sent)
	e, _ := body["error"].(map[string]any)
	msg, _ := e["message"].(string)
	if status != http.StatusServiceUnavailable || e["code"] != "funds_unconfirmed" || e["customerId"] != "cus_no_blocks" || h.Get("Retry-After") == "" ||
		!strings.Contains(msg, "--dev.period") || !strings.Contains(msg, "transaction 0x") {
		t.Fatalf("a first create on a chain without blocks: HTTP %d %v (after %s)", status, body, took)
	}
	if took >= 6*time.Second {
		t.Fatalf("answered after %s, past the request's deadline", took)
	}
	if list := s.get(t, key, "/v1/workflows?customerId=cus_no_blocks"); list["data"] == nil || len(list["data"].([]any)) != 0 {
		t.Fatalf("a refused create stored a workflow: %v", list)
	}
	t.Logf("took %s", time.Since(began).Round(time.Second))
}
