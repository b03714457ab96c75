package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/settleflow/settleflow"
)

// Balance owners (docs/api.md, "Owners"): POST
// /v1/customers/{customerId}/owner_grants prepares a grant for the
// customer's wallet to sign; POST /v1/customers/{customerId}/owner sends
// the signed grant to the contract through the operator.

// ownerGrantBody is the body of POST /v1/customers/{id}/owner_grants.
type ownerGrantBody struct {
	Address  *string         `json:"address"`
	Origin   *string         `json:"origin"`
	Deadline json.RawMessage `json:"deadline"`
}

// ownerBody is the body of POST /v1/customers/{id}/owner.
type ownerBody struct {
	Address   *string         `json:"address"`
	Nonce     *string         `json:"nonce"`
	Origin    *string         `json:"origin"`
	Deadline  json.RawMessage `json:"deadline"`
	Signature *string         `json:"signature"`
}

// maxDeadline bounds a deadline in Unix seconds (year 9999), so that any
// accepted value is a time.
const maxDeadline = 253402300799

// unixDeadline reads a "deadline": an integer of Unix seconds. raw nil is
// absent: the zero time, or parameter_missing when required.
func unixDeadline(raw json.RawMessage, required bool) (time.Time, *Error) {
	if raw == nil {
		if required {
			return time.Time{}, invalid(settleflow.CodeParameterMissing, "deadline", "deadline is required: the grant's deadline as signed, in Unix seconds")
		}
		return time.Time{}, nil
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n < 1 || n > maxDeadline {
		return time.Time{}, invalid(settleflow.CodeParameterInvalid, "deadline", "deadline must be an integer of Unix seconds")
	}
	return time.Unix(n, 0).UTC(), nil
}

// required reads a required string member.
func required(v *string, name, what string) (string, *Error) {
	if v == nil {
		return "", invalid(settleflow.CodeParameterMissing, name, name+" is required: "+what)
	}
	return *v, nil
}

// createOwnerGrant answers POST /v1/customers/{customerId}/owner_grants:
// 200 with an owner_grant (a fresh nonce, the deadline, the EIP-712 typed
// data) for the address's wallet to sign. Nothing is stored or sent; an
// Idempotency-Key is accepted and not stored (each call is a new grant).
func (h *handler) createOwnerGrant(w http.ResponseWriter, r *http.Request, customerID string) {
	var in ownerGrantBody
	if !h.readBody(w, r, &in) {
		return
	}
	address, apiErr := required(in.Address, "address", "the 0x address that will own the customer's balance")
	if apiErr != nil {
		writeError(w, r, apiErr)
		return
	}
	deadline, apiErr := unixDeadline(in.Deadline, false)
	if apiErr != nil {
		writeError(w, r, apiErr)
		return
	}
	p := settleflow.OwnerGrantParams{Environment: principalFrom(r.Context()).Environment, CustomerID: customerID, Address: address, Deadline: deadline}
	if in.Origin != nil {
		if *in.Origin == "" {
			writeError(w, r, invalid(settleflow.CodeParameterInvalid, "origin", "origin must not be empty; leave it out for the default"))
			return
		}
		p.Origin = *in.Origin
	}
	if _, err := h.idempotencyKey(r); err != nil {
		h.fail(w, r, err)
		return
	}
	g, err := h.opts.Engine.CreateOwnerGrant(r.Context(), p)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, g)
}

// setOwner answers POST /v1/customers/{customerId}/owner: the signed grant
// is checked and sent; 202 with the owner_change (status "sent", its
// transaction, effective "now" or "after_notice"). A replay (the same
// Idempotency-Key and body) answers the first change, 202 with
// Idempotent-Replayed.
func (h *handler) setOwner(w http.ResponseWriter, r *http.Request, customerID string) {
	var in ownerBody
	if !h.readBody(w, r, &in) {
		return
	}
	var g settleflow.OwnerGrant
	var apiErr *Error
	for _, f := range []struct {
		v          *string
		name, what string
		to         *string
	}{
		{in.Address, "address", "the 0x address that signed the grant", &g.Owner},
		{in.Nonce, "nonce", "the grant's nonce, as signed", &g.Nonce},
		{in.Origin, "origin", "the grant's origin, as signed", &g.Origin},
	} {
		if *f.to, apiErr = required(f.v, f.name, f.what); apiErr != nil {
			writeError(w, r, apiErr)
			return
		}
	}
	if g.Deadline, apiErr = unixDeadline(in.Deadline, true); apiErr != nil {
		writeError(w, r, apiErr)
		return
	}
	if g.Signature, apiErr = required(in.Signature, "signature", "the wallet's signature of the grant's typed data, 0x-hex"); apiErr != nil {
		writeError(w, r, apiErr)
		return
	}
	key, err := h.idempotencyKey(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	c, replayed, err := h.opts.Engine.SetOwner(r.Context(), settleflow.SetOwnerParams{
		Environment: principalFrom(r.Context()).Environment, CustomerID: customerID, Grant: g, IdempotencyKey: key})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	writeJSON(w, http.StatusAccepted, c)
}
