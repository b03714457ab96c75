package stage

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/settleflow/settleflow/driver"
	"github.com/settleflow/settleflow/wire"
)

// ErrStopped is what Commit.Insert returns once the commit stage is
// stopping: it takes no more inserts.
var ErrStopped = errors.New("stage: stopped")

// Commit is the commit stage, the group commit of Creates: it takes every
// insert waiting and makes them one transaction, so many concurrent Creates
// cost one commit. It runs from the engine's New to its Stop, since Create
// works before Start: Stop refuses new inserts, commits those queued, and
// returns once they are answered.
type Commit struct {
	env     *Env
	creates chan *createRequest

	// mu orders Inserts against Stop: an Insert holds it shared while it
	// queues, Stop takes it to set closed, so nothing is queued after the
	// final drain.
	mu       sync.RWMutex
	closed   bool
	stopping chan struct{} // closed by Stop: the loop drains and exits
	done     chan struct{} // closed when the loop has exited
	stopOnce sync.Once

	claimer atomic.Pointer[Claimer]
}

// SetClaimer makes the commit stage insert workflows already claimed, as
// far as c lends it slots (nil: never).
func (c *Commit) SetClaimer(cl Claimer) {
	if cl == nil {
		c.claimer.Store(nil)
		return
	}
	c.claimer.Store(&cl)
}

type createRequest struct {
	ins  driver.Insert
	done chan createResult
}

type createResult struct {
	res driver.InsertResult
	err error
}

// NewCommit returns the commit stage.
func NewCommit(env *Env) *Commit {
	return &Commit{
		env:      env,
		creates:  make(chan *createRequest, 4*env.BatchSize),
		stopping: make(chan struct{}),
		done:     make(chan struct{}),
	}
}

// Name implements Stage.
func (c *Commit) Name() string { return "commit" }

// Start implements Stage.
func (c *Commit) Start(context.Context) error {
	go c.loop()
	return nil
}

// Stop implements Stage. It waits for the inserts already queued to be
// committed whatever ctx does: their callers must learn whether their
// workflows exist.
func (c *Commit) Stop(context.Context) error {
	c.stopOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		close(c.stopping)
	})
	<-c.done
	return nil
}

// Stopped reports whether Stop was called.
func (c *Commit) Stopped() bool {
	select {
	case <-c.stopping:
		return true
	default:
		return false
	}
}

// Insert queues ins for the next group commit and returns its result. Once
// queued, it is answered whatever ctx does; ctx bounds only the wait for
// room in the queue. After Stop it returns ErrStopped.
func (c *Commit) Insert(ctx context.Context, ins driver.Insert) (driver.InsertResult, error) {
	req := &createRequest{ins: ins, done: make(chan createResult, 1)}
	c.mu.RLock()
	if c.closed {
		c.mu.RUnlock()
		return driver.InsertResult{}, ErrStopped
	}
	select {
	case c.creates <- req:
		c.mu.RUnlock()
	case <-ctx.Done():
		c.mu.RUnlock()
		return driver.InsertResult{}, ctx.Err()
	}
	r := <-req.done
	return r.res, r.err
}

func (c *Commit) loop() {
	defer close(c.done)
	batch := make([]*createRequest, 0, c.env.BatchSize)
	for {
		var first *createRequest
		select {
		case first = <-c.creates:
		case <-c.stopping:
			// No insert can queue any more: commit what is queued, then leave.
			for {
				select {
				case r := <-c.creates:
					c.commit([]*createRequest{r})
				default:
					return
				}
			}
		}
		batch = Drain(c.creates, append(batch[:0], first), c.env.BatchSize)
		c.commit(batch)
	}
}

func (c *Commit) commit(batch []*createRequest) {
	ins := make([]driver.Insert, len(batch))
	for i, r := range batch {
		ins[i] = r.ins
	}
	// Workers free now take the first inserts of the batch as they are
	// inserted: the Store claims each for them unless its customer has a
	// workflow waiting in line.
	var lent *Reservation
	if cl := c.claimer.Load(); cl != nil {
		lent = (*cl).Reserve(len(ins))
	}
	if lent != nil {
		claim := &driver.InsertClaim{Owner: lent.Owner, LeaseUntil: lent.LeaseUntil}
		for i := range lent.N {
			ins[i].Claim = claim
		}
	}
	// Not the callers' contexts: one caller giving up must not abort the
	// others' transaction.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := c.env.Store.InsertWorkflows(ctx, ins)
	if err != nil && len(batch) > 1 && !isStoreDown(err) {
		// Isolate the request at fault rather than failing its neighbours.
		if lent != nil {
			lent.Release(lent.N)
		}
		for _, r := range batch {
			c.commit([]*createRequest{r})
		}
		return
	}
	if lent != nil {
		ran := 0
		for i := range ins {
			if err == nil && res[i].Claimed {
				// The caller's workflow stays as created (Pending); the
				// execution has its own copy, as claimed.
				w := *ins[i].Workflow
				w.Status, w.UpdatedAt = wire.Running, w.CreatedAt
				lent.Run(&w)
				ran++
			}
		}
		lent.Release(lent.N - ran)
	}
	for i, r := range batch {
		if err != nil {
			r.done <- createResult{err: fmt.Errorf("settleflow: create: %w", err)}
			continue
		}
		r.done <- createResult{res: res[i]}
	}
}

func isStoreDown(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}
