package stage

import (
	"context"
	"errors"
	"time"

	"github.com/settleflow/settleflow/driver"
	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/wire"
	"go.uber.org/zap"
)

// Refunds is the refund stage: while the engine settles (holds the
// SettlementLease), it claims due refunds, submits them to the Funds
// settler and follows each to the chain's decision. Its one rule is the
// settle stage's: a refund is Failed (nothing was given back) only when the
// settler has said so for that very refund.
type Refunds struct {
	*Loop
	env   *Env
	funds driver.Funds
	// wake tells it a refund was recorded; eventsWake tells the dispatch
	// stage a refund's event is in the outbox.
	wake       <-chan struct{}
	eventsWake chan struct{}
	// changed is told of each workflow whose refunded amount changed.
	changed func(env wire.Environment, workflowID string)
}

// NewRefunds returns the refund stage of an engine whose settler charges
// customer balances (funds).
func NewRefunds(env *Env, funds driver.Funds, wake <-chan struct{}, eventsWake chan struct{}, changed func(wire.Environment, string)) *Refunds {
	s := &Refunds{env: env, funds: funds, wake: wake, eventsWake: eventsWake, changed: changed}
	s.Loop = NewLoop("refunds", s.loop)
	return s
}

// refundChargeOf is the RefundCharge of r.
func refundChargeOf(r *wire.Refund) driver.RefundCharge {
	return driver.RefundCharge{RefundID: r.ID, WorkflowID: r.WorkflowID, Environment: r.Environment(),
		CustomerID: r.CustomerID, Sequence: r.Sequence, Amount: r.Amount, Currency: r.Currency}
}

// loop runs rounds while the engine settles: one sender of transactions
// per chain account.
func (s *Refunds) loop(ctx context.Context) {
	for {
		wait := s.env.PollInterval
		if s.env.Settles() {
			n, next := s.round(ctx)
			if n == s.env.BatchSize {
				wait = 0 // more may be due
			} else if !next.IsZero() {
				wait = min(wait, max(next.Sub(s.env.Now()), 10*time.Millisecond))
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-time.After(wait):
		}
	}
}

// refundRound claims the due refunds and takes each one step on. It returns
// how many it claimed and the earliest time one of them is due again.
func (s *Refunds) round(ctx context.Context) (int, time.Time) {
	now := s.env.Now()
	batch, err := s.env.Store.ClaimRefunds(ctx, driver.Claim{Owner: s.env.WorkerID, Now: now, LeaseUntil: now.Add(s.env.Lease), Limit: s.env.BatchSize})
	if err != nil {
		if ctx.Err() == nil {
			s.env.Log.Error("claiming refunds failed", zap.Error(err))
		}
		return 0, time.Time{}
	}
	if len(batch) == 0 {
		return 0, time.Time{}
	}
	f := s.funds
	sctx, cancel := context.WithTimeout(ctx, SettlerTimeout)
	defer cancel()
	charges := make([]driver.RefundCharge, len(batch))
	for i, r := range batch {
		charges[i] = refundChargeOf(r)
	}
	sts, err := f.RefundStatus(sctx, charges)
	us := make([]driver.RefundUpdate, len(batch))
	var next time.Time
	later := func(i int, err error) {
		r := batch[i]
		at := s.env.Now().Add(s.env.ChainBackoff(r.Attempts + 1))
		s.env.Log.Warn("refund check failed; retrying", zap.String("refund", r.ID), zap.Int("attempt", r.Attempts+1), zap.Error(err))
		us[i] = driver.RefundUpdate{ID: r.ID, Owner: s.env.WorkerID, Status: wire.RefundPending, RunAt: at, Release: true, Attempts: r.Attempts + 1, UpdatedAt: s.env.Now()}
	}
	if err != nil {
		for i := range batch {
			later(i, err)
		}
		s.update(ctx, us)
		return len(batch), next
	}
	// Refunds the settler does not know are submitted (again: idempotency
	// keeps each single). A refusal fails one only if the settler, asked
	// again, still holds nothing of it.
	var unknown []int
	for i, st := range sts {
		if st.Err == nil && st.State == driver.SettlementUnknown {
			unknown = append(unknown, i)
		}
	}
	if len(unknown) > 0 {
		sub := make([]driver.RefundCharge, len(unknown))
		for j, i := range unknown {
			sub[j] = charges[i]
		}
		refused := map[string]*wire.Failure{}
		err := f.SubmitRefunds(sctx, sub)
		var re *driver.RefusedError
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
				if fl := refused[charges[i].RefundID]; fl != nil && st.Err == nil && st.State == driver.SettlementUnknown {
					st.State, st.Failure = driver.SettlementFailed, &wire.Failure{Code: fl.Code, Message: fl.Message +
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
	now = s.env.Now()
	for i, st := range sts {
		r := batch[i]
		if st.Err != nil {
			later(i, st.Err)
			continue
		}
		u := driver.RefundUpdate{ID: r.ID, Owner: s.env.WorkerID, Status: wire.RefundPending, Release: true, UpdatedAt: now, Attempts: r.Attempts}
		switch st.State {
		case driver.SettlementConfirmed:
			u.Status, u.Settlement, u.RunAt = wire.RefundSucceeded, st.Settlement, now
			u.Event = refundEvent(wire.EventRefundSucceeded, r, wire.RefundSucceeded, st.Settlement, nil, now)
		case driver.SettlementFailed:
			fl := st.Failure
			if fl == nil {
				fl = &wire.Failure{Code: wire.FailureSettlementFailed, Message: "the settler reported the refund failed"}
			}
			u.Status, u.Failure, u.RunAt = wire.RefundFailed, fl, now
			u.Event = refundEvent(wire.EventRefundFailed, r, wire.RefundFailed, nil, fl, now)
		default: // pending, or submitted just now
			wait := s.env.SettlementPollInterval
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
	applied := s.update(ctx, us)
	for i, ok := range applied {
		if ok && us[i].Status != wire.RefundPending {
			s.env.Log.Info("refund "+string(us[i].Status), zap.String("refund", us[i].ID), zap.String("workflow", batch[i].WorkflowID))
			// The workflow's refunded amount changed: whatever this
			// engine cached of it is stale.
			s.changed(batch[i].Environment(), batch[i].WorkflowID)
		}
	}
	return len(batch), next
}

func refundEvent(t wire.EventType, r *wire.Refund, st wire.RefundStatus, s *wire.Settlement, f *wire.Failure, now time.Time) *wire.Event {
	after := *r
	after.Status, after.Settlement, after.Failure, after.UpdatedAt = st, s, f, now
	return &wire.Event{ID: ids.New(ids.Event, now), Object: "event", Type: t, Livemode: r.Livemode, CreatedAt: now,
		Data: wire.EventData{WorkflowID: r.WorkflowID, Refund: &after}}
}

// update applies us, retrying the store until it answers or ctx ends (the
// leases then expire and the refunds are checked again).
func (s *Refunds) update(ctx context.Context, us []driver.RefundUpdate) []bool {
	applied := untilWritten(ctx, s.env, "refund updates", us, s.env.Store.UpdateRefunds)
	Signal(s.eventsWake)
	return applied
}
