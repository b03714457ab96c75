package x402_test

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/criteria"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/settlement/contracts/bindings"
	"github.com/settleflow/settleflow/x402"
)

// job is the outcome-priced products' payload: Resolve says whether the
// work meets the success criteria.
type job struct {
	Text    string `json:"text"`
	Resolve bool   `json:"resolve"`
}

func (j job) Validate() error {
	if j.Text == "" {
		return &settleflow.FieldError{Field: "text", Message: "is required"}
	}
	return nil
}

// uptoCases are the outcome-priced purchases the official client makes:
// a capped product, a success fee whose outcome fails and one whose
// outcome passes, each with the charge it must be taken.
var uptoCases = []struct {
	name    string
	product string
	resolve bool
	charged int64
}{
	{"capped", cappedProduct, true, cappedCharge},
	{"success fee, outcome fails", feeProduct, false, 0},
	{"success fee, outcome passes", feeProduct, true, uptoQuote},
}

const (
	cappedProduct = "report"  // capped: cost 400 × 1.2 = 480 of a 1000 quote
	feeProduct    = "verdict" // success fee: 1000 when resolved, else 0
	uptoQuote     = 1000      // cents, both products
	cappedCharge  = 480       // cents
	uptoCost      = 400
)

// uptoProducts registers the outcome-priced products sold by upto; a job
// whose text is "wait" runs until gate is closed.
func uptoProducts(gate <-chan struct{}) func(*settleflow.Products) error {
	return func(ps *settleflow.Products) error { return registerUpto(ps, gate) }
}

func registerUpto(ps *settleflow.Products, gate <-chan struct{}) error {
	execute := func(ctx context.Context, j job) (settleflow.Execution, error) {
		if j.Text == "wait" {
			select {
			case <-gate:
			case <-ctx.Done():
				return settleflow.Execution{}, ctx.Err()
			}
		}
		status := "open"
		if j.Resolve {
			status = "resolved"
		}
		return settleflow.Execution{ActualCost: uptoCost, Result: map[string]string{"status": status, "text": j.Text}}, nil
	}
	estimate := func(job) (int64, error) { return 700, nil }
	if err := settleflow.Register(ps, settleflow.Product[job]{Name: cappedProduct, Estimate: estimate, Execute: execute,
		Price: settleflow.Price{Model: settleflow.PricingCapped, TargetMargin: 3000, Markup: 2000}}); err != nil {
		return err
	}
	return settleflow.Register(ps, settleflow.Product[job]{Name: feeProduct, Estimate: estimate, Execute: execute,
		Price:           settleflow.Price{Model: settleflow.PricingSuccessFee, TargetMargin: 3000},
		SuccessCriteria: criteria.MustParse(`{"type":"exact","path":"/status","value":"resolved"}`)})
}

// newUptoRig is the reference rig selling the outcome-priced products by
// upto as well, its paid creates waiting for the outcome, with a buyer
// that has approved Permit2 (the scheme's one-time setup).
func newUptoRig(t *testing.T, blocks bool) *rig { return newUptoRigGated(t, blocks, nil) }

// newUptoRigGated is newUptoRig whose "wait" jobs run until gate closes.
func newUptoRigGated(t *testing.T, blocks bool, gate <-chan struct{}) *rig {
	t.Helper()
	sim, err := settlement.NewSimulated(context.Background(), settlement.SimulatedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	if blocks {
		startBlocks(t, sim, nil)
	}
	r, err := finishRigWith(t, sim, rigOptions{products: []func(*settleflow.Products) error{uptoProducts(gate)},
		forSale: []string{cappedProduct, feeProduct}, upto: true, wait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	r.approvePermit2(r.buyer)
	return r
}

// approvePermit2 gives key's wallet gas and has it approve Permit2 for
// everything: what an agent does once before it pays by upto.
func (r *rig) approvePermit2(k *ecdsa.PrivateKey) {
	r.t.Helper()
	ctx := context.Background()
	wallet := crypto.PubkeyToAddress(k.PublicKey)
	faucet := settlement.Transactor{Backend: r.backend, Key: r.sim.FaucetKey, Mine: r.sim.Commit}
	if _, err := faucet.SendValue(ctx, &wallet, big.NewInt(1e17), nil); err != nil {
		r.t.Fatal(err)
	}
	maxUint := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
	buyer := settlement.Transactor{Backend: r.backend, Key: k, Mine: r.sim.Commit}
	if _, err := buyer.Send(ctx, &r.sim.Addresses.Token, bindings.NewTestUSD().PackApprove(settlement.Permit2Address, maxUint)); err != nil {
		r.t.Fatal(err)
	}
}

// officialClientDir is testdata/node, where the official client packages
// are installed, and node; the test is skipped without the packages.
func officialClientDir(t *testing.T) (dir, node string) {
	t.Helper()
	dir, _ = filepath.Abs(filepath.Join("testdata", "node"))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@x402", "fetch")); err != nil {
		t.Skip("skipping: x402/testdata/node/node_modules is absent; run `npm ci` in x402/testdata/node (.ci/run does) to enable the official client tests")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node_modules is installed but node is not on PATH")
	}
	return dir, node
}

// officialPay runs the official client (testdata/node/pay.mjs) for body,
// allowing it to pay at most max base units.
func officialPay(t *testing.T, r *rig, body string, max int64) (status int, resp *x402.SettlementResponse, p x402.Purchase) {
	t.Helper()
	return officialPayAt(t, r.url, r.buyer, r.sim.Addresses.Token.Hex(), body, max)
}

// officialPayAt is officialPay of a create at url by the wallet of key,
// paying in token.
func officialPayAt(t *testing.T, url string, key *ecdsa.PrivateKey, token, body string, max int64) (status int, resp *x402.SettlementResponse, p x402.Purchase) {
	t.Helper()
	dir, node := officialClientDir(t)
	cmd := exec.Command(node, "pay.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"X402_URL="+url,
		"X402_KEY="+hexutil.Encode(crypto.FromECDSA(key)),
		"X402_NETWORK=eip155:1337",
		"X402_ASSET="+token,
		"X402_MAX="+strconv.FormatInt(max, 10),
		"X402_BODY="+body,
	)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("node pay.mjs: %v\n%s\n%s", err, out, stderr)
	}
	var got struct {
		Status          int                      `json:"status"`
		PaymentResponse *x402.SettlementResponse `json:"paymentResponse"`
		Body            json.RawMessage          `json:"body"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.Status == http.StatusCreated {
		if err := json.Unmarshal(got.Body, &p); err != nil {
			t.Fatal(err)
		}
	} else {
		t.Logf("the official client got %d: %s", got.Status, got.Body)
	}
	return got.Status, got.PaymentResponse, p
}

// The official x402 client packages (@x402/fetch with @x402/evm's upto
// scheme, unmodified) buy outcome-priced work by upto on the simulated
// chain: a capped product (charged its cost plus markup, 480 of the 1000
// quoted), a success-fee product whose outcome fails (charged nothing:
// no transaction, the permit never used) and one whose outcome passes
// (charged the fee). Each charge read back from the chain equals the
// workflow's charge, the rest of each permit stays with the wallet, and
// the charge settles from the wallet's customer balance like any other.
func TestOfficialClientPaysUpto(t *testing.T) {
	r := newUptoRig(t, false)
	wallet := crypto.PubkeyToAddress(r.buyer.PublicKey)
	spent := int64(0)
	for _, c := range uptoCases {
		t.Run(c.name, func(t *testing.T) {
			body := uptoBody(c.product, c.name, c.resolve)
			req := r.offer(body)
			if req.Scheme != x402.SchemeUpto || req.Amount != strconv.Itoa(uptoQuote*10_000) || req.Extra["facilitatorAddress"] != r.collector.Hex() {
				t.Fatalf("offer %+v", req)
			}
			collectorBefore := r.balance(r.collector)
			status, resp, p := officialPay(t, r, body, uptoQuote*10_000)
			if status != http.StatusCreated || p.Workflow == nil {
				t.Fatalf("status %d", status)
			}
			wf := p.Workflow
			if wf.Status != settleflow.Settled || wf.CustomerID != x402.CustomerID(wallet) {
				t.Fatalf("the paid create waited for %s of %s, want Settled", wf.Status, wf.CustomerID)
			}
			if wf.Charged == nil || wf.Charged.Amount != c.charged {
				t.Fatalf("charged %+v, want %d", wf.Charged, c.charged)
			}
			if resp == nil || !resp.Success || resp.Amount != strconv.FormatInt(c.charged*10_000, 10) || resp.Payer != wallet.Hex() {
				t.Fatalf("PAYMENT-RESPONSE %+v, want the charge %d", resp, c.charged*10_000)
			}
			spent += c.charged * 10_000
			if b := r.balance(wallet); b != buyerFunds-spent {
				t.Fatalf("the wallet holds %d, want %d: only the charge is taken, the rest of the permit stays", b, buyerFunds-spent)
			}
			if b := r.balance(r.collector); b != collectorBefore {
				t.Fatalf("the collector holds %d, was %d: the payment must be deposited, not kept", b, collectorBefore)
			}
			if b := r.contractBalance(wf.CustomerID); b != 0 {
				t.Fatalf("the customer's balance is %d after the charge, want 0", b)
			}
			if c.charged == 0 {
				if resp.Transaction != "" || wf.Settlement != nil {
					t.Fatalf("a charge of 0 sent %q / %+v", resp.Transaction, wf.Settlement)
				}
				return
			}
			// The charge read back from the chain: the settle batch moved
			// the workflow's charge out of the customer's balance.
			if wf.Settlement == nil || !strings.EqualFold(resp.Transaction, wf.Settlement.TxHash) {
				t.Fatalf("settlement %+v, PAYMENT-RESPONSE transaction %q", wf.Settlement, resp.Transaction)
			}
			if got := r.chargedOnChain(wf.Settlement.TxHash, wf.CustomerID); got != c.charged*10_000 {
				t.Fatalf("the chain charged %d base units; the workflow's charge is %d cents", got, c.charged)
			}
		})
	}
	if n := r.workflows(x402.CustomerID(wallet)); n != 3 {
		t.Fatalf("%d workflows, want 3", n)
	}
}

// chargedOnChain is what a settle transaction charged a customer, read
// from the chain: the customer's balance in the contract at the block
// before the transaction's less at its block (the deposit that funded it
// was mined earlier).
func (r *rig) chargedOnChain(tx, customer string) int64 {
	r.t.Helper()
	ctx := context.Background()
	rcpt, err := r.backend.TransactionReceipt(ctx, common.HexToHash(tx))
	if err != nil {
		r.t.Fatal(err)
	}
	c, err := r.engine.Customer(ctx, settleflow.Test, customer)
	if err != nil {
		r.t.Fatal(err)
	}
	ref := common.HexToHash(c.Deposit.CustomerRef)
	abi := bindings.NewSettleflowSettlement()
	at := func(block *big.Int) int64 {
		out, err := r.backend.CallContract(ctx, ethereum.CallMsg{To: &r.sim.Addresses.Contract, Data: abi.PackBalanceOf(ref)}, block)
		if err != nil {
			r.t.Fatal(err)
		}
		v, err := abi.UnpackBalanceOf(out)
		if err != nil {
			r.t.Fatal(err)
		}
		return v.Int64()
	}
	before := new(big.Int).Sub(rcpt.BlockNumber, big.NewInt(1))
	return at(before) - at(rcpt.BlockNumber)
}
