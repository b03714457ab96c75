package settleflow

import (
	"context"
	"fmt"
	"iter"
	"sync"

	"github.com/settleflow/settleflow/internal/ids"
)

// Fetch returns the workflow with id in env, or ErrNotFound (also for an id
// of the other environment). The caller may not modify the result.
func (e *Engine) Fetch(ctx context.Context, env Environment, id string) (*Workflow, error) {
	if !ids.Valid(ids.Workflow, id) {
		return nil, ErrNotFound
	}
	if w, ok := e.terminal.get(env, id); ok {
		return w, nil
	}
	w, err := e.store.GetWorkflow(ctx, env, id)
	if err == nil && e.cacheable(w) {
		e.terminal.put(env, w)
	}
	return w, err
}

// cacheable reports whether w never changes again, so it may be served from
// memory: a Failed or Canceled workflow, or a Settled one in an environment
// without refunds (with refunds, its refunded amount may still change, by
// any engine sharing the Store).
func (e *Engine) cacheable(w *Workflow) bool {
	switch w.Status {
	case Failed, Canceled:
		return true
	case Settled:
		_, refunds := e.funds(w.Environment())
		return !refunds
	}
	return false
}

// terminalCacheSize bounds the cache of terminal workflows.
const terminalCacheSize = 10_000

type terminalCache struct {
	mu sync.RWMutex
	m  map[string]*Workflow // by environment + id
}

func (c *terminalCache) get(env Environment, id string) (*Workflow, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	w, ok := c.m[string(env)+id]
	return w, ok
}

func (c *terminalCache) drop(env Environment, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, string(env)+id)
}

func (c *terminalCache) put(env Environment, w *Workflow) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[string]*Workflow)
	}
	if len(c.m) >= terminalCacheSize {
		for k := range c.m { // evict an arbitrary entry: map order is random
			delete(c.m, k)
			break
		}
	}
	c.m[string(env)+w.ID] = w
}

// checkPage checks what every list takes alike: the environment, the limit
// (1–100; 0 becomes 10) and the keyset cursors, ids with prefix (noun names
// them in messages), at most one of them.
func checkPage(env Environment, limit *int, startingAfter, endingBefore, prefix, noun string) error {
	if !env.Valid() {
		return fmt.Errorf("settleflow: environment %q is neither test nor live", env)
	}
	if *limit == 0 {
		*limit = 10
	}
	switch {
	case *limit < 1 || *limit > 100:
		return &InvalidError{Code: CodeParameterInvalid, Param: "limit", Message: "limit must be between 1 and 100"}
	case startingAfter != "" && endingBefore != "":
		return &InvalidError{Code: CodeParameterInvalid, Param: "endingBefore", Message: "startingAfter and endingBefore cannot be used together"}
	case startingAfter != "" && !ids.Valid(prefix, startingAfter):
		return &InvalidError{Code: CodeParameterInvalid, Param: "startingAfter", Message: "startingAfter must be " + noun + " id (" + prefix + "…)"}
	case endingBefore != "" && !ids.Valid(prefix, endingBefore):
		return &InvalidError{Code: CodeParameterInvalid, Param: "endingBefore", Message: "endingBefore must be " + noun + " id (" + prefix + "…)"}
	}
	return nil
}

// ListParams select a page of workflows; see ListQuery.
type ListParams = ListQuery

// Page is one page of workflows, newest first.
type Page struct {
	Data    []*Workflow
	HasMore bool
}

// List returns a page of workflows of p.Environment matching the filters,
// newest first. Limit is 1–100 (0 means 10). Pagination is by keyset: a deep
// page costs what the first one does.
func (e *Engine) List(ctx context.Context, p ListParams) (*Page, error) {
	if err := checkPage(p.Environment, &p.Limit, p.StartingAfter, p.EndingBefore, ids.Workflow, "a workflow"); err != nil {
		return nil, err
	}
	if p.Status != "" && !p.Status.Valid() {
		return nil, &InvalidError{Code: CodeParameterInvalid, Param: "status", Message: "status must be one of " + statusNames}
	}
	ws, more, err := e.store.ListWorkflows(ctx, p)
	if err != nil {
		return nil, err
	}
	return &Page{Data: ws, HasMore: more}, nil
}

// Settles reports whether the engine's Settler can settle env. Quote and
// Create refuse an environment it cannot, with ErrEnvironmentNotConfigured.
func (e *Engine) Settles(env Environment) bool { return e.settler.Configured(env) }

// Product returns the catalogue entry of the product named name.
func (e *Engine) Product(name string) (ProductInfo, bool) { return e.products.Get(name) }

// Products returns the catalogue the engine serves.
func (e *Engine) Products() []ProductInfo { return e.products.List() }

// All iterates over every workflow of p.Environment matching the filters,
// newest first, from p.StartingAfter if set, fetching pages of p.Limit (0
// means 100) through List as the loop goes. An error (an invalid parameter,
// the store failing) is yielded once, with a nil workflow, and ends the
// iteration; so does breaking out of the loop. EndingBefore is not allowed:
// All pages towards older workflows only.
//
//	for w, err := range engine.All(ctx, settleflow.ListParams{Environment: settleflow.Test, Status: settleflow.Settled}) {
//		if err != nil {
//			return err
//		}
//		...
//	}
func (e *Engine) All(ctx context.Context, p ListParams) iter.Seq2[*Workflow, error] {
	return func(yield func(*Workflow, error) bool) {
		if p.EndingBefore != "" {
			yield(nil, &InvalidError{Code: CodeParameterInvalid, Param: "endingBefore", Message: "All pages towards older workflows: use startingAfter"})
			return
		}
		if p.Limit == 0 {
			p.Limit = 100
		}
		for {
			page, err := e.List(ctx, p)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, w := range page.Data {
				if !yield(w, nil) {
					return
				}
			}
			if !page.HasMore || len(page.Data) == 0 {
				return
			}
			p.StartingAfter = page.Data[len(page.Data)-1].ID
		}
	}
}
