package dashboard

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/wire"
	"go.uber.org/zap"
)

// A customer's page shows, besides its balance, what its owner and the
// customer portal did: the owner the contract records and an owner change
// proposed, the withdrawal under notice, the customer events the funds
// follower emitted, and the portal's activity (sessions opened, wallets
// connected, deposits relayed); and it opens a read-only preview of the
// customer's portal.

// CustomerOnChain is what the settlement contract holds for a customer now,
// beyond its balance: the withdrawal under notice and an owner change the
// operator proposed.
type CustomerOnChain struct {
	// Withdrawal is the amount under withdrawal notice (minor units), 0
	// none; WithdrawalAt is when it can be withdrawn.
	Withdrawal   int64
	WithdrawalAt time.Time
	// NextOwner is a proposed owner (checksummed hex), "" none; it owns the
	// balance from NextOwnerAt unless the current owner cancels it.
	NextOwner   string
	NextOwnerAt time.Time
}

// Portal is the customer portal as the dashboard uses it (the server wires
// the portal package's handler).
type Portal interface {
	// PreviewSession issues a one-time link that opens a read-only portal
	// session for the customer in env: what the customer sees, with no
	// connect, deposit or withdrawal.
	PreviewSession(ctx context.Context, env settleflow.Environment, customerID string) (*wire.PortalSession, error)
	// Activity reads what the customer did in the portal in env.
	Activity(ctx context.Context, env settleflow.Environment, customerID string) (*PortalActivity, error)
}

// PortalActivity is a customer's activity in the portal of one
// environment.
type PortalActivity struct {
	// Sessions counts the portal sessions the customer opened (previews
	// not counted); LastSession is the newest one's start.
	Sessions    int64
	LastSession time.Time
	// Connects counts the wallets the customer connected (connect
	// signatures accepted); LastConnect is the newest.
	Connects    int64
	LastConnect time.Time
	// Relays are the newest deposits the portal relayed, newest first;
	// RelayCount and RelayAmount count them all (minor units).
	Relays      []PortalRelay
	RelayCount  int64
	RelayAmount int64
}

// PortalRelay is one deposit the portal relayed for the customer: the
// operator sent the wallet's signed deposit and paid its gas.
type PortalRelay struct {
	TxHash string
	From   string
	Amount int64
	Status string
	// GasUsed is the gas the operator paid for (0 until mined).
	GasUsed   int64
	CreatedAt time.Time
}

// customerEventsScanned bounds the newest events of each customer type the
// page reads to find the customer's.
const customerEventsScanned = 100

// customerEventTypes are the events about a customer's balance.
var customerEventTypes = []settleflow.EventType{settleflow.EventCustomerOwnerSet, settleflow.EventCustomerWithdrawalRequested, settleflow.EventCustomerFunded}

// customerEvent is one line of the customer page's events.
type customerEvent struct {
	ID     string
	Type   settleflow.EventType
	At     time.Time
	Detail string
	TxHash string
	TxURL  string
}

// ownerView is the owner part of a customer's page.
type ownerView struct {
	OnChain      *CustomerOnChain
	ChainError   string
	Events       []customerEvent
	EventsCapped bool
	Activity     *PortalActivity
	ActivityErr  string
	Portal       bool
}

// ownerViewOf gathers the customer's owner, withdrawal, events and portal
// activity. What cannot be read is said on the page, not a failure of it.
func (h *Handler) ownerViewOf(ctx context.Context, env settleflow.Environment, c *settleflow.Customer) (ownerView, error) {
	v := ownerView{Portal: h.opts.Portal != nil}
	if h.opts.CustomerChain != nil && c.Deposit != nil {
		oc, err := h.opts.CustomerChain(ctx, env, c.ID)
		if err != nil {
			h.log.Warn("dashboard: reading the customer on chain failed", zap.String("customer", c.ID), zap.Error(err))
			v.ChainError = "The chain could not be read just now; the withdrawal's due time and any owner change proposed are not shown."
		} else {
			v.OnChain = oc
		}
	}
	for _, typ := range customerEventTypes {
		pg, err := h.opts.Engine.ListEvents(ctx, settleflow.EventListParams{Environment: env, Type: typ, Limit: customerEventsScanned})
		if err != nil {
			return v, err
		}
		v.EventsCapped = v.EventsCapped || pg.HasMore
		for i := range pg.Data {
			ev := &pg.Data[i]
			if ev.Data.CustomerID != c.ID {
				continue
			}
			line := customerEvent{ID: ev.ID, Type: ev.Type, At: ev.CreatedAt}
			switch d := ev.Data; {
			case d.Owner != nil:
				line.Detail, line.TxHash = "owner set to "+d.Owner.Address, d.Owner.TxHash
			case d.Withdrawal != nil:
				line.Detail, line.TxHash = formatMoney(d.Withdrawal.Amount.Amount, d.Withdrawal.Amount.Currency)+" under withdrawal notice", d.Withdrawal.TxHash
				if d.Withdrawal.AvailableAt != nil {
					line.Detail += ", due " + d.Withdrawal.AvailableAt.UTC().Format("2006-01-02 15:04 UTC")
				}
			case d.Deposit != nil:
				line.Detail, line.TxHash = formatMoney(d.Deposit.Amount.Amount, d.Deposit.Amount.Currency)+" deposited", d.Deposit.TxHash
			}
			if x := h.opts.Explorers[env]; x != "" && line.TxHash != "" {
				line.TxURL = x + line.TxHash
			}
			v.Events = append(v.Events, line)
		}
	}
	// Newest first, across the types.
	for i := 1; i < len(v.Events); i++ {
		for j := i; j > 0 && v.Events[j].ID > v.Events[j-1].ID; j-- {
			v.Events[j], v.Events[j-1] = v.Events[j-1], v.Events[j]
		}
	}
	if h.opts.Portal != nil {
		a, err := h.opts.Portal.Activity(ctx, env, c.ID)
		if err != nil {
			h.log.Warn("dashboard: reading the portal's activity failed", zap.String("customer", c.ID), zap.Error(err))
			v.ActivityErr = "The portal's activity could not be read just now."
		} else {
			v.Activity = a
		}
	}
	return v, nil
}

type previewData struct {
	CustomerID string
	Session    *wire.PortalSession
}

// previewPortal issues a read-only preview link of the customer's portal
// and shows it: the operator opens it (in a new tab) to see what the
// customer sees. Nothing the customer owns changes.
func (h *Handler) previewPortal(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	if h.opts.Portal == nil {
		h.render(w, r, http.StatusNotFound, "message", page{Title: "No customer portal", Nav: "customers",
			Error: "This server does not serve the customer portal, so there is nothing to preview."})
		return
	}
	ps, err := h.opts.Portal.PreviewSession(r.Context(), s.env, id)
	var inv *settleflow.InvalidError
	switch {
	case errors.As(err, &inv):
		h.customersPageWith(w, r, s, id, http.StatusBadRequest, page{Error: "No such customer id: " + inv.Message + "."})
		return
	case errors.Is(err, settleflow.ErrRefundsNotSupported):
		h.render(w, r, http.StatusConflict, "message", page{Title: "No customer portal", Nav: "customers",
			Error: "Charges in " + string(s.env) + " mode are not paid from customer balances, so there is no portal to preview."})
		return
	case err != nil:
		h.fail(w, r, err)
		return
	}
	h.log.Info("dashboard: portal preview issued", zap.String("customer", id), zap.String("env", string(s.env)), zap.String("session", ps.ID))
	h.render(w, r, http.StatusOK, "preview", page{Title: "Preview " + id + "'s portal", Nav: "customers",
		Data: previewData{CustomerID: id, Session: ps}})
}
