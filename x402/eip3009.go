package x402

import (
	"crypto/ecdsa"
	"errors"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/crypto"
)

// Domain is a token's EIP-712 domain, as EIP-3009 signatures name it.
type Domain struct {
	Name, Version string
	ChainID       *big.Int
	Contract      common.Address
}

var (
	domainTypeHash = crypto.Keccak256Hash([]byte("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"))
	// TransferWithAuthorizationTypeHash is EIP-3009's type hash of a
	// transfer anyone may submit.
	TransferWithAuthorizationTypeHash = crypto.Keccak256Hash([]byte("TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"))
)

func word(v *big.Int) []byte { return math.U256Bytes(new(big.Int).Set(v)) }

// Separator is the domain's separator (the token's DOMAIN_SEPARATOR()).
func (d Domain) Separator() common.Hash {
	return crypto.Keccak256Hash(domainTypeHash[:], crypto.Keccak256([]byte(d.Name)), crypto.Keccak256([]byte(d.Version)),
		word(d.ChainID), common.LeftPadBytes(d.Contract[:], 32))
}

// Digest is the EIP-712 digest the payer signs for a.
func (a *ExactAuthorization) Digest(d Domain) common.Hash {
	structHash := crypto.Keccak256(TransferWithAuthorizationTypeHash[:], common.LeftPadBytes(a.From[:], 32),
		common.LeftPadBytes(a.To[:], 32), word(a.Value), word(a.ValidAfter), word(a.ValidBefore), a.Nonce[:])
	sep := d.Separator()
	return crypto.Keccak256Hash([]byte{0x19, 0x01}, sep[:], structHash)
}

// Key is the authorization's identity: keccak256(from, nonce), the pair
// the token marks used. One key pays for one workflow.
func (a *ExactAuthorization) Key() common.Hash {
	return crypto.Keccak256Hash(a.From[:], a.Nonce[:])
}

// VRS splits the signature as transferWithAuthorization takes it (v 27 or
// 28).
func (a *ExactAuthorization) VRS() (v uint8, r, s [32]byte) {
	copy(r[:], a.Signature[:32])
	copy(s[:], a.Signature[32:64])
	v = a.Signature[64]
	if v < 27 {
		v += 27
	}
	return v, r, s
}

// errBadSignature is any signature the token would not accept.
var errBadSignature = errors.New("not a valid secp256k1 signature (v 27/28 or 0/1, low s)")

// Signer recovers the address that signed a for domain d, refusing what
// the token refuses: a v other than 27/28 (or 0/1), an s in the upper half
// of the curve order, an r or s out of range.
func (a *ExactAuthorization) Signer(d Domain) (common.Address, error) {
	return recoverEOA(a.Signature, a.Digest(d))
}

// recoverEOA recovers the address whose 65-byte signature (r, s, v) sig
// is over digest, refusing what the token and Permit2 refuse from an EOA: a
// v other than 27/28 (or 0/1), an s in the upper half of the curve order,
// an r or s out of range.
func recoverEOA(sig []byte, digest common.Hash) (common.Address, error) {
	if len(sig) != 65 {
		return common.Address{}, errBadSignature
	}
	var r, s [32]byte
	copy(r[:], sig[:32])
	copy(s[:], sig[32:64])
	v := sig[64]
	if v < 27 {
		v += 27
	}
	if v != 27 && v != 28 {
		return common.Address{}, errBadSignature
	}
	if !crypto.ValidateSignatureValues(v-27, new(big.Int).SetBytes(r[:]), new(big.Int).SetBytes(s[:]), true) {
		return common.Address{}, errBadSignature
	}
	rs := make([]byte, 65)
	copy(rs, sig[:64])
	rs[64] = v - 27
	pub, err := crypto.SigToPub(digest[:], rs)
	if err != nil {
		return common.Address{}, errBadSignature
	}
	return crypto.PubkeyToAddress(*pub), nil
}

// Sign signs a with key for domain d, setting a.From to key's address and
// a.Signature (v 27 or 28): what a wallet does for the exact scheme. For
// Go agents and tests.
func (a *ExactAuthorization) Sign(key *ecdsa.PrivateKey, d Domain) error {
	a.From = crypto.PubkeyToAddress(key.PublicKey)
	sig, err := signEOA(key, a.Digest(d))
	a.Signature = sig
	return err
}

// signEOA signs digest with key as a wallet does: r, s, v with v 27 or 28.
func signEOA(key *ecdsa.PrivateKey, digest common.Hash) ([]byte, error) {
	sig, err := crypto.Sign(digest[:], key)
	if err != nil {
		return nil, err
	}
	sig[64] += 27
	return sig, nil
}

// Wire is a's form in an exact payload.
func (a *ExactAuthorization) Wire() ExactPayload {
	return ExactPayload{
		Signature: "0x" + common.Bytes2Hex(a.Signature),
		Authorization: &Authorization{
			From: a.From.Hex(), To: a.To.Hex(), Value: a.Value.String(),
			ValidAfter: a.ValidAfter.String(), ValidBefore: a.ValidBefore.String(),
			Nonce: "0x" + common.Bytes2Hex(a.Nonce[:]),
		},
	}
}
