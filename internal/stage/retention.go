package stage

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/settleflow/settleflow/driver"
)

// Retention is the retention stage: every interval it runs prune (one
// round of deleting what the engine no longer needs: the engine's Prune)
// and logs what it deleted. A round cut short by Stop is taken up at the
// next Start.
type Retention struct {
	*Loop
	env      *Env
	interval time.Duration
	prune    func(context.Context) (driver.PruneResult, error)
}

// NewRetention returns the retention stage.
func NewRetention(env *Env, interval time.Duration, prune func(context.Context) (driver.PruneResult, error)) *Retention {
	r := &Retention{env: env, interval: interval, prune: prune}
	r.Loop = NewLoop("retention", r.loop)
	return r
}

func (r *Retention) loop(ctx context.Context) {
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		res, err := r.prune(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			r.env.Log.Warn("retention: pruning failed; retried at the next interval", zap.Error(err))
		case res.Events > 0 || res.IdempotencyKeys > 0:
			r.env.Log.Info("retention: pruned", zap.Int("events", res.Events), zap.Int("idempotency_keys", res.IdempotencyKeys))
		}
	}
}
