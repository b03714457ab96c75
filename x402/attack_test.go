package x402_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"go.uber.org/zap/zaptest"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/settlement/contracts/bindings"
	"github.com/settleflow/settleflow/x402"
)

// newAttackRig is the rig on a simulated chain that makes a block every
// 150 ms, except while the test holds the returned mutex: then only the
// facilitator's own mining (and the rig's transactors') makes blocks, so a
// transaction the test put in the pool lands in the same block as the
// server's next one, ahead of it (a same-block race: a front-run or a
// drain the server's checks cannot see).
func newAttackRig(t *testing.T) (*rig, *sync.Mutex) {
	t.Helper()
	sim, err := settlement.NewSimulated(context.Background(), settlement.SimulatedOptions{Logger: zaptest.NewLogger(t), ManualCommit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	hold := &sync.Mutex{}
	startBlocks(t, sim, hold)
	r, err := finishRig(t, sim)
	if err != nil {
		t.Fatal(err)
	}
	return r, hold
}

// send is the rig's post, safe from any goroutine: a create with an
// optional PAYMENT-SIGNATURE, its answer read.
func (r *rig) send(body, payment string) (*answer, error) {
	req, _ := http.NewRequest("POST", r.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if payment != "" {
		req.Header.Set(x402.HeaderPaymentSignature, payment)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	a := &answer{status: res.StatusCode, header: res.Header}
	if a.body, err = io.ReadAll(res.Body); err != nil {
		return nil, err
	}
	if h := res.Header.Get(x402.HeaderPaymentRequired); h != "" {
		if a.required, err = x402.DecodePaymentRequired(h); err != nil {
			return nil, fmt.Errorf("PAYMENT-REQUIRED: %w", err)
		}
	}
	if h := res.Header.Get(x402.HeaderPaymentResponse); h != "" {
		if a.response, err = x402.DecodePaymentResponse(h); err != nil {
			return nil, fmt.Errorf("PAYMENT-RESPONSE: %w", err)
		}
	}
	if res.StatusCode == http.StatusCreated {
		if err := json.Unmarshal(a.body, &a.purchase); err != nil {
			return nil, err
		}
	} else {
		_ = json.Unmarshal(a.body, &a.err)
	}
	return a, nil
}

// code is the x402 or API error code of an answer: a 402's "code" (beside
// its PAYMENT-REQUIRED), or the error envelope's.
func (a *answer) code() string {
	if a.status == http.StatusPaymentRequired {
		var b struct {
			Code string `json:"code"`
		}
		_ = json.Unmarshal(a.body, &b)
		return b.Code
	}
	return a.err.Error.Code
}

// sendPooled signs and sends a transaction of key to `to` with a tip above
// the node's suggestion (so it is mined ahead of the server's in a shared
// block), and returns without waiting for it.
func (r *rig) sendPooled(key *ecdsa.PrivateKey, to common.Address, data []byte) common.Hash {
	r.t.Helper()
	ctx := context.Background()
	from := crypto.PubkeyToAddress(key.PublicKey)
	nonce, err := r.backend.PendingNonceAt(ctx, from)
	if err != nil {
		r.t.Fatal(err)
	}
	head, err := r.backend.HeaderByNumber(ctx, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	tip, err := r.backend.SuggestGasTipCap(ctx)
	if err != nil {
		r.t.Fatal(err)
	}
	tip = new(big.Int).Add(new(big.Int).Mul(tip, big.NewInt(10)), big.NewInt(1e9))
	feeCap := new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(2)), tip)
	gas, err := r.backend.EstimateGas(ctx, ethereum.CallMsg{From: from, To: &to, Data: data})
	if err != nil {
		r.t.Fatalf("estimate gas: %v", err)
	}
	id, _ := r.backend.ChainID(ctx)
	tx, err := types.SignNewTx(key, types.LatestSignerForChainID(id), &types.DynamicFeeTx{ChainID: id, Nonce: nonce,
		GasTipCap: tip, GasFeeCap: feeCap, Gas: gas * 2, To: &to, Data: data})
	if err != nil {
		r.t.Fatal(err)
	}
	if err := r.backend.SendTransaction(ctx, tx); err != nil {
		r.t.Fatal(err)
	}
	return tx.Hash()
}

// receiptOK waits for a transaction's receipt and fails the test unless it
// succeeded.
func (r *rig) receiptOK(h common.Hash) {
	r.t.Helper()
	tr := settlement.Transactor{Backend: r.backend, Mine: r.sim.Commit}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := tr.Wait(ctx, h); err != nil {
		r.t.Fatalf("transaction %s: %v", h, err)
	}
}

// call is a call of the rig's token (to nil) or contract at block at,
// unpacked as one uint256.
func (r *rig) call(to common.Address, data []byte, at *big.Int) *big.Int {
	r.t.Helper()
	out, err := r.backend.CallContract(context.Background(), ethereum.CallMsg{To: &to, Data: data}, at)
	if err != nil {
		r.t.Fatal(err)
	}
	if len(out) != 32 {
		r.t.Fatalf("a call of %s answered %d bytes", to, len(out))
	}
	return new(big.Int).SetBytes(out)
}

// tokensAt is an account's token balance at block at.
func (r *rig) tokensAt(who common.Address, at *big.Int) int64 {
	return r.call(r.sim.Addresses.Token, bindings.NewTestUSD().PackBalanceOf(who), at).Int64()
}

// contractAt is a customer's balance in the settlement contract, by its
// reference, at block at.
func (r *rig) contractAt(ref common.Hash, at *big.Int) int64 {
	return r.call(r.sim.Addresses.Contract, bindings.NewSettleflowSettlement().PackBalanceOf(ref), at).Int64()
}

// payeeOwedAt is what the contract owes its payee at block at.
func (r *rig) payeeOwedAt(at *big.Int) int64 {
	return r.call(r.sim.Addresses.Contract, bindings.NewSettleflowSettlement().PackPayeeOwed(), at).Int64()
}

// usedAt is whether the token marks a's nonce used at block at.
func (r *rig) usedAt(a *x402.ExactAuthorization, at *big.Int) bool {
	return r.call(r.sim.Addresses.Token, bindings.NewTestUSD().PackAuthorizationState(a.From, a.Nonce), at).Sign() != 0
}

// frontRun is the attacker submitting a's transferWithAuthorization to the
// token itself: the data of the call.
func frontRun(a *x402.ExactAuthorization) []byte {
	v, rr, s := a.VRS()
	return bindings.NewTestUSD().PackTransferWithAuthorization(a.From, a.To, a.Value, a.ValidAfter, a.ValidBefore, a.Nonce, v, rr, s)
}

// longAuthorization is authorization(req) valid for an hour: the
// simulated chain's clock runs ahead of the wall clock (a block a second of
// chain time every 150 ms), and the token checks validBefore against it.
func longAuthorization(req x402.PaymentRequirements) *x402.ExactAuthorization {
	a := authorization(req)
	a.ValidBefore = big.NewInt(time.Now().Add(time.Hour).Unix())
	return a
}

// tamper is an attacker's change to a valid PAYMENT-SIGNATURE, after the
// wallet signed it, and the refusal it must meet.
type tamper struct {
	name   string
	status int
	code   string
	apply  func(p *x402.PaymentPayload, e *x402.ExactPayload)
}

var attackerAddr = common.HexToAddress("0x000000000000000000000000000000000000a77c")

func tampers() []tamper {
	sig := func(e *x402.ExactPayload, f func(b []byte)) {
		b := common.FromHex(e.Signature)
		f(b)
		e.Signature = "0x" + common.Bytes2Hex(b)
	}
	num := func(s string, d int64) string {
		v, _ := new(big.Int).SetString(s, 10)
		return v.Add(v, big.NewInt(d)).String()
	}
	now := func() int64 { return time.Now().Unix() }
	return []tamper{
		{"accepted amount", 402, x402.CodeAmount, func(p *x402.PaymentPayload, e *x402.ExactPayload) { p.Accepted.Amount = num(p.Accepted.Amount, -1) }},
		{"accepted asset", 402, x402.CodeAsset, func(p *x402.PaymentPayload, e *x402.ExactPayload) { p.Accepted.Asset = attackerAddr.Hex() }},
		{"accepted network", 402, x402.CodeNetwork, func(p *x402.PaymentPayload, e *x402.ExactPayload) { p.Accepted.Network = "eip155:8453" }},
		{"accepted payTo", 402, x402.CodeRecipient, func(p *x402.PaymentPayload, e *x402.ExactPayload) { p.Accepted.PayTo = attackerAddr.Hex() }},
		{"accepted scheme", 402, x402.CodeScheme, func(p *x402.PaymentPayload, e *x402.ExactPayload) { p.Accepted.Scheme = "upto" }},
		{"accepted product", 402, x402.CodeResource, func(p *x402.PaymentPayload, e *x402.ExactPayload) {
			p.Accepted.Extra = map[string]string{"name": p.Accepted.Extra["name"], "version": p.Accepted.Extra["version"], "product": notForSale}
		}},
		{"accepted token name", 402, x402.CodeRequirements, func(p *x402.PaymentPayload, e *x402.ExactPayload) {
			p.Accepted.Extra = map[string]string{"name": "Other USD", "version": p.Accepted.Extra["version"], "product": p.Accepted.Extra["product"]}
		}},
		{"accepted maxTimeoutSeconds", 402, x402.CodeRequirements, func(p *x402.PaymentPayload, e *x402.ExactPayload) { p.Accepted.MaxTimeoutSeconds++ }},
		{"resource", 402, x402.CodeResource, func(p *x402.PaymentPayload, e *x402.ExactPayload) {
			p.Resource.URL = "https://elsewhere.example/x402/workflows"
		}},
		{"authorization value", 402, x402.CodeAmount, func(p *x402.PaymentPayload, e *x402.ExactPayload) {
			e.Authorization.Value = num(e.Authorization.Value, priceUnits)
		}},
		{"authorization to", 402, x402.CodeRecipient, func(p *x402.PaymentPayload, e *x402.ExactPayload) { e.Authorization.To = attackerAddr.Hex() }},
		{"authorization from", 402, x402.CodeSignature, func(p *x402.PaymentPayload, e *x402.ExactPayload) { e.Authorization.From = attackerAddr.Hex() }},
		{"validAfter earlier", 402, x402.CodeSignature, func(p *x402.PaymentPayload, e *x402.ExactPayload) {
			e.Authorization.ValidAfter = num(e.Authorization.ValidAfter, -1)
		}},
		{"validAfter in the future", 402, x402.CodeValidAfter, func(p *x402.PaymentPayload, e *x402.ExactPayload) {
			e.Authorization.ValidAfter = strconv.FormatInt(now()+600, 10)
		}},
		{"validBefore past", 402, x402.CodeValidBefore, func(p *x402.PaymentPayload, e *x402.ExactPayload) {
			e.Authorization.ValidBefore = strconv.FormatInt(now()-1, 10)
		}},
		{"validBefore later", 402, x402.CodeSignature, func(p *x402.PaymentPayload, e *x402.ExactPayload) {
			e.Authorization.ValidBefore = num(e.Authorization.ValidBefore, 3600)
		}},
		{"nonce", 402, x402.CodeSignature, func(p *x402.PaymentPayload, e *x402.ExactPayload) {
			var n [32]byte
			_, _ = rand.Read(n[:])
			e.Authorization.Nonce = "0x" + common.Bytes2Hex(n[:])
		}},
		{"signature r", 402, x402.CodeSignature, func(p *x402.PaymentPayload, e *x402.ExactPayload) { sig(e, func(b []byte) { b[7] ^= 0x5a }) }},
		{"signature s", 402, x402.CodeSignature, func(p *x402.PaymentPayload, e *x402.ExactPayload) { sig(e, func(b []byte) { b[40] ^= 0x01 }) }},
		{"signature v", 402, x402.CodeSignature, func(p *x402.PaymentPayload, e *x402.ExactPayload) { sig(e, func(b []byte) { b[64] ^= 27 ^ 28 }) }},
		{"signature cut short", 400, x402.CodeMalformed, func(p *x402.PaymentPayload, e *x402.ExactPayload) { e.Signature = e.Signature[:len(e.Signature)-2] }},
		{"version 1", 400, x402.CodeVersion, func(p *x402.PaymentPayload, e *x402.ExactPayload) { p.X402Version = 1 }},
	}
}

// tampered is header h with t applied.
func tampered(t *testing.T, h string, tm tamper) string {
	t.Helper()
	p, err := x402.DecodePaymentPayload(h)
	if err != nil {
		t.Fatal(err)
	}
	var e x402.ExactPayload
	if err := json.Unmarshal(p.Payload, &e); err != nil {
		t.Fatal(err)
	}
	tm.apply(p, &e)
	if p.Payload, err = json.Marshal(e); err != nil {
		t.Fatal(err)
	}
	out, err := x402.EncodeHeader(p)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// mistake is a wallet signing a payment that does not pay the offer.
type mistake struct {
	name string
	code string
	sign func(t *testing.T, key *ecdsa.PrivateKey, req x402.PaymentRequirements, a *x402.ExactAuthorization) string
}

func mistakes(r *rig) []mistake {
	signed := func(t *testing.T, key *ecdsa.PrivateKey, req x402.PaymentRequirements, a *x402.ExactAuthorization) string {
		return header(t, key, req, a, r.url)
	}
	return []mistake{
		{"a smaller value", x402.CodeAmount, func(t *testing.T, k *ecdsa.PrivateKey, req x402.PaymentRequirements, a *x402.ExactAuthorization) string {
			a.Value = big.NewInt(priceUnits - 1)
			return signed(t, k, req, a)
		}},
		{"a larger value", x402.CodeAmount, func(t *testing.T, k *ecdsa.PrivateKey, req x402.PaymentRequirements, a *x402.ExactAuthorization) string {
			a.Value = big.NewInt(priceUnits + 1)
			return signed(t, k, req, a)
		}},
		{"another payee", x402.CodeRecipient, func(t *testing.T, k *ecdsa.PrivateKey, req x402.PaymentRequirements, a *x402.ExactAuthorization) string {
			a.To = attackerAddr
			return signed(t, k, req, a)
		}},
		{"expiring within the margin", x402.CodeValidBefore, func(t *testing.T, k *ecdsa.PrivateKey, req x402.PaymentRequirements, a *x402.ExactAuthorization) string {
			a.ValidBefore = big.NewInt(time.Now().Unix() + 3)
			return signed(t, k, req, a)
		}},
		{"not valid yet", x402.CodeValidAfter, func(t *testing.T, k *ecdsa.PrivateKey, req x402.PaymentRequirements, a *x402.ExactAuthorization) string {
			a.ValidAfter = big.NewInt(time.Now().Unix() + 60)
			return signed(t, k, req, a)
		}},
		{"another chain's domain", x402.CodeSignature, func(t *testing.T, k *ecdsa.PrivateKey, req x402.PaymentRequirements, a *x402.ExactAuthorization) string {
			d := domain(req)
			d.ChainID = big.NewInt(8453)
			if err := a.Sign(k, d); err != nil {
				t.Fatal(err)
			}
			return headerOf(t, req, a, r.url)
		}},
		{"another token's domain", x402.CodeSignature, func(t *testing.T, k *ecdsa.PrivateKey, req x402.PaymentRequirements, a *x402.ExactAuthorization) string {
			d := domain(req)
			d.Contract = attackerAddr
			if err := a.Sign(k, d); err != nil {
				t.Fatal(err)
			}
			return headerOf(t, req, a, r.url)
		}},
	}
}

// attackWallet is a paying wallet and what the model says of it.
type attackWallet struct {
	key      *ecdsa.PrivateKey
	addr     common.Address
	customer string
	ref      common.Hash
	tokens   int64           // its token balance, base units
	paid     map[string]bool // its workflows
}

// paidCreate is a payment that created a workflow.
type paidCreate struct {
	w        *attackWallet
	auth     *x402.ExactAuthorization
	header   string
	body     string
	purchase x402.Purchase
}

// TestAttackerInvariant pays fixed-price workflows by exact from several
// wallets while an attacker interferes, in a random order (seed logged;
// X402_ATTACK_SEED replays one, X402_ATTACK_STEPS sets the number of
// steps): valid paid creates; replays of earlier payments (the same
// request: the same workflow; another payload or product: refused); a
// valid payment with one field changed after signing (amount, asset,
// network, payee, scheme, product, token domain, timeout, resource, value,
// recipient, payer, validAfter, validBefore, nonce, signature bytes,
// version), each refused with its code, after which the untouched payment
// still pays; payments the wallet signed wrong; one payment sent by
// several goroutines at once (the same request: one workflow; different
// payloads: one workflow, the rest refused); a wallet that drains its
// tokens between the 402 and the retry, mined before the retry or in the
// same block as the server's transfer; and the attacker submitting a
// wallet's authorization to the token itself, mined before the server
// sees it or in the same block ahead of the server's transfer. After every
// step: the contract holds exactly what it owes (the wallets' balances plus
// the payee's), which is the price of every workflow created; each
// wallet's tokens are its start less what its workflows were paid and
// what it drained; the collector holds nothing (a front-run payment is
// credited to its wallet and makes its workflow, charged once); each
// wallet has exactly the workflows its payments created; each
// authorization's nonce is used exactly when its transfer landed; no
// authorization answered two workflows. At the end every workflow settles
// at the price, read back from the chain, the balances are 0 and the
// payee is owed the price of each.
func TestAttackerInvariant(t *testing.T) {
	seed, steps := attackRun(t)
	rng := mrand.New(mrand.NewPCG(seed, 44))
	start := time.Now()
	ctx := context.Background()
	r, hold := newAttackRig(t)
	faucet := settlement.Transactor{Backend: r.backend, Key: r.sim.FaucetKey, Mine: r.sim.Commit}
	attackerKey, _ := crypto.GenerateKey()
	attacker := settlement.Transactor{Backend: r.backend, Key: attackerKey, Mine: r.sim.Commit}
	gas := func(who common.Address) {
		if _, err := faucet.SendValue(ctx, &who, big.NewInt(1e17), nil); err != nil {
			t.Fatal(err)
		}
	}
	gas(crypto.PubkeyToAddress(attackerKey.PublicKey))
	sinkKey, _ := crypto.GenerateKey()
	sink := crypto.PubkeyToAddress(sinkKey.PublicKey) // where drained tokens go
	const startFunds = 5 * priceUnits
	wallets := make([]*attackWallet, 3)
	for i := range wallets {
		key, _ := crypto.GenerateKey()
		w := &attackWallet{key: key, addr: crypto.PubkeyToAddress(key.PublicKey), paid: map[string]bool{}}
		w.customer = x402.CustomerID(w.addr)
		c, err := r.engine.Customer(ctx, settleflow.Test, w.customer)
		if err != nil {
			t.Fatal(err)
		}
		w.ref = common.HexToHash(c.Deposit.CustomerRef)
		r.fund(w.addr, startFunds)
		w.tokens = startFunds
		gas(w.addr) // to drain its tokens itself
		wallets[i] = w
	}
	var (
		paid     []*paidCreate
		byKey    = map[common.Hash]string{} // authorization key → its workflow
		byWF     = map[string]common.Hash{} // workflow → its authorization
		auths    []*x402.ExactAuthorization // every authorization signed
		usedWant = map[common.Hash]bool{}   // which the token must mark used
		stranded int64                      // front-run payments with the collector
		drained  int64                      // tokens the wallets sent the sink
		counts   = map[string]int{}
	)
	// check reads the chain at one block (the head: every step waited for
	// its transactions), so that a settle mined between two reads cannot
	// make the sums disagree.
	check := func(step string) {
		t.Helper()
		head, err := r.backend.BlockNumber(ctx)
		if err != nil {
			t.Fatal(err)
		}
		at := new(big.Int).SetUint64(head)
		var owedToWallets int64
		for _, w := range wallets {
			if got := r.tokensAt(w.addr, at); got != w.tokens {
				t.Fatalf("after %s: wallet %s holds %d, the model says %d", step, w.addr, got, w.tokens)
			}
			owedToWallets += r.contractAt(w.ref, at)
			if n := r.workflows(w.customer); n != len(w.paid) {
				t.Fatalf("after %s: wallet %s has %d workflows, its payments created %d", step, w.addr, n, len(w.paid))
			}
		}
		payee := r.payeeOwedAt(at)
		owed := owedToWallets + payee
		if held := r.tokensAt(r.sim.Addresses.Contract, at); held != owed || held != int64(len(paid))*priceUnits {
			t.Fatalf("after %s: the contract holds %d, owes %d (balances %d + payee %d); %d workflows paid %d",
				step, held, owed, owedToWallets, payee, len(paid), int64(len(paid))*priceUnits)
		}
		if got := r.tokensAt(r.collector, at); got != stranded {
			t.Fatalf("after %s: the collector holds %d, the front-run payments stranded there are %d", step, got, stranded)
		}
		if got := r.tokensAt(sink, at); got != drained {
			t.Fatalf("after %s: the sink holds %d, the wallets drained %d", step, got, drained)
		}
		for _, a := range auths {
			if used := r.usedAt(a, at); used != usedWant[a.Key()] {
				t.Fatalf("after %s: the nonce of %s's authorization %x is used=%v, the model says %v", step, a.From, a.Nonce[:4], used, usedWant[a.Key()])
			}
		}
	}
	// created records a 201 for a payment, checking no authorization
	// answers two workflows and no workflow two authorizations.
	created := func(what string, w *attackWallet, a *x402.ExactAuthorization, h, body string, got *answer) {
		t.Helper()
		if got.status != http.StatusCreated || got.purchase.Workflow == nil {
			t.Fatalf("%s: answered %d %s", what, got.status, got.body)
		}
		wf := got.purchase.Workflow
		if wf.CustomerID != w.customer || wf.Quoted.Amount != price {
			t.Fatalf("%s: workflow %+v", what, wf)
		}
		if got.response == nil || !got.response.Success || got.response.Payer != w.addr.Hex() || got.response.Amount != strconv.Itoa(priceUnits) {
			t.Fatalf("%s: PAYMENT-RESPONSE %+v", what, got.response)
		}
		k := a.Key()
		if prev, ok := byKey[k]; ok {
			if prev != wf.ID {
				t.Fatalf("%s: the authorization paid %s and now answers %s", what, prev, wf.ID)
			}
			return
		}
		if prev, ok := byWF[wf.ID]; ok && prev != k {
			t.Fatalf("%s: workflow %s answers two authorizations", what, wf.ID)
		}
		byKey[k], byWF[wf.ID] = wf.ID, k
		paid = append(paid, &paidCreate{w: w, auth: a, header: h, body: body, purchase: got.purchase})
		w.paid[wf.ID] = true
		w.tokens -= priceUnits
		usedWant[k] = true
	}
	post := func(body, h string) *answer {
		t.Helper()
		a, err := r.send(body, h)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	refused := func(what string, got *answer, status int, code string) {
		t.Helper()
		if got.status != status || got.code() != code {
			t.Fatalf("%s: answered %d %q %s, want %d %s", what, got.status, got.code(), got.body, status, code)
		}
		if status == http.StatusPaymentRequired && (got.required == nil || got.required.Error == "" || len(got.required.Accepts) != 1) {
			t.Fatalf("%s: a 402 without a PAYMENT-REQUIRED naming the reason: %s", what, got.body)
		}
		counts["refused "+code]++
	}
	// sign is a fresh payment of w for body: its offer (the 402), an
	// authorization valid for an hour, the header.
	sign := func(w *attackWallet, body string) (*x402.ExactAuthorization, string) {
		t.Helper()
		req := r.offer(body)
		a := longAuthorization(req)
		h := header(t, w.key, req, a, r.url)
		auths = append(auths, a)
		return a, h
	}
	// pay sends a fresh payment's header and expects a workflow, or a 402
	// insufficient_funds if the wallet cannot pay.
	pay := func(what string, w *attackWallet, a *x402.ExactAuthorization, h, body string) {
		t.Helper()
		got := post(body, h)
		if w.tokens < priceUnits {
			refused(what+" without the funds", got, http.StatusPaymentRequired, x402.CodeInsufficientFunds)
			return
		}
		created(what, w, a, h, body, got)
	}
	refill := func(w *attackWallet, units int64) {
		r.fund(w.addr, units)
		w.tokens += units
	}
	bodyOf := func(step int, i int) string {
		return fmt.Sprintf(`{"product": %q, "payload": {"text": "step %d.%d"}}`, product, step, i)
	}
	tms, mss := tampers(), mistakes(r)

	// The operations and their weights: the first steps run each once,
	// in a random order; the rest are drawn by weight.
	ops := []struct {
		name   string
		weight int
	}{
		{"pay", 8}, {"replay, same request", 2}, {"replay, another payload", 1}, {"replay, another product", 1},
		{"tampered", 6}, {"signed wrong", 2}, {"concurrent, same request", 1}, {"concurrent, different payloads", 1},
		{"drained before the retry", 2}, {"drained in the server's block", 2}, {"front-run, mined before", 2},
		{"front-run, same block", 2}, {"refill", 2},
	}
	first, total, ran := rng.Perm(len(ops)), 0, map[string]int{}
	for _, o := range ops {
		total += o.weight
	}
	pick := func(step int) string {
		if step < len(ops) {
			return ops[first[step]].name
		}
		n := rng.IntN(total)
		for _, o := range ops {
			if n < o.weight {
				return o.name
			}
			n -= o.weight
		}
		panic("unreachable")
	}

	check("start")
	// Every tampering and every wrong signature once; later steps draw
	// them at random.
	for i, tm := range tms {
		w, body := wallets[i%len(wallets)], bodyOf(-1, i)
		_, h := sign(w, body)
		refused("tampered: "+tm.name, post(body, tampered(t, h, tm)), tm.status, tm.code)
	}
	for i, m := range mss {
		w, body := wallets[i%len(wallets)], bodyOf(-2, i)
		req := r.offer(body)
		a := longAuthorization(req)
		auths = append(auths, a)
		refused("signed wrong: "+m.name, post(body, m.sign(t, w.key, req, a)), http.StatusPaymentRequired, m.code)
	}
	check("every tampering and every wrong signature")
	for step := range steps {
		w := wallets[rng.IntN(len(wallets))]
		body := bodyOf(step, 0)
		op := pick(step)
		what := op
		switch op {
		case "pay": // a valid paid create
			a, h := sign(w, body)
			pay("a paid create", w, a, h, body)
		case "replay, same request", "replay, another payload", "replay, another product":
			// a replay of an earlier payment: the same request answers its
			// workflow; another payload or product is refused
			if len(paid) == 0 {
				a, h := sign(w, body)
				pay("a paid create to replay", w, a, h, body)
				if len(paid) == 0 {
					continue
				}
				body = bodyOf(step, 1)
			}
			p := paid[rng.IntN(len(paid))]
			switch op {
			case "replay, same request":
				got := post(p.body, p.header)
				if got.status != http.StatusCreated || got.purchase.Workflow.ID != p.purchase.Workflow.ID || got.header.Get("Idempotent-Replayed") != "true" {
					t.Fatalf("step %d: a replay of %s's payment answered %d %s", step, p.purchase.Workflow.ID, got.status, got.body)
				}
				created(what, p.w, p.auth, p.header, p.body, got)
			case "replay, another payload":
				refused(what, post(body, p.header), http.StatusPaymentRequired, x402.CodeNonceUsed)
			default:
				other := fmt.Sprintf(`{"product": %q, "payload": {"text": "step %d"}}`, notForSale, step)
				refused(what, post(other, p.header), http.StatusNotFound, "product_not_found")
			}
		case "tampered": // a valid payment altered after signing; the
			// original still pays afterwards
			tm := tms[rng.IntN(len(tms))]
			what = "tampered: " + tm.name
			a, h := sign(w, body)
			refused(what, post(body, tampered(t, h, tm)), tm.status, tm.code)
			check(fmt.Sprintf("step %d (%s)", step, what))
			if rng.IntN(2) == 0 {
				pay("the original after "+what, w, a, h, body)
			}
		case "signed wrong": // the wallet signs a payment that does not pay
			m := mss[rng.IntN(len(mss))]
			what = "signed wrong: " + m.name
			req := r.offer(body)
			a := longAuthorization(req)
			auths = append(auths, a)
			refused(what, post(body, m.sign(t, w.key, req, a)), http.StatusPaymentRequired, m.code)
		case "concurrent, same request", "concurrent, different payloads":
			// one payment sent by several goroutines at once
			n := 2 + rng.IntN(4)
			same := op == "concurrent, same request"
			a, h := sign(w, body)
			answers := make([]*answer, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				b := body
				if !same {
					b = bodyOf(step, i)
				}
				wg.Go(func() { answers[i], errs[i] = r.send(b, h) })
			}
			wg.Wait()
			var ok []int
			for i, got := range answers {
				if errs[i] != nil {
					t.Fatal(errs[i])
				}
				if got.status == http.StatusCreated {
					ok = append(ok, i)
				}
			}
			switch {
			case w.tokens < priceUnits:
				for _, got := range answers {
					refused(what+" without the funds", got, http.StatusPaymentRequired, x402.CodeInsufficientFunds)
				}
			case same:
				if len(ok) != n {
					t.Fatalf("step %d: %d of %d concurrent uses of one payment for one request created", step, len(ok), n)
				}
				for _, i := range ok {
					created(what, w, a, h, body, answers[i])
				}
			default:
				if len(ok) != 1 {
					t.Fatalf("step %d: %d of %d concurrent uses of one payment for different payloads created a workflow, want 1", step, len(ok), n)
				}
				created(what, w, a, h, bodyOf(step, ok[0]), answers[ok[0]])
				for i, got := range answers {
					if i != ok[0] {
						refused(what, got, http.StatusPaymentRequired, x402.CodeNonceUsed)
					}
				}
			}
			counts[fmt.Sprintf("concurrent x%d", n)]++
		case "drained before the retry", "drained in the server's block":
			// the wallet drains its tokens between the 402 and the retry:
			// mined before it, or in the same block as the server's
			// transfer, ahead of it
			if w.tokens < priceUnits {
				refill(w, priceUnits)
			}
			a, h := sign(w, body)
			amount := w.tokens
			data := bindings.NewTestUSD().PackTransfer(sink, big.NewInt(amount))
			if op == "drained before the retry" {
				if _, err := (settlement.Transactor{Backend: r.backend, Key: w.key, Mine: r.sim.Commit}).Send(ctx, &r.sim.Addresses.Token, data); err != nil {
					t.Fatal(err)
				}
				w.tokens, drained = 0, drained+amount
				refused(what, post(body, h), http.StatusPaymentRequired, x402.CodeInsufficientFunds)
			} else {
				hold.Lock()
				tx := r.sendPooled(w.key, r.sim.Addresses.Token, data)
				got := post(body, h)
				hold.Unlock()
				r.receiptOK(tx)
				w.tokens, drained = 0, drained+amount
				// The server saw the funds, sent its transfer, and the
				// chain reverted it behind the drain: nothing moved. It
				// answers 502 (sent, not confirmed; retry) and the retry
				// 402 insufficient_funds.
				if got.status == http.StatusBadGateway && got.code() == "transfer_unconfirmed" {
					counts["drain race answered 502, then"]++
					got = post(body, h)
				}
				refused(what, got, http.StatusPaymentRequired, x402.CodeInsufficientFunds)
			}
			check(fmt.Sprintf("step %d (%s)", step, what))
			// Funded again, the same payment pays: it was never used.
			refill(w, int64(2+rng.IntN(3))*priceUnits)
			if rng.IntN(2) == 0 {
				pay("the payment after the drain, funded again", w, a, h, body)
			}
		case "front-run, mined before", "front-run, same block":
			// the attacker submits the wallet's authorization to the token
			// before the server does
			if w.tokens < priceUnits {
				refill(w, priceUnits)
			}
			a, h := sign(w, body)
			if op == "front-run, mined before" {
				if _, err := attacker.Send(ctx, &r.sim.Addresses.Token, frontRun(a)); err != nil {
					t.Fatalf("the attacker's front-run: %v", err)
				}
				// The transfer paid the collector: the buyer's request
				// credits it to the wallet's balance (once) and creates the
				// workflow, charged once.
				created(what, w, a, h, body, post(body, h))
			} else {
				hold.Lock()
				tx := r.sendPooled(attackerKey, r.sim.Addresses.Token, frontRun(a))
				got := post(body, h)
				hold.Unlock()
				r.receiptOK(tx)
				if got.status == http.StatusBadGateway && got.code() == "transfer_unconfirmed" {
					counts["front-run race answered 502, then"]++
					got = post(body, h)
				}
				created(what, w, a, h, body, got)
			}
			counts["front-run recovered"]++
			if rng.IntN(2) == 0 { // and again: the same workflow
				created(what+", again", w, a, h, body, post(body, h))
			}
		default: // refill
			refill(w, int64(1+rng.IntN(3))*priceUnits)
		}
		counts[what]++
		ran[op]++
		check(fmt.Sprintf("step %d (%s)", step, what))
		t.Logf("step %d: %s, wallet %s", step, what, w.addr)
	}

	// Every workflow runs and settles at the price; the chain recorded each
	// charge against its wallet's balance; the balances are spent and the
	// payee is owed the price of each.
	for _, p := range paid {
		wf := r.waitSettled(p.purchase)
		if wf.Charged == nil || wf.Charged.Amount != price {
			t.Fatalf("workflow %s charged %+v, want %d", wf.ID, wf.Charged, price)
		}
		if cents := r.settledCents(wf, p.w.customer); cents != price {
			t.Fatalf("the contract settled %d cents for %s, want %d", cents, wf.ID, price)
		}
	}
	check("the end")
	for _, w := range wallets {
		if b := r.contractAt(w.ref, nil); b != 0 {
			t.Fatalf("wallet %s's balance holds %d after its workflows settled", w.addr, b)
		}
		listed, err := r.engine.List(ctx, settleflow.ListParams{Environment: settleflow.Test, CustomerID: w.customer, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]string, 0, len(listed.Data))
		for _, wf := range listed.Data {
			ids = append(ids, wf.ID)
			if !w.paid[wf.ID] {
				t.Fatalf("wallet %s has workflow %s that no payment of it created", w.addr, wf.ID)
			}
		}
		slices.Sort(ids)
		if len(ids) != len(w.paid) {
			t.Fatalf("wallet %s has workflows %v, its payments created %d", w.addr, ids, len(w.paid))
		}
	}
	for _, o := range ops {
		if steps >= len(ops) && ran[o.name] == 0 {
			t.Errorf("the sequence never ran %q", o.name)
		}
	}
	if owed := r.payeeOwed(); owed != int64(len(paid))*priceUnits {
		t.Fatalf("the payee is owed %d, want %d for %d workflows", owed, int64(len(paid))*priceUnits, len(paid))
	}
	names := make([]string, 0, len(counts))
	for k := range counts {
		names = append(names, k)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, k := range names {
		fmt.Fprintf(&b, "\n  %-60s %d", k, counts[k])
	}
	t.Logf("seed %d: %d steps in %s: %d workflows paid and settled, %d authorizations signed, %d base units stranded with the collector by front-runs, %d drained; steps and refusals:%s",
		seed, steps, time.Since(start).Round(time.Millisecond), len(paid), len(auths), stranded, drained, b.String())
}

// attackRun is a randomized attacker test's seed and number of steps: a
// new seed each run, logged; X402_ATTACK_SEED replays one,
// X402_ATTACK_STEPS sets the steps (40).
func attackRun(t *testing.T) (seed uint64, steps int) {
	t.Helper()
	seed, steps = uint64(time.Now().UnixNano()), 40
	if s := os.Getenv("X402_ATTACK_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("X402_ATTACK_SEED=%q: %v", s, err)
		}
		seed = v
	}
	if s := os.Getenv("X402_ATTACK_STEPS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("X402_ATTACK_STEPS=%q: want a positive integer", s)
		}
		steps = v
	}
	t.Logf("seed %d (X402_ATTACK_SEED=%d replays it), %d steps", seed, seed, steps)
	return seed, steps
}
