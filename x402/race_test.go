package x402_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"sync/atomic"
	"testing"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/settlement/contracts/bindings"
	"github.com/settleflow/settleflow/x402"
)

// A payment's deposit shares its block with a settle that empties the same
// customer's balance, ahead of it: what happens on any chain when a wallet
// buys again while its previous charge settles. The deposit's gas was
// estimated on the balance before the settle (a write of a nonzero slot);
// in the block it writes a slot the settle just zeroed, which costs some
// 17,000 gas more. The deposit must still land: the payment is credited
// to the wallet's balance, nothing is left with the collector.
func TestDepositInTheBlockOfASettle(t *testing.T) {
	r, hold := newAttackRig(t)
	hold.Lock() // no blocks but the facilitator's own
	defer hold.Unlock()
	ctx := context.Background()
	collectorKey, _ := crypto.GenerateKey()
	collector := crypto.PubkeyToAddress(collectorKey.PublicKey)
	faucet := settlement.Transactor{Backend: r.backend, Key: r.sim.FaucetKey, Mine: r.sim.Commit}
	if _, err := faucet.SendValue(ctx, &collector, big.NewInt(1e18), nil); err != nil {
		t.Fatal(err)
	}
	ref := crypto.Keccak256Hash([]byte("x402 deposit race"))
	settle := bindings.NewSettleflowSettlement().PackSettle([][32]byte{ref},
		[]*big.Int{settlement.PackedCharge{Cents: price, Customer: 0, Sequence: 1 << 40, Tag: 1}.Pack()})
	var armed, injected atomic.Bool
	var settleTx common.Hash
	// mine mines on demand, as the simulated chain's facilitator does; once
	// armed, when the deposit is in the pool (the collector has a
	// transaction pending and already holds the transfer), the operator's
	// settle of the customer's balance is put ahead of it, in its block.
	mine := func() {
		if armed.Load() && !injected.Load() {
			pending, err := r.backend.PendingNonceAt(ctx, collector)
			if err != nil {
				t.Error(err)
			}
			mined, err := r.backend.NonceAt(ctx, collector, nil)
			if err != nil {
				t.Error(err)
			}
			if pending > mined && r.balance(collector) >= priceUnits {
				injected.Store(true)
				settleTx = r.sendPooled(r.sim.OperatorKey, r.sim.Addresses.Contract, settle)
			}
		}
		r.sim.Commit()
	}
	fac, err := x402.NewFacilitator(ctx, x402.FacilitatorConfig{Backend: r.backend, Collector: collectorKey,
		Token: r.sim.Addresses.Token, Contract: r.sim.Addresses.Contract, Mine: mine})
	if err != nil {
		t.Fatal(err)
	}
	pay := func() (x402.Payment, error) {
		a := &x402.ExactAuthorization{To: collector, Value: big.NewInt(priceUnits), ValidAfter: big.NewInt(0), ValidBefore: big.NewInt(1 << 40)}
		_, _ = rand.Read(a.Nonce[:])
		if err := a.Sign(r.buyer, fac.Domain()); err != nil {
			t.Fatal(err)
		}
		return fac.Pay(ctx, a, ref, common.Address{})
	}
	// The first payment: the collector's approval, the balance credited.
	p1, err := pay()
	if err != nil {
		t.Fatal(err)
	}
	if rc, err := r.backend.TransactionReceipt(ctx, p1.Deposit); err == nil {
		t.Logf("the first deposit used %d gas of its limit %d", rc.GasUsed, gasLimit(t, r, p1.Deposit))
	}
	if got := r.contractAt(ref, nil); got != priceUnits {
		t.Fatalf("the balance holds %d after the first payment", got)
	}
	armed.Store(true)
	p, err := pay()
	if !injected.Load() {
		t.Fatal("the settle was never put in the deposit's block")
	}
	if err != nil {
		g, gerr := r.backend.EstimateGas(ctx, ethereum.CallMsg{From: collector, To: &r.sim.Addresses.Contract,
			Data: bindings.NewSettleflowSettlement().PackDeposit(ref, common.Address{}, big.NewInt(priceUnits))})
		t.Logf("a deposit now (the balance empty) is estimated at %d gas (%v)", g, gerr)
		t.Fatalf("the second payment, its deposit in the block of a settle of the same balance: %v (%s)", err, r.collectorTxs(settleTx, collector))
	}
	rcpt, err := r.backend.TransactionReceipt(ctx, p.Deposit)
	if err != nil {
		t.Fatal(err)
	}
	srcpt, err := r.backend.TransactionReceipt(ctx, settleTx)
	if err != nil {
		t.Fatal(err)
	}
	if srcpt.Status != 1 || srcpt.BlockNumber.Cmp(rcpt.BlockNumber) != 0 || srcpt.TransactionIndex > rcpt.TransactionIndex {
		t.Fatalf("the settle (status %d, block %s, index %d) did not land ahead of the deposit (block %s, index %d)",
			srcpt.Status, srcpt.BlockNumber, srcpt.TransactionIndex, rcpt.BlockNumber, rcpt.TransactionIndex)
	}
	if got := r.contractAt(ref, nil); got != priceUnits {
		t.Fatalf("the balance holds %d: the settle took the first payment, the second should be credited", got)
	}
	if got := r.balance(collector); got != 0 {
		t.Fatalf("the collector kept %d", got)
	}
	t.Logf("the deposit used %d gas of its %d limit", rcpt.GasUsed, gasLimit(t, r, p.Deposit))
}

// collectorTxs describes the collector's transactions in the block of
// transaction h: gas used of the limit, status.
func (r *rig) collectorTxs(h common.Hash, collector common.Address) string {
	ctx := context.Background()
	rcpt, err := r.backend.TransactionReceipt(ctx, h)
	if err != nil {
		return err.Error()
	}
	b, err := r.backend.BlockByNumber(ctx, rcpt.BlockNumber)
	if err != nil {
		return err.Error()
	}
	out := fmt.Sprintf("block %d: ", b.NumberU64())
	for i, tx := range b.Transactions() {
		from, _ := types.Sender(types.LatestSignerForChainID(tx.ChainId()), tx)
		rc, _ := r.backend.TransactionReceipt(ctx, tx.Hash())
		who := "operator's settle"
		if from == collector {
			who = "collector's deposit"
		}
		out += fmt.Sprintf("[%d] %s: status %d, gas used %d of its limit %d; ", i, who, rc.Status, rc.GasUsed, tx.Gas())
	}
	return out
}

func gasLimit(t *testing.T, r *rig, h common.Hash) uint64 {
	tx, _, err := r.backend.TransactionByHash(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	return tx.Gas()
}
