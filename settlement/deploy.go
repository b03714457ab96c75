package settlement

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/params"

	"github.com/settleflow/settleflow/settlement/contracts/bindings"
)

// Addresses are the accounts and contracts of a settlement deployment.
type Addresses struct {
	Token    common.Address // the 6-decimal stablecoin
	Contract common.Address // SettleflowSettlement
	Operator common.Address // signs settlements and pays the charges
	Payee    common.Address // receives the charges
}

// Transactor sends transactions from one key and waits for their receipts. On
// a chain that mines only on demand (the simulated backend), Mine is called
// while waiting.
type Transactor struct {
	Backend Backend
	Key     *ecdsa.PrivateKey
	// Mine, if set, is called while waiting for a receipt (the simulated
	// backend's Commit).
	Mine func()
	// TipCap, if set, fixes the priority fee; nil asks the node.
	TipCap *big.Int
}

// Send signs and sends a transaction to (nil: contract creation) with data,
// waits for its receipt and fails if it reverted.
func (tr Transactor) Send(ctx context.Context, to *common.Address, data []byte) (*types.Receipt, error) {
	from := crypto.PubkeyToAddress(tr.Key.PublicKey)
	id, err := tr.Backend.ChainID(ctx)
	if err != nil {
		return nil, err
	}
	head, err := tr.Backend.HeaderByNumber(ctx, nil)
	if err != nil {
		return nil, err
	}
	nonce, err := tr.Backend.PendingNonceAt(ctx, from)
	if err != nil {
		return nil, err
	}
	gas, err := tr.Backend.EstimateGas(ctx, ethereum.CallMsg{From: from, To: to, Data: data})
	if err != nil {
		return nil, fmt.Errorf("settlement: estimate gas: %w", err)
	}
	gas = min(gas+gas/5, params.MaxTxGas)
	tip, feeCap, err := fees(ctx, tr.Backend, head, tr.TipCap, nil)
	if err != nil {
		return nil, err
	}
	tx, err := types.SignNewTx(tr.Key, types.LatestSignerForChainID(id), &types.DynamicFeeTx{
		ChainID: id, Nonce: nonce, GasTipCap: tip, GasFeeCap: feeCap, Gas: gas, To: to, Data: data,
	})
	if err != nil {
		return nil, err
	}
	if err := tr.Backend.SendTransaction(ctx, tx); err != nil {
		return nil, fmt.Errorf("settlement: send: %w", err)
	}
	return tr.Wait(ctx, tx.Hash())
}

// Wait waits for a transaction's receipt and fails if it reverted.
func (tr Transactor) Wait(ctx context.Context, hash common.Hash) (*types.Receipt, error) {
	for {
		if tr.Mine != nil {
			tr.Mine()
		}
		r, err := tr.Backend.TransactionReceipt(ctx, hash)
		if err == nil && r != nil {
			if r.Status != types.ReceiptStatusSuccessful {
				return r, fmt.Errorf("settlement: transaction %s reverted", hash)
			}
			return r, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (tr Transactor) deploy(ctx context.Context, bin string, args []byte) (common.Address, error) {
	code, err := hexutil.Decode(bin)
	if err != nil {
		return common.Address{}, err
	}
	r, err := tr.Send(ctx, nil, append(code, args...))
	if err != nil {
		return common.Address{}, err
	}
	return r.ContractAddress, nil
}

// DeploySettlement deploys SettleflowSettlement for token and payee, with the
// transactor's key as owner and operator as the settling account.
func (tr Transactor) DeploySettlement(ctx context.Context, token, payee, operator common.Address) (common.Address, error) {
	return tr.deploy(ctx, bindings.SettleflowSettlementMetaData.Bin, settlementABI.PackConstructor(token, payee, operator))
}

// DeployTestUSD deploys the 6-decimal test stablecoin, minted by the
// transactor's key. For simulated and dev chains only.
func (tr Transactor) DeployTestUSD(ctx context.Context) (common.Address, error) {
	return tr.deploy(ctx, bindings.TestUSDMetaData.Bin, nil)
}

// DeployDev sets up a dev chain in one go: it deploys the test stablecoin and
// the settlement contract with the transactor's key as minter, owner and
// operator, mints funds (base units) to it and approves the contract for an
// unlimited amount.
func (tr Transactor) DeployDev(ctx context.Context, payee common.Address, funds *big.Int) (Addresses, error) {
	op := crypto.PubkeyToAddress(tr.Key.PublicKey)
	a := Addresses{Operator: op, Payee: payee}
	var err error
	if a.Token, err = tr.DeployTestUSD(ctx); err != nil {
		return a, fmt.Errorf("settlement: deploy token: %w", err)
	}
	if a.Contract, err = tr.DeploySettlement(ctx, a.Token, payee, op); err != nil {
		return a, fmt.Errorf("settlement: deploy contract: %w", err)
	}
	if _, err = tr.Send(ctx, &a.Token, erc20ABI.PackMint(op, funds)); err != nil {
		return a, fmt.Errorf("settlement: mint: %w", err)
	}
	maxUint := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
	if _, err = tr.Send(ctx, &a.Token, erc20ABI.PackApprove(a.Contract, maxUint)); err != nil {
		return a, fmt.Errorf("settlement: approve: %w", err)
	}
	return a, nil
}

// TokenBalance reads an account's balance of token, in base units.
func TokenBalance(ctx context.Context, b Backend, token, account common.Address) (*big.Int, error) {
	out, err := b.CallContract(ctx, ethereum.CallMsg{To: &token, Data: erc20ABI.PackBalanceOf(account)}, nil)
	if err != nil {
		return nil, err
	}
	return erc20ABI.UnpackBalanceOf(out)
}
