package settleflow

import "fmt"

// MaxAmount is the largest cost or quote, in minor units, the engine handles:
// 10^14 (one trillion dollars). Anything larger is a bug in a product's
// estimate, and the bound keeps every intermediate of the margin arithmetic
// inside 64 bits.
const MaxAmount int64 = 100_000_000_000_000

// Price is how a product is priced: a target margin and a minimum charge.
type Price struct {
	// TargetMargin is the margin the quote must at least yield on the
	// estimated cost, in basis points, 0 ≤ TargetMargin < 10000.
	TargetMargin BasisPoints
	// MinimumCharge is the least a workflow is quoted, in minor units.
	MinimumCharge int64
}

// Validate reports whether p can price anything.
func (p Price) Validate() error {
	if p.TargetMargin < 0 || p.TargetMargin >= 10000 {
		return fmt.Errorf("settleflow: target margin %s must be at least 0 and below 1", p.TargetMargin)
	}
	if p.MinimumCharge < 0 || p.MinimumCharge > MaxAmount {
		return fmt.Errorf("settleflow: minimum charge %d out of range [0, %d]", p.MinimumCharge, MaxAmount)
	}
	return nil
}

// Quote returns the amount to charge for an estimated cost:
// ceil(cost / (1 − target margin)), at least the minimum charge. It is the
// smallest amount whose margin on cost is at least the target, so rounding
// never costs the customer a minor unit more than the margin requires, and
// never gives the margin away.
func (p Price) Quote(cost int64) (int64, error) {
	if err := p.Validate(); err != nil {
		return 0, err
	}
	if cost < 0 || cost > MaxAmount {
		return 0, fmt.Errorf("settleflow: estimated cost %d out of range [0, %d]", cost, MaxAmount)
	}
	// ceil(cost·10^4 / (10^4 − m)); cost·10^4 ≤ 10^18 fits in 64 bits.
	num, den := cost*10000, int64(10000-p.TargetMargin)
	q := num / den
	if num%den != 0 {
		q++
	}
	if q > MaxAmount {
		return 0, fmt.Errorf("settleflow: quote for cost %d at margin %s exceeds %d", cost, p.TargetMargin, MaxAmount)
	}
	amount := q
	if amount < p.MinimumCharge {
		amount = p.MinimumCharge
	}
	return amount, nil
}

// AchievedMargin is (quoted − actual) / quoted in basis points, rounded half
// away from zero; it is negative when the work cost more than it was quoted.
// A zero quote has no meaningful margin and reports 0.
func AchievedMargin(quoted, actual int64) BasisPoints {
	if quoted <= 0 {
		return 0
	}
	// Both are at most MaxAmount, so |quoted − actual|·10^4 ≤ 10^18 fits.
	num := (quoted - actual) * 10000
	q, r := num/quoted, num%quoted
	if r < 0 {
		r = -r
	}
	if 2*r >= quoted {
		if num < 0 {
			q--
		} else {
			q++
		}
	}
	return BasisPoints(q)
}
