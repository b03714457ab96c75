package x402

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/settlement/contracts/bindings"
)

// Facilitator is the x402 facilitator the server plays itself, on one
// chain: it checks an authorization against the token (nonce unused, the
// payer's balance, a simulated transferWithAuthorization), submits it, so
// the amount moves from the payer to the collector, and deposits the amount
// into the payer's customer balance in the settlement contract. Its
// transactions come from the collector's key, never the settlement
// operator's (whose nonces the settler owns), one at a time.
type Facilitator struct {
	backend  settlement.Backend
	tx       settlement.Transactor
	token    common.Address
	contract common.Address
	domain   Domain
	mine     func()
	// sendMu serializes the collector's sends (each takes the node's
	// pending nonce); receipts are waited for outside it, so payments of
	// different wallets share blocks. locks serializes the work on one
	// authorization (its transfer and its deposit).
	sendMu sync.Mutex
	locks  keyedMutex[common.Hash]
}

// FacilitatorConfig configures [NewFacilitator].
type FacilitatorConfig struct {
	// Backend is the chain.
	Backend settlement.Backend
	// Collector is the key of the account the payments are made to
	// (payTo): it submits them and deposits them, paying the gas, so it
	// needs the chain's native currency. It must not be the settlement
	// operator's key.
	Collector *ecdsa.PrivateKey
	// Token is the stablecoin (with EIP-3009 and an EIP-712 name and
	// version), Contract the settlement contract.
	Token, Contract common.Address
	// Mine, if set, is called while waiting for a receipt and for a
	// deposit's confirmations (the simulated chain's Commit: a chain that
	// makes blocks only on demand).
	Mine func()
}

var (
	erc20ABI    = bindings.NewTestUSD()
	contractABI = bindings.NewSettleflowSettlement()
)

// NewFacilitator reads the token's EIP-712 domain (name(), version(), the
// chain id) and checks it against the token's DOMAIN_SEPARATOR().
func NewFacilitator(ctx context.Context, c FacilitatorConfig) (*Facilitator, error) {
	if c.Backend == nil || c.Collector == nil {
		return nil, errors.New("x402: FacilitatorConfig.Backend and Collector are required")
	}
	// The collector's deposits write its customers' balances, which a
	// settle earlier in the same block can empty (settlement.DepositGasRoom),
	// so every collector transaction carries room for it.
	f := &Facilitator{backend: c.Backend, token: c.Token, contract: c.Contract, mine: c.Mine,
		tx: settlement.Transactor{Backend: c.Backend, Key: c.Collector, Mine: c.Mine, ExtraGas: settlement.DepositGasRoom}}
	id, err := c.Backend.ChainID(ctx)
	if err != nil {
		return nil, fmt.Errorf("x402: chain id: %w", err)
	}
	name, err := f.callString(ctx, erc20ABI.PackName(), erc20ABI.UnpackName)
	if err != nil {
		return nil, fmt.Errorf("x402: the token %s has no name(): %w", c.Token, err)
	}
	version, err := f.callString(ctx, erc20ABI.PackVersion(), erc20ABI.UnpackVersion)
	if err != nil {
		return nil, fmt.Errorf("x402: the token %s has no version() (EIP-3009 tokens name their EIP-712 version): %w", c.Token, err)
	}
	f.domain = Domain{Name: name, Version: version, ChainID: id, Contract: c.Token}
	out, err := c.Backend.CallContract(ctx, ethereum.CallMsg{To: &c.Token, Data: erc20ABI.PackDOMAINSEPARATOR()}, nil)
	if err != nil || len(out) != 32 {
		return nil, fmt.Errorf("x402: the token %s has no DOMAIN_SEPARATOR(): %v", c.Token, err)
	}
	if common.BytesToHash(out) != f.domain.Separator() {
		return nil, fmt.Errorf("x402: the token %s's DOMAIN_SEPARATOR() is not EIP-712's of name %q, version %q, chain %s", c.Token, name, version, id)
	}
	return f, nil
}

func (f *Facilitator) callString(ctx context.Context, data []byte, unpack func([]byte) (string, error)) (string, error) {
	out, err := f.backend.CallContract(ctx, ethereum.CallMsg{To: &f.token, Data: data}, nil)
	if err != nil {
		return "", err
	}
	return unpack(out)
}

// send sends a collector transaction and waits for its receipt, holding
// sendMu only while it is sent.
func (f *Facilitator) send(ctx context.Context, to *common.Address, data []byte) (*types.Receipt, error) {
	f.sendMu.Lock()
	tx, err := f.tx.Submit(ctx, to, nil, data)
	if err == nil {
		// The next send reads the node's pending nonce: not before the
		// node counts this one.
		settlement.AwaitPendingNonce(ctx, f.backend, f.Collector(), tx.Nonce())
	}
	f.sendMu.Unlock()
	if err != nil {
		return nil, err
	}
	return f.tx.Wait(ctx, tx.Hash())
}

// Domain is the token's EIP-712 domain.
func (f *Facilitator) Domain() Domain { return f.domain }

// Collector is the address payments are made to.
func (f *Facilitator) Collector() common.Address { return crypto.PubkeyToAddress(f.tx.Key.PublicKey) }

// Network is the chain's CAIP-2 id.
func (f *Facilitator) Network() string { return Network(f.domain.ChainID) }

// Used reports whether the token marks a's nonce used.
func (f *Facilitator) Used(ctx context.Context, a *ExactAuthorization) (bool, error) {
	out, err := f.backend.CallContract(ctx, ethereum.CallMsg{To: &f.token, Data: erc20ABI.PackAuthorizationState(a.From, a.Nonce)}, nil)
	if err != nil {
		return false, fmt.Errorf("x402: authorizationState: %w", err)
	}
	return erc20ABI.UnpackAuthorizationState(out)
}

// BalanceOf is an account's token balance in base units.
func (f *Facilitator) BalanceOf(ctx context.Context, account common.Address) (*big.Int, error) {
	return settlement.TokenBalance(ctx, f.backend, f.token, account)
}

// ErrUsed is Pay's error for an authorization whose nonce the token marks
// used: it was submitted before (by this server, or by whoever held it).
var ErrUsed = errors.New("x402: the authorization's nonce is used")

// SendError is Pay's error when the transfer was sent and not seen
// mined: it may have moved the amount (a front-runner may have sent it
// first), and the authorization is then used.
type SendError struct{ Err error }

func (e *SendError) Error() string {
	return fmt.Sprintf("x402: the transfer was sent but not confirmed: %v", e.Err)
}

func (e *SendError) Unwrap() error { return e.Err }

// DepositError is Pay's error when the transfer was made and the deposit
// into the payer's balance failed: the amount is with the collector.
type DepositError struct {
	Transfer common.Hash
	Err      error
}

func (e *DepositError) Error() string {
	return fmt.Sprintf("x402: the payment %s was received but not deposited (the amount is with the collector): %v", e.Transfer.Hex(), e.Err)
}

func (e *DepositError) Unwrap() error { return e.Err }

// Pay settles a (verified by [Offer.Verify]) and deposits its value for the
// customer ref with the owner the contract records for it (the zero
// address for none). Before sending anything it refuses, as a 402 [*Error]
// that moves nothing, a payer who holds less than the value and an
// authorization the token would revert (its simulation); an authorization
// whose nonce is used is ErrUsed. It returns the transactions' hashes.
func (f *Facilitator) Pay(ctx context.Context, a *ExactAuthorization, ref [32]byte, owner common.Address) (Payment, error) {
	defer f.locks.lock(a.Key())()
	used, err := f.Used(ctx, a)
	if err != nil {
		return Payment{}, err
	}
	if used {
		return Payment{}, ErrUsed
	}
	bal, err := f.BalanceOf(ctx, a.From)
	if err != nil {
		return Payment{}, fmt.Errorf("x402: balanceOf: %w", err)
	}
	if bal.Cmp(a.Value) < 0 {
		return Payment{}, refused(CodeInsufficientFunds, "the wallet %s holds %s base units of %s, less than the %s this costs", a.From.Hex(), bal, f.token.Hex(), a.Value)
	}
	v, r, s := a.VRS()
	data := erc20ABI.PackTransferWithAuthorization(a.From, a.To, a.Value, a.ValidAfter, a.ValidBefore, a.Nonce, v, r, s)
	collector := f.Collector()
	if _, err := f.backend.CallContract(ctx, ethereum.CallMsg{From: collector, To: &f.token, Data: data}, nil); err != nil {
		return Payment{}, refused(CodeSettlement, "the token refuses the transfer: %s", revertReason(err))
	}
	rcpt, err := f.send(ctx, &f.token, data)
	if err != nil {
		if rcpt == nil {
			return Payment{}, &SendError{Err: err}
		}
		// Mined and reverted: nothing moved. A transaction ahead of it in
		// its block used the nonce (a front-run: ErrUsed, and the retry
		// recovers it) or took the funds.
		if used, uerr := f.Used(ctx, a); uerr == nil && used {
			return Payment{}, ErrUsed
		}
		if bal, berr := f.BalanceOf(ctx, a.From); berr == nil && bal.Cmp(a.Value) < 0 {
			return Payment{}, refused(CodeInsufficientFunds, "the wallet %s holds %s base units of %s, less than the %s this costs", a.From.Hex(), bal, f.token.Hex(), a.Value)
		}
		return Payment{}, refused(CodeSettlement, "the transfer %s reverted; nothing moved", rcpt.TxHash.Hex())
	}
	p := Payment{Transfer: rcpt.TxHash}
	dep, err := f.depositOnce(ctx, ref, owner, a.Value, exactSalt(a))
	if err != nil {
		return p, &DepositError{Transfer: p.Transfer, Err: err}
	}
	p.Deposit, p.Block = dep.hash, dep.block
	return p, nil
}

// exactSalt names an exact payment's deposit (depositOnce): one per
// authorization.
func exactSalt(a *ExactAuthorization) common.Hash {
	return crypto.Keccak256Hash([]byte("settleflow x402 exact deposit"), a.From[:], a.Nonce[:])
}

// Payment is what Pay sent: the transfer to the collector and the deposit
// into the customer's balance.
type Payment struct {
	Transfer, Deposit common.Hash
	// Block is the deposit's block (0 when an earlier call made it).
	Block uint64
}

// revertReason names a reverted call's custom error (the token's), or
// gives the node's message.
func revertReason(err error) string {
	var de rpc.DataError
	if errors.As(err, &de) {
		var data []byte
		switch d := de.ErrorData().(type) {
		case string:
			data, _ = hexutil.Decode(d)
		case []byte:
			data = d
		}
		if len(data) >= 4 {
			if e, uerr := erc20ABI.UnpackError(data); uerr == nil {
				n := fmt.Sprintf("%T", e)
				if i := strings.LastIndex(n, "TestUSD"); i >= 0 {
					n = n[i+len("TestUSD"):]
				}
				return n
			}
		}
	}
	return err.Error()
}
