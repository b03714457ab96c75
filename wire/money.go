package wire

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Environment is the world a key, workflow, event or endpoint belongs to.
type Environment string

// The two environments. Live settles on a mainnet, test on a testnet.
const (
	Test Environment = "test"
	Live Environment = "live"
)

// Valid reports whether e is Test or Live.
func (e Environment) Valid() bool { return e == Test || e == Live }

// Livemode reports whether e is Live.
func (e Environment) Livemode() bool { return e == Live }

// Money is an amount in integer minor units of a currency (1250 USD is 12.50).
// No float ever holds money.
type Money struct {
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

// Currency is the only currency the engine quotes in.
const Currency = "usd"

// BasisPoints is a ratio in hundredths of a percent: 3000 is 30 %, 0.3.
// Margins are kept in basis points so that all arithmetic stays in integers;
// on the wire they are numbers with at most four decimals.
type BasisPoints int64

// Float returns the ratio as a number (3000 → 0.3) for display.
func (b BasisPoints) Float() float64 { return float64(b) / 10000 }

// String formats b as a decimal ratio with up to four decimals.
func (b BasisPoints) String() string { return strconv.FormatFloat(b.Float(), 'f', -1, 64) }

// MarshalJSON writes b as a decimal number such as 0.3 or -0.125.
func (b BasisPoints) MarshalJSON() ([]byte, error) { return []byte(b.String()), nil }

// UnmarshalJSON reads a JSON number with at most four decimals in value
// (0.25, 2.5e-1 and 0.2500 are all 2500), exactly: no float rounding, so a
// fifth decimal is an error, never rounded away.
func (b *BasisPoints) UnmarshalJSON(p []byte) error {
	v, err := ParseBasisPoints(string(bytes.TrimSpace(p)))
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// basisPointsNumber is a JSON number: sign, integer part, fraction,
// exponent.
var basisPointsNumber = regexp.MustCompile(`^(-?)(0|[1-9][0-9]*)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$`)

// ParseBasisPoints reads a ratio written as a JSON number ("0.25", "-1.5",
// "25e-2") into basis points, exactly. It refuses anything that is not a
// JSON number, a value with a fifth decimal, and magnitudes beyond 10^14.
func ParseBasisPoints(s string) (BasisPoints, error) {
	m := basisPointsNumber.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("settleflow: %q is not a number", s)
	}
	exp := 0
	if m[4] != "" {
		var err error
		if exp, err = strconv.Atoi(m[4]); err != nil || exp > 100 || exp < -100 {
			return 0, fmt.Errorf("settleflow: %s is out of range", s)
		}
	}
	digits := strings.TrimLeft(m[2]+m[3], "0")
	if digits == "" {
		return 0, nil
	}
	// value = digits × 10^shift basis points.
	shift := exp - len(m[3]) + 4
	for shift < 0 && strings.HasSuffix(digits, "0") {
		digits, shift = digits[:len(digits)-1], shift+1
	}
	if shift < 0 {
		return 0, fmt.Errorf("settleflow: %s has more than four decimals", s)
	}
	if len(digits)+shift > 18 {
		return 0, fmt.Errorf("settleflow: %s is out of range", s)
	}
	n, err := strconv.ParseInt(digits+strings.Repeat("0", shift), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("settleflow: %s is out of range", s)
	}
	if m[1] == "-" {
		n = -n
	}
	return BasisPoints(n), nil
}

// Margin is a workflow's target margin and, once execution reported its actual
// cost, the margin it achieved: (quoted − actual) / quoted, which may be negative.
type Margin struct {
	Target   BasisPoints  `json:"target"`
	Achieved *BasisPoints `json:"achieved"`
}
