package x402

import (
	"crypto/ecdsa"
	"encoding/json"
	"math/big"
	"regexp"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/settleflow/settleflow/settlement"
)

// SchemeUpto is the scheme of an amount up to a maximum the buyer signs,
// the seller charging what was used: on EVM a Permit2
// permitWitnessTransferFrom through the scheme's proxy
// (specs/schemes/upto/scheme_upto_evm.md). The engine sells its
// outcome-priced products (capped, success fee, hybrid) by it: the maximum
// is the quote, the amount taken the workflow's charge, nothing when it is 0.
const SchemeUpto = "upto"

// UptoPayload is the upto scheme's payload on EVM.
type UptoPayload struct {
	// Signature is the payer's 65-byte EIP-712 signature over the permit,
	// 0x-hex.
	Signature            string                `json:"signature"`
	Permit2Authorization *Permit2Authorization `json:"permit2Authorization"`
}

// Permit2Authorization is a Permit2 PermitWitnessTransferFrom as x402
// carries it: addresses 0x-hex, numbers decimal strings.
type Permit2Authorization struct {
	From      string           `json:"from"`
	Permitted TokenPermissions `json:"permitted"`
	Spender   string           `json:"spender"`
	Nonce     string           `json:"nonce"`
	Deadline  string           `json:"deadline"`
	Witness   UptoWitness      `json:"witness"`
}

// TokenPermissions is the token and the most that may be taken.
type TokenPermissions struct {
	Token  string `json:"token"`
	Amount string `json:"amount"`
}

// UptoWitness binds the recipient, the one account that may settle and the
// start of validity into the signature.
type UptoWitness struct {
	To          string `json:"to"`
	Facilitator string `json:"facilitator"`
	ValidAfter  string `json:"validAfter"`
}

// UptoAuthorization is an upto payload parsed: what Permit2 and the proxy
// check.
type UptoAuthorization struct {
	From, Token     common.Address
	Max             *big.Int
	Spender         common.Address
	Nonce, Deadline *big.Int
	To, Facilitator common.Address
	ValidAfter      *big.Int
	// Signature is 65 bytes: r, s, v.
	Signature []byte
}

var (
	permit2DomainTypeHash    = crypto.Keccak256Hash([]byte("EIP712Domain(string name,uint256 chainId,address verifyingContract)"))
	tokenPermissionsTypeHash = crypto.Keccak256Hash([]byte("TokenPermissions(address token,uint256 amount)"))
	uptoWitnessTypeHash      = crypto.Keccak256Hash([]byte("Witness(address to,address facilitator,uint256 validAfter)"))
	// permitWitnessTypeHash is Permit2's stub with the proxy's witness type
	// string appended, as permitWitnessTransferFrom hashes it.
	permitWitnessTypeHash = crypto.Keccak256Hash([]byte("PermitWitnessTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,uint256 deadline," +
		"Witness witness)TokenPermissions(address token,uint256 amount)Witness(address to,address facilitator,uint256 validAfter)"))
	hexUintPattern = regexp.MustCompile(`^0x[0-9a-fA-F]{1,64}$`)
)

// Permit2Separator is Permit2's EIP-712 domain separator on chainID.
func Permit2Separator(chainID *big.Int) common.Hash {
	return crypto.Keccak256Hash(permit2DomainTypeHash[:], crypto.Keccak256([]byte("Permit2")), word(chainID),
		common.LeftPadBytes(settlement.Permit2Address[:], 32))
}

// WitnessHash is the witness's EIP-712 hash, as the proxy computes it.
func (a *UptoAuthorization) WitnessHash() common.Hash {
	return crypto.Keccak256Hash(uptoWitnessTypeHash[:], common.LeftPadBytes(a.To[:], 32), common.LeftPadBytes(a.Facilitator[:], 32), word(a.ValidAfter))
}

// Digest is the EIP-712 digest the payer signs on chainID.
func (a *UptoAuthorization) Digest(chainID *big.Int) common.Hash {
	perms := crypto.Keccak256(tokenPermissionsTypeHash[:], common.LeftPadBytes(a.Token[:], 32), word(a.Max))
	w := a.WitnessHash()
	structHash := crypto.Keccak256(permitWitnessTypeHash[:], perms, common.LeftPadBytes(a.Spender[:], 32), word(a.Nonce), word(a.Deadline), w[:])
	sep := Permit2Separator(chainID)
	return crypto.Keccak256Hash([]byte{0x19, 0x01}, sep[:], structHash)
}

// Key is the authorization's identity: keccak256(from, nonce), the pair
// Permit2 marks used. One key pays for one workflow.
func (a *UptoAuthorization) Key() common.Hash {
	return crypto.Keccak256Hash(a.From[:], word(a.Nonce))
}

// Signer recovers the address that signed a on chainID, refusing a
// signature Permit2 would not take from an EOA (v other than 27/28 or 0/1,
// s in the upper half).
func (a *UptoAuthorization) Signer(chainID *big.Int) (common.Address, error) {
	return recoverEOA(a.Signature, a.Digest(chainID))
}

// Sign signs a with key on chainID, setting a.From and a.Signature (v 27
// or 28): what a wallet does for the upto scheme. For Go agents and tests.
func (a *UptoAuthorization) Sign(key *ecdsa.PrivateKey, chainID *big.Int) error {
	a.From = crypto.PubkeyToAddress(key.PublicKey)
	sig, err := signEOA(key, a.Digest(chainID))
	a.Signature = sig
	return err
}

// Wire is a's form in an upto payload (numbers in decimal, as the
// official client writes them).
func (a *UptoAuthorization) Wire() UptoPayload {
	return UptoPayload{
		Signature: "0x" + common.Bytes2Hex(a.Signature),
		Permit2Authorization: &Permit2Authorization{
			From:      a.From.Hex(),
			Permitted: TokenPermissions{Token: a.Token.Hex(), Amount: a.Max.String()},
			Spender:   a.Spender.Hex(), Nonce: a.Nonce.String(), Deadline: a.Deadline.String(),
			Witness: UptoWitness{To: a.To.Hex(), Facilitator: a.Facilitator.Hex(), ValidAfter: a.ValidAfter.String()},
		},
	}
}

// parseNonce reads Permit2's uint256 nonce: a decimal string (what the
// official client sends) or 0x-hex of at most 32 bytes (the spec's
// example).
func parseNonce(field, s string) (*big.Int, *Error) {
	if strings.HasPrefix(s, "0x") {
		if !hexUintPattern.MatchString(s) {
			return nil, malformed("%s must be a decimal string or 0x-hex of at most 32 bytes", field)
		}
		v, _ := new(big.Int).SetString(s[2:], 16)
		return v, nil
	}
	return parseUint256(field, s)
}

// ParseUpto reads an upto scheme payload on EVM: every field present and
// canonical, a 65-byte signature (an EOA's).
func ParseUpto(raw json.RawMessage) (*UptoAuthorization, error) {
	var p UptoPayload
	if err := strictJSON(raw, &p); err != nil {
		return nil, malformed("the upto payload is not {signature, permit2Authorization}: %v", err)
	}
	if p.Permit2Authorization == nil {
		return nil, malformed("payload.permit2Authorization is required")
	}
	a := p.Permit2Authorization
	var out UptoAuthorization
	var e *Error
	const f = "payload.permit2Authorization."
	if out.From, e = ParseAddress(f+"from", a.From); e != nil {
		return nil, e
	}
	if out.Token, e = ParseAddress(f+"permitted.token", a.Permitted.Token); e != nil {
		return nil, e
	}
	if out.Max, e = parseUint256(f+"permitted.amount", a.Permitted.Amount); e != nil {
		return nil, e
	}
	if out.Spender, e = ParseAddress(f+"spender", a.Spender); e != nil {
		return nil, e
	}
	if out.Nonce, e = parseNonce(f+"nonce", a.Nonce); e != nil {
		return nil, e
	}
	if out.Deadline, e = parseUint256(f+"deadline", a.Deadline); e != nil {
		return nil, e
	}
	if out.To, e = ParseAddress(f+"witness.to", a.Witness.To); e != nil {
		return nil, e
	}
	if out.Facilitator, e = ParseAddress(f+"witness.facilitator", a.Witness.Facilitator); e != nil {
		return nil, e
	}
	if out.ValidAfter, e = parseUint256(f+"witness.validAfter", a.Witness.ValidAfter); e != nil {
		return nil, e
	}
	if !sigPattern.MatchString(p.Signature) {
		return nil, malformed("payload.signature must be a 65-byte signature in 0x-prefixed hex (r, s, v)")
	}
	out.Signature = hexutil.MustDecode(strings.ToLower(p.Signature))
	return &out, nil
}

// verifyUpto checks an upto payload against the offer at now, all that
// needs no chain, in the order of the scheme's verification: the permit's
// spender (the proxy), recipient (payTo), facilitator (this server's
// collector), token and maximum (the offer's), its window (valid now, and
// until the workflow can have run and settled: the offer's
// maxTimeoutSeconds less UptoMargin at least) and the payer's signature.
func (o *Offer) verifyUpto(raw json.RawMessage, now time.Time) (*UptoAuthorization, error) {
	a, err := ParseUpto(raw)
	if err != nil {
		return nil, err
	}
	want := o.Requirements
	payTo := common.HexToAddress(want.PayTo)
	max, _ := new(big.Int).SetString(want.Amount, 10)
	unix := now.Unix()
	// The window a permit must leave: the offer's timeout, less the time
	// the client took to sign and send it (UptoMargin).
	need := unix + want.MaxTimeoutSeconds - int64(UptoMargin/time.Second)
	switch {
	case a.Spender != settlement.UptoProxyAddress:
		return nil, refused(CodeUptoSpender, "the permit's spender is %s; upto payments are taken by the proxy at %s", a.Spender.Hex(), settlement.UptoProxyAddress.Hex())
	case a.To != payTo:
		return nil, refused(CodeRecipient, "the permit pays %s; this resource is paid to %s", a.To.Hex(), payTo.Hex())
	case a.Facilitator != common.HexToAddress(want.Extra["facilitatorAddress"]):
		return nil, refused(CodeUptoFacilitator, "the permit names facilitator %s; this server settles as %s", a.Facilitator.Hex(), want.Extra["facilitatorAddress"])
	case a.Token != common.HexToAddress(want.Asset):
		return nil, refused(CodeAsset, "the permit is for token %s; this resource is paid in %s", a.Token.Hex(), want.Asset)
	case a.Max.Cmp(max) != 0:
		return nil, refused(CodeAmount, "the permit's maximum is %s; this request's quote, the most it can cost, is %s", a.Max, max)
	case a.Deadline.Cmp(big.NewInt(need)) < 0:
		return nil, refused(CodeValidBefore, "the permit's deadline %s (unix) is before %d: the workflow must be able to run and be charged before it expires (maxTimeoutSeconds %d, less %s)", a.Deadline, need, want.MaxTimeoutSeconds, UptoMargin)
	case a.Deadline.Cmp(big.NewInt(unix+int64(MaxValidity/time.Second))) > 0:
		return nil, refused(CodeValidBefore, "the permit's deadline %s (unix) is more than %s from now: a permit is answered by its workflow for 24 hours, so it may not outlive that", a.Deadline, MaxValidity)
	case a.ValidAfter.Cmp(big.NewInt(unix)) > 0:
		return nil, refused(CodeValidAfter, "the permit is valid only from %s (unix); it is %d", a.ValidAfter, unix)
	}
	signer, serr := a.Signer(o.Domain.ChainID)
	if serr != nil {
		return nil, refused(CodeSignature, "the signature is %v", serr)
	}
	if signer != a.From {
		return nil, refused(CodeSignature, "the signature is not %s's over this permit on chain %s (it recovers %s)", a.From.Hex(), o.Domain.ChainID, signer.Hex())
	}
	return a, nil
}

// UptoMargin is how much of an upto offer's maxTimeoutSeconds a permit may
// have spent before it reaches the server (signing, sending): a deadline
// sooner than now plus maxTimeoutSeconds less this is refused.
const UptoMargin = 30 * time.Second
