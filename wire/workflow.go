package wire

import (
	"encoding/json"
	"fmt"
	"time"
)

// Status is a workflow's state. The names are part of the wire contract.
type Status string

// The states of a workflow. See the package documentation for the diagram.
const (
	// Pending: created and quoted, queued for execution.
	Pending Status = "Pending"
	// Running: the product is executing.
	Running Status = "Running"
	// Settling: the charge is on its way to the chain and waits for
	// confirmations.
	Settling Status = "Settling"
	// Settled: the charge is confirmed; workflow.completed was emitted.
	Settled Status = "Settled"
	// Failed: execution or settlement failed for good; workflow.failed was
	// emitted.
	Failed Status = "Failed"
	// Canceled: canceled while still Pending (Engine.Cancel); it was never
	// executed and nothing was charged; workflow.canceled was emitted.
	Canceled Status = "Canceled"
)

// Statuses lists every status in the order of the state machine.
var Statuses = []Status{Pending, Running, Settling, Settled, Failed, Canceled}

// transitions is the state machine, and the only place it is written down.
// Store adapters derive their database guard from it (see Transitions).
var transitions = map[Status][]Status{
	// Only a Pending workflow can be canceled: from Running on, the product
	// may have spent its cost, and from Settling on a charge may be on chain.
	Pending:  {Running, Canceled},
	Running:  {Settling, Failed},
	Settling: {Settled, Failed},
}

// Valid reports whether s is one of the statuses in Statuses.
func (s Status) Valid() bool {
	switch s {
	case Pending, Running, Settling, Settled, Failed, Canceled:
		return true
	}
	return false
}

// Terminal reports whether no transition leaves s: the workflow never
// changes again.
func (s Status) Terminal() bool { return s == Settled || s == Failed || s == Canceled }

// statusNames is the list of statuses for error messages.
const statusNames = "Pending, Running, Settling, Settled, Failed, Canceled"

// ParseStatus returns the status named by s, exactly as on the wire.
func ParseStatus(s string) (Status, error) {
	st := Status(s)
	if !st.Valid() {
		return "", fmt.Errorf("settleflow: unknown status %q (want one of %s)", s, statusNames)
	}
	return st, nil
}

// Transition is a legal move between two statuses. The zero Transition means
// "no change of status". A non-zero Transition can only be obtained from
// [Status.To], so a Store that applies Transitions cannot apply an illegal one.
type Transition struct {
	from, to Status
}

// To returns the transition from s to next, or an error if the state machine
// does not allow it.
func (s Status) To(next Status) (Transition, error) {
	for _, allowed := range transitions[s] {
		if allowed == next {
			return Transition{from: s, to: next}, nil
		}
	}
	return Transition{}, fmt.Errorf("settleflow: illegal transition %s → %s", s, next)
}

// From is the status the workflow must have for the transition to apply.
func (t Transition) From() Status { return t.from }

// Next is the status the transition moves to.
func (t Transition) Next() Status { return t.to }

// IsZero reports whether t is "no change of status".
func (t Transition) IsZero() bool { return t.from == "" }

// Transitions lists every legal transition, for Store adapters that enforce
// the state machine in the database too.
func Transitions() []Transition {
	var out []Transition
	for _, from := range Statuses {
		for _, to := range transitions[from] {
			out = append(out, Transition{from: from, to: to})
		}
	}
	return out
}

// Workflow is a priced run of a product for a customer. Its JSON form is the
// wire object of the HTTP API.
type Workflow struct {
	ID         string          `json:"id"`
	Object     string          `json:"object"`
	Livemode   bool            `json:"livemode"`
	Product    string          `json:"product"`
	CustomerID string          `json:"customerId"`
	Payload    json.RawMessage `json:"payload"`
	// Quoted is the price quoted at creation: the most that can be
	// charged, and what the customer's balance reserves.
	Quoted Money `json:"quoted"`
	// Pricing is the pricing model the workflow was created under.
	Pricing Pricing `json:"pricing"`
	// SuccessCriteria is the criteria tree its outcome is judged by (the
	// request's, else the product's), or null.
	SuccessCriteria json.RawMessage `json:"successCriteria"`
	// MarginFloor is the margin floor in force (the product's, or the
	// request's if higher), or null when none.
	MarginFloor *BasisPoints    `json:"marginFloor"`
	Margin      Margin          `json:"margin"`
	Status      Status          `json:"status"`
	Result      json.RawMessage `json:"result"`
	Settlement  *Settlement     `json:"settlement"`
	Failure     *Failure        `json:"failure"`
	// Charged is what the workflow is charged, decided once it ran (null
	// before, and when it failed): at most Quoted, and 0 for an outcome
	// that earns nothing.
	Charged *Money `json:"charged"`
	// Cost is what the execution cost, with its breakdown; null until
	// executed.
	Cost *Cost `json:"cost"`
	// Outcome is the verdict of SuccessCriteria on the result; null when
	// there are no criteria or nothing was evaluated.
	Outcome *Outcome `json:"outcome"`
	// Refunded is the sum of the workflow's Succeeded refunds.
	Refunded  Money     `json:"refunded"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`

	// Sequence is the workflow's number in its environment (see
	// settleflow.Charge.Sequence); 0 until the Store assigns it, when the workflow is
	// first to be settled (settleflow.Update.Sequence).
	Sequence uint64 `json:"-"`
	// ActualCost is the cost execution reported, in minor units; nil before.
	ActualCost *int64 `json:"-"`
	// Attempts counts executions and settlement checks that ended in a
	// transient error since the last state change.
	Attempts int `json:"-"`
	// Reserved is the amount the workflow holds of its customer's balance
	// (settleflow.Insert.Reserve): its quote while it is unfinished, 0 when its
	// environment's charges are not paid from customer balances. A Store
	// keeps it after the workflow finishes (as a record that the ledger
	// counted it).
	Reserved int64 `json:"-"`
	// AccountRef is the customer's settleflow.Account.Ref the reservation was made
	// against (or, for a workflow paid by an Authorization, the account its
	// charge is credited to and debited from); empty without one.
	AccountRef string `json:"-"`
	// Authorization, when not empty, is the payment authorization that
	// pays the workflow's charge instead of a reservation of its customer's
	// balance (an x402 buyer's signed permit): opaque to the engine, kept
	// with the workflow's terms and handed to the settler with its charge
	// (settleflow.Charge.Authorization).
	Authorization json.RawMessage `json:"-"`
}

// Environment returns the environment the workflow belongs to.
func (w *Workflow) Environment() Environment {
	if w.Livemode {
		return Live
	}
	return Test
}

// ChargeAmount is what w is charged: Charged when decided, else the quoted
// amount (workflows stored before charges were decided separately).
func (w *Workflow) ChargeAmount() int64 {
	if w.Charged != nil {
		return w.Charged.Amount
	}
	return w.Quoted.Amount
}

// Terms returns w's pricing, success criteria and margin floor as one
// value, for a Store to keep.
func (w *Workflow) Terms() Terms {
	t := Terms{Pricing: w.Pricing, SuccessCriteria: w.SuccessCriteria, Authorization: w.Authorization}
	if w.MarginFloor != nil {
		t.MarginFloor = *w.MarginFloor
	}
	return t
}

// SetTerms sets what Terms returns; the zero Terms (a workflow stored before
// pricing models) is fixed pricing with neither criteria nor floor.
func (w *Workflow) SetTerms(t Terms) {
	w.Pricing = t.Pricing
	if w.Pricing.Model == "" {
		w.Pricing.Model = PricingFixed
	}
	w.SuccessCriteria = t.SuccessCriteria
	w.Authorization = t.Authorization
	w.MarginFloor = nil
	if t.MarginFloor > 0 {
		f := t.MarginFloor
		w.MarginFloor = &f
	}
}

// Terms are what a workflow was created under, beyond its quote: its
// pricing, the success criteria its outcome is judged by, and its margin
// floor. Stores keep them as one value (see Workflow.Terms).
type Terms struct {
	Pricing         Pricing         `json:"pricing"`
	SuccessCriteria json.RawMessage `json:"successCriteria,omitempty"`
	MarginFloor     BasisPoints     `json:"marginFloor,omitempty"`
	// Authorization is Workflow.Authorization.
	Authorization json.RawMessage `json:"authorization,omitempty"`
}
