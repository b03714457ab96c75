package settleflow

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/internal/stage"
	"go.uber.org/zap"
)

// RefundParams asks for a refund of a Settled workflow's charge.
type RefundParams struct {
	Environment Environment
	WorkflowID  string
	// Amount in minor units; 0 refunds all that is left to refund (the
	// charge less its refunds that are not Failed).
	Amount int64
	// Reason, optional, at most 500 characters.
	Reason string
	// IdempotencyKey, optional: the same key with the same parameters
	// within 24 h returns the first refund instead of a new one.
	IdempotencyKey string
}

// RefundListParams select a page of refunds; see RefundQuery.
type RefundListParams = RefundQuery

// RefundPage is one page of refunds, newest first.
type RefundPage struct {
	Data    []*Refund
	HasMore bool
}

// maxRefundReason bounds a refund's reason, in characters.
const maxRefundReason = 500

// Refund records a refund of part or all of a Settled workflow's charge and
// returns it Pending; the engine settles it on chain in the background
// (refund.succeeded or refund.failed follows). It returns whether the
// refund is a replay of an earlier call with the same idempotency key.
//
// Errors: ErrNotFound (no such workflow in the environment), a *StateError
// with Op "refund" (the workflow is not Settled; over HTTP 409
// workflow_not_settled), a *RefundableError (the amount is more than is left
// to refund), an *InvalidError (amount below 0, reason too long, bad
// idempotency key), ErrIdempotencyKeyReused, ErrRefundsNotSupported (the
// environment's charges are not paid from customer balances).
func (e *Engine) Refund(ctx context.Context, p RefundParams) (*Refund, bool, error) {
	if !p.Environment.Valid() {
		return nil, false, fmt.Errorf("settleflow: environment %q is neither test nor live", p.Environment)
	}
	switch {
	case p.Amount < 0:
		return nil, false, &InvalidError{Code: CodeParameterInvalid, Param: "amount", Message: "amount must be an integer of at least 1 (minor units)"}
	case !utf8.ValidString(p.Reason) || utf8.RuneCountInString(p.Reason) > maxRefundReason:
		return nil, false, &InvalidError{Code: CodeParameterInvalid, Param: "reason", Message: "reason must be valid UTF-8 of at most 500 characters"}
	}
	if p.IdempotencyKey != "" {
		if err := CheckIdempotencyKey(p.IdempotencyKey); err != nil {
			return nil, false, err
		}
	}
	if !ids.Valid(ids.Workflow, p.WorkflowID) {
		return nil, false, ErrNotFound
	}
	if _, ok := e.funds(p.Environment); !ok {
		return nil, false, ErrRefundsNotSupported
	}
	now := e.now()
	r := &Refund{ID: ids.New(ids.Refund, now), Object: "refund", Livemode: p.Environment.Livemode(), WorkflowID: p.WorkflowID,
		Amount: p.Amount, Currency: Currency, Reason: p.Reason, Status: RefundPending, CreatedAt: now, UpdatedAt: now}
	in := RefundInsert{Refund: r}
	if p.IdempotencyKey != "" {
		in.IdempotencyKey = p.IdempotencyKey
		in.RequestHash = refundHash(p)
	}
	res, err := e.store.InsertRefund(ctx, in)
	if err != nil {
		return nil, false, err
	}
	if res.Existing {
		if res.ExistingHash != in.RequestHash {
			return nil, false, ErrIdempotencyKeyReused
		}
		return res.Refund, true, nil
	}
	e.log.Info("refund recorded", zap.String("refund", res.Refund.ID), zap.String("workflow", p.WorkflowID), zap.Int64("amount", res.Refund.Amount))
	stage.Signal(e.refundsWake)
	return res.Refund, false, nil
}

func refundHash(p RefundParams) string {
	h := sha256.New()
	for _, part := range []string{p.WorkflowID, strconv.FormatInt(p.Amount, 10), p.Reason} {
		fmt.Fprintf(h, "%d:%s", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// FetchRefund returns the refund with id in env, or ErrNotFound.
func (e *Engine) FetchRefund(ctx context.Context, env Environment, id string) (*Refund, error) {
	if !env.Valid() {
		return nil, fmt.Errorf("settleflow: environment %q is neither test nor live", env)
	}
	if !ids.Valid(ids.Refund, id) {
		return nil, ErrNotFound
	}
	return e.store.GetRefund(ctx, env, id)
}

// ListRefunds returns one page of refunds, newest first. Errors are
// *InvalidError naming the parameter as on the wire (workflowId, status,
// limit, startingAfter, endingBefore).
func (e *Engine) ListRefunds(ctx context.Context, p RefundListParams) (*RefundPage, error) {
	if err := checkPage(p.Environment, &p.Limit, p.StartingAfter, p.EndingBefore, ids.Refund, "a refund"); err != nil {
		return nil, err
	}
	if p.Status != "" && !p.Status.Valid() {
		return nil, &InvalidError{Code: CodeParameterInvalid, Param: "status", Message: "status must be one of Pending, Succeeded, Failed"}
	}
	if p.WorkflowID != "" && !ids.Valid(ids.Workflow, p.WorkflowID) {
		return nil, &InvalidError{Code: CodeParameterInvalid, Param: "workflowId", Message: "workflowId must be a workflow id (wf_…)"}
	}
	rs, more, err := e.store.ListRefunds(ctx, p)
	if err != nil {
		return nil, err
	}
	return &RefundPage{Data: rs, HasMore: more}, nil
}

// The refund stage: Pending refunds are claimed, submitted to the settler
// and checked until the chain confirms or refuses them, in batches, like
// charges. Its one rule is the settle stage's: a refund is Failed (nothing
// was given back) only when the settler has said so for that very refund.

// refundLoop runs the refund stage while the engine settles (holds the
// SettlementLease): one sender of transactions per chain account.
func (e *Engine) refundLoop(ctx context.Context) {
	if _, ok := e.settler.(Funds); !ok {
		return
	}
	for {
		wait := e.opts.PollInterval
		if e.settles() {
			n, next := e.refundRound(ctx)
			if n == e.opts.BatchSize {
				wait = 0 // more may be due
			} else if !next.IsZero() {
				wait = min(wait, max(next.Sub(e.now()), 10*time.Millisecond))
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-e.refundsWake:
		case <-time.After(wait):
		}
	}
}

// refundRound claims the due refunds and takes each one step on. It returns
// how many it claimed and the earliest time one of them is due again.
func (e *Engine) refundRound(ctx context.Context) (int, time.Time) {
	now := e.now()
	batch, err := e.store.ClaimRefunds(ctx, Claim{Owner: e.opts.WorkerID, Now: now, LeaseUntil: now.Add(e.lease), Limit: e.opts.BatchSize})
	if err != nil {
		if ctx.Err() == nil {
			e.log.Error("claiming refunds failed", zap.Error(err))
		}
		return 0, time.Time{}
	}
	if len(batch) == 0 {
		return 0, time.Time{}
	}
	f := e.settler.(Funds)
	sctx, cancel := context.WithTimeout(ctx, stage.SettlerTimeout)
	defer cancel()
	charges := make([]RefundCharge, len(batch))
	for i, r := range batch {
		charges[i] = refundChargeOf(r)
	}
	sts, err := f.RefundStatus(sctx, charges)
	us := make([]RefundUpdate, len(batch))
	var next time.Time
	later := func(i int, err error) {
		r := batch[i]
		at := e.now().Add(e.opts.Retry.Backoff(r.Attempts + 1))
		e.log.Warn("refund check failed; retrying", zap.String("refund", r.ID), zap.Int("attempt", r.Attempts+1), zap.Error(err))
		us[i] = RefundUpdate{ID: r.ID, Owner: e.opts.WorkerID, Status: RefundPending, RunAt: at, Release: true, Attempts: r.Attempts + 1, UpdatedAt: e.now()}
	}
	if err != nil {
		for i := range batch {
			later(i, err)
		}
		e.updateRefunds(ctx, us)
		return len(batch), next
	}
	// Refunds the settler does not know are submitted (again: idempotency
	// keeps each single). A refusal fails one only if the settler, asked
	// again, still holds nothing of it.
	var unknown []int
	for i, st := range sts {
		if st.Err == nil && st.State == SettlementUnknown {
			unknown = append(unknown, i)
		}
	}
	if len(unknown) > 0 {
		sub := make([]RefundCharge, len(unknown))
		for j, i := range unknown {
			sub[j] = charges[i]
		}
		refused := map[string]*Failure{}
		err := f.SubmitRefunds(sctx, sub)
		var re *RefusedError
		if errors.As(err, &re) {
			refused, err = re.Refused, nil
		}
		if err == nil && len(refused) > 0 {
			again, aerr := f.RefundStatus(sctx, sub)
			err = aerr
			for j, i := range unknown {
				if aerr != nil {
					break
				}
				st := again[j]
				if fl := refused[charges[i].RefundID]; fl != nil && st.Err == nil && st.State == SettlementUnknown {
					st.State, st.Failure = SettlementFailed, &Failure{Code: fl.Code, Message: fl.Message +
						" (The settler was asked again after refusing this refund and holds no record of it: nothing was given back.)"}
				}
				sts[i] = st
			}
		}
		if err != nil {
			for _, i := range unknown {
				sts[i].Err = err
			}
		}
	}
	now = e.now()
	for i, st := range sts {
		r := batch[i]
		if st.Err != nil {
			later(i, st.Err)
			continue
		}
		u := RefundUpdate{ID: r.ID, Owner: e.opts.WorkerID, Status: RefundPending, Release: true, UpdatedAt: now, Attempts: r.Attempts}
		switch st.State {
		case SettlementConfirmed:
			u.Status, u.Settlement, u.RunAt = RefundSucceeded, st.Settlement, now
			u.Event = e.refundEvent(EventRefundSucceeded, r, RefundSucceeded, st.Settlement, nil, now)
		case SettlementFailed:
			fl := st.Failure
			if fl == nil {
				fl = &Failure{Code: FailureSettlementFailed, Message: "the settler reported the refund failed"}
			}
			u.Status, u.Failure, u.RunAt = RefundFailed, fl, now
			u.Event = e.refundEvent(EventRefundFailed, r, RefundFailed, nil, fl, now)
		default: // pending, or submitted just now
			wait := e.opts.SettlementPollInterval
			if st.CheckAfter > 0 {
				wait = min(max(st.CheckAfter, 10*time.Millisecond), wait)
			}
			u.RunAt, u.Settlement = now.Add(wait), st.Settlement
			if next.IsZero() || u.RunAt.Before(next) {
				next = u.RunAt
			}
		}
		us[i] = u
	}
	applied := e.updateRefunds(ctx, us)
	for i, ok := range applied {
		if ok && us[i].Status != RefundPending {
			e.log.Info("refund "+string(us[i].Status), zap.String("refund", us[i].ID), zap.String("workflow", batch[i].WorkflowID))
			// The workflow's refunded amount changed: whatever this
			// engine cached of it is stale.
			e.terminal.drop(batch[i].Environment(), batch[i].WorkflowID)
		}
	}
	return len(batch), next
}

func (e *Engine) refundEvent(t EventType, r *Refund, st RefundStatus, s *Settlement, f *Failure, now time.Time) *Event {
	after := *r
	after.Status, after.Settlement, after.Failure, after.UpdatedAt = st, s, f, now
	return &Event{ID: ids.New(ids.Event, now), Object: "event", Type: t, Livemode: r.Livemode, CreatedAt: now,
		Data: EventData{WorkflowID: r.WorkflowID, Refund: &after}}
}

// updateRefunds applies us, retrying the store until it answers or ctx ends
// (the leases then expire and the refunds are checked again).
func (e *Engine) updateRefunds(ctx context.Context, us []RefundUpdate) []bool {
	for attempt := 1; ; attempt++ {
		applied, err := e.store.UpdateRefunds(context.WithoutCancel(ctx), us)
		if err == nil {
			stage.Signal(e.eventsWake)
			return applied
		}
		e.log.Error("recording refund updates failed; retrying", zap.Int("attempt", attempt), zap.Error(err))
		select {
		case <-ctx.Done():
			return make([]bool, len(us))
		case <-time.After(min(time.Duration(attempt)*100*time.Millisecond, 5*time.Second)):
		}
	}
}
