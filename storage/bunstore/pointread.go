package bunstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"

	"github.com/settleflow/settleflow"
)

// pointReader serves GetWorkflow on SQLite below database/sql: a few
// connections set aside, each with the read prepared on the driver, and the
// row read straight into a workflowRow. A read by primary key is the API's
// most frequent call, and database/sql's generic row machinery (locks,
// conversion through reflection) cost as much as SQLite's own work.
type pointReader struct {
	db    *sql.DB
	conns chan *pointConn
}

type pointConn struct {
	conn *sql.Conn
	stmt driver.StmtQueryContext
	dest []driver.Value
}

// newPointReader sets n connections of db aside.
func newPointReader(ctx context.Context, db *sql.DB, n int) (*pointReader, error) {
	p := &pointReader{db: db, conns: make(chan *pointConn, n)}
	for i := 0; i < n; i++ {
		c, err := db.Conn(ctx)
		if err != nil {
			p.close()
			return nil, err
		}
		p.conns <- &pointConn{conn: c, dest: make([]driver.Value, workflowColumnCount)}
	}
	return p, nil
}

// prepare prepares the read on pc's connection, once: not in New, since the
// table exists only after Migrate.
func (pc *pointConn) prepare(ctx context.Context, db *sql.DB) error {
	if pc.stmt != nil {
		return nil
	}
	if pc.conn == nil { // the last one went bad
		c, err := db.Conn(ctx)
		if err != nil {
			return err
		}
		pc.conn = c
	}
	return pc.conn.Raw(func(dc any) error {
		prep, ok := dc.(driver.ConnPrepareContext)
		if !ok {
			return errors.New("driver cannot prepare with a context")
		}
		st, err := prep.PrepareContext(ctx, getWorkflowSQL)
		if err != nil {
			return err
		}
		if pc.stmt, ok = st.(driver.StmtQueryContext); !ok {
			st.Close()
			return errors.New("driver statement cannot query with a context")
		}
		return nil
	})
}

func (p *pointReader) get(ctx context.Context, env settleflow.Environment, id string) (*settleflow.Workflow, error) {
	var pc *pointConn
	select {
	case pc = <-p.conns:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { p.conns <- pc }()
	if err := pc.prepare(ctx, p.db); err != nil {
		return nil, fmt.Errorf("bunstore: get workflow: %w", err)
	}
	var r workflowRow
	found := false
	// Run without cancellation, like the database/sql path: the read is
	// short, and the driver would start a goroutine to watch ctx.
	err := pc.conn.Raw(func(any) error {
		rows, err := pc.stmt.QueryContext(context.WithoutCancel(ctx), []driver.NamedValue{
			{Ordinal: 1, Value: id}, {Ordinal: 2, Value: env.Livemode()}})
		if err != nil {
			return err
		}
		err = rows.Next(pc.dest)
		if err == nil {
			found = true
			err = r.fromValues(pc.dest)
		} else if err == io.EOF {
			err = nil
		}
		if cerr := rows.Close(); err == nil {
			err = cerr
		}
		clear(pc.dest)
		return err
	})
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) {
		// database/sql closed the connection: take a new one next time.
		pc.conn.Close()
		pc.conn, pc.stmt = nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("bunstore: get workflow: %w", err)
	}
	if !found {
		return nil, settleflow.ErrNotFound
	}
	return r.workflow()
}

func (p *pointReader) close() {
	for {
		select {
		case pc := <-p.conns:
			if pc.conn == nil {
				continue
			}
			if pc.stmt != nil {
				pc.conn.Raw(func(any) error { return pc.stmt.(driver.Stmt).Close() })
			}
			pc.conn.Close()
		default:
			return
		}
	}
}

// workflowColumnCount is the number of columns in workflowColumns.
var workflowColumnCount = len((&workflowRow{}).fields())

// fromValues reads the columns of workflowColumns, in order, from driver
// values (int64 for INTEGER, string or []byte for TEXT, nil for NULL) into
// the fields scan would fill.
func (r *workflowRow) fromValues(v []driver.Value) error {
	for i, dst := range r.fields() {
		if err := assignValue(dst, v[i]); err != nil {
			return fmt.Errorf("column %d: %w", i, err)
		}
	}
	return nil
}

// assignValue stores v in dst, one of the pointer types workflowRow has.
func assignValue(dst any, v driver.Value) error {
	text := func() (string, bool) {
		switch x := v.(type) {
		case string:
			return x, true
		case []byte:
			return string(x), true
		}
		return "", false
	}
	switch d := dst.(type) {
	case *string:
		if s, ok := text(); ok {
			*d = s
			return nil
		}
	case **string:
		if v == nil {
			*d = nil
			return nil
		}
		if s, ok := text(); ok {
			*d = &s
			return nil
		}
	case *int64:
		if n, ok := v.(int64); ok {
			*d = n
			return nil
		}
	case **int64:
		if v == nil {
			*d = nil
			return nil
		}
		if n, ok := v.(int64); ok {
			*d = &n
			return nil
		}
	case *int:
		if n, ok := v.(int64); ok {
			*d = int(n)
			return nil
		}
	case *bool:
		if n, ok := v.(int64); ok {
			*d = n != 0
			return nil
		}
	default:
		return fmt.Errorf("no conversion into %T", dst)
	}
	return fmt.Errorf("%T cannot be stored in %T", v, dst)
}
