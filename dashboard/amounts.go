package dashboard

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/settleflow/settleflow"
)

// Money is kept as integer minor units everywhere; these turn it into text
// for display and read an operator's decimal amount back, without floats.

// formatCents writes an amount of minor units as a decimal with two places,
// a minus sign in front when negative ("-0.50", not "0.-50").
func formatCents(c int64) string {
	sign := ""
	u := uint64(c)
	if c < 0 {
		sign, u = "-", uint64(-(c+1))+1 // no overflow at math.MinInt64
	}
	return fmt.Sprintf("%s%d.%02d", sign, u/100, u%100)
}

// formatMoney is an amount with its currency, as the dashboard shows money
// everywhere: "USD 12.50".
func formatMoney(c int64, currency string) string {
	return strings.ToUpper(currency) + " " + formatCents(c)
}

// formatPrice is an amount as a sentence says it: "$12.50" in US dollars,
// "EUR 12.50" in another currency.
func formatPrice(c int64, currency string) string {
	if strings.EqualFold(currency, "usd") {
		if c < 0 {
			return "-$" + formatCents(c)[1:]
		}
		return "$" + formatCents(c)
	}
	return formatMoney(c, currency)
}

var errAmount = errors.New("the amount must be a positive number of dollars with at most two decimals, such as 12.50")

// parseCents reads an operator's amount ("12", "12.5", "12.50", "$12.50")
// into minor units: at least 0.01 and at most settleflow.MaxAmount.
func parseCents(s string) (int64, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "$")
	whole, frac, dot := strings.Cut(s, ".")
	if whole == "" || len(whole) > 15 || len(frac) > 2 || (dot && frac == "") || !digits(whole) || !digits(frac) {
		return 0, errAmount
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, errAmount
	}
	var f int64
	if frac != "" {
		f, _ = strconv.ParseInt(frac, 10, 64)
		if len(frac) == 1 {
			f *= 10
		}
	}
	c := w*100 + f
	switch {
	case c < 1:
		return 0, errAmount
	case c > settleflow.MaxAmount:
		return 0, fmt.Errorf("the amount must be at most %s", formatCents(settleflow.MaxAmount))
	}
	return c, nil
}

func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
