package catalog

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/declared"
)

// Follower keeps a registry up to date with a catalogue: [Follower.Sync]
// registers the products added since the last call, replaces the updated
// ones (settleflow.ReplaceRaw) and retires the retired ones
// (Products.Retire), so that each change applies to the workflows created
// after it. A retired product is registered too, retired, so that the
// workflows created before it was retired still run after a restart. It
// touches only the products it registered: a name the registry had from
// elsewhere (a Go product) is refused, not replaced.
type Follower struct {
	catalog  *Catalog
	products *settleflow.Products
	opts     FollowerOptions

	mu sync.Mutex
	// applied is, for each product this follower registered, the version
	// and retirement it applied.
	applied map[string]state
	// failed is, for each entry that could not be applied, the state that
	// failed: it is not tried again until it changes.
	failed map[string]state
}

type state struct {
	version int64
	retired bool
}

// FollowerOptions configure a [Follower].
type FollowerOptions struct {
	// Executor runs the products that are not remote; nil: every product
	// must be remote.
	Executor declared.Executor
	// Admit, if set, is asked before a product is registered (not when it
	// is replaced or retired); an error keeps it out.
	Admit func(p *declared.Product) error
}

// NewFollower returns a follower of c that keeps products up to date.
func NewFollower(c *Catalog, products *settleflow.Products, opts FollowerOptions) *Follower {
	return &Follower{catalog: c, products: products, opts: opts, applied: map[string]state{}, failed: map[string]state{}}
}

// Change is one change Sync applied: "added", "replaced", "retired" or
// "restored" (a retired product added again).
type Change struct {
	Name    string
	Version int64
	What    string
}

// Sync applies the catalogue's changes since the last Sync to the
// registry and returns them. An entry that cannot be applied (a name the
// registry has from elsewhere, a product the registry refuses) is left out
// and reported in the error, once for each version; the others are
// applied.
func (f *Follower) Sync(ctx context.Context) ([]Change, error) {
	entries, err := f.catalog.List(ctx)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var changes []Change
	var errs []error
	for _, e := range entries {
		want := state{version: e.Version, retired: e.RetiredAt != nil}
		have, ours := f.applied[e.Name]
		if (ours && have == want) || f.failed[e.Name] == want {
			continue
		}
		what, err := f.apply(e, want, have, ours)
		if err != nil {
			f.failed[e.Name] = want
			if err != errYield {
				errs = append(errs, fmt.Errorf("catalog: product %s (version %d): %w", e.Name, e.Version, err))
			}
			continue
		}
		delete(f.failed, e.Name)
		f.applied[e.Name] = want
		if what != "" {
			changes = append(changes, Change{Name: e.Name, Version: e.Version, What: what})
		}
	}
	return changes, errors.Join(errs...)
}

// errYield: a retired entry whose name the registry has from elsewhere is
// left out, quietly.
var errYield = errors.New("yields its name")

// apply brings the registry from have (if ours) to e, at want.
func (f *Follower) apply(e Entry, want, have state, ours bool) (string, error) {
	if !ours {
		if _, taken := f.products.Get(e.Name); taken || f.products.Retired(e.Name) {
			if want.retired {
				return "", errYield // a retired entry yields its name
			}
			return "", errors.New("the server has a product of this name from elsewhere (a Go product, or one of a products file)")
		}
	}
	if ours && have.version == want.version {
		// Only the retirement changed.
		if want.retired {
			return "retired", f.products.Retire(e.Name)
		}
		return "", errors.New("a product cannot come back at the same version")
	}
	p, err := e.Product()
	if err != nil {
		return "", err
	}
	if !p.Remote && f.opts.Executor == nil {
		return "", errors.New(`it is not remote and nothing here runs it: give it "remote": true`)
	}
	raw := p.Raw(f.opts.Executor)
	what := "replaced"
	if !ours {
		if f.opts.Admit != nil {
			if err := f.opts.Admit(p); err != nil {
				return "", err
			}
		}
		err, what = settleflow.RegisterRaw(f.products, raw), "added"
	} else {
		if have.retired && !want.retired {
			what = "restored"
		}
		err = settleflow.ReplaceRaw(f.products, raw)
	}
	if err != nil {
		return "", err
	}
	if want.retired {
		return "retired", f.products.Retire(e.Name)
	}
	return what, nil
}
