package wire

import "fmt"

// MaxAmount is the largest cost or quote, in minor units, the engine handles:
// 10^14 (one trillion dollars). Anything larger is a bug in a product's
// estimate, and the bound keeps every intermediate of the margin arithmetic
// inside 64 bits.
const MaxAmount int64 = 100_000_000_000_000

// PricingModel says how a workflow's charge follows from its quote, its
// actual cost and its outcome. The names are part of the wire contract.
type PricingModel string

// The pricing models. Every one charges at most the quote.
const (
	// PricingFixed charges the quote, whatever happened (the default).
	PricingFixed PricingModel = "fixed"
	// PricingCapped charges cost plus markup up to a cap:
	// min(quote, max(minimum charge, ceil(actual cost × (1 + markup)))). The
	// quote is the cap.
	PricingCapped PricingModel = "capped"
	// PricingSuccessFee charges the quote if the outcome meets the success
	// criteria, and nothing otherwise.
	PricingSuccessFee PricingModel = "success_fee"
	// PricingHybrid charges a base fee always, plus a success bonus when
	// the outcome meets the success criteria; the quote is base + bonus,
	// with base = ceil(quote × BaseShare).
	PricingHybrid PricingModel = "hybrid"
)

// Valid reports whether m is a pricing model ("" is not: it means fixed
// only inside a Price).
func (m PricingModel) Valid() bool {
	switch m {
	case PricingFixed, PricingCapped, PricingSuccessFee, PricingHybrid:
		return true
	}
	return false
}

// Price is how a product is priced. Every model quotes the same way,
// ceil(estimated cost / (1 − target margin)), at least the minimum charge;
// the model decides what of the quote is charged once the workflow ran.
type Price struct {
	// Model is the pricing model; "" means PricingFixed.
	Model PricingModel
	// TargetMargin is the margin the quote must at least yield on the
	// estimated cost, in basis points, 0 ≤ TargetMargin < 10000.
	TargetMargin BasisPoints
	// MinimumCharge is the least a workflow is quoted, in minor units; for
	// capped pricing also the least it is charged.
	MinimumCharge int64
	// Markup, for PricingCapped, is what is added to the actual cost, in
	// basis points (2000: cost + 20 %), 0 ≤ Markup ≤ 100000.
	Markup BasisPoints
	// BaseShare, for PricingHybrid, is the part of the quote charged
	// whatever the outcome, in basis points, 0 < BaseShare < 10000; the
	// rest is the success bonus.
	BaseShare BasisPoints
}

// model is p.Model with the default applied.
func (p Price) model() PricingModel {
	if p.Model == "" {
		return PricingFixed
	}
	return p.Model
}

// Validate reports whether p can price anything.
func (p Price) Validate() error {
	if p.TargetMargin < 0 || p.TargetMargin >= 10000 {
		return fmt.Errorf("settleflow: target margin %s must be at least 0 and below 1", p.TargetMargin)
	}
	if p.MinimumCharge < 0 || p.MinimumCharge > MaxAmount {
		return fmt.Errorf("settleflow: minimum charge %d out of range [0, %d]", p.MinimumCharge, MaxAmount)
	}
	switch m := p.model(); {
	case !m.Valid():
		return fmt.Errorf("settleflow: unknown pricing model %q (want fixed, capped, success_fee or hybrid)", p.Model)
	case m == PricingCapped && (p.Markup < 0 || p.Markup > 100000):
		return fmt.Errorf("settleflow: markup %s must be between 0 and 10", p.Markup)
	case m != PricingCapped && p.Markup != 0:
		return fmt.Errorf("settleflow: markup is for capped pricing only, not %s", m)
	case m == PricingHybrid && (p.BaseShare <= 0 || p.BaseShare >= 10000):
		return fmt.Errorf("settleflow: base share %s must be above 0 and below 1", p.BaseShare)
	case m != PricingHybrid && p.BaseShare != 0:
		return fmt.Errorf("settleflow: base share is for hybrid pricing only, not %s", m)
	}
	return nil
}

// ceilDiv is ceil(a / b) for a ≥ 0, b > 0.
func ceilDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 {
		q++
	}
	return q
}

// Base is the part of quoted a hybrid price charges whatever the outcome:
// ceil(quoted × BaseShare), so the base never rounds down to nothing; 0 for
// the other models.
func (p Price) Base(quoted int64) int64 {
	if p.model() != PricingHybrid {
		return 0
	}
	// quoted ≤ MaxAmount = 10^14, so quoted × 10^4 fits in 64 bits.
	return ceilDiv(quoted*int64(p.BaseShare), 10000)
}

// Charge is what a workflow quoted at quoted, whose execution cost cost and
// whose outcome met its success criteria or not, is charged, in minor units.
// It is never more than quoted and never negative:
//
//	fixed:        quoted
//	capped:       min(quoted, max(minimum charge, ceil(cost × (1 + markup))))
//	success_fee:  quoted if success, else 0
//	hybrid:       quoted if success, else Base(quoted) = ceil(quoted × base share)
//
// Rounding is up (ceil) wherever a fraction of a minor unit arises, and the
// cap bounds the result, so no rounding can charge more than the quote. A
// cost above MaxAmount counts as MaxAmount.
func (p Price) Charge(quoted, cost int64, success bool) int64 {
	if quoted <= 0 {
		return 0
	}
	cost = min(max(cost, 0), MaxAmount)
	switch p.model() {
	case PricingCapped:
		// ceil(cost × (10^4 + markup) / 10^4) without overflow: cost ≤ 10^14
		// and 10^4 + markup ≤ 1.1·10^5 would overflow, so split cost.
		m := int64(10000 + p.Markup)
		hi, lo := cost/10000, cost%10000
		c := hi*m + ceilDiv(lo*m, 10000)
		c = max(c, p.MinimumCharge)
		return min(quoted, c)
	case PricingSuccessFee:
		if success {
			return quoted
		}
		return 0
	case PricingHybrid:
		if success {
			return quoted
		}
		return min(quoted, p.Base(quoted))
	}
	return quoted
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

// Pricing is a pricing model as the wire shows it, on every catalogue
// entry, quote and workflow:
//
//	{"model": "fixed"}
//	{"model": "capped", "markup": 0.2, "minimumCharge": {"amount": 50, "currency": "usd"}}
//	{"model": "success_fee"}
//	{"model": "hybrid", "baseShare": 0.3}
//
// A workflow keeps the pricing it was created under, whatever its product
// becomes later.
type Pricing struct {
	Model PricingModel `json:"model"`
	// Markup is capped pricing's markup on cost (0.2: cost + 20 %).
	Markup *BasisPoints `json:"markup,omitempty"`
	// MinimumCharge is the least capped pricing charges.
	MinimumCharge *Money `json:"minimumCharge,omitempty"`
	// BaseShare is the part of a hybrid quote charged whatever the outcome.
	BaseShare *BasisPoints `json:"baseShare,omitempty"`
}

// PricingOf is p's wire form.
func PricingOf(p Price) Pricing {
	out := Pricing{Model: p.model()}
	switch out.Model {
	case PricingCapped:
		m := p.Markup
		out.Markup = &m
		out.MinimumCharge = &Money{Amount: p.MinimumCharge, Currency: Currency}
	case PricingHybrid:
		s := p.BaseShare
		out.BaseShare = &s
	}
	return out
}

// Price is the Price pr describes, with target as its target margin. The
// zero Pricing (a workflow stored before pricing models) is fixed.
func (pr Pricing) Price(target BasisPoints) Price {
	p := Price{Model: pr.Model, TargetMargin: target}
	if p.Model == "" {
		p.Model = PricingFixed
	}
	if pr.Markup != nil {
		p.Markup = *pr.Markup
	}
	if pr.MinimumCharge != nil {
		p.MinimumCharge = pr.MinimumCharge.Amount
	}
	if pr.BaseShare != nil {
		p.BaseShare = *pr.BaseShare
	}
	return p
}
