package catalog

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/declared"
	"github.com/settleflow/settleflow/internal/pgtest"
	"github.com/settleflow/settleflow/storage"
	"github.com/settleflow/settleflow/storage/sqlite"
)

// pgOpen, when set, makes openCatalog use Postgres instead of SQLite.
var pgOpen func(t testing.TB) *storage.DB

// openCatalog is a migrated catalogue on a fresh database.
func openCatalog(t *testing.T) *Catalog {
	t.Helper()
	var db *storage.DB
	if pgOpen != nil {
		db = pgOpen(t)
	} else {
		var err error
		if db, err = sqlite.OpenDB(filepath.Join(t.TempDir(), "settleflow.db"), sqlite.OpenOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
	}
	c := New(db)
	for range 2 { // migrating twice is harmless
		if err := c.Migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// TestPostgres runs the tests again on Postgres, in a schema of its own.
// It needs SETTLEFLOW_TEST_POSTGRES_DSN; otherwise it skips.
func TestPostgres(t *testing.T) {
	pg := pgtest.Connect(t)
	pgOpen = func(t testing.TB) *storage.DB { return pg.Storage(t, "catalog_test")() }
	defer func() { pgOpen = nil }()
	t.Run("Catalog", TestCatalog)
	t.Run("Follower", TestFollower)
}

// product is a remote product named name whose estimate is base plus 10
// per page, with target margin margin.
func product(t *testing.T, name string, base int, margin string) *declared.Product {
	t.Helper()
	src := fmt.Sprintf(`{"products": [{"name": %q, "payloadSchema": {"type": "object", "properties": {"pages": {"type": "integer", "minimum": 0}}},
		"pricing": {"model": "fixed", "targetMargin": %s}, "estimate": {"base": %d, "perUnit": [{"pointer": "/pages", "unit": "value", "cost": 10}]},
		"remote": true}]}`, name, margin, base)
	ps, err := declared.ParseWith("test.json", []byte(src), declared.Options{Single: true, RequireRemote: true})
	if err != nil {
		t.Fatal(err)
	}
	return ps[0]
}

func TestCatalog(t *testing.T) {
	ctx := context.Background()
	c := openCatalog(t)
	a := product(t, "alpha", 100, "0.3")
	e, err := c.Add(ctx, a)
	if err != nil || e.Version != 1 || e.RetiredAt != nil || string(e.Source) != string(a.Source) || e.CreatedAt.IsZero() {
		t.Fatalf("Add: %+v, %v", e, err)
	}
	if _, err := c.Add(ctx, a); !errors.Is(err, ErrExists) {
		t.Fatalf("Add twice: %v, want ErrExists", err)
	}
	a2 := product(t, "alpha", 200, "0.5")
	if e, err = c.Update(ctx, a2); err != nil || e.Version != 2 || string(e.Source) != string(a2.Source) {
		t.Fatalf("Update: %+v, %v", e, err)
	}
	p, err := e.Product()
	if err != nil || p.Price.TargetMargin != 5000 || !p.Remote {
		t.Fatalf("the stored product read back: %+v, %v", p, err)
	}
	if _, err := c.Update(ctx, product(t, "nobody", 1, "0.1")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Update of a product never added: %v", err)
	}
	if _, err := c.Retire(ctx, "nobody"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Retire of a product never added: %v", err)
	}
	if e, err = c.Retire(ctx, "alpha"); err != nil || e.RetiredAt == nil || e.Version != 2 {
		t.Fatalf("Retire: %+v, %v", e, err)
	}
	if _, err := c.Retire(ctx, "alpha"); !errors.Is(err, ErrRetired) {
		t.Fatalf("Retire twice: %v", err)
	}
	if _, err := c.Update(ctx, a2); !errors.Is(err, ErrRetired) {
		t.Fatalf("Update of a retired product: %v", err)
	}
	if e, err = c.Add(ctx, a); err != nil || e.Version != 3 || e.RetiredAt != nil || string(e.Source) != string(a.Source) {
		t.Fatalf("Add of a retired product: %+v, %v", e, err)
	}
	if _, err := c.Add(ctx, product(t, "beta", 1, "0.1")); err != nil {
		t.Fatal(err)
	}
	list, err := c.List(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "alpha" || list[1].Name != "beta" {
		t.Fatalf("List: %+v, %v", list, err)
	}
}

func TestFollower(t *testing.T) {
	ctx := context.Background()
	c := openCatalog(t)
	ps := settleflow.NewProducts()
	// A product the registry has from elsewhere.
	if err := declared.Register(ps, []*declared.Product{product(t, "taken", 1, "0.1")}, nil); err != nil {
		t.Fatal(err)
	}
	f := NewFollower(c, ps, FollowerOptions{})
	for _, p := range []*declared.Product{product(t, "alpha", 100, "0.3"), product(t, "taken", 5, "0.2")} {
		if _, err := c.Add(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	changes, err := f.Sync(ctx)
	if err == nil || !strings.Contains(err.Error(), "product taken (version 1): the server has a product of this name from elsewhere") {
		t.Fatalf("Sync over a name taken: %v", err)
	}
	if len(changes) != 1 || changes[0] != (Change{"alpha", 1, "added"}) {
		t.Fatalf("changes %v", changes)
	}
	if info, _ := ps.Get("taken"); info.TargetMargin != 1000 {
		t.Fatalf("the product from elsewhere was replaced: %+v", info)
	}
	if changes, err := f.Sync(ctx); len(changes) != 0 || err != nil {
		t.Fatalf("a Sync with nothing new: %v, %v (a failure is reported once)", changes, err)
	}

	if _, err := c.Update(ctx, product(t, "alpha", 200, "0.5")); err != nil {
		t.Fatal(err)
	}
	if changes, err := f.Sync(ctx); err != nil || len(changes) != 1 || changes[0] != (Change{"alpha", 2, "replaced"}) {
		t.Fatalf("Sync after Update: %v, %v", changes, err)
	}
	if info, ok := ps.Get("alpha"); !ok || info.TargetMargin != 5000 || len(ps.Remote()) != 2 {
		t.Fatalf("after Update: %+v", info)
	}
	if _, err := c.Retire(ctx, "alpha"); err != nil {
		t.Fatal(err)
	}
	if changes, err := f.Sync(ctx); err != nil || len(changes) != 1 || changes[0] != (Change{"alpha", 2, "retired"}) || !ps.Retired("alpha") {
		t.Fatalf("Sync after Retire: %v, %v", changes, err)
	}

	// A restart: a new registry learns alpha retired (its workflows in
	// flight still run) and taken as a product of its own.
	ps2 := settleflow.NewProducts()
	if changes, err := NewFollower(c, ps2, FollowerOptions{}).Sync(ctx); err != nil || len(changes) != 2 || !ps2.Retired("alpha") {
		t.Fatalf("a new follower: %v, %v", changes, err)
	}
	if info, ok := ps2.Get("taken"); !ok || info.TargetMargin != 2000 {
		t.Fatalf("taken on a registry of its own: %+v", info)
	}

	// Added again, alpha is back.
	if _, err := c.Add(ctx, product(t, "alpha", 300, "0.3")); err != nil {
		t.Fatal(err)
	}
	if changes, err := f.Sync(ctx); err != nil || len(changes) != 1 || changes[0] != (Change{"alpha", 3, "restored"}) || ps.Retired("alpha") {
		t.Fatalf("Sync after a re-add: %v, %v", changes, err)
	}
	// Admit keeps a new product out, and so does a product that is not
	// remote with no Executor.
	ps3 := settleflow.NewProducts()
	_, err = NewFollower(c, ps3, FollowerOptions{Admit: func(p *declared.Product) error { return errors.New("no room") }}).Sync(ctx)
	if err == nil || !strings.Contains(err.Error(), "no room") || len(ps3.List()) != 0 {
		t.Fatalf("Admit refusing: %v, %v", err, ps3.List())
	}
}

// Two instances on one Postgres database, each with its own connections,
// catalogue and registry: what either adds, updates or retires reaches
// both registries at the same version, two adds of one name race to one
// winner, and neither holds anything the other waits for (there is no
// holder to take over from: each instance follows the catalogue on its own,
// and remote products' tasks are kept in the database, issue 42).
func TestTwoInstancesOnPostgres(t *testing.T) {
	pg := pgtest.Connect(t)
	open := pg.Storage(t, "catalog_two")
	ctx := context.Background()
	var cats [2]*Catalog
	var regs [2]*settleflow.Products
	var fols [2]*Follower
	for i := range cats {
		cats[i] = New(open())
		if err := cats[i].Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		regs[i] = settleflow.NewProducts()
		fols[i] = NewFollower(cats[i], regs[i], FollowerOptions{})
	}
	sync := func(step string) {
		t.Helper()
		for i, f := range fols {
			if _, err := f.Sync(ctx); err != nil {
				t.Fatalf("%s: instance %d's Sync: %v", step, i, err)
			}
		}
	}
	// Both add gamma at once: one wins, the other is told it exists.
	errs := make(chan error, 2)
	for i := range cats {
		go func() {
			_, err := cats[i].Add(ctx, product(t, "gamma", 100+i, "0.3"))
			errs <- err
		}()
	}
	won, lost := 0, 0
	for range 2 {
		switch err := <-errs; {
		case err == nil:
			won++
		case errors.Is(err, ErrExists):
			lost++
		default:
			t.Fatalf("a racing Add: %v", err)
		}
	}
	if won != 1 || lost != 1 {
		t.Fatalf("two racing adds of one name: %d won, %d told it exists", won, lost)
	}
	sync("after the race")
	for i, ps := range regs {
		if _, ok := ps.Get("gamma"); !ok || len(ps.Remote()) != 1 {
			t.Fatalf("instance %d's registry after the race: %v", i, ps.List())
		}
	}
	// Instance 1 updates, instance 0 retires: both registries follow.
	if e, err := cats[1].Update(ctx, product(t, "gamma", 500, "0.5")); err != nil || e.Version != 2 {
		t.Fatalf("Update through instance 1: %+v, %v", e, err)
	}
	sync("after the update")
	for i, ps := range regs {
		if info, ok := ps.Get("gamma"); !ok || info.TargetMargin != 5000 {
			t.Fatalf("instance %d after instance 1's update: %+v", i, info)
		}
	}
	if _, err := cats[0].Retire(ctx, "gamma"); err != nil {
		t.Fatal(err)
	}
	sync("after the retirement")
	for i, ps := range regs {
		if !ps.Retired("gamma") {
			t.Fatalf("instance %d does not see gamma retired", i)
		}
	}
	// Instance 0 gone (its connections closed): instance 1 goes on alone.
	if err := cats[0].db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := cats[1].Add(ctx, product(t, "gamma", 700, "0.3")); err != nil {
		t.Fatalf("re-add through instance 1 with instance 0 gone: %v", err)
	}
	if changes, err := fols[1].Sync(ctx); err != nil || len(changes) != 1 || changes[0] != (Change{"gamma", 3, "restored"}) {
		t.Fatalf("instance 1's Sync with instance 0 gone: %v, %v", changes, err)
	}
}
