package settlement

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/crypto"
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

// CustomerRef is the customer reference written on chain: keccak256 of the
// customer id, so the id itself is never published.
func CustomerRef(customerID string) [32]byte {
	return crypto.Keccak256Hash([]byte(customerID))
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
