package settleflow

import (
	mrand "math/rand/v2"
	"time"
)

// RetryPolicy says when a failed attempt is tried again. The engine takes one
// for executions and settlement checks (Options.Retry: capped exponential
// backoff), and the webhook deliverer takes one for deliveries
// (webhook.Config.Retry: a fixed schedule).
type RetryPolicy struct {
	// Base is the delay after the first failure; it doubles each attempt.
	// Engine default 1 s.
	Base time.Duration
	// Max caps the delay. Engine default 10 min.
	Max time.Duration
	// MaxAttempts is how many attempts may fail before the operation gives
	// up: for the engine, how many executions of a product may fail
	// transiently before the workflow fails with code attempts_exceeded
	// (default 10); settlement is never given up on this way, since a charge
	// that may be on its way to the chain is checked until the chain
	// answers. Zero with a Schedule means len(Schedule).
	MaxAttempts int
	// Schedule, if not nil, replaces Base and Max with fixed delays:
	// Schedule[0] is the delay before the first attempt, Schedule[n] the
	// delay after the n-th failed attempt; past its end the last delay
	// repeats.
	Schedule []time.Duration
	// Jitter, with a Schedule, adds a random delay of up to Jitter × the
	// scheduled one, so retries to one place spread out; 0 adds none. The
	// exponential delays always take off a random part of up to half.
	Jitter float64
}

// Backoff returns the delay after the given failed attempt (1-based; 0 is
// the delay before the first attempt: Schedule[0], or none). Without a
// Schedule it is the capped exponential delay d, less a random part of up to
// half of it, so workers that failed together do not retry together.
func (p RetryPolicy) Backoff(attempt int) time.Duration {
	if p.Schedule != nil {
		if len(p.Schedule) == 0 {
			return 0
		}
		d := p.Schedule[min(max(attempt, 0), len(p.Schedule)-1)]
		if p.Jitter > 0 && d > 0 {
			d += time.Duration(mrand.Float64() * p.Jitter * float64(d))
		}
		return d
	}
	if attempt <= 0 {
		return 0
	}
	d := p.Base
	for i := 1; i < attempt && d < p.Max; i++ {
		d *= 2
	}
	if d > p.Max {
		d = p.Max
	}
	if d <= 1 {
		return d
	}
	return d - time.Duration(mrand.Int64N(int64(d/2)+1))
}

// Attempts is how many attempts may fail before the operation gives up:
// MaxAttempts, or len(Schedule) when MaxAttempts is zero.
func (p RetryPolicy) Attempts() int {
	if p.MaxAttempts == 0 && p.Schedule != nil {
		return len(p.Schedule)
	}
	return p.MaxAttempts
}
