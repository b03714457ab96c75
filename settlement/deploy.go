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
	Operator common.Address // signs settlements and refunds
	Payee    common.Address // earns the charges
	// Faucet holds test tokens and deposits them for test customers (dev
	// deployments only; zero if none).
	Faucet common.Address `json:",omitempty"`
}

// DefaultWithdrawalNotice is the notice period of a deployment that names
// none: a customer's owner can withdraw 24 hours after asking.
const DefaultWithdrawalNotice = 24 * time.Hour

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
	// ExtraGas is added to every transaction's gas limit (its estimate and
	// a fifth): for one whose gas depends on state another transaction of
	// its block may change first (a storage slot emptied before it writes
	// it). Unused gas is not paid for.
	ExtraGas uint64
}

// DepositGasRoom is the gas a deposit carries beyond its estimate and a
// fifth: a settle mined before it in its block can empty the balance it
// writes, and writing an empty slot costs far more than the estimate,
// made against a full one, allowed (x402's TestDepositInTheBlockOfASettle
// ran out of gas without it). Unused gas is not paid for.
const DepositGasRoom = 150_000

// Send signs and sends a transaction to (nil: contract creation) with data,
// waits for its receipt and fails if it reverted.
func (tr Transactor) Send(ctx context.Context, to *common.Address, data []byte) (*types.Receipt, error) {
	return tr.SendValue(ctx, to, nil, data)
}

// SendValue is Send with value wei attached.
func (tr Transactor) SendValue(ctx context.Context, to *common.Address, value *big.Int, data []byte) (*types.Receipt, error) {
	tx, err := tr.Submit(ctx, to, value, data)
	if err != nil {
		return nil, err
	}
	return tr.Wait(ctx, tx.Hash())
}

// Submit signs and sends a transaction as SendValue does, and returns it
// without waiting for its receipt (Wait does). Its nonce is the node's
// pending nonce of the key: callers sending from one key concurrently
// serialize their Submits, each followed by AwaitPendingNonce (and only
// those), so that each sees the one before.
func (tr Transactor) Submit(ctx context.Context, to *common.Address, value *big.Int, data []byte) (*types.Transaction, error) {
	from := crypto.PubkeyToAddress(tr.Key.PublicKey)
	nonce, err := tr.Backend.PendingNonceAt(ctx, from)
	if err != nil {
		return nil, err
	}
	id, err := tr.Backend.ChainID(ctx)
	if err != nil {
		return nil, err
	}
	head, err := tr.Backend.HeaderByNumber(ctx, nil)
	if err != nil {
		return nil, err
	}
	gas, err := tr.Backend.EstimateGas(ctx, ethereum.CallMsg{From: from, To: to, Value: value, Data: data})
	if err != nil {
		return nil, fmt.Errorf("settlement: estimate gas: %w", err)
	}
	gas = min(gas+gas/5+tr.ExtraGas, params.MaxTxGas)
	tip, feeCap, err := fees(ctx, tr.Backend, head, tr.TipCap, nil)
	if err != nil {
		return nil, err
	}
	tx, err := types.SignNewTx(tr.Key, types.LatestSignerForChainID(id), &types.DynamicFeeTx{
		ChainID: id, Nonce: nonce, GasTipCap: tip, GasFeeCap: feeCap, Gas: gas, To: to, Value: value, Data: data,
	})
	if err != nil {
		return nil, err
	}
	if err := tr.Backend.SendTransaction(ctx, tx); err != nil {
		return nil, fmt.Errorf("settlement: send: %w", err)
	}
	return tx, nil
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

// DeploySettlement deploys SettleflowSettlement for token (of the given
// decimals) and payee, with the transactor's key as owner, operator as the
// settling account and notice as the withdrawal notice period (whole
// seconds; 0 is DefaultWithdrawalNotice).
func (tr Transactor) DeploySettlement(ctx context.Context, token, payee, operator common.Address, decimals uint8, notice time.Duration) (common.Address, error) {
	unit, err := BaseUnits(1, decimals)
	if err != nil {
		return common.Address{}, err
	}
	if notice == 0 {
		notice = DefaultWithdrawalNotice
	}
	if notice < 0 || notice%time.Second != 0 {
		return common.Address{}, fmt.Errorf("settlement: withdrawal notice %s: it must be whole seconds, 0 or more", notice)
	}
	return tr.deploy(ctx, bindings.SettleflowSettlementMetaData.Bin,
		settlementABI.PackConstructor(token, payee, operator, unit, big.NewInt(int64(notice/time.Second))))
}

// DeployTestUSD deploys the 6-decimal test stablecoin, minted by the
// transactor's key. For simulated and dev chains only.
func (tr Transactor) DeployTestUSD(ctx context.Context) (common.Address, error) {
	return tr.deploy(ctx, bindings.TestUSDMetaData.Bin, nil)
}

// DevDeployment says what DeployDev sets up beside the contracts.
type DevDeployment struct {
	Payee common.Address
	// Faucet, if set, is the test faucet's account: it is minted Funds
	// (base units of the test token), given gas money if it has none, and
	// approves the contract for all of it. Nil: Funds are minted to the
	// operator.
	Faucet *ecdsa.PrivateKey
	Funds  *big.Int
	// Notice is the withdrawal notice (0: DefaultWithdrawalNotice).
	Notice time.Duration
}

// DeployDev sets up a dev chain in one go: it deploys the test stablecoin and
// the settlement contract with the transactor's key as minter, owner and
// operator, and funds the faucet.
func (tr Transactor) DeployDev(ctx context.Context, d DevDeployment) (Addresses, error) {
	op := crypto.PubkeyToAddress(tr.Key.PublicKey)
	a := Addresses{Operator: op, Payee: d.Payee}
	var err error
	if a.Token, err = tr.DeployTestUSD(ctx); err != nil {
		return a, fmt.Errorf("settlement: deploy token: %w", err)
	}
	if a.Contract, err = tr.DeploySettlement(ctx, a.Token, d.Payee, op, 6, d.Notice); err != nil {
		return a, fmt.Errorf("settlement: deploy contract: %w", err)
	}
	holder := op
	if d.Faucet != nil {
		holder = crypto.PubkeyToAddress(d.Faucet.PublicKey)
		a.Faucet = holder
	}
	if _, err = tr.Send(ctx, &a.Token, erc20ABI.PackMint(holder, d.Funds)); err != nil {
		return a, fmt.Errorf("settlement: mint: %w", err)
	}
	if d.Faucet == nil {
		return a, nil
	}
	eth, err := tr.Backend.BalanceAt(ctx, holder, nil)
	if err != nil {
		return a, err
	}
	if eth.Sign() == 0 {
		if _, err := tr.SendValue(ctx, &holder, big.NewInt(params.Ether), nil); err != nil {
			return a, fmt.Errorf("settlement: gas money for the faucet: %w", err)
		}
	}
	maxUint := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
	faucet := Transactor{Backend: tr.Backend, Key: d.Faucet, Mine: tr.Mine, TipCap: tr.TipCap}
	if _, err = faucet.Send(ctx, &a.Token, erc20ABI.PackApprove(a.Contract, maxUint)); err != nil {
		return a, fmt.Errorf("settlement: faucet approve: %w", err)
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
