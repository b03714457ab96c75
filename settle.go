package settleflow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// The settle stage: Settling workflows have their charges submitted to the
// Settler and are polled until the chain confirms or refuses them. Its one
// rule is that a workflow is Failed (which tells the client nothing was
// charged) only when the settler has said so for that very charge.

type settleItem struct {
	wf *Workflow
	// fresh: moved to Settling just now by this engine, so never submitted.
	fresh bool
}

// settlerTimeout bounds the Settler calls of one batch.
const settlerTimeout = time.Minute

// settleLoop submits charges and records confirmations, in batches.
func (e *Engine) settleLoop(ctx context.Context, rs *runState) {
	defer rs.pipeline.Done()
	batch := make([]settleItem, 0, e.opts.BatchSize)
	for first := range rs.settle {
		batch = drain(rs.settle, append(batch[:0], first), e.opts.BatchSize)
		e.settleBatch(ctx, rs, batch)
		for range batch {
			<-rs.slots
		}
	}
}

// settleBatch takes each workflow of batch one step on: fresh charges are
// submitted, every charge's state is asked, charges the settler forgot are
// submitted again, and the outcome is recorded. Errors stay with the charges
// they are about: a refusal fails only the charges it names, and a charge
// that may have been submitted before fails only once the settler confirms
// it is not settled.
func (e *Engine) settleBatch(ctx context.Context, rs *runState, batch []settleItem) {
	// A settler call that hangs (an RPC node that accepts and never answers)
	// must not stall the pipeline: it fails as a transient error.
	ctx, cancel := context.WithTimeout(ctx, settlerTimeout)
	defer cancel()
	now := e.now()
	if !e.settles() {
		// The SettlementLease went to another engine since these were
		// claimed: release them to it, untouched.
		us := make([]Update, len(batch))
		for i, it := range batch {
			us[i] = Update{ID: it.wf.ID, Owner: e.opts.WorkerID, Status: Settling, UpdatedAt: now, RunAt: now, Release: true}
		}
		e.update(ctx, rs, us)
		return
	}
	charges := make([]Charge, len(batch))
	for i, it := range batch {
		charges[i] = chargeOf(it.wf)
	}
	// done[i] is set once workflow i's update for this round is decided.
	us := make([]Update, len(batch))
	done := make([]bool, len(batch))
	decide := func(i int, u Update) { us[i], done[i] = u, true }
	// A charge of 0 goes nowhere near the chain: the workflow is Settled
	// at once, with no settlement.
	for i, it := range batch {
		if charges[i].Amount == 0 {
			w := it.wf
			u := Update{ID: w.ID, Owner: e.opts.WorkerID, Status: Settling, UpdatedAt: now, Release: true, RunAt: now,
				Transition: mustTo(Settling, Settled)}
			u.Event = e.event(EventWorkflowCompleted, w, Settled, now, func(*EventData) {})
			decide(i, u)
		}
	}
	open := func(keep func(i int) bool) []int {
		var out []int
		for i := range batch {
			if !done[i] && keep(i) {
				out = append(out, i)
			}
		}
		return out
	}

	// Fresh charges were never submitted: a refusal fails them at once,
	// since nothing can be on its way to the chain.
	if fresh := open(func(i int) bool { return batch[i].fresh }); len(fresh) > 0 {
		refused, err := e.submit(ctx, pick(charges, fresh))
		for _, i := range fresh {
			switch f := refused[charges[i].WorkflowID]; {
			case err != nil:
				decide(i, e.settleLater(batch[i].wf, now, err))
			case f != nil:
				decide(i, e.failUpdate(batch[i].wf, now, f))
			}
		}
	}

	asked := open(func(int) bool { return true })
	if len(asked) == 0 {
		e.update(ctx, rs, us)
		return
	}
	sts, err := e.status(ctx, pick(charges, asked))
	if err != nil {
		for _, i := range asked {
			decide(i, e.settleLater(batch[i].wf, now, err))
		}
		e.update(ctx, rs, us)
		return
	}
	state := make(map[int]SettlementStatus, len(asked))
	for j, i := range asked {
		state[i] = sts[j]
	}

	// Charges the settler does not know (it forgot them, or a crash came
	// between Settling and Submit) are submitted again; idempotency keeps
	// each single. Such a charge may have been sent in an earlier life, so
	// a refusal fails it only if the settler, asked again, still finds no
	// settlement of it.
	forgotten := open(func(i int) bool {
		return state[i].Err == nil && state[i].State == SettlementUnknown && !batch[i].fresh
	})
	if len(forgotten) > 0 {
		refused, err := e.submit(ctx, pick(charges, forgotten))
		if err == nil {
			var again []SettlementStatus
			again, err = e.status(ctx, pick(charges, forgotten))
			for j, i := range forgotten {
				if err != nil {
					break
				}
				st := again[j]
				if f := refused[charges[i].WorkflowID]; f != nil && st.Err == nil && st.State == SettlementUnknown {
					st.State = SettlementFailed
					st.Failure = &Failure{Code: f.Code, Message: f.Message +
						" (The settler was asked again after refusing this charge and holds no settlement of it: nothing was charged.)"}
				}
				state[i] = st
			}
		}
		if err != nil {
			for _, i := range forgotten {
				decide(i, e.settleLater(batch[i].wf, now, err))
			}
		}
	}

	now = e.now()
	var checks []time.Time // when pending charges are due to be asked about again
	for _, i := range open(func(int) bool { return true }) {
		w, st := batch[i].wf, state[i]
		if st.Err != nil {
			decide(i, e.settleLater(w, now, st.Err))
			continue
		}
		u := Update{ID: w.ID, Owner: e.opts.WorkerID, Status: Settling, UpdatedAt: now, Release: true}
		switch st.State {
		case SettlementConfirmed:
			s := st.Settlement
			u.Transition, u.Settlement, u.RunAt = mustTo(Settling, Settled), s, now
			u.Event = e.event(EventWorkflowCompleted, w, Settled, now, func(d *EventData) { d.Settlement = s })
		case SettlementFailed:
			f := st.Failure
			if f == nil {
				f = &Failure{Code: FailureSettlementFailed, Message: "the settler reported the charge failed"}
			}
			e.fail(&u, w, now, f)
		default: // pending (or still unknown right after submission)
			u.Settlement, u.RunAt = st.Settlement, now.Add(e.settleCheck(st.CheckAfter))
			checks = append(checks, u.RunAt)
		}
		decide(i, u)
	}
	e.update(ctx, rs, us)
	// Wake-ups only once the updates are written: a wake-up that came first
	// would find the check not yet due and be spent.
	for _, t := range checks {
		e.wakeAt(t)
	}
}

// submit hands charges to the settler and returns those it refused for good,
// with why. An error return is transient: none of the charges is known to be
// taken or refused. A permanent error that names no charge is narrowed down
// by submitting the charges in halves (submitting a charge again is
// harmless), so it fails only the charges it is about.
func (e *Engine) submit(ctx context.Context, cs []Charge) (map[string]*Failure, error) {
	err := e.settler.Submit(ctx, cs)
	if err == nil {
		return nil, nil
	}
	var re *RefusedError
	if errors.As(err, &re) {
		refused := make(map[string]*Failure, len(re.Refused))
		for _, c := range cs {
			if f := re.Refused[c.WorkflowID]; f != nil {
				refused[c.WorkflowID] = f
			}
		}
		if len(refused) < len(re.Refused) {
			e.log.Error("the settler refused charges it was not given; ignoring them", zap.Int("refused", len(re.Refused)), zap.Int("given", len(refused)))
		}
		return refused, nil
	}
	if !IsPermanent(err) {
		return nil, err
	}
	if len(cs) == 1 {
		return map[string]*Failure{cs[0].WorkflowID: failureOf(err, FailureSettlementFailed)}, nil
	}
	half := len(cs) / 2
	refused, err := e.submit(ctx, cs[:half])
	if err != nil {
		return nil, err
	}
	more, err := e.submit(ctx, cs[half:])
	if err != nil {
		return nil, err
	}
	if refused == nil {
		return more, nil
	}
	for id, f := range more {
		refused[id] = f
	}
	return refused, nil
}

// status asks the settler for the state of cs. Any error, and an answer of
// the wrong length, is transient: the engine cannot account for the charges
// and asks again later.
func (e *Engine) status(ctx context.Context, cs []Charge) ([]SettlementStatus, error) {
	if len(cs) == 0 {
		return nil, nil
	}
	sts, err := e.settler.Status(ctx, cs)
	if err == nil && len(sts) != len(cs) {
		err = fmt.Errorf("settler answered %d statuses for %d charges", len(sts), len(cs))
	}
	return sts, err
}

// minSettleCheck is the soonest the engine asks about a pending charge again.
const minSettleCheck = 10 * time.Millisecond

// settleCheck is how long a pending charge waits for its next check: the
// settler's hint, within [minSettleCheck, SettlementPollInterval].
func (e *Engine) settleCheck(hint time.Duration) time.Duration {
	if hint <= 0 {
		return e.opts.SettlementPollInterval
	}
	return min(max(hint, minSettleCheck), e.opts.SettlementPollInterval)
}

// settleLater is the update after a transient settler error: the workflow
// stays Settling and is checked again after a backoff, without limit, since
// a charge that may be on its way to the chain is never given up on.
func (e *Engine) settleLater(w *Workflow, now time.Time, err error) Update {
	u := Update{ID: w.ID, Owner: e.opts.WorkerID, Status: Settling, UpdatedAt: now, Release: true}
	u.Attempts = w.Attempts + 1
	u.RunAt = now.Add(e.opts.Retry.Backoff(u.Attempts))
	e.log.Warn("settlement failed; will retry", zap.String("workflow", w.ID), zap.Int("attempt", u.Attempts), zap.Error(err))
	return u
}

// failUpdate is the update that fails a Settling workflow with f.
func (e *Engine) failUpdate(w *Workflow, now time.Time, f *Failure) Update {
	u := Update{ID: w.ID, Owner: e.opts.WorkerID, Status: Settling, UpdatedAt: now}
	e.fail(&u, w, now, f)
	return u
}

func pick(cs []Charge, at []int) []Charge {
	out := make([]Charge, len(at))
	for j, i := range at {
		out[j] = cs[i]
	}
	return out
}
