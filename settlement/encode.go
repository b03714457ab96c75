package settlement

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/settleflow/settleflow"
)

// WorkflowKey is the contract's key for a workflow id: the id's bytes,
// left-aligned and zero-padded to 32. It fails for an empty id, an id longer
// than 32 bytes, or one holding a NUL byte (which would make two ids share a
// key).
func WorkflowKey(workflowID string) ([32]byte, error) {
	var k [32]byte
	if workflowID == "" || len(workflowID) > 32 || strings.IndexByte(workflowID, 0) >= 0 {
		return k, fmt.Errorf("settlement: workflow id %q cannot be settled: it must be 1 to 32 bytes without NUL", workflowID)
	}
	copy(k[:], workflowID)
	return k, nil
}

// WorkflowIDFromKey is the inverse of [WorkflowKey].
func WorkflowIDFromKey(k [32]byte) string {
	return strings.TrimRight(string(k[:]), "\x00")
}

// MinCustomerRefSecret is the shortest secret [CustomerRef] accepts: 16
// bytes (32 random bytes are recommended).
const MinCustomerRefSecret = 16

// CustomerRef is a customer's key in the settlement contract of env:
// HMAC-SHA256 under the deployment's secret of
// "settleflow/customer-ref/v1", NUL, the environment, NUL, the customer id.
// Whoever guesses customer ids cannot find their balances on chain without
// the secret, and the same id has unrelated keys in test and live.
func CustomerRef(secret []byte, env settleflow.Environment, customerID string) [32]byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("settleflow/customer-ref/v1\x00"))
	m.Write([]byte(env))
	m.Write([]byte{0})
	m.Write([]byte(customerID))
	return [32]byte(m.Sum(nil))
}

// WorkflowTag is the contract's tag of a workflow id: the high 48 bits of
// keccak256 of the id. It lets the chain say which workflow a sequence was
// settled for without publishing the id.
func WorkflowTag(workflowID string) uint64 {
	return binary.BigEndian.Uint64(crypto.Keccak256([]byte(workflowID))[:8]) >> 16
}

// RefundKey is the contract's key for a refund id, written like
// [WorkflowKey]: the id's bytes, left-aligned and zero-padded to 32.
func RefundKey(refundID string) ([32]byte, error) {
	k, err := WorkflowKey(refundID)
	if err != nil {
		return k, fmt.Errorf("settlement: refund id %q cannot be settled: it must be 1 to 32 bytes without NUL", refundID)
	}
	return k, nil
}

// PackedCharge is one charge as the contract's settle takes it, in one
// word: bits 0-95 the amount in cents, 96-111 the index of its customer in
// the batch's customer list, 112-175 the sequence, 176-223 the workflow's
// tag (WorkflowTag, 48 bits).
type PackedCharge struct {
	Cents    uint64
	Customer uint16
	Sequence uint64
	Tag      uint64
}

// Pack writes the charge as the contract's word.
func (p PackedCharge) Pack() *big.Int {
	var b [32]byte
	binary.BigEndian.PutUint64(b[2:10], p.Tag)
	binary.BigEndian.PutUint64(b[10:18], p.Sequence)
	binary.BigEndian.PutUint16(b[18:20], p.Customer)
	binary.BigEndian.PutUint64(b[24:32], p.Cents)
	return new(big.Int).SetBytes(b[:])
}

// UnpackCharge reads a charge word of the contract. It fails for a word
// with bits the layout does not use, or an amount beyond 64 bits.
func UnpackCharge(w *big.Int) (PackedCharge, error) {
	if w.Sign() < 0 || w.BitLen() > 240 {
		return PackedCharge{}, fmt.Errorf("settlement: charge word %#x is out of the layout", w)
	}
	var b [32]byte
	w.FillBytes(b[:])
	if b[20]|b[21]|b[22]|b[23] != 0 {
		return PackedCharge{}, fmt.Errorf("settlement: charge word %#x has an amount beyond 64 bits", w)
	}
	return PackedCharge{Tag: binary.BigEndian.Uint64(b[2:10]), Sequence: binary.BigEndian.Uint64(b[10:18]),
		Customer: binary.BigEndian.Uint16(b[18:20]), Cents: binary.BigEndian.Uint64(b[24:32])}, nil
}

// packRefund is a refund item of the contract's refund: bits 0-95 the
// amount in cents, 96-111 the index of its charge in the batch.
func packRefund(cents uint64, charge uint16) *big.Int {
	var b [32]byte
	binary.BigEndian.PutUint16(b[18:20], charge)
	binary.BigEndian.PutUint64(b[24:32], cents)
	return new(big.Int).SetBytes(b[:])
}

// BaseUnits converts an amount in minor units (cents) to base units of a token
// with the given decimals (2 or more): with 6 decimals, 1 cent is 10,000 base
// units. It is exact, in integers.
func BaseUnits(minor int64, decimals uint8) (*big.Int, error) {
	if minor < 0 {
		return nil, fmt.Errorf("settlement: negative amount %d", minor)
	}
	if decimals < 2 {
		return nil, fmt.Errorf("settlement: a token with %d decimals cannot hold cents", decimals)
	}
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)-2), nil)
	return scale.Mul(scale, big.NewInt(minor)), nil
}

// FormatUnits writes v base units of a unit with the given decimals as a
// decimal string, without trailing zeros: 12300000000000 wei with 18 decimals
// is "0.0000123".
func FormatUnits(v *big.Int, decimals int) string {
	neg := v.Sign() < 0
	digits := new(big.Int).Abs(v).String()
	if len(digits) <= decimals {
		digits = strings.Repeat("0", decimals-len(digits)+1) + digits
	}
	whole, frac := digits[:len(digits)-decimals], strings.TrimRight(digits[len(digits)-decimals:], "0")
	out := whole
	if frac != "" {
		out += "." + frac
	}
	if neg {
		out = "-" + out
	}
	return out
}
