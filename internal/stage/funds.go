package stage

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/settleflow/settleflow/wire"
)

// Funds is the funds stage: while the engine settles (holds the
// SettlementLease, so one engine of several reads each chain), every
// interval it applies the deposits and withdrawals confirmed on each funded
// environment's chain (sync: the engine's SyncFunds), backing off after
// failures.
type Funds struct {
	*Loop
	env      *Env
	envs     []wire.Environment
	interval time.Duration
	sync     func(ctx context.Context, env wire.Environment) error
}

// NewFunds returns the funds stage for the environments envs, whose charges
// are paid from customer balances; with none, it does nothing.
func NewFunds(env *Env, envs []wire.Environment, interval time.Duration, sync func(context.Context, wire.Environment) error) *Funds {
	s := &Funds{env: env, envs: envs, interval: interval, sync: sync}
	s.Loop = NewLoop("funds", s.loop)
	return s
}

func (s *Funds) loop(ctx context.Context) {
	if len(s.envs) == 0 {
		return
	}
	failures := 0
	for {
		wait := s.interval
		if s.env.Settles() {
			var err error
			for _, env := range s.envs {
				err = errors.Join(err, s.sync(ctx, env))
			}
			switch {
			case err != nil && ctx.Err() == nil:
				failures++
				wait = max(wait, s.env.Backoff(failures))
				s.env.Log.Warn("following deposits on chain failed; retrying", zap.Int("attempt", failures), zap.Duration("in", wait), zap.Error(err))
			case err == nil:
				failures = 0
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}
