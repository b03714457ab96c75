package x402_test

import (
	"context"
	"crypto/ecdsa"
	"math/big"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/settlement/contracts/bindings"
	"github.com/settleflow/settleflow/x402"
)

// An attacker and three wallets buy outcome-priced work by upto in a
// random order (seeded: X402_ATTACK_SEED replays a run, X402_ATTACK_STEPS
// sets its steps): valid purchases of both products with passing and
// failing outcomes, replays of a permit for the same and for another
// request (also once its wallet was spent below the permit's maximum),
// permits with a field altered, concurrent double use of one permit, a
// wallet that empties itself between the 402 and the paid request, and
// the attacker calling the proxy and Permit2 directly with a victim's
// permit. After every step:
// the settlement contract holds exactly what it owes (the wallets'
// balances and the payee's due), Permit2, the proxy and the collector
// hold nothing, every wallet holds what it started with less what its
// settled workflows were charged (and what it gave away), and no permit
// paid for two workflows.
func TestUptoAttackerInvariant(t *testing.T) {
	seed, steps := attackRun(t)
	rnd := rand.New(rand.NewPCG(seed, seed^0x402))
	r := newUptoRig(t, true)
	ctx := context.Background()

	type wallet struct {
		key      *ecdsa.PrivateKey
		addr     common.Address
		expected int64 // tokens it should hold
	}
	wallets := []*wallet{{key: r.buyer, addr: crypto.PubkeyToAddress(r.buyer.PublicKey), expected: buyerFunds}}
	for range 2 {
		k, _ := crypto.GenerateKey()
		r.approvePermit2(k)
		r.fund(crypto.PubkeyToAddress(k.PublicKey), buyerFunds)
		wallets = append(wallets, &wallet{key: k, addr: crypto.PubkeyToAddress(k.PublicKey), expected: buyerFunds})
	}
	attackerKey, _ := crypto.GenerateKey()
	attacker := crypto.PubkeyToAddress(attackerKey.PublicKey)
	faucet := settlement.Transactor{Backend: r.backend, Key: r.sim.FaucetKey, Mine: r.sim.Commit}
	if _, err := faucet.SendValue(ctx, &attacker, big.NewInt(1e17), nil); err != nil {
		t.Fatal(err)
	}
	workflowOf := map[string]string{} // permit key → workflow id
	type purchase struct {
		w                 *wallet
		body, header, key string
		most              int64 // the permit's maximum, in base units
	}
	var sent []purchase
	belowMost := 0                // replays made once the wallet held less than the permit's maximum
	charged := map[string]int64{} // workflow id → cents charged (Settled)

	check := func(step string) {
		t.Helper()
		held := r.balance(r.sim.Addresses.Contract)
		owed := int64(0)
		for _, w := range wallets {
			owed += r.contractBalance(x402.CustomerID(w.addr))
		}
		owed += r.payeeOwed()
		if held != owed {
			t.Fatalf("after %s: the contract holds %d and owes %d", step, held, owed)
		}
		for name, a := range map[string]common.Address{"Permit2": settlement.Permit2Address, "the proxy": settlement.UptoProxyAddress, "the collector": r.collector} {
			if b := r.balance(a); b != 0 {
				t.Fatalf("after %s: %s holds %d", step, name, b)
			}
		}
		for i, w := range wallets {
			if b := r.balance(w.addr); b != w.expected {
				t.Fatalf("after %s: wallet %d holds %d, want %d", step, i, b, w.expected)
			}
		}
		if b := r.balance(attacker); b != 0 {
			t.Fatalf("after %s: the attacker holds %d", step, b)
		}
	}
	// buy makes a paid create and accounts for its outcome.
	buy := func(w *wallet, body string, h string, key string) *answer {
		got := r.post(body, h)
		if got.status != http.StatusCreated {
			return got
		}
		wf := got.purchase.Workflow
		if prev, ok := workflowOf[key]; ok && prev != wf.ID {
			t.Fatalf("permit %s paid workflows %s and %s", key, prev, wf.ID)
		}
		if _, seen := charged[wf.ID]; !seen && wf.Status == settleflow.Settled {
			charged[wf.ID] = wf.Charged.Amount
			w.expected -= wf.Charged.Amount * 10_000
		}
		workflowOf[key] = wf.ID
		return got
	}
	newPermit := func(w *wallet) (string, x402.PaymentRequirements, *x402.UptoAuthorization, string) {
		product := cappedProduct
		if rnd.IntN(2) == 0 {
			product = feeProduct
		}
		body := uptoBody(product, "attack "+strconv.Itoa(rnd.IntN(1000)), rnd.IntN(2) == 0)
		req := r.offer(body)
		// A wallet its purchases spent below the maximum is topped up
		// before a new permit: the paid create needs the maximum held (that
		// refusal is TestUptoRefusals'). Earlier permits may still be
		// replayed from below it.
		if most, _ := strconv.ParseInt(req.Amount, 10, 64); w.expected < most {
			r.fund(w.addr, buyerFunds)
			w.expected += buyerFunds
		}
		a := permit(req)
		return body, req, a, uptoHeader(t, w.key, req, a)
	}

	for i := range steps {
		w := wallets[rnd.IntN(len(wallets))]
		switch op := rnd.IntN(7); op {
		case 0, 1: // a purchase, and sometimes its replay and a reuse
			body, _, a, h := newPermit(w)
			if got := buy(w, body, h, a.Key().Hex()); got.status != http.StatusCreated {
				t.Fatalf("step %d: purchase: %d %s", i, got.status, got.body)
			}
			sent = append(sent, purchase{w, body, h, a.Key().Hex(), a.Max.Int64()})
			if rnd.IntN(2) == 0 {
				if got := buy(w, body, h, a.Key().Hex()); got.status != http.StatusCreated || got.header.Get("Idempotent-Replayed") != "true" {
					t.Fatalf("step %d: replay: %d %s", i, got.status, got.body)
				}
			}
			if rnd.IntN(2) == 0 {
				if got := r.post(uptoBody(feeProduct, "reuse", true), h); got.status != http.StatusPaymentRequired {
					t.Fatalf("step %d: reuse for another request: %d %s", i, got.status, got.body)
				}
			}
		case 2: // a field altered after signing, or signed wrong
			body, req, a, _ := newPermit(w)
			field := rnd.IntN(6)
			switch field {
			case 0:
				a.Max = new(big.Int).Add(a.Max, big.NewInt(1))
			case 1:
				a.To = attacker
			case 2:
				a.Facilitator = attacker
			case 3:
				a.Deadline = big.NewInt(time.Now().Unix() + 1)
			case 4:
				a.Token = attacker
			case 5:
				a.Nonce = new(big.Int).Add(a.Nonce, big.NewInt(1))
			}
			if field != 5 && rnd.IntN(2) == 0 { // re-signed: still not this offer's (a new nonce re-signed is a new, valid permit)
				if err := a.Sign(w.key, big.NewInt(1337)); err != nil {
					t.Fatal(err)
				}
			}
			if got := r.post(body, uptoHeaderOf(t, req, a)); got.status != http.StatusPaymentRequired && got.status != http.StatusBadRequest {
				t.Fatalf("step %d: an altered permit answered %d %s", i, got.status, got.body)
			}
		case 3: // concurrent double use
			body, _, a, h := newPermit(w)
			var mu sync.Mutex
			ids := map[string]bool{}
			var wg sync.WaitGroup
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					got := r.post(body, h)
					if got.status == http.StatusCreated {
						mu.Lock()
						ids[got.purchase.Workflow.ID] = true
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			if len(ids) != 1 {
				t.Fatalf("step %d: concurrent uses of one permit made %v", i, ids)
			}
			buy(w, body, h, a.Key().Hex()) // a replay: accounts for the charge
		case 4: // the wallet empties itself between the 402 and the paid request
			body, _, _, h := newPermit(w)
			all := r.balance(w.addr)
			r.spend(w.key, all)
			w.expected -= all
			if got := r.post(body, h); got.status != http.StatusPaymentRequired {
				t.Fatalf("step %d: a drained wallet's purchase: %d %s", i, got.status, got.body)
			}
			check("a drained wallet's purchase")
			r.fund(w.addr, buyerFunds) // back in business
			w.expected += buyerFunds
		case 5: // the attacker settles a victim's permit through the proxy
			_, req, a, _ := newPermit(w)
			if err := a.Sign(w.key, big.NewInt(1337)); err != nil {
				t.Fatal(err)
			}
			proxy := settlement.UptoProxyAddress
			data := bindings.NewUptoPermit2Proxy().PackSettle(bindings.ISignatureTransferPermitTransferFrom{
				Permitted: bindings.ISignatureTransferTokenPermissions{Token: a.Token, Amount: a.Max}, Nonce: a.Nonce, Deadline: a.Deadline,
			}, a.Max, a.From, bindings.UptoPermit2ProxyWitness{To: attacker, Facilitator: attacker, ValidAfter: a.ValidAfter}, a.Signature)
			if _, err := r.backend.CallContract(ctx, ethereum.CallMsg{From: attacker, To: &proxy, Data: data}, nil); err == nil {
				t.Fatalf("step %d: the proxy let the attacker redirect a permit of %s", i, req.Amount)
			}
			data = bindings.NewUptoPermit2Proxy().PackSettle(bindings.ISignatureTransferPermitTransferFrom{
				Permitted: bindings.ISignatureTransferTokenPermissions{Token: a.Token, Amount: a.Max}, Nonce: a.Nonce, Deadline: a.Deadline,
			}, a.Max, a.From, bindings.UptoPermit2ProxyWitness{To: a.To, Facilitator: a.Facilitator, ValidAfter: a.ValidAfter}, a.Signature)
			if _, err := r.backend.CallContract(ctx, ethereum.CallMsg{From: attacker, To: &proxy, Data: data}, nil); err == nil {
				t.Fatalf("step %d: the proxy let the attacker settle a permit it does not facilitate", i)
			}
		case 6: // anyone replays an earlier purchase's header
			if len(sent) == 0 {
				break
			}
			p := sent[rnd.IntN(len(sent))]
			before := len(workflowOf)
			if rnd.IntN(2) == 0 && p.w.expected >= p.most { // the wallet spends itself below the permit's maximum first
				spend := p.w.expected - p.most + 1
				r.spend(p.w.key, spend)
				p.w.expected -= spend
			}
			if p.w.expected < p.most {
				belowMost++
			}
			if got := buy(p.w, p.body, p.header, p.key); got.status != http.StatusCreated || got.purchase.Workflow.ID != workflowOf[p.key] {
				t.Fatalf("step %d: an earlier purchase again: %d %s", i, got.status, got.body)
			}
			if got := r.post(uptoBody(cappedProduct, "stolen", true), p.header); got.status != http.StatusPaymentRequired {
				t.Fatalf("step %d: an earlier permit for another request: %d %s", i, got.status, got.body)
			}
			if len(workflowOf) != before {
				t.Fatalf("step %d: a replay made a workflow", i)
			}
		}
		check("step " + strconv.Itoa(i))
	}
	if len(workflowOf) == 0 {
		t.Fatal("no purchase was made: the run proves nothing")
	}
	t.Logf("%d steps, %d workflows paid by permits, %d charged more than 0, %d replays from below a permit's maximum", steps, len(workflowOf), func() int {
		n := 0
		for _, c := range charged {
			if c > 0 {
				n++
			}
		}
		return n
	}(), belowMost)
}
