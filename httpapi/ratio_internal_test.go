package httpapi

import (
	"bytes"
	"math/big"
	"testing"
)

// FuzzParseRatio: parseRatio accepts exactly the JSON numbers from 0 to
// below 1 with at most four decimals in value, and reads them exactly:
// what big.Rat makes of the same text, times 10^4.
func FuzzParseRatio(f *testing.F) {
	for _, s := range []string{"0", "0.25", "0.2500", "2.5e-1", "25E-2", "0.00001", "1", "0.9999", "-0.1", "1e-4", "1e-5",
		"0.12345", "null", "", " 0.5 ", "00.5", "0.", ".5", "1e999999", "9999e-4", "10000e-4", "0e5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseRatio([]byte(s))
		if !ok {
			return
		}
		if got < 0 || got >= 10000 {
			t.Fatalf("%q read as %d basis points", s, got)
		}
		switch trimmed := string(bytes.TrimSpace([]byte(s))); trimmed {
		case "", "null":
			if got != 0 {
				t.Fatalf("%q read as %d", s, got)
			}
			return
		default:
			r, okRat := new(big.Rat).SetString(trimmed)
			if !okRat {
				t.Fatalf("%q accepted but is not a number", s)
			}
			want := new(big.Rat).Mul(r, big.NewRat(10000, 1))
			if !want.IsInt() || want.Num().Int64() != int64(got) {
				t.Fatalf("%q read as %d basis points, its value is %s", s, got, want.RatString())
			}
		}
	})
}
