package settleflow

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/settleflow/settleflow/criteria"
	"github.com/settleflow/settleflow/internal/stage"
)

type workflowIDKey struct{}

// WorkflowID returns the id of the workflow a product's Execute runs for.
func WorkflowID(ctx context.Context) string {
	id, _ := ctx.Value(workflowIDKey{}).(string)
	return id
}

type execResult struct {
	wf    *Workflow
	exec  Execution
	err   error
	spent *spend   // what the product reported spending as it ran
	task  *taskRun // a remote product's: the attempt's task
}

// execute runs w's product: the execute stage's executions (run).
func (e *Engine) execute(ctx context.Context, w *Workflow) execResult {
	res := execResult{wf: w}
	prod, ok := e.products.get(w.Product)
	if !ok {
		res.err = Permanent(&Failure{Code: FailureProductUnavailable, Message: fmt.Sprintf("product %q is not registered with this engine", w.Product)})
	} else {
		ectx, cancel := context.WithTimeout(context.WithValue(ctx, workflowIDKey{}, w.ID), e.opts.ExecutionTimeout)
		ectx, cancelSpend := context.WithCancelCause(ectx)
		res.spent = &spend{cancel: cancelSpend}
		if w.MarginFloor != nil {
			res.spent.enforce, res.spent.budget = true, Budget(w.Quoted.Amount, *w.MarginFloor)
		}
		ectx = context.WithValue(ectx, spendKey{}, res.spent)
		if prod.remote {
			res.task, res.exec, res.err = e.runRemote(ectx, w, res.spent)
		} else {
			res.exec, res.err = runProduct(ectx, prod, w.Payload)
		}
		cancelSpend(nil)
		cancel()
	}
	return res
}

// runProduct runs a product, turning a panic into a permanent failure: a
// product that panics on a payload will panic on it again.
func runProduct(ctx context.Context, p *product, payload json.RawMessage) (ex Execution, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = Permanent(&Failure{Code: FailureExecutionPanicked, Message: fmt.Sprint("product panicked: ", r)})
		}
	}()
	return p.execute(ctx, payload)
}

// finish is the update that records one execution's result (the finish
// stage's decide): a success moves the workflow to Settling, returned as it
// is then; a failure is retried or fails it.
func (e *Engine) finish(ctx context.Context, r execResult, now time.Time) (Update, *Workflow) {
	w := r.wf
	u := Update{ID: w.ID, Owner: e.opts.WorkerID, Status: Running, UpdatedAt: now}
	var (
		reported []CostItem
		exceeded bool
		badItem  error
		next     *Workflow
	)
	if r.spent != nil {
		reported, exceeded, badItem = r.spent.reported()
	}
	switch {
	case exceeded:
		// The product's spend passed its budget: the engine canceled it,
		// and whatever it returned, nothing is charged.
		// ReportSpend checked each item, their count and their sum.
		cost, _ := costOf(reported, 0)
		f := &Failure{Code: FailureMarginFloorExceeded, Message: fmt.Sprintf(
			"the product reported spending %d, more than the budget of %d its margin floor of %s leaves at the quoted %d (minor units of %s); it was stopped and nothing was charged",
			cost.Amount, r.spent.budget, *w.MarginFloor, w.Quoted.Amount, w.Quoted.Currency)}
		u.ActualCost, u.Cost = &cost.Amount, cost
		stage.Fail(&u, w, now, f)
		u.Event.Data.Cost = cost
	case badItem != nil:
		// Whatever the product made of ReportSpend's error: an unusable
		// item will be reported again on a retry.
		stage.Fail(&u, w, now, &Failure{Code: FailureExecutionFailed, Message: "product reported an unusable cost item: " + badItem.Error()})
	case r.err == nil:
		var err error
		next, err = e.decide(w, r.exec, reported, now)
		if err != nil {
			stage.Fail(&u, w, now, &Failure{Code: FailureExecutionFailed, Message: "product reported an unusable result: " + err.Error()})
			break
		}
		u.Transition = stage.MustTo(Running, Settling)
		u.Result, u.ActualCost, u.Achieved = next.Result, next.ActualCost, next.Margin.Achieved
		u.Charged, u.Cost, u.Outcome = &next.Charged.Amount, next.Cost, next.Outcome
		u.Attempts = 0
		if r.spent != nil && r.spent.enforce && next.Cost.Amount > r.spent.budget {
			// The product did not stop at its budget: flag it.
			u.Event = stage.WorkflowEvent(EventWorkflowMarginBelowFloor, next, Settling, now, nil)
		}
	case ctx.Err() != nil && errors.Is(r.err, context.Canceled), errors.Is(r.err, errTaskWithdrawn):
		// Cut short by Stop (or, remote, not claimed by a worker before
		// Stop): release for another worker, not a failure.
		u.Release, u.RunAt, u.Attempts = true, now, w.Attempts
	case IsPermanent(r.err):
		stage.Fail(&u, w, now, stage.FailureOf(r.err, FailureExecutionFailed))
	default:
		attempts := w.Attempts + 1
		if attempts >= e.opts.Retry.MaxAttempts {
			stage.Fail(&u, w, now, &Failure{Code: FailureAttemptsExceeded,
				Message: fmt.Sprintf("execution failed %d times; last error: %v", attempts, r.err)})
			break
		}
		e.log.Warn("execution failed; will retry", zap.String("workflow", w.ID), zap.Int("attempt", attempts), zap.Error(r.err))
		u.Release, u.Attempts, u.RunAt = true, attempts, now.Add(e.opts.Retry.Backoff(attempts))
	}
	if u.Failure != nil && u.Cost == nil && len(reported) > 0 && badItem == nil {
		// A failed run keeps what it reported spending (of its last
		// attempt): nothing is charged, and the cost is on record.
		if cost, err := costOf(reported, 0); err == nil {
			u.ActualCost, u.Cost = &cost.Amount, cost
			u.Event.Data.Cost = cost
		}
	}
	if r.task != nil {
		u.Attempt = e.tasks.attempt(r.task, r.err, now)
	}
	return u, next
}

// decide is what a workflow becomes once its product ran: its result, its
// cost (items reported while it ran, then the execution's), the verdict of
// its success criteria, and from these its charge and achieved margin. It
// returns w as it is in Settling.
func (e *Engine) decide(w *Workflow, ex Execution, reported []CostItem, now time.Time) (*Workflow, error) {
	result, err := marshalResult(ex.Result)
	if err != nil {
		return nil, err
	}
	cost, err := costOf(append(reported, ex.CostItems...), ex.ActualCost)
	if err != nil {
		return nil, err
	}
	next := *w
	next.Status, next.Result, next.UpdatedAt, next.Attempts = Settling, result, now, 0
	next.Cost = cost
	next.ActualCost = &cost.Amount
	success := false
	if c, err := e.criteriaOf(w); err != nil {
		return nil, fmt.Errorf("success criteria: %w", err)
	} else if c != nil {
		next.Outcome = outcomeOf(c.Evaluate(result))
		success = next.Outcome.Success
	}
	price := w.Pricing.Price(w.Margin.Target)
	charged := price.Charge(w.Quoted.Amount, cost.Amount, success)
	next.Charged = &Money{Amount: charged, Currency: w.Quoted.Currency}
	achieved := AchievedMarginOf(w.Quoted.Amount, charged, cost.Amount)
	next.Margin.Achieved = &achieved
	return &next, nil
}

// criteriaOf returns the parsed success criteria of w: its product's,
// already parsed, when they are the same tree, else parsed now.
func (e *Engine) criteriaOf(w *Workflow) (*criteria.Criteria, error) {
	if len(w.SuccessCriteria) == 0 || string(w.SuccessCriteria) == "null" {
		return nil, nil
	}
	if p, ok := e.products.get(w.Product); ok && p.criteria != nil && bytes.Equal(p.info.SuccessCriteria, w.SuccessCriteria) {
		return p.criteria, nil
	}
	return criteria.Parse(w.SuccessCriteria)
}

func marshalResult(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if string(b) == "null" {
		return nil, nil
	}
	if len(b) == 0 || b[0] != '{' {
		return nil, errors.New("result must marshal to a JSON object")
	}
	return b, nil
}
