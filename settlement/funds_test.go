package settlement

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"go.uber.org/zap/zaptest"

	"github.com/settleflow/settleflow"
)

// refundOf is a refund of part of a charge.
func refundOf(id string, ch settleflow.Charge, cents int64) settleflow.RefundCharge {
	return settleflow.RefundCharge{RefundID: id, WorkflowID: ch.WorkflowID, Environment: settleflow.Test, CustomerID: ch.CustomerID,
		Sequence: ch.Sequence, Amount: cents, Currency: "usd"}
}

// A partial then a full refund give exactly those amounts back to the
// customer's balance, from what the payee is owed; a third refund past the
// charge is rejected by the contract itself; a refund sent again (by a
// settler that forgot it) is applied once; a refund of a charge never
// settled fails without a transaction.
func TestRefunds(t *testing.T) {
	ctx := context.Background()
	s := newSim(t, SimulatedOptions{Tuning: ChainConfig{FlushInterval: 10 * time.Millisecond, PollInterval: 20 * time.Millisecond}})
	chs := []settleflow.Charge{charge("wf_refund_a", 1000), charge("wf_refund_b", 700)}
	if err := s.Submit(ctx, chs); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, chs, 30*time.Second, nil, confirmed)
	cus := chs[0].CustomerID
	bal0, owed0 := customerBalance(t, s, cus), payeeOwed(t, s)

	rs := []settleflow.RefundCharge{refundOf("re_partial", chs[0], 300), refundOf("re_rest", chs[0], 700)}
	if st, err := s.RefundStatus(ctx, rs); err != nil || st[0].State != settleflow.SettlementUnknown {
		t.Fatalf("before SubmitRefunds: %s, %v", describe(st), err)
	}
	if err := s.SubmitRefunds(ctx, rs); err != nil {
		t.Fatal(err)
	}
	st := waitForRefunds(t, s, rs, 30*time.Second, nil)
	for _, x := range st {
		if x.State != settleflow.SettlementConfirmed || x.Settlement == nil || x.Settlement.TxHash == "" || x.Settlement.Confirmations < 2 {
			t.Fatalf("refunds: %s", describe(st))
		}
	}
	if got := new(big.Int).Sub(customerBalance(t, s, cus), bal0); got.Cmp(cents(1000)) != 0 {
		t.Errorf("the customer got back %s, want %s", got, cents(1000))
	}
	if got := new(big.Int).Sub(owed0, payeeOwed(t, s)); got.Cmp(cents(1000)) != 0 {
		t.Errorf("the payee gave back %s, want %s", got, cents(1000))
	}

	// A third refund, past the charge: the contract rejects it for good.
	third := []settleflow.RefundCharge{refundOf("re_third", chs[0], 1)}
	if err := s.SubmitRefunds(ctx, third); err != nil {
		t.Fatal(err)
	}
	if st := waitForRefunds(t, s, third, 30*time.Second, nil); st[0].State != settleflow.SettlementFailed ||
		st[0].Failure.Code != settleflow.CodeAmountExceedsRefundable || !strings.Contains(st[0].Failure.Message, "nothing was refunded") {
		t.Fatalf("a refund past the charge: %s", describe(st))
	}

	// A settler with no memory of them: RefundStatus finds each on chain;
	// submitting them again applies nothing twice.
	fresh, err := New(ctx, Config{Logger: zaptest.NewLogger(t), Test: &ChainConfig{Client: s.Backend.Client(), Contract: s.Addresses.Contract,
		Key: s.OperatorKey, CustomerRefSecret: s.CustomerRefSecret, Confirmations: 2, FlushInterval: 10 * time.Millisecond, PollInterval: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	all := append(append([]settleflow.RefundCharge{}, rs...), third...)
	got, err := fresh.RefundStatus(ctx, all)
	if err != nil || got[0].State != settleflow.SettlementConfirmed || got[0].Settlement.TxHash != st[0].Settlement.TxHash ||
		got[2].State != settleflow.SettlementFailed || got[2].Failure.Code != settleflow.CodeAmountExceedsRefundable {
		t.Fatalf("a fresh settler's RefundStatus: %s, %v", describe(got), err)
	}
	fresh2, err := New(ctx, Config{Logger: zaptest.NewLogger(t), Test: &ChainConfig{Client: s.Backend.Client(), Contract: s.Addresses.Contract,
		Key: s.OperatorKey, CustomerRefSecret: s.CustomerRefSecret, Confirmations: 2, FlushInterval: 10 * time.Millisecond, PollInterval: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh2.Close()
	before := customerBalance(t, s, cus)
	if err := fresh2.SubmitRefunds(ctx, rs); err != nil {
		t.Fatal(err)
	}
	again := waitForRefunds(t, fresh2, rs, 30*time.Second, s.Commit)
	if again[0].State != settleflow.SettlementConfirmed || again[0].Settlement.TxHash != st[0].Settlement.TxHash {
		t.Errorf("a refund sent again: %s", describe(again))
	}
	if after := customerBalance(t, s, cus); after.Cmp(before) != 0 {
		t.Errorf("a refund sent again moved %s", new(big.Int).Sub(after, before))
	}

	// A refund of a charge never settled fails, nothing sent.
	never := []settleflow.RefundCharge{refundOf("re_never", charge("wf_never_settled", 5), 5)}
	if err := s.SubmitRefunds(ctx, never); err != nil {
		t.Fatal(err)
	}
	if st := waitForRefunds(t, s, never, 30*time.Second, nil); st[0].State != settleflow.SettlementFailed || st[0].Failure.Code != CodeInvalidCharge {
		t.Errorf("a refund of nothing: %s", describe(st))
	}
	// Bad refunds are refused, each for itself.
	err = s.SubmitRefunds(ctx, []settleflow.RefundCharge{refundOf(strings.Repeat("r", 33), chs[1], 1), refundOf("re_zero", chs[1], 0)})
	if refusal(err, strings.Repeat("r", 33)) != CodeInvalidCharge || refusal(err, "re_zero") != CodeInvalidCharge {
		t.Errorf("bad refunds: %v", err)
	}

	// The payee claims what it is owed; a refund then finds too little
	// owed and waits (rejected for now, not for good) until the payee is
	// funded (TestRefundWaitsForPayeeFunds follows it to the end).
	payee := Transactor{Backend: s.Backend.Client(), Key: s.PayeeKey, Mine: s.Commit}
	if _, err := payee.Send(ctx, &s.Addresses.Contract, settlementABI.PackClaim()); err != nil {
		t.Fatal(err)
	}
	if p := payeeOwed(t, s); p.Sign() != 0 {
		t.Fatalf("owed after a claim: %s", p)
	}
	unfunded := []settleflow.RefundCharge{refundOf("re_unfunded", chs[1], 100)}
	if err := s.SubmitRefunds(ctx, unfunded); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); s.Health()[0].RefundsAwaitingPayee != 1; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			st, _ := s.RefundStatus(ctx, unfunded)
			t.Fatalf("a refund with nothing owed to the payee: %s; want it waiting for the payee's funds", describe(st))
		}
	}
	if st, err := s.RefundStatus(ctx, unfunded); err != nil || st[0].State != settleflow.SettlementPending {
		t.Errorf("a refund with nothing owed to the payee: %s, %v; want pending", describe(st), err)
	}
	checkHoldings(t, s)
}

// checkHoldings asserts the contract's invariant for the test customers
// and the payee: its token balance is its customers' balances plus what
// the payee is owed (every customer of these tests is a testCustomer or
// named in extra).
func checkHoldings(t *testing.T, s *Simulated, extra ...string) {
	t.Helper()
	sum := payeeOwed(t, s)
	for _, id := range append(append([]string{}, testCustomers...), extra...) {
		sum.Add(sum, customerBalance(t, s, id))
	}
	if tb := balance(t, s.Backend.Client(), s.Addresses.Token, s.Addresses.Contract); tb.Cmp(sum) != 0 {
		t.Errorf("the contract holds %s base units; its customers and payee are owed %s", tb, sum)
	}
}

// Deposits (approve and deposit, and a signed EIP-3009 authorization) and
// withdrawals (request, cancel, request, withdraw after the notice) are
// followed at the confirmation depth, in order, with a cursor; the owner
// named by the first deposit is the only one that can withdraw, not before
// the notice; a cursor whose block left the chain is refused.
func TestFundsEvents(t *testing.T) {
	ctx := context.Background()
	s := newSim(t, SimulatedOptions{ManualCommit: true, WithdrawalNotice: time.Hour})
	cursor := settleflow.FundsCursor{}
	// Catch up with newSim's own deposits.
	for range 3 {
		s.Commit()
	}
	evs, cursor, err := s.FundsEvents(ctx, settleflow.Test, cursor)
	if err != nil || len(evs) != len(testCustomers) {
		t.Fatalf("newSim's deposits: %+v, %v", evs, err)
	}

	ownerKey, _ := crypto.GenerateKey()
	owner := crypto.PubkeyToAddress(ownerKey.PublicKey)
	payerKey, _ := crypto.GenerateKey()
	payer := crypto.PubkeyToAddress(payerKey.PublicKey)
	faucet := Transactor{Backend: s.Backend.Client(), Key: s.FaucetKey, Mine: s.Commit}
	for _, who := range []common.Address{owner, payer} {
		if _, err := faucet.SendValue(ctx, &who, big.NewInt(1e18), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := faucet.Send(ctx, &s.Addresses.Token, erc20ABI.PackTransfer(who, cents(10_000))); err != nil {
			t.Fatal(err)
		}
	}
	ref := refOf(s, "cus_funds")
	// 0. The operator sets the owner, with the owner's signed grant.
	if _, err := s.SetOwner(ctx, settleflow.Test, "cus_funds", newGrant(t, s, ownerKey, "cus_funds")); err != nil {
		t.Fatal(err)
	}
	waitMined(t, s)
	// 1. approve and deposit $50.00, naming the owner.
	pay := Transactor{Backend: s.Backend.Client(), Key: payerKey, Mine: s.Commit}
	if _, err := pay.Send(ctx, &s.Addresses.Token, erc20ABI.PackApprove(s.Addresses.Contract, cents(5000))); err != nil {
		t.Fatal(err)
	}
	if _, err := pay.Send(ctx, &s.Addresses.Contract, settlementABI.PackDeposit(ref, owner, cents(5000))); err != nil {
		t.Fatal(err)
	}
	// Not whole cents, and nothing: refused.
	if _, err := pay.Send(ctx, &s.Addresses.Contract, settlementABI.PackDeposit(ref, owner, big.NewInt(12345))); err == nil {
		t.Error("a deposit of 0.012345 accepted")
	}
	// 2. $25.00 by a signed authorization, relayed by someone else (the
	// faucet here): no approval transaction. The nonce binds it to the
	// customer and owner, so the relayer cannot redirect it.
	salt := [32]byte{7}
	sig := authorize(t, s, payerKey, cents(2500), ref, owner, salt)
	relay := func(r [32]byte, o common.Address) error {
		_, err := faucet.Send(ctx, &s.Addresses.Contract, settlementABI.PackDepositWithAuthorization(r, o, payer, cents(2500), big.NewInt(0), big.NewInt(1<<40), salt, sig[64]+27, [32]byte(sig[:32]), [32]byte(sig[32:64])))
		return err
	}
	if err := relay(refOf(s, "cus_thief"), owner); err == nil {
		t.Error("an authorization redirected to another customer was accepted")
	}
	if err := relay(ref, s.Addresses.Faucet); err == nil {
		t.Error("an authorization naming another owner was accepted")
	}
	if err := relay(ref, owner); err != nil {
		t.Fatalf("deposit with authorization: %v", err)
	}
	if err := relay(ref, owner); err == nil {
		t.Error("an authorization used twice")
	}
	// 3. withdrawals: only the owner; request, cancel, request, too early,
	// then after the notice.
	own := Transactor{Backend: s.Backend.Client(), Key: ownerKey, Mine: s.Commit}
	if _, err := pay.Send(ctx, &s.Addresses.Contract, settlementABI.PackRequestWithdrawal(ref, cents(1000))); err == nil {
		t.Error("a payer who is not the owner asked for a withdrawal")
	}
	if _, err := own.Send(ctx, &s.Addresses.Contract, settlementABI.PackRequestWithdrawal(ref, cents(9000))); err != nil {
		t.Fatal(err)
	}
	if _, err := own.Send(ctx, &s.Addresses.Contract, settlementABI.PackCancelWithdrawal(ref)); err != nil {
		t.Fatal(err)
	}
	if _, err := own.Send(ctx, &s.Addresses.Contract, settlementABI.PackRequestWithdrawal(ref, cents(1000))); err != nil {
		t.Fatal(err)
	}
	if _, err := own.Send(ctx, &s.Addresses.Contract, settlementABI.PackWithdraw(ref)); err == nil {
		t.Error("withdrawn before the notice")
	}
	s.Commit() // time moves only on an empty pending block
	if err := s.Backend.AdjustTime(time.Hour + time.Minute); err != nil {
		t.Fatal(err)
	}
	s.Commit()
	ownerBefore := balance(t, s.Backend.Client(), s.Addresses.Token, owner)
	if _, err := own.Send(ctx, &s.Addresses.Contract, settlementABI.PackWithdraw(ref)); err != nil {
		t.Fatalf("withdraw after the notice: %v", err)
	}
	if got := new(big.Int).Sub(balance(t, s.Backend.Client(), s.Addresses.Token, owner), ownerBefore); got.Cmp(cents(1000)) != 0 {
		t.Errorf("the owner received %s, want %s", got, cents(1000))
	}
	checkHoldings(t, s, "cus_funds")

	// Not confirmed yet (depth 2): nothing new; then every change, in order.
	var all []settleflow.FundsEvent
	for range 3 {
		evs, next, err := s.FundsEvents(ctx, settleflow.Test, cursor)
		if err != nil {
			t.Fatal(err)
		}
		all, cursor = append(all, evs...), next
		s.Commit()
	}
	want := []struct {
		kind   settleflow.FundsEventKind
		amount int64
	}{{settleflow.FundsOwnerSet, 0}, {settleflow.FundsDeposit, 5000}, {settleflow.FundsDeposit, 2500},
		{settleflow.FundsWithdrawalRequested, 7500}, // 9000 asked, clamped to the balance
		{settleflow.FundsWithdrawalCanceled, 0}, {settleflow.FundsWithdrawalRequested, 1000}, {settleflow.FundsWithdrawn, 1000}}
	if len(all) != len(want) {
		t.Fatalf("funds events: %+v", all)
	}
	for i, w := range want {
		e := all[i]
		if e.Kind != w.kind || e.Amount != w.amount || e.Ref != common.Hash(ref).Hex() || e.TxHash == "" || e.BlockNumber == 0 || e.Invalid != "" {
			t.Errorf("event %d = %+v, want %s of %d", i, e, w.kind, w.amount)
		}
	}
	// The operator's setOwner is followed as its own event (OwnerSet).
	if all[0].Owner != owner.Hex() || all[0].TxHash == all[1].TxHash || all[1].Owner != "" {
		t.Errorf("owner events: %+v, %+v; want OwnerSet of %s, then the deposit", all[0], all[1], owner.Hex())
	}
	// A cursor on a block that is no longer on the chain is refused.
	if _, _, err := s.FundsEvents(ctx, settleflow.Test, settleflow.FundsCursor{Block: cursor.Block, Hash: common.Hash{1}.Hex()}); !errors.Is(err, settleflow.ErrFundsReorg) ||
		!strings.Contains(err.Error(), "no longer on the chain") {
		t.Errorf("a stale cursor: %v", err)
	}
	// Live is never funded by the faucet.
	if _, err := s.Faucet(ctx, settleflow.Live, "cus_live", 100); err == nil {
		t.Error("the faucet funded a live customer")
	}
	info, err := s.DepositInfo(settleflow.Test, "cus_funds")
	if err != nil || info.CustomerRef != common.Hash(ref).Hex() || info.Contract != s.Addresses.Contract.Hex() || info.ChainID != 1337 {
		t.Errorf("deposit info %+v, %v", info, err)
	}
}

// authorize signs an EIP-3009 ReceiveWithAuthorization of value from key's
// account to the settlement contract, with the nonce the contract derives
// for (ref, owner, salt).
func authorize(t *testing.T, s *Simulated, key *ecdsa.PrivateKey, value *big.Int, ref [32]byte, owner common.Address, salt [32]byte) []byte {
	t.Helper()
	out, err := s.Backend.Client().CallContract(context.Background(), ethereum.CallMsg{To: &s.Addresses.Token, Data: erc20ABI.PackDOMAINSEPARATOR()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	domain, err := erc20ABI.UnpackDOMAINSEPARATOR(out)
	if err != nil {
		t.Fatal(err)
	}
	word := func(v any) []byte {
		switch x := v.(type) {
		case common.Address:
			return common.LeftPadBytes(x[:], 32)
		case *big.Int:
			return common.LeftPadBytes(x.Bytes(), 32)
		case [32]byte:
			return x[:]
		}
		panic(v)
	}
	nonce := crypto.Keccak256(word(ref), word(owner), word(salt))
	typeHash := crypto.Keccak256([]byte("ReceiveWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"))
	from := crypto.PubkeyToAddress(key.PublicKey)
	structHash := crypto.Keccak256(typeHash, word(from), word(s.Addresses.Contract), word(value), word(big.NewInt(0)), word(big.NewInt(1<<40)), nonce)
	digest := crypto.Keccak256([]byte("\x19\x01"), domain[:], structHash)
	sig, err := crypto.Sign(digest, key)
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

// TestContractInvariant drives the contract with a random sequence of
// deposits, settles (some charges declined, some sequences repeated),
// refunds (some past their charge, some repeated), withdrawal requests,
// withdrawals and claims, and checks after every step that the token
// balance the contract holds equals the sum of its customers' balances
// plus what it owes the payee, and that each balance is what a model of
// the ledger says.
func TestContractInvariant(t *testing.T) {
	ctx := context.Background()
	s := newSim(t, SimulatedOptions{ManualCommit: true, WithdrawalNotice: time.Second})
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	op := Transactor{Backend: s.Backend.Client(), Key: s.OperatorKey, Mine: s.Commit}
	faucet := Transactor{Backend: s.Backend.Client(), Key: s.FaucetKey, Mine: s.Commit}
	payee := Transactor{Backend: s.Backend.Client(), Key: s.PayeeKey, Mine: s.Commit}
	const n = 4
	ids := make([]string, n)
	refs := make([][32]byte, n)
	for i := range n {
		ids[i] = fmt.Sprintf("cus_inv_%d", i)
		refs[i] = refOf(s, ids[i])
		// The faucet owns these balances: the operator sets it, with the
		// faucet's grant.
		if _, err := op.Send(ctx, &s.Addresses.Contract, packGrant(t, refs[i], newGrant(t, s, s.FaucetKey, ids[i]), false)); err != nil {
			t.Fatal(err)
		}
	}
	model := map[[32]byte]int64{} // cents
	for _, id := range testCustomers {
		model[refOf(s, id)] = 100_000_000
	}
	var owed int64                               // cents
	charges := map[uint64]struct{ i, c int64 }{} // debited: customer index, cents
	refunded := map[uint64]int64{}
	chargeRef := map[uint64][32]byte{}
	declinedSeqs := map[uint64]bool{}
	applied, rejected := map[string]bool{}, map[string]bool{}
	seq := uint64(10_000)
	var settles []*settleTx
	check := func(step string) {
		t.Helper()
		sum := big.NewInt(0)
		for ref, want := range model {
			out, _ := s.Backend.Client().CallContract(ctx, ethereum.CallMsg{To: &s.Addresses.Contract, Data: settlementABI.PackBalanceOf(ref)}, nil)
			got, _ := settlementABI.UnpackBalanceOf(out)
			if got.Cmp(cents(want)) != 0 {
				t.Fatalf("after %s: a balance is %s, the model says %d cents", step, got, want)
			}
			sum.Add(sum, got)
		}
		p := payeeOwed(t, s)
		if p.Cmp(cents(owed)) != 0 {
			t.Fatalf("after %s: the payee is owed %s, the model says %d cents", step, p, owed)
		}
		if tb := balance(t, s.Backend.Client(), s.Addresses.Token, s.Addresses.Contract); tb.Cmp(sum.Add(sum, p)) != 0 {
			t.Fatalf("after %s: the contract holds %s, owes %s", step, tb, sum)
		}
	}
	check("start")
	for step := range 150 {
		switch k := rng.IntN(10); {
		case k < 2: // deposit
			i := rng.IntN(n)
			c := int64(1 + rng.IntN(50_000))
			if _, err := faucet.Send(ctx, &s.Addresses.Contract, settlementABI.PackDeposit(refs[i], s.Addresses.Faucet, cents(c))); err != nil {
				t.Fatal(err)
			}
			model[refs[i]] += c
		case k < 6: // settle a batch: some new sequences, some repeated
			m := 1 + rng.IntN(8)
			var words []*big.Int
			for range m {
				sq := seq
				if len(charges) > 0 && rng.IntN(4) == 0 {
					sq = 10_000 + uint64(rng.IntN(int(seq-10_000)))
				} else {
					seq++
				}
				words = append(words, PackedCharge{Cents: uint64(1 + rng.IntN(3000)), Customer: uint16(rng.IntN(n)), Sequence: sq, Tag: sq}.Pack())
			}
			sorted := append([][32]byte{}, refs...)
			slices.SortFunc(sorted, func(a, b [32]byte) int { return bytes.Compare(a[:], b[:]) })
			idx := map[[32]byte]uint16{}
			for j, r := range sorted {
				idx[r] = uint16(j)
			}
			for j, w := range words { // re-index to the sorted list
				pc, _ := UnpackCharge(w)
				pc.Customer = idx[refs[pc.Customer]]
				words[j] = pc.Pack()
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
			recorded := map[uint64]bool{}
			for sq := range charges {
				recorded[sq] = true
			}
			for _, ch := range st.charges {
				pc := ch.charge
				switch checkOutcome(t, step, ch, recorded[pc.Sequence] || declinedSeqs[pc.Sequence], model[ch.ref]) {
				case skipped:
				case declined:
					declinedSeqs[pc.Sequence] = true
				default:
					model[ch.ref] -= int64(pc.Cents)
					owed += int64(pc.Cents)
					charges[pc.Sequence] = struct{ i, c int64 }{int64(pc.Customer), int64(pc.Cents)}
					chargeRef[pc.Sequence] = ch.ref
					recorded[pc.Sequence] = true
				}
			}
		case k < 8 && len(charges) > 0: // refund, sometimes past the charge, sometimes a key again
			var sq uint64
			for x := range charges {
				sq = x
				if rng.IntN(3) == 0 {
					break
				}
			}
			h := newWordHistory(sq>>8, settles)
			customers, words, runs, index := h.refundArgs()
			c := int64(1 + rng.IntN(int(charges[sq].c)))
			key := fmt.Sprintf("re_%d", step)
			if len(applied) > 0 && rng.IntN(4) == 0 {
				for k := range applied {
					key = k
					break
				}
			}
			kb, _ := RefundKey(key)
			if _, err := op.Send(ctx, &s.Addresses.Contract, settlementABI.PackRefund(new(big.Int).SetUint64(sq>>8), customers, words, runs,
				[][32]byte{kb}, []*big.Int{packRefund(uint64(c), uint16(index[sq]))})); err != nil {
				t.Fatal(err)
			}
			if !applied[key] && !rejected[key] {
				if refunded[sq]+c <= charges[sq].c && c <= owed {
					refunded[sq] += c
					owed -= c
					model[chargeRef[sq]] += c
					applied[key] = true
				} else {
					rejected[key] = true
				}
			}
		case k < 9: // the owner of a customer withdraws part, after the notice
			i := rng.IntN(n)
			if model[refs[i]] < 100 {
				continue
			}
			own := faucet // the faucet owns these balances (set above)
			c := int64(1 + rng.IntN(int(model[refs[i]])))
			if _, err := own.Send(ctx, &s.Addresses.Contract, settlementABI.PackRequestWithdrawal(refs[i], cents(c))); err != nil {
				t.Fatal(err)
			}
			s.Commit() // time moves only on an empty pending block
			if err := s.Backend.AdjustTime(2 * time.Second); err != nil {
				t.Fatal(err)
			}
			s.Commit()
			if _, err := own.Send(ctx, &s.Addresses.Contract, settlementABI.PackWithdraw(refs[i])); err != nil {
				t.Fatal(err)
			}
			model[refs[i]] -= c
		default: // the payee claims
			if _, err := payee.Send(ctx, &s.Addresses.Contract, settlementABI.PackClaim()); err != nil {
				t.Fatal(err)
			}
			owed = 0
		}
		check(fmt.Sprintf("step %d", step))
	}
	skips := 0
	for _, st := range settles {
		for _, ch := range st.charges {
			if ch.outcome == skipped {
				skips++
			}
		}
	}
	t.Logf("%d charges debited, %d declined, %d skipped as recorded; %d refunds applied, %d rejected", len(charges), len(declinedSeqs), skips, len(applied), len(rejected))
	if len(charges) == 0 || len(applied) == 0 {
		t.Errorf("the sequence exercised too little: %d charges, %d refunds", len(charges), len(applied))
	}
}
