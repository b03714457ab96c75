package server

import (
	"context"
	"database/sql"
	"strings"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/dashboard"
	"github.com/settleflow/settleflow/portal"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/storage"
	"github.com/settleflow/settleflow/wire"
)

// What the dashboard's customer page reads of the customer portal and of
// the chain. The portal's activity is read from the portal's own tables
// (portal_sessions, portal_nonces, portal_relays), read-only.

// dashboardPortal is the portal as the dashboard uses it.
type dashboardPortal struct {
	h  *portal.Handler
	db *storage.DB
}

var _ dashboard.Portal = dashboardPortal{}

// portalRelaysShown bounds the relayed deposits a customer page lists.
const portalRelaysShown = 10

func (p dashboardPortal) PreviewSession(ctx context.Context, env settleflow.Environment, customerID string) (*wire.PortalSession, error) {
	return p.h.CreateSession(ctx, portal.SessionParams{Environment: env, CustomerID: customerID, Preview: true})
}

func (p dashboardPortal) Activity(ctx context.Context, env settleflow.Environment, customerID string) (*dashboard.PortalActivity, error) {
	db := p.db.Bun()
	a := &dashboard.PortalActivity{}
	var last sql.NullInt64
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*), MAX(created_at) FROM portal_sessions WHERE environment = ? AND customer_id = ? AND preview = 0",
		string(env), customerID).Scan(&a.Sessions, &last); err != nil {
		return nil, err
	}
	if last.Valid {
		a.LastSession = storage.FromMicros(last.Int64)
	}
	last = sql.NullInt64{}
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*), MAX(used_at) FROM portal_nonces WHERE environment = ? AND customer_id = ? AND used_at IS NOT NULL",
		string(env), customerID).Scan(&a.Connects, &last); err != nil {
		return nil, err
	}
	if last.Valid {
		a.LastConnect = storage.FromMicros(last.Int64)
	}
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*), COALESCE(SUM(amount), 0) FROM portal_relays WHERE environment = ? AND customer_id = ?",
		string(env), customerID).Scan(&a.RelayCount, &a.RelayAmount); err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, "SELECT tx_hash, from_address, amount, status, gas_used, created_at FROM portal_relays WHERE environment = ? AND customer_id = ? ORDER BY created_at DESC LIMIT ?",
		string(env), customerID, portalRelaysShown)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var r dashboard.PortalRelay
		var at int64
		if err := rows.Scan(&r.TxHash, &r.From, &r.Amount, &r.Status, &r.GasUsed, &at); err != nil {
			return nil, err
		}
		r.TxHash, r.From, r.CreatedAt = strings.TrimSpace(r.TxHash), strings.TrimSpace(r.From), storage.FromMicros(at)
		a.Relays = append(a.Relays, r)
	}
	return a, rows.Err()
}

// customerOnChain reads, for the dashboard, the withdrawal under notice and
// an owner change proposed, from a settler that reads them (the shipped
// one); nil if it does not.
func customerOnChain(c settler) func(ctx context.Context, env settleflow.Environment, customerID string) (*dashboard.CustomerOnChain, error) {
	type reader interface {
		Withdrawal(ctx context.Context, env settleflow.Environment, customerID string) (settlement.Withdrawal, error)
		OwnerChange(ctx context.Context, env settleflow.Environment, customerID string) (*settlement.OwnerChange, error)
	}
	r, ok := c.(reader)
	if !ok {
		return nil
	}
	return func(ctx context.Context, env settleflow.Environment, customerID string) (*dashboard.CustomerOnChain, error) {
		w, err := r.Withdrawal(ctx, env, customerID)
		if err != nil {
			return nil, err
		}
		oc, err := r.OwnerChange(ctx, env, customerID)
		if err != nil {
			return nil, err
		}
		out := &dashboard.CustomerOnChain{Withdrawal: w.Pending, WithdrawalAt: w.AvailableAt}
		if oc != nil {
			out.NextOwner, out.NextOwnerAt = oc.Next, oc.EffectiveAt
		}
		return out, nil
	}
}
