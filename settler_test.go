package settleflow_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/settleflow/settleflow"
)

// recordingSettler is the test double of a Settler: it records every charge
// in its own SQLite file (so the record survives a SIGKILL of the engine),
// dedupes by workflow id as the on-chain contract does, and counts how often
// each charge was submitted. Hooks inject errors and slow confirmations.
type recordingSettler struct {
	db *sql.DB

	mu sync.Mutex
	// submitErr, if set, is consulted before each Submit.
	submitErr func(charges []settleflow.Charge) error
	// statusErr, if set, is consulted before each Status.
	statusErr func(charges []settleflow.Charge) error
	// pendingPolls: how many Status calls report a known charge as pending
	// before it confirms.
	pendingPolls int
	polls        map[string]int
	// failIDs: charges that fail on chain (reverted).
	failIDs map[string]bool
	// liveOff: the settler has no chain for live mode.
	liveOff bool
}

func (s *recordingSettler) Configured(env settleflow.Environment) bool {
	return env == settleflow.Test || !s.liveOff
}

func newRecordingSettler(t testing.TB, path string) *recordingSettler {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "chain.db")
	}
	s, err := openRecordingSettler(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.db.Close() })
	return s
}

func openRecordingSettler(path string) (*recordingSettler, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=synchronous(FULL)")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS charges (id TEXT PRIMARY KEY, env TEXT NOT NULL, customer TEXT NOT NULL,
		amount INTEGER NOT NULL, submits INTEGER NOT NULL, mismatches INTEGER NOT NULL DEFAULT 0)`); err != nil {
		db.Close()
		return nil, err
	}
	return &recordingSettler{db: db, polls: map[string]int{}, failIDs: map[string]bool{}}, nil
}

func (s *recordingSettler) Submit(ctx context.Context, charges []settleflow.Charge) error {
	s.mu.Lock()
	hook := s.submitErr
	s.mu.Unlock()
	if hook != nil {
		if err := hook(charges); err != nil {
			return err
		}
	}
	for _, c := range charges {
		// The engine always numbers its charges (the chain keys them so).
		if c.Sequence == 0 {
			return settleflow.Permanent(fmt.Errorf("charge %s has no sequence", c.WorkflowID))
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, c := range charges {
		// Like the contract: the first submission charges, later ones are
		// counted and change nothing (a different amount is a bug we count).
		if _, err := tx.Exec(`INSERT INTO charges (id, env, customer, amount, submits) VALUES (?, ?, ?, ?, 1)
			ON CONFLICT (id) DO UPDATE SET submits = submits + 1,
				mismatches = mismatches + (excluded.amount <> charges.amount)`,
			c.WorkflowID, string(c.Environment), c.CustomerID, c.Amount); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func (s *recordingSettler) Status(ctx context.Context, charges []settleflow.Charge) ([]settleflow.SettlementStatus, error) {
	s.mu.Lock()
	hook := s.statusErr
	s.mu.Unlock()
	if hook != nil {
		if err := hook(charges); err != nil {
			return nil, err
		}
	}
	known := map[string]bool{}
	args := make([]any, len(charges))
	for i, c := range charges {
		args[i] = c.WorkflowID
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM charges WHERE id IN (?`+strings.Repeat(",?", len(charges)-1)+`)`, args...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		known[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]settleflow.SettlementStatus, len(charges))
	for i, c := range charges {
		out[i].WorkflowID = c.WorkflowID
		switch {
		case !known[c.WorkflowID]:
			out[i].State = settleflow.SettlementUnknown
		case s.failIDs[c.WorkflowID]:
			out[i].State = settleflow.SettlementFailed
			out[i].Failure = &settleflow.Failure{Code: "transaction_reverted", Message: "the settlement transaction reverted"}
		case s.polls[c.WorkflowID] < s.pendingPolls:
			s.polls[c.WorkflowID]++
			out[i].State = settleflow.SettlementPending
			out[i].Settlement = s.settlement(c.WorkflowID, 0)
		default:
			out[i].State = settleflow.SettlementConfirmed
			out[i].Settlement = s.settlement(c.WorkflowID, 12)
		}
	}
	return out, nil
}

func (s *recordingSettler) settlement(id string, confirmations uint64) *settleflow.Settlement {
	h := sha256.Sum256([]byte(id))
	return &settleflow.Settlement{ChainID: 1337, Network: "recording", TxHash: "0x" + hex.EncodeToString(h[:]), BlockNumber: 100, Confirmations: confirmations}
}

// charged returns how many distinct charges were recorded, how many
// submissions there were in all, and the number of amount mismatches.
func (s *recordingSettler) charged(t testing.TB) (charges, submits, mismatches int) {
	t.Helper()
	if err := s.db.QueryRow(`SELECT count(*), coalesce(sum(submits), 0), coalesce(sum(mismatches), 0) FROM charges`).Scan(&charges, &submits, &mismatches); err != nil {
		t.Fatal(err)
	}
	return
}

func (s *recordingSettler) amount(t testing.TB, id string) int64 {
	t.Helper()
	var a int64
	if err := s.db.QueryRow(`SELECT amount FROM charges WHERE id = ?`, id).Scan(&a); err != nil {
		t.Fatalf("charge %s: %v", id, err)
	}
	return a
}
