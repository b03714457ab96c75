package settlement

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// TestAttackerInvariant runs customers' owners, the operator, the payee and
// an attacker against the contract in a random order: deposits (approve and
// deposit, and signed authorizations relayed by the attacker), squats
// (deposits naming the attacker, setOwner, changeOwner and owner-change
// calls from the attacker), hostile withdrawal amounts, donations sent
// straight to the contract, settles with declines and repeats, refunds
// (some past their charge, some before the payee can cover them), claims,
// the attacker's calls of every operator and payee function, and owners
// who spend other customers' grant nonces (changeOwner on their own
// balance under the nonce of a grant they saw) before the operator sends
// that grant, which must still set its owner. After
// every step: the tokens the contract holds equal its customers' balances
// plus what the payee is owed plus what was donated; every balance is what
// a model of the rules says; and the attacker's tokens never grow (no token
// leaves a balance except to its owner, as a charge, or back as a refund).
func TestAttackerInvariant(t *testing.T) {
	ctx := context.Background()
	s := newSim(t, SimulatedOptions{ManualCommit: true, WithdrawalNotice: time.Second})
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 37))
	op := Transactor{Backend: s.Backend.Client(), Key: s.OperatorKey, Mine: s.Commit}
	payee := Transactor{Backend: s.Backend.Client(), Key: s.PayeeKey, Mine: s.Commit}
	faucet := Transactor{Backend: s.Backend.Client(), Key: s.FaucetKey, Mine: s.Commit}
	attackerKey, attacker := fundAccount(t, s, 50_000)
	attackerAddr := crypto.PubkeyToAddress(attackerKey.PublicKey)
	attackerRef := refOf(s, "cus_attacker")

	const n = 3
	type cust struct {
		id    string
		ref   [32]byte
		key   *ecdsa.PrivateKey
		owner common.Address
		tr    Transactor
	}
	cs := make([]*cust, n)
	model := map[[32]byte]int64{} // balances, cents
	for _, id := range testCustomers {
		model[refOf(s, id)] = 100_000_000
	}
	for i := range cs {
		key, tr := fundAccount(t, s, 1_000_000)
		c := &cust{id: fmt.Sprintf("cus_atk_%d", i), key: key, tr: tr, owner: crypto.PubkeyToAddress(key.PublicKey)}
		c.ref = refOf(s, c.id)
		if _, err := op.Send(ctx, &s.Addresses.Contract, packGrant(t, c.ref, newGrant(t, s, key, c.id), false)); err != nil {
			t.Fatal(err)
		}
		cs[i] = c
		model[c.ref] = 0
	}
	model[attackerRef] = 0
	tokens := func(who common.Address) int64 {
		v := balance(t, s.Backend.Client(), s.Addresses.Token, who)
		return new(big.Int).Quo(v, cents(1)).Int64()
	}
	ownerTokens := map[common.Address]int64{}
	for _, c := range cs {
		ownerTokens[c.owner] = tokens(c.owner)
	}
	attackerTokens := tokens(attackerAddr)
	var owed, donated int64
	charges := map[uint64]struct {
		ref [32]byte
		c   int64
	}{}
	refunded := map[uint64]int64{}
	final := map[string]bool{} // refund keys applied or rejected for good
	wasDeclined := map[uint64]bool{}
	var settles []*settleTx
	seq := uint64(50_000)
	counts := map[string]int{}

	check := func(step string) {
		t.Helper()
		sum := new(big.Int)
		for ref, want := range model {
			got := new(big.Int)
			if out, err := s.Backend.Client().CallContract(ctx, ethereum.CallMsg{To: &s.Addresses.Contract, Data: settlementABI.PackBalanceOf(ref)}, nil); err == nil {
				got, _ = settlementABI.UnpackBalanceOf(out)
			}
			if got.Cmp(cents(want)) != 0 {
				t.Fatalf("after %s: a balance is %s, the model says %d cents", step, got, want)
			}
			sum.Add(sum, got)
		}
		p := payeeOwed(t, s)
		if p.Cmp(cents(owed)) != 0 {
			t.Fatalf("after %s: the payee is owed %s, the model says %d cents", step, p, owed)
		}
		want := new(big.Int).Add(sum, p)
		want.Add(want, cents(donated))
		if held := balance(t, s.Backend.Client(), s.Addresses.Token, s.Addresses.Contract); held.Cmp(want) != 0 {
			t.Fatalf("after %s: the contract holds %s; balances + owed + donations are %s", step, held, want)
		}
		if got := tokens(attackerAddr); got != attackerTokens {
			t.Fatalf("after %s: the attacker holds %d cents of tokens, the model says %d", step, got, attackerTokens)
		}
		for _, c := range cs {
			if got := tokens(c.owner); got != ownerTokens[c.owner] {
				t.Fatalf("after %s: owner %s holds %d cents, the model says %d", step, c.owner, got, ownerTokens[c.owner])
			}
		}
	}
	// refused sends a call that must revert, and counts it.
	refused := func(what string, tr Transactor, data []byte) {
		t.Helper()
		if _, err := tr.Send(ctx, &s.Addresses.Contract, data); err == nil {
			t.Fatalf("%s was accepted", what)
		}
		counts["refused"]++
	}
	check("start")
	for step := range 250 {
		c := cs[rng.IntN(n)]
		var what string
		switch k := rng.IntN(17); k {
		case 0: // the owner deposits (approve and deposit), naming itself
			what = "deposit"
			amt := int64(1 + rng.IntN(20_000))
			if _, err := c.tr.Send(ctx, &s.Addresses.Contract, settlementABI.PackDeposit(c.ref, c.owner, cents(amt))); err != nil {
				t.Fatal(err)
			}
			model[c.ref] += amt
			ownerTokens[c.owner] -= amt
		case 1: // a signed authorization, relayed by the attacker: it can
			// only deliver it as signed
			what = "authorization relayed"
			amt := int64(1 + rng.IntN(20_000))
			var salt [32]byte
			binary64(salt[:], uint64(step))
			sig := authorize(t, s, c.key, cents(amt), c.ref, c.owner, salt)
			relay := func(ref [32]byte, owner common.Address) []byte {
				return settlementABI.PackDepositWithAuthorization(ref, owner, c.owner, cents(amt), big.NewInt(0), big.NewInt(1<<40), salt,
					sig[64]+27, [32]byte(sig[:32]), [32]byte(sig[32:64]))
			}
			refused("an authorization redirected to the attacker's balance", attacker, relay(attackerRef, c.owner))
			refused("an authorization naming the attacker as owner", attacker, relay(c.ref, attackerAddr))
			if _, err := attacker.Send(ctx, &s.Addresses.Contract, relay(c.ref, c.owner)); err != nil {
				t.Fatal(err)
			}
			model[c.ref] += amt
			ownerTokens[c.owner] -= amt
		case 2: // squats
			what = "squat"
			refused("a deposit naming the attacker as owner", attacker, settlementABI.PackDeposit(c.ref, attackerAddr, cents(1)))
			fresh := refOf(s, fmt.Sprintf("cus_fresh_%d", step))
			refused("a first deposit naming the attacker", attacker, settlementABI.PackDeposit(fresh, attackerAddr, cents(1)))
			refused("setOwner by the attacker", attacker, packGrant(t, c.ref, newGrant(t, s, attackerKey, c.id), false))
			refused("changeOwner by the attacker", attacker, packGrant(t, c.ref, newGrant(t, s, attackerKey, c.id), true))
			refused("completeOwnerChange with none proposed", attacker, settlementABI.PackCompleteOwnerChange(c.ref))
			refused("cancelOwnerChange by the attacker", attacker, settlementABI.PackCancelOwnerChange(c.ref))
		case 3: // the attacker deposits to a balance of its own (no owner:
			// it names none) and cannot take it back
			what = "attacker deposit"
			amt := int64(1 + rng.IntN(100))
			if _, err := attacker.Send(ctx, &s.Addresses.Contract, settlementABI.PackDeposit(attackerRef, common.Address{}, cents(amt))); err != nil {
				t.Fatal(err)
			}
			model[attackerRef] += amt
			attackerTokens -= amt
			refused("a withdrawal of a balance with no owner", attacker, settlementABI.PackRequestWithdrawal(attackerRef, cents(1)))
		case 4: // the attacker takes from a victim's balance, every way
			what = "theft"
			refused("requestWithdrawal by the attacker", attacker, settlementABI.PackRequestWithdrawal(c.ref, cents(1)))
			refused("withdraw by the attacker", attacker, settlementABI.PackWithdraw(c.ref))
			refused("cancelWithdrawal by the attacker", attacker, settlementABI.PackCancelWithdrawal(c.ref))
			refused("claim by the attacker", attacker, settlementABI.PackClaim())
			w := PackedCharge{Cents: 1, Customer: 0, Sequence: seq + 1, Tag: 1}.Pack()
			refused("settle by the attacker", attacker, settlementABI.PackSettle([][32]byte{c.ref}, []*big.Int{w}))
			refused("setOperator by the attacker", attacker, settlementABI.PackSetOperator(attackerAddr))
		case 5: // a donation straight to the contract
			what = "donation"
			amt := int64(1 + rng.IntN(100))
			if _, err := attacker.Send(ctx, &s.Addresses.Token, erc20ABI.PackTransfer(s.Addresses.Contract, cents(amt))); err != nil {
				t.Fatal(err)
			}
			donated += amt
			attackerTokens -= amt
		case 6, 7: // the owner asks to withdraw a hostile amount (often far
			// over the balance), then withdraws after the notice
			what = "withdrawal"
			amt := new(big.Int).Mul(cents(1), new(big.Int).Lsh(big.NewInt(1), uint(rng.IntN(100))))
			if model[c.ref] == 0 {
				refused("a withdrawal request of an empty balance", c.tr, settlementABI.PackRequestWithdrawal(c.ref, amt))
				break
			}
			if _, err := c.tr.Send(ctx, &s.Addresses.Contract, settlementABI.PackRequestWithdrawal(c.ref, amt)); err != nil {
				t.Fatal(err)
			}
			asked := model[c.ref]
			if amt.Cmp(cents(asked)) < 0 {
				asked = new(big.Int).Quo(amt, cents(1)).Int64()
			}
			s.Commit()
			if err := s.Backend.AdjustTime(2 * time.Second); err != nil {
				t.Fatal(err)
			}
			s.Commit()
			if _, err := c.tr.Send(ctx, &s.Addresses.Contract, settlementABI.PackWithdraw(c.ref)); err != nil {
				t.Fatal(err)
			}
			got := min(asked, model[c.ref])
			model[c.ref] -= got
			ownerTokens[c.owner] += got
		case 8, 9, 10: // the operator settles a batch: new sequences, some
			// repeated, some over their balance
			what = "settle"
			all := []*cust{cs[0], cs[1], cs[2]}
			sorted := make([][32]byte, len(all))
			for i, x := range all {
				sorted[i] = x.ref
			}
			slices.SortFunc(sorted, func(a, b [32]byte) int { return bytes.Compare(a[:], b[:]) })
			var words []*big.Int
			for range 1 + rng.IntN(6) {
				sq := seq + 1
				if len(charges) > 0 && rng.IntN(4) == 0 {
					sq = 50_001 + uint64(rng.IntN(int(seq-50_000)))
				} else {
					seq++
				}
				words = append(words, PackedCharge{Cents: uint64(1 + rng.IntN(5000)), Customer: uint16(rng.IntN(n)), Sequence: sq, Tag: sq}.Pack())
			}
			data := settlementABI.PackSettle(sorted, words)
			r, err := op.Send(ctx, &s.Addresses.Contract, data)
			if err != nil {
				t.Fatal(err)
			}
			st, err := decodeSettle(s.Addresses.Contract, r.TxHash, r.BlockNumber.Uint64(), data, r.Logs)
			if err != nil {
				t.Fatal(err)
			}
			settles = append(settles, st)
			for _, ch := range st.charges {
				pc := ch.charge
				_, recorded := charges[pc.Sequence]
				switch checkOutcome(t, step, ch, recorded || wasDeclined[pc.Sequence], model[ch.ref]) {
				case skipped:
				case declined:
					wasDeclined[pc.Sequence] = true
				default:
					model[ch.ref] -= int64(pc.Cents)
					owed += int64(pc.Cents)
					charges[pc.Sequence] = struct {
						ref [32]byte
						c   int64
					}{ch.ref, int64(pc.Cents)}
				}
			}
		case 11, 12: // the operator refunds part of a charge: sometimes past
			// it, sometimes before the payee can cover it, sometimes a key
			// again
			if len(charges) == 0 {
				continue
			}
			what = "refund"
			var sq uint64
			for x := range charges {
				sq = x
				if rng.IntN(3) == 0 {
					break
				}
			}
			h := newWordHistory(sq>>8, settles)
			customers, words, runs, index := h.refundArgs()
			amt := int64(1 + rng.IntN(int(charges[sq].c)))
			key := fmt.Sprintf("re_atk_%d", rng.IntN(step+1))
			kb, _ := RefundKey(key)
			if _, err := op.Send(ctx, &s.Addresses.Contract, settlementABI.PackRefund(new(big.Int).SetUint64(sq>>8), customers, words, runs,
				[][32]byte{kb}, []*big.Int{packRefund(uint64(amt), uint16(index[sq]))})); err != nil {
				t.Fatal(err)
			}
			switch {
			case final[key]:
			case refunded[sq]+amt > charges[sq].c:
				final[key] = true
			case amt > owed: // not final: the key may apply later
				counts["refund waiting for the payee"]++
			default:
				refunded[sq] += amt
				owed -= amt
				model[charges[sq].ref] += amt
				final[key] = true
			}
		case 13: // the payee claims; the attacker cannot
			what = "claim"
			before := tokens(crypto.PubkeyToAddress(s.PayeeKey.PublicKey))
			if _, err := payee.Send(ctx, &s.Addresses.Contract, settlementABI.PackClaim()); err != nil {
				t.Fatal(err)
			}
			if got := tokens(crypto.PubkeyToAddress(s.PayeeKey.PublicKey)) - before; got != owed {
				t.Fatalf("the payee claimed %d cents, was owed %d", got, owed)
			}
			owed = 0
		case 14: // the operator funds the payee's side, for refunds
			what = "fund payee"
			amt := int64(1 + rng.IntN(5000))
			if _, err := faucet.Send(ctx, &s.Addresses.Contract, settlementABI.PackFundPayee(cents(amt))); err != nil {
				t.Fatal(err)
			}
			owed += amt
		case 16: // an owner spends another customer's grant nonce first
			// (changeOwner on its own balance, to a new address of its own,
			// under the nonce of a grant it saw); the grant still applies
			what = "grant nonce burned"
			newKey, _ := crypto.GenerateKey()
			victimID := fmt.Sprintf("cus_nonce_victim_%d", step)
			vg := newGrant(t, s, newKey, victimID)
			burnerKey, burnerTr := fundAccount(t, s, 1_000_000)
			burn := newGrant(t, s, burnerKey, c.id)
			burn.Nonce = vg.Nonce
			burn.Signature = signGrant(t, big.NewInt(1337), s.Addresses.Contract, c.ref, burnerKey, burn)
			if _, err := c.tr.Send(ctx, &s.Addresses.Contract, packGrant(t, c.ref, burn, true)); err != nil {
				t.Fatalf("the owner's changeOwner under another grant's nonce: %v", err)
			}
			c.key, c.tr, c.owner = burnerKey, burnerTr, crypto.PubkeyToAddress(burnerKey.PublicKey)
			ownerTokens[c.owner] = tokens(c.owner)
			if _, err := op.Send(ctx, &s.Addresses.Contract, packGrant(t, refOf(s, victimID), vg, false)); err != nil {
				t.Fatalf("the victim's grant after another owner spent its nonce: %v", err)
			}
			if got := ownerOnChain(t, s, refOf(s, victimID)); got != crypto.PubkeyToAddress(newKey.PublicKey) {
				t.Fatalf("the victim's owner is %s after its grant", got)
			}
		default: // a charge word with unused bits set reverts the batch
			what = "bad charge word"
			w := PackedCharge{Cents: 1, Customer: 0, Sequence: seq + 1, Tag: 1}.Pack()
			w.SetBit(w, 224+rng.IntN(32), 1)
			refused("a charge word with unused bits", op, settlementABI.PackSettle([][32]byte{c.ref}, []*big.Int{w}))
		}
		counts[what]++
		check(fmt.Sprintf("step %d (%s)", step, what))
	}
	t.Logf("steps: %v; %d charges debited, %d declined", counts, len(charges), len(wasDeclined))
	for _, must := range []string{"deposit", "authorization relayed", "squat", "theft", "withdrawal", "settle", "refund", "grant nonce burned"} {
		if counts[must] == 0 {
			t.Errorf("the sequence never ran %q", must)
		}
	}
}

func binary64(b []byte, v uint64) {
	for i := range 8 {
		b[len(b)-1-i] = byte(v >> (8 * i))
	}
}

// checkOutcome checks what a settle did with one charge against a model of
// the contract: skipped if its sequence was recorded before, declined if it
// is over its customer's balance (balance, cents), else debited. It returns
// the outcome the model expects.
func checkOutcome(t *testing.T, step int, ch carried, recorded bool, balance int64) outcome {
	t.Helper()
	want, what := debited, "not debited"
	switch {
	case recorded:
		want, what = skipped, "recorded before, not skipped"
	case int64(ch.charge.Cents) > balance:
		want, what = declined, "over its balance, not declined"
	}
	if ch.outcome != want {
		t.Fatalf("step %d: sequence %d %s", step, ch.charge.Sequence, what)
	}
	return want
}
