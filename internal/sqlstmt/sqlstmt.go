// Package sqlstmt caches prepared statements written with ? placeholders,
// numbering the placeholders for Postgres. SQLite then neither parses a hot
// statement again nor recompiles the triggers it fires.
package sqlstmt

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
)

// Cache prepares each query once per database. Safe for concurrent use.
type Cache struct {
	db       *sql.DB
	postgres bool

	mu sync.Mutex
	m  map[string]*sql.Stmt
}

// New returns a cache on db; postgres selects $n placeholders.
func New(db *sql.DB, postgres bool) *Cache {
	return &Cache{db: db, postgres: postgres, m: map[string]*sql.Stmt{}}
}

// Stmt returns the prepared statement for query.
func (c *Cache) Stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.m[query]; ok {
		return st, nil
	}
	text := query
	if c.postgres {
		text = NumberPlaceholders(query)
	}
	st, err := c.db.PrepareContext(ctx, text)
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	c.m[query] = st
	return st, nil
}

// In returns the prepared statement for query, bound to tx if tx is not nil.
func (c *Cache) In(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	st, err := c.Stmt(ctx, query)
	if err != nil || tx == nil {
		return st, err
	}
	return tx.StmtContext(ctx, st), nil
}

// Exec runs query, in tx if tx is not nil.
func (c *Cache) Exec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	st, err := c.In(ctx, tx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// Close closes every statement.
func (c *Cache) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.m {
		st.Close()
	}
	c.m = map[string]*sql.Stmt{}
}

// NumberPlaceholders turns ? into $1, $2, … for Postgres. The queries it is
// used on hold no ? inside literals.
func NumberPlaceholders(q string) string {
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
