package bunstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/internal/pgtest"
	"github.com/settleflow/settleflow/storage/bunstore"
	"github.com/settleflow/settleflow/storage/sqlite"
)

// beforeCanceled is the last migration of the releases without Canceled.
const (
	beforeCanceledSQLite   = "20261121000002"
	beforeCanceledPostgres = "20261121000001"
)

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// seed fills a database as the old release left it, through the Store: a
// Pending workflow, a Running one, a Failed one with its event, and one
// created under an idempotency key (the two tables that reference
// settleflow_workflows both have rows). It returns the workflows by role.
func seed(t *testing.T, s *bunstore.Store) map[string]*settleflow.Workflow {
	t.Helper()
	ctx := context.Background()
	// This store writes and reads the columns customer funds, outcome
	// pricing and the fair queue added to the workflows, which the old schema lacks: they are
	// there while it seeds, and dropped again after, so the database is as
	// the old release left it.
	for _, col := range []string{"reserved BIGINT NOT NULL DEFAULT 0", "refunded BIGINT NOT NULL DEFAULT 0", "account_ref TEXT",
		"terms TEXT", "charged BIGINT", "cost_items TEXT", "outcome TEXT", "fair_key BIGINT NOT NULL DEFAULT 0"} {
		if _, err := s.DB().Bun().ExecContext(ctx, `ALTER TABLE settleflow_workflows ADD COLUMN `+col); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.DB().Bun().ExecContext(ctx, `CREATE TABLE settleflow_accounts (livemode BOOLEAN, ref TEXT,
		reserved BIGINT, charged BIGINT, updated_at BIGINT)`); err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, col := range []string{"fair_key", "outcome", "cost_items", "charged", "terms", "account_ref", "refunded", "reserved"} {
			if _, err := s.DB().Bun().ExecContext(ctx, `ALTER TABLE settleflow_workflows DROP COLUMN `+col); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.DB().Bun().ExecContext(ctx, `DROP TABLE settleflow_accounts`); err != nil {
			t.Fatal(err)
		}
	}()
	mk := newSeedWorkflow
	ws := map[string]*settleflow.Workflow{"failed": mk(0, settleflow.Test), "running": mk(1, settleflow.Test),
		"keyed": mk(2, settleflow.Live), "pending": mk(3, settleflow.Test)}
	// The old releases numbered each workflow at insert; this store does
	// not, so each is numbered here as they did, one insert at a time.
	add := func(in settleflow.Insert) {
		t.Helper()
		if _, err := s.InsertWorkflows(ctx, []settleflow.Insert{in}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DB().Bun().ExecContext(ctx, `UPDATE settleflow_workflows SET sequence =
			(SELECT coalesce(max(w2.sequence), 0) + 1 FROM settleflow_workflows w2 WHERE w2.livemode = ?) WHERE id = ?`,
			in.Workflow.Livemode, in.Workflow.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DB().Bun().ExecContext(ctx, `INSERT INTO settleflow_sequences (livemode, last) VALUES (?, 1)
			ON CONFLICT (livemode) DO UPDATE SET last = settleflow_sequences.last + 1`, in.Workflow.Livemode); err != nil {
			t.Fatal(err)
		}
	}
	add(settleflow.Insert{Workflow: ws["failed"]})
	add(settleflow.Insert{Workflow: ws["running"]})
	add(settleflow.Insert{Workflow: ws["keyed"], IdempotencyKey: "k", RequestHash: "h"})
	claimed, err := s.ClaimWorkflows(ctx, settleflow.Claim{Owner: "w", Now: t0.Add(time.Second), LeaseUntil: t0.Add(time.Hour), Limit: 3})
	if err != nil || len(claimed) != 3 {
		t.Fatalf("claim: %d %v", len(claimed), err)
	}
	tr, _ := settleflow.Running.To(settleflow.Failed)
	at := t0.Add(2 * time.Second)
	ev := &settleflow.Event{ID: ids.New(ids.Event, at), Object: "event", Type: settleflow.EventWorkflowFailed, CreatedAt: at,
		Data: settleflow.EventData{WorkflowID: ws["failed"].ID, Status: settleflow.Failed, Quoted: ws["failed"].Quoted}}
	if applied, err := s.UpdateWorkflows(ctx, []settleflow.Update{{ID: ws["failed"].ID, Owner: "w", Status: settleflow.Running,
		Transition: tr, Release: true, RunAt: at, UpdatedAt: at, Event: ev}}); err != nil || !applied[0] {
		t.Fatal(applied, err)
	}
	// The pending one comes after the claim, so it stays Pending.
	add(settleflow.Insert{Workflow: ws["pending"]})
	for _, w := range ws {
		got, err := s.GetWorkflow(ctx, w.Environment(), w.ID)
		if err != nil {
			t.Fatal(err)
		}
		*w = *got
	}
	return ws
}

// checkUpgraded checks that a store upgraded with rows in it kept them all,
// and that the new status and event reads work on it.
func checkUpgraded(t *testing.T, s *bunstore.Store, ws map[string]*settleflow.Workflow) {
	t.Helper()
	ctx := context.Background()
	for role, w := range ws {
		got, err := s.GetWorkflow(ctx, w.Environment(), w.ID)
		if err != nil {
			t.Fatalf("%s after upgrade: %v", role, err)
		}
		g, _ := json.Marshal(got)
		want, _ := json.Marshal(w)
		if string(g) != string(want) || got.Sequence != w.Sequence || got.Sequence == 0 {
			t.Fatalf("%s changed by the upgrade:\n got %s (sequence %d)\nwant %s (sequence %d)", role, g, got.Sequence, want, w.Sequence)
		}
	}
	// The idempotency key still replays.
	res, err := s.InsertWorkflows(ctx, []settleflow.Insert{{Workflow: &settleflow.Workflow{ID: ids.New(ids.Workflow, t0), Livemode: true,
		CreatedAt: t0.Add(time.Minute)}, IdempotencyKey: "k", RequestHash: "h"}})
	if err != nil || res[0].Existing == nil || res[0].Existing.ID != ws["keyed"].ID {
		t.Fatalf("idempotency key after upgrade: %+v %v", res, err)
	}
	// The old event reads back.
	evs, more, err := s.ListEvents(ctx, settleflow.EventQuery{Environment: settleflow.Test, Limit: 10})
	if err != nil || more || len(evs) != 1 || evs[0].Data.WorkflowID != ws["failed"].ID {
		t.Fatalf("events after upgrade: %+v %v %v", evs, more, err)
	}
	// Pending → Canceled is allowed now; Running → Canceled is not.
	at := t0.Add(time.Hour)
	p := ws["pending"]
	ev := &settleflow.Event{ID: ids.New(ids.Event, at), Object: "event", Type: settleflow.EventWorkflowCanceled, CreatedAt: at,
		Data: settleflow.EventData{WorkflowID: p.ID, Status: settleflow.Canceled, Quoted: p.Quoted, Margin: p.Margin}}
	got, canceled, err := s.CancelWorkflow(ctx, settleflow.Test, p.ID, at, ev)
	if err != nil || !canceled || got.Status != settleflow.Canceled {
		t.Fatalf("cancel after upgrade: %+v %v %v", got, canceled, err)
	}
	r := ws["running"]
	if _, err := s.DB().Bun().ExecContext(ctx, `UPDATE settleflow_workflows SET status = 'Canceled' WHERE id = ?`, r.ID); err == nil {
		t.Fatal("the database let a Running workflow become Canceled")
	}
	if _, err := s.DB().Bun().ExecContext(ctx, `UPDATE settleflow_workflows SET status = 'Running' WHERE id = ?`, p.ID); err == nil {
		t.Fatal("the database let a Canceled workflow move")
	}
	if _, err := s.DB().Bun().ExecContext(ctx, `UPDATE settleflow_workflows SET status = 'Bogus', updated_at = 1 WHERE id = ?`, r.ID); err == nil {
		t.Fatal("the database took an unknown status")
	}
	// The references from events still hold.
	_, err = s.DB().Bun().ExecContext(ctx, `INSERT INTO settleflow_events (id, workflow_id, type, livemode, data, created_at, run_at)
		VALUES ('evt_orphan', 'wf_none', 'workflow.failed', ?, '{}', 0, 0)`, false)
	if err == nil {
		t.Fatal("an event referencing no workflow was accepted after the upgrade")
	}
	// And the machinery runs: the Running one can still fail.
	tr, _ := settleflow.Running.To(settleflow.Failed)
	if applied, err := s.UpdateWorkflows(ctx, []settleflow.Update{{ID: r.ID, Owner: "w", Status: settleflow.Running, Transition: tr,
		Release: true, RunAt: at, UpdatedAt: at}}); err != nil || !applied[0] {
		t.Fatalf("update after upgrade: %v %v", applied, err)
	}
	// New workflows wait unnumbered, side by side, and the next number
	// given follows the old ones.
	a, b := newSeedWorkflow(10, settleflow.Test), newSeedWorkflow(11, settleflow.Test)
	if _, err := s.InsertWorkflows(ctx, []settleflow.Insert{{Workflow: a}, {Workflow: b}}); err != nil {
		t.Fatalf("two unnumbered workflows after upgrade: %v", err)
	}
	claimed, err := s.ClaimWorkflows(ctx, settleflow.Claim{Owner: "w2", Now: t0.Add(24 * time.Hour), LeaseUntil: t0.Add(25 * time.Hour), Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var seq uint64
	for _, c := range claimed {
		if c.ID == a.ID {
			toSettling, _ := settleflow.Running.To(settleflow.Settling)
			if applied, err := s.UpdateWorkflows(ctx, []settleflow.Update{{ID: a.ID, Owner: "w2", Status: settleflow.Running, Transition: toSettling,
				RunAt: at, UpdatedAt: at, Sequence: &seq}}); err != nil || !applied[0] {
				t.Fatalf("to Settling after upgrade: %v %v", applied, err)
			}
		}
	}
	if seq != 4 {
		t.Fatalf("first number after upgrade: %d, want 4 (the old Test workflows have 1..3)", seq)
	}
}

// newSeedWorkflow is a Pending workflow created i ms after t0.
func newSeedWorkflow(i int, env settleflow.Environment) *settleflow.Workflow {
	at := t0.Add(time.Duration(i) * time.Millisecond)
	return &settleflow.Workflow{ID: ids.New(ids.Workflow, at), Object: "workflow", Livemode: env.Livemode(), Product: "triage",
		CustomerID: "cus_1", Payload: json.RawMessage(`{"n":1}`), Quoted: settleflow.Money{Amount: 100, Currency: "usd"},
		Margin: settleflow.Margin{Target: 3000}, Status: settleflow.Pending, CreatedAt: at, UpdatedAt: at}
}

// schema lists the SQLite schema objects of the workflows table (indexes
// and triggers, with their SQL), and the table's own SQL.
func sqliteSchema(t *testing.T, db *bun.DB) map[string]string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), `SELECT type, name, COALESCE(sql, '') FROM sqlite_master
		WHERE tbl_name IN ('settleflow_workflows', 'settleflow_events', 'settleflow_idempotency_keys') ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var typ, name, sql string
		if err := rows.Scan(&typ, &name, &sql); err != nil {
			t.Fatal(err)
		}
		out[typ+" "+name] = strings.Join(strings.Fields(sql), " ")
	}
	return out
}

// An SQLite database made by the release before Canceled, with rows in
// both tables that reference the workflows, upgrades in place: every row,
// sequence, index and the trigger kept, foreign keys intact, and the schema
// then equals a fresh database's.
func TestSQLiteUpgradeToCanceled(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sqlite.OpenDB(path, sqlite.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	old, err := bunstore.New(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := old.MigrateBeforeCanceled(ctx, beforeCanceledSQLite); err != nil {
		t.Fatal(err)
	}
	before := sqliteSchema(t, db.Bun())
	if _, ok := before["index settleflow_workflows_sequence"]; !ok {
		t.Fatalf("the old schema lacks the sequence index: %v", before)
	}
	ws := seed(t, old)
	if _, err := db.Bun().ExecContext(ctx, `UPDATE settleflow_workflows SET status = 'Canceled' WHERE id = ?`, ws["pending"].ID); err == nil {
		t.Fatal("the old schema took Canceled")
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := sqlite.Open(ctx, path, sqlite.OpenOptions{})
	if err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	defer s.Close()
	after := sqliteSchema(t, s.DB().Bun())
	for name := range before {
		if name == "index sqlite_autoindex_settleflow_events_2" {
			// The events' UNIQUE (workflow_id, type): customer funds
			// replaced it with a unique index on the event's subject.
			name = "index settleflow_events_subject"
		}
		if _, ok := after[name]; !ok {
			t.Errorf("the upgrade lost %s", name)
		}
	}
	if !strings.Contains(after["trigger settleflow_workflows_transition"], "NEW.status = 'Canceled'") ||
		!strings.Contains(after["table settleflow_workflows"], "'Canceled'") ||
		!strings.Contains(after["table settleflow_workflows"], "WITHOUT ROWID") {
		t.Fatalf("upgraded schema lacks Canceled:\n%s\n%s", after["table settleflow_workflows"], after["trigger settleflow_workflows_transition"])
	}
	for name := range after {
		if strings.Contains(name, "rebuild") {
			t.Errorf("the upgrade left %s behind", name)
		}
	}
	var problems int
	if err := s.DB().Bun().QueryRowContext(ctx, `SELECT count(*) FROM pragma_foreign_key_check`).Scan(&problems); err != nil || problems != 0 {
		t.Fatalf("foreign_key_check after upgrade: %d problems, %v", problems, err)
	}
	var integrity string
	if err := s.DB().Bun().QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&integrity); err != nil || integrity != "ok" {
		t.Fatalf("integrity_check after upgrade: %s %v", integrity, err)
	}
	checkUpgraded(t, s, ws)

	// The upgraded schema is the fresh one.
	fresh, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "fresh.db"), sqlite.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if f := sqliteSchema(t, fresh.DB().Bun()); !reflect.DeepEqual(f, after) {
		t.Fatalf("upgraded schema differs from a fresh one:\nupgraded %v\nfresh    %v", after, f)
	}
}

// The same upgrade on Postgres: the CHECK constraint and the transition
// function replaced, rows kept.
func TestPostgresUpgradeToCanceled(t *testing.T) {
	ctx := context.Background()
	open := pgtest.Connect(t).Storage(t, "sf_upgrade")
	old, err := bunstore.New(open())
	if err != nil {
		t.Fatal(err)
	}
	if err := old.MigrateBeforeCanceled(ctx, beforeCanceledPostgres); err != nil {
		t.Fatal(err)
	}
	ws := seed(t, old)
	// The old schema refuses Canceled: the upgrade is what allows it.
	if _, err := old.DB().Bun().ExecContext(ctx, `UPDATE settleflow_workflows SET status = 'Canceled' WHERE id = ?`, ws["pending"].ID); err == nil {
		t.Fatal("the old schema took Canceled")
	}
	s, err := bunstore.New(open())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	var checks int
	if err := s.DB().Bun().QueryRowContext(ctx, `SELECT count(*) FROM pg_constraint
		WHERE conrelid = 'settleflow_workflows'::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%status%'`).Scan(&checks); err != nil || checks != 1 {
		t.Fatalf("status CHECK constraints after upgrade: %d %v; want exactly 1", checks, err)
	}
	checkUpgraded(t, s, ws)
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("Migrate again: %v", err)
	}
	if _, err := s.GetWorkflow(ctx, settleflow.Test, "wf_none"); !errors.Is(err, settleflow.ErrNotFound) {
		t.Fatal(err)
	}
}

// Rolling back numbering at settlement numbers the workflows still
// unnumbered, in creation order after the numbers given, so every number is
// unique again; the counters follow.
func testSequenceDown(t *testing.T, s *bunstore.Store) {
	ctx := context.Background()
	var test, live []*settleflow.Workflow
	for i := range 3 {
		test = append(test, newSeedWorkflow(i, settleflow.Test))
		live = append(live, newSeedWorkflow(10+i, settleflow.Live))
	}
	var ins []settleflow.Insert
	for _, w := range append(append([]*settleflow.Workflow{}, test...), live[:2]...) {
		ins = append(ins, settleflow.Insert{Workflow: w})
	}
	if _, err := s.InsertWorkflows(ctx, ins); err != nil {
		t.Fatal(err)
	}
	// test[2] is settled first: number 1.
	if _, err := s.ClaimWorkflows(ctx, settleflow.Claim{Owner: "w", Now: t0.Add(time.Second), LeaseUntil: t0.Add(time.Hour), Limit: 10}); err != nil {
		t.Fatal(err)
	}
	toSettling, _ := settleflow.Running.To(settleflow.Settling)
	var seq uint64
	if applied, err := s.UpdateWorkflows(ctx, []settleflow.Update{{ID: test[2].ID, Owner: "w", Status: settleflow.Running, Transition: toSettling,
		RunAt: t0.Add(time.Hour), UpdatedAt: t0.Add(time.Second), Sequence: &seq}}); err != nil || !applied[0] || seq != 1 {
		t.Fatalf("numbered %d: %v %v", seq, applied, err)
	}
	if err := s.RunDown(ctx, "20261124000001_sequence_at_settlement"); err != nil {
		t.Fatalf("down: %v", err)
	}
	want := map[string]uint64{test[2].ID: 1, test[0].ID: 2, test[1].ID: 3, live[0].ID: 1, live[1].ID: 2}
	for id, n := range want {
		var got uint64
		if err := s.DB().Bun().QueryRowContext(ctx, `SELECT sequence FROM settleflow_workflows WHERE id = ?`, id).Scan(&got); err != nil || got != n {
			t.Fatalf("%s after down: sequence %d, want %d (%v)", id, got, n, err)
		}
	}
	for live, n := range map[bool]int64{false: 3, true: 2} {
		var last int64
		if err := s.DB().Bun().QueryRowContext(ctx, `SELECT last FROM settleflow_sequences WHERE livemode = ?`, live).Scan(&last); err != nil || last != n {
			t.Fatalf("counter of livemode=%v after down: %d, want %d (%v)", live, last, n, err)
		}
	}
	// Every number unique again, 0 included: the old releases' index.
	if _, err := s.DB().Bun().ExecContext(ctx, `UPDATE settleflow_workflows SET sequence = 0 WHERE id IN (?, ?)`, test[0].ID, test[1].ID); err == nil {
		t.Fatal("two workflows of one environment took sequence 0 after down")
	}
}

func TestSQLiteSequenceDown(t *testing.T) {
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "down.db"), sqlite.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	testSequenceDown(t, s)
}

func TestPostgresSequenceDown(t *testing.T) {
	open := pgtest.Connect(t).Storage(t, "sf_seqdown")
	s, err := bunstore.New(open())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	testSequenceDown(t, s)
}
