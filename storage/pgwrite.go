package storage

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"

	"github.com/uptrace/bun"

	"github.com/settleflow/settleflow/internal/sqlstmt"
)

// maxWriteConns bounds the Postgres connections writes run on at once (a
// write waits for one to be free); half the pool's bound if it has one.
const maxWriteConns = 16

// writeConns are the connections the Postgres writes of [DB.WriteStatement]
// and of the group committer run on: taken from the handle's pool once and
// kept, never handed back to it, because their sessions plan without
// sequential scans (enable_seqscan = off).
//
// Every statement those writes make has an index to take, and Postgres
// keeps the generic plan of a prepared statement for as long as the
// connection lives, made at its sixth execution from the statistics of
// that moment. On a table not yet analyzed (a fresh database's) it assumes
// 10 pages, and the plan it would keep for an update of a batch by id is a
// sequential scan, a hash join over the whole table, which then costs time
// in proportion to the table at every execution until autovacuum analyzes
// it. Reads stay on the pool, planned as usual.
type writeConns struct {
	db  *bun.DB
	max int // connections open at most

	mu     sync.Mutex
	open   int
	closed bool
	idle   []*writeConn
	freed  chan struct{} // signaled when a connection is put back
}

type writeConn struct {
	conn  bun.Conn
	stmts map[string]*sql.Stmt
}

var errWriteConnsClosed = errors.New("storage: write connections closed")

func newWriteConns(db *bun.DB) *writeConns {
	n := maxWriteConns
	if limit := db.DB.Stats().MaxOpenConnections; limit > 0 {
		// A pool bounded by its owner: leave it half for reads.
		n = max(1, min(n, limit/2))
	}
	return &writeConns{db: db, max: n, freed: make(chan struct{}, 1)}
}

// get returns an idle connection, opening one if fewer than maxWriteConns
// are open, or waits for one.
func (p *writeConns) get(ctx context.Context) (*writeConn, error) {
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, errWriteConnsClosed
		}
		if n := len(p.idle); n > 0 {
			c := p.idle[n-1]
			p.idle = p.idle[:n-1]
			p.mu.Unlock()
			return c, nil
		}
		if p.open < p.max {
			p.open++
			p.mu.Unlock()
			c, err := p.dial(ctx)
			if err != nil {
				p.mu.Lock()
				p.open--
				p.mu.Unlock()
				return nil, err
			}
			return c, nil
		}
		p.mu.Unlock()
		select {
		case <-p.freed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (p *writeConns) dial(ctx context.Context) (*writeConn, error) {
	conn, err := p.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := conn.ExecContext(ctx, "SET enable_seqscan = off"); err != nil {
		discardConn(conn)
		return nil, err
	}
	return &writeConn{conn: conn, stmts: map[string]*sql.Stmt{}}, nil
}

// put gives c back after use; err is the last error met on it: one that
// did not come from the server (the connection broke, or its state is
// unknown) closes it instead.
func (p *writeConns) put(c *writeConn, err error) {
	if err != nil && !serverError(err) {
		p.discard(c)
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		c.close()
		return
	}
	p.idle = append(p.idle, c)
	p.mu.Unlock()
	select {
	case p.freed <- struct{}{}:
	default:
	}
}

func (p *writeConns) discard(c *writeConn) {
	c.close()
	p.mu.Lock()
	p.open--
	p.mu.Unlock()
	select {
	case p.freed <- struct{}{}:
	default:
	}
}

// close closes the idle connections, and the others as they come back.
func (p *writeConns) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, c := range idle {
		c.close()
	}
}

func (c *writeConn) close() {
	for _, st := range c.stmts {
		st.Close()
	}
	discardConn(c.conn)
}

// stmt returns query (with ? placeholders) prepared on c.
func (c *writeConn) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := c.stmts[query]; ok {
		return st, nil
	}
	st, err := c.conn.PrepareContext(ctx, sqlstmt.NumberPlaceholders(query))
	if err != nil {
		return nil, fmt.Errorf("storage: prepare: %w", err)
	}
	c.stmts[query] = st
	return st, nil
}

// serverError reports whether err is an error the Postgres server sent (a
// constraint violated, a statement refused): the connection stays usable.
func serverError(err error) bool {
	var se interface{ Field(byte) string } // pgdriver.Error
	return errors.As(err, &se)
}

// discardConn closes c's connection instead of returning it to the pool
// (its session settings are the writers').
func discardConn(c bun.Conn) {
	c.Raw(func(any) error { return driver.ErrBadConn }) //nolint:errcheck // the point is the error
	c.Close()
}
