package wire_test

import (
	"encoding/json"
	"math/big"
	"testing"

	"github.com/settleflow/settleflow/wire"
)

// FuzzParseBasisPoints: a ratio is read exactly, as big.Rat reads the same
// text times 10^4, or refused; what is read writes back to the same value.
func FuzzParseBasisPoints(f *testing.F) {
	for _, s := range []string{"0", "0.25", "0.2500", "2.5e-1", "25E-2", "0.00001", "1", "-0.1", "-1.5", "1e-4", "1e-5",
		"0.12345", "00.5", "0.", ".5", "1e999999", "9999e-4", "-0", "1e14", "1e15", "+1", "0x10", " 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := wire.ParseBasisPoints(s)
		if err != nil {
			return
		}
		r, ok := new(big.Rat).SetString(s)
		if !ok || !json.Valid([]byte(s)) {
			t.Fatalf("%q accepted but is not a JSON number", s)
		}
		want := new(big.Rat).Mul(r, big.NewRat(10000, 1))
		if !want.IsInt() || !want.Num().IsInt64() || want.Num().Int64() != int64(got) {
			t.Fatalf("%q read as %d basis points, its value is %s", s, got, want.RatString())
		}
		var back wire.BasisPoints
		if b, _ := json.Marshal(got); json.Unmarshal(b, &back) != nil || back != got {
			t.Fatalf("%d does not survive a JSON round trip (%s)", got, b)
		}
	})
}
