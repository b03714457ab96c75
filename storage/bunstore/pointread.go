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
const workflowColumnCount = 20

// fromValues reads the columns of workflowColumns, in order, from driver
// values: int64 for INTEGER, string or []byte for TEXT, nil for NULL.
func (r *workflowRow) fromValues(v []driver.Value) error {
	var err error
	str := func(i int) string {
		switch x := v[i].(type) {
		case string:
			return x
		case []byte:
			return string(x)
		}
		if err == nil {
			err = fmt.Errorf("column %d: %T is not text", i, v[i])
		}
		return ""
	}
	optStr := func(i int) *string {
		if v[i] == nil {
			return nil
		}
		s := str(i)
		return &s
	}
	num := func(i int) int64 {
		x, ok := v[i].(int64)
		if !ok && err == nil {
			err = fmt.Errorf("column %d: %T is not an integer", i, v[i])
		}
		return x
	}
	optNum := func(i int) *int64 {
		if v[i] == nil {
			return nil
		}
		n := num(i)
		return &n
	}
	r.ID, r.Livemode, r.Product, r.CustomerID, r.Payload = str(0), num(1) != 0, str(2), str(3), str(4)
	r.QuotedAmount, r.Currency, r.TargetMarginBps, r.AchievedMarginBps, r.ActualCost = num(5), str(6), num(7), optNum(8), optNum(9)
	r.Status, r.Result, r.Settlement, r.Failure, r.Attempts = str(10), optStr(11), optStr(12), optStr(13), int(num(14))
	r.RunAt, r.LeaseOwner, r.CreatedAt, r.UpdatedAt, r.Sequence = num(15), optStr(16), num(17), num(18), num(19)
	return err
}
