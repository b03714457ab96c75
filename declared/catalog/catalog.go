// Package catalog keeps declared products (package declared) in a
// settleflow database, where an operator adds, updates and retires them
// (the reference server's products commands) and a running server follows
// them ([Follower]): a change applies to the workflows created after it,
// while a workflow keeps the pricing it was quoted with.
//
// A product is stored as its object in the products-file form
// (docs/products.md), the bytes the operator gave, and read back through
// the same strict parser.
package catalog

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/uptrace/bun"

	"github.com/settleflow/settleflow/declared"
	"github.com/settleflow/settleflow/storage"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationsTable records the catalogue's migrations.
const migrationsTable = "declared_migrations"

// Errors of the catalogue's changes.
var (
	// ErrExists: Add of a product that is in the catalogue (use Update).
	ErrExists = errors.New("catalog: a product of this name is in the catalogue")
	// ErrNotFound: no product of this name was ever added.
	ErrNotFound = errors.New("catalog: no product of this name")
	// ErrRetired: Update or Retire of a retired product (Add brings it
	// back).
	ErrRetired = errors.New("catalog: the product is retired")
)

// Entry is one declared product of the catalogue.
type Entry struct {
	Name string `json:"name"`
	// Version is 1 at Add and one more at each Update and each Add that
	// brings a retired product back.
	Version int64 `json:"version"`
	// Source is the product's object as declared, compacted.
	Source    json.RawMessage `json:"product"`
	CreatedAt time.Time       `json:"createdAt"`
	UpdatedAt time.Time       `json:"updatedAt"`
	// RetiredAt is when it was retired; nil while it is in the catalogue.
	RetiredAt *time.Time `json:"retiredAt"`
}

// Product parses the entry's source, strictly, as a products file of one
// product.
func (e Entry) Product() (*declared.Product, error) {
	ps, err := declared.Parse(e.Name, wrap(e.Source))
	if err != nil {
		return nil, err
	}
	return ps[0], nil
}

// wrap is a products file holding the product object src.
func wrap(src json.RawMessage) []byte {
	return append(append([]byte(`{"products":[`), src...), "]}"...)
}

// Catalog is the declared products of one database. Safe for concurrent
// use, also by several processes on the database.
type Catalog struct {
	db  *storage.DB
	now func() time.Time
}

// New returns the catalogue of db; call Migrate before using it.
func New(db *storage.DB) *Catalog {
	return &Catalog{db: db, now: func() time.Time { return time.Now().UTC() }}
}

// Migrate creates or updates the catalogue's table.
func (c *Catalog) Migrate(ctx context.Context) error {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return err
	}
	if err := c.db.Migrate(ctx, storage.Migrations{Table: migrationsTable, Files: sub}); err != nil {
		return fmt.Errorf("catalog: %w", err)
	}
	return nil
}

type row struct {
	Name      string `bun:"name"`
	Version   int64  `bun:"version"`
	Source    string `bun:"source"`
	CreatedAt int64  `bun:"created_at"`
	UpdatedAt int64  `bun:"updated_at"`
	RetiredAt *int64 `bun:"retired_at"`
}

func (r row) entry() Entry {
	e := Entry{Name: r.Name, Version: r.Version, Source: json.RawMessage(r.Source),
		CreatedAt: storage.FromMicros(r.CreatedAt), UpdatedAt: storage.FromMicros(r.UpdatedAt)}
	if r.RetiredAt != nil {
		t := storage.FromMicros(*r.RetiredAt)
		e.RetiredAt = &t
	}
	return e
}

const columns = "name, version, source, created_at, updated_at, retired_at"

// Add puts p in the catalogue at version 1, or, if p's name belongs to a
// retired product, brings it back as p at its next version. It fails with
// ErrExists if a product of that name is in the catalogue.
func (c *Catalog) Add(ctx context.Context, p *declared.Product) (Entry, error) {
	now := storage.Micros(c.now())
	var n int64
	err := c.db.Write(ctx, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewRaw(`INSERT INTO declared_products (`+columns+`) VALUES (?, 1, ?, ?, ?, NULL)
			ON CONFLICT (name) DO UPDATE SET version = declared_products.version + 1, source = excluded.source,
			updated_at = excluded.updated_at, retired_at = NULL WHERE declared_products.retired_at IS NOT NULL`,
			p.Name, string(p.Source), now, now).Exec(ctx)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return Entry{}, fmt.Errorf("catalog: add %s: %w", p.Name, err)
	}
	if n == 0 {
		return Entry{}, fmt.Errorf("%w: %s (update it instead)", ErrExists, p.Name)
	}
	return c.Get(ctx, p.Name)
}

// Update replaces the product of p's name by p, at its next version. It
// fails with ErrNotFound if there is none, ErrRetired if it is retired.
func (c *Catalog) Update(ctx context.Context, p *declared.Product) (Entry, error) {
	return c.change(ctx, p.Name, "update", `UPDATE declared_products SET version = version + 1, source = ?, updated_at = ?
		WHERE name = ? AND retired_at IS NULL`, string(p.Source), storage.Micros(c.now()), p.Name)
}

// Retire takes the product named name out of the catalogue: a server
// following the catalogue refuses new workflows for it, while those
// created before finish. It fails with ErrNotFound if there is none,
// ErrRetired if it is retired already.
func (c *Catalog) Retire(ctx context.Context, name string) (Entry, error) {
	now := storage.Micros(c.now())
	return c.change(ctx, name, "retire", `UPDATE declared_products SET retired_at = ?, updated_at = ?
		WHERE name = ? AND retired_at IS NULL`, now, now, name)
}

// change runs an UPDATE of the active product name and returns it; if no
// row changed, the error says why.
func (c *Catalog) change(ctx context.Context, name, what, query string, args ...any) (Entry, error) {
	var n int64
	err := c.db.Write(ctx, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewRaw(query, args...).Exec(ctx)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return Entry{}, fmt.Errorf("catalog: %s %s: %w", what, name, err)
	}
	e, err := c.Get(ctx, name)
	if err != nil {
		return Entry{}, err
	}
	if n == 0 {
		return Entry{}, fmt.Errorf("%w: %s (add it to bring it back)", ErrRetired, name)
	}
	return e, nil
}

// Get returns the product named name, retired or not, or ErrNotFound.
func (c *Catalog) Get(ctx context.Context, name string) (Entry, error) {
	var r row
	err := c.db.Bun().NewRaw(`SELECT `+columns+` FROM declared_products WHERE name = ?`, name).Scan(ctx, &r)
	if errors.Is(err, sql.ErrNoRows) {
		return Entry{}, fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	if err != nil {
		return Entry{}, fmt.Errorf("catalog: %w", err)
	}
	return r.entry(), nil
}

// List returns every product, retired ones included, by name.
func (c *Catalog) List(ctx context.Context) ([]Entry, error) {
	var rows []row
	if err := c.db.Bun().NewRaw(`SELECT `+columns+` FROM declared_products ORDER BY name`).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	out := make([]Entry, len(rows))
	for i, r := range rows {
		out[i] = r.entry()
	}
	return out, nil
}
