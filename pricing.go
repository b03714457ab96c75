package settleflow

import (
	"github.com/settleflow/settleflow/wire"
)

// MaxAmount is the largest cost or quote, in minor units, the engine
// handles: 10^14 (see wire.MaxAmount).
const MaxAmount = wire.MaxAmount

// PricingModel says how a workflow's charge follows from its quote, its
// actual cost and its outcome (wire.PricingModel).
type PricingModel = wire.PricingModel

// The pricing models. Every one charges at most the quote.
const (
	// PricingFixed charges the quote, whatever happened (the default).
	PricingFixed = wire.PricingFixed
	// PricingCapped charges cost plus markup up to the quote.
	PricingCapped = wire.PricingCapped
	// PricingSuccessFee charges the quote on success, nothing otherwise.
	PricingSuccessFee = wire.PricingSuccessFee
	// PricingHybrid charges a base fee always, plus a bonus on success.
	PricingHybrid = wire.PricingHybrid
)

// Price is how a product is priced (wire.Price).
type Price = wire.Price

// AchievedMarginOf is the margin a workflow achieved, in basis points,
// defined for every model:
//
//	charged > 0:  (charged − cost) / charged   (profit over revenue; for a fixed
//	              price, (quoted − cost) / quoted, the spec's definition)
//	charged = 0:  (0 − cost) / quoted          (the loss against the price
//	              quoted; 0 when nothing was spent)
//
// rounded half away from zero, as AchievedMargin.
func AchievedMarginOf(quoted, charged, cost int64) BasisPoints {
	if charged > 0 {
		return AchievedMargin(charged, cost)
	}
	if quoted <= 0 || cost <= 0 {
		return 0
	}
	return AchievedMargin(quoted, quoted+min(cost, MaxAmount))
}

// MarginOnEstimate is the margin the quote yields if the actual cost is the
// estimate: (quoted − estimate) / quoted, rounded half away from zero. A
// quote is refused when this is below the margin floor.
func MarginOnEstimate(quoted, estimate int64) BasisPoints { return AchievedMargin(quoted, estimate) }

// Budget is the most a workflow quoted at quoted may spend and still achieve
// floor at that price: floor(quoted × (1 − floor)), so spending exactly the
// budget meets the floor and one minor unit more does not. (For capped
// pricing the quote is the cap, the price at which the margin is widest.)
func Budget(quoted int64, floor BasisPoints) int64 {
	if quoted <= 0 {
		return 0
	}
	if floor <= 0 {
		return quoted
	}
	return quoted * int64(10000-floor) / 10000
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
