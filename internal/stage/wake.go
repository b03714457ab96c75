package stage

import (
	"slices"
	"sync"
	"time"
)

// maxWakeTimes bounds the remembered wake-up times; work scheduled beyond
// them waits for the next poll.
const maxWakeTimes = 64

// Wakeups tell the execute stage's claims when to look for due workflows
// before their next poll: now (a Create committed one), or at a time work
// this engine scheduled comes due (a charge the settler expects confirmed in
// 300 ms). It lives as long as the engine: Creates ring it before Start.
type Wakeups struct {
	now  func() time.Time
	poll time.Duration
	c    chan struct{}

	mu sync.Mutex
	// times are the wake-up times sooner than the next poll, sorted, at
	// most maxWakeTimes.
	times []time.Time
}

// NewWakeups returns Wakeups for an engine whose claims poll every poll.
func NewWakeups(now func() time.Time, poll time.Duration) *Wakeups {
	return &Wakeups{now: now, poll: poll, c: make(chan struct{}, 1)}
}

// Now makes the claims look for due work at once.
func (w *Wakeups) Now() { Signal(w.c) }

// At makes the claims look for due work at t, if that is before their next
// poll. Times within a millisecond of one already held are merged.
func (w *Wakeups) At(t time.Time) {
	if !t.Before(w.now().Add(w.poll)) {
		return
	}
	w.mu.Lock()
	i, found := slices.BinarySearchFunc(w.times, t, func(a, b time.Time) int { return a.Compare(b) })
	if found || (i > 0 && t.Sub(w.times[i-1]) < time.Millisecond) || (i < len(w.times) && w.times[i].Sub(t) < time.Millisecond) {
		w.mu.Unlock()
		return
	}
	if len(w.times) >= maxWakeTimes {
		if i == len(w.times) {
			w.mu.Unlock()
			return
		}
		w.times = w.times[:len(w.times)-1]
	}
	w.times = slices.Insert(w.times, i, t)
	first := i == 0
	w.mu.Unlock()
	if first {
		Signal(w.c) // the claims set their timer anew
	}
}

// next is how long the claims sleep: the poll interval, or less if a
// wake-up time comes first. claimed is when the claims just made began: the
// wake-up times up to then are served and dropped; a later one, even if it
// has passed meanwhile, makes the claims look again at once.
func (w *Wakeups) next(claimed time.Time) time.Duration {
	now := w.now()
	w.mu.Lock()
	defer w.mu.Unlock()
	served := 0
	for served < len(w.times) && !w.times[served].After(claimed) {
		served++
	}
	w.times = w.times[:copy(w.times, w.times[served:])]
	if len(w.times) == 0 {
		return w.poll
	}
	return max(min(w.times[0].Sub(now), w.poll), 0)
}
