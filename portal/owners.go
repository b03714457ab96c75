package portal

import (
	"context"
	"math/big"
	"net/http"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/uptrace/bun"
	"go.uber.org/zap"

	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/wire"
)

// DefaultOwnerChangesPerDay is how many owner changes (connects that send
// the operator's setOwner) the portal sends for one customer in one UTC
// day when Options.OwnerChangesPerDay is 0.
const DefaultOwnerChangesPerDay = 3

// ownerChangeView is the owner change a customer's page shows: one the
// portal is sending or has sent (not mined yet), or one proposed on chain
// (effective after the notice unless the owner cancels it).
type ownerChangeView struct {
	// Address is the proposed owner, checksummed.
	Address string `json:"address"`
	// State: sending (the operator is sending it), pending (sent, not
	// mined), proposed (on chain, effective at EffectiveAt).
	State string `json:"state"`
	// Effective is now or after_notice once sent; EffectiveAt is when a
	// proposed change takes effect (Unix seconds; 0 before).
	Effective   string `json:"effective,omitempty"`
	EffectiveAt int64  `json:"effectiveAt,omitempty"`
	TxHash      string `json:"txHash,omitempty"`
}

// ownerChange brings the customer's owner changes the portal sent up to
// date (a mined one's cost recorded and counted once) and returns the one
// in flight or proposed on chain, nil if none.
func (h *Handler) ownerChange(ctx context.Context, s *session) (*ownerChangeView, error) {
	var rows []struct {
		Nonce     string  `bun:"nonce"`
		Address   string  `bun:"address"`
		Deadline  int64   `bun:"deadline"`
		TxHash    *string `bun:"tx_hash"`
		Effective string  `bun:"effective"`
		Status    string  `bun:"status"`
	}
	if err := h.opts.DB.Bun().NewRaw(`SELECT nonce, address, deadline, tx_hash, effective, status FROM portal_owner_changes
		WHERE environment = ? AND customer_id = ? AND status IN ('sending', 'pending')`, string(s.env), s.customerID).Scan(ctx, &rows); err != nil && !isNoRows(err) {
		return nil, err
	}
	var out *ownerChangeView
	for _, row := range rows {
		switch {
		case row.Status == "sending" && row.Deadline < h.now().Add(-time.Minute).Unix():
			// Its send never answered and its grant has expired: the
			// chain shows whatever it did.
			if err := h.moveOwnerChange(ctx, s, row.Nonce, "sending", "lost", settlement.RelayReceipt{}); err != nil {
				return nil, err
			}
			continue
		case row.Status == "pending" && row.TxHash != nil:
			rc, err := h.opts.Chain.RelayReceipt(ctx, s.env, *row.TxHash)
			if err != nil {
				return nil, err
			}
			if rc.Mined {
				to := "mined"
				if !rc.Succeeded {
					to = "failed"
				}
				if err := h.moveOwnerChange(ctx, s, row.Nonce, "pending", to, rc); err != nil {
					return nil, err
				}
				continue
			}
		}
		v := &ownerChangeView{Address: common.HexToAddress(row.Address).Hex(), State: row.Status, Effective: row.Effective}
		if row.TxHash != nil {
			v.TxHash = *row.TxHash
		}
		out = v
	}
	if out != nil {
		return out, nil
	}
	oc, err := h.opts.Chain.OwnerChange(ctx, s.env, s.customerID)
	if err != nil || oc == nil {
		return nil, err
	}
	return &ownerChangeView{Address: common.HexToAddress(oc.Next).Hex(), State: "proposed", Effective: wire.OwnerEffectiveAfterNotice,
		EffectiveAt: oc.EffectiveAt.Unix()}, nil
}

// moveOwnerChange moves a sent owner change from one state to the next; a
// mined one's cost is recorded and counted, once.
func (h *Handler) moveOwnerChange(ctx context.Context, s *session, nonce, from, to string, rc settlement.RelayReceipt) error {
	var moved bool
	err := h.opts.DB.Write(ctx, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewRaw("UPDATE portal_owner_changes SET status = ?, gas_used = ?, fee_wei = ? WHERE nonce = ? AND status = ?",
			to, int64(rc.GasUsed), feeString(rc), nonce, from).Exec(ctx)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		moved = err == nil && n == 1
		return err
	})
	if err != nil || !moved || !rc.Mined {
		return err
	}
	h.metrics.ownerGas.WithLabelValues(string(s.env)).Add(float64(rc.GasUsed))
	if rc.Fee != nil {
		f, _ := new(big.Float).SetInt(rc.Fee).Float64()
		h.metrics.ownerFee.WithLabelValues(string(s.env)).Add(f)
	}
	h.log.Info("portal owner change mined", zap.String("env", string(s.env)), zap.String("customer", s.customerID), zap.String("nonce", nonce),
		zap.Uint64("gasUsed", rc.GasUsed), zap.String("feeWei", feeString(rc)), zap.String("state", to))
	return nil
}

// ownerChangeGate answers a connect while an owner change is in flight or
// proposed: for the same address, that change again (nothing is sent);
// for another, a refusal. It reports whether it answered.
func (h *Handler) ownerChangeGate(w http.ResponseWriter, r *http.Request, s *session, address string) bool {
	oc, err := h.ownerChange(r.Context(), s)
	if err != nil {
		h.fail(w, r, s, err)
		return true
	}
	if oc == nil {
		return false
	}
	if strings.EqualFold(oc.Address, address) {
		writeJSON(w, http.StatusOK, map[string]any{"object": "owner_change", "livemode": s.env.Livemode(), "customerId": s.customerID,
			"address": oc.Address, "status": oc.State, "txHash": oc.TxHash, "effective": oc.Effective, "effectiveAt": oc.EffectiveAt, "already": true})
		return true
	}
	h.metrics.refused.WithLabelValues(string(s.env), "owner_change_pending").Inc()
	h.log.Info("portal connect refused: an owner change is pending", zap.String("env", string(s.env)), zap.String("customer", s.customerID),
		zap.String("pending", oc.Address), zap.String("asked", address))
	msg := "A change of this balance's owner to " + oc.Address + " is on its way to the network: nothing was sent. Wait until it is confirmed."
	if oc.State == "proposed" {
		msg = "A change of this balance's owner to " + oc.Address + " is already proposed, effective " +
			time.Unix(oc.EffectiveAt, 0).UTC().Format("2006-01-02 15:04 UTC") +
			": nothing was sent. The wallet that owns the balance now can cancel it; another change can be asked once it is canceled or done."
	}
	jsonError(w, http.StatusConflict, "", msg)
	return true
}

// ownerChangeCall answers POST owner/cancel: the owner's wallet's
// cancelOwnerChange of the change proposed for this customer.
func (h *Handler) ownerChangeCall(w http.ResponseWriter, r *http.Request, s *session) {
	var in struct{}
	if !readJSON(w, r, &in) || !h.needChain(w) {
		return
	}
	owner, err := h.opts.Chain.Owner(r.Context(), s.env, s.customerID)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	if owner == "" {
		jsonError(w, http.StatusConflict, "", "No wallet owns this balance: there is no owner change to cancel.")
		return
	}
	oc, err := h.opts.Chain.OwnerChange(r.Context(), s.env, s.customerID)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	if oc == nil {
		jsonError(w, http.StatusConflict, "", "No owner change is proposed for this balance: there is nothing to cancel.")
		return
	}
	call, err := h.opts.Chain.OwnerCall(s.env, s.customerID, CallCancelOwnerChange, 0)
	if err != nil {
		h.invalidOr(w, r, s, err)
		return
	}
	ci, _ := h.opts.Chain.Chain(s.env)
	writeJSON(w, http.StatusOK, map[string]any{"from": common.HexToAddress(owner).Hex(), "to": call.To, "data": call.Data,
		"chainId": "0x" + big.NewInt(ci.ChainID).Text(16), "next": common.HexToAddress(oc.Next).Hex()})
}

// CallCancelOwnerChange is the owner's call that cancels a proposed owner
// change (settlement.CallCancelOwnerChange).
const CallCancelOwnerChange = settlement.CallCancelOwnerChange
