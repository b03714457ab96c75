package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"go.uber.org/zap"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/declared"
	"github.com/settleflow/settleflow/declared/catalog"
	"github.com/settleflow/settleflow/storage"
)

// catalogPoll is how often a running server applies the products
// commands' changes.
const catalogPoll = 2 * time.Second

func openCatalog(ctx context.Context, db *storage.DB) (*catalog.Catalog, error) {
	c := catalog.New(db)
	if err := c.Migrate(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// productsGroup is the products command: the declared products kept in the
// server's database, which every server on it follows.
func productsGroup() *group {
	var asJSON bool
	cat := func(x *cmdContext) *catalog.Catalog { return x.shared.(*catalog.Catalog) }
	jsonFlag := func(fs *flag.FlagSet) { fs.BoolVar(&asJSON, "json", false, "print JSON") }
	return &group{
		name:    "products",
		summary: "Add, update, retire, list and show the declared products kept in the database (docs/products.md).",
		detail: "A FILE is a products file (docs/products.md) declaring one product, checked as -products checks its file: " +
			"strictly, \"remote\": true required (workers run it), no name of a demo product or of the -products file given. " +
			"A running server applies a change within " + catalogPoll.String() + ", to the workflows created after it; " +
			"a workflow keeps the pricing it was quoted with. A retired product leaves the catalogue and new workflows for it are refused " +
			"(400 product_retired) while those created before finish; add brings it back.",
		open: func(ctx context.Context, c config) (*cmdContext, func(), error) {
			db, err := openDB(ctx, c)
			if err != nil {
				return nil, nil, err
			}
			cat, err := openCatalog(ctx, db)
			if err != nil {
				db.Close()
				return nil, nil, err
			}
			return &cmdContext{shared: cat}, func() { db.Close() }, nil
		},
		subs: []subcommand{{
			name: "add", args: "FILE", nargs: 1,
			summary: "Add the product FILE declares; a retired product of that name comes back as FILE declares it.",
			run: func(ctx context.Context, x *cmdContext) error {
				p, err := readOneProduct(x.c, x.args[0])
				if err != nil {
					return err
				}
				e, err := cat(x).Add(ctx, p)
				if errors.Is(err, catalog.ErrExists) {
					return fmt.Errorf("product %s is in the catalogue already: change it with products update", p.Name)
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(x.stdout, "added %s (version %d); servers on this database sell it within %s\n", e.Name, e.Version, catalogPoll)
				return nil
			},
		}, {
			name: "update", args: "FILE", nargs: 1,
			summary: "Replace the product of the name FILE declares by FILE's; workflows created before keep their pricing.",
			run: func(ctx context.Context, x *cmdContext) error {
				p, err := readOneProduct(x.c, x.args[0])
				if err != nil {
					return err
				}
				e, err := cat(x).Update(ctx, p)
				switch {
				case errors.Is(err, catalog.ErrNotFound):
					return fmt.Errorf("no product %s in the catalogue: add it with products add", p.Name)
				case errors.Is(err, catalog.ErrRetired):
					return fmt.Errorf("product %s is retired: bring it back with products add", p.Name)
				case err != nil:
					return err
				}
				fmt.Fprintf(x.stdout, "updated %s to version %d; servers on this database quote new workflows by it within %s\n", e.Name, e.Version, catalogPoll)
				return nil
			},
		}, {
			name: "retire", args: "NAME", nargs: 1,
			summary: "Retire a product: it leaves the catalogue and new workflows for it are refused (product_retired); those created before finish.",
			run: func(ctx context.Context, x *cmdContext) error {
				e, err := cat(x).Retire(ctx, x.args[0])
				switch {
				case errors.Is(err, catalog.ErrNotFound):
					return fmt.Errorf("no product %s in the catalogue (the demo products and those of -products are not retired here)", x.args[0])
				case errors.Is(err, catalog.ErrRetired):
					return fmt.Errorf("product %s is retired already", x.args[0])
				case err != nil:
					return err
				}
				fmt.Fprintf(x.stdout, "retired %s; servers on this database refuse new workflows for it within %s\n", e.Name, catalogPoll)
				return nil
			},
		}, {
			name:    "list",
			summary: "List the products kept in the database, retired ones included (the demo products and -products are not kept there).",
			flags:   jsonFlag,
			run: func(ctx context.Context, x *cmdContext) error {
				entries, err := cat(x).List(ctx)
				if err != nil {
					return err
				}
				if asJSON {
					return printJSON(x.stdout, entriesJSON(entries))
				}
				tw := tabwriter.NewWriter(x.stdout, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tVERSION\tPRICING\tTARGET MARGIN\tSTATE\tUPDATED")
				for _, e := range entries {
					model, margin := "?", "?"
					if p, err := e.Product(); err == nil {
						model, margin = string(p.Price.Model), p.Price.TargetMargin.String()
					}
					state := "active"
					if e.RetiredAt != nil {
						state = "retired " + e.RetiredAt.Format(time.RFC3339)
					}
					fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", e.Name, e.Version, model, margin, state, e.UpdatedAt.Format(time.RFC3339))
				}
				return tw.Flush()
			},
		}, {
			name: "show", args: "NAME", nargs: 1,
			summary: "Show a product: its version, state and declaration (with --json, one object).",
			flags:   jsonFlag,
			run: func(ctx context.Context, x *cmdContext) error {
				e, err := cat(x).Get(ctx, x.args[0])
				if errors.Is(err, catalog.ErrNotFound) {
					return fmt.Errorf("no product %s in the catalogue", x.args[0])
				}
				if err != nil {
					return err
				}
				if asJSON {
					return printJSON(x.stdout, entriesJSON([]catalog.Entry{e})[0])
				}
				state := "active"
				if e.RetiredAt != nil {
					state = "retired at " + e.RetiredAt.Format(time.RFC3339)
				}
				fmt.Fprintf(x.stdout, "%s, version %d, %s\ncreated %s, updated %s\n\n", e.Name, e.Version, state,
					e.CreatedAt.Format(time.RFC3339), e.UpdatedAt.Format(time.RFC3339))
				var b bytes.Buffer
				if err := json.Indent(&b, e.Source, "", "  "); err != nil {
					return err
				}
				b.WriteByte('\n')
				_, err = b.WriteTo(x.stdout)
				return err
			},
		}},
	}
}

// entryJSON is a catalogue entry as list and show print it.
type entryJSON struct {
	Name      string          `json:"name"`
	Version   int64           `json:"version"`
	State     string          `json:"state"`
	CreatedAt time.Time       `json:"createdAt"`
	UpdatedAt time.Time       `json:"updatedAt"`
	RetiredAt *time.Time      `json:"retiredAt"`
	Product   json.RawMessage `json:"product"`
}

func entriesJSON(entries []catalog.Entry) []entryJSON {
	out := make([]entryJSON, len(entries))
	for i, e := range entries {
		state := "active"
		if e.RetiredAt != nil {
			state = "retired"
		}
		out[i] = entryJSON{Name: e.Name, Version: e.Version, State: state, CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt, RetiredAt: e.RetiredAt, Product: e.Source}
	}
	return out
}

// readOneProduct reads the products file at path, which must declare one
// product, by the server's rules: names the demo products and the
// -products file have are refused.
func readOneProduct(c config, path string) (*declared.Product, error) {
	ps, err := demoProducts()
	if err != nil {
		return nil, err
	}
	if c.productsFile != "" {
		if err := loadProductsFile(c.productsFile, ps); err != nil {
			return nil, err
		}
	}
	data, err := readProductsFile(path)
	if err != nil {
		return nil, err
	}
	products, err := declared.ParseWith(path, data, declaredOptions(ps, true))
	if err != nil {
		return nil, err
	}
	return products[0], nil
}

// followCatalog loads the declared products kept in db into ps (an error
// if one cannot be: a name taken by a demo product or the -products file,
// say), and returns a function that applies the changes made since, every
// catalogPoll, until ctx ends, logging them, and one that releases what it
// holds. It runs after sfserver.New, before the server starts.
func followCatalog(ctx context.Context, db *storage.DB, postgres bool, ps *settleflow.Products) (run func(ctx context.Context, log *zap.Logger), release func(), err error) {
	cat, err := openCatalog(ctx, db)
	if err != nil {
		return nil, nil, err
	}
	// Remote products' tasks are kept in the database: any number of
	// instances serve them, so a remote product is admitted as any other.
	f := catalog.NewFollower(cat, ps, catalog.FollowerOptions{})
	release = func() {}
	if _, err := f.Sync(ctx); err != nil {
		release()
		return nil, nil, fmt.Errorf("products kept in the database (server products list): %w", err)
	}
	run = func(ctx context.Context, log *zap.Logger) {
		t := time.NewTicker(catalogPoll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			changes, err := f.Sync(ctx)
			for _, ch := range changes {
				log.Info("product "+ch.What, zap.String("product", ch.Name), zap.Int64("version", ch.Version))
			}
			if err != nil && ctx.Err() == nil {
				log.Error("products kept in the database: not applied", zap.Error(err))
			}
		}
	}
	return run, release, nil
}
