package bunstore

import (
	"slices"
	"sync"

	"github.com/settleflow/settleflow"
)

// recentCache holds the latest committed version of the workflows this
// Store wrote most recently, so that GetWorkflow of a workflow in flight (the
// API's most frequent call: a client polling the workflow it just created)
// needs no read from SQLite.
//
// It is only correct when this Store is the only writer of workflows in its
// database, which is why it exists only for a database opened exclusively
// (sqlite.OpenOptions.Exclusive holds a lock no other Store can share).
// Within the process, every write of a workflow runs on the Store's one
// writer goroutine, and the writer updates the cache right after the
// commit, in commit order, before it answers the caller: inserted and
// claimed workflows are put, updated ones are dropped (read from SQLite
// again until they are next claimed), released leases empty it. Reads never
// fill it, so a slow read cannot put back a version a later commit replaced.
type recentCache struct {
	mu   sync.RWMutex
	m    map[string]*settleflow.Workflow
	ring []string // ids in the order they were put, for eviction
	next int
}

func newRecentCache(size int) *recentCache {
	return &recentCache{m: make(map[string]*settleflow.Workflow, size), ring: make([]string, size)}
}

// get returns a copy of the cached workflow id, found reporting whether the
// cache could answer: a workflow of the other environment is answered as not
// found, since ids are unique across environments.
func (c *recentCache) get(env settleflow.Environment, id string) (w *settleflow.Workflow, found bool) {
	c.mu.RLock()
	cached, ok := c.m[id]
	c.mu.RUnlock()
	if !ok {
		return nil, false
	}
	if cached.Livemode != env.Livemode() {
		return nil, true
	}
	return cloneWorkflow(cached), true
}

// put caches copies of ws, evicting the oldest entries.
func (c *recentCache) put(ws []*settleflow.Workflow) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, w := range ws {
		if old := c.ring[c.next]; old != "" {
			delete(c.m, old)
		}
		c.m[w.ID] = cloneWorkflow(w)
		c.ring[c.next] = w.ID
		c.next = (c.next + 1) % len(c.ring)
	}
}

// drop forgets the workflows ids.
func (c *recentCache) drop(ids []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		delete(c.m, id)
	}
}

// clear forgets every workflow.
func (c *recentCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.m)
	clear(c.ring)
	c.next = 0
}

// cloneWorkflow copies w deeply enough that neither the cache nor a caller
// can change what the other holds.
func cloneWorkflow(w *settleflow.Workflow) *settleflow.Workflow {
	c := *w
	c.Payload = slices.Clone(w.Payload)
	c.Result = slices.Clone(w.Result)
	if w.Margin.Achieved != nil {
		a := *w.Margin.Achieved
		c.Margin.Achieved = &a
	}
	if w.ActualCost != nil {
		n := *w.ActualCost
		c.ActualCost = &n
	}
	if w.Settlement != nil {
		s := *w.Settlement
		c.Settlement = &s
	}
	if w.Failure != nil {
		f := *w.Failure
		c.Failure = &f
	}
	return &c
}
