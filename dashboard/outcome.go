package dashboard

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/settleflow/settleflow"
)

// What the workflow page shows of outcome pricing: the pricing model, the
// charge against the quote, the margin floor's budget, the cost broken down
// by category and the success criteria's trace. Everything here is plain
// data; the template escapes every string (providers and reasons come from
// products and customers' results).

// termsView is a workflow's pricing, charge and budget, as sentences.
type termsView struct {
	// Model is the pricing model's name for people ("Capped").
	Model string
	// Base and Bonus are a hybrid quote's parts (base whatever the
	// outcome, bonus on success).
	Base, Bonus int64
	// Charged is nil until the charge is decided.
	Charged *int64
	// ChargeNote says where the charge came from ("outcome not met").
	ChargeNote string
	// Floor is the margin floor in force, nil if none; Budget the most the
	// workflow may spend at its quote under it, and Over what its cost
	// passed it by (0 if it did not, or is not known).
	Floor  *settleflow.BasisPoints
	Budget int64
	Over   int64
	// Unchained: Settled with a charge of 0, which never reaches the chain.
	Unchained bool
	// Effect is what the outcome did to the charge, for the verdict.
	Effect string
}

// pricingNames are the pricing models' names for people.
var pricingNames = map[settleflow.PricingModel]string{
	settleflow.PricingFixed:      "Fixed",
	settleflow.PricingCapped:     "Capped",
	settleflow.PricingSuccessFee: "Success fee",
	settleflow.PricingHybrid:     "Hybrid",
}

func termsOf(wf *settleflow.Workflow) termsView {
	model := wf.Pricing.Model
	if model == "" {
		model = settleflow.PricingFixed
	}
	v := termsView{Model: pricingNames[model]}
	if v.Model == "" {
		v.Model = string(model)
	}
	if model == settleflow.PricingHybrid {
		v.Base = wf.Pricing.Price(wf.Margin.Target).Base(wf.Quoted.Amount)
		v.Bonus = wf.Quoted.Amount - v.Base
	}
	if wf.Charged != nil {
		c := wf.Charged.Amount
		v.Charged = &c
	} else if wf.Status == settleflow.Settling || wf.Status == settleflow.Settled {
		// Recorded before charges were decided apart from the quote: the
		// quote is what was charged.
		c := wf.Quoted.Amount
		v.Charged = &c
		v.ChargeNote = "the quote: recorded before outcome pricing"
	}
	if wf.Charged != nil {
		v.ChargeNote = chargeNote(wf, model)
	}
	if wf.MarginFloor != nil {
		f := *wf.MarginFloor
		v.Floor = &f
		v.Budget = settleflow.Budget(wf.Quoted.Amount, f)
		if wf.Cost != nil && wf.Cost.Amount > v.Budget {
			v.Over = wf.Cost.Amount - v.Budget
		}
	}
	v.Effect = effectOf(wf, model, v.Model)
	v.Unchained = wf.Status == settleflow.Settled && wf.Settlement == nil && v.Charged != nil && *v.Charged == 0
	return v
}

// chargeNote says why wf, whose charge is decided, is charged what it is.
func chargeNote(wf *settleflow.Workflow, model settleflow.PricingModel) string {
	charged, quoted := wf.Charged.Amount, wf.Quoted.Amount
	met := wf.Outcome != nil && wf.Outcome.Success
	switch model {
	case settleflow.PricingSuccessFee:
		if met {
			return "outcome met: the quote"
		}
		return "outcome not met: nothing charged"
	case settleflow.PricingHybrid:
		if met {
			return "outcome met: base fee and success bonus"
		}
		return "outcome not met: the base fee only"
	case settleflow.PricingCapped:
		switch {
		case charged == quoted:
			return "cost plus markup reached the cap, the quote"
		case wf.Pricing.MinimumCharge != nil && charged == wf.Pricing.MinimumCharge.Amount:
			return "the minimum charge"
		}
		return "cost plus markup"
	}
	if charged == quoted {
		return "the quote"
	}
	return ""
}

// effectOf says what wf's outcome did to its charge: "" before it is
// judged.
func effectOf(wf *settleflow.Workflow, model settleflow.PricingModel, name string) string {
	if wf.Outcome == nil {
		return ""
	}
	met := wf.Outcome.Success
	switch model {
	case settleflow.PricingSuccessFee:
		if met {
			return "so the quote is charged"
		}
		return "so nothing is charged"
	case settleflow.PricingHybrid:
		if met {
			return "so the base fee and the success bonus are charged"
		}
		return "so only the base fee is charged"
	}
	return "under " + strings.ToLower(name) + " pricing it does not change the charge"
}

// costView is a workflow's cost, grouped by category.
type costView struct {
	Amount   int64
	Currency string
	Items    int
	Groups   []costGroup
	// Budget is the margin floor's budget (HasBudget), and BudgetShare the
	// cost's part of it.
	HasBudget   bool
	Budget      int64
	BudgetShare share
}

// costGroup is one category's items and their sum.
type costGroup struct {
	Category settleflow.CostCategory
	Items    []settleflow.CostItem
	Amount   int64
	Share    share
}

// share is a part of a whole, for a label and a bar 100 units wide.
type share struct {
	Label string // "60.0%", "—" of a whole of 0
	Bar   string // the bar's length of 100, "0" to "100"
	Over  bool   // more than the whole
}

func shareOf(part, whole int64) share {
	if whole <= 0 {
		return share{Label: "—", Bar: "0", Over: part > 0}
	}
	// Per mille, rounded half up; part and whole are at most
	// settleflow.MaxAmount (10^14), so part × 1000 fits in 64 bits.
	pm := (part*1000 + whole/2) / whole
	bar := min(pm, 1000)
	return share{Label: fmt.Sprintf("%d.%d%%", pm/10, pm%10), Bar: fmt.Sprintf("%d.%d", bar/10, bar%10), Over: part > whole}
}

// categoryOrder is the order of the cost categories on the page.
var categoryOrder = []settleflow.CostCategory{settleflow.CostModel, settleflow.CostTools, settleflow.CostCompute, settleflow.CostHuman, settleflow.CostOther}

func costOf(wf *settleflow.Workflow, t termsView) *costView {
	c := wf.Cost
	if c == nil {
		return nil
	}
	v := &costView{Amount: c.Amount, Currency: c.Currency, Items: len(c.Items)}
	if v.Currency == "" {
		v.Currency = wf.Quoted.Currency
	}
	byCat := map[settleflow.CostCategory]*costGroup{}
	var order []settleflow.CostCategory
	for _, it := range c.Items {
		g := byCat[it.Category]
		if g == nil {
			g = &costGroup{Category: it.Category}
			byCat[it.Category] = g
			order = append(order, it.Category)
		}
		g.Items = append(g.Items, it)
		g.Amount += it.Amount
	}
	// The known categories in their order, then any other as first seen.
	rank := func(c settleflow.CostCategory) int {
		if i := slices.Index(categoryOrder, c); i >= 0 {
			return i
		}
		return len(categoryOrder) + slices.Index(order, c)
	}
	slices.SortFunc(order, func(a, b settleflow.CostCategory) int { return rank(a) - rank(b) })
	for _, cat := range order {
		g := byCat[cat]
		g.Share = shareOf(g.Amount, c.Amount)
		v.Groups = append(v.Groups, *g)
	}
	if t.Floor != nil {
		v.HasBudget, v.Budget = true, t.Budget
		v.BudgetShare = shareOf(c.Amount, t.Budget)
	}
	return v
}

// traceStep is a step of the outcome's trace with its depth in the tree.
type traceStep struct {
	settleflow.OutcomeStep
	// Depth is 0 for the root; the page indents by it (at most
	// maxTraceIndent levels, the criteria's MaxDepth less one).
	Depth int
	// Leaf: a criterion that tests a value (it has a path, "" for the
	// whole result), not a combinator.
	Leaf bool
}

const maxTraceIndent = 7

func traceOf(o *settleflow.Outcome) []traceStep {
	if o == nil {
		return nil
	}
	out := make([]traceStep, len(o.Trace))
	for i, s := range o.Trace {
		d := 0
		if s.Node != "" {
			d = strings.Count(s.Node, ".") + 1
		}
		out[i] = traceStep{OutcomeStep: s, Depth: min(d, maxTraceIndent)}
		switch s.Type {
		case "all_of", "any_of", "not":
		default:
			out[i].Leaf = true
		}
	}
	return out
}

// marginFloorFailure is the sentence for a workflow stopped at its margin
// floor (margin_floor_exceeded), from its recorded cost; "" if it is not
// one or its cost is not known.
func marginFloorFailure(wf *settleflow.Workflow, t termsView) string {
	if wf.Failure == nil || wf.Failure.Code != settleflow.FailureMarginFloorExceeded || wf.Cost == nil || t.Floor == nil {
		return ""
	}
	cur := wf.Quoted.Currency
	return "The product reported spending " + formatMoney(wf.Cost.Amount, cur) + ", more than its budget of " +
		formatMoney(t.Budget, cur) + " (what its margin floor of " + fmt.Sprintf("%.2f%%", float64(*t.Floor)/100) +
		" leaves at the quoted " + formatMoney(wf.Quoted.Amount, cur) + "), so the engine stopped it. Nothing was charged; what it spent is in the cost breakdown."
}

// formatUnits writes a count with thousands separators: "12,000".
func formatUnits(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// chargedText is the charge of a workflow list's row: the amount once
// decided ("—" before), the quote for one Settled before charges were
// decided apart.
func chargedText(wf *settleflow.Workflow) string {
	switch {
	case wf.Charged != nil:
		return formatMoney(wf.Charged.Amount, wf.Charged.Currency)
	case wf.Status == settleflow.Settling || wf.Status == settleflow.Settled:
		return formatMoney(wf.Quoted.Amount, wf.Quoted.Currency)
	}
	return "—"
}
