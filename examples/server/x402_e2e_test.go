package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/settlement/contracts/bindings"
	"github.com/settleflow/settleflow/x402"
)

var (
	tokenLine     = regexp.MustCompile(`test settlement: chain 1337 \(\S+\), contract (0x[0-9a-fA-F]{40}), token (0x[0-9a-fA-F]{40})`)
	collectorLine = regexp.MustCompile(`x402: selling [^(]*\(test, eip155:1337\) at (\S+); payments to collector (0x[0-9a-fA-F]{40})`)
	walletLine    = regexp.MustCompile(`x402: test buyer wallet (0x[0-9a-fA-F]{40}) holds 1000(\.0+)? test USD \(its key: (\S+)\)`)
)

// The reference server sells ticket-triage (priced fixed) over x402 on
// its embedded test chain (-x402-products), and the official x402 client
// packages from npm (@x402/fetch with @x402/evm's exact scheme, pinned in
// x402/testdata/node/package-lock.json) pay it over real HTTPS on loopback
// with the test buyer wallet the server made and funded: a create without
// payment is answered 402 with the price, the client's paid retry 201 with
// PAYMENT-RESPONSE naming the transfer, the workflow belongs to the
// wallet's customer and is charged the price, which the transfer read back
// from the chain moved from the wallet to the collector, and nothing more.
func TestX402OfficialClientPaysTheReferenceServer(t *testing.T) {
	nodeDir := x402NodeDir(t)
	dir := t.TempDir()
	s := startServerWith(t, dir, "-x402-products", "ticket-triage,document-extraction,ticket-resolution", "-x402-wait", "10s", "-test-faucet", "0")
	wm := walletLine.FindStringSubmatch(s.stdoutBuf.String())
	if wm == nil {
		t.Fatalf("the start does not name the test wallet:\n%s", s.stdoutBuf.String())
	}
	key, err := crypto.LoadECDSA(wm[3])
	if err != nil || crypto.PubkeyToAddress(key.PublicKey).Hex() != wm[1] {
		t.Fatalf("the test wallet's key %s: %v", wm[3], err)
	}
	p := x402PayOnce(t, s, nodeDir, key)

	// Outcome-priced products, by upto (the test wallet approved Permit2
	// at the server's start): the charge, and only the charge, is taken.
	var upto []uptoPaid
	for _, c := range []struct{ name, body string }{
		{"capped", `{"product": "document-extraction", "payload": {"documentId": "INV-402", "pages": 3, "quality": "clean"}}`},
		{"success fee, escalated", `{"product": "ticket-resolution", "payload": {"ticketId": "T-1", "question": "Why is the sky blue?"}}`},
		{"success fee, resolved", `{"product": "ticket-resolution", "payload": {"ticketId": "T-2", "question": "How do I reset my password?"}}`},
	} {
		upto = append(upto, x402PayUpto(t, s, nodeDir, key, p, c.name, c.body))
	}
	if upto[0].charged <= 0 || upto[0].charged >= upto[0].quote || upto[1].charged != 0 || upto[2].charged != upto[2].quote {
		t.Fatalf("upto charges %+v: want the capped one below its quote, the escalated ticket 0, the resolved one its quote", upto)
	}

	// Read back from the chain (the server stopped, its embedded chain
	// opened from the data directory): the exact payment's transfer, and
	// the wallet holding its funds less every charge.
	if err := s.shutdown(); err != nil {
		t.Fatal(err)
	}
	sim, err := settlement.NewSimulated(context.Background(), settlement.SimulatedOptions{DataDir: filepath.Join(dir, "chain"), ManualCommit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	funds := big.NewInt(1000_000_000)
	for _, u := range upto {
		funds.Sub(funds, big.NewInt(u.charged*10_000))
	}
	p.checkChain(t, sim.Backend.Client(), funds)
	for _, u := range upto {
		if u.charged == 0 {
			continue
		}
		if got := chargedOnChainTo(t, sim.Backend.Client(), u); got != u.charged*10_000 {
			t.Fatalf("%s: the settle charged %d base units on chain; the workflow's charge is %d cents", u.name, got, u.charged)
		}
	}
}

// uptoPaid is an outcome-priced purchase: its quote and charge in cents.
type uptoPaid struct {
	name           string
	quote, charged int64
	settleTx       string
}

// x402PayUpto has the official client buy body by upto from s with
// wallet: the 402 offers upto with the quote as the most it can cost and
// the collector as facilitator; the paid create, waiting for the outcome,
// answers 201 with PAYMENT-RESPONSE naming the amount taken (the
// workflow's charge) and its settle.
func x402PayUpto(t *testing.T, s *server, nodeDir string, wallet *ecdsa.PrivateKey, p *x402Paid, name, body string) uptoPaid {
	t.Helper()
	url := "https://" + s.https + "/x402/workflows"
	pr := x402Offer(t, s, url, body)
	offer := pr.Accepts[0]
	if offer.Scheme != x402.SchemeUpto || common.HexToAddress(offer.Extra["facilitatorAddress"]) != p.collector || common.HexToAddress(offer.PayTo) != p.collector {
		t.Fatalf("%s: the offer %+v", name, offer)
	}
	stdout, status, pay, purchase := x402Official(t, s, nodeDir, wallet, p.token, url, offer.Amount, body)
	if status != http.StatusCreated || purchase.Workflow == nil {
		t.Fatalf("%s: the official client got %s", name, stdout)
	}
	got := struct {
		PaymentResponse *x402.SettlementResponse
		Body            x402.Purchase
	}{pay, purchase}
	wf := x402Settled(t, s, got.Body.Workflow.ID, got.Body.AccessToken)
	u := uptoPaid{name: name, quote: wf.Quoted.Amount, charged: wf.Charged.Amount}
	if wf.Settlement != nil {
		u.settleTx = wf.Settlement.TxHash
	}
	if pay := got.PaymentResponse; pay == nil || !pay.Success || pay.Amount != strconv.FormatInt(u.charged*10_000, 10) ||
		!strings.EqualFold(pay.Transaction, u.settleTx) || common.HexToAddress(pay.Payer) != p.wallet {
		t.Fatalf("%s: PAYMENT-RESPONSE %+v for a charge of %d (settle %s)", name, got.PaymentResponse, u.charged, u.settleTx)
	}
	offerMax, _ := new(big.Int).SetString(offer.Amount, 10)
	if offerMax.Int64() != u.quote*10_000 {
		t.Fatalf("%s: offered at most %s base units for a quote of %d cents", name, offer.Amount, u.quote)
	}
	t.Logf("%s: quoted %d cents, charged %d (settle %s)", name, u.quote, u.charged, u.settleTx)
	return u
}

// chargedOnChainTo is what u's settle transaction took from the contract's
// customers, read from the chain: the payee's due before the transaction's
// block and at it (the wallet's charge alone settles there: the test
// sends one purchase at a time).
func chargedOnChainTo(t *testing.T, b settlement.Backend, u uptoPaid) int64 {
	t.Helper()
	ctx := context.Background()
	rcpt, err := b.TransactionReceipt(ctx, common.HexToHash(u.settleTx))
	if err != nil {
		t.Fatal(err)
	}
	tx, _, err := b.TransactionByHash(ctx, common.HexToHash(u.settleTx))
	if err != nil || tx.To() == nil {
		t.Fatalf("the settle %s: %v", u.settleTx, err)
	}
	abi := bindings.NewSettleflowSettlement()
	owed := func(block *big.Int) int64 {
		out, err := b.CallContract(ctx, ethereum.CallMsg{To: tx.To(), Data: abi.PackPayeeOwed()}, block)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := abi.UnpackPayeeOwed(out)
		return v.Int64()
	}
	return owed(rcpt.BlockNumber) - owed(new(big.Int).Sub(rcpt.BlockNumber, big.NewInt(1)))
}

// The same on a `geth --dev` node (a block a second) standing in for a
// testnet, the chain over RPC: `chain deploy` puts the contract and the
// test token there, the collector is a key of the operator's given gas by
// hand, the wallet is funded from the test faucet; the server refuses to
// start without a collector key, or with the settlement operator's. Gated
// by SETTLEFLOW_TEST_X402_GETH=1 (and SETTLEFLOW_GETH): examples/server's
// run is long already.
func TestX402OfficialClientPaysOnGethDev(t *testing.T) {
	if os.Getenv("SETTLEFLOW_TEST_X402_GETH") == "" {
		t.Skip("set SETTLEFLOW_TEST_X402_GETH=1 (and SETTLEFLOW_GETH) to run the official x402 client against the reference server on geth --dev (.ci/run does)")
	}
	nodeDir := x402NodeDir(t)
	url, devKey := startGethDev(t)
	dir := t.TempDir()
	opKeyFile := filepath.Join(t.TempDir(), "operator.key")
	if err := os.WriteFile(opKeyFile, []byte(common.Bytes2Hex(devKey)), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCmd(t, dir, "chain", "deploy", "--env", "test", "--rpc", url, "--chain-id", "1337",
		"--key-file", opKeyFile, "--payee", crypto.PubkeyToAddress(mustKey(t).PublicKey).Hex(), "--confirmations", "2")
	if code != 0 || !strings.HasPrefix(out, "-test-rpc ") {
		t.Fatalf("chain deploy: exit %d\n%s%s", code, out, errOut)
	}
	flags := strings.Fields(out)
	ctx := context.Background()
	client, err := ethclient.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	token := common.HexToAddress(flagValue(flags, "-test-token"))
	// The collector: a key of its own, given gas by the dev account; the
	// wallet: 100.00 of the test token from the faucet.
	collectorKey := mustKey(t)
	collectorFile := filepath.Join(t.TempDir(), "collector.key")
	if err := crypto.SaveECDSA(collectorFile, collectorKey); err != nil {
		t.Fatal(err)
	}
	op, _ := crypto.ToECDSA(devKey)
	collector := crypto.PubkeyToAddress(collectorKey.PublicKey)
	if _, err := (settlement.Transactor{Backend: client, Key: op}).SendValue(ctx, &collector, big.NewInt(1e18), nil); err != nil {
		t.Fatal(err)
	}
	faucet, err := crypto.LoadECDSA(flagValue(flags, "-test-faucet-key-file"))
	if err != nil {
		t.Fatal(err)
	}
	wallet := mustKey(t)
	funds := big.NewInt(100_000_000)
	if _, err := (settlement.Transactor{Backend: client, Key: faucet}).Send(ctx, &token,
		bindings.NewTestUSD().PackTransfer(crypto.PubkeyToAddress(wallet.PublicKey), funds)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, want string }{
		{"", "CollectorKey or CollectorKeyFile is required on a chain over RPC"},
		{opKeyFile, "is the settlement operator's account: give the collector a key of its own"},
	} {
		args := append(append([]string{"-https", "127.0.0.1:0", "-http", "", "-log-level", "error"}, flags...), "-x402-products", "ticket-triage")
		if c.name != "" {
			args = append(args, "-x402-collector-key-file", c.name)
		}
		if out, errOut, code := runCmd(t, dir, args...); code == 0 || !strings.Contains(errOut, c.want) || strings.Contains(out, "listening") {
			t.Fatalf("x402 with collector key file %q: exit %d, %s%s; want refused, saying %q", c.name, code, out, errOut, c.want)
		}
	}
	s := startServerWith(t, dir, append(flags, "-x402-products", "ticket-triage", "-x402-collector-key-file", collectorFile, "-test-faucet", "0")...)
	p := x402PayOnce(t, s, nodeDir, wallet)
	if p.collector != collector {
		t.Fatalf("payments go to %s, want the collector %s", p.collector, collector)
	}
	p.checkChain(t, client, funds)
}

// x402NodeDir is x402/testdata/node, whose node_modules hold the official
// x402 client packages; the test is skipped if they are not installed.
func x402NodeDir(t *testing.T) string {
	t.Helper()
	dir, _ := filepath.Abs(filepath.Join("..", "..", "x402", "testdata", "node"))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@x402", "fetch")); err != nil {
		t.Skip("skipping: x402/testdata/node/node_modules is absent; run `npm ci` in x402/testdata/node (.ci/run does) to enable the official client test")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node_modules is installed but node is not on PATH")
	}
	return dir
}

// x402Paid is one payment by the official client, as the server answered.
type x402Paid struct {
	token, collector, wallet common.Address
	pay                      *x402.SettlementResponse
	// units is the workflow's charge in the token's base units.
	units *big.Int
}

// x402PayOnce sells ticket-triage to wallet through s: a create without
// payment is answered 402 with the price, to the collector, in the token;
// the official client (x402/testdata/node/pay.mjs) pays it and is answered
// 201 with PAYMENT-RESPONSE naming the transfer; the workflow is the
// wallet's customer's and settles, charged the price.
func x402PayOnce(t *testing.T, s *server, nodeDir string, wallet *ecdsa.PrivateKey) *x402Paid {
	t.Helper()
	out := s.stdoutBuf.String()
	tm, cm := tokenLine.FindStringSubmatch(out), collectorLine.FindStringSubmatch(out)
	if tm == nil || cm == nil {
		t.Fatalf("the start does not name the chain and the x402 collector:\n%s", out)
	}
	p := &x402Paid{token: common.HexToAddress(tm[2]), collector: common.HexToAddress(cm[2]), wallet: crypto.PubkeyToAddress(wallet.PublicKey)}
	url := cm[1]
	if url != "https://"+s.https+"/x402/workflows" {
		t.Fatalf("x402 is announced at %s, want https://%s/x402/workflows", url, s.https)
	}
	const body = `{"product": "ticket-triage", "payload": {"ticketId": "T-402", "subject": "Refund for invoice 7"}}`

	// Without payment: 402, the price to the collector in the token.
	pr := x402Offer(t, s, url, body)
	offer := pr.Accepts[0]
	price, ok := new(big.Int).SetString(offer.Amount, 10)
	if !ok || price.Sign() <= 0 || offer.Network != "eip155:1337" || common.HexToAddress(offer.Asset) != p.token ||
		common.HexToAddress(offer.PayTo) != p.collector || pr.Resource.URL != url {
		t.Fatalf("the offer %+v of %+v", offer, pr.Resource)
	}

	// The official client pays.
	stdout, status, pay, purchase := x402Official(t, s, nodeDir, wallet, p.token, url, offer.Amount, body)
	got := struct {
		Status          int
		PaymentResponse *x402.SettlementResponse
		Body            x402.Purchase
	}{status, pay, purchase}
	p.pay = got.PaymentResponse
	if got.Status != http.StatusCreated || p.pay == nil || !p.pay.Success || got.Body.Workflow == nil || got.Body.AccessToken == "" {
		t.Fatalf("the official client got %s", stdout)
	}
	if !regexp.MustCompile(`^0x[0-9a-f]{64}$`).MatchString(p.pay.Transaction) || common.HexToAddress(p.pay.Payer) != p.wallet ||
		p.pay.Amount != offer.Amount || p.pay.Network != "eip155:1337" {
		t.Fatalf("PAYMENT-RESPONSE %+v", p.pay)
	}
	wf := got.Body.Workflow
	if wf.CustomerID != x402.CustomerID(p.wallet) || wf.Product != "ticket-triage" || wf.Environment() != settleflow.Test {
		t.Fatalf("workflow %+v", wf)
	}

	// The workflow's charge, read with the access token and with the
	// operator's key: the price, settled on the chain.
	settled := x402Settled(t, s, wf.ID, got.Body.AccessToken)
	p.units = new(big.Int).Mul(big.NewInt(settled.Charged.Amount), big.NewInt(10_000))
	if p.units.Cmp(price) != 0 {
		t.Fatalf("charged %d cents; the payment was %s base units", settled.Charged.Amount, price)
	}
	status, _, m := s.do("GET", "/v1/workflows/"+wf.ID, s.firstKey, "")
	if s.firstKey != "" && (status != 200 || m["customerId"] != x402.CustomerID(p.wallet) || m["status"] != "Settled") {
		t.Fatalf("GET /v1/workflows/%s with the operator's key: %d %v", wf.ID, status, m)
	}
	t.Logf("paid %s base units in %s for workflow %s, charged %d cents", price, p.pay.Transaction, wf.ID, settled.Charged.Amount)
	return p
}

// checkChain reads the payment's transfer back from the chain: it moved
// the workflow's charge from the wallet to the collector, and the wallet,
// which held funds before, holds funds less the charge.
func (p *x402Paid) checkChain(t *testing.T, b settlement.Backend, funds *big.Int) {
	t.Helper()
	ctx := context.Background()
	rcpt, err := b.TransactionReceipt(ctx, common.HexToHash(p.pay.Transaction))
	if err != nil || rcpt.Status != 1 {
		t.Fatalf("the payment's transaction %s: %v", p.pay.Transaction, err)
	}
	moved := new(big.Int)
	topic := crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))
	for _, l := range rcpt.Logs {
		if l.Address == p.token && len(l.Topics) == 3 && l.Topics[0] == topic &&
			common.BytesToAddress(l.Topics[1][:]) == p.wallet && common.BytesToAddress(l.Topics[2][:]) == p.collector {
			moved.Add(moved, new(big.Int).SetBytes(l.Data))
		}
	}
	if moved.Cmp(p.units) != 0 {
		t.Fatalf("the payment moved %s base units from the wallet to the collector; the workflow's charge is %s", moved, p.units)
	}
	holds, err := settlement.TokenBalance(ctx, b, p.token, p.wallet)
	if want := new(big.Int).Sub(funds, p.units); err != nil || holds.Cmp(want) != 0 {
		t.Fatalf("the wallet holds %s, want %s (its funds less the charge): %v", holds, want, err)
	}
}

// x402Settled reads workflow id with an x402 access token until it is
// Settled.
func x402Settled(t *testing.T, s *server, id, token string) *settleflow.Workflow {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		req, _ := http.NewRequest("GET", "https://"+s.https+"/x402/workflows/"+id, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := s.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var wf settleflow.Workflow
		if res.StatusCode != 200 || json.Unmarshal(b, &wf) != nil {
			t.Fatalf("GET with the access token: %d %s", res.StatusCode, b)
		}
		if wf.Status == settleflow.Settled && wf.Charged != nil {
			return &wf
		}
		if wf.Status.Terminal() || time.Now().After(deadline) {
			t.Fatalf("workflow %s: %s, want Settled: %s", id, wf.Status, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The -x402-* flags a server would refuse are usage errors naming the
// flag, before anything is opened; a product not in the catalogue is
// refused at start, before anything is served.
func TestX402FlagErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		args  []string
		want  string
		usage bool
	}{
		{"env without products", []string{"-x402-env", "live"}, "the -x402-* flags need -x402-products", true},
		{"wait without products", []string{"-x402-wait", "1s"}, "the -x402-* flags need -x402-products", true},
		{"an environment of neither", []string{"-x402-products", "ticket-triage", "-x402-env", "prod"}, `-x402-env "prod": want test or live`, true},
		{"an empty product", []string{"-x402-products", "ticket-triage,"}, "an empty product name", true},
		{"a wait past the request timeout", []string{"-x402-products", "ticket-triage", "-x402-wait", "30s"}, "-x402-wait 30s: want less than -request-timeout (30s)", true},
		{"live without a live chain", []string{"-x402-products", "ticket-triage", "-x402-env", "live"}, "-x402-env live needs live settlement", true},
		{"a product not in the catalogue", []string{"-x402-products", "ticket-triage,nope"}, `-x402-products: x402: no product "nope"`, false},
	} {
		var out syncBuffer
		dir := filepath.Join(t.TempDir(), "data")
		args := append([]string{"-data", dir, "-https", "127.0.0.1:0", "-http", "", "-log-level", "error"}, c.args...)
		err := run(t.Context(), args, &out, &syncBuffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) || isUsage(err) != c.usage || strings.Contains(out.String(), "listening") {
			t.Errorf("%s: %v (usage %v; stdout %q); want refused, saying %q", c.name, err, isUsage(err), out.String(), c.want)
		}
		if _, serr := os.Stat(dir); c.usage && !errors.Is(serr, os.ErrNotExist) {
			t.Errorf("%s: refused as usage, but the data directory was made", c.name)
		}
	}
}

// x402Offer posts body to url without payment and reads the 402's one
// offer.
func x402Offer(t *testing.T, s *server, url, body string) *x402.PaymentRequired {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	res, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	pr, err := x402.DecodePaymentRequired(res.Header.Get(x402.HeaderPaymentRequired))
	if res.StatusCode != http.StatusPaymentRequired || err != nil || len(pr.Accepts) != 1 {
		t.Fatalf("a create without payment: %d, PAYMENT-REQUIRED %v; want 402 with one offer", res.StatusCode, err)
	}
	return pr
}

// x402Official has the official client (x402/testdata/node/pay.mjs) pay
// body at url with wallet, in token, at most max base units, trusting s's
// certificate; it returns the client's printed answer.
func x402Official(t *testing.T, s *server, nodeDir string, wallet *ecdsa.PrivateKey, token common.Address, url, max, body string) (out []byte, status int, pay *x402.SettlementResponse, p x402.Purchase) {
	t.Helper()
	cmd := exec.Command("node", "pay.mjs")
	cmd.Dir = nodeDir
	cmd.Env = append(os.Environ(),
		"NODE_EXTRA_CA_CERTS="+filepath.Join(s.dir, "tls", "cert.pem"),
		"X402_URL="+url, "X402_KEY="+hexutil.Encode(crypto.FromECDSA(wallet)), "X402_NETWORK=eip155:1337",
		"X402_ASSET="+token.Hex(), "X402_MAX="+max, "X402_BODY="+body)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("node pay.mjs: %v\n%s\n%s", err, stdout, stderr.String())
	}
	var got struct {
		Status          int                      `json:"status"`
		PaymentResponse *x402.SettlementResponse `json:"paymentResponse"`
		Body            x402.Purchase            `json:"body"`
	}
	if err := json.Unmarshal(stdout, &got); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	return stdout, got.Status, got.PaymentResponse, got.Body
}
