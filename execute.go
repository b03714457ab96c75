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
)

// executeStage claims due workflows and executes their products: Running
// ones in executions of their own, Settling ones handed to the settle stage.
// Stop ends the claims, then waits for the executions (canceling them when
// Stop's ctx ends) and closes the finish stage's input.
type executeStage struct {
	e            *Engine
	rs           *runState
	cancelClaims context.CancelFunc
	claimsDone   chan struct{}
}

func (s *executeStage) Name() string { return "execute" }

func (s *executeStage) Start(context.Context) error {
	claimCtx, cancel := context.WithCancel(context.Background())
	s.cancelClaims = cancel
	s.claimsDone = goStage(func() { s.e.claimLoop(claimCtx, s.rs.workCtx, s.rs) })
	return nil
}

func (s *executeStage) Stop(ctx context.Context) error {
	if s.cancelClaims == nil {
		return nil
	}
	s.cancelClaims()
	<-s.claimsDone
	executed := goStage(s.rs.work.Wait)
	err := awaitStage(ctx, s.rs, executed)
	close(s.rs.results) // no execution is left to send
	return err
}

// claimLoop leases due workflows whenever a worker slot is free and hands
// each to an execution (Running) or to the settle stage (Settling).
func (e *Engine) claimLoop(ctx, workCtx context.Context, rs *runState) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-e.wake:
		}
		// Claim until the queue is empty (or no slot frees up).
		claimed := e.now()
		for ctx.Err() == nil && e.claimOnce(ctx, workCtx, rs) > 0 {
		}
		timer.Reset(e.nextPoll(claimed))
	}
}

// claimOnce claims one batch; it returns how many it claimed, or -1 when no
// slot is free or the store failed.
func (e *Engine) claimOnce(ctx, workCtx context.Context, rs *runState) int {
	// Take at least one slot, blocking, then as many more as are free.
	select {
	case rs.slots <- struct{}{}:
	case <-ctx.Done():
		return -1
	}
	free := 1
	for free < e.opts.BatchSize {
		select {
		case rs.slots <- struct{}{}:
			free++
			continue
		default:
		}
		break
	}
	now := e.now()
	settles := e.takeSettlement(ctx, rs, now)
	ws, err := e.store.ClaimWorkflows(ctx, Claim{Owner: e.opts.WorkerID, Now: now, LeaseUntil: now.Add(e.lease), Limit: free,
		ExcludeSettling: !settles})
	if err != nil {
		if ctx.Err() == nil {
			e.log.Error("claiming workflows failed", zap.Error(err))
		}
		ws = nil
	}
	for i := len(ws); i < free; i++ {
		<-rs.slots
	}
	if err != nil {
		return -1
	}
	for _, w := range ws {
		switch w.Status {
		case Running:
			rs.work.Add(1)
			go e.execute(workCtx, rs, w)
		case Settling:
			rs.settle <- settleItem{wf: w, leaseUntil: now.Add(e.lease)}
		default:
			e.log.Error("store returned a claimed workflow in an unexpected status", zap.String("workflow", w.ID), zap.String("status", string(w.Status)))
			<-rs.slots
		}
	}
	return len(ws)
}

// takeSettlement reports whether this engine settles now; at the start of
// each SettlementLease term it first takes the Settling workflows of former
// holders (ReleaseSettling), so a holder that died leaves none waiting out
// its leases.
func (e *Engine) takeSettlement(ctx context.Context, rs *runState, now time.Time) bool {
	if e.opts.SettlementLease == nil {
		return true
	}
	term := e.opts.SettlementLease.Term()
	if term == 0 || term == rs.settleTerm {
		return term != 0
	}
	if err := e.store.ReleaseSettling(ctx, now); err != nil {
		if ctx.Err() == nil {
			e.log.Error("taking over the Settling workflows of a former settlement lease holder failed; will retry", zap.Error(err))
		}
		return false
	}
	rs.settleTerm = term
	e.log.Info("settlement lease held: settling, with the Settling workflows of former holders", zap.Uint64("term", term))
	return true
}

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
	spent *spend // what the product reported spending as it ran
}

func (e *Engine) execute(ctx context.Context, rs *runState, w *Workflow) {
	defer rs.work.Done()
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
		res.exec, res.err = runProduct(ectx, prod, w.Payload)
		cancelSpend(nil)
		cancel()
	}
	rs.results <- res
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

// finishLoop records execution results in batches: successes move to
// Settling and go on to the settle stage; failures are retried or fail.
func (e *Engine) finishLoop(ctx context.Context, rs *runState) {
	defer close(rs.settle)
	batch := make([]execResult, 0, e.opts.BatchSize)
	for first := range rs.results {
		batch = drain(rs.results, append(batch[:0], first), e.opts.BatchSize)
		e.finish(ctx, rs, batch)
	}
}

func (e *Engine) finish(ctx context.Context, rs *runState, batch []execResult) {
	now := e.now()
	settles := e.settles()
	us := make([]Update, len(batch))
	settling := make([]*Workflow, len(batch))
	for i, r := range batch {
		w := r.wf
		u := Update{ID: w.ID, Owner: e.opts.WorkerID, Status: Running, UpdatedAt: now}
		var (
			reported []CostItem
			exceeded bool
			badItem  error
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
			e.fail(&u, w, now, f)
			u.Event.Data.Cost = cost
		case badItem != nil:
			// Whatever the product made of ReportSpend's error: an unusable
			// item will be reported again on a retry.
			e.fail(&u, w, now, &Failure{Code: FailureExecutionFailed, Message: "product reported an unusable cost item: " + badItem.Error()})
		case r.err == nil:
			next, err := e.decide(w, r.exec, reported, now)
			if err != nil {
				e.fail(&u, w, now, &Failure{Code: FailureExecutionFailed, Message: "product reported an unusable result: " + err.Error()})
				break
			}
			u.Transition = mustTo(Running, Settling)
			u.Result, u.ActualCost, u.Achieved = next.Result, next.ActualCost, next.Margin.Achieved
			u.Charged, u.Cost, u.Outcome = &next.Charged.Amount, next.Cost, next.Outcome
			u.Attempts = 0
			if r.spent != nil && r.spent.enforce && next.Cost.Amount > r.spent.budget {
				// The product did not stop at its budget: flag it.
				u.Event = e.event(EventWorkflowMarginBelowFloor, next, Settling, now, func(*EventData) {})
			}
			if !settles {
				// Another engine holds the SettlementLease: hand the charge
				// to it through the Store, due now.
				u.Release, u.RunAt = true, now
				break
			}
			// Keep the lease: this worker submits the charge next, under
			// the sequence the Store gives it in the same transaction (a
			// charge of 0 takes none: it never reaches the chain), and
			// holds the workflow until the chain decides.
			u.RunAt = now.Add(e.settleLease())
			if next.Charged.Amount > 0 {
				u.Sequence = &next.Sequence
			}
			settling[i] = next
		case ctx.Err() != nil && errors.Is(r.err, context.Canceled):
			// Cut short by Stop: release for another worker, not a failure.
			u.Release, u.RunAt, u.Attempts = true, now, w.Attempts
		case IsPermanent(r.err):
			e.fail(&u, w, now, failureOf(r.err, FailureExecutionFailed))
		default:
			attempts := w.Attempts + 1
			if attempts >= e.opts.Retry.MaxAttempts {
				e.fail(&u, w, now, &Failure{Code: FailureAttemptsExceeded,
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
		us[i] = u
	}
	applied := e.update(ctx, rs, us)
	for i := range batch {
		if applied[i] && settling[i] != nil {
			if settling[i].Sequence == 0 && settling[i].ChargeAmount() > 0 {
				// A Store that broke its contract: never submit a charge
				// without its number. The lease ends and the settle stage
				// claims the workflow again (numbering it then).
				e.log.Error("store moved a workflow to Settling without giving it a sequence; its charge waits for the lease to end", zap.String("workflow", settling[i].ID))
				<-rs.slots
				continue
			}
			rs.settle <- settleItem{wf: settling[i], fresh: true, leaseUntil: us[i].RunAt}
			continue
		}
		<-rs.slots
	}
}

// update applies us, retrying the store until it answers: results the engine
// computed are not thrown away for a passing database error. It gives up
// only when ctx ends (the leases then expire and the work is redone). Events
// of applied updates go to the dispatcher in memory, pre-leased.
func (e *Engine) update(ctx context.Context, rs *runState, us []Update) []bool {
	lease := e.now().Add(2 * e.opts.NotifyTimeout)
	for i := range us {
		if us[i].Event != nil {
			us[i].EventLease = lease
		}
	}
	for attempt := 1; ; attempt++ {
		applied, err := e.store.UpdateWorkflows(context.WithoutCancel(ctx), us)
		if err == nil {
			var evs []Event
			for i, ok := range applied {
				if ok && us[i].Event != nil {
					evs = append(evs, *us[i].Event)
				}
			}
			if len(evs) > 0 {
				select {
				case rs.handoff <- evs:
				default:
					e.handBack(ctx, evs)
				}
			}
			return applied
		}
		e.log.Error("recording workflow updates failed; retrying", zap.Int("attempt", attempt), zap.Error(err))
		select {
		case <-ctx.Done():
			return make([]bool, len(us))
		case <-time.After(min(time.Duration(attempt)*100*time.Millisecond, 5*time.Second)):
		}
	}
}

// handBack returns events the dispatcher had no room for to the outbox, due
// now, and wakes the dispatcher to claim them: a missed handoff costs a
// claim, not the lease they were written with. If even that write fails,
// the events come back when their lease ends.
func (e *Engine) handBack(ctx context.Context, evs []Event) {
	ids := make([]string, len(evs))
	for i := range evs {
		ids[i] = evs[i].ID
	}
	if err := e.store.RetryEvents(context.WithoutCancel(ctx), ids, e.now()); err != nil {
		e.log.Warn("events not handed back to the outbox; they are dispatched when their lease ends", zap.Int("events", len(ids)), zap.Error(err))
		return
	}
	signal(e.eventsWake)
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

func failureOf(err error, code ErrorCode) *Failure {
	var f *Failure
	if errors.As(err, &f) {
		return f
	}
	var p *PermanentError
	if errors.As(err, &p) {
		err = p.Err
	}
	return &Failure{Code: code, Message: err.Error()}
}

// fail turns u into the transition to Failed, with its event.
func (e *Engine) fail(u *Update, w *Workflow, now time.Time, f *Failure) {
	u.Transition = mustTo(u.Status, Failed)
	u.Failure = f
	u.Release = true
	u.RunAt = now
	u.Event = e.event(EventWorkflowFailed, w, Failed, now, func(d *EventData) { d.Failure = f })
}
