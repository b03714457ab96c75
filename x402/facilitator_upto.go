package x402

import (
	"context"
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/settlement/contracts/bindings"
)

var (
	proxyABI = bindings.NewUptoPermit2Proxy()
	// nonceBitmapSelector is Permit2's nonceBitmap(address,uint256).
	nonceBitmapSelector = crypto.Keccak256([]byte("nonceBitmap(address,uint256)"))[:4]
	// receiveWithAuthorizationTypeHash is EIP-3009's type hash of a
	// transfer only its recipient may submit.
	receiveWithAuthorizationTypeHash = crypto.Keccak256Hash([]byte("ReceiveWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"))
	bytes32Type, _                   = abi.NewType("bytes32", "", nil)
	addressType, _                   = abi.NewType("address", "", nil)
)

// UptoReady reports whether the chain carries Permit2 and the upto proxy
// at their addresses (settlement.PaymentContractsAlloc), which the upto
// scheme needs.
func (f *Facilitator) UptoReady(ctx context.Context) error {
	for _, c := range []struct {
		name string
		at   common.Address
	}{{"Permit2", settlement.Permit2Address}, {"the x402 upto proxy", settlement.UptoProxyAddress}} {
		code, err := f.backend.CodeAt(ctx, c.at, nil)
		if err != nil {
			return fmt.Errorf("x402: reading the code at %s: %w", c.at.Hex(), err)
		}
		if len(code) == 0 {
			return fmt.Errorf("x402: this chain has no %s at %s, which the upto scheme pays through (a test chain kept by an earlier settleflow lacks it: start a new one)", c.name, c.at.Hex())
		}
	}
	return nil
}

// Permit2NonceUsed reports whether Permit2 marks owner's nonce used.
func (f *Facilitator) Permit2NonceUsed(ctx context.Context, owner common.Address, nonce *big.Int) (bool, error) {
	word := new(big.Int).Rsh(nonce, 8)
	bit := uint(new(big.Int).And(nonce, big.NewInt(0xff)).Uint64())
	data := append(append([]byte{}, nonceBitmapSelector...), common.LeftPadBytes(owner[:], 32)...)
	data = append(data, common.LeftPadBytes(word.Bytes(), 32)...)
	to := settlement.Permit2Address
	out, err := f.backend.CallContract(ctx, ethereum.CallMsg{To: &to, Data: data}, nil)
	if err != nil || len(out) != 32 {
		return false, fmt.Errorf("x402: Permit2 nonceBitmap: %v", err)
	}
	return new(big.Int).SetBytes(out).Bit(int(bit)) == 1, nil
}

// settleData is the proxy's settle(permit, amount, owner, witness,
// signature) for a.
func (a *UptoAuthorization) settleData(amount *big.Int) []byte {
	return proxyABI.PackSettle(bindings.ISignatureTransferPermitTransferFrom{
		Permitted: bindings.ISignatureTransferTokenPermissions{Token: a.Token, Amount: a.Max},
		Nonce:     a.Nonce, Deadline: a.Deadline,
	}, amount, a.From, bindings.UptoPermit2ProxyWitness{To: a.To, Facilitator: a.Facilitator, ValidAfter: a.ValidAfter}, a.Signature)
}

// CheckUpto checks on chain, before a workflow is created on it, that a
// (verified by the offer) can be settled for its whole maximum: its nonce
// unused, the payer's Permit2 allowance (412 permit2_allowance_required
// when short: the one-time approval the payer must make) and balance (402
// insufficient_funds), and the proxy's settle simulated from the
// collector. It sends nothing.
func (f *Facilitator) CheckUpto(ctx context.Context, a *UptoAuthorization) error {
	used, err := f.Permit2NonceUsed(ctx, a.From, a.Nonce)
	if err != nil {
		return err
	}
	if used {
		return ErrUsed
	}
	out, err := f.backend.CallContract(ctx, ethereum.CallMsg{To: &f.token, Data: erc20ABI.PackAllowance(a.From, settlement.Permit2Address)}, nil)
	if err != nil {
		return fmt.Errorf("x402: allowance: %w", err)
	}
	allowance, err := erc20ABI.UnpackAllowance(out)
	if err != nil {
		return fmt.Errorf("x402: allowance: %w", err)
	}
	if allowance.Cmp(a.Max) < 0 {
		return &Error{Status: 412, Code: CodePermit2Allowance, Message: fmt.Sprintf("the wallet %s allows Permit2 (%s) %s base units of %s, less than the %s this may cost: approve Permit2 once (token.approve(%s, max)), then send the same request again",
			a.From.Hex(), settlement.Permit2Address.Hex(), allowance, f.token.Hex(), a.Max, settlement.Permit2Address.Hex())}
	}
	bal, err := f.BalanceOf(ctx, a.From)
	if err != nil {
		return fmt.Errorf("x402: balanceOf: %w", err)
	}
	if bal.Cmp(a.Max) < 0 {
		return refused(CodeInsufficientFunds, "the wallet %s holds %s base units of %s, less than the %s this may cost", a.From.Hex(), bal, f.token.Hex(), a.Max)
	}
	proxy := settlement.UptoProxyAddress
	if _, err := f.backend.CallContract(ctx, ethereum.CallMsg{From: f.Collector(), To: &proxy, Data: a.settleData(a.Max)}, nil); err != nil {
		return refused(CodeSettlement, "the permit cannot be settled: %s", revertReason(err))
	}
	return nil
}

// UptoFunding is what FundUpto sent: the proxy's transfer from the payer to
// the collector and the deposit into the payer's customer balance (zero
// hashes for a step an earlier call made).
type UptoFunding struct {
	Transfer, Deposit common.Hash
	// Block is the deposit's block (0 when an earlier call made it).
	Block uint64
}

// FundUpto takes amount (base units, at most a.Max, more than 0) of a into
// the payer's customer balance (ref, with the owner the contract records
// for it), once however often it is called: the proxy's settle moves the
// amount from the payer to the collector (skipped once Permit2 marks the
// nonce used: only this collector can settle it), then the collector
// deposits it with depositWithAuthorization under a nonce derived from
// the payer and the permit's nonce (skipped once the token marks it
// used). A permit that can no longer be settled (expired, the payer's
// allowance or funds gone) is a 402 [*Error] and moves nothing; any other
// error is transient.
func (f *Facilitator) FundUpto(ctx context.Context, a *UptoAuthorization, amount *big.Int, ref [32]byte, owner common.Address) (UptoFunding, error) {
	var out UptoFunding
	if amount.Sign() <= 0 || amount.Cmp(a.Max) > 0 {
		return out, refused(CodeAmount, "cannot take %s of a permit of at most %s", amount, a.Max)
	}
	if a.Facilitator != f.Collector() {
		return out, refused(CodeUptoFacilitator, "the permit names facilitator %s; this server settles as %s", a.Facilitator.Hex(), f.Collector().Hex())
	}
	defer f.locks.lock(a.Key())()
	used, err := f.Permit2NonceUsed(ctx, a.From, a.Nonce)
	if err != nil {
		return out, err
	}
	if !used {
		proxy := settlement.UptoProxyAddress
		data := a.settleData(amount)
		if _, err := f.backend.CallContract(ctx, ethereum.CallMsg{From: f.Collector(), To: &proxy, Data: data}, nil); err != nil {
			return out, refused(CodeSettlement, "the permit cannot be settled: %s", revertReason(err))
		}
		rcpt, err := f.send(ctx, &proxy, data)
		if err != nil {
			return out, &SendError{Err: err}
		}
		out.Transfer = rcpt.TxHash
	}
	salt := crypto.Keccak256Hash([]byte("settleflow x402 upto deposit"), a.From[:], word(a.Nonce))
	dep, err := f.depositOnce(ctx, ref, owner, amount, salt)
	if err != nil {
		return out, &DepositError{Transfer: out.Transfer, Err: err}
	}
	out.Deposit, out.Block = dep.hash, dep.block
	return out, nil
}

// deposited is what depositOnce sent: nothing (zero hash) when an earlier
// call made the deposit.
type deposited struct {
	hash  common.Hash
	block uint64
}

// depositOnce credits ref with amount from the collector's tokens, once per
// salt however often it is called: the collector signs an EIP-3009
// ReceiveWithAuthorization to the contract whose nonce is the one the
// contract's depositWithAuthorization derives from (ref, owner, salt), so
// the token refuses a second use, and this skips it once the token marks
// it used.
func (f *Facilitator) depositOnce(ctx context.Context, ref [32]byte, owner common.Address, amount *big.Int, salt common.Hash) (deposited, error) {
	packed, err := abi.Arguments{{Type: bytes32Type}, {Type: addressType}, {Type: bytes32Type}}.Pack(ref, owner, salt)
	if err != nil {
		return deposited{}, err
	}
	nonce := crypto.Keccak256Hash(packed)
	collector := f.Collector()
	res, err := f.backend.CallContract(ctx, ethereum.CallMsg{To: &f.token, Data: erc20ABI.PackAuthorizationState(collector, nonce)}, nil)
	if err != nil {
		return deposited{}, fmt.Errorf("authorizationState: %w", err)
	}
	done, err := erc20ABI.UnpackAuthorizationState(res)
	if err != nil || done {
		return deposited{}, err
	}
	validBefore := new(big.Int).Set(maxUint256)
	structHash := crypto.Keccak256(receiveWithAuthorizationTypeHash[:], common.LeftPadBytes(collector[:], 32),
		common.LeftPadBytes(f.contract[:], 32), word(amount), word(common.Big0), word(validBefore), nonce[:])
	sep := f.domain.Separator()
	digest := crypto.Keccak256([]byte{0x19, 0x01}, sep[:], structHash)
	sig, err := crypto.Sign(digest, f.tx.Key)
	if err != nil {
		return deposited{}, err
	}
	var r, s [32]byte
	copy(r[:], sig[:32])
	copy(s[:], sig[32:64])
	rcpt, err := f.send(ctx, &f.contract, contractABI.PackDepositWithAuthorization(ref, owner, collector, amount, common.Big0, validBefore, salt, sig[64]+27, r, s))
	if err != nil {
		return deposited{}, fmt.Errorf("depositWithAuthorization: %w", err)
	}
	return deposited{hash: rcpt.TxHash, block: rcpt.BlockNumber.Uint64()}, nil
}

// errNotUpto is a stored authorization that is not an upto payment.
var errNotUpto = errors.New("x402: the workflow's authorization is not an upto payment")

var (
	transferTopic          = crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))
	authorizationUsedTopic = crypto.Keccak256Hash([]byte("AuthorizationUsed(address,bytes32)"))
)

// RecoverWindow is how many blocks back Recover looks for the transfer of
// a used authorization (about a week at 12 s a block; a day on a 2 s L2).
const RecoverWindow = 50_000

// receivedIn reports how much a transaction's token Transfer logs moved
// from payer to the collector.
func (f *Facilitator) receivedIn(ctx context.Context, tx common.Hash, payer common.Address) (*big.Int, error) {
	rcpt, err := f.backend.TransactionReceipt(ctx, tx)
	if err != nil {
		return nil, err
	}
	sum := new(big.Int)
	collector := f.Collector()
	for _, l := range rcpt.Logs {
		if l.Address == f.token && len(l.Topics) == 3 && l.Topics[0] == transferTopic &&
			common.BytesToAddress(l.Topics[1][:]) == payer && common.BytesToAddress(l.Topics[2][:]) == collector {
			sum.Add(sum, new(big.Int).SetBytes(l.Data))
		}
	}
	return sum, nil
}

// Recover is Pay for an exact authorization whose nonce the token marks
// used (ErrUsed): if the transaction that used it paid the collector the
// authorization's value (this server's earlier transfer, or a front-runner
// who submitted the authorization itself), it makes the deposit into the
// payer's balance unless an earlier call made it (once per authorization,
// depositOnce), and reports paid. An authorization used otherwise (the
// wallet spent the nonce on another transfer) is not paid: nothing is
// deposited.
func (f *Facilitator) Recover(ctx context.Context, a *ExactAuthorization, ref [32]byte, owner common.Address) (paid bool, deposit common.Hash, err error) {
	defer f.locks.lock(a.Key())()
	head, err := f.backend.HeaderByNumber(ctx, nil)
	if err != nil {
		return false, common.Hash{}, err
	}
	from := new(big.Int)
	if n := head.Number.Uint64(); n > RecoverWindow {
		from.SetUint64(n - RecoverWindow)
	}
	logs, err := f.backend.FilterLogs(ctx, ethereum.FilterQuery{FromBlock: from, Addresses: []common.Address{f.token},
		Topics: [][]common.Hash{{authorizationUsedTopic}, {common.BytesToHash(a.From[:])}, {common.Hash(a.Nonce)}}})
	if err != nil {
		return false, common.Hash{}, fmt.Errorf("x402: reading the token's AuthorizationUsed logs: %w", err)
	}
	for _, l := range logs {
		got, err := f.receivedIn(ctx, l.TxHash, a.From)
		if err != nil {
			return false, common.Hash{}, err
		}
		if got.Cmp(a.Value) != 0 {
			continue
		}
		dep, err := f.depositOnce(ctx, ref, owner, a.Value, exactSalt(a))
		if err != nil {
			return true, common.Hash{}, &DepositError{Transfer: l.TxHash, Err: err}
		}
		return true, dep.hash, nil
	}
	return false, common.Hash{}, nil
}

// Swept is a payment Sweep credited.
type Swept struct {
	Payer             common.Address
	Amount            *big.Int
	Transfer, Deposit common.Hash
}

// Sweep credits every exact payment to the collector since block from
// whose deposit was never made (the server crashed between the transfer
// and the deposit, the deposit failed, or a front-runner submitted the
// authorization and its buyer never came back) to its payer's customer
// balance, once each (depositOnce), and returns what it credited. account
// names a payer's customer balance (its reference and the owner the
// contract records). Run it periodically; the collector holds no tokens
// between payments, so anything it holds is such a payment.
func (f *Facilitator) Sweep(ctx context.Context, from uint64, account func(context.Context, common.Address) ([32]byte, common.Address, error)) ([]Swept, error) {
	logs, err := f.backend.FilterLogs(ctx, ethereum.FilterQuery{FromBlock: new(big.Int).SetUint64(from), Addresses: []common.Address{f.token},
		Topics: [][]common.Hash{{authorizationUsedTopic}}})
	if err != nil {
		return nil, fmt.Errorf("x402: reading the token's AuthorizationUsed logs: %w", err)
	}
	var out []Swept
	for _, l := range logs {
		if len(l.Topics) != 3 {
			continue
		}
		payer := common.BytesToAddress(l.Topics[1][:])
		if payer == f.Collector() {
			continue // the collector's own deposits
		}
		got, err := f.receivedIn(ctx, l.TxHash, payer)
		if err != nil {
			return out, err
		}
		if got.Sign() == 0 {
			continue
		}
		ref, owner, err := account(ctx, payer)
		if err != nil {
			return out, err
		}
		a := &ExactAuthorization{From: payer, Nonce: l.Topics[2]}
		unlock := f.locks.lock(a.Key())
		dep, err := f.depositOnce(ctx, ref, owner, got, exactSalt(a))
		unlock()
		if err != nil {
			return out, &DepositError{Transfer: l.TxHash, Err: err}
		}
		if dep.hash != (common.Hash{}) {
			out = append(out, Swept{Payer: payer, Amount: got, Transfer: l.TxHash, Deposit: dep.hash})
		}
	}
	return out, nil
}
