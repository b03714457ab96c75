package settlement

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/settleflow/settleflow"
)

// newGrant is an OwnerGrant of key's address for customerID on s's test
// chain, signed by key, with a fresh nonce and a deadline an hour away.
func newGrant(t *testing.T, s *Simulated, key *ecdsa.PrivateKey, customerID string) settleflow.OwnerGrant {
	t.Helper()
	var nonce [32]byte
	rand.Read(nonce[:])
	g := settleflow.OwnerGrant{Owner: crypto.PubkeyToAddress(key.PublicKey).Hex(), Nonce: hexutil.Encode(nonce[:]),
		Origin: "https://app.example", Deadline: chainNow(t, s).Add(time.Hour).Truncate(time.Second)}
	g.Signature = signGrant(t, big.NewInt(1337), s.Addresses.Contract, refOf(s, customerID), key, g)
	return g
}

// chainNow is the time of the simulated chain's head (its clock may run
// ahead of the wall clock after AdjustTime).
func chainNow(t *testing.T, s *Simulated) time.Time {
	t.Helper()
	h, err := s.Backend.Client().HeaderByNumber(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return time.Unix(int64(h.Time), 0).UTC()
}

// signGrant signs g (its owner is key's address) for ref on contract at
// chainID.
func signGrant(t *testing.T, chainID *big.Int, contract common.Address, ref [32]byte, key *ecdsa.PrivateKey, g settleflow.OwnerGrant) string {
	t.Helper()
	d := OwnerGrantDigest(chainID, contract, ref, common.HexToAddress(g.Owner), [32]byte(common.FromHex(g.Nonce)), g.Origin, uint64(g.Deadline.Unix()))
	sig, err := crypto.Sign(d[:], key)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27
	return hexutil.Encode(sig)
}

// packGrant is setOwner's (or changeOwner's) calldata for g.
func packGrant(t *testing.T, ref [32]byte, g settleflow.OwnerGrant, change bool) []byte {
	t.Helper()
	p, err := parseGrant(g, true)
	if err != nil {
		t.Fatal(err)
	}
	deadline := new(big.Int).SetUint64(p.deadline)
	if change {
		return settlementABI.PackChangeOwner(ref, p.owner, p.nonce, p.origin, deadline, p.sig[64], [32]byte(p.sig[:32]), [32]byte(p.sig[32:64]))
	}
	return settlementABI.PackSetOwner(ref, p.owner, p.nonce, p.origin, deadline, p.sig[64], [32]byte(p.sig[:32]), [32]byte(p.sig[32:64]))
}

// ownerOnChain is the owner the contract records for a customer.
func ownerOnChain(t *testing.T, s *Simulated, ref [32]byte) common.Address {
	t.Helper()
	out, err := s.Backend.Client().CallContract(context.Background(), ethereum.CallMsg{To: &s.Addresses.Contract, Data: settlementABI.PackAccount(ref)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := settlementABI.UnpackAccount(out)
	if err != nil {
		t.Fatal(err)
	}
	return a.Owner
}

// fundAccount gives a new account gas money and test tokens from the faucet.
func fundAccount(t *testing.T, s *Simulated, tokens int64) (*ecdsa.PrivateKey, Transactor) {
	t.Helper()
	ctx := context.Background()
	key, _ := crypto.GenerateKey()
	who := crypto.PubkeyToAddress(key.PublicKey)
	faucet := Transactor{Backend: s.Backend.Client(), Key: s.FaucetKey, Mine: s.Commit}
	if _, err := faucet.SendValue(ctx, &who, big.NewInt(1e18), nil); err != nil {
		t.Fatal(err)
	}
	if tokens > 0 {
		if _, err := faucet.Send(ctx, &s.Addresses.Token, erc20ABI.PackTransfer(who, cents(tokens))); err != nil {
			t.Fatal(err)
		}
	}
	tr := Transactor{Backend: s.Backend.Client(), Key: key, Mine: s.Commit}
	if _, err := tr.Send(ctx, &s.Addresses.Token, erc20ABI.PackApprove(s.Addresses.Contract, cents(tokens+1))); err != nil {
		t.Fatal(err)
	}
	return key, tr
}

// The digest the contract checks is EIP-712's, as go-ethereum's own
// implementation computes it from the typed data a wallet is given.
func TestOwnerGrantDigestIsEIP712(t *testing.T) {
	s := newSim(t, SimulatedOptions{ManualCommit: true})
	key, _ := crypto.GenerateKey()
	g := newGrant(t, s, key, "cus_digest")
	raw, err := s.OwnerGrantTypedData(settleflow.Test, "cus_digest", g)
	if err != nil {
		t.Fatal(err)
	}
	var td apitypes.TypedData
	if err := json.Unmarshal(raw, &td); err != nil {
		t.Fatalf("typed data %s: %v", raw, err)
	}
	h, _, err := apitypes.TypedDataAndHash(td)
	if err != nil {
		t.Fatal(err)
	}
	want := OwnerGrantDigest(big.NewInt(1337), s.Addresses.Contract, refOf(s, "cus_digest"), crypto.PubkeyToAddress(key.PublicKey),
		[32]byte(common.FromHex(g.Nonce)), g.Origin, uint64(g.Deadline.Unix()))
	if common.BytesToHash(h) != want {
		t.Fatalf("EIP-712 hash %x, OwnerGrantDigest %s", h, want)
	}
	// The contract agrees: a grant signed over that digest sets the owner.
	ctx := context.Background()
	if _, err := s.SetOwner(ctx, settleflow.Test, "cus_digest", g); err != nil {
		t.Fatal(err)
	}
	s.Commit()
	if got := ownerOnChain(t, s, refOf(s, "cus_digest")); got != crypto.PubkeyToAddress(key.PublicKey) {
		t.Fatalf("owner %s after SetOwner", got)
	}
}

// Finding 1: whoever deposited first owned the balance. Now a deposit
// cannot name an owner the contract has not recorded, no one but the
// operator (with the owner's own signature) sets one, and an attacker who
// front-runs a customer's first deposit gains nothing.
func TestOwnerSquattingRefused(t *testing.T) {
	ctx := context.Background()
	s := newSim(t, SimulatedOptions{ManualCommit: true, WithdrawalNotice: time.Second})
	victimKey, victim := fundAccount(t, s, 10_000)
	attackerKey, attacker := fundAccount(t, s, 10_000)
	victimAddr, attackerAddr := crypto.PubkeyToAddress(victimKey.PublicKey), crypto.PubkeyToAddress(attackerKey.PublicKey)
	ref := refOf(s, "cus_victim")

	// The squat: the attacker deposits one cent naming itself. Reverts.
	if _, err := attacker.Send(ctx, &s.Addresses.Contract, settlementABI.PackDeposit(ref, attackerAddr, cents(1))); err == nil {
		t.Fatal("a deposit naming its sender as a new customer's owner was accepted: the squat works")
	}
	if got := ownerOnChain(t, s, ref); got != (common.Address{}) {
		t.Fatalf("owner %s after the squat", got)
	}
	// The attacker cannot set an owner itself, even with its own grant.
	ag := newGrant(t, s, attackerKey, "cus_victim")
	if _, err := attacker.Send(ctx, &s.Addresses.Contract, packGrant(t, ref, ag, false)); err == nil {
		t.Fatal("setOwner from an account that is not the operator was accepted")
	}
	// The victim's deposit naming no owner (none is recorded) is credited.
	if _, err := victim.Send(ctx, &s.Addresses.Contract, settlementABI.PackDeposit(ref, common.Address{}, cents(5000))); err != nil {
		t.Fatalf("a deposit naming the recorded (no) owner: %v", err)
	}
	// The operator sets the victim's address, with the victim's grant.
	if _, err := s.SetOwner(ctx, settleflow.Test, "cus_victim", newGrant(t, s, victimKey, "cus_victim")); err != nil {
		t.Fatal(err)
	}
	s.Commit()
	if got := ownerOnChain(t, s, ref); got != victimAddr {
		t.Fatalf("owner %s, want the victim %s", got, victimAddr)
	}
	// Later deposits must name the victim: the attacker's naming itself
	// reverts, and it cannot withdraw.
	if _, err := attacker.Send(ctx, &s.Addresses.Contract, settlementABI.PackDeposit(ref, attackerAddr, cents(1))); err == nil {
		t.Error("a deposit naming another owner than the recorded one was accepted")
	}
	if _, err := attacker.Send(ctx, &s.Addresses.Contract, settlementABI.PackRequestWithdrawal(ref, cents(5000))); err == nil {
		t.Error("the attacker asked for a withdrawal of the victim's balance")
	}
	if _, err := victim.Send(ctx, &s.Addresses.Contract, settlementABI.PackDeposit(ref, victimAddr, cents(100))); err != nil {
		t.Errorf("a deposit naming the recorded owner: %v", err)
	}
	if got := customerBalance(t, s, "cus_victim"); got.Cmp(cents(5100)) != 0 {
		t.Errorf("the victim's balance is %s, want %s", got, cents(5100))
	}
	checkHoldings(t, s, "cus_victim")
}

// The grants SetOwner refuses, each with the field at fault and nothing
// sent: another customer's, another chain's, expired, a nonce used, a
// signature that is not the owner's, an address that owns it already.
func TestSetOwnerRefusals(t *testing.T) {
	ctx := context.Background()
	s := newSim(t, SimulatedOptions{ManualCommit: true})
	key, _ := crypto.GenerateKey()
	other, _ := crypto.GenerateKey()
	ref := refOf(s, "cus_grants")
	param := func(err error) string {
		var ie *settleflow.InvalidError
		if !errors.As(err, &ie) {
			t.Fatalf("not an InvalidError: %v", err)
		}
		return ie.Param
	}
	cases := []struct {
		name  string
		grant func() settleflow.OwnerGrant
		param string
	}{
		{"signed for another customer", func() settleflow.OwnerGrant {
			g := newGrant(t, s, key, "cus_grants")
			g.Signature = signGrant(t, big.NewInt(1337), s.Addresses.Contract, refOf(s, "cus_other"), key, g)
			return g
		}, "signature"},
		{"signed for another chain", func() settleflow.OwnerGrant {
			g := newGrant(t, s, key, "cus_grants")
			g.Signature = signGrant(t, big.NewInt(1), s.Addresses.Contract, ref, key, g)
			return g
		}, "signature"},
		{"signed for another origin", func() settleflow.OwnerGrant {
			g := newGrant(t, s, key, "cus_grants")
			g.Origin = "https://evil.example"
			return g
		}, "signature"},
		{"signed by another key", func() settleflow.OwnerGrant {
			g := newGrant(t, s, key, "cus_grants")
			g.Signature = signGrant(t, big.NewInt(1337), s.Addresses.Contract, ref, other, g)
			return g
		}, "signature"},
		{"expired", func() settleflow.OwnerGrant {
			g := newGrant(t, s, key, "cus_grants")
			g.Deadline = time.Now().Add(-time.Hour).Truncate(time.Second)
			g.Signature = signGrant(t, big.NewInt(1337), s.Addresses.Contract, ref, key, g)
			return g
		}, "deadline"},
		{"a bad nonce", func() settleflow.OwnerGrant {
			g := newGrant(t, s, key, "cus_grants")
			g.Nonce = "0x1234"
			return g
		}, "nonce"},
		{"a bad address", func() settleflow.OwnerGrant {
			g := newGrant(t, s, key, "cus_grants")
			g.Owner = "0xnot"
			return g
		}, "address"},
	}
	for _, c := range cases {
		if _, err := s.SetOwner(ctx, settleflow.Test, "cus_grants", c.grant()); err == nil || param(err) != c.param {
			t.Errorf("%s: %v, want an error naming %s", c.name, err, c.param)
		}
	}
	s.Commit()
	if got := ownerOnChain(t, s, ref); got != (common.Address{}) {
		t.Fatalf("a refused grant set owner %s", got)
	}
	g := newGrant(t, s, key, "cus_grants")
	h1, err := s.SetOwner(ctx, settleflow.Test, "cus_grants", g)
	if err != nil {
		t.Fatal(err)
	}
	s.Commit()
	waitMined(t, s)
	// The same grant again: the settler answers with the transaction it
	// sent (idempotent by nonce); the contract refuses the nonce, used.
	if h2, err := s.SetOwner(ctx, settleflow.Test, "cus_grants", g); err != nil || h2 != h1 {
		t.Errorf("a grant sent again: %s, %v; want the first transaction %s", h2, err, h1)
	}
	p, _ := parseGrant(g, true)
	if err := s.chains[settleflow.Test].checkSetOwner(ctx, ref, p); err == nil || param(err) != "nonce" {
		t.Errorf("the contract on a replayed grant: %v, want the nonce refused", err)
	}
	// A new grant of the same address: it owns the balance already.
	if _, err := s.SetOwner(ctx, settleflow.Test, "cus_grants", newGrant(t, s, key, "cus_grants")); err == nil || param(err) != "address" {
		t.Errorf("a grant of the owner again: %v", err)
	}
}

// waitMined mines until the settler has nothing in flight.
func waitMined(t *testing.T, s *Simulated) {
	t.Helper()
	for range 100 {
		if !s.chains[settleflow.Test].busy() {
			return
		}
		s.Commit()
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the settler is still busy")
}

// An owner who lost its key gets a new address through the operator, but
// only after the withdrawal notice, during which the owner can cancel it;
// an owner moves to a new address of its own at once.
func TestOwnerChange(t *testing.T) {
	ctx := context.Background()
	s := newSim(t, SimulatedOptions{ManualCommit: true, WithdrawalNotice: time.Hour})
	ownerKey, owner := fundAccount(t, s, 1000)
	newKey, newOwner := fundAccount(t, s, 0)
	ref := refOf(s, "cus_change")
	op := Transactor{Backend: s.Backend.Client(), Key: s.OperatorKey, Mine: s.Commit}
	if _, err := op.Send(ctx, &s.Addresses.Contract, packGrant(t, ref, newGrant(t, s, ownerKey, "cus_change"), false)); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Send(ctx, &s.Addresses.Contract, settlementABI.PackDeposit(ref, crypto.PubkeyToAddress(ownerKey.PublicKey), cents(1000))); err != nil {
		t.Fatal(err)
	}
	// The operator proposes the new address: not yet the owner.
	if _, err := op.Send(ctx, &s.Addresses.Contract, packGrant(t, ref, newGrant(t, s, newKey, "cus_change"), false)); err != nil {
		t.Fatal(err)
	}
	if got := ownerOnChain(t, s, ref); got != crypto.PubkeyToAddress(ownerKey.PublicKey) {
		t.Fatalf("a proposal changed the owner at once to %s", got)
	}
	if _, err := newOwner.Send(ctx, &s.Addresses.Contract, settlementABI.PackCompleteOwnerChange(ref)); err == nil {
		t.Fatal("an owner change completed before its notice")
	}
	// The owner (key not lost after all) cancels it.
	if _, err := owner.Send(ctx, &s.Addresses.Contract, settlementABI.PackCancelOwnerChange(ref)); err != nil {
		t.Fatal(err)
	}
	s.Commit() // time moves only on an empty pending block
	if err := s.Backend.AdjustTime(2 * time.Hour); err != nil {
		t.Fatal(err)
	}
	s.Commit()
	if _, err := newOwner.Send(ctx, &s.Addresses.Contract, settlementABI.PackCompleteOwnerChange(ref)); err == nil {
		t.Fatal("a canceled owner change completed")
	}
	// Proposed again and left alone: after the notice anyone completes it.
	if _, err := op.Send(ctx, &s.Addresses.Contract, packGrant(t, ref, newGrant(t, s, newKey, "cus_change"), false)); err != nil {
		t.Fatal(err)
	}
	s.Commit() // time moves only on an empty pending block
	if err := s.Backend.AdjustTime(time.Hour + time.Minute); err != nil {
		t.Fatal(err)
	}
	s.Commit()
	if _, err := owner.Send(ctx, &s.Addresses.Contract, settlementABI.PackCompleteOwnerChange(ref)); err != nil {
		t.Fatal(err)
	}
	if got := ownerOnChain(t, s, ref); got != crypto.PubkeyToAddress(newKey.PublicKey) {
		t.Fatalf("owner %s after the change, want %s", got, crypto.PubkeyToAddress(newKey.PublicKey))
	}
	if _, err := owner.Send(ctx, &s.Addresses.Contract, settlementABI.PackRequestWithdrawal(ref, cents(1))); err == nil {
		t.Error("the old owner can still ask for a withdrawal")
	}
	// The owner moves to an address of its own at once, with that
	// address's grant; another account cannot.
	thirdKey, _ := crypto.GenerateKey()
	if _, err := owner.Send(ctx, &s.Addresses.Contract, packGrant(t, ref, newGrant(t, s, thirdKey, "cus_change"), true)); err == nil {
		t.Error("changeOwner from an account that is not the owner")
	}
	if _, err := newOwner.Send(ctx, &s.Addresses.Contract, packGrant(t, ref, newGrant(t, s, thirdKey, "cus_change"), true)); err != nil {
		t.Fatal(err)
	}
	if got := ownerOnChain(t, s, ref); got != crypto.PubkeyToAddress(thirdKey.PublicKey) {
		t.Fatalf("owner %s after changeOwner", got)
	}
}

// Finding 2, the contract: a withdrawal request larger than the balance is
// clamped to it, so no amount on chain exceeds what the balance holds.
func TestWithdrawalRequestClamped(t *testing.T) {
	ctx := context.Background()
	s := newSim(t, SimulatedOptions{ManualCommit: true})
	ownerKey, owner := fundAccount(t, s, 1000)
	ref := refOf(s, "cus_clamp")
	op := Transactor{Backend: s.Backend.Client(), Key: s.OperatorKey, Mine: s.Commit}
	if _, err := op.Send(ctx, &s.Addresses.Contract, packGrant(t, ref, newGrant(t, s, ownerKey, "cus_clamp"), false)); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Send(ctx, &s.Addresses.Contract, settlementABI.PackDeposit(ref, crypto.PubkeyToAddress(ownerKey.PublicKey), cents(700))); err != nil {
		t.Fatal(err)
	}
	huge := new(big.Int).Mul(cents(1), new(big.Int).Lsh(big.NewInt(1), 63))
	if _, err := owner.Send(ctx, &s.Addresses.Contract, settlementABI.PackRequestWithdrawal(ref, huge)); err != nil {
		t.Fatal(err)
	}
	out, _ := s.Backend.Client().CallContract(ctx, ethereum.CallMsg{To: &s.Addresses.Contract, Data: settlementABI.PackAccount(ref)}, nil)
	a, _ := settlementABI.UnpackAccount(out)
	if a.Pending.Cmp(cents(700)) != 0 {
		t.Fatalf("a request of unit × 2^63 put %s under notice, want the balance %s", a.Pending, cents(700))
	}
}

// Finding 5, the contract: a charge word whose unused bits (224-255) are
// not zero reverts the batch; nothing is debited.
func TestSettleRefusesUnusedBits(t *testing.T) {
	ctx := context.Background()
	s := newSim(t, SimulatedOptions{ManualCommit: true})
	op := Transactor{Backend: s.Backend.Client(), Key: s.OperatorKey, Mine: s.Commit}
	before := customerBalance(t, s, testCustomers[0])
	for _, bit := range []uint{224, 240, 255} {
		w := PackedCharge{Cents: 100, Customer: 0, Sequence: 900 + uint64(bit), Tag: 1}.Pack()
		w.SetBit(w, int(bit), 1)
		_, err := op.Send(ctx, &s.Addresses.Contract, settlementABI.PackSettle([][32]byte{refOf(s, testCustomers[0])}, []*big.Int{w}))
		if err == nil || !strings.Contains(err.Error(), "revert") {
			t.Errorf("a charge with bit %d set: %v, want a revert", bit, err)
		}
	}
	if got := customerBalance(t, s, testCustomers[0]); got.Cmp(before) != 0 {
		t.Errorf("balance %s, was %s", got, before)
	}
}

// Finding 4, the contract: a refund rejected because the payee is owed too
// little is not final for its key: once the payee is funded, the same key
// is applied.
func TestRefundRejectedForPayeeNotFinal(t *testing.T) {
	ctx := context.Background()
	s := newSim(t, SimulatedOptions{ManualCommit: true})
	op := Transactor{Backend: s.Backend.Client(), Key: s.OperatorKey, Mine: s.Commit}
	payee := Transactor{Backend: s.Backend.Client(), Key: s.PayeeKey, Mine: s.Commit}
	ref := refOf(s, testCustomers[0])
	w := PackedCharge{Cents: 500, Customer: 0, Sequence: 77, Tag: 77}.Pack()
	data := settlementABI.PackSettle([][32]byte{ref}, []*big.Int{w})
	if _, err := op.Send(ctx, &s.Addresses.Contract, data); err != nil {
		t.Fatal(err)
	}
	if _, err := payee.Send(ctx, &s.Addresses.Contract, settlementABI.PackClaim()); err != nil {
		t.Fatal(err)
	}
	key, _ := RefundKey("re_payee_first")
	refund := settlementABI.PackRefund(big.NewInt(0), [][32]byte{ref}, []*big.Int{w}, []*big.Int{big.NewInt(1)},
		[][32]byte{key}, []*big.Int{packRefund(200, 0)})
	before := customerBalance(t, s, testCustomers[0])
	if _, err := op.Send(ctx, &s.Addresses.Contract, refund); err != nil {
		t.Fatal(err)
	}
	if got := customerBalance(t, s, testCustomers[0]); got.Cmp(before) != 0 {
		t.Fatalf("a refund the payee could not cover was applied")
	}
	out, _ := s.Backend.Client().CallContract(ctx, ethereum.CallMsg{To: &s.Addresses.Contract, Data: settlementABI.PackRefundState(key)}, nil)
	if st, _ := settlementABI.UnpackRefundState(out); st.Sign() != 0 {
		t.Fatalf("refund state %s after a rejection for the payee's funds, want 0 (not final)", st)
	}
	// The operator funds the payee's side; the same key now applies.
	faucet := Transactor{Backend: s.Backend.Client(), Key: s.FaucetKey, Mine: s.Commit}
	if _, err := faucet.Send(ctx, &s.Addresses.Contract, settlementABI.PackFundPayee(cents(1000))); err != nil {
		t.Fatal(err)
	}
	if _, err := op.Send(ctx, &s.Addresses.Contract, refund); err != nil {
		t.Fatal(err)
	}
	if got := customerBalance(t, s, testCustomers[0]); new(big.Int).Sub(got, before).Cmp(cents(200)) != 0 {
		t.Fatalf("after the payee was funded the refund gave back %s, want %s", new(big.Int).Sub(got, before), cents(200))
	}
	checkHoldings(t, s)
}

// A nonce already sent by one grant, sent again with another grant (here
// another customer's, signed by the same key): refused naming the nonce,
// not answered with the first grant's transaction.
func TestSetOwnerNonceOfAnotherGrant(t *testing.T) {
	ctx := context.Background()
	s := newSim(t, SimulatedOptions{ManualCommit: true})
	key, _ := crypto.GenerateKey()
	g := newGrant(t, s, key, "cus_nonce_a")
	if _, err := s.SetOwner(ctx, settleflow.Test, "cus_nonce_a", g); err != nil {
		t.Fatal(err)
	}
	other := g
	other.Signature = signGrant(t, big.NewInt(1337), s.Addresses.Contract, refOf(s, "cus_nonce_b"), key, other)
	var ie *settleflow.InvalidError
	if tx, err := s.SetOwner(ctx, settleflow.Test, "cus_nonce_b", other); !errors.As(err, &ie) || ie.Param != "nonce" {
		t.Fatalf("another grant under a nonce sent: %s, %v; want a refusal naming nonce", tx, err)
	}
}

// grantUsedOnChain reports whether the contract records signer's grant
// nonce as used.
func grantUsedOnChain(t *testing.T, s *Simulated, signer common.Address, nonce string) bool {
	t.Helper()
	out, err := s.Backend.Client().CallContract(context.Background(), ethereum.CallMsg{To: &s.Addresses.Contract,
		Data: settlementABI.PackGrantUsed(signer, [32]byte(common.FromHex(nonce)))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	used, err := settlementABI.UnpackGrantUsed(out)
	if err != nil {
		t.Fatal(err)
	}
	return used
}

// Issue 43, medium: one customer's owner burned another customer's grant
// nonce. The owner of a balance sees a victim's grant (its setOwner in the
// mempool, or the portal's page) and spends the nonce first, through
// changeOwner on its own balance to another address of its own. Contract
// version 4 keys used nonces by signer: the victim's grant still sets the
// victim's owner, through the settler's queue. The queue keys grants by
// signer too: two customers' grants under one nonce, by two signers, are
// both sent.
func TestGrantNonceOfAnotherOwner(t *testing.T) {
	ctx := context.Background()
	s := newSim(t, SimulatedOptions{ManualCommit: true})
	op := Transactor{Backend: s.Backend.Client(), Key: s.OperatorKey, Mine: s.Commit}
	attackerKey, attacker := fundAccount(t, s, 0)
	attackerRef := refOf(s, "cus_burner")
	if _, err := op.Send(ctx, &s.Addresses.Contract, packGrant(t, attackerRef, newGrant(t, s, attackerKey, "cus_burner"), false)); err != nil {
		t.Fatal(err)
	}
	victimKey, _ := crypto.GenerateKey()
	victim := crypto.PubkeyToAddress(victimKey.PublicKey)
	vg := newGrant(t, s, victimKey, "cus_burn_victim")

	// The attacker moves its own balance to a second address of its own,
	// under the victim's nonce, and is mined first.
	secondKey, _ := crypto.GenerateKey()
	burn := newGrant(t, s, secondKey, "cus_burner")
	burn.Nonce = vg.Nonce
	burn.Signature = signGrant(t, big.NewInt(1337), s.Addresses.Contract, attackerRef, secondKey, burn)
	if _, err := attacker.Send(ctx, &s.Addresses.Contract, packGrant(t, attackerRef, burn, true)); err != nil {
		t.Fatalf("the attacker's changeOwner under the victim's nonce: %v", err)
	}
	if !grantUsedOnChain(t, s, crypto.PubkeyToAddress(secondKey.PublicKey), vg.Nonce) {
		t.Fatal("the attacker's grant did not use its nonce")
	}
	if grantUsedOnChain(t, s, victim, vg.Nonce) {
		t.Fatal("the attacker's grant used the victim's nonce")
	}
	// The victim's grant, sent by the operator afterwards, sets its owner.
	tx, err := s.SetOwner(ctx, settleflow.Test, "cus_burn_victim", vg)
	if err != nil {
		t.Fatalf("the victim's grant after the attacker spent its nonce: %v", err)
	}
	waitMined(t, s)
	if got := ownerOnChain(t, s, refOf(s, "cus_burn_victim")); got != victim {
		t.Fatalf("owner %s after the victim's grant (tx %s), want %s", got, tx, victim)
	}
	// The victim's grant cannot be used again, by the victim's signer.
	if !grantUsedOnChain(t, s, victim, vg.Nonce) {
		t.Fatal("the victim's grant did not use its nonce")
	}

	// The settler's queue: two grants of two signers under one nonce are
	// two grants, both sent and both applied.
	aKey, _ := crypto.GenerateKey()
	bKey, _ := crypto.GenerateKey()
	ga := newGrant(t, s, aKey, "cus_same_nonce_a")
	gb := newGrant(t, s, bKey, "cus_same_nonce_b")
	gb.Nonce = ga.Nonce
	gb.Signature = signGrant(t, big.NewInt(1337), s.Addresses.Contract, refOf(s, "cus_same_nonce_b"), bKey, gb)
	txa, err := s.SetOwner(ctx, settleflow.Test, "cus_same_nonce_a", ga)
	if err != nil {
		t.Fatal(err)
	}
	txb, err := s.SetOwner(ctx, settleflow.Test, "cus_same_nonce_b", gb)
	if err != nil {
		t.Fatalf("a grant of another signer under a queued grant's nonce: %v", err)
	}
	if txa == txb {
		t.Fatalf("two grants answered one transaction %s", txa)
	}
	waitMined(t, s)
	for id, key := range map[string]*ecdsa.PrivateKey{"cus_same_nonce_a": aKey, "cus_same_nonce_b": bKey} {
		if got, want := ownerOnChain(t, s, refOf(s, id)), crypto.PubkeyToAddress(key.PublicKey); got != want {
			t.Errorf("%s's owner %s, want %s", id, got, want)
		}
	}
}

// accountOnChain is the contract's account() of ref.
func accountOnChain(t *testing.T, s *Simulated, ref [32]byte) (pending *big.Int, availableAt time.Time) {
	t.Helper()
	out, err := s.Backend.Client().CallContract(context.Background(), ethereum.CallMsg{To: &s.Addresses.Contract, Data: settlementABI.PackAccount(ref)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := settlementABI.UnpackAccount(out)
	if err != nil {
		t.Fatal(err)
	}
	return a.Pending, time.Unix(a.AvailableAt.Int64(), 0).UTC()
}

// advance moves the simulated chain's clock by d (time moves only on an
// empty pending block).
func advance(t *testing.T, s *Simulated, d time.Duration) {
	t.Helper()
	s.Commit()
	if err := s.Backend.AdjustTime(d); err != nil {
		t.Fatal(err)
	}
	s.Commit()
}

// Issue 43, low: an owner change handed a withdrawal request already due
// to the new owner at once. Contract version 4 restarts the request's
// notice on every owner change: the owner's own move (changeOwner) and an
// operator's proposal completed after its notice (completeOwnerChange).
func TestOwnerChangeRestartsWithdrawalNotice(t *testing.T) {
	ctx := context.Background()
	s := newSim(t, SimulatedOptions{ManualCommit: true, WithdrawalNotice: time.Hour})
	op := Transactor{Backend: s.Backend.Client(), Key: s.OperatorKey, Mine: s.Commit}
	ownerKey, owner := fundAccount(t, s, 1000)
	ref := refOf(s, "cus_restart")
	if _, err := op.Send(ctx, &s.Addresses.Contract, packGrant(t, ref, newGrant(t, s, ownerKey, "cus_restart"), false)); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Send(ctx, &s.Addresses.Contract, settlementABI.PackDeposit(ref, crypto.PubkeyToAddress(ownerKey.PublicKey), cents(1000))); err != nil {
		t.Fatal(err)
	}
	// requestDue puts amount under notice and lets the notice pass.
	requestDue := func(tr Transactor, amount int64) {
		t.Helper()
		if _, err := tr.Send(ctx, &s.Addresses.Contract, settlementABI.PackRequestWithdrawal(ref, cents(amount))); err != nil {
			t.Fatal(err)
		}
		advance(t, s, time.Hour+time.Minute)
	}
	// restarted checks that the request of amount is kept, due a full
	// notice after the change, and that next cannot withdraw it before.
	restarted := func(how string, next Transactor, amount int64) {
		t.Helper()
		now := chainNow(t, s)
		pending, at := accountOnChain(t, s, ref)
		if pending.Cmp(cents(amount)) != 0 {
			t.Fatalf("after %s the request is %s, want %s kept", how, pending, cents(amount))
		}
		if at.Before(now.Add(time.Hour - time.Minute)) {
			t.Fatalf("after %s (at %s) the request is due at %s: its notice did not start again", how, now, at)
		}
		if _, err := next.Send(ctx, &s.Addresses.Contract, settlementABI.PackWithdraw(ref)); err == nil {
			t.Fatalf("after %s the new owner withdrew a request at once", how)
		}
	}

	// The owner's own move to another address.
	requestDue(owner, 300)
	secondKey, second := fundAccount(t, s, 0)
	if _, err := owner.Send(ctx, &s.Addresses.Contract, packGrant(t, ref, newGrant(t, s, secondKey, "cus_restart"), true)); err != nil {
		t.Fatal(err)
	}
	restarted("changeOwner", second, 300)
	advance(t, s, time.Hour+time.Minute)
	before := balance(t, s.Backend.Client(), s.Addresses.Token, crypto.PubkeyToAddress(secondKey.PublicKey))
	if _, err := second.Send(ctx, &s.Addresses.Contract, settlementABI.PackWithdraw(ref)); err != nil {
		t.Fatalf("the new owner's withdrawal after the notice: %v", err)
	}
	if got := new(big.Int).Sub(balance(t, s.Backend.Client(), s.Addresses.Token, crypto.PubkeyToAddress(secondKey.PublicKey)), before); got.Cmp(cents(300)) != 0 {
		t.Fatalf("the new owner withdrew %s, want %s", got, cents(300))
	}

	// The operator's proposal, left alone until due, while a request of
	// the current owner is due too.
	thirdKey, third := fundAccount(t, s, 0)
	if _, err := op.Send(ctx, &s.Addresses.Contract, packGrant(t, ref, newGrant(t, s, thirdKey, "cus_restart"), false)); err != nil {
		t.Fatal(err)
	}
	requestDue(second, 200)
	if _, err := third.Send(ctx, &s.Addresses.Contract, settlementABI.PackCompleteOwnerChange(ref)); err != nil {
		t.Fatal(err)
	}
	if got := ownerOnChain(t, s, ref); got != crypto.PubkeyToAddress(thirdKey.PublicKey) {
		t.Fatalf("owner %s after completeOwnerChange", got)
	}
	restarted("completeOwnerChange", third, 200)
	advance(t, s, time.Hour+time.Minute)
	if _, err := third.Send(ctx, &s.Addresses.Contract, settlementABI.PackWithdraw(ref)); err != nil {
		t.Fatalf("the new owner's withdrawal after the notice: %v", err)
	}
	if got := customerBalance(t, s, "cus_restart"); got.Cmp(cents(500)) != 0 {
		t.Fatalf("balance %s after withdrawals of 300 and 200 from 1000", got)
	}
	checkHoldings(t, s, "cus_restart")
}
