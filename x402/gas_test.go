package x402_test

import (
	"context"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/x402"
)

// The gas of an x402 payment (the wallet's transferWithAuthorization to
// the collector and the collector's deposit into the wallet's balance)
// beside a plain ERC-20 transfer, on the simulated chain, steady state
// (the collector's one-time approval excluded): logged for BENCHMARKS.md,
// and bounded so that a regression shows.
func TestPaymentGas(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	wallet := crypto.PubkeyToAddress(r.buyer.PublicKey)
	c, err := r.engine.Customer(ctx, settleflow.Test, x402.CustomerID(wallet))
	if err != nil {
		t.Fatal(err)
	}
	ref := common.HexToHash(c.Deposit.CustomerRef)
	req := r.offer(body)
	gas := func(h common.Hash) uint64 {
		rcpt, err := r.backend.TransactionReceipt(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		return rcpt.GasUsed
	}
	var transfer, deposit uint64
	for i := range 2 { // the first pays the collector's approval too
		a := authorization(req)
		if err := a.Sign(r.buyer, domain(req)); err != nil {
			t.Fatal(err)
		}
		p, err := r.fac.Pay(ctx, a, ref, common.Address{})
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			transfer, deposit = gas(p.Transfer), gas(p.Deposit)
		}
		if moved := r.transferred(p.Transfer.Hex(), wallet, r.collector); moved != priceUnits {
			t.Fatalf("moved %d", moved)
		}
	}
	if got := r.contractBalance(x402.CustomerID(wallet)); got != 2*priceUnits {
		t.Fatalf("the customer's balance is %d, want %d", got, 2*priceUnits)
	}
	// A plain ERC-20 transfer to a fresh account, as the faucet funds one.
	other, _ := crypto.GenerateKey()
	erc20 := r.fundGas(crypto.PubkeyToAddress(other.PublicKey), 1_000_000)
	t.Logf("x402 payment: transferWithAuthorization %d gas + deposit %d gas = %d (%.2fx an ERC-20 transfer of %d gas)",
		transfer, deposit, transfer+deposit, float64(transfer+deposit)/float64(erc20), erc20)
	if transfer+deposit > 4*erc20 {
		t.Fatalf("an x402 payment costs %d gas, more than 4 ERC-20 transfers (%d)", transfer+deposit, 4*erc20)
	}
}

// The gas of an upto charge (the proxy's settle, through Permit2, of the
// charge from the wallet to the collector, and the collector's
// depositWithAuthorization into the wallet's balance) beside a plain
// ERC-20 transfer, on the simulated chain, steady state (the wallet's
// one-time Permit2 approval excluded): logged for BENCHMARKS.md, bounded.
func TestUptoChargeGas(t *testing.T) {
	r := newUptoRig(t, false)
	ctx := context.Background()
	wallet := crypto.PubkeyToAddress(r.buyer.PublicKey)
	c, err := r.engine.Customer(ctx, settleflow.Test, x402.CustomerID(wallet))
	if err != nil {
		t.Fatal(err)
	}
	ref := common.HexToHash(c.Deposit.CustomerRef)
	req := r.offer(uptoBody(cappedProduct, "gas", true))
	gas := func(h common.Hash) uint64 {
		rcpt, err := r.backend.TransactionReceipt(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		return rcpt.GasUsed
	}
	var settle, deposit uint64
	for i := range 2 { // the first writes the wallet's first Permit2 nonce word
		a := permit(req)
		if err := a.Sign(r.buyer, big.NewInt(1337)); err != nil {
			t.Fatal(err)
		}
		got, err := r.fac.FundUpto(ctx, a, big.NewInt(cappedCharge*10_000), ref, common.Address{})
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			settle, deposit = gas(got.Transfer), gas(got.Deposit)
		}
		again, err := r.fac.FundUpto(ctx, a, big.NewInt(cappedCharge*10_000), ref, common.Address{})
		if err != nil || again.Transfer != (common.Hash{}) || again.Deposit != (common.Hash{}) {
			t.Fatalf("a second FundUpto of one permit sent %+v (%v)", again, err)
		}
	}
	if got := r.contractBalance(x402.CustomerID(wallet)); got != 2*cappedCharge*10_000 {
		t.Fatalf("the customer's balance is %d, want %d", got, 2*cappedCharge*10_000)
	}
	if b := r.balance(wallet); b != buyerFunds-2*cappedCharge*10_000 {
		t.Fatalf("the wallet holds %d", b)
	}
	other, _ := crypto.GenerateKey()
	erc20 := r.fundGas(crypto.PubkeyToAddress(other.PublicKey), 1_000_000)
	t.Logf("x402 upto charge: proxy settle %d gas + depositWithAuthorization %d gas = %d (%.2fx an ERC-20 transfer of %d gas)",
		settle, deposit, settle+deposit, float64(settle+deposit)/float64(erc20), erc20)
	if settle+deposit > 5*erc20 {
		t.Fatalf("an upto charge costs %d gas, more than 5 ERC-20 transfers (%d)", settle+deposit, 5*erc20)
	}
}
