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
const accountColumns = "ref, customer_id, deposited, charged, refunded, reserved, pending_withdrawal, owner, quarantined, faucet_at, updated_at"

func scanAccount(row interface{ Scan(...any) error }, env settleflow.Environment) (*settleflow.Account, error) {
	a := &settleflow.Account{Environment: env}
	var customer, owner *string
	var faucet *int64
	var updated int64
	if err := row.Scan(&a.Ref, &customer, &a.Deposited, &a.Charged, &a.Refunded, &a.Reserved, &a.PendingWithdrawal, &owner, &a.Quarantined, &faucet, &updated); err != nil {
		return nil, err
	}
	if customer != nil {
		a.CustomerID = *customer
	}
	if owner != nil {
		a.Owner = *owner
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

// fundsHistoryKept is how many of the cursors the follower moved to are
// kept per environment: the blocks a rewind after a reorg can go back to.
const fundsHistoryKept = 1024

// FundsCursor implements settleflow.Store.
func (s *Store) FundsCursor(ctx context.Context, env settleflow.Environment) (settleflow.FundsCursor, error) {
	st, err := s.FundsStatus(ctx, env)
	return st.Cursor, err
}

// FundsStatus implements settleflow.Store.
func (s *Store) FundsStatus(ctx context.Context, env settleflow.Environment) (settleflow.FundsStatus, error) {
	var st settleflow.FundsStatus
	var block int64
	var current *int64
	err := s.db.QueryRowContext(ctx, `SELECT block, hash, current_at FROM settleflow_funds_cursors WHERE livemode = ?`, env.Livemode()).
		Scan(&block, &st.Cursor.Hash, &current)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return st, err
	default:
		st.Cursor.Block = uint64(block)
		if current != nil {
			st.CurrentAt = fromMicros(*current)
		}
	}
	err = s.db.QueryRowContext(ctx, `SELECT count(*) FROM settleflow_funds_quarantine WHERE livemode = ?`, env.Livemode()).Scan(&st.Quarantined)
	return st, err
}

// MarkFundsCurrent implements settleflow.Store.
func (s *Store) MarkFundsCurrent(ctx context.Context, env settleflow.Environment, cursor settleflow.FundsCursor, at time.Time) error {
	return s.sqlTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if cursor == (settleflow.FundsCursor{}) {
			// Nothing followed yet: the zero cursor's row (which the first
			// batch replaces) holds the time.
			_, err := s.exec(ctx, tx, `INSERT INTO settleflow_funds_cursors (livemode, block, hash, current_at) VALUES (?, 0, '', ?)
				ON CONFLICT (livemode) DO UPDATE SET current_at = excluded.current_at
				WHERE settleflow_funds_cursors.block = 0 AND settleflow_funds_cursors.hash = ''`, env.Livemode(), micros(at))
			return err
		}
		_, err := s.exec(ctx, tx, `UPDATE settleflow_funds_cursors SET current_at = ? WHERE livemode = ? AND block = ? AND hash = ?`,
			micros(at), env.Livemode(), int64(cursor.Block), cursor.Hash)
		return err
	})
}

// FundsHistory implements settleflow.Store.
func (s *Store) FundsHistory(ctx context.Context, env settleflow.Environment, limit int) ([]settleflow.FundsCursor, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT block, hash FROM settleflow_funds_history WHERE livemode = ? ORDER BY block DESC LIMIT ?`,
		env.Livemode(), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []settleflow.FundsCursor
	for rows.Next() {
		var c settleflow.FundsCursor
		var block int64
		if err := rows.Scan(&block, &c.Hash); err != nil {
			return nil, err
		}
		c.Block = uint64(block)
		out = append(out, c)
	}
	return out, rows.Err()
}

// fundsJournal is one applied event as settleflow_funds_events keeps it.
type fundsJournal struct {
	txHash      string
	logIndex    int64
	ref         string
	kind        settleflow.FundsEventKind
	amount      int64
	prevPending int64
	prevOwner   *string
}

// lockAccounts creates (if need be) and locks, on Postgres, the accounts of
// refs in ref order, as admission and the ledger take them: transactions
// taking the same accounts in different orders deadlock. SQLite's one
// writer needs nothing.
func (s *Store) lockAccounts(ctx context.Context, tx *sql.Tx, live bool, refs []string, at int64) error {
	if !s.postgres {
		return nil
	}
	refs = slices.Clone(refs)
	slices.Sort(refs)
	for _, ref := range slices.Compact(refs) {
		if _, err := s.exec(ctx, tx, `INSERT INTO settleflow_accounts (livemode, ref, updated_at) VALUES (?, ?, ?)
			ON CONFLICT (livemode, ref) DO UPDATE SET updated_at = settleflow_accounts.updated_at`, live, ref, at); err != nil {
			return fmt.Errorf("bunstore: funds: locking accounts: %w", err)
		}
	}
	return nil
}

// readAccount reads an account inside tx; the zero account if none.
func (s *Store) readAccount(ctx context.Context, tx *sql.Tx, env settleflow.Environment, ref string) (*settleflow.Account, error) {
	a, err := scanAccount(s.txRow(ctx, tx, `SELECT `+accountColumns+` FROM settleflow_accounts WHERE livemode = ? AND ref = ?`, env.Livemode(), ref), env)
	if errors.Is(err, sql.ErrNoRows) {
		return &settleflow.Account{Environment: env, Ref: ref}, nil
	}
	return a, err
}

// writeFunds writes the followed fields of a (deposited, pending
// withdrawal, owner) inside tx, creating the account if need be.
func (s *Store) writeFunds(ctx context.Context, tx *sql.Tx, live bool, a *settleflow.Account, at int64) error {
	var owner *string
	if a.Owner != "" {
		owner = &a.Owner
	}
	_, err := s.exec(ctx, tx, `INSERT INTO settleflow_accounts (livemode, ref, deposited, pending_withdrawal, owner, updated_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (livemode, ref) DO UPDATE SET deposited = excluded.deposited, pending_withdrawal = excluded.pending_withdrawal,
			owner = excluded.owner, updated_at = excluded.updated_at`, live, a.Ref, a.Deposited, a.PendingWithdrawal, owner, at)
	return err
}

// applyFundsEvent computes a after ev, or the reason ev cannot be applied
// (a is then unchanged). Every sum is checked: nothing wraps.
func applyFundsEvent(a *settleflow.Account, ev settleflow.FundsEvent) string {
	if ev.Invalid != "" {
		return ev.Invalid
	}
	if ev.Amount < 0 {
		return fmt.Sprintf("negative amount %d", ev.Amount)
	}
	switch ev.Kind {
	case settleflow.FundsDeposit:
		if a.Deposited > math.MaxInt64-ev.Amount {
			return fmt.Sprintf("a deposit of %d would take the customer's deposits (%d) past the largest amount a balance can hold", ev.Amount, a.Deposited)
		}
		a.Deposited += ev.Amount
	case settleflow.FundsWithdrawalRequested:
		a.PendingWithdrawal = ev.Amount
	case settleflow.FundsWithdrawalCanceled:
		a.PendingWithdrawal = 0
	case settleflow.FundsWithdrawn:
		if a.Deposited < math.MinInt64+ev.Amount {
			return fmt.Sprintf("a withdrawal of %d would take the customer's deposits (%d) past the smallest amount a balance can hold", ev.Amount, a.Deposited)
		}
		a.Deposited -= ev.Amount
		a.PendingWithdrawal = 0
	case settleflow.FundsOwnerSet:
		if ev.Owner == "" {
			return "an owner change names no owner"
		}
		a.Owner = ev.Owner
	case settleflow.FundsOwnerChangeProposed, settleflow.FundsOwnerChangeCanceled:
		// Journaled and announced; the account is unchanged.
		if ev.Owner == "" {
			return "an owner change proposal names no owner"
		}
	default:
		return fmt.Sprintf("unknown funds event kind %q", ev.Kind)
	}
	return ""
}

// ApplyFunds implements settleflow.Store.
func (s *Store) ApplyFunds(ctx context.Context, b settleflow.FundsBatch) (settleflow.FundsApplied, error) {
	live := b.Environment.Livemode()
	var res settleflow.FundsApplied
	err := s.sqlTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res = settleflow.FundsApplied{}
		// Compare and set the cursor first: on Postgres the row lock (or
		// the insert's unique key) orders concurrent appliers. The zero
		// cursor's row (left by MarkFundsCurrent) counts as no row.
		var r sql.Result
		var err error
		if b.From == (settleflow.FundsCursor{}) {
			r, err = s.exec(ctx, tx, `INSERT INTO settleflow_funds_cursors (livemode, block, hash) VALUES (?, ?, ?)
				ON CONFLICT (livemode) DO UPDATE SET block = excluded.block, hash = excluded.hash, current_at = NULL
				WHERE settleflow_funds_cursors.block = 0 AND settleflow_funds_cursors.hash = ''`, live, int64(b.To.Block), b.To.Hash)
		} else {
			r, err = s.exec(ctx, tx, `UPDATE settleflow_funds_cursors SET block = ?, hash = ?
				WHERE livemode = ? AND block = ? AND hash = ?`, int64(b.To.Block), b.To.Hash, live, int64(b.From.Block), b.From.Hash)
		}
		if err != nil {
			return err
		}
		if n, err := r.RowsAffected(); err != nil || n != 1 {
			return err // moved by another engine: nothing applied
		}
		// The history of cursors, for a rewind after a reorg: this one,
		// and the newest fundsHistoryKept.
		if _, err := s.exec(ctx, tx, `INSERT INTO settleflow_funds_history (livemode, block, hash) VALUES (?, ?, ?)
			ON CONFLICT (livemode, block) DO UPDATE SET hash = excluded.hash`, live, int64(b.To.Block), b.To.Hash); err != nil {
			return fmt.Errorf("bunstore: funds history: %w", err)
		}
		if _, err := s.exec(ctx, tx, `DELETE FROM settleflow_funds_history WHERE livemode = ? AND block < (
				SELECT block FROM settleflow_funds_history WHERE livemode = ? ORDER BY block DESC LIMIT 1 OFFSET ?)`,
			live, live, fundsHistoryKept-1); err != nil {
			return fmt.Errorf("bunstore: funds history: %w", err)
		}
		at := micros(b.UpdatedAt)
		refs := make([]string, 0, len(b.Events))
		for _, ev := range b.Events {
			refs = append(refs, ev.Ref)
		}
		if err := s.lockAccounts(ctx, tx, live, refs, at); err != nil {
			return err
		}
		for _, ev := range b.Events {
			a, err := s.readAccount(ctx, tx, b.Environment, ev.Ref)
			if err != nil {
				return fmt.Errorf("bunstore: funds event %s in %s: %w", ev.Kind, ev.TxHash, err)
			}
			if reason := applyFundsEvent(a, ev); reason != "" {
				q, err := s.quarantineFunds(ctx, tx, live, ev, reason, at)
				if err != nil {
					return err
				}
				if q {
					res.Quarantined = append(res.Quarantined, settleflow.QuarantinedFunds{Event: ev, Reason: reason})
				}
				continue
			}
			// Once each, by (transaction, log index): an event reverted by
			// a rewind is applied again, without a second announcement.
			var reverted bool
			err = s.txRow(ctx, tx, `SELECT reverted FROM settleflow_funds_events WHERE livemode = ? AND tx_hash = ? AND log_index = ?`,
				live, ev.TxHash, int64(ev.LogIndex)).Scan(&reverted)
			switch {
			case errors.Is(err, sql.ErrNoRows):
			case err != nil:
				return fmt.Errorf("bunstore: funds journal: %w", err)
			case !reverted:
				continue // applied already
			}
			revived := err == nil
			before, err := s.readAccount(ctx, tx, b.Environment, ev.Ref)
			if err != nil {
				return err
			}
			var prevOwner *string
			if before.Owner != "" {
				prevOwner = &before.Owner
			}
			var owner *string
			if ev.Owner != "" {
				owner = &ev.Owner
			}
			if revived {
				_, err = s.exec(ctx, tx, `UPDATE settleflow_funds_events SET reverted = ?, block = ?, ref = ?, kind = ?, amount = ?, owner = ?,
					prev_pending = ?, prev_owner = ?, applied_at = ? WHERE livemode = ? AND tx_hash = ? AND log_index = ?`,
					false, int64(ev.BlockNumber), ev.Ref, string(ev.Kind), ev.Amount, owner, before.PendingWithdrawal, prevOwner, at,
					live, ev.TxHash, int64(ev.LogIndex))
			} else {
				_, err = s.exec(ctx, tx, `INSERT INTO settleflow_funds_events (livemode, tx_hash, log_index, block, ref, kind, amount, owner,
					prev_pending, prev_owner, applied_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
					live, ev.TxHash, int64(ev.LogIndex), int64(ev.BlockNumber), ev.Ref, string(ev.Kind), ev.Amount, owner,
					before.PendingWithdrawal, prevOwner, at)
			}
			if err != nil {
				return fmt.Errorf("bunstore: funds journal: %w", err)
			}
			if err := s.writeFunds(ctx, tx, live, a, at); err != nil {
				return fmt.Errorf("bunstore: funds event %s in %s: %w", ev.Kind, ev.TxHash, err)
			}
			if b.EventsFor == nil || revived {
				continue
			}
			after, err := s.readAccount(ctx, tx, b.Environment, ev.Ref)
			if err != nil {
				return err
			}
			if after.CustomerID == "" {
				// An account known by its reference alone: a grant the
				// engine sent for it names its customer.
				if after.CustomerID, err = s.grantCustomer(ctx, tx, live, ev.Ref); err != nil {
					return err
				}
			}
			if out := b.EventsFor(ev, after); out != nil {
				if err := s.insertSubjectEvent(ctx, tx, out, nil, out.ID); err != nil {
					return err
				}
			}
		}
		res.Applied = true
		return nil
	})
	return res, err
}

// grantCustomer returns the customer of the owner grants recorded for ref,
// or "" if none.
func (s *Store) grantCustomer(ctx context.Context, tx *sql.Tx, live bool, ref string) (string, error) {
	var id string
	err := s.txRow(ctx, tx, `SELECT customer_id FROM settleflow_owner_grants WHERE livemode = ? AND ref = ? LIMIT 1`, live, ref).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("bunstore: funds: the customer of %s: %w", ref, err)
	}
	return id, nil
}

// quarantineFunds sets ev aside with reason, once, and counts it in its
// account; it reports whether ev was new to the quarantine.
func (s *Store) quarantineFunds(ctx context.Context, tx *sql.Tx, live bool, ev settleflow.FundsEvent, reason string, at int64) (bool, error) {
	r, err := s.exec(ctx, tx, `INSERT INTO settleflow_funds_quarantine (livemode, tx_hash, log_index, block, ref, kind, reason, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (livemode, tx_hash, log_index) DO NOTHING`,
		live, ev.TxHash, int64(ev.LogIndex), int64(ev.BlockNumber), ev.Ref, string(ev.Kind), reason, at)
	if err != nil {
		return false, fmt.Errorf("bunstore: funds quarantine: %w", err)
	}
	if n, err := r.RowsAffected(); err != nil || n == 0 {
		return false, err
	}
	if _, err := s.exec(ctx, tx, `INSERT INTO settleflow_accounts (livemode, ref, quarantined, updated_at) VALUES (?, ?, 1, ?)
		ON CONFLICT (livemode, ref) DO UPDATE SET quarantined = settleflow_accounts.quarantined + 1, updated_at = excluded.updated_at`,
		live, ev.Ref, at); err != nil {
		return false, fmt.Errorf("bunstore: funds quarantine: %w", err)
	}
	return true, nil
}

// RewindFunds implements settleflow.Store.
func (s *Store) RewindFunds(ctx context.Context, rw settleflow.FundsRewind) (bool, error) {
	live := rw.Environment.Livemode()
	var rewound bool
	err := s.sqlTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		rewound = false
		var r sql.Result
		var err error
		if rw.To == (settleflow.FundsCursor{}) {
			r, err = s.exec(ctx, tx, `DELETE FROM settleflow_funds_cursors WHERE livemode = ? AND block = ? AND hash = ?`,
				live, int64(rw.From.Block), rw.From.Hash)
		} else {
			r, err = s.exec(ctx, tx, `UPDATE settleflow_funds_cursors SET block = ?, hash = ?, current_at = NULL
				WHERE livemode = ? AND block = ? AND hash = ?`, int64(rw.To.Block), rw.To.Hash, live, int64(rw.From.Block), rw.From.Hash)
		}
		if err != nil {
			return err
		}
		if n, err := r.RowsAffected(); err != nil || n != 1 {
			return err
		}
		at := micros(rw.UpdatedAt)
		after := int64(rw.To.Block)
		rows, err := s.txQuery(ctx, tx, `SELECT tx_hash, log_index, ref, kind, amount, prev_pending, prev_owner FROM settleflow_funds_events
			WHERE livemode = ? AND block > ? AND reverted = ? ORDER BY block DESC, log_index DESC`, live, after, false)
		if err != nil {
			return err
		}
		var undo []fundsJournal
		for rows.Next() {
			var j fundsJournal
			var kind string
			if err := rows.Scan(&j.txHash, &j.logIndex, &j.ref, &kind, &j.amount, &j.prevPending, &j.prevOwner); err != nil {
				rows.Close()
				return err
			}
			j.kind = settleflow.FundsEventKind(kind)
			undo = append(undo, j)
		}
		if err := rows.Close(); err != nil {
			return err
		}
		type quarantined struct {
			ref string
			n   int64
		}
		var qs []quarantined
		qrows, err := s.txQuery(ctx, tx, `SELECT ref, count(*) FROM settleflow_funds_quarantine WHERE livemode = ? AND block > ? GROUP BY ref`, live, after)
		if err != nil {
			return err
		}
		for qrows.Next() {
			var q quarantined
			if err := qrows.Scan(&q.ref, &q.n); err != nil {
				qrows.Close()
				return err
			}
			qs = append(qs, q)
		}
		if err := qrows.Close(); err != nil {
			return err
		}
		refs := make([]string, 0, len(undo)+len(qs))
		for _, j := range undo {
			refs = append(refs, j.ref)
		}
		for _, q := range qs {
			refs = append(refs, q.ref)
		}
		if err := s.lockAccounts(ctx, tx, live, refs, at); err != nil {
			return err
		}
		// Newest first: each event puts back what it replaced.
		for _, j := range undo {
			a, err := s.readAccount(ctx, tx, rw.Environment, j.ref)
			if err != nil {
				return err
			}
			switch j.kind {
			case settleflow.FundsDeposit:
				a.Deposited -= j.amount
			case settleflow.FundsWithdrawn:
				a.Deposited += j.amount
				a.PendingWithdrawal = j.prevPending
			case settleflow.FundsWithdrawalRequested, settleflow.FundsWithdrawalCanceled:
				a.PendingWithdrawal = j.prevPending
			case settleflow.FundsOwnerSet:
				a.Owner = ""
				if j.prevOwner != nil {
					a.Owner = *j.prevOwner
				}
			}
			if err := s.writeFunds(ctx, tx, live, a, at); err != nil {
				return fmt.Errorf("bunstore: funds rewind: %w", err)
			}
			if _, err := s.exec(ctx, tx, `UPDATE settleflow_funds_events SET reverted = ? WHERE livemode = ? AND tx_hash = ? AND log_index = ?`,
				true, live, j.txHash, j.logIndex); err != nil {
				return fmt.Errorf("bunstore: funds rewind: %w", err)
			}
		}
		for _, q := range qs {
			if _, err := s.exec(ctx, tx, `UPDATE settleflow_accounts SET quarantined = quarantined - ?, updated_at = ? WHERE livemode = ? AND ref = ?`,
				q.n, at, live, q.ref); err != nil {
				return fmt.Errorf("bunstore: funds rewind: %w", err)
			}
		}
		for _, table := range []string{"settleflow_funds_quarantine", "settleflow_funds_history"} {
			if _, err := s.exec(ctx, tx, `DELETE FROM `+table+` WHERE livemode = ? AND block > ?`, live, after); err != nil {
				return fmt.Errorf("bunstore: funds rewind: %w", err)
			}
		}
		rewound = true
		return nil
	})
	return rewound, err
}

// txQuery runs the prepared statement for query inside tx.
func (s *Store) txQuery(ctx context.Context, tx *sql.Tx, query string, args ...any) (*sql.Rows, error) {
	st, err := s.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return tx.StmtContext(ctx, st).QueryContext(ctx, args...)
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
		if !a.Admits(w.Quoted.Amount) {
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
		WHERE id IN (` + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + `) AND account_ref IS NOT NULL
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
