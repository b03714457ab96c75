package settleflow

import (
	"encoding/json"
	"fmt"
	"strconv"
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

// UnmarshalJSON reads a decimal number with at most four decimals.
func (b *BasisPoints) UnmarshalJSON(p []byte) error {
	var f json.Number
	if err := json.Unmarshal(p, &f); err != nil {
		return err
	}
	v, err := strconv.ParseFloat(string(f), 64)
	if err != nil {
		return err
	}
	scaled := v * 10000
	r := int64(scaled + 0.5)
	if scaled < 0 {
		r = int64(scaled - 0.5)
	}
	if diff := scaled - float64(r); diff > 1e-6 || diff < -1e-6 {
		return fmt.Errorf("settleflow: %s has more than four decimals", f)
	}
	*b = BasisPoints(r)
	return nil
}

// Margin is a workflow's target margin and, once execution reported its actual
// cost, the margin it achieved: (quoted − actual) / quoted, which may be negative.
type Margin struct {
	Target   BasisPoints  `json:"target"`
	Achieved *BasisPoints `json:"achieved"`
}
