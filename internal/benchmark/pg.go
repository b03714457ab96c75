package benchmark

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/storage/postgres"
)

// PGServer is the Postgres server the Postgres suite runs on: it creates a
// fresh database for each side and drops it after.
type PGServer struct {
	dsn   string
	admin *sql.DB
}

// ConnectPG connects to the server at dsn (any database on it: it is used
// to create and drop the fresh ones and to read statistics).
func ConnectPG(ctx context.Context, dsn string) (*PGServer, error) {
	admin := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(dsn)))
	admin.SetMaxOpenConns(2)
	if err := admin.PingContext(ctx); err != nil {
		admin.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return &PGServer{dsn: dsn, admin: admin}, nil
}

// Close closes the administrative connections.
func (s *PGServer) Close() error { return s.admin.Close() }

// PGDatabase is a fresh database on the server.
type PGDatabase struct {
	Name string // the database's name
	DSN  string // the server's DSN naming this database
	srv  *PGServer
}

// FreshDatabase creates an empty database named after prefix.
func (s *PGServer) FreshDatabase(ctx context.Context, prefix string) (*PGDatabase, error) {
	name := prefix + "_" + strings.ToLower(ids.New("", time.Now()))
	if _, err := s.admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	u, err := url.Parse(s.dsn)
	if err != nil {
		return nil, err
	}
	u.Path = "/" + name
	return &PGDatabase{Name: name, DSN: u.String(), srv: s}, nil
}

// Exec runs query on the database db.
func (s *PGServer) Exec(ctx context.Context, db *PGDatabase, query string) error {
	c := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(db.DSN)))
	defer c.Close()
	_, err := c.ExecContext(ctx, query)
	return err
}

// Drop drops the database, ending the connections still open to it.
func (d *PGDatabase) Drop(ctx context.Context) error {
	_, err := d.srv.admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+d.Name+" WITH (FORCE)")
	return err
}

// Transactions returns how many transactions the database has committed
// and rolled back (pg_stat_database; a backend reports its counts at the
// latest when it exits, so read this after closing the pools).
func (d *PGDatabase) Transactions(ctx context.Context) (int64, error) {
	var commits, rollbacks int64
	err := d.srv.admin.QueryRowContext(ctx, "SELECT xact_commit, xact_rollback FROM pg_stat_database WHERE datname = $1", d.Name).Scan(&commits, &rollbacks)
	return commits + rollbacks, err
}

// RoundTrips counts the round trips of the connections it dials: a read
// that follows a write on a connection is one (a request answered), however
// many statements the write carried and however many reads the answer
// takes. Driver-independent: pgdriver and pgx dial through it alike.
type RoundTrips struct{ n atomic.Int64 }

// Load returns the round trips so far.
func (c *RoundTrips) Load() int64 { return c.n.Load() }

// Dial dials TCP, counting the connection's round trips.
func (c *RoundTrips) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 5 * time.Minute}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: conn, c: c}, nil
}

type countingConn struct {
	net.Conn
	c     *RoundTrips
	wrote atomic.Bool
}

func (cc *countingConn) Write(b []byte) (int, error) {
	cc.wrote.Store(true)
	return cc.Conn.Write(b)
}

func (cc *countingConn) Read(b []byte) (int, error) {
	n, err := cc.Conn.Read(b)
	if n > 0 && cc.wrote.Swap(false) {
		cc.c.n.Add(1)
	}
	return n, err
}

// OpenPGEngine builds an Engine (not started) on the Postgres database at
// dsn, opened as storage/postgres.Open opens it, its connections dialed
// through rt if not nil.
func OpenPGEngine(ctx context.Context, dsn string, rt *RoundTrips, opts EngineOptions) (*Engine, error) {
	var popts postgres.Options
	if rt != nil {
		popts.Dialer = rt.Dial
	}
	store, err := postgres.OpenWithOptions(ctx, dsn, popts)
	if err != nil {
		return nil, err
	}
	return NewEngineOn(store, opts)
}

// ProcessCPU is this process's user + system CPU time so far (getrusage).
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// clockTick is Linux's USER_HZ, the unit of /proc/<pid>/stat's times.
const clockTick = 10 * time.Millisecond

// procCPU is the user + system CPU time of process pid (/proc/<pid>/stat),
// or false if it is gone.
func procCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command may hold spaces: fields are counted after its ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(ut+st) * clockTick, true
}

// ServerCPU measures the CPU the Postgres server spends on some databases:
// the backends connected to them (client backends, autovacuum workers) and
// the server's shared background processes (WAL writer, checkpointer,
// background writer), which serve everyone's writes but during a run mostly
// ours. It samples pg_stat_activity every 50 ms, so a backend that exits
// between samples loses at most its last 50 ms; the server must run on this
// machine (it reads /proc).
type ServerCPU struct {
	srv   *PGServer
	dbs   []string
	mu    sync.Mutex
	start map[int]time.Duration // CPU of each process at its first sight
	last  map[int]time.Duration // at its latest sight
	stop  chan struct{}
	done  chan struct{}
	// Of the samples after the first: how many, and in them how many
	// backends of the databases were running a statement, and how many of
	// those waited for a lock (a row another transaction holds, say).
	samples, active, locked int
}

// Waits returns, over the samples taken, the mean number of backends of
// the databases running a statement and the mean number of them waiting
// for a lock.
func (m *ServerCPU) Waits() (active, locked float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.samples == 0 {
		return 0, 0
	}
	return float64(m.active) / float64(m.samples), float64(m.locked) / float64(m.samples)
}

// StartServerCPU starts measuring the server's CPU for the databases dbs.
func (s *PGServer) StartServerCPU(ctx context.Context, dbs ...string) (*ServerCPU, error) {
	m := &ServerCPU{srv: s, dbs: dbs, start: map[int]time.Duration{}, last: map[int]time.Duration{}, stop: make(chan struct{}), done: make(chan struct{})}
	if err := m.sample(ctx, true); err != nil {
		return nil, err
	}
	go func() {
		defer close(m.done)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-t.C:
				m.sample(ctx, false) //nolint:errcheck // the next sample will do
			}
		}
	}()
	return m, nil
}

func (m *ServerCPU) sample(ctx context.Context, first bool) error {
	rows, err := m.srv.admin.QueryContext(ctx, `SELECT pid, datname IS NOT NULL AND state = 'active', wait_event_type = 'Lock'
		FROM pg_stat_activity
		WHERE datname = ANY(string_to_array($1, ','))
			OR backend_type IN ('walwriter', 'checkpointer', 'background writer')`, strings.Join(m.dbs, ","))
	if err != nil {
		return err
	}
	var pids []int
	var active, locked int
	for rows.Next() {
		var pid int
		var isActive, isLocked sql.NullBool
		if err := rows.Scan(&pid, &isActive, &isLocked); err != nil {
			rows.Close()
			return err
		}
		pids = append(pids, pid)
		if isActive.Bool {
			active++
			if isLocked.Bool {
				locked++
			}
		}
	}
	rows.Close()
	m.mu.Lock()
	defer m.mu.Unlock()
	if !first {
		m.samples++
		m.active += active
		m.locked += locked
	}
	for _, pid := range pids {
		cpu, ok := procCPU(pid)
		if !ok {
			continue
		}
		if _, seen := m.start[pid]; !seen {
			if first {
				m.start[pid] = cpu
			} else {
				m.start[pid] = 0 // born during the run: all its CPU counts
			}
		}
		m.last[pid] = cpu
	}
	return nil
}

// Stop ends the measurement and returns the CPU time spent since the start.
func (m *ServerCPU) Stop(ctx context.Context) time.Duration {
	close(m.stop)
	<-m.done
	m.sample(ctx, false) //nolint:errcheck // the samples so far stand
	m.mu.Lock()
	defer m.mu.Unlock()
	var total time.Duration
	for pid, cpu := range m.last {
		total += cpu - m.start[pid]
	}
	return total
}

// VerifyPG checks the database at dsn after a run of n workflows: n
// workflows; after a create-only run none numbered yet (a workflow is
// numbered when it is first to be settled); after an end-to-end run all
// numbered 1..n (dense, each number once), every one Settled with exactly
// one workflow.completed event, marked dispatched.
func VerifyPG(ctx context.Context, dsn string, n int, endToEnd bool) error {
	db := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(dsn)))
	defer db.Close()
	var count, distinct, lo, hi, settled int
	if err := db.QueryRowContext(ctx, `SELECT count(*), count(DISTINCT sequence), coalesce(min(sequence), 0), coalesce(max(sequence), 0),
		count(*) FILTER (WHERE status = 'Settled') FROM settleflow_workflows`).Scan(&count, &distinct, &lo, &hi, &settled); err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	if !endToEnd {
		if count != n || distinct != 1 || hi != 0 {
			return fmt.Errorf("verify: %d workflows, %d distinct sequences from %d to %d; want %d, none numbered", count, distinct, lo, hi, n)
		}
		return nil
	}
	if count != n || distinct != n || lo != 1 || hi != n {
		return fmt.Errorf("verify: %d workflows, %d distinct sequences from %d to %d; want %d numbered 1..%d", count, distinct, lo, hi, n, n)
	}
	var events, distinctWf, dispatched int
	if err := db.QueryRowContext(ctx, `SELECT count(*), count(DISTINCT workflow_id), count(dispatched_at)
		FROM settleflow_events WHERE type = 'workflow.completed'`).Scan(&events, &distinctWf, &dispatched); err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	if settled != n || events != n || distinctWf != n || dispatched != n {
		return fmt.Errorf("verify: %d settled, %d completed events for %d workflows, %d dispatched; want %d each", settled, events, distinctWf, dispatched, n)
	}
	return nil
}

// RowWork is the row work a database has done so far, from its tables'
// statistics (pg_stat_user_tables; a backend reports its counts at the
// latest when it exits, so read this after closing the pools).
type RowWork struct {
	// Versions counts the row versions written: inserts and updates.
	Versions int64
	// HOT counts the updates that wrote no index entry (heap-only tuples).
	HOT int64
	// IndexEntries counts the index entries written: each insert and each
	// update that is not HOT writes one into every index of its table.
	IndexEntries int64
}

// Plus is w and v added up.
func (w RowWork) Plus(v RowWork) RowWork {
	return RowWork{w.Versions + v.Versions, w.HOT + v.HOT, w.IndexEntries + v.IndexEntries}
}

// Minus is the row work of w done since v.
func (w RowWork) Minus(v RowWork) RowWork {
	return RowWork{w.Versions - v.Versions, w.HOT - v.HOT, w.IndexEntries - v.IndexEntries}
}

// RowWork reads the database's row work so far.
func (d *PGDatabase) RowWork(ctx context.Context) (RowWork, error) {
	db := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(d.DSN)))
	defer db.Close()
	var w RowWork
	err := db.QueryRowContext(ctx, `
		SELECT coalesce(sum(t.n_tup_ins + t.n_tup_upd), 0),
		       coalesce(sum(t.n_tup_hot_upd), 0),
		       coalesce(sum((t.n_tup_ins + t.n_tup_upd - t.n_tup_hot_upd) *
		           (SELECT count(*) FROM pg_index i WHERE i.indrelid = t.relid)), 0)
		FROM pg_stat_user_tables t`).Scan(&w.Versions, &w.HOT, &w.IndexEntries)
	return w, err
}
