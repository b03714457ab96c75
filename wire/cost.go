package wire

// CostCategory is the layer a cost item belongs to. The names are part of
// the wire contract.
type CostCategory string

// The cost categories.
const (
	CostModel   CostCategory = "model"
	CostTools   CostCategory = "tools"
	CostCompute CostCategory = "compute"
	CostHuman   CostCategory = "human"
	CostOther   CostCategory = "other"
)

// Valid reports whether c is one of the cost categories.
func (c CostCategory) Valid() bool {
	switch c {
	case CostModel, CostTools, CostCompute, CostHuman, CostOther:
		return true
	}
	return false
}

// CostItem is one line of a workflow's cost: what was spent in one
// category at one provider.
type CostItem struct {
	Category CostCategory `json:"category"`
	// Provider names who was paid ("openai", "ocr-service", "reviewer"),
	// at most 64 bytes; may be empty.
	Provider string `json:"provider"`
	// Units is how much was used, in the provider's unit (tokens, calls,
	// milliseconds); informational.
	Units int64 `json:"units"`
	// Amount is what it cost, in minor units of the workflow's currency.
	Amount int64 `json:"amount"`
}

// Cost is what a workflow's execution cost: the sum of its items (or, for a
// product that reports no items, the actual cost it reported, with no
// items).
type Cost struct {
	Amount   int64      `json:"amount"`
	Currency string     `json:"currency"`
	Items    []CostItem `json:"items"`
}

// Outcome is the verdict of a workflow's success criteria on its result,
// with each criterion's step.
type Outcome struct {
	Success bool          `json:"success"`
	Trace   []OutcomeStep `json:"trace"`
}

// OutcomeStep is one criterion's verdict, in tree order (a combinator
// before its children).
type OutcomeStep struct {
	// Node is the criterion's place in the tree ("" for the root,
	// "criteria[1]").
	Node string `json:"node"`
	// Path is the JSON Pointer a leaf tested ("" for the whole result and
	// for combinators).
	Path    string `json:"path"`
	Type    string `json:"type"`
	Matched bool   `json:"matched"`
	// Reason says why, for people.
	Reason string `json:"reason"`
}
