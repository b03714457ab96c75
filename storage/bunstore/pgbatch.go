package bunstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/storage"
)

// The Postgres forms of the batch writes. SQLite takes a batch as one
// multi-row statement whose text depends on the number of rows (VALUES
// lists). On Postgres a batch is passed as arrays instead, one parameter
// per column, so each write is one statement text whatever its size:
// prepared once per connection, not once per batch size, and its generic
// plan is made once. Every statement that looks rows up by id says so with
// `id = ANY(ids)`, which the planner answers from the primary key whatever
// its statistics say: the plan Postgres caches for a statement prepared on
// a fresh, nearly empty table would otherwise scan the whole table (a hash
// join over a sequential scan) for as long as the connection lives, every
// update costing time in proportion to the table. And the statements that
// used to be two (sequence then insert; update then events) are one each,
// with data-modifying CTEs: one round trip per batch, not two.
//
// The writes join the group commit of storage.DB (each rerunnable: the
// writes of the engine's stages that arrive together share a transaction,
// without savepoints), except the insert of plain creates, which is a
// transaction of its own (see pgInsertWorkflowsSQL).

// pgArray builds the text form of a Postgres array parameter.
type pgArray struct {
	b []byte
}

func (a *pgArray) sep() {
	if len(a.b) == 0 {
		a.b = append(a.b, '{')
	} else {
		a.b = append(a.b, ',')
	}
}

// text appends s, quoted.
func (a *pgArray) text(s string) {
	a.sep()
	a.b = append(a.b, '"')
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' {
			a.b = append(a.b, '\\')
		}
		a.b = append(a.b, s[i])
	}
	a.b = append(a.b, '"')
}

// nullText appends *s, or NULL.
func (a *pgArray) nullText(s *string) {
	if s == nil {
		a.null()
		return
	}
	a.text(*s)
}

func (a *pgArray) int(n int64) {
	a.sep()
	a.b = strconv.AppendInt(a.b, n, 10)
}

func (a *pgArray) nullInt(n *int64) {
	if n == nil {
		a.null()
		return
	}
	a.int(*n)
}

func (a *pgArray) bool(v bool) {
	a.sep()
	if v {
		a.b = append(a.b, 't')
	} else {
		a.b = append(a.b, 'f')
	}
}

func (a *pgArray) null() {
	a.sep()
	a.b = append(a.b, "NULL"...)
}

// String is the array literal ({} when empty).
func (a *pgArray) String() string {
	if len(a.b) == 0 {
		return "{}"
	}
	return string(a.b) + "}"
}

// pgInsertWorkflowsSQL inserts workflows of one environment, in array
// order, in one statement, without sequences (0: a workflow is numbered
// when it is first to be settled); it returns how many rows it inserted
// and the ids of those it inserted claimed, comma-separated. A workflow
// with a lease owner (the last two arrays: owner, or NULL, and lease end)
// is inserted claimed, Running and leased, when its customer has no
// Pending workflow (pgClaims has dropped the claim of any that follows an
// unclaimed one of its customer in the batch).
// Each gets its place in the fair queue as fairKeys gives it on SQLite: one
// past its customer's last Pending workflow (an indexed max), or one past
// the head of the line; the workflows of one customer in the batch follow
// each other in array order. (Concurrent inserts for one customer may read
// the same last key: equal keys are served in id order.)
const pgInsertWorkflowsSQL = `WITH p AS (SELECT ?::boolean AS live),
	v AS (SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[], ?::text[], ?::bigint[],
			?::text[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::text[], ?::text[], ?::text[], ?::bigint[]) WITH ORDINALITY
			AS v(id, product, customer_id, payload, quoted_amount, currency, target_margin_bps,
				status, run_at, created_at, updated_at, reserved, account_ref, terms, lease_owner, lease_until, ord)),
	h AS (SELECT coalesce(min(fair_key), 0) AS k FROM settleflow_workflows WHERE status = 'Pending'),
	k AS (SELECT v.ord, greatest(h.k, coalesce(l.k, 0)) + row_number() OVER (PARTITION BY v.customer_id ORDER BY v.ord) AS fair_key,
			v.lease_owner IS NOT NULL AND l.k IS NULL AS claim
		FROM v CROSS JOIN h CROSS JOIN p LEFT JOIN LATERAL (SELECT max(w.fair_key) AS k FROM settleflow_workflows w
			WHERE w.status = 'Pending' AND w.livemode = p.live AND w.customer_id = v.customer_id) l ON true),
	i AS (
		INSERT INTO settleflow_workflows (id, livemode, product, customer_id, payload,
			quoted_amount, currency, target_margin_bps, status, run_at, created_at, updated_at, reserved, account_ref, terms,
			fair_key, lease_owner, sequence)
		SELECT v.id, p.live, v.product, v.customer_id, v.payload, v.quoted_amount, v.currency,
			v.target_margin_bps, CASE WHEN k.claim THEN 'Running' ELSE v.status END,
			CASE WHEN k.claim THEN v.lease_until ELSE v.run_at END,
			v.created_at, v.updated_at, v.reserved, v.account_ref, v.terms,
			k.fair_key, CASE WHEN k.claim THEN v.lease_owner END, 0
		FROM v JOIN k ON k.ord = v.ord CROSS JOIN p
		ORDER BY v.ord
		RETURNING id, status)
	SELECT count(*), coalesce(string_agg(id, ',') FILTER (WHERE status = 'Running'), '') FROM i`

// pgInsertWorkflows inserts the workflows ins[i] with insert[i] set, one
// statement per environment; then the idempotency
// records of those with a key (each points at its workflow, so after it).
func (s *Store) pgInsertWorkflows(ctx context.Context, tx *sql.Tx, ins []settleflow.Insert, insert []bool, results []settleflow.InsertResult) ([]*settleflow.Workflow, error) {
	var inserted []*settleflow.Workflow
	claims := pgClaims(ins, insert)
	for _, live := range []bool{false, true} {
		var cols [pgInsertColumns]pgArray
		var ws []*settleflow.Workflow
		for i, in := range ins {
			if !insert[i] || in.Workflow.Livemode != live {
				continue
			}
			in.Workflow.Sequence = 0
			appendInsertColumns(&cols, in.Workflow, claims[i])
			ws = append(ws, in.Workflow)
		}
		if len(ws) == 0 {
			continue
		}
		st, err := s.stmt(ctx, pgInsertWorkflowsSQL)
		if err != nil {
			return nil, err
		}
		var count int64
		var claimed string
		if err := tx.StmtContext(ctx, st).QueryRowContext(ctx, insertArgs(live, &cols)...).Scan(&count, &claimed); err != nil {
			return nil, fmt.Errorf("bunstore: insert: %w", err)
		}
		if count != int64(len(ws)) {
			return nil, fmt.Errorf("bunstore: insert: %d of %d workflows inserted", count, len(ws))
		}
		markClaimed(ins, insert, results, claimed)
		inserted = append(inserted, ws...)
	}
	for i, in := range ins {
		if !insert[i] || in.IdempotencyKey == "" {
			continue
		}
		w := in.Workflow
		b, err := json.Marshal(w)
		if err != nil {
			return nil, err
		}
		if err := s.recordKey(ctx, tx, w, in, b); err != nil {
			return nil, err
		}
	}
	// In the order of ins, as the SQLite path reports them.
	order := make(map[*settleflow.Workflow]int, len(inserted))
	for i, in := range ins {
		order[in.Workflow] = i
	}
	slices.SortFunc(inserted, func(a, b *settleflow.Workflow) int { return order[a] - order[b] })
	return inserted, nil
}

// pgUpdateWorkflowsSQL applies a chunk of updates (distinct workflows), each
// guarded by its expected status and owner, and inserts the events of the
// updates that applied, in one statement; it returns the ids updated and
// their sequences. The columns of the first array group are those of
// updateWorkflowsSQL (the last: the sequence to give, numbered beforehand
// by numberUpdated, or NULL); the second group is the events'.
var pgUpdateWorkflowsSQL = `WITH v AS (
		SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[], ?::text[], ?::integer[],
			?::bigint[], ?::text[], ?::bigint[], ?::bigint[], ?::text[], ?::text[], ?::bigint[],
			?::bigint[], ?::text[], ?::text[])
			AS v(id, expected, owner, status, run_at, lease_owner, attempts, updated_at,
				result, actual_cost, achieved_margin_bps, settlement, failure, sequence,
				charged, cost_items, outcome)),
	u AS (
		UPDATE settleflow_workflows w SET ` + updateSetSQL("w", func(i int) string { return "v." + updatedColumns[i] }) + `
		FROM v
		WHERE w.id = ANY(?::text[]) AND w.id = v.id AND w.status = v.expected AND w.lease_owner = v.owner
		RETURNING w.id, w.sequence, w.livemode, w.account_ref, w.reserved, w.status,
			coalesce(w.charged, w.quoted_amount) AS charge, w.updated_at),
	l AS (
		-- The accounts the batch moves, locked in ref order (as admission
		-- and deposits lock them), before any is changed: transactions
		-- taking the same accounts in different orders deadlock.
		SELECT acc.ref FROM settleflow_accounts acc
		WHERE (acc.livemode, acc.ref) IN (SELECT u.livemode, u.account_ref FROM u
			WHERE u.account_ref IS NOT NULL AND u.status IN ('Settled', 'Failed', 'Canceled'))
		ORDER BY acc.livemode, acc.ref FOR UPDATE),
	a AS (
		-- A workflow that ends gives its reservation back to its customer's
		-- account; one that is Settled adds its charge (see ledgerSQL).
		UPDATE settleflow_accounts acc SET reserved = acc.reserved - d.reserved, charged = acc.charged + d.charged,
			updated_at = d.at
		FROM (SELECT u.livemode, u.account_ref, sum(u.reserved) AS reserved,
				sum(CASE WHEN u.status = 'Settled' THEN u.charge ELSE 0 END) AS charged, max(u.updated_at) AS at
			FROM u WHERE u.account_ref IS NOT NULL AND u.status IN ('Settled', 'Failed', 'Canceled')
			GROUP BY u.livemode, u.account_ref) d, (SELECT count(*) AS locked FROM l) lk
		WHERE acc.livemode = d.livemode AND acc.ref = d.account_ref AND lk.locked >= 0),
	e AS (
		INSERT INTO settleflow_events (id, workflow_id, type, livemode, data, created_at, run_at, lease_owner, dispatched_at)
		SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::boolean[], ?::text[], ?::bigint[], ?::bigint[], ?::text[], ?::bigint[])
			AS e(id, workflow_id, type, livemode, data, created_at, run_at, lease_owner, dispatched_at)
		WHERE e.workflow_id IN (SELECT id FROM u))
	SELECT id, sequence FROM u`

// pgUpdateArgs are the arguments of pgUpdateWorkflowsSQL for us, giving
// the workflows numbers their sequences; the events are written dispatched
// if dispatched is set (see eventRow.outboxOrDispatched).
func pgUpdateArgs(us []settleflow.Update, numbers map[string]int64, dispatched bool) ([]any, error) {
	var cols [17]pgArray
	var evs [9]pgArray
	for _, u := range us {
		status, owner, achieved := updateColumns(u)
		cols[0].text(u.ID)
		cols[1].text(string(u.Status))
		cols[2].text(u.Owner)
		cols[3].text(string(status))
		cols[4].int(micros(u.RunAt))
		cols[5].nullText(owner)
		cols[6].int(int64(u.Attempts))
		cols[7].int(micros(u.UpdatedAt))
		cols[8].nullText(rawText(u.Result))
		cols[9].nullInt(u.ActualCost)
		cols[10].nullInt(achieved)
		cols[11].nullText(jsonText(u.Settlement))
		cols[12].nullText(jsonText(u.Failure))
		if n, ok := numbers[u.ID]; ok {
			cols[13].int(n)
		} else {
			cols[13].null()
		}
		cols[14].nullInt(u.Charged)
		cols[15].nullText(costItemsText(u.Cost))
		cols[16].nullText(jsonText(u.Outcome))
		if u.Event == nil {
			continue
		}
		ev, err := toEventRow(u.Event)
		if err != nil {
			return nil, err
		}
		if ev.WorkflowID != u.ID {
			return nil, fmt.Errorf("bunstore: update of %s: its event %s is about %s", u.ID, ev.ID, ev.WorkflowID)
		}
		ev.outboxOrDispatched(u, dispatched)
		evs[0].text(ev.ID)
		evs[1].text(ev.WorkflowID)
		evs[2].text(ev.Type)
		evs[3].bool(ev.Livemode)
		evs[4].text(ev.Data)
		evs[5].int(ev.CreatedAt)
		evs[6].int(ev.RunAt)
		evs[7].nullText(ev.LeaseOwner)
		evs[8].nullInt(ev.DispatchedAt)
	}
	args := make([]any, 0, len(cols)+2+len(evs))
	for i := range cols {
		args = append(args, cols[i].String())
	}
	args = append(args, cols[0].String())
	for i := range evs {
		args = append(args, evs[i].String())
	}
	return args, nil
}

// scanApplied returns a reader of pgUpdateWorkflowsSQL's rows that sets
// applied[i] for each id of us returned, and only those, and the asked
// sequences of those (it may read the rows of a rerun).
func scanApplied(us []settleflow.Update, applied []bool) func(*sql.Rows) error {
	return func(rows *sql.Rows) error {
		clear(applied)
		return markApplied(rows, us, applied)
	}
}

// markApplied sets applied[i] for each id of us that rows return (an id
// column and a sequence column), and *us[i].Sequence where asked.
func markApplied(rows *sql.Rows, us []settleflow.Update, applied []bool) error {
	at := make(map[string]int, len(us))
	for i, u := range us {
		at[u.ID] = i
	}
	for rows.Next() {
		var id string
		var seq int64
		if err := rows.Scan(&id, &seq); err != nil {
			return err
		}
		if i, ok := at[id]; ok {
			applied[i] = true
			if us[i].Sequence != nil {
				*us[i].Sequence = uint64(seq)
			}
		}
	}
	return rows.Err()
}

// appendInsertColumns appends w's inserted columns to the statement's
// arrays, in the order of the insert's unnest.
func appendInsertColumns(cols *[pgInsertColumns]pgArray, w *settleflow.Workflow, claim *settleflow.InsertClaim) {
	r := toRow(w)
	cols[0].text(r.ID)
	cols[1].text(r.Product)
	cols[2].text(r.CustomerID)
	cols[3].text(r.Payload)
	cols[4].int(r.QuotedAmount)
	cols[5].text(r.Currency)
	cols[6].int(r.TargetMarginBps)
	cols[7].text(r.Status)
	cols[8].int(r.RunAt)
	cols[9].int(r.CreatedAt)
	cols[10].int(r.UpdatedAt)
	cols[11].int(r.Reserved)
	cols[12].nullText(r.AccountRef)
	cols[13].nullText(r.Terms)
	if claim != nil {
		cols[14].text(claim.Owner)
		cols[15].int(micros(claim.LeaseUntil))
	} else {
		cols[14].null()
		cols[15].int(0)
	}
}

// pgInsertColumns is the number of arrays pgInsertWorkflowsSQL takes.
const pgInsertColumns = 16

// pgClaims returns the claim each insert asks for (for those inserted,
// insert[i]), less those that follow an unclaimed insert of their
// customer in ins: that one waits in line, and a claim must not go ahead
// of it (pgInsertWorkflowsSQL checks only the Pending rows stored).
func pgClaims(ins []settleflow.Insert, insert []bool) []*settleflow.InsertClaim {
	type customer struct {
		live bool
		id   string
	}
	claims := make([]*settleflow.InsertClaim, len(ins))
	var waiting map[customer]bool
	for i, in := range ins {
		if insert != nil && !insert[i] {
			continue
		}
		c := customer{in.Workflow.Livemode, in.Workflow.CustomerID}
		if in.Claim == nil || waiting[c] {
			if waiting == nil {
				waiting = map[customer]bool{}
			}
			waiting[c] = true
			continue
		}
		claims[i] = in.Claim
	}
	return claims
}

// markClaimed sets Claimed in the results of the inserts whose workflow ids
// are among claimed (comma-separated, as pgInsertWorkflowsSQL returns them).
func markClaimed(ins []settleflow.Insert, insert []bool, results []settleflow.InsertResult, claimed string) {
	if claimed == "" {
		return
	}
	ids := map[string]bool{}
	for _, id := range strings.Split(claimed, ",") {
		ids[id] = true
	}
	for i, in := range ins {
		if (insert == nil || insert[i]) && ids[in.Workflow.ID] {
			results[i].Claimed = true
		}
	}
}

// pgUpdateChunk is updateChunk and the chunk's events in one statement,
// inside tx (written dispatched if dispatched is set).
func (s *Store) pgUpdateChunk(ctx context.Context, tx *sql.Tx, us []settleflow.Update, applied []bool, dispatched bool) error {
	numbers, err := s.numberUpdated(ctx, tx, us)
	if err != nil {
		return err
	}
	args, err := pgUpdateArgs(us, numbers, dispatched)
	if err != nil {
		return err
	}
	return s.pgRunUpdate(ctx, tx, args, us, applied)
}

// pgRunUpdate runs pgUpdateWorkflowsSQL with args inside tx and sets
// applied from the rows it returns.
func (s *Store) pgRunUpdate(ctx context.Context, tx *sql.Tx, args []any, us []settleflow.Update, applied []bool) error {
	st, err := s.stmt(ctx, pgUpdateWorkflowsSQL)
	if err != nil {
		return err
	}
	rows, err := tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	if err != nil {
		return fmt.Errorf("bunstore: update: %w", err)
	}
	defer rows.Close()
	return scanApplied(us, applied)(rows)
}

// pgUpdateStatement applies us (distinct workflows, none asking for a
// sequence) and their events in one statement (storage.DB.WriteStatement,
// in the group commit); with a notice n, in a write that runs n after it.
func (s *Store) pgUpdateStatement(ctx context.Context, us []settleflow.Update, n storage.Notice) ([]bool, error) {
	args, err := pgUpdateArgs(us, nil, n != nil)
	if err != nil {
		return nil, err
	}
	applied := make([]bool, len(us))
	if n == nil {
		if err := s.sdb.WriteStatement(ctx, pgUpdateWorkflowsSQL, args, scanApplied(us, applied), storage.WriteOptions{}); err != nil {
			return nil, fmt.Errorf("bunstore: update: %w", err)
		}
		return applied, nil
	}
	err = s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := s.pgRunUpdate(ctx, tx, args, us, applied); err != nil {
			return err
		}
		return recordNotice(ctx, tx, n, us, applied)
	}, storage.WriteOptions{})
	if err != nil {
		return nil, err
	}
	return applied, nil
}

// insertArgs are the arguments of pgInsertWorkflowsSQL.
func insertArgs(live bool, cols *[pgInsertColumns]pgArray) []any {
	args := []any{live}
	for i := range cols {
		args = append(args, cols[i].String())
	}
	return args
}

// pgInsertStatement inserts workflows of one environment, none with an
// idempotency key, in one statement that is a transaction of its own
// (storage.WriteOptions.Alone: a create commits at once, its caller
// waiting, while the stages' writes grow into groups).
func (s *Store) pgInsertStatement(ctx context.Context, ins []settleflow.Insert) ([]settleflow.InsertResult, error) {
	live := ins[0].Workflow.Livemode
	var cols [pgInsertColumns]pgArray
	claims := pgClaims(ins, nil)
	for i, in := range ins {
		in.Workflow.Sequence = 0
		appendInsertColumns(&cols, in.Workflow, claims[i])
	}
	var count int64
	var claimed string
	err := s.sdb.WriteStatement(ctx, pgInsertWorkflowsSQL, insertArgs(live, &cols), func(rows *sql.Rows) error {
		for rows.Next() {
			if err := rows.Scan(&count, &claimed); err != nil {
				return err
			}
		}
		return rows.Err()
	}, storage.WriteOptions{Alone: true})
	if err == nil && count != int64(len(ins)) {
		err = fmt.Errorf("%d of %d workflows inserted", count, len(ins))
	}
	if err != nil {
		return nil, fmt.Errorf("bunstore: insert: %w", err)
	}
	results := make([]settleflow.InsertResult, len(ins))
	markClaimed(ins, nil, results, claimed)
	return results, nil
}

// pgDispatchedEventsSQL ends the lease on events and marks them
// dispatched; pgRetryEventsSQL ends it and makes the undispatched ones due
// at a time.
const (
	pgDispatchedEventsSQL = `UPDATE settleflow_events SET lease_owner = NULL, dispatched_at = ? WHERE id = ANY(?::text[])`
	pgRetryEventsSQL      = `UPDATE settleflow_events SET lease_owner = NULL, run_at = ?
		WHERE id = ANY(?::text[]) AND dispatched_at IS NULL`
)

// pgUpdateEvents runs query (one of the two above) on the events ids.
func (s *Store) pgUpdateEvents(ctx context.Context, query string, ids []string, at int64) error {
	var a pgArray
	for _, id := range ids {
		a.text(id)
	}
	return s.sdb.WriteStatement(ctx, query, []any{at, a.String()}, nil, storage.WriteOptions{})
}
