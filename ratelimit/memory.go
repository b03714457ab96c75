package ratelimit

import (
	"context"
	"hash/maphash"
	"sync"
	"time"
)

// numShards spreads keys over independently locked maps so that callers on
// different keys rarely contend.
const numShards = 64

// sweepEvery is how often a shard drops its idle keys.
const sweepEvery = time.Minute

// Memory is the in-process [Limiter]: fixed windows counted in memory. It is
// exact within one process (never admits more than a window's limit however
// many goroutines race), and keeps a key only while one of its windows is
// still current, so memory is bounded by the keys seen within the longest
// window. Several processes each keep their own counts: use a shared Limiter
// to enforce one limit across instances.
//
// The zero value is not usable; call [NewMemory].
type Memory struct {
	seed   maphash.Seed
	shards [numShards]shard
}

type shard struct {
	mu        sync.Mutex
	entries   map[string]*entry
	nextSweep int64 // Unix nanoseconds
	_         [40]byte
}

// entry is one key's counters.
type entry struct {
	counters []counter
	end      int64 // Unix nanoseconds when the last of its windows ends
}

// counter is the count of one window of one key.
type counter struct {
	name   string
	length int64 // nanoseconds
	start  int64 // Unix nanoseconds of the current window's start
	count  int
}

var _ Limiter = (*Memory)(nil)

// NewMemory returns an empty in-process limiter.
func NewMemory() *Memory {
	m := &Memory{seed: maphash.MakeSeed()}
	for i := range m.shards {
		m.shards[i].entries = make(map[string]*entry)
	}
	return m
}

// Allow implements [Limiter]. It never blocks on anything but a short
// in-memory lock, and fails only on invalid windows.
func (m *Memory) Allow(_ context.Context, key string, windows []Window, now time.Time) (Decision, error) {
	if err := ValidateWindows(windows); err != nil {
		return Decision{}, err
	}
	nowNs := now.UnixNano()
	sh := &m.shards[maphash.String(m.seed, key)%numShards]

	var idxBuf [4]int
	idx := idxBuf[:0]
	states := make([]WindowState, len(windows))

	sh.mu.Lock()
	if nowNs >= sh.nextSweep {
		sh.sweep(nowNs)
	}
	e := sh.entries[key]
	if e == nil {
		e = &entry{counters: make([]counter, 0, len(windows))}
		sh.entries[key] = e
	}
	allowed := true
	for _, w := range windows {
		length := int64(w.Length)
		start := floorDiv(nowNs, length) * length
		ci := e.find(w.Name, length)
		if ci < 0 {
			e.counters = append(e.counters, counter{name: w.Name, length: length, start: start})
			ci = len(e.counters) - 1
		}
		c := &e.counters[ci]
		// A later window starts afresh. An earlier one (the caller's clock
		// stepped back) keeps counting in the window already open: never
		// admit more than the limit in it.
		if start > c.start {
			c.start, c.count = start, 0
		}
		if c.count >= w.Limit {
			allowed = false
		}
		idx = append(idx, ci)
	}
	for i, w := range windows {
		c := &e.counters[idx[i]]
		if allowed {
			c.count++
		}
		end := c.start + c.length
		if end > e.end {
			e.end = end
		}
		states[i] = WindowState{Window: w, Remaining: max(w.Limit-c.count, 0), Reset: time.Unix(0, end).UTC()}
	}
	sh.mu.Unlock()

	d := Decision{Allowed: allowed, Windows: states, Now: now}
	d.decide()
	return d, nil
}

// Len returns the number of keys currently held.
func (m *Memory) Len() int {
	n := 0
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		n += len(sh.entries)
		sh.mu.Unlock()
	}
	return n
}

// Sweep drops every key whose windows have all ended by now. Allow sweeps
// each shard about once a minute on its own; Sweep is for callers (and tests)
// that want memory back at once.
func (m *Memory) Sweep(now time.Time) {
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		sh.sweep(now.UnixNano())
		sh.mu.Unlock()
	}
}

// sweep drops idle entries; sh.mu is held.
func (sh *shard) sweep(nowNs int64) {
	for k, e := range sh.entries {
		if e.end <= nowNs {
			delete(sh.entries, k)
		}
	}
	sh.nextSweep = nowNs + int64(sweepEvery)
}

func (e *entry) find(name string, length int64) int {
	for i := range e.counters {
		if e.counters[i].length == length && e.counters[i].name == name {
			return i
		}
	}
	return -1
}

// floorDiv is a / b rounded toward negative infinity (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
