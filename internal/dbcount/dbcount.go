// Package dbcount counts the durable writes a database/sql driver makes: the
// rows its statements change and the transactions that commit changes. It
// wraps a driver.Connector (see sqlite.OpenOptions.WrapConnector and
// postgres.Options.WrapConnector), so it sees every statement whichever
// layer sends it (bun, prepared statements, raw SQL).
//
// A statement that changed rows is a write; so is a commit. A row changed is one inserted, updated or deleted row, as the database
// reports it (RowsAffected), or, for a write that returns its rows
// (INSERT/UPDATE/DELETE … RETURNING, read with Query), one row returned. A
// commit is the commit of a transaction that changed rows, or a statement
// outside a transaction that changed rows (the database commits it alone).
// Read-only transactions and statements count nothing; the changes of a
// transaction rolled back (or of a savepoint released by a rollback to it,
// which this package cannot see) are not subtracted from statement counts
// until the transaction ends: a rolled-back transaction's rows are dropped.
package dbcount

import (
	"context"
	"database/sql/driver"
	"errors"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// errNoContext is the error of a driver without the context methods every
// driver in use implements (modernc.org/sqlite, pgdriver).
var errNoContext = errors.New("dbcount: the driver lacks the context methods (ConnBeginTx, StmtExecContext, StmtQueryContext)")

// Counter counts the writes of the connections it wraps. It is safe for
// concurrent use.
type Counter struct {
	mu         sync.Mutex
	rows       int64
	statements int64
	commits    int64
	byStmt     map[string]int64
}

// New returns a Counter with nothing counted.
func New() *Counter { return &Counter{byStmt: map[string]int64{}} }

// Counts is what a Counter counted.
type Counts struct {
	// Rows is the number of rows inserted, updated or deleted by committed
	// work.
	Rows int64
	// Statements is the number of statements that changed rows.
	Statements int64
	// Commits is the number of commits that made changes durable.
	Commits int64
	// ByStatement is Rows by the kind and table of the statement
	// ("UPDATE settleflow_workflows"), for finding where writes go.
	ByStatement map[string]int64
}

// Writes is Rows plus Commits: the durable writes, each row written (a page
// change in the log) and each commit (a sync of the log).
func (c Counts) Writes() int64 { return c.Rows + c.Commits }

// Sub returns c minus an earlier snapshot.
func (c Counts) Sub(before Counts) Counts {
	out := Counts{Rows: c.Rows - before.Rows, Statements: c.Statements - before.Statements, Commits: c.Commits - before.Commits,
		ByStatement: map[string]int64{}}
	for k, v := range c.ByStatement {
		if d := v - before.ByStatement[k]; d != 0 {
			out.ByStatement[k] = d
		}
	}
	return out
}

// String lists ByStatement, largest first.
func (c Counts) String() string {
	keys := make([]string, 0, len(c.ByStatement))
	for k := range c.ByStatement {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if c.ByStatement[keys[i]] != c.ByStatement[keys[j]] {
			return c.ByStatement[keys[i]] > c.ByStatement[keys[j]]
		}
		return keys[i] < keys[j]
	})
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteString(": ")
		b.WriteString(strconv.FormatInt(c.ByStatement[k], 10))
		b.WriteString("\n")
	}
	return b.String()
}

// Snapshot returns what has been counted so far.
func (c *Counter) Snapshot() Counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := Counts{Rows: c.rows, Statements: c.statements, Commits: c.commits, ByStatement: make(map[string]int64, len(c.byStmt))}
	for k, v := range c.byStmt {
		out.ByStatement[k] = v
	}
	return out
}

// Wrap returns a connector whose connections count into c.
func (c *Counter) Wrap(base driver.Connector) driver.Connector {
	return &connector{base: base, c: c}
}

// change is the rows one statement changed.
type change struct {
	kind string
	rows int64
}

// commit records a committed unit of work.
func (c *Counter) commit(changes []change) {
	if len(changes) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.commits++
	c.statements += int64(len(changes))
	for _, ch := range changes {
		c.rows += ch.rows
		c.byStmt[ch.kind] += ch.rows
	}
}

type connector struct {
	base driver.Connector
	c    *Counter
}

func (k *connector) Connect(ctx context.Context) (driver.Conn, error) {
	cn, err := k.base.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &conn{Conn: cn, c: k.c}, nil
}

func (k *connector) Driver() driver.Driver { return k.base.Driver() }

// conn counts its statements' changes; database/sql uses a connection from
// one goroutine at a time, so its fields need no lock.
type conn struct {
	driver.Conn
	c *Counter
	// tx holds the changes of the open transaction; inTx tells whether one
	// is open.
	tx   []change
	inTx bool
}

// record adds n rows changed by query: to the open transaction, or as a
// commit of its own.
func (cn *conn) record(query string, n int64) {
	if n <= 0 {
		return
	}
	ch := change{kind(query), n}
	if cn.inTx {
		cn.tx = append(cn.tx, ch)
		return
	}
	cn.c.commit([]change{ch})
}

func (cn *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	b, ok := cn.Conn.(driver.ConnBeginTx)
	if !ok {
		return nil, errNoContext
	}
	t, err := b.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	cn.tx, cn.inTx = nil, true
	return &tx{Tx: t, cn: cn}, nil
}

func (cn *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	e, ok := cn.Conn.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	res, err := e.ExecContext(ctx, query, args)
	if err == nil {
		if n, rerr := res.RowsAffected(); rerr == nil && isWrite(query) {
			cn.record(query, n)
		}
	}
	return res, err
}

func (cn *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := cn.Conn.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	rs, err := q.QueryContext(ctx, query, args)
	if err != nil || !isWrite(query) {
		return rs, err
	}
	return &rows{Rows: rs, cn: cn, query: query}, nil
}

func (cn *conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	var st driver.Stmt
	var err error
	if p, ok := cn.Conn.(driver.ConnPrepareContext); ok {
		st, err = p.PrepareContext(ctx, query)
	} else {
		st, err = cn.Conn.Prepare(query)
	}
	if err != nil {
		return nil, err
	}
	return &stmt{Stmt: st, cn: cn, query: query}, nil
}

func (cn *conn) CheckNamedValue(v *driver.NamedValue) error {
	if c, ok := cn.Conn.(driver.NamedValueChecker); ok {
		return c.CheckNamedValue(v)
	}
	return driver.ErrSkip
}

func (cn *conn) ResetSession(ctx context.Context) error {
	if r, ok := cn.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (cn *conn) IsValid() bool {
	if v, ok := cn.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

type tx struct {
	driver.Tx
	cn *conn
}

func (t *tx) Commit() error {
	changes := t.cn.tx
	t.cn.tx, t.cn.inTx = nil, false
	if err := t.Tx.Commit(); err != nil {
		return err
	}
	t.cn.c.commit(changes)
	return nil
}

func (t *tx) Rollback() error {
	t.cn.tx, t.cn.inTx = nil, false
	return t.Tx.Rollback()
}

type stmt struct {
	driver.Stmt
	cn    *conn
	query string
}

func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	e, ok := s.Stmt.(driver.StmtExecContext)
	if !ok {
		return nil, errNoContext
	}
	res, err := e.ExecContext(ctx, args)
	if err == nil && isWrite(s.query) {
		if n, rerr := res.RowsAffected(); rerr == nil {
			s.cn.record(s.query, n)
		}
	}
	return res, err
}

func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := s.Stmt.(driver.StmtQueryContext)
	if !ok {
		return nil, errNoContext
	}
	rs, err := q.QueryContext(ctx, args)
	if err != nil || !isWrite(s.query) {
		return rs, err
	}
	return &rows{Rows: rs, cn: s.cn, query: s.query}, nil
}

func (s *stmt) CheckNamedValue(v *driver.NamedValue) error {
	if c, ok := s.Stmt.(driver.NamedValueChecker); ok {
		return c.CheckNamedValue(v)
	}
	return s.cn.CheckNamedValue(v)
}

// rows counts the rows a writing statement returns, recorded when they have
// been read (at Close).
type rows struct {
	driver.Rows
	cn    *conn
	query string
	n     int64
	done  bool
}

func (r *rows) Next(dest []driver.Value) error {
	err := r.Rows.Next(dest)
	if err == nil {
		r.n++
	}
	return err
}

func (r *rows) Close() error {
	if !r.done {
		r.done = true
		r.cn.record(r.query, r.n)
	}
	return r.Rows.Close()
}

var (
	// writeRE finds the statement that changes rows: the first INSERT,
	// UPDATE or DELETE keyword (a WITH query's main statement or a CTE).
	writeRE = regexp.MustCompile(`(?is)\b(INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+"?([A-Za-z0-9_.]+)"?`)
	// leadRE is a statement's first keyword.
	leadRE = regexp.MustCompile(`(?is)^\s*(?:/\*.*?\*/\s*)*([A-Za-z]+)`)
)

// isWrite reports whether query may change rows: it starts with INSERT,
// UPDATE, DELETE or REPLACE, or with WITH and writes in its main statement or
// a CTE. A SELECT … FOR UPDATE changes nothing.
func isWrite(query string) bool {
	m := leadRE.FindStringSubmatch(query)
	if m == nil {
		return false
	}
	switch strings.ToUpper(m[1]) {
	case "INSERT", "UPDATE", "DELETE", "REPLACE":
		return true
	case "WITH":
		return kind(query) != "other"
	}
	return false
}

// kind names a writing statement by its verb and table: the first INSERT
// INTO, UPDATE or DELETE FROM that is not a row lock (FOR UPDATE) or a
// conflict clause (DO UPDATE).
func kind(query string) string {
	for _, m := range writeRE.FindAllStringSubmatchIndex(query, -1) {
		before := strings.ToUpper(strings.TrimSpace(query[:m[0]]))
		if strings.HasSuffix(before, "FOR") || strings.HasSuffix(before, "DO") || strings.HasSuffix(before, "NO KEY") {
			continue
		}
		verb := strings.ToUpper(strings.Fields(query[m[2]:m[3]])[0])
		return verb + " " + strings.ToLower(query[m[4]:m[5]])
	}
	return "other"
}
