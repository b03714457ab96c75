package bunstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/settleflow/settleflow"
)

// Refunds: a queue of their own, keyed by refund id on chain.

const refundColumns = "id, livemode, workflow_id, customer_id, sequence, amount, currency, reason, status, settlement, failure, attempts, created_at, updated_at"

func scanRefund(row rowScanner) (*settleflow.Refund, error) {
	r := &settleflow.Refund{Object: "refund"}
	var seq, created, updated int64
	var status string
	var settlement, failure *string
	if err := row.Scan(&r.ID, &r.Livemode, &r.WorkflowID, &r.CustomerID, &seq, &r.Amount, &r.Currency, &r.Reason,
		&status, &settlement, &failure, &r.Attempts, &created, &updated); err != nil {
		return nil, err
	}
	r.Sequence, r.Status, r.CreatedAt, r.UpdatedAt = uint64(seq), settleflow.RefundStatus(status), fromMicros(created), fromMicros(updated)
	if settlement != nil {
		r.Settlement = new(settleflow.Settlement)
		if err := json.Unmarshal([]byte(*settlement), r.Settlement); err != nil {
			return nil, fmt.Errorf("bunstore: refund %s: settlement: %w", r.ID, err)
		}
	}
	if failure != nil {
		r.Failure = new(settleflow.Failure)
		if err := json.Unmarshal([]byte(*failure), r.Failure); err != nil {
			return nil, fmt.Errorf("bunstore: refund %s: failure: %w", r.ID, err)
		}
	}
	return r, nil
}

func scanRefunds(rows *sql.Rows) ([]*settleflow.Refund, error) {
	defer rows.Close()
	var out []*settleflow.Refund
	for rows.Next() {
		r, err := scanRefund(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// InsertRefund implements settleflow.Store.
func (s *Store) InsertRefund(ctx context.Context, in settleflow.RefundInsert) (settleflow.RefundInsertResult, error) {
	r := in.Refund
	var res settleflow.RefundInsertResult
	lock := ""
	if s.postgres {
		lock = " FOR UPDATE"
	}
	insert := func(ctx context.Context, tx *sql.Tx) error {
		res = settleflow.RefundInsertResult{}
		if in.IdempotencyKey != "" {
			existing, err := s.refundKey(ctx, tx, in)
			if err != nil || existing != nil {
				res = deref(existing)
				return err
			}
		}
		// The workflow's row, locked on Postgres, orders the refunds of one
		// charge: what is left to refund is read and taken in one step.
		var status, customer, currency string
		var seq, quoted int64
		err := s.txRow(ctx, tx, `SELECT status, customer_id, sequence, coalesce(charged, quoted_amount), currency FROM settleflow_workflows
			WHERE id = ? AND livemode = ?`+lock, r.WorkflowID, r.Livemode).Scan(&status, &customer, &seq, &quoted, &currency)
		if errors.Is(err, sql.ErrNoRows) {
			return settleflow.ErrNotFound
		}
		if err != nil {
			return err
		}
		if s.postgres && in.IdempotencyKey != "" {
			// Read again under the workflow's lock: a refund of this
			// workflow under the same key by another instance, which held
			// the lock, has committed by now (each statement reads what is
			// committed when it starts).
			existing, err := s.refundKey(ctx, tx, in)
			if err != nil || existing != nil {
				res = deref(existing)
				return err
			}
		}
		if settleflow.Status(status) != settleflow.Settled {
			return &settleflow.StateError{Op: "refund", WorkflowID: r.WorkflowID, Status: settleflow.Status(status)}
		}
		var taken int64
		if err := s.txRow(ctx, tx, `SELECT coalesce(sum(amount), 0) FROM settleflow_refunds WHERE workflow_id = ? AND status <> 'Failed'`,
			r.WorkflowID).Scan(&taken); err != nil {
			return err
		}
		left := quoted - taken
		amount := r.Amount
		if amount == 0 {
			amount = left
		}
		if amount <= 0 || amount > left {
			return &settleflow.RefundableError{WorkflowID: r.WorkflowID, Refundable: left, Asked: amount}
		}
		out := *r
		out.Amount, out.Currency, out.CustomerID, out.Sequence = amount, currency, customer, uint64(seq)
		if _, err := s.exec(ctx, tx, `INSERT INTO settleflow_refunds (id, livemode, workflow_id, customer_id, sequence, amount, currency,
			reason, status, attempts, run_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)`,
			out.ID, out.Livemode, out.WorkflowID, out.CustomerID, seq, amount, currency, out.Reason, string(settleflow.RefundPending),
			micros(out.CreatedAt), micros(out.CreatedAt), micros(out.UpdatedAt)); err != nil {
			return err
		}
		if in.IdempotencyKey != "" {
			b, err := json.Marshal(&out)
			if err != nil {
				return err
			}
			kr, err := s.exec(ctx, tx, `INSERT INTO settleflow_refund_keys (livemode, key, request_hash, refund_id, response, created_at)
				VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (livemode, key) DO NOTHING`,
				out.Livemode, in.IdempotencyKey, in.RequestHash, out.ID, string(b), micros(out.CreatedAt))
			if err != nil {
				return err
			}
			if n, err := kr.RowsAffected(); err != nil || n != 1 {
				if err != nil {
					return err
				}
				// Another transaction (another instance, on Postgres)
				// recorded the key since it was read: undo this refund
				// and run again, to answer that one.
				return errKeyTaken
			}
		}
		res = settleflow.RefundInsertResult{Refund: &out}
		return nil
	}
	var err error
	for range 3 {
		if err = s.sqlTx(ctx, insert); !errors.Is(err, errKeyTaken) {
			break
		}
	}
	if err != nil {
		return settleflow.RefundInsertResult{}, err
	}
	return res, nil
}

func deref(r *settleflow.RefundInsertResult) settleflow.RefundInsertResult {
	if r == nil {
		return settleflow.RefundInsertResult{}
	}
	return *r
}

// refundKey returns the live record under in's refund key, or nil after
// clearing an expired one: a key is honoured for IdempotencyTTL after the
// refund it recorded, as a workflow's is (idempotencyRecord), then it may
// be used again.
func (s *Store) refundKey(ctx context.Context, tx *sql.Tx, in settleflow.RefundInsert) (*settleflow.RefundInsertResult, error) {
	r := in.Refund
	var hash, response string
	var created int64
	err := s.txRow(ctx, tx, `SELECT request_hash, response, created_at FROM settleflow_refund_keys WHERE livemode = ? AND key = ?`,
		r.Livemode, in.IdempotencyKey).Scan(&hash, &response, &created)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, err
	case created <= micros(r.CreatedAt.Add(-settleflow.IdempotencyTTL)):
		_, err := s.exec(ctx, tx, `DELETE FROM settleflow_refund_keys WHERE livemode = ? AND key = ?`, r.Livemode, in.IdempotencyKey)
		return nil, err
	}
	var first settleflow.Refund
	if err := json.Unmarshal([]byte(response), &first); err != nil {
		return nil, fmt.Errorf("bunstore: refund idempotency record: %w", err)
	}
	return &settleflow.RefundInsertResult{Refund: &first, Existing: true, ExistingHash: hash}, nil
}

// GetRefund implements settleflow.Store.
func (s *Store) GetRefund(ctx context.Context, env settleflow.Environment, id string) (*settleflow.Refund, error) {
	r, err := scanRefund(s.db.QueryRowContext(ctx, `SELECT `+refundColumns+` FROM settleflow_refunds WHERE id = ? AND livemode = ?`, id, env.Livemode()))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, settleflow.ErrNotFound
	}
	return r, err
}

// ListRefunds implements settleflow.Store: keyset on id, newest first.
func (s *Store) ListRefunds(ctx context.Context, q settleflow.RefundQuery) ([]*settleflow.Refund, bool, error) {
	if q.Limit < 1 {
		return nil, false, errors.New("bunstore: list limit must be positive")
	}
	where := []string{"livemode = ?"}
	args := []any{q.Environment.Livemode()}
	if q.WorkflowID != "" {
		where, args = append(where, "workflow_id = ?"), append(args, q.WorkflowID)
	}
	if q.Status != "" {
		where, args = append(where, "status = ?"), append(args, string(q.Status))
	}
	order := "DESC"
	switch {
	case q.StartingAfter != "":
		where, args = append(where, "id < ?"), append(args, q.StartingAfter)
	case q.EndingBefore != "":
		where, args = append(where, "id > ?"), append(args, q.EndingBefore)
		order = "ASC"
	}
	args = append(args, q.Limit+1)
	rows, err := s.db.QueryContext(ctx, `SELECT `+refundColumns+` FROM settleflow_refunds WHERE `+strings.Join(where, " AND ")+
		` ORDER BY id `+order+` LIMIT ?`, args...)
	if err != nil {
		return nil, false, err
	}
	out, err := scanRefunds(rows)
	if err != nil {
		return nil, false, err
	}
	more := len(out) > q.Limit
	if more {
		out = out[:q.Limit]
	}
	if order == "ASC" {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out, more, nil
}

// ClaimRefunds implements settleflow.Store.
func (s *Store) ClaimRefunds(ctx context.Context, c settleflow.Claim) ([]*settleflow.Refund, error) {
	lock := ""
	if s.postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	var out []*settleflow.Refund
	err := s.sqlTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		out = nil
		st, err := s.stmt(ctx, `SELECT id FROM settleflow_refunds WHERE status = 'Pending' AND run_at <= ? ORDER BY run_at LIMIT ?`+lock)
		if err != nil {
			return err
		}
		rows, err := tx.StmtContext(ctx, st).QueryContext(ctx, micros(c.Now), c.Limit)
		if err != nil {
			return err
		}
		var ids []any
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil || len(ids) == 0 {
			return err
		}
		in := strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ")
		args := append([]any{c.Owner, micros(c.LeaseUntil)}, ids...)
		if _, err := s.exec(ctx, tx, `UPDATE settleflow_refunds SET lease_owner = ?, run_at = ? WHERE id IN (`+in+`)`, args...); err != nil {
			return err
		}
		st, err = s.stmt(ctx, `SELECT `+refundColumns+` FROM settleflow_refunds WHERE id IN (`+in+`) ORDER BY id`)
		if err != nil {
			return err
		}
		rows, err = tx.StmtContext(ctx, st).QueryContext(ctx, ids...)
		if err != nil {
			return err
		}
		out, err = scanRefunds(rows)
		return err
	})
	return out, err
}

// refundAccount is an account refunds credit.
type refundAccount struct {
	live bool
	ref  string
}

// UpdateRefunds implements settleflow.Store.
func (s *Store) UpdateRefunds(ctx context.Context, us []settleflow.RefundUpdate) ([]bool, error) {
	applied := make([]bool, len(us))
	var touched []string
	err := s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		clear(applied)
		touched = touched[:0]
		// What each account gets back, applied last, in ref order (as
		// admission and the ledger lock accounts): no deadlock.
		credits := map[refundAccount]int64{}
		var creditOrder []refundAccount
		var creditAt int64
		for i, u := range us {
			if !u.Status.Valid() {
				return fmt.Errorf("bunstore: refund %s: status %q", u.ID, u.Status)
			}
			var owner *string
			if !u.Release && u.Status == settleflow.RefundPending {
				owner = &u.Owner
			}
			var workflowID string
			var live bool
			var amount int64
			err := s.txRow(ctx, tx, `UPDATE settleflow_refunds SET status = ?, run_at = ?, lease_owner = ?, attempts = ?, updated_at = ?,
				settlement = coalesce(?, settlement), failure = coalesce(?, failure)
				WHERE id = ? AND status = 'Pending' AND lease_owner = ?
				RETURNING workflow_id, livemode, amount`,
				string(u.Status), micros(u.RunAt), owner, u.Attempts, micros(u.UpdatedAt), jsonText(u.Settlement), jsonText(u.Failure),
				u.ID, u.Owner).Scan(&workflowID, &live, &amount)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return fmt.Errorf("bunstore: refund %s: %w", u.ID, err)
			}
			applied[i] = true
			if u.Status == settleflow.RefundSucceeded {
				var accountRef *string
				if err := s.txRow(ctx, tx, `UPDATE settleflow_workflows SET refunded = refunded + ? WHERE id = ? RETURNING account_ref`,
					amount, workflowID).Scan(&accountRef); err != nil {
					return fmt.Errorf("bunstore: refund %s: workflow %s: %w", u.ID, workflowID, err)
				}
				if accountRef != nil {
					k := refundAccount{live, *accountRef}
					if _, ok := credits[k]; !ok {
						creditOrder = append(creditOrder, k)
					}
					credits[k] += amount
					creditAt = max(creditAt, micros(u.UpdatedAt))
				}
				touched = append(touched, workflowID)
			}
			if u.Event != nil {
				if err := s.insertSubjectEvent(ctx, tx, u.Event, &workflowID, u.ID); err != nil {
					return err
				}
			}
		}
		slices.SortFunc(creditOrder, func(a, b refundAccount) int {
			if a.live != b.live {
				if a.live {
					return 1
				}
				return -1
			}
			return strings.Compare(a.ref, b.ref)
		})
		for _, k := range creditOrder {
			if _, err := s.exec(ctx, tx, `UPDATE settleflow_accounts SET refunded = refunded + ?, updated_at = ? WHERE livemode = ? AND ref = ?`,
				credits[k], creditAt, k.live, k.ref); err != nil {
				return fmt.Errorf("bunstore: refunds: account %s: %w", k.ref, err)
			}
		}
		return nil
	}, func() {
		if s.recent != nil && len(touched) > 0 {
			s.recent.drop(touched)
		}
	})
	if err != nil {
		return nil, err
	}
	return applied, nil
}
