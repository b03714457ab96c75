package driver

import (
	"math"
	"testing"
)

// Sums of amounts saturate at the bounds of int64: a pending withdrawal or
// reservations larger than the balance make Available negative, never
// wrapped positive (issue 37, finding 2).
func TestAccountSumsSaturate(t *testing.T) {
	for _, c := range []struct {
		a         Account
		onChain   int64
		available int64
	}{
		{Account{Deposited: 1000, Charged: 200, Refunded: 50, Reserved: 100, PendingWithdrawal: 300}, 850, 450},
		{Account{Deposited: 0, Reserved: 800, PendingWithdrawal: math.MaxInt64}, 0, math.MinInt64},
		{Account{Deposited: 1000, Reserved: 800, PendingWithdrawal: math.MaxInt64}, 1000, 200 - math.MaxInt64},
		{Account{Deposited: math.MaxInt64, Refunded: 10}, math.MaxInt64, math.MaxInt64},
		{Account{Deposited: -10, Charged: math.MaxInt64}, math.MinInt64, math.MinInt64},
	} {
		if got := c.a.OnChain(); got != c.onChain {
			t.Errorf("%+v: OnChain %d, want %d", c.a, got, c.onChain)
		}
		if got := c.a.Available(); got != c.available {
			t.Errorf("%+v: Available %d, want %d", c.a, got, c.available)
		}
	}
	a := Account{Deposited: 0, Reserved: 800, PendingWithdrawal: math.MaxInt64}
	if a.Admits(1) {
		t.Error("admitted against a wrapped balance")
	}
	if (&Account{Deposited: 5000, Quarantined: 1}).Admits(1) {
		t.Error("admitted a customer with a quarantined event")
	}
	if !(&Account{Deposited: 5000}).Admits(5000) {
		t.Error("refused a quote equal to the available balance")
	}
	for _, c := range [][3]int64{{math.MaxInt64, 1, math.MaxInt64}, {math.MinInt64, -1, math.MinInt64}, {3, 4, 7}} {
		if got := AddSat(c[0], c[1]); got != c[2] {
			t.Errorf("AddSat(%d, %d) = %d", c[0], c[1], got)
		}
	}
	for _, c := range [][3]int64{{0, math.MinInt64, math.MaxInt64}, {-1, math.MinInt64, math.MaxInt64}, {math.MinInt64, 1, math.MinInt64}, {7, 4, 3}} {
		if got := SubSat(c[0], c[1]); got != c[2] {
			t.Errorf("SubSat(%d, %d) = %d", c[0], c[1], got)
		}
	}
}
