package bunstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/settleflow/settleflow"
)

// Owner grants: each grant the engine sent to the chain, for `chain
// reconcile` and for idempotent replays of POST /v1/customers/{id}/owner.

var _ settleflow.OwnerGrantStore = (*Store)(nil)

const ownerGrantColumns = "customer_id, ref, owner, nonce, origin, deadline, tx_hash, effective, idempotency_key, request_hash, created_at"

func scanOwnerGrant(row interface{ Scan(...any) error }, env settleflow.Environment) (*settleflow.OwnerGrantRecord, error) {
	r := &settleflow.OwnerGrantRecord{Environment: env}
	var key, hash sql.NullString
	var deadline, created int64
	if err := row.Scan(&r.CustomerID, &r.Ref, &r.Owner, &r.Nonce, &r.Origin, &deadline, &r.TxHash, &r.Effective, &key, &hash, &created); err != nil {
		return nil, err
	}
	r.IdempotencyKey, r.RequestHash = key.String, hash.String
	r.Deadline = time.Unix(deadline, 0).UTC()
	r.CreatedAt = fromMicros(created)
	return r, nil
}

func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// InsertOwnerGrant implements settleflow.OwnerGrantStore.
func (s *Store) InsertOwnerGrant(ctx context.Context, r settleflow.OwnerGrantRecord) (*settleflow.OwnerGrantRecord, bool, error) {
	var stored *settleflow.OwnerGrantRecord
	existed := false
	err := s.sqlTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		stored, existed = nil, false
		res, err := s.exec(ctx, tx, `INSERT INTO settleflow_owner_grants (livemode, `+ownerGrantColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (livemode, nonce) DO NOTHING`,
			r.Environment.Livemode(), r.CustomerID, r.Ref, r.Owner, r.Nonce, r.Origin, r.Deadline.Unix(), r.TxHash, r.Effective,
			nullString(r.IdempotencyKey), nullString(r.RequestHash), micros(r.CreatedAt))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			if err != nil {
				return err
			}
			// The grant names the account's customer, so the owner it
			// sets (and a deposit made before any workflow) is announced
			// with the customer's id. The account's time is left as it is:
			// naming it changes no balance.
			if _, err := s.exec(ctx, tx, `INSERT INTO settleflow_accounts (livemode, ref, customer_id, updated_at) VALUES (?, ?, ?, ?)
				ON CONFLICT (livemode, ref) DO UPDATE SET customer_id = coalesce(settleflow_accounts.customer_id, excluded.customer_id)`,
				r.Environment.Livemode(), r.Ref, r.CustomerID, micros(r.CreatedAt)); err != nil {
				return err
			}
			cp := r
			stored = &cp
			return nil
		}
		existed = true
		st, err := s.stmt(ctx, `SELECT `+ownerGrantColumns+` FROM settleflow_owner_grants WHERE livemode = ? AND nonce = ?`)
		if err != nil {
			return err
		}
		stored, err = scanOwnerGrant(tx.StmtContext(ctx, st).QueryRowContext(ctx, r.Environment.Livemode(), r.Nonce), r.Environment)
		return err
	})
	return stored, existed, err
}

// OwnerGrantByKey implements settleflow.OwnerGrantStore.
func (s *Store) OwnerGrantByKey(ctx context.Context, env settleflow.Environment, key string, since time.Time) (*settleflow.OwnerGrantRecord, error) {
	r, err := scanOwnerGrant(s.db.QueryRowContext(ctx, `SELECT `+ownerGrantColumns+` FROM settleflow_owner_grants
		WHERE livemode = ? AND idempotency_key = ? AND created_at >= ? ORDER BY created_at DESC LIMIT 1`,
		env.Livemode(), key, micros(since)), env)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, settleflow.ErrNotFound
	}
	return r, err
}

// ListOwnerGrants implements settleflow.OwnerGrantStore. It reads every
// grant of env: for reconciliation, not for request paths.
func (s *Store) ListOwnerGrants(ctx context.Context, env settleflow.Environment) ([]settleflow.OwnerGrantRecord, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+ownerGrantColumns+` FROM settleflow_owner_grants WHERE livemode = ? ORDER BY created_at, nonce`, env.Livemode())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []settleflow.OwnerGrantRecord
	for rows.Next() {
		r, err := scanOwnerGrant(rows, env)
		if err != nil {
			return nil, err
		}
		out = append(out, *r)
	}
	return out, rows.Err()
}
