package portal

import (
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/uptrace/bun"
	"go.uber.org/zap"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/storage"
)

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// ConnectTTL is how long a connect grant the portal issues stays valid.
const ConnectTTL = 10 * time.Minute

// DepositTTL is how long a deposit authorization the portal prepares
// stays valid.
const DepositTTL = 15 * time.Minute

func (h *Handler) needChain(w http.ResponseWriter) bool {
	if h.opts.Chain == nil {
		jsonError(w, http.StatusConflict, "", "This portal cannot reach the chain: it shows balances and statements only.")
		return false
	}
	return true
}

// connectGrant answers POST connect/grant {"address"}: an OwnerGrant of
// address for this customer, its nonce recorded for this session, its
// origin the portal's, for the wallet to sign.
func (h *Handler) connectGrant(w http.ResponseWriter, r *http.Request, s *session) {
	var in struct {
		Address string `json:"address"`
	}
	if !readJSON(w, r, &in) || !h.needChain(w) {
		return
	}
	if !common.IsHexAddress(in.Address) || !strings.HasPrefix(in.Address, "0x") {
		jsonError(w, http.StatusBadRequest, "address", "The wallet's address is not a 0x address.")
		return
	}
	g, err := h.opts.Engine.CreateOwnerGrant(r.Context(), settleflow.OwnerGrantParams{Environment: s.env, CustomerID: s.customerID,
		Address: in.Address, Origin: h.origin(), Deadline: h.now().Add(ConnectTTL).Truncate(time.Second)})
	if err != nil {
		h.invalidOr(w, r, s, err)
		return
	}
	if err := h.opts.DB.Write(r.Context(), func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewRaw("INSERT INTO portal_nonces (nonce, session, environment, customer_id, address, deadline) VALUES (?, ?, ?, ?, ?, ?)",
			g.Nonce, s.idHash, string(s.env), s.customerID, strings.ToLower(g.Address), g.Deadline).Exec(ctx)
		if err != nil {
			return err
		}
		_, err = tx.NewRaw("DELETE FROM portal_nonces WHERE deadline < ?", h.now().Add(-24*time.Hour).Unix()).Exec(ctx)
		return err
	}); err != nil {
		h.fail(w, r, s, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"nonce": g.Nonce, "deadline": g.Deadline, "origin": g.Origin, "typedData": g.TypedData})
}

// connect answers POST connect {"address", "nonce", "signature"}: the
// grant the portal issued to this session under nonce, signed, is sent
// through the engine's owner path (SetOwner). A nonce not issued to this
// session, used, or expired is refused; so is a signature of anything else
// (another origin, chain, customer or address: the settler recovers
// another signer). Nothing is sent then.
func (h *Handler) connect(w http.ResponseWriter, r *http.Request, s *session) {
	var in struct {
		Address   string `json:"address"`
		Nonce     string `json:"nonce"`
		Signature string `json:"signature"`
	}
	if !readJSON(w, r, &in) || !h.needChain(w) {
		return
	}
	var row struct {
		Address  string `bun:"address"`
		Deadline int64  `bun:"deadline"`
		UsedAt   *int64 `bun:"used_at"`
	}
	err := h.opts.DB.Bun().NewRaw("SELECT address, deadline, used_at FROM portal_nonces WHERE nonce = ? AND session = ? AND environment = ? AND customer_id = ?",
		strings.ToLower(in.Nonce), s.idHash, string(s.env), s.customerID).Scan(r.Context(), &row)
	switch {
	case isNoRows(err):
		h.metrics.refused.WithLabelValues(string(s.env), "signature").Inc()
		jsonError(w, http.StatusBadRequest, "nonce", "This signature's request was not issued to this page: nothing was changed. Connect again.")
		return
	case err != nil:
		h.fail(w, r, s, err)
		return
	case row.UsedAt != nil:
		h.metrics.refused.WithLabelValues(string(s.env), "signature").Inc()
		jsonError(w, http.StatusBadRequest, "nonce", "This signature was used already: each one connects a wallet once. Nothing was changed.")
		return
	case row.Deadline <= h.now().Unix():
		jsonError(w, http.StatusBadRequest, "deadline", "This signature's request expired: nothing was changed. Connect again.")
		return
	case !strings.EqualFold(row.Address, in.Address):
		h.metrics.refused.WithLabelValues(string(s.env), "signature").Inc()
		jsonError(w, http.StatusBadRequest, "address", "This signature's request was for another address: nothing was changed. Connect again.")
		return
	}
	// At most one owner change in flight or proposed per customer, and at
	// most OwnerChangesPerDay sent a day: each is a transaction the
	// operator pays.
	if done := h.ownerChangeGate(w, r, s, row.Address); done {
		return
	}
	day := h.day()
	ok, err := h.takeSlot(r.Context(), ownerWindows, s, day, h.opts.OwnerChangesPerDay)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	if !ok {
		h.metrics.refused.WithLabelValues(string(s.env), "owner_change_limit").Inc()
		h.log.Warn("portal connect refused: daily owner change limit", zap.String("env", string(s.env)), zap.String("customer", s.customerID))
		jsonError(w, http.StatusTooManyRequests, "", fmt.Sprintf("This page sends at most %d wallet changes a day for this account: nothing was sent. Try again tomorrow (UTC).", h.opts.OwnerChangesPerDay))
		return
	}
	// Spent before it is sent, and the change recorded as in flight in the
	// same transaction: a second request with the nonce, or a concurrent
	// connect of this customer (the in-flight unique index), is refused
	// here even while the first is on its way.
	nonce := strings.ToLower(in.Nonce)
	var spent, inFlight bool
	if err := h.opts.DB.Write(r.Context(), func(ctx context.Context, tx bun.Tx) error {
		spent, inFlight = false, false
		res, err := tx.NewRaw("UPDATE portal_nonces SET used_at = ? WHERE nonce = ? AND used_at IS NULL", storage.Micros(h.now()), nonce).Exec(ctx)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return err
		}
		spent = true
		res, err = tx.NewRaw(`INSERT INTO portal_owner_changes (nonce, environment, customer_id, address, deadline, created_at, status)
			VALUES (?, ?, ?, ?, ?, ?, 'sending') ON CONFLICT DO NOTHING`,
			nonce, string(s.env), s.customerID, strings.ToLower(row.Address), row.Deadline, storage.Micros(h.now())).Exec(ctx)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			inFlight = true
			return errInFlight // rolls the nonce back: nothing was sent
		}
		return nil
	}); err != nil && !errors.Is(err, errInFlight) {
		h.giveOwnerSlot(r, s, day)
		h.fail(w, r, s, err)
		return
	}
	if !spent || inFlight {
		h.giveOwnerSlot(r, s, day)
		if inFlight {
			h.metrics.refused.WithLabelValues(string(s.env), "owner_change_pending").Inc()
			jsonError(w, http.StatusConflict, "", "Another wallet change for this account is on its way to the network: nothing was sent. Wait until it is confirmed.")
			return
		}
		jsonError(w, http.StatusBadRequest, "nonce", "This signature was used already: each one connects a wallet once. Nothing was changed.")
		return
	}
	c, _, err := h.opts.Engine.SetOwner(r.Context(), settleflow.SetOwnerParams{Environment: s.env, CustomerID: s.customerID,
		Grant: settleflow.OwnerGrant{Owner: row.Address, Nonce: nonce, Origin: h.origin(),
			Deadline: time.Unix(row.Deadline, 0).UTC(), Signature: in.Signature}})
	if err != nil {
		var ie *settleflow.InvalidError
		if errors.As(err, &ie) {
			// Nothing was sent: the request may be signed again, correctly.
			if werr := h.opts.DB.Write(r.Context(), func(ctx context.Context, tx bun.Tx) error {
				if _, err := tx.NewRaw("UPDATE portal_nonces SET used_at = NULL WHERE nonce = ?", nonce).Exec(ctx); err != nil {
					return err
				}
				_, err := tx.NewRaw("DELETE FROM portal_owner_changes WHERE nonce = ?", nonce).Exec(ctx)
				return err
			}); werr != nil {
				h.log.Warn("portal: undoing a refused connect", zap.Error(werr))
			}
			h.giveOwnerSlot(r, s, day)
			h.metrics.refused.WithLabelValues(string(s.env), "signature").Inc()
		}
		// Another error may have sent the transaction: the row stays
		// 'sending' until the grant's deadline (see ownerChanges).
		h.invalidOr(w, r, s, err)
		return
	}
	if err := h.opts.DB.Write(context.WithoutCancel(r.Context()), func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewRaw("UPDATE portal_owner_changes SET tx_hash = ?, effective = ?, status = 'pending' WHERE nonce = ?",
			strings.ToLower(c.TxHash), c.Effective, nonce).Exec(ctx)
		return err
	}); err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.metrics.ownerChanges.WithLabelValues(string(s.env), c.Effective).Inc()
	c.Address = common.HexToAddress(c.Address).Hex()
	h.log.Info("portal connect", zap.String("env", string(s.env)), zap.String("customer", s.customerID), zap.String("owner", c.Address),
		zap.String("tx", c.TxHash), zap.String("effective", c.Effective))
	writeJSON(w, http.StatusOK, c)
}

var errInFlight = errors.New("portal: an owner change is in flight")

func (h *Handler) giveOwnerSlot(r *http.Request, s *session, day int64) {
	if err := h.giveSlot(context.WithoutCancel(r.Context()), ownerWindows, s, day); err != nil {
		h.log.Warn("portal: returning an owner change slot", zap.Error(err))
	}
}

// prepareDeposit answers POST deposit/prepare {"from", "amount"}
// (dollars and cents): the typed data of the token's
// ReceiveWithAuthorization for the wallet to sign, and the authorization
// to send back with the signature.
func (h *Handler) prepareDeposit(w http.ResponseWriter, r *http.Request, s *session) {
	var in struct {
		From   string `json:"from"`
		Amount string `json:"amount"`
	}
	if !readJSON(w, r, &in) || !h.needChain(w) {
		return
	}
	cents, err := parseAmount(in.Amount)
	if err != nil {
		jsonError(w, http.StatusBadRequest, "amount", "Not an amount: "+err.Error()+".")
		return
	}
	if cents < h.opts.MinDeposit {
		h.metrics.refused.WithLabelValues(string(s.env), "below_minimum").Inc()
		jsonError(w, http.StatusBadRequest, "amount", fmt.Sprintf("The smallest deposit is %s.", formatUSD(h.opts.MinDeposit)))
		return
	}
	if !common.IsHexAddress(in.From) || !strings.HasPrefix(in.From, "0x") {
		jsonError(w, http.StatusBadRequest, "from", "The wallet's address is not a 0x address.")
		return
	}
	if used, err := h.relaysUsed(r.Context(), s, h.hour()); err != nil {
		h.fail(w, r, s, err)
		return
	} else if used >= h.opts.RelaysPerHour {
		h.metrics.refused.WithLabelValues(string(s.env), "relay_limit").Inc()
		jsonError(w, http.StatusTooManyRequests, "", fmt.Sprintf("You have made %d deposits this hour, the most this page relays; try again after the hour.", used))
		return
	}
	holds, err := h.opts.Chain.WalletBalance(r.Context(), s.env, in.From)
	if err != nil {
		h.invalidOr(w, r, s, err)
		return
	}
	if holds < cents {
		jsonError(w, http.StatusBadRequest, "amount", fmt.Sprintf("Your wallet holds %s, less than %s.", formatUSD(holds), formatUSD(cents)))
		return
	}
	owner, err := h.opts.Chain.Owner(r.Context(), s.env, s.customerID)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	a := settlement.DepositAuthorization{From: in.From, Owner: owner, Amount: cents, ValidBefore: h.now().Add(DepositTTL).Unix(), Salt: newHex(32)}
	td, err := h.opts.Chain.DepositTypedData(r.Context(), s.env, s.customerID, a)
	if err != nil {
		h.invalidOr(w, r, s, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"authorization": authJSON(a), "typedData": json.RawMessage(td)})
}

// authorizationJSON is a deposit authorization as the page holds it.
type authorizationJSON struct {
	From        string `json:"from"`
	Owner       string `json:"owner"`
	Amount      int64  `json:"amount"`
	ValidBefore int64  `json:"validBefore"`
	Salt        string `json:"salt"`
	Signature   string `json:"signature,omitempty"`
}

func authJSON(a settlement.DepositAuthorization) authorizationJSON {
	return authorizationJSON{From: a.From, Owner: a.Owner, Amount: a.Amount, ValidBefore: a.ValidBefore, Salt: a.Salt, Signature: a.Signature}
}

// relayDeposit answers POST deposit: the signed authorization is counted
// against the customer's hourly limit, checked and relayed (the operator
// pays the gas).
func (h *Handler) relayDeposit(w http.ResponseWriter, r *http.Request, s *session) {
	var in authorizationJSON
	if !readJSON(w, r, &in) || !h.needChain(w) {
		return
	}
	if in.Amount < h.opts.MinDeposit {
		h.metrics.refused.WithLabelValues(string(s.env), "below_minimum").Inc()
		jsonError(w, http.StatusBadRequest, "amount", fmt.Sprintf("The smallest deposit is %s: nothing was sent.", formatUSD(h.opts.MinDeposit)))
		return
	}
	hour := h.hour()
	ok, err := h.takeRelaySlot(r.Context(), s, hour)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	if !ok {
		h.metrics.refused.WithLabelValues(string(s.env), "relay_limit").Inc()
		jsonError(w, http.StatusTooManyRequests, "", fmt.Sprintf("This page relays at most %d deposits an hour for you: nothing was sent. Try again after the hour.", h.opts.RelaysPerHour))
		return
	}
	a := settlement.DepositAuthorization{From: in.From, Owner: in.Owner, Amount: in.Amount, ValidBefore: in.ValidBefore, Salt: in.Salt, Signature: in.Signature}
	tx, err := h.opts.Chain.RelayDeposit(r.Context(), s.env, s.customerID, a)
	if err != nil {
		// Nothing was sent: the slot is not spent.
		if gerr := h.giveRelaySlot(r.Context(), s, hour); gerr != nil {
			h.log.Warn("portal: returning a relay slot", zap.Error(gerr))
		}
		var be *settlement.RelayBudgetError
		if errors.As(err, &be) {
			h.metrics.refused.WithLabelValues(string(s.env), "relay_budget").Inc()
			jsonError(w, http.StatusTooManyRequests, "", fmt.Sprintf("This page has relayed all the deposits it can this hour: nothing was sent. Try again after %s.", be.Until.Format("15:04 UTC")))
			return
		}
		var ie *settleflow.InvalidError
		if errors.As(err, &ie) {
			h.metrics.refused.WithLabelValues(string(s.env), "signature").Inc()
		}
		h.invalidOr(w, r, s, err)
		return
	}
	now := h.now()
	fresh := false
	// Sent: recorded even if the request ended meanwhile (the operator
	// pays for it).
	if err := h.opts.DB.Write(context.WithoutCancel(r.Context()), func(ctx context.Context, t bun.Tx) error {
		res, err := t.NewRaw(`INSERT INTO portal_relays (tx_hash, environment, customer_id, from_address, amount, created_at, status)
			VALUES (?, ?, ?, ?, ?, ?, 'pending') ON CONFLICT (tx_hash) DO NOTHING`,
			strings.ToLower(tx), string(s.env), s.customerID, strings.ToLower(in.From), in.Amount, storage.Micros(now)).Exec(ctx)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		fresh = err == nil && n == 1
		return err
	}); err != nil {
		h.fail(w, r, s, err)
		return
	}
	if !fresh {
		// The same authorization sent again: answered with its first
		// transaction, relayed once.
		writeJSON(w, http.StatusOK, map[string]any{"txHash": tx, "amount": in.Amount, "state": "pending"})
		return
	}
	h.metrics.relays.WithLabelValues(string(s.env)).Inc()
	h.log.Info("portal deposit relayed", zap.String("env", string(s.env)), zap.String("customer", s.customerID),
		zap.Int64("amount", in.Amount), zap.String("from", in.From), zap.String("tx", tx))
	writeJSON(w, http.StatusOK, map[string]any{"txHash": tx, "amount": in.Amount, "state": "pending"})
}

// withdrawalCall answers POST withdrawal/call {"method", "amount"}: the
// transaction the owner's wallet sends (eth_sendTransaction), from the
// owner.
func (h *Handler) withdrawalCall(w http.ResponseWriter, r *http.Request, s *session) {
	var in struct {
		Method string `json:"method"`
		Amount string `json:"amount"`
	}
	if !readJSON(w, r, &in) || !h.needChain(w) {
		return
	}
	owner, err := h.opts.Chain.Owner(r.Context(), s.env, s.customerID)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	if owner == "" {
		jsonError(w, http.StatusConflict, "", "Connect a wallet first: only the wallet that owns this balance can withdraw.")
		return
	}
	var cents int64
	switch in.Method {
	case settlement.CallRequestWithdrawal:
		if cents, err = parseAmount(in.Amount); err != nil || cents < 1 {
			jsonError(w, http.StatusBadRequest, "amount", "Enter the amount to withdraw in dollars and cents, like 10.00.")
			return
		}
	case settlement.CallCancelWithdrawal, settlement.CallWithdraw:
	default:
		jsonError(w, http.StatusBadRequest, "method", "method must be requestWithdrawal, cancelWithdrawal or withdraw.")
		return
	}
	call, err := h.opts.Chain.OwnerCall(s.env, s.customerID, in.Method, cents)
	if err != nil {
		h.invalidOr(w, r, s, err)
		return
	}
	ci, _ := h.opts.Chain.Chain(s.env)
	writeJSON(w, http.StatusOK, map[string]any{"from": common.HexToAddress(owner).Hex(), "to": call.To, "data": call.Data, "chainId": "0x" + strconv.FormatInt(ci.ChainID, 16)})
}

// relayView is a relayed deposit as the page shows it.
type relayView struct {
	TxHash string `json:"txHash"`
	Amount int64  `json:"amount"`
	// State: pending (sent, not mined), confirming (mined, not at the
	// environment's depth), confirmed (final, not yet applied to the
	// balance), available (applied), failed (reverted).
	State         string `json:"state"`
	Confirmations uint64 `json:"confirmations"`
}

// status answers GET status: the balance, owner, withdrawal under notice
// and the relayed deposits of the last day, and the recent activity as
// HTML, for the page to follow a deposit without a reload. Reading it also records what the relays
// cost once they are mined.
func (h *Handler) status(w http.ResponseWriter, r *http.Request, s *session) {
	c, err := h.opts.Engine.Customer(r.Context(), s.env, s.customerID)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	out := map[string]any{"balance": c.Balance, "owner": c.Owner, "now": h.now().Unix()}
	if c.Owner != nil {
		out["owner"] = common.HexToAddress(*c.Owner).Hex()
	}
	if h.opts.Chain != nil {
		wd, err := h.opts.Chain.Withdrawal(r.Context(), s.env, s.customerID)
		if err != nil {
			h.fail(w, r, s, err)
			return
		}
		var at int64
		if !wd.AvailableAt.IsZero() {
			at = wd.AvailableAt.Unix()
		}
		out["withdrawal"] = map[string]any{"pending": wd.Pending, "availableAt": at, "noticeSeconds": int64(wd.Notice / time.Second)}
		owner, err := h.opts.Chain.Owner(r.Context(), s.env, s.customerID)
		if err != nil {
			h.fail(w, r, s, err)
			return
		}
		if owner != "" {
			owner = common.HexToAddress(owner).Hex()
		}
		out["chainOwner"] = owner
		oc, err := h.ownerChange(r.Context(), s)
		if err != nil {
			h.fail(w, r, s, err)
			return
		}
		out["ownerChange"] = oc
		relays, err := h.relays(r, s)
		if err != nil {
			h.fail(w, r, s, err)
			return
		}
		out["relays"] = relays
	}
	// The account page's "Recent activity", rendered as the page renders
	// it, so that it follows a deposit or a withdrawal without a reload.
	var lines []Line
	if c.Deposit != nil {
		if lines, _, err = h.statement(r.Context(), s.env, s.customerID, c.Deposit.CustomerRef, "", time.Time{}, time.Time{}, AccountLines); err != nil {
			h.fail(w, r, s, err)
			return
		}
	}
	var activity strings.Builder
	if err := h.pages["account"].ExecuteTemplate(&activity, "lines", map[string]any{"Lines": lines, "Explorer": h.opts.Explorers[s.env]}); err != nil {
		h.fail(w, r, s, err)
		return
	}
	out["activity"] = activity.String()
	writeJSON(w, http.StatusOK, out)
}

// relays reads the session customer's relayed deposits of the last day
// and brings their states up to date.
func (h *Handler) relays(r *http.Request, s *session) ([]relayView, error) {
	ctx := r.Context()
	var rows []struct {
		TxHash string `bun:"tx_hash"`
		Amount int64  `bun:"amount"`
		Status string `bun:"status"`
	}
	if err := h.opts.DB.Bun().NewRaw("SELECT tx_hash, amount, status FROM portal_relays WHERE environment = ? AND customer_id = ? AND created_at > ? ORDER BY created_at DESC",
		string(s.env), s.customerID, storage.Micros(h.now().Add(-24*time.Hour))).Scan(ctx, &rows); err != nil && !isNoRows(err) {
		return nil, err
	}
	out := []relayView{}
	for _, row := range rows {
		v := relayView{TxHash: row.TxHash, Amount: row.Amount, State: row.Status}
		if row.Status == "available" || row.Status == "failed" {
			out = append(out, v)
			continue
		}
		rc, err := h.opts.Chain.RelayReceipt(ctx, s.env, row.TxHash)
		if err != nil {
			return nil, err
		}
		v.Confirmations = rc.Confirmations
		next := "pending"
		// A front-run relay reverted, but the transaction that used its
		// authorization first credited the deposit as signed.
		credit := row.TxHash
		if rc.CreditedBy != "" {
			credit = rc.CreditedBy
		}
		switch {
		case rc.Mined && !rc.Succeeded && rc.CreditedBy == "":
			next = "failed"
		case rc.Mined && !rc.Final:
			next = "confirming"
		case rc.Final:
			next = "confirmed"
			var n int
			if err := h.opts.DB.Bun().NewRaw("SELECT COUNT(*) FROM settleflow_funds_events WHERE livemode = ? AND tx_hash = ? AND kind = 'deposit' AND reverted = ?",
				s.env.Livemode(), strings.ToLower(credit), false).Scan(ctx, &n); err != nil {
				return nil, err
			}
			if n > 0 {
				next = "available"
			}
		}
		v.State = next
		if next != row.Status {
			if err := h.recordRelay(r, s, row.TxHash, row.Status, next, rc); err != nil {
				return nil, err
			}
		}
		out = append(out, v)
	}
	return out, nil
}

// recordRelay moves a relay from one state to the next; the move from
// pending to mined records and counts what the operator paid.
func (h *Handler) recordRelay(r *http.Request, s *session, tx, from, to string, rc settlement.RelayReceipt) error {
	var moved bool
	err := h.opts.DB.Write(r.Context(), func(ctx context.Context, t bun.Tx) error {
		res, err := t.NewRaw("UPDATE portal_relays SET status = ?, gas_used = ?, fee_wei = ? WHERE tx_hash = ? AND status = ?",
			to, int64(rc.GasUsed), feeString(rc), tx, from).Exec(ctx)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		moved = err == nil && n == 1
		return err
	})
	if err != nil || !moved || from != "pending" || !rc.Mined {
		return err
	}
	// Counted once: the move from pending to mined happens once.
	h.metrics.gasUsed.WithLabelValues(string(s.env)).Add(float64(rc.GasUsed))
	if rc.Fee != nil {
		f, _ := new(big.Float).SetInt(rc.Fee).Float64()
		h.metrics.feeWei.WithLabelValues(string(s.env)).Add(f)
	}
	h.log.Info("portal relay mined", zap.String("env", string(s.env)), zap.String("customer", s.customerID), zap.String("tx", tx),
		zap.Uint64("gasUsed", rc.GasUsed), zap.String("feeWei", feeString(rc)), zap.String("state", to))
	return nil
}

func feeString(rc settlement.RelayReceipt) string {
	if rc.Fee == nil {
		return "0"
	}
	return rc.Fee.String()
}

// statementCSV answers GET statement.csv?from=YYYY-MM-DD&to=YYYY-MM-DD
// (both days included, UTC): one row per statement line, oldest first,
// amounts as integer cents and formatted.
func (h *Handler) statementCSV(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	from, err1 := time.Parse(time.DateOnly, q.Get("from"))
	to, err2 := time.Parse(time.DateOnly, q.Get("to"))
	if err1 != nil || err2 != nil || to.Before(from) || to.Sub(from) > 366*24*time.Hour {
		h.render(w, r, s, http.StatusBadRequest, "message", page{Title: "Statement export",
			Error: "Choose a range of dates, from a day to a day at most a year later (YYYY-MM-DD)."})
		return
	}
	c, err := h.opts.Engine.Customer(r.Context(), s.env, s.customerID)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	var lines []Line
	if c.Deposit != nil {
		// A year of lines is bounded by what one customer can do; the
		// export reads them in pages of the statement's order.
		before := ""
		for {
			page, next, err := h.statement(r.Context(), s.env, s.customerID, c.Deposit.CustomerRef, before, from, to.AddDate(0, 0, 1), 500)
			if err != nil {
				h.fail(w, r, s, err)
				return
			}
			lines = append(lines, page...)
			if next == "" {
				break
			}
			before = next
		}
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="statement-%s-%s.csv"`, from.Format(time.DateOnly), to.Format(time.DateOnly)))
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"date_utc", "type", "reference", "product", "amount_cents", "amount", "refunded_cents", "held_cents", "currency", "tx_hash"})
	for i := len(lines) - 1; i >= 0; i-- {
		l := lines[i]
		_ = cw.Write([]string{l.At.Format(time.RFC3339), l.Kind, l.Ref, csvSafe(l.Product), strconv.FormatInt(l.Amount, 10), plainAmount(l.Amount),
			strconv.FormatInt(l.Refunded, 10), strconv.FormatInt(l.Held, 10), "usd", l.TxHash})
	}
	cw.Flush()
}

// plainAmount is cents as a spreadsheet reads a number: "-3.58".
func plainAmount(c int64) string {
	sign := ""
	u := uint64(c)
	if c < 0 {
		sign, u = "-", uint64(-c)
	}
	return fmt.Sprintf("%s%d.%02d", sign, u/100, u%100)
}

// csvSafe keeps a cell from being read as a formula by a spreadsheet.
func csvSafe(v string) string {
	if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
		return "'" + v
	}
	return v
}
