package portal

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/storage"
	"github.com/settleflow/settleflow/wire"
)

// A customer's statement: every line that moved or held its balance,
// newest first. Charges are its Settled workflows (what was charged and
// what of it was refunded), refunds its Succeeded refunds, and the balance
// changes the funds follower applied from the chain (deposits, withdrawal
// requests, cancellations and withdrawals, owner changes), read from the
// engine's own tables so that the statement is what the engine knows.

// Kinds of statement lines.
const (
	LineCharge              = "charge"
	LineRefund              = "refund"
	LineDeposit             = "deposit"
	LineWithdrawn           = "withdrawn"
	LineWithdrawalRequested = "withdrawal_requested"
	LineWithdrawalCanceled  = "withdrawal_canceled"
	LineOwnerSet            = "owner_set"
)

// Line is one line of a statement.
type Line struct {
	Kind string
	// Key orders lines that share a time; with At it is the keyset
	// cursor.
	Key string
	At  time.Time
	// Ref is the workflow (charge), refund (refund) or transaction hash.
	Ref string
	// Product is the charged workflow's product; for a refund, the
	// refunded workflow.
	Product string
	// Amount is the line's amount in cents: positive what it adds to the
	// balance (deposits, refunds), negative what it takes (charges,
	// withdrawals), 0 for lines that move nothing (an owner set, a
	// withdrawal canceled); a withdrawal request shows what it put under
	// notice as a positive Held.
	Amount int64
	Held   int64
	// Refunded is what was refunded of a charge, in cents.
	Refunded int64
	// TxHash is the transaction that settled the line; empty if unknown.
	TxHash string
}

// statementQuery is the union of the three sources, each with a kind, a
// sort key, a time in Unix microseconds, a reference, a product, an
// amount, a refunded amount and its settlement (JSON) or transaction.
const statementQuery = `SELECT kind, skey, at, ref, product, amount, refunded, tx FROM (
  SELECT 'charge' AS kind, 'w' || id AS skey, updated_at AS at, id AS ref, product, COALESCE(charged, quoted_amount) AS amount,
         refunded, COALESCE(settlement, '') AS tx
    FROM settleflow_workflows WHERE livemode = ? AND customer_id = ? AND status = 'Settled'
  UNION ALL
  SELECT 'refund', 'r' || id, updated_at, id, workflow_id, amount, 0, COALESCE(settlement, '')
    FROM settleflow_refunds WHERE livemode = ? AND customer_id = ? AND status = 'Succeeded'
  UNION ALL
  SELECT kind, 'f' || tx_hash || ':' || CAST(log_index AS VARCHAR(12)), applied_at, tx_hash, '', amount, 0, tx_hash
    FROM settleflow_funds_events WHERE livemode = ? AND ref = ? AND reverted = ?
) lines WHERE %s ORDER BY at DESC, skey DESC LIMIT ?`

// statement returns up to limit lines of the customer's statement older
// than the cursor (before: "micros.key", "" for the newest), within
// [from, to) when they are set, and the cursor of the next page ("" at
// the end).
func (h *Handler) statement(ctx context.Context, env settleflow.Environment, customerID, ref, before string, from, to time.Time, limit int) ([]Line, string, error) {
	live := env.Livemode()
	args := []any{live, customerID, live, customerID, live, ref, false}
	var where []string
	if before != "" {
		at, key, ok := strings.Cut(before, ".")
		us, err := strconv.ParseInt(at, 10, 64)
		if !ok || err != nil || key == "" || len(key) > 400 {
			return nil, "", errBadCursor
		}
		where = append(where, "(at < ? OR (at = ? AND skey < ?))")
		args = append(args, us, us, key)
	}
	if !from.IsZero() {
		where = append(where, "at >= ?")
		args = append(args, storage.Micros(from))
	}
	if !to.IsZero() {
		where = append(where, "at < ?")
		args = append(args, storage.Micros(to))
	}
	if len(where) == 0 {
		where = append(where, "1 = 1")
	}
	args = append(args, limit+1)
	rows, err := h.opts.DB.Bun().QueryContext(ctx, fmt.Sprintf(statementQuery, strings.Join(where, " AND ")), args...)
	if err != nil {
		return nil, "", fmt.Errorf("portal: statement: %w", err)
	}
	defer rows.Close()
	var out []Line
	for rows.Next() {
		var l Line
		var us int64
		var tx string
		if err := rows.Scan(&l.Kind, &l.Key, &us, &l.Ref, &l.Product, &l.Amount, &l.Refunded, &tx); err != nil {
			return nil, "", fmt.Errorf("portal: statement: %w", err)
		}
		l.At = storage.FromMicros(us)
		switch l.Kind {
		case LineCharge, LineRefund:
			var st wire.Settlement
			if tx != "" && json.Unmarshal([]byte(tx), &st) == nil {
				l.TxHash = st.TxHash
			}
			if l.Kind == LineCharge {
				l.Amount = -l.Amount
			}
		case LineWithdrawn:
			l.TxHash, l.Amount = tx, -l.Amount
		case LineWithdrawalRequested:
			l.TxHash, l.Held, l.Amount = tx, l.Amount, 0
		case LineWithdrawalCanceled, LineOwnerSet:
			l.TxHash, l.Amount = tx, 0
		default:
			l.TxHash = tx
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("portal: statement: %w", err)
	}
	next := ""
	if len(out) > limit {
		out = out[:limit]
		last := out[limit-1]
		next = strconv.FormatInt(storage.Micros(last.At), 10) + "." + last.Key
	}
	return out, next, nil
}
