package bunstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/driver"
	"github.com/settleflow/settleflow/wire"
)

// Tasks of remote products (driver.TaskStore): one row per attempt in
// settleflow_tasks, the workers seen in settleflow_workers. Claims take
// rows with FOR UPDATE SKIP LOCKED on Postgres (SQLite has its one
// writer); a heartbeat or an end reads its row FOR UPDATE and writes it in
// the same transaction, so its checks (the holder, the budget) and its
// change are one atomic step across every engine. Notices go to engines
// through Postgres NOTIFY on taskChannel (sent at commit) and, in this
// process, straight to the subscribers once the write committed.

// taskChannel is the Postgres channel of task notices.
const taskChannel = "settleflow_tasks"

const taskColumns = `id, livemode, workflow_id, product, customer_id, attempt, payload, currency, budget, state,
	worker_key_id, worker_host, worker_name, worker_sdk, instance, claimed_at, lease_until, spent, items,
	result, result_items, message, retry, created_at, ended_at`

// taskSelect reads taskColumns and whether the task's attempt is recorded.
const taskSelect = `SELECT ` + taskColumns + `,
	EXISTS (SELECT 1 FROM settleflow_attempts a WHERE a.task_id = settleflow_tasks.id) AS recorded
	FROM settleflow_tasks`

// scanTask reads one row of taskColumns (and recorded, when withRecorded).
func scanTask(r rowScanner, withRecorded bool) (*driver.TaskRecord, error) {
	var (
		t                                driver.TaskRecord
		payload, items, resultItems      string
		result                           sql.NullString
		budget                           sql.NullInt64
		state                            string
		claimed, lease, created, endedAt int64
	)
	dest := []any{&t.ID, &t.Livemode, &t.WorkflowID, &t.Product, &t.CustomerID, &t.Attempt, &payload, &t.Currency, &budget, &state,
		&t.WorkerKeyID, &t.WorkerHost, &t.WorkerName, &t.WorkerSDK, &t.Instance, &claimed, &lease, &t.Spent, &items,
		&result, &resultItems, &t.Message, &t.Retry, &created, &endedAt}
	if withRecorded {
		dest = append(dest, &t.Recorded)
	}
	if err := r.Scan(dest...); err != nil {
		return nil, err
	}
	t.Payload, t.State = json.RawMessage(payload), driver.TaskState(state)
	if budget.Valid {
		t.Budget = &budget.Int64
	}
	if claimed != 0 {
		t.ClaimedAt = fromMicros(claimed)
	}
	if lease != 0 {
		t.LeaseUntil = fromMicros(lease)
	}
	t.CreatedAt = fromMicros(created)
	if endedAt != 0 {
		t.EndedAt = fromMicros(endedAt)
	}
	if result.Valid {
		t.Result = json.RawMessage(result.String)
	}
	if err := json.Unmarshal([]byte(items), &t.Items); err != nil {
		return nil, fmt.Errorf("task %s: items: %w", t.ID, err)
	}
	if err := json.Unmarshal([]byte(resultItems), &t.ResultItems); err != nil {
		return nil, fmt.Errorf("task %s: result items: %w", t.ID, err)
	}
	return &t, nil
}

func itemsJSON(items []wire.CostItem) string {
	if len(items) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(items) // CostItems always marshal
	return string(b)
}

// queryTx runs a prepared query inside tx.
func (s *Store) queryTx(ctx context.Context, tx *sql.Tx, query string, args ...any) (*sql.Rows, error) {
	st, err := s.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return tx.StmtContext(ctx, st).QueryContext(ctx, args...)
}

// lockedTask reads the task id of livemode inside tx, locking its row on
// Postgres; nil when there is none.
func (s *Store) lockedTask(ctx context.Context, tx *sql.Tx, id string, livemode bool) (*driver.TaskRecord, error) {
	q := taskSelect + ` WHERE id = ? AND livemode = ?`
	if s.postgres {
		q += ` FOR UPDATE`
	}
	rows, err := s.queryTx(ctx, tx, q, id, livemode)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	if !rows.Next() {
		return nil, rows.Err()
	}
	t, err := scanTask(rows, true)
	if err != nil {
		return nil, err
	}
	return t, rows.Close()
}

// notifyTasks sends ns to the other engines inside tx (Postgres: NOTIFY,
// delivered at commit).
func (s *Store) notifyTasks(ctx context.Context, tx *sql.Tx, ns []driver.TaskNotice) error {
	if !s.postgres {
		return nil
	}
	for _, n := range ns {
		if _, err := s.exec(ctx, tx, `SELECT pg_notify('`+taskChannel+`', ?)`, encodeNotice(n)); err != nil {
			return err
		}
	}
	return nil
}

// encodeNotice writes n as a NOTIFY payload: "q <0|1> <product>" for a
// queued task, "e <0|1> <task id>" for an ended one.
func encodeNotice(n driver.TaskNotice) string {
	live := "0"
	if n.Livemode {
		live = "1"
	}
	if n.TaskID != "" {
		return "e " + live + " " + n.TaskID
	}
	return "q " + live + " " + n.Product
}

func decodeNotice(p string) (driver.TaskNotice, bool) {
	parts := strings.SplitN(p, " ", 3)
	if len(parts) != 3 || (parts[1] != "0" && parts[1] != "1") {
		return driver.TaskNotice{}, false
	}
	n := driver.TaskNotice{Livemode: parts[1] == "1"}
	switch parts[0] {
	case "e":
		n.TaskID = parts[2]
	case "q":
		n.Product = parts[2]
	default:
		return driver.TaskNotice{}, false
	}
	return n, true
}

// OpenTask implements driver.TaskStore.
func (s *Store) OpenTask(ctx context.Context, t driver.TaskRecord) (*driver.TaskRecord, bool, error) {
	var (
		got     *driver.TaskRecord
		created bool
	)
	notice := driver.TaskNotice{Livemode: t.Livemode, Product: t.Product}
	err := s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		got, created = nil, false
		q := taskSelect + ` WHERE workflow_id = ? AND livemode = ? AND state <> 'withdrawn'
			AND (state IN ('queued', 'claimed') OR claimed_at > 0)
			AND NOT EXISTS (SELECT 1 FROM settleflow_attempts a WHERE a.task_id = settleflow_tasks.id)
			ORDER BY created_at DESC, id DESC LIMIT 1`
		if s.postgres {
			q += ` FOR UPDATE`
		}
		rows, err := s.queryTx(ctx, tx, q, t.WorkflowID, t.Livemode)
		if err != nil {
			return err
		}
		if rows.Next() {
			got, err = scanTask(rows, true)
			rows.Close()
			return err
		}
		if err := rows.Close(); err != nil {
			return err
		}
		var budget any
		if t.Budget != nil {
			budget = *t.Budget
		}
		if _, err := s.exec(ctx, tx, `INSERT INTO settleflow_tasks (id, livemode, workflow_id, product, customer_id, attempt,
			payload, currency, budget, state, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?)`,
			t.ID, t.Livemode, t.WorkflowID, t.Product, t.CustomerID, t.Attempt, string(t.Payload), t.Currency, budget, micros(t.CreatedAt)); err != nil {
			return err
		}
		nt := t
		nt.State, nt.Items, nt.ResultItems = driver.TaskQueued, nil, nil
		got, created = &nt, true
		return s.notifyTasks(ctx, tx, []driver.TaskNotice{notice})
	}, func() {
		if created {
			s.localNotice(notice)
		}
	})
	if err != nil {
		return nil, false, fmt.Errorf("bunstore: open task: %w", err)
	}
	return got, created, nil
}

// GetTask implements driver.TaskStore.
func (s *Store) GetTask(ctx context.Context, env wire.Environment, id string) (*driver.TaskRecord, error) {
	t, err := scanTask(s.db.QueryRowContext(ctx, taskSelect+` WHERE id = ? AND livemode = ?`, id, env.Livemode()), true)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, settleflow.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("bunstore: task: %w", err)
	}
	return t, nil
}

// ListTasks implements driver.TaskStore.
func (s *Store) ListTasks(ctx context.Context, env wire.Environment, workflowID string) ([]*driver.TaskRecord, error) {
	rows, err := s.db.QueryContext(ctx, taskSelect+` WHERE workflow_id = ? AND livemode = ? ORDER BY created_at, id`, workflowID, env.Livemode())
	if err != nil {
		return nil, fmt.Errorf("bunstore: tasks: %w", err)
	}
	defer rows.Close()
	var out []*driver.TaskRecord
	for rows.Next() {
		t, err := scanTask(rows, true)
		if err != nil {
			return nil, fmt.Errorf("bunstore: tasks: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// ClaimTasks implements driver.TaskStore.
func (s *Store) ClaimTasks(ctx context.Context, c driver.TaskClaim) ([]*driver.TaskRecord, error) {
	if c.Max < 1 || len(c.Products) == 0 {
		return nil, nil
	}
	lock := ""
	if s.postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	w := c.Worker
	q := `UPDATE settleflow_tasks SET state = 'claimed', worker_key_id = ?, worker_host = ?, worker_name = ?, worker_sdk = ?,
		instance = ?, claimed_at = ?, lease_until = ?
		WHERE id IN (SELECT id FROM settleflow_tasks WHERE state = 'queued' AND livemode = ? AND product IN (` +
		strings.TrimSuffix(strings.Repeat("?, ", len(c.Products)), ", ") + `)
			ORDER BY created_at, id LIMIT ?` + lock + `)
		RETURNING ` + taskColumns
	args := []any{w.KeyID, w.Host, w.Name, w.SDK, w.Instance, micros(c.Now), micros(c.LeaseUntil), c.Livemode}
	for _, p := range c.Products {
		args = append(args, p)
	}
	args = append(args, c.Max)
	var out []*driver.TaskRecord
	err := s.sqlTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		out = out[:0]
		rows, err := s.queryTx(ctx, tx, q, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			t, err := scanTask(rows, false)
			if err != nil {
				rows.Close()
				return err
			}
			out = append(out, t)
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if len(out) == 0 {
			return nil
		}
		w.Claimed, w.FirstSeen, w.LastClaim = int64(len(out)), c.Now, c.Now
		return s.upsertWorker(ctx, tx, w)
	})
	if err != nil {
		return nil, fmt.Errorf("bunstore: claim tasks: %w", err)
	}
	slices.SortFunc(out, func(a, b *driver.TaskRecord) int {
		if n := a.CreatedAt.Compare(b.CreatedAt); n != 0 {
			return n
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// upsertWorker records w's claim in tx: w.Claimed is added to the count.
func (s *Store) upsertWorker(ctx context.Context, tx *sql.Tx, w driver.WorkerRecord) error {
	_, err := s.exec(ctx, tx, `INSERT INTO settleflow_workers (livemode, key_id, host, name, sdk, instance, first_seen, last_claim, claimed)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (livemode, key_id, host, name) DO UPDATE SET sdk = excluded.sdk, instance = excluded.instance,
			last_claim = excluded.last_claim, claimed = settleflow_workers.claimed + excluded.claimed`,
		w.Livemode, w.KeyID, w.Host, w.Name, w.SDK, w.Instance, micros(w.FirstSeen), micros(w.LastClaim), w.Claimed)
	return err
}

// SawWorker implements driver.TaskStore.
func (s *Store) SawWorker(ctx context.Context, w driver.WorkerRecord) error {
	w.Claimed, w.FirstSeen = 0, w.LastClaim
	if err := s.sqlTx(ctx, func(ctx context.Context, tx *sql.Tx) error { return s.upsertWorker(ctx, tx, w) }); err != nil {
		return fmt.Errorf("bunstore: worker: %w", err)
	}
	return nil
}

// ListWorkers implements driver.TaskStore.
func (s *Store) ListWorkers(ctx context.Context, env wire.Environment, limit int) ([]driver.WorkerRecord, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT key_id, host, name, sdk, instance, first_seen, last_claim, claimed
		FROM settleflow_workers WHERE livemode = ? ORDER BY last_claim DESC, key_id, host, name LIMIT ?`, env.Livemode(), limit)
	if err != nil {
		return nil, fmt.Errorf("bunstore: workers: %w", err)
	}
	defer rows.Close()
	type key struct{ keyID, host, name string }
	var out []driver.WorkerRecord
	at := map[key]int{}
	for rows.Next() {
		w := driver.WorkerRecord{Livemode: env.Livemode(), InFlight: map[string]int{}}
		var first, last int64
		if err := rows.Scan(&w.KeyID, &w.Host, &w.Name, &w.SDK, &w.Instance, &first, &last, &w.Claimed); err != nil {
			return nil, fmt.Errorf("bunstore: workers: %w", err)
		}
		w.FirstSeen, w.LastClaim = fromMicros(first), fromMicros(last)
		at[key{w.KeyID, w.Host, w.Name}] = len(out)
		out = append(out, w)
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("bunstore: workers: %w", err)
	}
	if len(out) == 0 {
		return out, nil
	}
	held, err := s.db.QueryContext(ctx, `SELECT worker_key_id, worker_host, worker_name, product, count(*)
		FROM settleflow_tasks WHERE livemode = ? AND state = 'claimed' GROUP BY worker_key_id, worker_host, worker_name, product`, env.Livemode())
	if err != nil {
		return nil, fmt.Errorf("bunstore: workers: %w", err)
	}
	defer held.Close()
	for held.Next() {
		var k key
		var product string
		var n int
		if err := held.Scan(&k.keyID, &k.host, &k.name, &product, &n); err != nil {
			return nil, fmt.Errorf("bunstore: workers: %w", err)
		}
		if i, ok := at[k]; ok {
			out[i].InFlight[product] = n
		}
	}
	return out, held.Err()
}

// HeartbeatTask implements driver.TaskStore.
func (s *Store) HeartbeatTask(ctx context.Context, h driver.TaskHeartbeat) (*driver.TaskRecord, driver.HeartbeatOutcome, error) {
	var (
		t   *driver.TaskRecord
		out driver.HeartbeatOutcome
	)
	err := s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		if t, err = s.lockedTask(ctx, tx, h.ID, h.Livemode); err != nil {
			return err
		}
		if t == nil || t.State != driver.TaskClaimed || (h.WorkerKeyID != "" && t.WorkerKeyID != h.WorkerKeyID) || !h.Now.Before(t.LeaseUntil) {
			out = driver.HeartbeatNotHeld
			return nil
		}
		spent := t.Spent
		for _, it := range h.Items {
			spent += it.Amount
			if spent > h.MaxTotal {
				out = driver.HeartbeatOverLimit
				return nil
			}
		}
		if len(t.Items)+len(h.Items) > h.MaxItems {
			out = driver.HeartbeatOverLimit
			return nil
		}
		t.Items, t.Spent = append(t.Items, h.Items...), spent
		if t.Budget != nil && spent > *t.Budget {
			out = driver.HeartbeatExceeded
			t.State, t.EndedAt, t.Payload = driver.TaskExceeded, h.Now, json.RawMessage("{}")
			if _, err := s.exec(ctx, tx, `UPDATE settleflow_tasks SET spent = ?, items = ?, state = 'exceeded', ended_at = ?, payload = '{}' WHERE id = ?`,
				spent, itemsJSON(t.Items), micros(h.Now), h.ID); err != nil {
				return err
			}
			return s.notifyTasks(ctx, tx, []driver.TaskNotice{{Livemode: h.Livemode, TaskID: h.ID}})
		}
		out = driver.HeartbeatApplied
		t.LeaseUntil = h.LeaseUntil
		_, err = s.exec(ctx, tx, `UPDATE settleflow_tasks SET spent = ?, items = ?, lease_until = ? WHERE id = ?`,
			spent, itemsJSON(t.Items), micros(h.LeaseUntil), h.ID)
		return err
	}, func() {
		if out == driver.HeartbeatExceeded {
			s.localNotice(driver.TaskNotice{Livemode: h.Livemode, TaskID: h.ID})
		}
	})
	if err != nil {
		return nil, 0, fmt.Errorf("bunstore: heartbeat task: %w", err)
	}
	return t, out, nil
}

// EndTask implements driver.TaskStore.
func (s *Store) EndTask(ctx context.Context, e driver.TaskEnd) (*driver.TaskRecord, bool, error) {
	var (
		t       *driver.TaskRecord
		applied bool
	)
	err := s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		applied = false
		var err error
		if t, err = s.lockedTask(ctx, tx, e.ID, e.Livemode); err != nil || t == nil {
			return err
		}
		if !slices.Contains(e.From, t.State) || (e.WorkerKeyID != "" && t.WorkerKeyID != e.WorkerKeyID) ||
			(e.Expired && e.Now.Before(t.LeaseUntil)) || (e.Held && !e.Now.Before(t.LeaseUntil)) {
			return nil
		}
		var result any
		if e.Result != nil {
			result = string(e.Result)
		}
		if _, err := s.exec(ctx, tx, `UPDATE settleflow_tasks SET state = ?, ended_at = ?, payload = '{}', result = ?, result_items = ?,
			message = ?, retry = ? WHERE id = ?`, string(e.State), micros(e.Now), result, itemsJSON(e.ResultItems), e.Message, e.Retry, e.ID); err != nil {
			return err
		}
		applied = true
		t.State, t.EndedAt, t.Payload = e.State, e.Now, json.RawMessage("{}")
		t.Result, t.ResultItems, t.Message, t.Retry = e.Result, e.ResultItems, e.Message, e.Retry
		return s.notifyTasks(ctx, tx, []driver.TaskNotice{{Livemode: e.Livemode, TaskID: e.ID}})
	}, func() {
		if applied {
			s.localNotice(driver.TaskNotice{Livemode: e.Livemode, TaskID: e.ID})
		}
	})
	if err != nil {
		return nil, false, fmt.Errorf("bunstore: end task: %w", err)
	}
	return t, applied, nil
}

// PruneTasks implements driver.TaskStore.
func (s *Store) PruneTasks(ctx context.Context, endedBefore time.Time, limit int) (int, error) {
	n := 0
	err := s.sqlTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := s.exec(ctx, tx, `DELETE FROM settleflow_tasks WHERE id IN (SELECT id FROM settleflow_tasks
			WHERE ended_at > 0 AND ended_at < ? AND (claimed_at = 0
				OR EXISTS (SELECT 1 FROM settleflow_attempts a WHERE a.task_id = settleflow_tasks.id))
			ORDER BY ended_at LIMIT ?)`, micros(endedBefore), limit)
		if err != nil {
			return err
		}
		k, err := res.RowsAffected()
		n = int(k)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("bunstore: prune tasks: %w", err)
	}
	return n, nil
}

// taskSubs are the subscribers to this Store's task notices and, on
// Postgres, the listener that brings other processes' notices.
type taskSubs struct {
	mu       sync.Mutex
	next     int
	fns      map[int]func(driver.TaskNotice)
	listener *pgdriver.Listener
	stop     chan struct{}
	done     chan struct{}
}

// localNotice hands n to this process's subscribers.
func (s *Store) localNotice(n driver.TaskNotice) {
	s.subs.mu.Lock()
	defer s.subs.mu.Unlock()
	for _, fn := range s.subs.fns {
		fn(n)
	}
}

// SubscribeTasks implements driver.TaskStore. On Postgres the first
// subscriber starts a LISTEN on its own connection (bun's pgdriver
// Listener, which reconnects on its own); the last one to cancel stops
// it. Notices missed while it reconnects are made up for by the
// subscribers' fallback polls. A Store whose database handle is not
// pgdriver's (a wrapped connector) has no listener: its subscribers get
// this process's notices only, and poll for the others.
func (s *Store) SubscribeTasks(fn func(driver.TaskNotice)) func() {
	s.subs.mu.Lock()
	defer s.subs.mu.Unlock()
	if s.subs.fns == nil {
		s.subs.fns = map[int]func(driver.TaskNotice){}
	}
	id := s.subs.next
	s.subs.next++
	s.subs.fns[id] = fn
	if s.postgres && s.subs.listener == nil {
		if _, ok := s.db.Driver().(pgdriver.Driver); ok {
			s.startListener()
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			s.subs.mu.Lock()
			delete(s.subs.fns, id)
			var stop func()
			if len(s.subs.fns) == 0 {
				stop = s.takeListener()
			}
			s.subs.mu.Unlock()
			if stop != nil {
				stop()
			}
		})
	}
}

// takeListener detaches the listener (s.subs.mu held) and returns what
// stops it, to be called without the lock; nil if there is none.
func (s *Store) takeListener() func() {
	ln, stop, done := s.subs.listener, s.subs.stop, s.subs.done
	if ln == nil {
		return nil
	}
	s.subs.listener = nil
	return func() {
		close(stop)
		ln.Close()
		<-done
	}
}

// startListener listens for task notices (s.subs.mu held).
func (s *Store) startListener() {
	ln := pgdriver.NewListener(s.db)
	stop, done := make(chan struct{}), make(chan struct{})
	s.subs.listener, s.subs.stop, s.subs.done = ln, stop, done
	go func() {
		defer close(done)
		for {
			err := ln.Listen(context.Background(), taskChannel)
			if err == nil {
				break
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Second):
			}
		}
		resync := func(pgdriver.Notification) { s.localNotice(driver.TaskNotice{Resync: true}) }
		resync(pgdriver.Notification{})
		for n := range ln.Channel(pgdriver.WithChannelSize(1024), pgdriver.WithChannelOverflowHandler(resync)) {
			if n.Channel != taskChannel {
				continue
			}
			if tn, ok := decodeNotice(n.Payload); ok {
				s.localNotice(tn)
			}
		}
	}()
}

// closeTasks stops the listener, if any (Close).
func (s *Store) closeTasks() {
	s.subs.mu.Lock()
	stop := s.takeListener()
	s.subs.mu.Unlock()
	if stop != nil {
		stop()
	}
}
