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
	f.mu.Lock()
	defer f.mu.Unlock()
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
		rcpt, err := f.tx.Send(ctx, &proxy, data)
		if err != nil {
			return out, &SendError{Err: err}
		}
		out.Transfer = rcpt.TxHash
	}
	salt := crypto.Keccak256Hash([]byte("settleflow x402 upto deposit"), a.From[:], word(a.Nonce))
	packed, err := abi.Arguments{{Type: bytes32Type}, {Type: addressType}, {Type: bytes32Type}}.Pack(ref, owner, salt)
	if err != nil {
		return out, err
	}
	nonce := crypto.Keccak256Hash(packed)
	collector := f.Collector()
	res, err := f.backend.CallContract(ctx, ethereum.CallMsg{To: &f.token, Data: erc20ABI.PackAuthorizationState(collector, nonce)}, nil)
	if err != nil {
		return out, fmt.Errorf("x402: authorizationState: %w", err)
	}
	done, err := erc20ABI.UnpackAuthorizationState(res)
	if err != nil {
		return out, err
	}
	if done {
		return out, nil
	}
	validBefore := new(big.Int).Set(maxUint256)
	structHash := crypto.Keccak256(receiveWithAuthorizationTypeHash[:], common.LeftPadBytes(collector[:], 32),
		common.LeftPadBytes(f.contract[:], 32), word(amount), word(common.Big0), word(validBefore), nonce[:])
	sep := f.domain.Separator()
	digest := crypto.Keccak256([]byte{0x19, 0x01}, sep[:], structHash)
	sig, err := crypto.Sign(digest, f.tx.Key)
	if err != nil {
		return out, err
	}
	var r, s [32]byte
	copy(r[:], sig[:32])
	copy(s[:], sig[32:64])
	rcpt, err := f.tx.Send(ctx, &f.contract, contractABI.PackDepositWithAuthorization(ref, owner, collector, amount, common.Big0, validBefore, salt, sig[64]+27, r, s))
	if err != nil {
		return out, &DepositError{Transfer: out.Transfer, Err: err}
	}
	out.Deposit, out.Block = rcpt.TxHash, rcpt.BlockNumber.Uint64()
	return out, nil
}

// errNotUpto is a stored authorization that is not an upto payment.
var errNotUpto = errors.New("x402: the workflow's authorization is not an upto payment")
