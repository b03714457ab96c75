// Package bunstore is the settleflow Store on bun: one set of models and
// queries for SQLite and Postgres, with a dialect switch only where the SQL
// really differs (row locks on Postgres, a single in-process writer on
// SQLite). Most programs open it through storage/sqlite or storage/postgres.
package bunstore

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/storage"
)

//go:embed migrations
var migrationFiles embed.FS

// Store implements settleflow.Store on a [storage.DB], the database's one
// handle, through which it does all its writes.
type Store struct {
	points *pointReader // SQLite only
	recent *recentCache // only when this Store is its database's only writer

	sdb      *storage.DB
	db       *bun.DB // sdb.Bun(), for reads
	postgres bool
	// ownsDB: Close closes sdb (New and NewWithOptions take ownership).
	ownsDB bool
	// subs are the subscribers to task notices (tasks.go).
	subs taskSubs
}

var _ settleflow.Store = (*Store)(nil)

// New returns a Store on db, which must be SQLite (opened with
// storage/sqlite.OpenDB) or Postgres, and takes ownership of it: the Store's
// Close closes db. Call Migrate before use.
func New(db *storage.DB) (*Store, error) { return NewWithOptions(db, Options{}) }

// Options configure a Store beyond New's defaults.
type Options struct {
	// SoleWriter declares that this Store is the only writer of workflows
	// in its SQLite database, in any process, for as long as it is open;
	// the Store then answers GetWorkflow for the workflows it wrote last
	// (up to RecentWorkflows of them) from memory. Declaring it falsely
	// makes reads stale: storage/sqlite.Open sets it only for an Exclusive
	// open, which holds a lock that keeps every other Store off the file.
	// Ignored on Postgres.
	SoleWriter bool
	// RecentWorkflows bounds that cache (default 10,000).
	RecentWorkflows int
	// Shared: the Store does not close db; its owner does, after the Store
	// and every other user of db are closed.
	Shared bool
}

// NewWithOptions is New with options.
func NewWithOptions(db *storage.DB, opts Options) (*Store, error) {
	s := &Store{sdb: db, db: db.Bun(), postgres: db.Postgres(), ownsDB: !opts.Shared}
	if s.postgres {
		return s, nil
	}
	points, err := newPointReader(context.Background(), s.db.DB, pointReaders)
	if err != nil {
		return nil, err
	}
	s.points = points
	if opts.SoleWriter {
		if opts.RecentWorkflows <= 0 {
			opts.RecentWorkflows = 10_000
		}
		s.recent = newRecentCache(opts.RecentWorkflows)
	}
	return s, nil
}

// pointReaders is how many SQLite connections serve GetWorkflow.
const pointReaders = 2

// DB returns the database handle the Store writes through, which every
// other package on the same database (apikey, webhook) is to share.
func (s *Store) DB() *storage.DB { return s.sdb }

// Close closes the Store and, unless it was opened Shared, its database.
func (s *Store) Close() error {
	s.closeTasks()
	if s.points != nil {
		s.points.close()
	}
	if !s.ownsDB {
		return nil
	}
	return s.sdb.Close()
}

// stmt returns the prepared statement for query, written with ? placeholders.
func (s *Store) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	return s.sdb.Stmt(ctx, query)
}

// sqlTx runs fn in a write transaction through the database's writer
// (storage.DB.WriteWith: one group commit shared with the other writes of
// the process, on SQLite fn in its own savepoint). Every fn of the Store
// is rerunnable (storage.WriteOptions): it resets what it reports as it
// starts and does nothing outside its transaction, so on Postgres its
// writes share transactions without savepoints.
func (s *Store) sqlTx(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	return s.writeTx(ctx, fn, nil)
}

// writeTx is sqlTx that also runs committed, if not nil, once fn's work has
// committed, on the writer in commit order (see storage.DB.WriteThen): what
// it does to the recent cache cannot be overtaken by a later write. If fn
// succeeded but the commit failed, an I/O error may leave it unknown whether
// the writes took effect, so the recent cache is emptied: it must not keep
// a version they might have replaced.
func (s *Store) writeTx(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error, committed func()) error {
	return s.write(ctx, fn, storage.WriteOptions{Committed: committed})
}

// write is writeTx with options; the write is always rerunnable. On
// Postgres a transaction chosen as a deadlock's victim (40P01) or refused
// for serialization (40001) did nothing: it runs again, at most three times.
func (s *Store) write(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error, opts storage.WriteOptions) error {
	fnDone := false
	opts.Rerunnable = true
	var err error
	for attempt := 0; ; attempt++ {
		err = s.sdb.WriteWith(ctx, func(ctx context.Context, tx bun.Tx) error {
			fnDone = false
			if err := fn(ctx, tx.Tx); err != nil {
				return err
			}
			fnDone = true
			return nil
		}, opts)
		if err == nil || !s.postgres || attempt == 3 || !retryableSQLState(err) || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Duration(attempt+1) * 5 * time.Millisecond)
	}
	if err != nil && fnDone && s.recent != nil {
		s.recent.clear()
	}
	return err
}

// retryableSQLState reports whether err is a Postgres deadlock (40P01) or
// serialization failure (40001): the transaction was rolled back whole.
func retryableSQLState(err error) bool {
	var se interface{ Field(byte) string } // pgdriver.Error
	if !errors.As(err, &se) {
		return false
	}
	code := se.Field('C')
	return code == "40P01" || code == "40001"
}

// exec runs a prepared statement inside tx.
func (s *Store) exec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	return s.sdb.Exec(ctx, tx, query, args...)
}

// Migrate brings the schema up to date. It is safe to call from several
// processes at once.
func (s *Store) Migrate(ctx context.Context) error {
	return s.migrate(ctx, "", settleflow.Statuses, settleflow.Transitions())
}

// migrate applies the migrations up to and including the one named until
// (its timestamp, e.g. "20261121000002"), or all of them if until is empty,
// rendering the status CHECK and the transition trigger from statuses and
// transitions: tests build databases as older releases left them.
func (s *Store) migrate(ctx context.Context, until string, statusList []settleflow.Status, transitions []settleflow.Transition) error {
	dir := "migrations/sqlite"
	if s.postgres {
		dir = "migrations/postgres"
	}
	sub, err := fs.Sub(migrationFiles, dir)
	if err != nil {
		return err
	}
	var statuses []string
	for _, st := range statusList {
		statuses = append(statuses, "'"+string(st)+"'")
	}
	return s.sdb.Migrate(ctx, storage.Migrations{
		Table: "settleflow_migrations",
		Files: sub,
		Until: until,
		TemplateData: map[string]any{
			"StatusList":  strings.Join(statuses, ", "),
			"Transitions": transitions,
		},
	})
}

// workflowRow is a workflow as stored. Times are Unix microseconds (UTC),
// money integer minor units, margins basis points.
type workflowRow struct {
	bun.BaseModel `bun:"table:settleflow_workflows"`

	ID                string  `bun:"id,pk"`
	Livemode          bool    `bun:"livemode"`
	Product           string  `bun:"product"`
	CustomerID        string  `bun:"customer_id"`
	Payload           string  `bun:"payload"`
	QuotedAmount      int64   `bun:"quoted_amount"`
	Currency          string  `bun:"currency"`
	TargetMarginBps   int64   `bun:"target_margin_bps"`
	AchievedMarginBps *int64  `bun:"achieved_margin_bps"`
	ActualCost        *int64  `bun:"actual_cost"`
	Status            string  `bun:"status"`
	Result            *string `bun:"result"`
	Settlement        *string `bun:"settlement"`
	Failure           *string `bun:"failure"`
	Attempts          int     `bun:"attempts"`
	RunAt             int64   `bun:"run_at"`
	LeaseOwner        *string `bun:"lease_owner"`
	CreatedAt         int64   `bun:"created_at"`
	UpdatedAt         int64   `bun:"updated_at"`
	Sequence          int64   `bun:"sequence"`
	// Reserved is what the workflow reserved of its customer's account
	// (AccountRef), 0 if none; Refunded the sum of its Succeeded refunds.
	Reserved   int64   `bun:"reserved"`
	Refunded   int64   `bun:"refunded"`
	AccountRef *string `bun:"account_ref"`
	// Terms is settleflow.Terms as JSON (NULL on rows older than pricing
	// models: fixed); Charged NULL until decided (older rows: the quote);
	// CostItems and Outcome JSON.
	Terms     *string `bun:"terms"`
	Charged   *int64  `bun:"charged"`
	CostItems *string `bun:"cost_items"`
	Outcome   *string `bun:"outcome"`
}

const workflowColumns = "id, livemode, product, customer_id, payload, quoted_amount, currency, target_margin_bps, achieved_margin_bps, actual_cost, status, result, settlement, failure, attempts, run_at, lease_owner, created_at, updated_at, sequence, reserved, refunded, account_ref, terms, charged, cost_items, outcome"

func micros(t time.Time) int64 { return storage.Micros(t) }

func fromMicros(us int64) time.Time { return storage.FromMicros(us) }

func jsonText[T any](v *T) *string {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // Settlement and Failure are plain structs
	}
	s := string(b)
	return &s
}

func rawText(b json.RawMessage) *string {
	if len(b) == 0 {
		return nil
	}
	s := string(b)
	return &s
}

func toRow(w *settleflow.Workflow) *workflowRow {
	r := &workflowRow{
		ID:              w.ID,
		Livemode:        w.Livemode,
		Product:         w.Product,
		CustomerID:      w.CustomerID,
		Payload:         string(w.Payload),
		QuotedAmount:    w.Quoted.Amount,
		Currency:        w.Quoted.Currency,
		TargetMarginBps: int64(w.Margin.Target),
		ActualCost:      w.ActualCost,
		Status:          string(w.Status),
		Result:          rawText(w.Result),
		Settlement:      jsonText(w.Settlement),
		Failure:         jsonText(w.Failure),
		Attempts:        w.Attempts,
		RunAt:           micros(w.CreatedAt),
		CreatedAt:       micros(w.CreatedAt),
		UpdatedAt:       micros(w.UpdatedAt),
		Sequence:        int64(w.Sequence),
		Reserved:        w.Reserved,
		Refunded:        w.Refunded.Amount,
		Terms:           termsText(w),
		Outcome:         jsonText(w.Outcome),
	}
	if w.Charged != nil {
		c := w.Charged.Amount
		r.Charged = &c
	}
	r.CostItems = costItemsText(w.Cost)
	if w.AccountRef != "" {
		ref := w.AccountRef
		r.AccountRef = &ref
	}
	if w.Margin.Achieved != nil {
		a := int64(*w.Margin.Achieved)
		r.AchievedMarginBps = &a
	}
	return r
}

func (r *workflowRow) workflow() (*settleflow.Workflow, error) {
	w := &settleflow.Workflow{
		ID:         r.ID,
		Object:     "workflow",
		Livemode:   r.Livemode,
		Product:    r.Product,
		CustomerID: r.CustomerID,
		Payload:    json.RawMessage(r.Payload),
		Quoted:     settleflow.Money{Amount: r.QuotedAmount, Currency: r.Currency},
		Refunded:   settleflow.Money{Amount: r.Refunded, Currency: r.Currency},
		Reserved:   r.Reserved,
		Margin:     settleflow.Margin{Target: settleflow.BasisPoints(r.TargetMarginBps)},
		Status:     settleflow.Status(r.Status),
		ActualCost: r.ActualCost,
		Attempts:   r.Attempts,
		Sequence:   uint64(r.Sequence),
		CreatedAt:  fromMicros(r.CreatedAt),
		UpdatedAt:  fromMicros(r.UpdatedAt),
	}
	if r.AchievedMarginBps != nil {
		a := settleflow.BasisPoints(*r.AchievedMarginBps)
		w.Margin.Achieved = &a
	}
	if r.AccountRef != nil {
		w.AccountRef = *r.AccountRef
	}
	if r.Result != nil {
		w.Result = json.RawMessage(*r.Result)
	}
	if r.Settlement != nil {
		w.Settlement = new(settleflow.Settlement)
		if err := json.Unmarshal([]byte(*r.Settlement), w.Settlement); err != nil {
			return nil, fmt.Errorf("bunstore: workflow %s: settlement: %w", r.ID, err)
		}
	}
	if r.Failure != nil {
		w.Failure = new(settleflow.Failure)
		if err := json.Unmarshal([]byte(*r.Failure), w.Failure); err != nil {
			return nil, fmt.Errorf("bunstore: workflow %s: failure: %w", r.ID, err)
		}
	}
	var terms settleflow.Terms
	if r.Terms != nil {
		if err := json.Unmarshal([]byte(*r.Terms), &terms); err != nil {
			return nil, fmt.Errorf("bunstore: workflow %s: terms: %w", r.ID, err)
		}
	}
	w.SetTerms(terms)
	if r.Charged != nil {
		w.Charged = &settleflow.Money{Amount: *r.Charged, Currency: r.Currency}
	}
	if r.ActualCost != nil {
		// Rows older than cost items have their actual cost and no items.
		w.Cost = &settleflow.Cost{Amount: *r.ActualCost, Currency: r.Currency, Items: []settleflow.CostItem{}}
		if r.CostItems != nil {
			if err := json.Unmarshal([]byte(*r.CostItems), &w.Cost.Items); err != nil {
				return nil, fmt.Errorf("bunstore: workflow %s: cost items: %w", r.ID, err)
			}
		}
	}
	if r.Outcome != nil {
		w.Outcome = new(settleflow.Outcome)
		if err := json.Unmarshal([]byte(*r.Outcome), w.Outcome); err != nil {
			return nil, fmt.Errorf("bunstore: workflow %s: outcome: %w", r.ID, err)
		}
	}
	return w, nil
}

// termsText is w's Terms as stored: JSON, or NULL for fixed pricing with
// neither criteria nor floor (what NULL reads back as), the common case
// that then costs no encoding.
func termsText(w *settleflow.Workflow) *string {
	t := w.Terms()
	if (t.Pricing == settleflow.Pricing{Model: settleflow.PricingFixed}) && len(t.SuccessCriteria) == 0 && t.MarginFloor == 0 && len(t.Authorization) == 0 {
		return nil
	}
	return jsonText(&t)
}

func rowsToWorkflows(rows []workflowRow) ([]*settleflow.Workflow, error) {
	out := make([]*settleflow.Workflow, len(rows))
	for i := range rows {
		w, err := rows[i].workflow()
		if err != nil {
			return nil, err
		}
		out[i] = w
	}
	return out, nil
}

// InsertWorkflows implements settleflow.Store.
func (s *Store) InsertWorkflows(ctx context.Context, ins []settleflow.Insert) ([]settleflow.InsertResult, error) {
	results := make([]settleflow.InsertResult, len(ins))
	if len(ins) == 0 {
		return results, nil
	}
	if s.postgres && plainInserts(ins) {
		return s.pgInsertStatement(ctx, ins)
	}
	var err error
	for range 3 {
		if err = s.insertWorkflows(ctx, ins, results); !errors.Is(err, errKeyTaken) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	return results, nil
}

// insertWorkflows is one attempt of InsertWorkflows (see errKeyTaken).
func (s *Store) insertWorkflows(ctx context.Context, ins []settleflow.Insert, results []settleflow.InsertResult) error {
	var inserted []*settleflow.Workflow
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		inserted = inserted[:0]
		clear(results)
		insert, err := s.resolveInserts(ctx, tx, ins, results)
		if err != nil {
			return err
		}
		if s.postgres {
			var err error
			inserted, err = s.pgInsertWorkflows(ctx, tx, ins, insert, results)
			return err
		}
		var fresh []*settleflow.Workflow
		for i, in := range ins {
			if insert[i] {
				fresh = append(fresh, in.Workflow)
			}
		}
		var claims []*settleflow.InsertClaim
		for i, in := range ins {
			if insert[i] {
				claims = append(claims, in.Claim)
			}
		}
		keys, claimed, err := s.fairKeys(ctx, tx, fresh, claims)
		if err != nil {
			return err
		}
		var rows []any
		n := 0
		flush := func() error {
			if n == 0 {
				return nil
			}
			_, err := s.exec(ctx, tx, insertWorkflowsSQL(n), rows...)
			rows, n = rows[:0], 0
			return err
		}
		for i, in := range ins {
			if !insert[i] {
				continue
			}
			w := in.Workflow
			w.Sequence = 0
			r := toRow(w)
			var owner *string
			if claimed[len(inserted)] {
				r.Status, r.RunAt, owner = string(settleflow.Running), micros(in.Claim.LeaseUntil), &in.Claim.Owner
				results[i].Claimed = true
			}
			rows = append(rows, r.ID, r.Livemode, r.Product, r.CustomerID, r.Payload,
				r.QuotedAmount, r.Currency, r.TargetMarginBps, r.Status, r.RunAt, r.CreatedAt, r.UpdatedAt, r.Reserved, r.AccountRef, r.Terms,
				keys[len(inserted)], owner)
			inserted = append(inserted, w)
			n++
			if in.IdempotencyKey != "" {
				// The key row points at the workflow: write the workflow first.
				if err := flush(); err != nil {
					return err
				}
				b, err := json.Marshal(w)
				if err != nil {
					return err
				}
				if err := s.recordKey(ctx, tx, w, in, b); err != nil {
					return err
				}
				continue
			}
			if n == maxInsertRows {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		return flush()
	}, storage.WriteOptions{
		Committed: func() {
			if s.recent != nil {
				s.recent.put(asInserted(ins, results, inserted))
			}
		},
	})
}

// resolveInserts decides which of ins are inserted (insert[i]) and answers
// the others in results: a key with a live record replays it, a reservation
// the balance cannot cover is refused (admit). A key used more than once in
// the batch is answered as if the uses came one after the other: a later
// use replays the first only if the first is inserted; if the first is
// refused nothing is stored under the key, so the next use is decided on its
// own, as a fresh request, in a further round of admission (the same
// request is then refused again: the balance it saw has not grown). So a
// replay never names a workflow that was not stored.
func (s *Store) resolveInserts(ctx context.Context, tx *sql.Tx, ins []settleflow.Insert, results []settleflow.InsertResult) ([]bool, error) {
	insert := make([]bool, len(ins))
	firstUse := map[[2]any]int{}
	var later []int // uses of a key after its first in this batch
	for i, in := range ins {
		w := in.Workflow
		if in.IdempotencyKey != "" {
			k := [2]any{w.Livemode, in.IdempotencyKey}
			if _, dup := firstUse[k]; dup {
				later = append(later, i)
				continue
			}
			existing, err := s.idempotencyRecord(ctx, tx, w, in)
			if err != nil {
				return nil, err
			}
			if existing != nil {
				results[i] = *existing
				continue
			}
			firstUse[k] = i
		}
		insert[i] = true
	}
	if err := s.admit(ctx, tx, ins, insert, results); err != nil {
		return nil, err
	}
	for len(later) > 0 {
		round := make([]bool, len(ins))
		taken := map[[2]any]bool{}
		var next []int
		for _, i := range later {
			k := [2]any{ins[i].Workflow.Livemode, ins[i].IdempotencyKey}
			if j := firstUse[k]; insert[j] {
				results[i] = settleflow.InsertResult{Existing: snapshot(ins[j].Workflow), ExistingHash: ins[j].RequestHash}
				continue
			}
			if taken[k] {
				next = append(next, i) // after this round's use of the key
				continue
			}
			// The key's use so far was refused: this one is its first.
			taken[k], firstUse[k], round[i] = true, i, true
		}
		if err := s.admit(ctx, tx, ins, round, results); err != nil {
			return nil, err
		}
		for i, ok := range round {
			insert[i] = insert[i] || ok
		}
		later = next
	}
	return insert, nil
}

// asInserted returns the inserted workflows as stored: those inserted
// claimed are Running.
func asInserted(ins []settleflow.Insert, results []settleflow.InsertResult, inserted []*settleflow.Workflow) []*settleflow.Workflow {
	running := map[*settleflow.Workflow]bool{}
	for i, r := range results {
		if r.Claimed {
			running[ins[i].Workflow] = true
		}
	}
	if len(running) == 0 {
		return inserted
	}
	out := make([]*settleflow.Workflow, len(inserted))
	for i, w := range inserted {
		out[i] = w
		if running[w] {
			out[i] = cloneWorkflow(w)
			out[i].Status = settleflow.Running
		}
	}
	return out
}

// fairKeys gives each of ws, new Pending workflows in the order they are
// inserted, its place in the fair queue (SQLite: the writes are
// serialized, so what is read here is what the insert will follow): one
// past its customer's last Pending workflow, or, when the customer has
// none, one past the head of the line (the least key Pending). So a
// customer with a long queue takes every later turn, not the next N, and
// within one customer keys grow in insert order. One read per batch: the
// head and, per customer of the batch, an indexed max.
//
// claims[i], when not nil, asks for ws[i] to be inserted claimed; claimed[i]
// reports it may be: its customer has no Pending workflow, stored or
// earlier in ws (see settleflow.Store.InsertWorkflows).
func (s *Store) fairKeys(ctx context.Context, tx *sql.Tx, ws []*settleflow.Workflow, claims []*settleflow.InsertClaim) (keys []int64, claimed []bool, err error) {
	keys, claimed = make([]int64, len(ws)), make([]bool, len(ws))
	if len(ws) == 0 {
		return keys, claimed, nil
	}
	type customer struct {
		live bool
		id   string
	}
	last := make(map[customer]int64, len(ws))
	waiting := make(map[customer]bool, len(ws))
	var args []any
	for _, w := range ws {
		c := customer{w.Livemode, w.CustomerID}
		if _, seen := last[c]; !seen {
			last[c] = 0
			args = append(args, c.live, c.id)
		}
	}
	st, err := s.stmt(ctx, fairKeysSQL(len(args)/2))
	if err != nil {
		return nil, nil, err
	}
	rows, err := tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("bunstore: fair queue: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var c customer
		var head int64
		var m sql.NullInt64
		if err := rows.Scan(&c.live, &c.id, &m, &head); err != nil {
			return nil, nil, fmt.Errorf("bunstore: fair queue: %w", err)
		}
		last[c] = max(head, m.Int64)
		waiting[c] = m.Valid
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("bunstore: fair queue: %w", err)
	}
	for i, w := range ws {
		c := customer{w.Livemode, w.CustomerID}
		if claims[i] != nil && !waiting[c] {
			claimed[i] = true
			continue
		}
		waiting[c] = true
		last[c]++
		keys[i] = last[c]
	}
	return keys, claimed, nil
}

// fairKeysSQL reads, for n (livemode, customer) pairs, each customer's
// last Pending key and the head of the line.
func fairKeysSQL(n int) string {
	return `SELECT c.column1, c.column2,
		(SELECT max(w.fair_key) FROM settleflow_workflows w
			WHERE w.status = 'Pending' AND w.livemode = c.column1 AND w.customer_id = c.column2),
		(SELECT coalesce(min(h.fair_key), 0) FROM settleflow_workflows h WHERE h.status = 'Pending')
	FROM (VALUES ` + strings.TrimSuffix(strings.Repeat("(?, ?), ", n), ", ") + `) AS c`
}

// plainInserts reports whether ins are of one environment and carry no
// idempotency key and no reservation: one statement inserts them.
func plainInserts(ins []settleflow.Insert) bool {
	for _, in := range ins {
		if in.IdempotencyKey != "" || in.Reserve || in.Workflow.Livemode != ins[0].Workflow.Livemode {
			return false
		}
	}
	return true
}

// snapshot is the workflow as its first Create answered it.
func snapshot(w *settleflow.Workflow) *settleflow.Workflow {
	b, _ := json.Marshal(w)
	var out settleflow.Workflow
	json.Unmarshal(b, &out) //nolint:errcheck // round trip of our own type
	return &out
}

// maxInsertRows bounds the rows of one multi-row INSERT (17 parameters
// each, far below SQLite's limit of 32,766).
const maxInsertRows = 64

// insertWorkflowsSQL is the INSERT of n workflows in one statement: one
// statement execution, not n, is what a batch costs the driver. Prepared
// once per n.
// A workflow is inserted without a sequence (0): it gets one when it is
// first to be settled (settleflow.Update.Sequence).
func insertWorkflowsSQL(n int) string {
	const row = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)"
	return `INSERT INTO settleflow_workflows (id, livemode, product, customer_id, payload,
		quoted_amount, currency, target_margin_bps, status, run_at, created_at, updated_at, reserved, account_ref, terms, fair_key, lease_owner, sequence)
		VALUES ` + strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
}

const (
	reserveSequenceSQL = `INSERT INTO settleflow_sequences (livemode, last) VALUES (?, ?)
		ON CONFLICT (livemode) DO UPDATE SET last = settleflow_sequences.last + excluded.last
		RETURNING last`
	insertIdempotencySQL = `INSERT INTO settleflow_idempotency_keys (livemode, key, request_hash, workflow_id, response, created_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (livemode, key) DO NOTHING`
	selectIdempotencySQL = `SELECT request_hash, response, created_at FROM settleflow_idempotency_keys WHERE livemode = ? AND key = ?`
	deleteIdempotencySQL = `DELETE FROM settleflow_idempotency_keys WHERE livemode = ? AND key = ?`
)

// errKeyTaken rolls back a write whose idempotency key another
// transaction (another instance, on Postgres) recorded after it was read:
// the write runs again, and then answers with that record.
var errKeyTaken = errors.New("bunstore: idempotency key recorded concurrently")

// recordKey records in's idempotency key for w (response: w as JSON), or
// returns errKeyTaken if another transaction recorded it first (on
// Postgres the insert waits for that transaction to end).
func (s *Store) recordKey(ctx context.Context, tx *sql.Tx, w *settleflow.Workflow, in settleflow.Insert, response []byte) error {
	res, err := s.exec(ctx, tx, insertIdempotencySQL, w.Livemode, in.IdempotencyKey, in.RequestHash,
		w.ID, string(response), micros(w.CreatedAt))
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n != 1 {
		return errKeyTaken
	}
	return nil
}

// idempotencyRecord returns the live record under in's key, or nil after
// clearing an expired one.
func (s *Store) idempotencyRecord(ctx context.Context, tx *sql.Tx, w *settleflow.Workflow, in settleflow.Insert) (*settleflow.InsertResult, error) {
	st, err := s.stmt(ctx, selectIdempotencySQL)
	if err != nil {
		return nil, err
	}
	var hash, response string
	var created int64
	err = tx.StmtContext(ctx, st).QueryRowContext(ctx, w.Livemode, in.IdempotencyKey).Scan(&hash, &response, &created)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, err
	case created <= micros(w.CreatedAt.Add(-settleflow.IdempotencyTTL)):
		// Expired: the key may be used again.
		_, err := s.exec(ctx, tx, deleteIdempotencySQL, w.Livemode, in.IdempotencyKey)
		return nil, err
	}
	var first settleflow.Workflow
	if err := json.Unmarshal([]byte(response), &first); err != nil {
		return nil, fmt.Errorf("bunstore: idempotency record: %w", err)
	}
	return &settleflow.InsertResult{Existing: &first, ExistingHash: hash}, nil
}

// IdempotencyRecord implements settleflow.IdempotencyReader.
func (s *Store) IdempotencyRecord(ctx context.Context, env settleflow.Environment, key string, now time.Time) (*settleflow.InsertResult, error) {
	var hash, response string
	var created int64
	err := s.db.QueryRowContext(ctx, selectIdempotencySQL, env.Livemode(), key).Scan(&hash, &response, &created)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("bunstore: idempotency record: %w", err)
	case created <= micros(now.Add(-settleflow.IdempotencyTTL)):
		return nil, nil // expired: the key may be used again
	}
	var first settleflow.Workflow
	if err := json.Unmarshal([]byte(response), &first); err != nil {
		return nil, fmt.Errorf("bunstore: idempotency record: %w", err)
	}
	return &settleflow.InsertResult{Existing: &first, ExistingHash: hash}, nil
}

// GetWorkflow implements settleflow.Store.
const getWorkflowSQL = `SELECT ` + workflowColumns + ` FROM settleflow_workflows WHERE id = ? AND livemode = ?`

func (s *Store) GetWorkflow(ctx context.Context, env settleflow.Environment, id string) (*settleflow.Workflow, error) {
	if s.recent != nil {
		if w, found := s.recent.get(env, id); found {
			if w == nil {
				return nil, settleflow.ErrNotFound
			}
			return w, nil
		}
	}
	if s.points != nil {
		return s.points.get(ctx, env, id)
	}
	st, err := s.stmt(ctx, getWorkflowSQL)
	if err != nil {
		return nil, err
	}
	var r workflowRow
	// A single-row read by primary key is short; running it without
	// cancellation spares the driver a goroutine watching ctx.
	err = r.scan(st.QueryRowContext(context.WithoutCancel(ctx), id, env.Livemode()))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, settleflow.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return r.workflow()
}

// fields points at r's fields in the order of workflowColumns: the one
// list both row readers (database/sql's Scan and the point reader) use.
func (r *workflowRow) fields() []any {
	return []any{&r.ID, &r.Livemode, &r.Product, &r.CustomerID, &r.Payload, &r.QuotedAmount, &r.Currency,
		&r.TargetMarginBps, &r.AchievedMarginBps, &r.ActualCost, &r.Status, &r.Result, &r.Settlement, &r.Failure,
		&r.Attempts, &r.RunAt, &r.LeaseOwner, &r.CreatedAt, &r.UpdatedAt, &r.Sequence, &r.Reserved, &r.Refunded, &r.AccountRef,
		&r.Terms, &r.Charged, &r.CostItems, &r.Outcome}
}

// scan reads the columns of workflowColumns, in order.
func (r *workflowRow) scan(row interface{ Scan(...any) error }) error {
	return row.Scan(r.fields()...)
}

// ListWorkflows implements settleflow.Store.
func (s *Store) ListWorkflows(ctx context.Context, q settleflow.ListQuery) ([]*settleflow.Workflow, bool, error) {
	if q.Limit < 1 {
		return nil, false, errors.New("bunstore: list limit must be positive")
	}
	var rows []workflowRow
	sel := s.db.NewSelect().Model(&rows).Where("livemode = ?", q.Environment.Livemode())
	if q.Status != "" {
		sel.Where("status = ?", string(q.Status))
	}
	if q.CustomerID != "" {
		sel.Where("customer_id = ?", q.CustomerID)
	}
	if q.Product != "" {
		sel.Where("product = ?", q.Product)
	}
	more, err := keysetPage(ctx, sel, &rows, q.StartingAfter, q.EndingBefore, q.Limit)
	if err != nil {
		return nil, false, err
	}
	ws, err := rowsToWorkflows(rows)
	return ws, more, err
}

// ClaimWorkflows implements settleflow.Store.
func (s *Store) ClaimWorkflows(ctx context.Context, c settleflow.Claim) ([]*settleflow.Workflow, error) {
	if c.Limit < 1 {
		return nil, nil
	}
	leased := "'Running', 'Settling'"
	if c.ExcludeSettling {
		leased = "'Running'"
	}
	now := micros(c.Now)
	if s.postgres {
		// One statement, in the group commit; the rows are decoded once
		// it has committed (a claim is not undone for a row that cannot
		// be decoded: that workflow waits for its lease to end).
		var rs []workflowRow
		err := s.sdb.WriteStatement(ctx, pgClaimWorkflowsSQL(leased), []any{now, c.Limit, now, c.Limit, now, c.Owner, micros(c.LeaseUntil)}, func(rows *sql.Rows) error {
			rs = rs[:0] // a rerun's rows replace the first run's
			for rows.Next() {
				var r workflowRow
				if err := r.scan(rows); err != nil {
					return err
				}
				rs = append(rs, r)
			}
			return rows.Err()
		}, storage.WriteOptions{})
		if err != nil {
			return nil, err
		}
		return rowsToWorkflows(rs)
	}
	// Leases that ended (Running and Settling workflows due again) first,
	// earliest due first; then Pending workflows in the fair queue's order.
	q := `UPDATE settleflow_workflows SET
		status = CASE status WHEN 'Pending' THEN 'Running' ELSE status END,
		updated_at = CASE status WHEN 'Pending' THEN ? ELSE updated_at END,
		lease_owner = ?, run_at = ?
	WHERE id IN (SELECT id FROM (SELECT id FROM settleflow_workflows
			WHERE status IN (` + leased + `) AND run_at <= ? ORDER BY run_at LIMIT ?)
		UNION ALL SELECT id FROM (SELECT id FROM settleflow_workflows
			WHERE status = 'Pending' AND run_at <= ? ORDER BY fair_key, id LIMIT ?)
		LIMIT ?)
	RETURNING ` + workflowColumns
	var out []*settleflow.Workflow
	err := s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		st, err := s.stmt(ctx, q)
		if err != nil {
			return err
		}
		rows, err := tx.StmtContext(ctx, st).QueryContext(ctx, now, c.Owner, micros(c.LeaseUntil), now, c.Limit, now, c.Limit, c.Limit)
		if err != nil {
			return err
		}
		out = out[:0]
		for rows.Next() {
			var r workflowRow
			if err := r.scan(rows); err != nil {
				rows.Close()
				return err
			}
			w, err := r.workflow()
			if err != nil {
				rows.Close()
				return err
			}
			out = append(out, w)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		// Claimed Settling workflows without a sequence are numbered now.
		var ws []unnumbered
		for _, w := range out {
			if w.Status == settleflow.Settling && w.Sequence == 0 && w.ChargeAmount() > 0 {
				ws = append(ws, unnumbered{id: w.ID, livemode: w.Livemode})
			}
		}
		numbers, err := s.number(ctx, tx, ws)
		if err != nil {
			return err
		}
		for _, w := range out {
			if n, ok := numbers[w.ID]; ok {
				if _, err := s.exec(ctx, tx, `UPDATE settleflow_workflows SET sequence = ? WHERE id = ?`, n, w.ID); err != nil {
					return fmt.Errorf("bunstore: sequence: %w", err)
				}
				w.Sequence = uint64(n)
			}
		}
		return nil
	}, func() {
		if s.recent != nil {
			s.recent.put(out)
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// pgClaimWorkflowsSQL claims workflows of the statuses listed (an SQL
// list) in one statement: c picks and locks them, the Settling ones without
// a sequence are numbered (the count reserved from the counter is the count
// numbered, so the numbers stay dense), and the update writes the claim and
// the numbers in one row version. a holds every claimed row once, with its
// number or NULL, so the update joins it to the table by primary key (a
// join of two CTEs, planned from guessed row counts, could be a nested
// loop over both: quadratic in the batch). Leases that ended (the statuses
// of leased, due again) come first, earliest due first, then Pending
// workflows in the fair queue's order, as many as the limit leaves.
// Parameters: now, limit, now, limit, now, owner, lease until.
func pgClaimWorkflowsSQL(leased string) string {
	return `WITH c1 AS (
		SELECT id, livemode, (status = 'Settling' AND sequence = 0 AND coalesce(charged, 1) > 0) AS unnumbered
		FROM settleflow_workflows WHERE status IN (` + leased + `) AND run_at <= ?
		ORDER BY run_at LIMIT ? FOR UPDATE SKIP LOCKED),
	c2 AS (
		SELECT id, livemode, false AS unnumbered FROM settleflow_workflows WHERE status = 'Pending' AND run_at <= ?
		ORDER BY fair_key, id LIMIT (SELECT ? - count(*) FROM c1) FOR UPDATE SKIP LOCKED),
	c AS (SELECT * FROM c1 UNION ALL SELECT * FROM c2),
	n AS (SELECT livemode, count(*) AS c FROM c WHERE unnumbered GROUP BY livemode),
	s AS (
		INSERT INTO settleflow_sequences (livemode, last) SELECT livemode, c FROM n
		ON CONFLICT (livemode) DO UPDATE SET last = settleflow_sequences.last + excluded.last
		RETURNING livemode, last),
	a AS (
		SELECT c.id, CASE WHEN c.unnumbered THEN
			s.last - n.c + row_number() OVER (PARTITION BY c.livemode, c.unnumbered ORDER BY c.id) END AS seq
		FROM c LEFT JOIN n ON c.unnumbered AND n.livemode = c.livemode
			LEFT JOIN s ON c.unnumbered AND s.livemode = c.livemode)
	UPDATE settleflow_workflows w SET
		status = CASE w.status WHEN 'Pending' THEN 'Running' ELSE w.status END,
		updated_at = CASE w.status WHEN 'Pending' THEN ? ELSE w.updated_at END,
		lease_owner = ?, run_at = ?,
		sequence = COALESCE(a.seq, w.sequence)
	FROM a
	WHERE w.id = a.id
	RETURNING ` + qualifiedWorkflowColumns
}

// qualifiedWorkflowColumns is workflowColumns of the table aliased w.
var qualifiedWorkflowColumns = "w." + strings.ReplaceAll(workflowColumns, ", ", ", w.")

// CancelWorkflow implements settleflow.Store. The update is conditional on
// the status being Pending in the same statement that changes it, and
// ClaimWorkflows moves Pending to Running the same way, so of a cancel and
// a claim racing for one workflow exactly one changes it: on SQLite the
// writes are serialized, on Postgres the loser waits for the winner's row
// lock and then finds the status changed.
func (s *Store) CancelWorkflow(ctx context.Context, env settleflow.Environment, id string, at time.Time, ev *settleflow.Event) (*settleflow.Workflow, bool, error) {
	tr, err := settleflow.Pending.To(settleflow.Canceled)
	if err != nil {
		return nil, false, err
	}
	if ev == nil || ev.Data.WorkflowID != id || ev.Livemode != env.Livemode() {
		return nil, false, fmt.Errorf("bunstore: cancel of %s: the event must be about that workflow, in its environment", id)
	}
	evRow, err := toEventRow(ev)
	if err != nil {
		return nil, false, err
	}
	var (
		out      *settleflow.Workflow
		canceled bool
	)
	err = s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		out, canceled = nil, false
		st, err := s.stmt(ctx, cancelWorkflowSQL)
		if err != nil {
			return err
		}
		var r workflowRow
		err = r.scan(tx.StmtContext(ctx, st).QueryRowContext(ctx, string(tr.Next()), micros(at), id, env.Livemode(), string(tr.From())))
		switch {
		case err == nil:
			canceled = true
			if r.Reserved > 0 && r.AccountRef != nil {
				if _, err := s.exec(ctx, tx, `UPDATE settleflow_accounts SET reserved = reserved - ?, updated_at = ?
					WHERE livemode = ? AND ref = ?`, r.Reserved, micros(at), r.Livemode, *r.AccountRef); err != nil {
					return fmt.Errorf("bunstore: ledger: %w", err)
				}
			}
			if _, err := s.exec(ctx, tx, insertEventsSQL(1), evRow.ID, evRow.WorkflowID, evRow.Type, evRow.Livemode,
				evRow.Data, evRow.CreatedAt, evRow.RunAt, evRow.LeaseOwner, evRow.DispatchedAt); err != nil {
				return fmt.Errorf("bunstore: outbox: %w", err)
			}
		case errors.Is(err, sql.ErrNoRows):
			// Not Pending (or not there): report how it stands.
			st, err := s.stmt(ctx, getWorkflowSQL)
			if err != nil {
				return err
			}
			err = r.scan(tx.StmtContext(ctx, st).QueryRowContext(ctx, id, env.Livemode()))
			if errors.Is(err, sql.ErrNoRows) {
				return settleflow.ErrNotFound
			}
			if err != nil {
				return err
			}
		default:
			return fmt.Errorf("bunstore: cancel: %w", err)
		}
		out, err = r.workflow()
		return err
	}, func() {
		if s.recent != nil && canceled {
			s.recent.put([]*settleflow.Workflow{out})
		}
	})
	if err != nil {
		return nil, false, err
	}
	return out, canceled, nil
}

// cancelWorkflowSQL moves one workflow from the expected status to the new
// one; a workflow not in the expected status is left alone and no row is
// returned.
const cancelWorkflowSQL = `UPDATE settleflow_workflows SET status = ?, updated_at = ?, lease_owner = NULL
	WHERE id = ? AND livemode = ? AND status = ?
	RETURNING ` + workflowColumns

type eventRow struct {
	bun.BaseModel `bun:"table:settleflow_events"`

	ID           string  `bun:"id,pk"`
	WorkflowID   string  `bun:"workflow_id"`
	Type         string  `bun:"type"`
	Livemode     bool    `bun:"livemode"`
	Data         string  `bun:"data"`
	CreatedAt    int64   `bun:"created_at"`
	RunAt        int64   `bun:"run_at"`
	LeaseOwner   *string `bun:"lease_owner"`
	DispatchedAt *int64  `bun:"dispatched_at"`
}

// UpdateWorkflows implements settleflow.Store. A batch is one UPDATE … FROM
// (VALUES …) RETURNING statement per chunk, each row guarded by its expected
// status and owner, then one multi-row INSERT of the events of the updates
// that applied: two statement executions for a batch, not two per row.
//
// When the updates' Notifier is a [storage.TxNotifier] on this Store's own
// database (a webhook.Service sharing it), the events are handed to it in
// the same transaction (its deliveries recorded with them) and written
// already dispatched: each event is written once, and the engine skips
// handing it over (Update.EventNotified). If that recording fails, the
// updates are written again alone, their events to the outbox as usual.
func (s *Store) UpdateWorkflows(ctx context.Context, us []settleflow.Update) ([]bool, error) {
	for _, u := range us {
		if !u.Transition.IsZero() && u.Transition.From() != u.Status {
			return nil, fmt.Errorf("bunstore: update of %s: transition from %s but status %s", u.ID, u.Transition.From(), u.Status)
		}
	}
	for i := range us {
		us[i].EventNotified = false
	}
	if n := s.prepareNotice(ctx, us); n != nil {
		applied, err := s.updateWorkflows(ctx, us, n)
		n.Done(err == nil)
		if err == nil {
			for i := range us {
				us[i].EventNotified = applied[i] && us[i].Event != nil
			}
			return applied, nil
		}
		if !errors.Is(err, errNotice) {
			return nil, err
		}
	}
	return s.updateWorkflows(ctx, us, nil)
}

// errNotice marks a write that failed because its notice (the Notifier's
// recording in the transaction) failed.
var errNotice = errors.New("bunstore: notifier's recording failed")

// prepareNotice returns the recording of the events of us by their
// Notifier, to run in the update's transaction, or nil: when no update
// carries an event, when an update's Notifier is not a storage.TxNotifier
// on this Store's database, or when it cannot prepare them (they go through
// the outbox). The engine gives every update of a batch the same Notifier:
// the first one's records them all (two notifiers on one database record
// to the same tables; they are not compared, since a Notifier's type need
// not be comparable).
func (s *Store) prepareNotice(ctx context.Context, us []settleflow.Update) storage.Notice {
	var tn storage.TxNotifier
	var evs []settleflow.Event
	for _, u := range us {
		if u.Event == nil {
			continue
		}
		t, ok := u.Notifier.(storage.TxNotifier)
		if !ok || t.DB() != s.sdb {
			return nil
		}
		if tn == nil {
			tn = t
		}
		evs = append(evs, *u.Event)
	}
	if tn == nil {
		return nil
	}
	n, err := tn.PrepareNotify(ctx, evs)
	if err != nil {
		if n != nil {
			n.Done(false) // a notifier that returned both: end it all the same
		}
		return nil
	}
	return n
}

// recordNotice runs n, if not nil, in tx for the events of the updates that
// applied.
func recordNotice(ctx context.Context, tx *sql.Tx, n storage.Notice, us []settleflow.Update, applied []bool) error {
	if n == nil {
		return nil
	}
	written := make(map[string]bool, len(us))
	for i, u := range us {
		if applied[i] && u.Event != nil {
			written[u.Event.ID] = true
		}
	}
	if err := n.Record(ctx, tx, func(id string) bool { return written[id] }); err != nil {
		return fmt.Errorf("%w: %w", errNotice, err)
	}
	return nil
}

// updateWorkflows is UpdateWorkflows, the events handed to n in the
// transaction if n is not nil (and then written dispatched).
func (s *Store) updateWorkflows(ctx context.Context, us []settleflow.Update, n storage.Notice) ([]bool, error) {
	applied := make([]bool, len(us))
	if s.postgres && distinctUpdates(us) && !asksSequence(us) && !hasAttempts(us) {
		return s.pgUpdateStatement(ctx, us, n)
	}
	err := s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for i := range applied {
			applied[i] = false
		}
		// Updates of one workflow (several owners may be tried) go to
		// different statements, so each sees the result of the previous.
		limit := maxUpdateRows
		if s.postgres {
			limit = len(us) // rows passed as arrays: no bound on parameters
		}
		for start := 0; start < len(us); {
			end, seen := start, map[string]bool{}
			for end < len(us) && end-start < limit && !seen[us[end].ID] {
				seen[us[end].ID] = true
				end++
			}
			var err error
			if s.postgres {
				err = s.pgUpdateChunk(ctx, tx, us[start:end], applied[start:end], n != nil) // with the chunk's events
			} else {
				err = s.updateChunk(ctx, tx, us[start:end], applied[start:end])
			}
			if err != nil {
				return err
			}
			start = end
		}
		if err := s.insertAttempts(ctx, tx, us, applied); err != nil {
			return err
		}
		if s.postgres {
			return recordNotice(ctx, tx, n, us, applied)
		}
		if err := s.settleLedger(ctx, tx, us, applied); err != nil {
			return err
		}
		var args []any
		k := 0
		for i, u := range us {
			if !applied[i] || u.Event == nil {
				continue
			}
			ev, err := toEventRow(u.Event)
			if err != nil {
				return err
			}
			ev.outboxOrDispatched(u, n != nil)
			args = append(args, ev.ID, ev.WorkflowID, ev.Type, ev.Livemode, ev.Data, ev.CreatedAt, ev.RunAt, ev.LeaseOwner, ev.DispatchedAt)
			k++
			if k == maxUpdateRows {
				if _, err := s.exec(ctx, tx, insertEventsSQL(k), args...); err != nil {
					return fmt.Errorf("bunstore: outbox: %w", err)
				}
				args, k = args[:0], 0
			}
		}
		if k > 0 {
			if _, err := s.exec(ctx, tx, insertEventsSQL(k), args...); err != nil {
				return fmt.Errorf("bunstore: outbox: %w", err)
			}
		}
		return recordNotice(ctx, tx, n, us, applied)
	}, func() {
		if s.recent != nil {
			ids := make([]string, len(us))
			for i, u := range us {
				ids[i] = u.ID
			}
			s.recent.drop(ids)
		}
	})
	if err != nil {
		return nil, err
	}
	return applied, nil
}

// outboxOrDispatched sets how u's event is written: already dispatched
// (handed to the Notifier in the update's transaction), leased to u.Owner
// until u.EventLease (the engine hands it over itself), or due in the
// outbox now.
func (r *eventRow) outboxOrDispatched(u settleflow.Update, dispatched bool) {
	switch {
	case dispatched:
		r.DispatchedAt = &r.CreatedAt
	case !u.EventLease.IsZero():
		r.LeaseOwner, r.RunAt = &u.Owner, micros(u.EventLease)
	}
}

// asksSequence reports whether an update of us asks for its workflow's
// sequence (numbered by a read before the update, in its transaction).
func asksSequence(us []settleflow.Update) bool {
	for _, u := range us {
		if u.Sequence != nil {
			return true
		}
	}
	return false
}

// distinctUpdates reports whether us update distinct workflows (one
// statement can apply them all).
func distinctUpdates(us []settleflow.Update) bool {
	seen := make(map[string]bool, len(us))
	for _, u := range us {
		if seen[u.ID] {
			return false
		}
		seen[u.ID] = true
	}
	return true
}

// updateColumns derives what an update writes: the status after it, the
// lease owner (none once released or terminal) and the achieved margin.
func updateColumns(u settleflow.Update) (status settleflow.Status, owner *string, achieved *int64) {
	status = u.Status
	if !u.Transition.IsZero() {
		status = u.Transition.Next()
	}
	if !u.Release && !status.Terminal() {
		owner = &u.Owner
	}
	if u.Achieved != nil {
		a := int64(*u.Achieved)
		achieved = &a
	}
	return status, owner, achieved
}

// updateChunk applies us (distinct workflows) in one statement.
// The workflows that asked for a sequence and have none are numbered first;
// the statement writes each number with the rest of the row.
func (s *Store) updateChunk(ctx context.Context, tx *sql.Tx, us []settleflow.Update, applied []bool) error {
	numbers, err := s.numberUpdated(ctx, tx, us)
	if err != nil {
		return err
	}
	args := make([]any, 0, len(us)*14)
	for _, u := range us {
		status, owner, achieved := updateColumns(u)
		var seq *int64
		if n, ok := numbers[u.ID]; ok {
			seq = &n
		}
		args = append(args, u.ID, string(u.Status), u.Owner,
			string(status), micros(u.RunAt), owner, u.Attempts, micros(u.UpdatedAt),
			rawText(u.Result), u.ActualCost, achieved, jsonText(u.Settlement), jsonText(u.Failure), seq,
			u.Charged, costItemsText(u.Cost), jsonText(u.Outcome))
	}
	st, err := s.stmt(ctx, updateWorkflowsSQL(len(us)))
	if err != nil {
		return err
	}
	st = tx.StmtContext(ctx, st)
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return fmt.Errorf("bunstore: update: %w", err)
	}
	defer rows.Close()
	return markApplied(rows, us, applied)
}

// maxUpdateRows bounds the rows of one UPDATE … FROM (VALUES …) or event
// INSERT.
const maxUpdateRows = 64

// updateWorkflowsSQL updates n workflows (SQLite: the Postgres form is
// pgUpdateWorkflowsSQL); the VALUES columns are, in order: id, expected
// status, owner, then updateSetSQL's values: new status, run_at, new lease
// owner, attempts, updated_at, and the optional result, actual cost,
// achieved margin, settlement, failure, sequence, charged, cost items and
// outcome (NULL keeps the stored value).
func updateWorkflowsSQL(n int) string {
	const row = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
	return `UPDATE settleflow_workflows SET ` + updateSetSQL("settleflow_workflows", func(i int) string {
		return "v.column" + strconv.Itoa(i+4)
	}) + `
	FROM (VALUES ` + strings.TrimSuffix(strings.Repeat(row+", ", n), ", ") + `) AS v
	WHERE settleflow_workflows.id = v.column1 AND settleflow_workflows.status = v.column2
		AND settleflow_workflows.lease_owner = v.column3
	RETURNING settleflow_workflows.id, settleflow_workflows.sequence`
}

// updatedColumns are the columns a batch update writes, in the order of
// its values; the first five are set, the others kept when the value is
// NULL.
var updatedColumns = []string{"status", "run_at", "lease_owner", "attempts", "updated_at",
	"result", "actual_cost", "achieved_margin_bps", "settlement", "failure", "sequence",
	"charged", "cost_items", "outcome"}

// costItemsText is the cost items of c as stored: NULL when there are
// none (a cost without items reads back with an empty list).
func costItemsText(c *settleflow.Cost) *string {
	if c == nil || len(c.Items) == 0 {
		return nil
	}
	return jsonText(&c.Items)
}

// updateSetSQL is the SET list of both forms of the batch update: table
// names the updated table (or its alias), value(i) the new value of
// updatedColumns[i].
func updateSetSQL(table string, value func(i int) string) string {
	set := make([]string, len(updatedColumns))
	for i, c := range updatedColumns {
		if i < 5 {
			set[i] = c + " = " + value(i)
		} else {
			set[i] = c + " = COALESCE(" + value(i) + ", " + table + "." + c + ")"
		}
	}
	return strings.Join(set, ",\n\t\t")
}

// numberUpdated numbers, within tx, the workflows of us (distinct) that
// asked for a sequence (Update.Sequence), have none, and will be updated
// (status and owner as expected). It returns the numbers by id. The rows
// read stay as read until the update: on SQLite the writes are serialized,
// and on Postgres the read locks them (FOR UPDATE, in id order), so the
// count reserved is the count numbered and the numbers stay dense.
func (s *Store) numberUpdated(ctx context.Context, tx *sql.Tx, us []settleflow.Update) (map[string]int64, error) {
	want := map[string]settleflow.Update{}
	var ids []string
	for _, u := range us {
		if u.Sequence != nil {
			want[u.ID] = u
			ids = append(ids, u.ID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	query := `SELECT id, livemode, status, lease_owner FROM settleflow_workflows
		WHERE id IN (` + strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ") + `) AND sequence = 0`
	var args []any
	if s.postgres {
		query = `SELECT id, livemode, status, lease_owner FROM settleflow_workflows
			WHERE id = ANY(?::text[]) AND sequence = 0 ORDER BY id FOR UPDATE`
		var a pgArray
		for _, id := range ids {
			a.text(id)
		}
		args = []any{a.String()}
	} else {
		for _, id := range ids {
			args = append(args, id)
		}
	}
	st, err := s.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	rows, err := tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("bunstore: sequence: %w", err)
	}
	var ws []unnumbered
	for rows.Next() {
		var w unnumbered
		var status string
		var owner *string
		if err := rows.Scan(&w.id, &w.livemode, &status, &owner); err != nil {
			rows.Close()
			return nil, err
		}
		if u := want[w.id]; status == string(u.Status) && owner != nil && *owner == u.Owner {
			ws = append(ws, w)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return s.number(ctx, tx, ws)
}

// unnumbered is a workflow to number.
type unnumbered struct {
	id       string
	livemode bool
}

// number reserves, within tx, one range of sequence numbers per
// environment for ws and gives them out in id (creation) order. The
// counter's row stays locked until the commit, which keeps the numbers
// dense.
func (s *Store) number(ctx context.Context, tx *sql.Tx, ws []unnumbered) (map[string]int64, error) {
	if len(ws) == 0 {
		return nil, nil
	}
	slices.SortFunc(ws, func(a, b unnumbered) int { return strings.Compare(a.id, b.id) })
	out := make(map[string]int64, len(ws))
	for _, live := range []bool{false, true} {
		var n int64
		for _, w := range ws {
			if w.livemode == live {
				n++
			}
		}
		if n == 0 {
			continue
		}
		st, err := s.stmt(ctx, reserveSequenceSQL)
		if err != nil {
			return nil, err
		}
		var last int64
		if err := tx.StmtContext(ctx, st).QueryRowContext(ctx, live, n).Scan(&last); err != nil {
			return nil, fmt.Errorf("bunstore: sequence: %w", err)
		}
		next := last - n + 1
		for _, w := range ws {
			if w.livemode == live {
				out[w.id] = next
				next++
			}
		}
	}
	return out, nil
}

// insertEventsSQL inserts n outbox events in one statement.
func insertEventsSQL(n int) string {
	return `INSERT INTO settleflow_events (id, workflow_id, type, livemode, data, created_at, run_at, lease_owner, dispatched_at)
		VALUES ` + strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?, ?), ", n), ", ")
}

func toEventRow(e *settleflow.Event) (*eventRow, error) {
	data, err := json.Marshal(e.Data)
	if err != nil {
		return nil, fmt.Errorf("bunstore: event %s: %w", e.ID, err)
	}
	return &eventRow{
		ID:         e.ID,
		WorkflowID: e.Data.WorkflowID,
		Type:       string(e.Type),
		Livemode:   e.Livemode,
		Data:       string(data),
		CreatedAt:  micros(e.CreatedAt),
		RunAt:      micros(e.CreatedAt),
	}, nil
}

// event is the outbox row as the Event it was written from: json.Marshal of
// it gives the bytes json.Marshal of the original gave, since the data is
// stored as json.Marshal wrote it and times at the microsecond precision
// the engine keeps.
func (r *eventRow) event() (settleflow.Event, error) {
	ev := settleflow.Event{ID: r.ID, Object: "event", Type: settleflow.EventType(r.Type), Livemode: r.Livemode, CreatedAt: fromMicros(r.CreatedAt)}
	if err := json.Unmarshal([]byte(r.Data), &ev.Data); err != nil {
		return settleflow.Event{}, fmt.Errorf("bunstore: event %s: %w", r.ID, err)
	}
	return ev, nil
}

// eventColumns are the columns an Event is read from, in eventRow's order.
var eventColumns = []string{"id", "type", "livemode", "data", "created_at"}

// ListEvents implements settleflow.Store. It pages by keyset on id, as
// ListWorkflows does.
func (s *Store) ListEvents(ctx context.Context, q settleflow.EventQuery) ([]settleflow.Event, bool, error) {
	if q.Limit < 1 {
		return nil, false, errors.New("bunstore: list limit must be positive")
	}
	var rows []eventRow
	sel := s.db.NewSelect().Model(&rows).Column(eventColumns...).Where("livemode = ?", q.Environment.Livemode())
	if q.Type != "" {
		sel.Where("type = ?", string(q.Type))
	}
	if q.WorkflowID != "" {
		sel.Where("workflow_id = ?", q.WorkflowID)
	}
	if !q.CreatedAfter.IsZero() {
		// Stored times are whole microseconds: truncating the bound keeps
		// "strictly after" exact.
		sel.Where("created_at > ?", micros(q.CreatedAfter))
	}
	more, err := keysetPage(ctx, sel, &rows, q.StartingAfter, q.EndingBefore, q.Limit)
	if err != nil {
		return nil, false, err
	}
	out := make([]settleflow.Event, len(rows))
	for i := range rows {
		ev, err := rows[i].event()
		if err != nil {
			return nil, false, err
		}
		out[i] = ev
	}
	return out, more, nil
}

// GetEvent implements settleflow.Store.
func (s *Store) GetEvent(ctx context.Context, env settleflow.Environment, id string) (*settleflow.Event, error) {
	var r eventRow
	err := s.db.NewSelect().Model(&r).Column(eventColumns...).
		Where("id = ?", id).Where("livemode = ?", env.Livemode()).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, settleflow.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	ev, err := r.event()
	if err != nil {
		return nil, err
	}
	return &ev, nil
}

// ClaimEvents implements settleflow.Store.
func (s *Store) ClaimEvents(ctx context.Context, c settleflow.Claim) ([]settleflow.Event, error) {
	if c.Limit < 1 {
		return nil, nil
	}
	lock := ""
	if s.postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	q := `UPDATE settleflow_events SET lease_owner = ?, run_at = ?
	WHERE id IN (SELECT id FROM settleflow_events
		WHERE dispatched_at IS NULL AND run_at <= ?
		ORDER BY run_at, id LIMIT ?` + lock + `)
	RETURNING id, type, livemode, data, created_at`
	var out []settleflow.Event
	err := s.sqlTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		st, err := s.stmt(ctx, q)
		if err != nil {
			return err
		}
		rows, err := tx.StmtContext(ctx, st).QueryContext(ctx, c.Owner, micros(c.LeaseUntil), micros(c.Now), c.Limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		out = out[:0]
		for rows.Next() {
			var r eventRow
			if err := rows.Scan(&r.ID, &r.Type, &r.Livemode, &r.Data, &r.CreatedAt); err != nil {
				return err
			}
			ev, err := r.event()
			if err != nil {
				return err
			}
			out = append(out, ev)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	// RETURNING does not keep the subquery's order.
	sortEvents(out)
	return out, nil
}

func sortEvents(evs []settleflow.Event) {
	slices.SortFunc(evs, func(a, b settleflow.Event) int { return strings.Compare(a.ID, b.ID) })
}

// MarkEventsDispatched implements settleflow.Store.
func (s *Store) MarkEventsDispatched(ctx context.Context, ids []string, at time.Time) error {
	return s.updateEvents(ctx, dispatchedEventsSQL, pgDispatchedEventsSQL, ids, at)
}

// RetryEvents implements settleflow.Store.
func (s *Store) RetryEvents(ctx context.Context, ids []string, at time.Time) error {
	return s.updateEvents(ctx, retryEventsSQL, pgRetryEventsSQL, ids, at)
}

// dispatchedEventsSQL ends the lease on events and marks them dispatched;
// retryEventsSQL ends it and makes the undispatched ones due at a time.
// They are the SQLite forms of pgDispatchedEventsSQL and pgRetryEventsSQL:
// the ids come as one JSON array, so that one prepared statement serves
// every number of events.
const (
	dispatchedEventsSQL = `UPDATE settleflow_events SET lease_owner = NULL, dispatched_at = ?
		WHERE id IN (SELECT value FROM json_each(?))`
	retryEventsSQL = `UPDATE settleflow_events SET lease_owner = NULL, run_at = ?
		WHERE id IN (SELECT value FROM json_each(?)) AND dispatched_at IS NULL`
)

// updateEvents runs query (SQLite) or pgQuery (Postgres), one of the pairs
// above, on the events ids at a time, in one statement.
func (s *Store) updateEvents(ctx context.Context, query, pgQuery string, ids []string, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	if s.postgres {
		return s.pgUpdateEvents(ctx, pgQuery, ids, micros(at))
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	return s.sdb.WriteStatement(ctx, query, []any{micros(at), string(list)}, nil, storage.WriteOptions{})
}

// ReleaseLeases implements settleflow.Store.
func (s *Store) ReleaseLeases(ctx context.Context, owner string, now time.Time) error {
	return s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := s.exec(ctx, tx, `UPDATE settleflow_workflows SET lease_owner = NULL, run_at = ?
			WHERE lease_owner = ? AND status IN ('Pending', 'Running', 'Settling')`, micros(now), owner); err != nil {
			return err
		}
		if _, err := s.exec(ctx, tx, `UPDATE settleflow_refunds SET lease_owner = NULL, run_at = ?
			WHERE lease_owner = ? AND status = 'Pending'`, micros(now), owner); err != nil {
			return err
		}
		_, err := s.exec(ctx, tx, `UPDATE settleflow_events SET lease_owner = NULL, run_at = ?
			WHERE lease_owner = ? AND dispatched_at IS NULL`, micros(now), owner)
		return err
	}, func() {
		if s.recent != nil {
			s.recent.clear() // which workflows changed is not known here
		}
	})
}

// ReleaseSettling implements settleflow.Store.
func (s *Store) ReleaseSettling(ctx context.Context, now time.Time) error {
	return s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := s.exec(ctx, tx, `UPDATE settleflow_workflows SET lease_owner = NULL, run_at = ?
			WHERE status = 'Settling' AND lease_owner IS NOT NULL`, micros(now))
		return err
	}, func() {
		if s.recent != nil {
			s.recent.clear()
		}
	})
}

// keysetPage runs sel, a query of rows keyed by an id that sorts by time, for
// one page newest first: after startingAfter (older) or before endingBefore
// (newer), one row more than limit to learn whether more lie beyond, and a
// page read backwards put back newest first. Every list pages this way.
func keysetPage[T any](ctx context.Context, sel *bun.SelectQuery, rows *[]T, startingAfter, endingBefore string, limit int) (more bool, err error) {
	backwards := endingBefore != ""
	switch {
	case backwards:
		sel.Where("id > ?", endingBefore).OrderExpr("id ASC")
	case startingAfter != "":
		sel.Where("id < ?", startingAfter).OrderExpr("id DESC")
	default:
		sel.OrderExpr("id DESC")
	}
	if err := sel.Limit(int64(limit + 1)).Scan(ctx); err != nil {
		return false, err
	}
	if more = len(*rows) > limit; more {
		*rows = (*rows)[:limit]
	}
	if backwards {
		slices.Reverse(*rows)
	}
	return more, nil
}

// Prune implements settleflow.Store: each kind is deleted oldest first,
// through its retention index, at most p.Limit rows per call.
func (s *Store) Prune(ctx context.Context, p settleflow.Prune) (settleflow.PruneResult, error) {
	var res settleflow.PruneResult
	if p.Limit <= 0 {
		return res, fmt.Errorf("bunstore: prune: limit %d", p.Limit)
	}
	err := s.sqlTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res = settleflow.PruneResult{}
		if !p.EventsDispatchedBefore.IsZero() {
			r, err := s.exec(ctx, tx, `DELETE FROM settleflow_events WHERE id IN (
				SELECT id FROM settleflow_events WHERE dispatched_at IS NOT NULL AND dispatched_at < ?
				ORDER BY dispatched_at LIMIT ?)`, micros(p.EventsDispatchedBefore), p.Limit)
			if err != nil {
				return fmt.Errorf("bunstore: prune events: %w", err)
			}
			n, _ := r.RowsAffected()
			res.Events = int(n)
		}
		if !p.IdempotencyCreatedBefore.IsZero() {
			r, err := s.exec(ctx, tx, `DELETE FROM settleflow_idempotency_keys WHERE (livemode, key) IN (
				SELECT livemode, key FROM settleflow_idempotency_keys WHERE created_at < ?
				ORDER BY created_at LIMIT ?)`, micros(p.IdempotencyCreatedBefore), p.Limit)
			if err != nil {
				return fmt.Errorf("bunstore: prune idempotency keys: %w", err)
			}
			n, _ := r.RowsAffected()
			res.IdempotencyKeys = int(n)
			r, err = s.exec(ctx, tx, `DELETE FROM settleflow_refund_keys WHERE (livemode, key) IN (
				SELECT livemode, key FROM settleflow_refund_keys WHERE created_at < ?
				ORDER BY created_at LIMIT ?)`, micros(p.IdempotencyCreatedBefore), p.Limit)
			if err != nil {
				return fmt.Errorf("bunstore: prune refund idempotency keys: %w", err)
			}
			n, _ = r.RowsAffected()
			res.IdempotencyKeys += int(n)
		}
		return nil
	})
	return res, err
}

// Backlog implements settleflow.Store: two aggregate queries over the rows
// that the due indexes cover (unfinished workflows, undispatched events).
func (s *Store) Backlog(ctx context.Context, now time.Time) (settleflow.StoreBacklog, error) {
	at := micros(now)
	var rows []struct {
		Stage       string        `bun:"stage"`
		Depth       int64         `bun:"depth"`
		Due         sql.NullInt64 `bun:"due"`
		EarliestDue sql.NullInt64 `bun:"earliest_due"`
	}
	err := s.db.NewRaw(`SELECT CASE WHEN status = 'Settling' THEN ? ELSE ? END AS stage,
			COUNT(*) AS depth,
			SUM(CASE WHEN run_at <= ? THEN 1 ELSE 0 END) AS due,
			MIN(CASE WHEN run_at <= ? THEN run_at END) AS earliest_due
		FROM settleflow_workflows WHERE status IN ('Pending', 'Running', 'Settling')
		GROUP BY 1
		UNION ALL
		SELECT ? AS stage, COUNT(*), SUM(CASE WHEN run_at <= ? THEN 1 ELSE 0 END), MIN(CASE WHEN run_at <= ? THEN run_at END)
		FROM settleflow_events WHERE dispatched_at IS NULL`,
		settleflow.StageSettle, settleflow.StageExecute, at, at,
		settleflow.StageNotify, at, at).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("bunstore: backlog: %w", err)
	}
	out := settleflow.StoreBacklog{}
	for _, r := range rows {
		c := settleflow.BacklogCounts{Depth: r.Depth, Due: r.Due.Int64}
		if r.EarliestDue.Valid {
			c.EarliestDue = fromMicros(r.EarliestDue.Int64)
		}
		out[r.Stage] = c
	}
	return out, nil
}
