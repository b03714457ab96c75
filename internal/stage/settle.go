package stage

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/settleflow/settleflow/driver"
	"github.com/settleflow/settleflow/wire"
	"go.uber.org/zap"
)

// The settle stage: Settling workflows have their charges submitted to the
// Settler and are polled until the chain confirms or refuses them. Its one
// rule is that a workflow is Failed (which tells the client nothing was
// charged) only when the settler has said so for that very charge.

// maxHeldPerBatch bounds the Settling workflows the settle stage holds in
// memory, in batches: past BatchSize × maxHeldPerBatch, a pending charge's
// workflow is released to the Store until its next check, as any is after
// a transient error.
const maxHeldPerBatch = 64

// Settle is the settle stage: it takes the Settling workflows the execute
// stage claims and the finish stage moves to Settling, submits their charges
// to the Settler and follows each to the chain's decision. Stop waits until
// the stages that feed it have stopped (its line is closed) and it has
// released what it holds.
type Settle struct {
	env     *Env
	lines   *Lines
	rec     *Recorder
	wake    *Wakeups
	settler driver.Settler
	done    chan struct{}
}

// NewSettle returns the settle stage of a run.
func NewSettle(env *Env, lines *Lines, rec *Recorder, wake *Wakeups, settler driver.Settler) *Settle {
	return &Settle{env: env, lines: lines, rec: rec, wake: wake, settler: settler}
}

// Name implements Stage.
func (ss *Settle) Name() string { return "settle" }

// Start implements Stage.
func (ss *Settle) Start(context.Context) error {
	ss.done = goStage(func() { ss.loop(ss.lines.WorkCtx) })
	return nil
}

// Stop implements Stage.
func (ss *Settle) Stop(ctx context.Context) error { return await(ctx, ss.lines, ss.done) }

// Round runs one round of the stage over ws outside its loop, as the loop
// does for a batch; fresh[i] tells whether ws[i] was just moved to Settling
// by this engine (so never submitted). The workflows must be Settling and
// leased to the engine's WorkerID. Tests use it.
func (ss *Settle) Round(ctx context.Context, ws []*wire.Workflow, fresh []bool) {
	batch := make([]settleItem, len(ws))
	for i, w := range ws {
		batch[i] = settleItem{wf: w, fresh: fresh[i]}
	}
	ss.settleBatch(ctx, batch, &heldItems{})
}

// settleLoop submits charges and records confirmations, in batches. A
// workflow whose charge is pending stays in its memory, leased, until the
// chain decides (see holdPending): its checks write nothing unless they
// learn something, and it is never released to the Store and claimed
// again between them.
func (ss *Settle) loop(ctx context.Context) {
	held := &heldItems{}
	batch := make([]settleItem, 0, ss.env.BatchSize)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		var due <-chan time.Time
		if held.Len() > 0 {
			timer.Reset(max(held.next().Sub(ss.env.Now()), 0))
			due = timer.C
		}
		select {
		case first, ok := <-ss.lines.settle:
			if !ok {
				ss.releaseHeld(ctx, held)
				return
			}
			batch = Drain(ss.lines.settle, append(batch[:0], first), ss.env.BatchSize)
			slots := len(batch)
			batch = held.popDue(batch, ss.env.Now(), ss.env.BatchSize)
			ss.settleBatch(ctx, batch, held)
			ss.lines.release(slots)
		case <-due:
			if batch = held.popDue(batch[:0], ss.env.Now(), ss.env.BatchSize); len(batch) > 0 {
				ss.settleBatch(ctx, batch, held)
			}
		}
		timer.Stop()
	}
}

// releaseHeld gives the held workflows back to the Store at Stop, each due
// at its next check, for whichever engine settles next, with the pending
// settlement a check found and did not write yet.
func (ss *Settle) releaseHeld(ctx context.Context, held *heldItems) {
	if held.Len() == 0 {
		return
	}
	now := ss.env.Now()
	us := make([]driver.Update, 0, held.Len())
	for _, it := range *held {
		// The write that releases it shows its settlement too: the next
		// engine knows the charge is on its way however young it is.
		us = append(us, driver.Update{ID: it.wf.ID, Owner: ss.env.WorkerID, Status: wire.Settling, UpdatedAt: now, Release: true, RunAt: it.due,
			Settlement: it.unshown})
	}
	*held = (*held)[:0]
	ss.rec.Record(ctx, us)
}

// heldItems is a min-heap of held workflows by their next check.
type heldItems []settleItem

func (h heldItems) Len() int            { return len(h) }
func (h heldItems) Less(i, j int) bool  { return h[i].due.Before(h[j].due) }
func (h heldItems) Swap(i, j int)       { h[i], h[j] = h[j], h[i] }
func (h *heldItems) Push(x any)         { *h = append(*h, x.(settleItem)) }
func (h heldItems) next() time.Time     { return h[0].due }
func (h *heldItems) hold(it settleItem) { heap.Push(h, it) }
func (h *heldItems) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}

// popDue appends to batch the held workflows due by now, earliest first,
// until batch holds max.
func (h *heldItems) popDue(batch []settleItem, now time.Time, max int) []settleItem {
	for h.Len() > 0 && len(batch) < max && !h.next().After(now) {
		batch = append(batch, heap.Pop(h).(settleItem))
	}
	return batch
}

// settleBatch takes each workflow of batch one step on: fresh charges are
// submitted, every charge's state is asked, charges the settler forgot are
// submitted again, and the outcome is recorded. Errors stay with the charges
// they are about: a refusal fails only the charges it names, and a charge
// that may have been submitted before fails only once the settler confirms
// it is not settled.
func (ss *Settle) settleBatch(ctx context.Context, batch []settleItem, held *heldItems) {
	// A settler call that hangs (an RPC node that accepts and never answers)
	// must not stall the pipeline: it fails as a transient error.
	ctx, cancel := context.WithTimeout(ctx, SettlerTimeout)
	defer cancel()
	now := ss.env.Now()
	if !ss.env.Settles() {
		// The SettlementLease went to another engine since these were
		// claimed: release them to it, untouched.
		us := make([]driver.Update, len(batch))
		for i, it := range batch {
			us[i] = driver.Update{ID: it.wf.ID, Owner: ss.env.WorkerID, Status: wire.Settling, UpdatedAt: now, RunAt: now, Release: true}
		}
		ss.rec.Record(ctx, us)
		return
	}
	charges := make([]driver.Charge, len(batch))
	for i, it := range batch {
		charges[i] = chargeOf(it.wf)
		if it.since.IsZero() {
			batch[i].since = now // submitted (fresh) or first asked about, below
		}
	}
	// done[i] is set once workflow i's update for this round is decided.
	us := make([]driver.Update, len(batch))
	done := make([]bool, len(batch))
	hold := make([]bool, len(batch)) // kept in memory until its next check
	decide := func(i int, u driver.Update) { us[i], done[i] = u, true }
	// A charge of 0 goes nowhere near the chain: the workflow is Settled
	// at once, with no settlement.
	for i, it := range batch {
		if charges[i].Amount == 0 {
			w := it.wf
			u := driver.Update{ID: w.ID, Owner: ss.env.WorkerID, Status: wire.Settling, UpdatedAt: now, Release: true, RunAt: now,
				Transition: MustTo(wire.Settling, wire.Settled)}
			u.Event = WorkflowEvent(wire.EventWorkflowCompleted, w, wire.Settled, now, func(*wire.EventData) {})
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
		refused, err := ss.submit(ctx, pick(charges, fresh))
		for _, i := range fresh {
			switch f := refused[charges[i].WorkflowID]; {
			case err != nil:
				decide(i, ss.settleLater(batch[i].wf, now, err))
			case f != nil:
				decide(i, ss.failUpdate(batch[i].wf, now, f))
			}
		}
	}

	asked := open(func(int) bool { return true })
	if len(asked) == 0 {
		ss.rec.Record(ctx, us)
		return
	}
	sts, err := ss.status(ctx, pick(charges, asked))
	if err != nil {
		for _, i := range asked {
			decide(i, ss.settleLater(batch[i].wf, now, err))
		}
		ss.rec.Record(ctx, us)
		return
	}
	state := make(map[int]driver.SettlementStatus, len(asked))
	for j, i := range asked {
		state[i] = sts[j]
	}

	// Charges the settler does not know (it forgot them, or a crash came
	// between Settling and Submit) are submitted again; idempotency keeps
	// each single. Such a charge may have been sent in an earlier life, so
	// a refusal fails it only if the settler, asked again, still finds no
	// settlement of it.
	forgotten := open(func(i int) bool {
		return state[i].Err == nil && state[i].State == driver.SettlementUnknown && !batch[i].fresh
	})
	if len(forgotten) > 0 {
		refused, err := ss.submit(ctx, pick(charges, forgotten))
		if err == nil {
			var again []driver.SettlementStatus
			again, err = ss.status(ctx, pick(charges, forgotten))
			for j, i := range forgotten {
				if err != nil {
					break
				}
				st := again[j]
				if f := refused[charges[i].WorkflowID]; f != nil && st.Err == nil && st.State == driver.SettlementUnknown {
					st.State = driver.SettlementFailed
					st.Failure = &wire.Failure{Code: f.Code, Message: f.Message +
						" (The settler was asked again after refusing this charge and holds no settlement of it: nothing was charged.)"}
				}
				state[i] = st
			}
		}
		if err != nil {
			for _, i := range forgotten {
				decide(i, ss.settleLater(batch[i].wf, now, err))
			}
		}
	}

	now = ss.env.Now()
	var checks []time.Time // when pending charges are due to be asked about again
	for _, i := range open(func(int) bool { return true }) {
		w, st := batch[i].wf, state[i]
		if st.Err != nil {
			decide(i, ss.settleLater(w, now, st.Err))
			continue
		}
		u := driver.Update{ID: w.ID, Owner: ss.env.WorkerID, Status: wire.Settling, UpdatedAt: now, Release: true}
		switch st.State {
		case driver.SettlementConfirmed:
			s := st.Settlement
			u.Transition, u.Settlement, u.RunAt = MustTo(wire.Settling, wire.Settled), s, now
			u.Event = WorkflowEvent(wire.EventWorkflowCompleted, w, wire.Settled, now, func(d *wire.EventData) { d.Settlement = s })
		case driver.SettlementFailed:
			f := st.Failure
			if f == nil {
				f = &wire.Failure{Code: wire.FailureSettlementFailed, Message: "the settler reported the charge failed"}
			}
			Fail(&u, w, now, f)
		default: // pending (or still unknown right after submission)
			next := now.Add(ss.settleCheck(st.CheckAfter))
			if hu, ok := ss.holdPending(&batch[i], st.Settlement, now, next, held.Len()); ok {
				hold[i] = true
				if hu == nil {
					done[i] = true // nothing to write
					continue
				}
				u = *hu
				break
			}
			u.Settlement, u.RunAt = st.Settlement, next
			checks = append(checks, u.RunAt)
		}
		decide(i, u)
	}
	var (
		write []driver.Update
		at    []int // batch index of write[j]
	)
	for i := range batch {
		if us[i].ID != "" {
			write, at = append(write, us[i]), append(at, i)
		}
	}
	applied := ss.rec.Record(ctx, write)
	wrote := make([]bool, len(batch))
	for j, i := range at {
		wrote[i] = applied[j]
	}
	for i := range batch {
		// A held workflow whose write did not apply has lost its lease
		// (another engine took it over): it is no longer this engine's.
		if hold[i] && (us[i].ID == "" || wrote[i]) {
			held.hold(batch[i])
		}
	}
	// Wake-ups only once the updates are written: a wake-up that came first
	// would find the check not yet due and be spent.
	for _, t := range checks {
		ss.wake.At(t)
	}
}

// showPendingAfter is how long a charge must have been pending (since this
// engine submitted it, or first asked about a workflow it claimed already
// Settling) before a check writes its pending settlement to the workflow's
// row. It exists because most charges never need that write: on a chain that
// confirms within about a second (the simulated chain, geth --dev, a fast
// L2) the settlement is written anyway a moment later, with the move to
// Settled, and writing it while pending too cost each workflow a row update
// (two, when the block number was learned at a later check) that nobody
// could usefully read. What it trades: a Settling workflow shows no
// settlement, or an older one, for its first second or so (until the first
// check at or past it, within a SettlementPollInterval), and then shows it
// at every check that finds it moved, as before. Nothing depends on that
// write for safety: the workflow is Settling with its sequence in the Store,
// and the chain is asked about the charge by its sequence.
const showPendingAfter = time.Second

// holdPending keeps a workflow whose charge is pending in memory until its
// next check at next, leased, instead of releasing it to the Store: it
// reports whether it does, with the write that holding needs, if any. The
// check writes only what a reader should see: a settlement that appeared or
// moved (a transaction sent, mined in another block after a reorganization),
// and only once the charge has been pending showPendingAfter, not its
// confirmations, which are recorded when it settles. The lease (Env.SettleLease)
// is renewed when less than half of it would be left at the next check; that
// write carries the settlement too, if it moved, however young the charge.
// Past the bound on held workflows nothing is held.
func (ss *Settle) holdPending(it *settleItem, s *wire.Settlement, now, next time.Time, held int) (*driver.Update, bool) {
	if held >= maxHeldPerBatch*ss.env.BatchSize {
		return nil, false
	}
	w := it.wf
	it.fresh, it.due = false, next
	// w.Settlement is what the Store holds: it changes only when written,
	// so a settlement not yet shown still counts as moved at later checks.
	moved := s != nil && (w.Settlement == nil || s.TxHash != w.Settlement.TxHash || s.BlockNumber != w.Settlement.BlockNumber ||
		s.ChainID != w.Settlement.ChainID)
	lease := ss.env.SettleLease()
	renew := it.leaseUntil.Sub(next) < lease/2
	show := moved && now.Sub(it.since) >= showPendingAfter
	it.unshown = nil
	if moved && !renew && !show {
		it.unshown = s
	}
	if !renew && !show {
		return nil, true
	}
	// Either write renews the lease.
	u := &driver.Update{ID: w.ID, Owner: ss.env.WorkerID, Status: wire.Settling, UpdatedAt: now, RunAt: now.Add(lease)}
	if moved {
		u.Settlement, w.Settlement = s, s
	}
	it.leaseUntil = u.RunAt
	return u, true
}

// submit hands charges to the settler and returns those it refused for good,
// with why. An error return is transient: none of the charges is known to be
// taken or refused. A permanent error that names no charge is narrowed down
// by submitting the charges in halves (submitting a charge again is
// harmless), so it fails only the charges it is about.
func (ss *Settle) submit(ctx context.Context, cs []driver.Charge) (map[string]*wire.Failure, error) {
	err := ss.settler.Submit(ctx, cs)
	if err == nil {
		return nil, nil
	}
	var re *driver.RefusedError
	if errors.As(err, &re) {
		refused := make(map[string]*wire.Failure, len(re.Refused))
		for _, c := range cs {
			if f := re.Refused[c.WorkflowID]; f != nil {
				refused[c.WorkflowID] = f
			}
		}
		if len(refused) < len(re.Refused) {
			ss.env.Log.Error("the settler refused charges it was not given; ignoring them", zap.Int("refused", len(re.Refused)), zap.Int("given", len(refused)))
		}
		return refused, nil
	}
	if !driver.IsPermanent(err) {
		return nil, err
	}
	if len(cs) == 1 {
		return map[string]*wire.Failure{cs[0].WorkflowID: FailureOf(err, wire.FailureSettlementFailed)}, nil
	}
	half := len(cs) / 2
	refused, err := ss.submit(ctx, cs[:half])
	if err != nil {
		return nil, err
	}
	more, err := ss.submit(ctx, cs[half:])
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
func (ss *Settle) status(ctx context.Context, cs []driver.Charge) ([]driver.SettlementStatus, error) {
	if len(cs) == 0 {
		return nil, nil
	}
	sts, err := ss.settler.Status(ctx, cs)
	if err == nil && len(sts) != len(cs) {
		err = fmt.Errorf("settler answered %d statuses for %d charges", len(sts), len(cs))
	}
	return sts, err
}

// minSettleCheck is the soonest the engine asks about a pending charge again.
const minSettleCheck = 10 * time.Millisecond

// settleCheck is how long a pending charge waits for its next check: the
// settler's hint, within [minSettleCheck, SettlementPollInterval].
func (ss *Settle) settleCheck(hint time.Duration) time.Duration {
	if hint <= 0 {
		return ss.env.SettlementPollInterval
	}
	return min(max(hint, minSettleCheck), ss.env.SettlementPollInterval)
}

// settleLater is the update after a transient settler error: the workflow
// stays Settling and is checked again after a backoff (at most
// MaxChainRetry), without limit, since a charge that may be on its way to
// the chain is never given up on.
func (ss *Settle) settleLater(w *wire.Workflow, now time.Time, err error) driver.Update {
	u := driver.Update{ID: w.ID, Owner: ss.env.WorkerID, Status: wire.Settling, UpdatedAt: now, Release: true}
	u.Attempts = w.Attempts + 1
	u.RunAt = now.Add(ss.env.ChainBackoff(u.Attempts))
	ss.env.Log.Warn("settlement failed; will retry", zap.String("workflow", w.ID), zap.Int("attempt", u.Attempts), zap.Error(err))
	return u
}

// failUpdate is the update that fails a Settling workflow with f.
func (ss *Settle) failUpdate(w *wire.Workflow, now time.Time, f *wire.Failure) driver.Update {
	u := driver.Update{ID: w.ID, Owner: ss.env.WorkerID, Status: wire.Settling, UpdatedAt: now}
	Fail(&u, w, now, f)
	return u
}

func pick(cs []driver.Charge, at []int) []driver.Charge {
	out := make([]driver.Charge, len(at))
	for j, i := range at {
		out[j] = cs[i]
	}
	return out
}
