package stage

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/settleflow/settleflow/wire"
)

// Funds is the funds stage: while the engine settles (holds the
// SettlementLease, so one engine of several reads each chain), every
// interval it applies the deposits and withdrawals confirmed on each funded
// environment's chain (sync: the engine's SyncFunds), backing off after
// failures, each environment on its own.
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
	// Each environment backs off on its own: one chain failing (a node
	// down, a reorg it cannot rewind) does not delay the other's funds.
	failures := make([]int, len(s.envs))
	next := make([]time.Time, len(s.envs))
	for {
		if s.env.Settles() {
			for i, env := range s.envs {
				if time.Now().Before(next[i]) {
					continue
				}
				err := s.sync(ctx, env)
				switch {
				case err != nil && ctx.Err() == nil:
					failures[i]++
					wait := max(s.interval, s.env.Backoff(failures[i]))
					next[i] = time.Now().Add(wait)
					s.env.Log.Warn("following deposits on chain failed; retrying", zap.String("env", string(env)),
						zap.Int("attempt", failures[i]), zap.Duration("in", wait), zap.Error(err))
				case err == nil:
					failures[i] = 0
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(s.interval):
		}
	}
}
