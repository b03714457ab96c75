package settleflow_test

import (
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/settleflow/settleflow"
)

func TestChargeTable(t *testing.T) {
	capped := settleflow.Price{Model: settleflow.PricingCapped, TargetMargin: 3000, MinimumCharge: 50, Markup: 2000}
	fee := settleflow.Price{Model: settleflow.PricingSuccessFee, TargetMargin: 3000}
	hybrid := settleflow.Price{Model: settleflow.PricingHybrid, TargetMargin: 3000, BaseShare: 3333}
	fixed := settleflow.Price{TargetMargin: 3000}
	cases := []struct {
		name          string
		p             settleflow.Price
		quoted, cost  int64
		success       bool
		want          int64
		wantMarginBps settleflow.BasisPoints
	}{
		{"fixed charges the quote", fixed, 286, 160, false, 286, 4406},
		{"fixed over cost: negative margin", fixed, 286, 400, true, 286, -3986},
		{"capped below the cap", capped, 1000, 500, true, 600, 1667},
		{"capped rounds up a fraction", capped, 1000, 501, true, 602, 1678}, // 501 × 1.2 = 601.2 → 602
		{"capped exactly at the cap", capped, 1200, 1000, true, 1200, 1667}, // 1000 × 1.2 = 1200
		{"capped one over the cap", capped, 1200, 1001, true, 1200, 1658},   // 1201.2 → capped at 1200
		{"capped far over the cap", capped, 1200, 5000, true, 1200, -31667},
		{"capped rounds to the minimum", capped, 1200, 10, true, 50, 8000}, // 12 → minimum 50
		{"capped zero cost charges the minimum", capped, 1200, 0, true, 50, 10000},
		{"capped minimum above a small quote", capped, 40, 0, true, 40, 10000}, // never above the quote
		{"success fee met", fee, 500, 300, true, 500, 4000},
		{"success fee missed: nothing charged", fee, 500, 300, false, 0, -6000},
		{"success fee missed, nothing spent", fee, 500, 0, false, 0, 0},
		{"hybrid met", hybrid, 900, 300, true, 900, 6667},
		{"hybrid missed: base only, rounded up", hybrid, 900, 300, false, 300, 0}, // 900 × 0.3333 = 299.97 → 300
		{"hybrid missed, base of 1", hybrid, 1, 0, false, 1, 10000},
	}
	for _, c := range cases {
		if err := c.p.Validate(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := c.p.Charge(c.quoted, c.cost, c.success)
		if got != c.want {
			t.Errorf("%s: charge %d, want %d", c.name, got, c.want)
		}
		if m := settleflow.AchievedMarginOf(c.quoted, got, c.cost); m != c.wantMarginBps {
			t.Errorf("%s: margin %d bps, want %d", c.name, m, c.wantMarginBps)
		}
	}
}

func TestPriceValidateModels(t *testing.T) {
	for _, p := range []settleflow.Price{
		{Model: "flat"},
		{Model: settleflow.PricingCapped, Markup: -1},
		{Model: settleflow.PricingCapped, Markup: 100001},
		{Model: settleflow.PricingFixed, Markup: 10},
		{Model: settleflow.PricingHybrid},
		{Model: settleflow.PricingHybrid, BaseShare: 10000},
		{Model: settleflow.PricingSuccessFee, BaseShare: 10},
	} {
		if err := p.Validate(); err == nil {
			t.Errorf("%+v: valid", p)
		}
	}
}

// No model ever charges more than the quote or less than nothing; every
// charge follows its model's formula (checked in exact arithmetic); the
// margin matches its definition; and spending the budget meets the floor
// while one more minor unit does not.
func TestChargeProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	models := []settleflow.PricingModel{"", settleflow.PricingFixed, settleflow.PricingCapped, settleflow.PricingSuccessFee, settleflow.PricingHybrid}
	for i := 0; i < 300_000; i++ {
		p := settleflow.Price{Model: models[r.IntN(len(models))], TargetMargin: settleflow.BasisPoints(r.Int64N(10000)), MinimumCharge: r.Int64N(300)}
		switch p.Model {
		case settleflow.PricingCapped:
			p.Markup = settleflow.BasisPoints(r.Int64N(100001))
		case settleflow.PricingHybrid:
			p.BaseShare = settleflow.BasisPoints(1 + r.Int64N(9999))
		}
		var estimate, cost int64
		switch i % 3 {
		case 0:
			estimate, cost = r.Int64N(1000), r.Int64N(2000)
		case 1:
			estimate, cost = r.Int64N(1e9), r.Int64N(2e9)
		default:
			estimate, cost = r.Int64N(settleflow.MaxAmount/10000), r.Int64N(settleflow.MaxAmount)
		}
		quoted, err := p.Quote(estimate)
		if err != nil {
			t.Fatal(err)
		}
		success := r.IntN(2) == 0
		got := p.Charge(quoted, cost, success)
		if got < 0 || got > quoted {
			t.Fatalf("%+v quoted %d cost %d: charge %d out of [0, quote]", p, quoted, cost, got)
		}
		var want int64
		switch p.Model {
		case "", settleflow.PricingFixed:
			want = quoted
		case settleflow.PricingCapped:
			exact := new(big.Rat).SetFrac(big.NewInt(cost), big.NewInt(1))
			exact.Mul(exact, big.NewRat(int64(10000+p.Markup), 10000))
			c := ceilRat(exact)
			want = min(quoted, max(c, p.MinimumCharge))
		case settleflow.PricingSuccessFee:
			if success {
				want = quoted
			}
		case settleflow.PricingHybrid:
			want = quoted
			if !success {
				want = min(quoted, ceilRat(new(big.Rat).SetFrac(big.NewInt(quoted*int64(p.BaseShare)), big.NewInt(10000))))
			}
		}
		if got != want {
			t.Fatalf("%+v quoted %d cost %d success %v: charge %d, want %d", p, quoted, cost, success, got, want)
		}
		// The margin's definition, in exact arithmetic, rounded half away from zero.
		m := settleflow.AchievedMarginOf(quoted, got, cost)
		var def *big.Rat
		switch {
		case got > 0:
			def = big.NewRat(got-cost, got)
		case quoted > 0 && cost > 0:
			def = big.NewRat(-cost, quoted)
		default:
			def = new(big.Rat)
		}
		if want := roundBps(def); int64(m) != want {
			t.Fatalf("margin of quoted %d charged %d cost %d: %d bps, want %d", quoted, got, cost, m, want)
		}
		// The budget at a floor: spending it meets the floor at the quote,
		// one unit more does not.
		floor := settleflow.BasisPoints(r.Int64N(10000))
		b := settleflow.Budget(quoted, floor)
		if quoted > 0 {
			at := big.NewRat(quoted-b, quoted)
			over := big.NewRat(quoted-b-1, quoted)
			f := big.NewRat(int64(floor), 10000)
			if at.Cmp(f) < 0 || over.Cmp(f) >= 0 {
				t.Fatalf("budget %d of quote %d at floor %d: margin at it %s, one over %s", b, quoted, floor, at.FloatString(6), over.FloatString(6))
			}
		}
	}
}

func ceilRat(r *big.Rat) int64 {
	q := new(big.Int).Div(r.Num(), r.Denom())
	if !r.IsInt() {
		q.Add(q, big.NewInt(1))
	}
	return q.Int64()
}

// roundBps is r in basis points, rounded half away from zero.
func roundBps(r *big.Rat) int64 {
	x := new(big.Rat).Mul(r, big.NewRat(10000, 1))
	neg := x.Sign() < 0
	x.Abs(x)
	x.Add(x, big.NewRat(1, 2))
	v := new(big.Int).Div(x.Num(), x.Denom()).Int64()
	if neg {
		return -v
	}
	return v
}
