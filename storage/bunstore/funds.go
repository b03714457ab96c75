package bunstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/settleflow/settleflow"
)

// Customer funds: the accounts ledger, admission against it, the cursor of
// balance changes followed on chain.

// accountColumns are the columns an Account is read from, in scanAccount's
// order.
const accountColumns = "ref, customer_id, deposited, charged, refunded, reserved, pending_withdrawal, faucet_at, updated_at"

func scanAccount(row interface{ Scan(...any) error }, env settleflow.Environment) (*settleflow.Account, error) {
	a := &settleflow.Account{Environment: env}
	var customer *string
	var faucet *int64
	var updated int64
	if err := row.Scan(&a.Ref, &customer, &a.Deposited, &a.Charged, &a.Refunded, &a.Reserved, &a.PendingWithdrawal, &faucet, &updated); err != nil {
		return nil, err
	}
	if customer != nil {
		a.CustomerID = *customer
	}
	if faucet != nil {
		a.FaucetAt = fromMicros(*faucet)
	}
	a.UpdatedAt = fromMicros(updated)
	return a, nil
}

// GetAccount implements settleflow.Store.
func (s *Store) GetAccount(ctx context.Context, env settleflow.Environment, customerID, ref string) (*settleflow.Account, error) {
	a, err := scanAccount(s.db.QueryRowContext(ctx, `SELECT `+accountColumns+` FROM settleflow_accounts WHERE livemode = ? AND ref = ?`,
		env.Livemode(), ref), env)
	if errors.Is(err, sql.ErrNoRows) {
		return &settleflow.Account{Environment: env, CustomerID: customerID, Ref: ref}, nil
	}
	if err != nil {
		return nil, err
	}
	if a.CustomerID == "" {
		a.CustomerID = customerID
	}
	return a, nil
}

// ListAccounts returns every account of env, by reference, for
// reconciliation (`chain reconcile`, `chain status`): it reads the whole
// table, so it is not for request paths.
func (s *Store) ListAccounts(ctx context.Context, env settleflow.Environment) ([]*settleflow.Account, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+accountColumns+` FROM settleflow_accounts WHERE livemode = ? ORDER BY ref`, env.Livemode())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*settleflow.Account
	for rows.Next() {
		a, err := scanAccount(rows, env)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// MarkFaucet implements settleflow.Store.
func (s *Store) MarkFaucet(ctx context.Context, env settleflow.Environment, customerID, ref string, at, staleBefore time.Time) (bool, error) {
	stale := int64(math.MinInt64)
	if !staleBefore.IsZero() {
		stale = micros(staleBefore)
	}
	var mine bool
	err := s.sqlTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		mine = false
		res, err := s.exec(ctx, tx, `INSERT INTO settleflow_accounts (livemode, ref, customer_id, faucet_at, updated_at)
			VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (livemode, ref) DO UPDATE SET faucet_at = excluded.faucet_at,
				customer_id = coalesce(settleflow_accounts.customer_id, excluded.customer_id), updated_at = excluded.updated_at
			WHERE settleflow_accounts.faucet_at IS NULL OR (settleflow_accounts.faucet_at < ? AND settleflow_accounts.deposited = 0)`,
			env.Livemode(), ref, customerID, micros(at), micros(at), stale)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		mine = n == 1
		return err
	})
	return mine, err
}

// FundsCursor implements settleflow.Store.
func (s *Store) FundsCursor(ctx context.Context, env settleflow.Environment) (settleflow.FundsCursor, error) {
	var c settleflow.FundsCursor
	var block int64
	err := s.db.QueryRowContext(ctx, `SELECT block, hash FROM settleflow_funds_cursors WHERE livemode = ?`, env.Livemode()).Scan(&block, &c.Hash)
	if errors.Is(err, sql.ErrNoRows) {
		return settleflow.FundsCursor{}, nil
	}
	c.Block = uint64(block)
	return c, err
}

// ApplyFunds implements settleflow.Store.
func (s *Store) ApplyFunds(ctx context.Context, b settleflow.FundsBatch) (bool, error) {
	live := b.Environment.Livemode()
	var applied bool
	err := s.sqlTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		applied = false
		// Compare and set the cursor first: on Postgres the row lock (or
		// the insert's unique key) orders concurrent appliers.
		var res sql.Result
		var err error
		if b.From == (settleflow.FundsCursor{}) {
			res, err = s.exec(ctx, tx, `INSERT INTO settleflow_funds_cursors (livemode, block, hash) VALUES (?, ?, ?)
				ON CONFLICT (livemode) DO NOTHING`, live, int64(b.To.Block), b.To.Hash)
		} else {
			res, err = s.exec(ctx, tx, `UPDATE settleflow_funds_cursors SET block = ?, hash = ?
				WHERE livemode = ? AND block = ? AND hash = ?`, int64(b.To.Block), b.To.Hash, live, int64(b.From.Block), b.From.Hash)
		}
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return err // moved by another engine: nothing applied
		}
		at := micros(b.UpdatedAt)
		if s.postgres {
			// Lock the batch's accounts in ref order, as admission and the
			// ledger do, before changing them in chain order: transactions
			// taking the same accounts in different orders deadlock.
			refs := make([]string, 0, len(b.Events))
			for _, ev := range b.Events {
				refs = append(refs, ev.Ref)
			}
			slices.Sort(refs)
			for _, ref := range slices.Compact(refs) {
				if _, err := s.exec(ctx, tx, `INSERT INTO settleflow_accounts (livemode, ref, updated_at) VALUES (?, ?, ?)
					ON CONFLICT (livemode, ref) DO UPDATE SET updated_at = settleflow_accounts.updated_at`, live, ref, at); err != nil {
					return fmt.Errorf("bunstore: funds: locking accounts: %w", err)
				}
			}
		}
		for _, ev := range b.Events {
			if ev.Amount < 0 {
				return fmt.Errorf("bunstore: funds event %s in %s: negative amount", ev.Kind, ev.TxHash)
			}
			var q string
			args := []any{live, ev.Ref}
			switch ev.Kind {
			case settleflow.FundsDeposit:
				q = `INSERT INTO settleflow_accounts (livemode, ref, deposited, updated_at) VALUES (?, ?, ?, ?)
					ON CONFLICT (livemode, ref) DO UPDATE SET deposited = settleflow_accounts.deposited + excluded.deposited,
						updated_at = excluded.updated_at`
				args = append(args, ev.Amount, at)
			case settleflow.FundsWithdrawalRequested:
				q = `INSERT INTO settleflow_accounts (livemode, ref, pending_withdrawal, updated_at) VALUES (?, ?, ?, ?)
					ON CONFLICT (livemode, ref) DO UPDATE SET pending_withdrawal = excluded.pending_withdrawal,
						updated_at = excluded.updated_at`
				args = append(args, ev.Amount, at)
			case settleflow.FundsWithdrawalCanceled:
				q = `UPDATE settleflow_accounts SET pending_withdrawal = 0, updated_at = ? WHERE livemode = ? AND ref = ?`
				args = []any{at, live, ev.Ref}
			case settleflow.FundsWithdrawn:
				q = `INSERT INTO settleflow_accounts (livemode, ref, deposited, updated_at) VALUES (?, ?, ?, ?)
					ON CONFLICT (livemode, ref) DO UPDATE SET deposited = settleflow_accounts.deposited + excluded.deposited,
						pending_withdrawal = 0, updated_at = excluded.updated_at`
				args = append(args, -ev.Amount, at)
			default:
				return fmt.Errorf("bunstore: unknown funds event kind %q", ev.Kind)
			}
			if _, err := s.exec(ctx, tx, q, args...); err != nil {
				return fmt.Errorf("bunstore: funds event %s in %s: %w", ev.Kind, ev.TxHash, err)
			}
			if ev.Kind != settleflow.FundsDeposit || b.EventsFor == nil {
				continue
			}
			after, err := scanAccount(s.txRow(ctx, tx, `SELECT `+accountColumns+` FROM settleflow_accounts WHERE livemode = ? AND ref = ?`, live, ev.Ref), b.Environment)
			if err != nil {
				return err
			}
			if out := b.EventsFor(ev, after); out != nil {
				if err := s.insertSubjectEvent(ctx, tx, out, nil, out.ID); err != nil {
					return err
				}
			}
		}
		applied = true
		return nil
	})
	return applied, err
}

// insertSubjectEvent writes an outbox event that is not one workflow's own
// (a refund's, a customer's), unique by subject.
func (s *Store) insertSubjectEvent(ctx context.Context, tx *sql.Tx, ev *settleflow.Event, workflowID *string, subject string) error {
	r, err := toEventRow(ev)
	if err != nil {
		return err
	}
	_, err = s.exec(ctx, tx, `INSERT INTO settleflow_events (id, workflow_id, subject_id, type, livemode, data, created_at, run_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, r.ID, workflowID, subject, r.Type, r.Livemode, r.Data, r.CreatedAt, r.RunAt)
	if err != nil {
		return fmt.Errorf("bunstore: outbox: %w", err)
	}
	return nil
}

// admit decides, inside tx, which of the inserts to be made (insert[i])
// that ask for a reservation fit their customers' available balances, in
// order; it refuses the others (insert[i] = false, results[i].Insufficient)
// and adds what it admitted to the accounts' reserved. On Postgres the
// accounts are read FOR UPDATE, in ref order, so instances never deadlock
// and never admit against the same balance twice; SQLite's one writer
// serializes them.
func (s *Store) admit(ctx context.Context, tx *sql.Tx, ins []settleflow.Insert, insert []bool, results []settleflow.InsertResult) error {
	type key struct {
		live bool
		ref  string
	}
	var keys []key
	seen := map[key]bool{}
	for i, in := range ins {
		if !insert[i] || !in.Reserve {
			continue
		}
		if in.Ref == "" {
			return fmt.Errorf("bunstore: insert of %s: a reservation needs the customer's Ref", in.Workflow.ID)
		}
		k := key{in.Workflow.Livemode, in.Ref}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	slices.SortFunc(keys, func(a, b key) int {
		if a.live != b.live {
			if a.live {
				return 1
			}
			return -1
		}
		return strings.Compare(a.ref, b.ref)
	})
	accounts := make(map[key]*settleflow.Account, len(keys))
	lock := ""
	if s.postgres {
		// Rows locked in ref order (the order of the scan): two
		// transactions admitting for the same customers cannot deadlock.
		lock = " ORDER BY ref FOR UPDATE"
	}
	// One read per environment of the batch's accounts.
	for _, live := range []bool{false, true} {
		var args []any
		args = append(args, live)
		for _, k := range keys {
			if k.live == live {
				args = append(args, k.ref)
			}
		}
		if len(args) == 1 {
			continue
		}
		env := settleflow.Test
		if live {
			env = settleflow.Live
		}
		st, err := s.stmt(ctx, `SELECT `+accountColumns+` FROM settleflow_accounts WHERE livemode = ? AND ref IN (`+
			strings.TrimSuffix(strings.Repeat("?, ", len(args)-1), ", ")+`)`+lock)
		if err != nil {
			return fmt.Errorf("bunstore: admission: %w", err)
		}
		rows, err := tx.StmtContext(ctx, st).QueryContext(ctx, args...)
		if err != nil {
			return fmt.Errorf("bunstore: admission: %w", err)
		}
		for rows.Next() {
			a, err := scanAccount(rows, env)
			if err != nil {
				rows.Close()
				return fmt.Errorf("bunstore: admission: %w", err)
			}
			accounts[key{live, a.Ref}] = a
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("bunstore: admission: %w", err)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("bunstore: admission: %w", err)
		}
	}
	for _, k := range keys {
		if accounts[k] == nil {
			env := settleflow.Test
			if k.live {
				env = settleflow.Live
			}
			accounts[k] = &settleflow.Account{Environment: env, Ref: k.ref}
		}
	}
	// at is when the accounts change: the latest creation time of the
	// workflows admitted, on the engine's clock.
	var at time.Time
	added := map[key]int64{}
	for i, in := range ins {
		if !insert[i] || !in.Reserve {
			continue
		}
		w := in.Workflow
		k := key{w.Livemode, in.Ref}
		a := accounts[k]
		if a.CustomerID == "" {
			a.CustomerID = w.CustomerID
		}
		if a.Available() < w.Quoted.Amount {
			seen := *a
			results[i].Insufficient = &seen
			insert[i] = false
			continue
		}
		a.Reserved += w.Quoted.Amount
		added[k] += w.Quoted.Amount
		w.Reserved, w.AccountRef = w.Quoted.Amount, in.Ref
		if w.CreatedAt.After(at) {
			at = w.CreatedAt
		}
	}
	// One update of every account that reserved something.
	var rows []string
	var args []any
	for _, k := range keys {
		if added[k] == 0 {
			continue
		}
		rows = append(rows, `SELECT CAST(? AS BOOLEAN) AS livemode, CAST(? AS TEXT) AS ref, CAST(? AS BIGINT) AS amount, CAST(? AS TEXT) AS customer_id`)
		args = append(args, k.live, k.ref, added[k], accounts[k].CustomerID)
	}
	if len(rows) == 0 {
		return nil
	}
	args = append([]any{micros(at)}, args...)
	if _, err := s.exec(ctx, tx, `UPDATE settleflow_accounts SET reserved = settleflow_accounts.reserved + d.amount,
			customer_id = coalesce(settleflow_accounts.customer_id, d.customer_id), updated_at = ?
		FROM (`+strings.Join(rows, " UNION ALL ")+`) AS d
		WHERE settleflow_accounts.livemode = d.livemode AND settleflow_accounts.ref = d.ref`, args...); err != nil {
		return fmt.Errorf("bunstore: reservation: %w", err)
	}
	return nil
}

func ledgerSQL(n int) string {
	return `UPDATE settleflow_accounts SET reserved = settleflow_accounts.reserved - d.reserved,
		charged = settleflow_accounts.charged + d.charged, updated_at = d.at
	FROM (SELECT livemode, account_ref, sum(reserved) AS reserved,
			sum(CASE WHEN status = 'Settled' THEN coalesce(charged, quoted_amount) ELSE 0 END) AS charged, max(updated_at) AS at
		FROM settleflow_workflows
		WHERE id IN (` + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + `) AND reserved > 0
			AND status IN ('Settled', 'Failed', 'Canceled')
		GROUP BY livemode, account_ref) AS d
	WHERE settleflow_accounts.livemode = d.livemode AND settleflow_accounts.ref = d.account_ref`
}

// settleLedger runs ledgerSQL for the applied updates of us that ended
// their workflows, inside tx (SQLite).
func (s *Store) settleLedger(ctx context.Context, tx *sql.Tx, us []settleflow.Update, applied []bool) error {
	var ids []any
	for i, u := range us {
		if applied[i] && !u.Transition.IsZero() && u.Transition.Next().Terminal() {
			ids = append(ids, u.ID)
		}
	}
	for len(ids) > 0 {
		n := min(len(ids), maxUpdateRows)
		if _, err := s.exec(ctx, tx, ledgerSQL(n), ids[:n]...); err != nil {
			return fmt.Errorf("bunstore: ledger: %w", err)
		}
		ids = ids[n:]
	}
	return nil
}

// txRow runs the prepared statement for query inside tx and returns its
// row (an error is reported by Scan).
func (s *Store) txRow(ctx context.Context, tx *sql.Tx, query string, args ...any) rowScanner {
	st, err := s.stmt(ctx, query)
	if err != nil {
		return errRow{err}
	}
	return tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
}

type rowScanner interface{ Scan(...any) error }

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
