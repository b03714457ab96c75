package webhook

import (
	"net/http"
	"time"
)

// Per-endpoint concurrency adapts to the receiver, additive increase and
// multiplicative decrease as in TCP's congestion control: an endpoint starts
// with initialPerEndpoint attempts in flight; every answer that is a success
// and fast adds 1/limit (one more slot per round of successes), up to
// Config.MaxPerEndpoint; a failure that says the receiver is in trouble (no
// answer, a timeout, 408, 429 or 5xx) halves the limit, at most once per
// halving window so that one burst of failures counts once; a slow success
// (slower than Config.Timeout/10) takes one slot away. The limit never
// drops below one: a failing receiver gets one attempt at a time, each on
// the retry schedule, until it answers again.

// defaultInitialPerEndpoint is where each endpoint's limit starts.
const defaultInitialPerEndpoint = 4

// halvingWindow is the least time between two halvings of one endpoint's
// limit.
const halvingWindow = 100 * time.Millisecond

// initialPerEndpoint is the limit a newly seen endpoint starts with.
func (c Config) initialPerEndpoint() int { return min(defaultInitialPerEndpoint, c.MaxPerEndpoint) }

// endpointLimit is one endpoint's adaptive concurrency limit (guarded by
// Service.mu).
type endpointLimit struct {
	limit   float64
	max     float64
	lastCut time.Time
	// lat is how long the receiver takes to answer, on the high side: it
	// rises at once to any slower attempt and falls by a quarter of the
	// difference with each faster one; 0 until an attempt is seen. It
	// bounds what a Notify may queue for the endpoint (see
	// Service.preclaimRoomLocked).
	lat time.Duration
}

// allowed is how many attempts may be in flight to the endpoint now.
func (l *endpointLimit) allowed() int { return max(int(l.limit), 1) }

// observe moves the limit on by an attempt's outcome.
func (l *endpointLimit) observe(o outcome, cfg Config) {
	l.lat = max(o.latency, (3*l.lat+o.latency)/4)
	switch {
	case troubled(o):
		if now := time.Now(); now.Sub(l.lastCut) >= halvingWindow {
			l.limit, l.lastCut = max(l.limit/2, 1), now
		}
	case !o.ok():
		// A 4xx other than 408 and 429 is the receiver's answer, not a
		// sign of load: no change.
	case o.latency > cfg.Timeout/10:
		l.limit = max(l.limit-1, 1)
	default:
		l.limit = min(l.limit+1/l.limit, l.max)
	}
}

// troubled reports whether an outcome says the receiver is overloaded or
// down.
func troubled(o outcome) bool {
	switch {
	case o.status == 0:
		return o.err != "" // no answer: refused, reset, timed out
	case o.status == http.StatusRequestTimeout, o.status == http.StatusTooManyRequests:
		return true
	default:
		return o.status >= 500
	}
}

// limitLocked returns endpoint ep's limit, creating it (s.mu held).
func (s *Service) limitLocked(ep string) *endpointLimit {
	l := s.limits[ep]
	if l == nil {
		l = &endpointLimit{limit: float64(s.cfg.initialPerEndpoint()), max: float64(s.cfg.MaxPerEndpoint)}
		s.limits[ep] = l
	}
	return l
}

// EndpointConcurrency returns how many attempts the deliverer lets be in
// flight to the endpoint now (its adaptive limit), and how many are.
func (s *Service) EndpointConcurrency(endpointID string) (limit, inFlight int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.limitLocked(endpointID).allowed(), s.inflight[endpointID]
}
