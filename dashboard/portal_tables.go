package dashboard

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/portal"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/storage"
	"github.com/settleflow/settleflow/wire"
)

// What the dashboard's customer page reads of the customer portal and of
// the chain. The portal's activity is read from the portal's own tables
// (portal_sessions, portal_nonces, portal_relays), read-only.

// PortalOf is the portal package's handler h as the dashboard uses it:
// previews are its read-only sessions, the activity is read from its
// tables in db (the database h was made with).
func PortalOf(h *portal.Handler, db *storage.DB) Portal { return portalTables{h, db} }

type portalTables struct {
	h  *portal.Handler
	db *storage.DB
}

// portalRelaysShown bounds the relayed deposits a customer page lists.
const portalRelaysShown = 10

func (p portalTables) PreviewSession(ctx context.Context, env settleflow.Environment, customerID string) (*wire.PortalSession, error) {
	return p.h.CreateSession(ctx, portal.SessionParams{Environment: env, CustomerID: customerID, Preview: true})
}

func (p portalTables) Activity(ctx context.Context, env settleflow.Environment, customerID string) (*PortalActivity, error) {
	db := p.db.Bun()
	a := &PortalActivity{}
	var last sql.NullInt64
	if err := db.NewRaw("SELECT COUNT(*), MAX(created_at) FROM portal_sessions WHERE environment = ? AND customer_id = ? AND preview = 0",
		string(env), customerID).Scan(ctx, &a.Sessions, &last); err != nil {
		return nil, err
	}
	if last.Valid {
		a.LastSession = storage.FromMicros(last.Int64)
	}
	last = sql.NullInt64{}
	if err := db.NewRaw("SELECT COUNT(*), MAX(used_at) FROM portal_nonces WHERE environment = ? AND customer_id = ? AND used_at IS NOT NULL",
		string(env), customerID).Scan(ctx, &a.Connects, &last); err != nil {
		return nil, err
	}
	if last.Valid {
		a.LastConnect = storage.FromMicros(last.Int64)
	}
	if err := db.NewRaw("SELECT COUNT(*), COALESCE(SUM(amount), 0) FROM portal_relays WHERE environment = ? AND customer_id = ?",
		string(env), customerID).Scan(ctx, &a.RelayCount, &a.RelayAmount); err != nil {
		return nil, err
	}
	var rows []struct {
		TxHash  string `bun:"tx_hash"`
		From    string `bun:"from_address"`
		Amount  int64  `bun:"amount"`
		Status  string `bun:"status"`
		GasUsed int64  `bun:"gas_used"`
		At      int64  `bun:"created_at"`
	}
	if err := db.NewRaw("SELECT tx_hash, from_address, amount, status, gas_used, created_at FROM portal_relays WHERE environment = ? AND customer_id = ? ORDER BY created_at DESC LIMIT ?",
		string(env), customerID, portalRelaysShown).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	for _, r := range rows {
		a.Relays = append(a.Relays, PortalRelay{TxHash: strings.TrimSpace(r.TxHash), From: strings.TrimSpace(r.From), Amount: r.Amount,
			Status: r.Status, GasUsed: r.GasUsed, CreatedAt: storage.FromMicros(r.At)})
	}
	return a, nil
}

// ChainOf reads, for Options.CustomerChain, the withdrawal under notice and
// an owner change proposed from a settler that reads them (the shipped
// settlement.Settler and Simulated); nil if c does not.
func ChainOf(c any) func(ctx context.Context, env settleflow.Environment, customerID string) (*CustomerOnChain, error) {
	type reader interface {
		Withdrawal(ctx context.Context, env settleflow.Environment, customerID string) (settlement.Withdrawal, error)
		OwnerChange(ctx context.Context, env settleflow.Environment, customerID string) (*settlement.OwnerChange, error)
	}
	r, ok := c.(reader)
	if !ok {
		return nil
	}
	return func(ctx context.Context, env settleflow.Environment, customerID string) (*CustomerOnChain, error) {
		w, err := r.Withdrawal(ctx, env, customerID)
		if err != nil {
			return nil, err
		}
		oc, err := r.OwnerChange(ctx, env, customerID)
		if err != nil {
			return nil, err
		}
		out := &CustomerOnChain{Withdrawal: w.Pending, WithdrawalAt: w.AvailableAt}
		if oc != nil {
			out.NextOwner, out.NextOwnerAt = oc.Next, oc.EffectiveAt
		}
		return out, nil
	}
}
