package settleflow_test

import (
	"encoding/json"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/settleflow/settleflow"
)

// The quote never yields less than the target margin on its estimate, and
// it is the least amount that does: rounding never loses (or takes) a minor
// unit. Checked against exact rational arithmetic on random inputs.
func TestQuoteProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200_000; i++ {
		margin := settleflow.BasisPoints(r.Int64N(10000))
		var cost int64
		switch i % 3 {
		case 0:
			cost = r.Int64N(1000)
		case 1:
			cost = r.Int64N(1_000_000_000)
		default:
			cost = r.Int64N(settleflow.MaxAmount / 10000)
		}
		minimum := r.Int64N(500)
		p := settleflow.Price{TargetMargin: margin, MinimumCharge: minimum}
		q, err := p.Quote(cost)
		if err != nil {
			t.Fatalf("Quote(%d) at %s: %v", cost, margin, err)
		}
		// exact = cost / (1 − m) = cost·10^4 / (10^4 − m)
		exact := new(big.Rat).SetFrac(big.NewInt(cost*10000), big.NewInt(int64(10000-margin)))
		least := new(big.Int).Div(exact.Num(), exact.Denom()) // floor
		if !exact.IsInt() {
			least.Add(least, big.NewInt(1)) // ceil
		}
		want := least.Int64()
		if want < minimum {
			want = minimum
		}
		if q != want {
			t.Fatalf("Quote(%d) at margin %s, minimum %d = %d, want %d", cost, margin, minimum, q, want)
		}
		// The margin on the estimate is at least the target.
		if q > 0 {
			achieved := new(big.Rat).SetFrac(big.NewInt(q-cost), big.NewInt(q))
			if achieved.Cmp(big.NewRat(int64(margin), 10000)) < 0 {
				t.Fatalf("quote %d for cost %d yields margin %s < target %s", q, cost, achieved.FloatString(6), margin)
			}
		}
	}
}

func TestQuoteRejects(t *testing.T) {
	for _, c := range []struct {
		p    settleflow.Price
		cost int64
	}{
		{settleflow.Price{TargetMargin: 10000}, 1},
		{settleflow.Price{TargetMargin: -1}, 1},
		{settleflow.Price{MinimumCharge: -1}, 1},
		{settleflow.Price{}, -1},
		{settleflow.Price{}, settleflow.MaxAmount + 1},
		{settleflow.Price{TargetMargin: 9999}, settleflow.MaxAmount}, // the quote would exceed MaxAmount
	} {
		if q, err := c.p.Quote(c.cost); err == nil {
			t.Fatalf("Quote(%d) with %+v = %d, want an error", c.cost, c.p, q)
		}
	}
}

// The achieved margin is (quoted − actual) / quoted to 4 decimals, rounded
// half away from zero, compared with exact arithmetic.
func TestAchievedMarginProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 200_000; i++ {
		quoted := 1 + r.Int64N(settleflow.MaxAmount)
		if i%2 == 0 {
			quoted = 1 + r.Int64N(100_000)
		}
		actual := r.Int64N(2 * quoted)
		if actual > settleflow.MaxAmount {
			actual = settleflow.MaxAmount
		}
		got := settleflow.AchievedMargin(quoted, actual)
		exact := new(big.Rat).SetFrac(big.NewInt((quoted - actual)), big.NewInt(quoted))
		exact.Mul(exact, big.NewRat(10000, 1))
		// round half away from zero
		abs := new(big.Rat).Abs(exact)
		abs.Add(abs, big.NewRat(1, 2))
		want := new(big.Int).Div(abs.Num(), abs.Denom())
		if exact.Sign() < 0 {
			want.Neg(want)
		}
		if int64(got) != want.Int64() {
			t.Fatalf("AchievedMargin(%d, %d) = %d bps, want %s", quoted, actual, got, want)
		}
	}
	if settleflow.AchievedMargin(0, 5) != 0 {
		t.Fatal("a zero quote must report 0")
	}
}

func TestBasisPointsJSON(t *testing.T) {
	for bps, text := range map[settleflow.BasisPoints]string{3000: "0.3", -1250: "-0.125", 0: "0", 1: "0.0001", 9999: "0.9999", -20000: "-2"} {
		b, err := json.Marshal(bps)
		if err != nil || string(b) != text {
			t.Fatalf("Marshal(%d) = %s, want %s", bps, b, text)
		}
		var back settleflow.BasisPoints
		if err := json.Unmarshal(b, &back); err != nil || back != bps {
			t.Fatalf("round trip of %s: %d %v", text, back, err)
		}
	}
	var b settleflow.BasisPoints
	if err := json.Unmarshal([]byte("0.12345"), &b); err == nil {
		t.Fatal("five decimals accepted")
	}
}

// Exactly the transitions of the diagram are legal; every other pair is refused.
func TestStateMachine(t *testing.T) {
	legal := map[[2]settleflow.Status]bool{
		{settleflow.Pending, settleflow.Running}:  true,
		{settleflow.Pending, settleflow.Canceled}: true,
		{settleflow.Running, settleflow.Settling}: true,
		{settleflow.Running, settleflow.Failed}:   true,
		{settleflow.Settling, settleflow.Settled}: true,
		{settleflow.Settling, settleflow.Failed}:  true,
	}
	all := append([]settleflow.Status{"", "Bogus"}, settleflow.Statuses...)
	for _, from := range all {
		for _, to := range all {
			tr, err := from.To(to)
			if legal[[2]settleflow.Status{from, to}] {
				if err != nil || tr.From() != from || tr.Next() != to || tr.IsZero() {
					t.Fatalf("%q → %q refused: %v", from, to, err)
				}
			} else if err == nil {
				t.Fatalf("%q → %q allowed", from, to)
			}
		}
	}
	if n := len(settleflow.Transitions()); n != len(legal) {
		t.Fatalf("Transitions() lists %d, want %d", n, len(legal))
	}
	for _, s := range settleflow.Statuses {
		if _, err := settleflow.ParseStatus(string(s)); err != nil {
			t.Fatal(err)
		}
		// Terminal is exactly "no transition leaves it".
		leaves := false
		for _, tr := range settleflow.Transitions() {
			leaves = leaves || tr.From() == s
		}
		if s.Terminal() == leaves || !s.Valid() {
			t.Fatalf("%s: Terminal %v, but transitions leave it: %v", s, s.Terminal(), leaves)
		}
	}
	if _, err := settleflow.ParseStatus("canceled"); err == nil || !strings.Contains(err.Error(), "Canceled") {
		t.Fatalf("ParseStatus(canceled): %v; want the message to list Canceled", err)
	}
	for _, bad := range []string{"settled", "SETTLED", "Done", ""} {
		if _, err := settleflow.ParseStatus(bad); err == nil {
			t.Fatalf("ParseStatus(%q) accepted", bad)
		}
	}
}
