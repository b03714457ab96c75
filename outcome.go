package settleflow

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/settleflow/settleflow/criteria"
	"github.com/settleflow/settleflow/wire"
)

// Pricing is a pricing model as the wire shows it (wire.Pricing).
type Pricing = wire.Pricing

// PricingOf is p's wire form.
func PricingOf(p Price) Pricing { return wire.PricingOf(p) }

// CostCategory is the layer a cost item belongs to (wire.CostCategory).
type CostCategory = wire.CostCategory

// The cost categories.
const (
	// CostModel is spend on models.
	CostModel = wire.CostModel
	// CostTools is spend on tools.
	CostTools = wire.CostTools
	// CostCompute is spend on compute.
	CostCompute = wire.CostCompute
	// CostHuman is spend on people.
	CostHuman = wire.CostHuman
	// CostOther is any other spend.
	CostOther = wire.CostOther
)

// CostItem is one line of a workflow's cost (wire.CostItem).
type CostItem = wire.CostItem

// Limits of cost items.
const (
	// MaxCostItems is the most cost items one workflow records.
	MaxCostItems = 256
	// MaxProviderLen bounds CostItem.Provider, in bytes.
	MaxProviderLen = 64
)

// checkCostItem reports what makes it unusable as a cost item, if anything.
func checkCostItem(it CostItem) error {
	switch {
	case !it.Category.Valid():
		return fmt.Errorf("cost item category %q is not one of model, tools, compute, human, other", it.Category)
	case len(it.Provider) > MaxProviderLen || !utf8.ValidString(it.Provider):
		return fmt.Errorf("cost item provider must be valid UTF-8 of at most %d bytes", MaxProviderLen)
	case it.Units < 0:
		return fmt.Errorf("cost item units %d is negative", it.Units)
	case it.Amount < 0 || it.Amount > MaxAmount:
		return fmt.Errorf("cost item amount %d out of range [0, %d]", it.Amount, MaxAmount)
	}
	return nil
}

// Cost is what a workflow's execution cost, with its items (wire.Cost).
type Cost = wire.Cost

// costOf sums items into a Cost; reported is Execution.ActualCost, which
// must be 0 or the sum when there are items.
func costOf(items []CostItem, reported int64) (*Cost, error) {
	if len(items) > MaxCostItems {
		return nil, fmt.Errorf("%d cost items, more than %d", len(items), MaxCostItems)
	}
	if len(items) == 0 {
		if reported < 0 || reported > MaxAmount {
			return nil, fmt.Errorf("actual cost %d out of range [0, %d]", reported, MaxAmount)
		}
		return &Cost{Amount: reported, Currency: Currency, Items: []CostItem{}}, nil
	}
	var sum int64
	for _, it := range items {
		if err := checkCostItem(it); err != nil {
			return nil, err
		}
		sum += it.Amount // each ≤ 10^14, at most 256 of them: no overflow
	}
	if sum > MaxAmount {
		return nil, fmt.Errorf("cost items sum to %d, more than %d", sum, MaxAmount)
	}
	if reported != 0 && reported != sum {
		return nil, fmt.Errorf("actual cost %d differs from the sum of the cost items, %d (report one or the other, or both equal)", reported, sum)
	}
	return &Cost{Amount: sum, Currency: Currency, Items: items}, nil
}

// Outcome is the verdict of a workflow's success criteria on its result
// (wire.Outcome).
type Outcome = wire.Outcome

// OutcomeStep is one criterion's verdict (wire.OutcomeStep).
type OutcomeStep = wire.OutcomeStep

func outcomeOf(o criteria.Outcome) *Outcome {
	out := &Outcome{Success: o.Success, Trace: make([]OutcomeStep, len(o.Trace))}
	for i, s := range o.Trace {
		out.Trace[i] = OutcomeStep{Node: s.Node, Path: s.Path, Type: s.Type, Matched: s.Matched, Reason: s.Reason}
	}
	return out
}

// ErrMarginFloorExceeded is what ReportSpend returns once a workflow's
// reported spend passed its budget: the engine has canceled the execution's
// context and fails the workflow with margin_floor_exceeded.
var ErrMarginFloorExceeded = errors.New("settleflow: spend passed the budget of the margin floor")

// spend is the running tally of what an execution reported spending.
type spend struct {
	budget  int64
	enforce bool
	cancel  context.CancelCauseFunc

	mu       sync.Mutex
	items    []CostItem
	total    int64
	exceeded bool
	bad      error // the first unusable item reported
}

type spendKey struct{}

// SpendBudget returns the most the workflow a product runs for may spend and
// still meet its margin floor at the price quoted: floor(quoted × (1 −
// floor)); ok is false when no margin floor applies (the product declares
// none and the request asked for none), and spending is then not bounded.
func SpendBudget(ctx context.Context) (budget int64, ok bool) {
	s, _ := ctx.Value(spendKey{}).(*spend)
	if s == nil || !s.enforce {
		return 0, false
	}
	return s.budget, true
}

// ReportSpend records what a product spent as it goes: the items become
// the workflow's cost (with those of Execution.CostItems). The moment the
// reported spend passes the budget (see SpendBudget), the execution's
// context is canceled and ReportSpend returns ErrMarginFloorExceeded; the
// workflow then fails with margin_floor_exceeded, nothing charged, its cost
// recorded, whatever Execute returns. An item that is not valid (an unknown
// category, a negative amount) fails the workflow with execution_failed.
// Outside an execution ReportSpend does nothing.
func ReportSpend(ctx context.Context, items ...CostItem) error {
	s, _ := ctx.Value(spendKey{}).(*spend)
	if s == nil {
		return nil
	}
	return s.report(items)
}

// report is ReportSpend on s: a product in process calls it through
// ReportSpend, a remote one's heartbeats directly (HeartbeatTask).
func (s *spend) report(items []CostItem) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.exceeded {
		return ErrMarginFloorExceeded
	}
	for _, it := range items {
		if err := checkCostItem(it); err != nil {
			if s.bad == nil {
				s.bad = err
			}
			return fmt.Errorf("settleflow: %w", err)
		}
		var bad error
		switch {
		case len(s.items) >= MaxCostItems:
			bad = fmt.Errorf("more than %d cost items", MaxCostItems)
		case s.total+it.Amount > MaxAmount: // each term ≤ MaxAmount: no overflow
			bad = fmt.Errorf("cost items sum to more than %d", MaxAmount)
		}
		if bad != nil {
			if s.bad == nil {
				s.bad = bad
			}
			return fmt.Errorf("settleflow: %w", bad)
		}
		s.items = append(s.items, it)
		s.total += it.Amount
	}
	if s.enforce && s.total > s.budget {
		s.exceeded = true
		s.cancel(ErrMarginFloorExceeded)
		return ErrMarginFloorExceeded
	}
	return nil
}

// load sets s to what a remote task's heartbeats reported (items, each
// checked as it was taken) and whether they passed the budget.
func (s *spend) load(items []CostItem, exceeded bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items, s.total = append([]CostItem(nil), items...), 0
	for _, it := range items {
		s.total += it.Amount
	}
	s.exceeded = s.exceeded || exceeded
}

// reported returns a copy of what was reported and whether it passed the
// budget.
func (s *spend) reported() ([]CostItem, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]CostItem(nil), s.items...), s.exceeded, s.bad
}
