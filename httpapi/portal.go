package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/wire"
)

// The customer portal (docs/api.md, "Customer portal"; docs/portal.md):
// POST /v1/customers/{customerId}/portal_sessions answers a one-time link
// that opens the portal for the customer.

// PortalSessions issues a customer portal link for customerID in env,
// working for ttl (0: the portal's default). The portal package's
// Handler.CreatePortalSession is one.
type PortalSessions func(ctx context.Context, env settleflow.Environment, customerID string, ttl time.Duration) (*wire.PortalSession, error)

// Portal link lifetimes the endpoint accepts, in seconds (expiresIn).
const (
	minPortalExpiresIn = 60
	maxPortalExpiresIn = 86400
)

type portalSessionBody struct {
	ExpiresIn json.RawMessage `json:"expiresIn"`
}

// createPortalSession answers POST /v1/customers/{customerId}/portal_sessions
// (body optional: {"expiresIn": seconds}): 201 with the portal_session.
// Each call issues a new link (an Idempotency-Key is accepted and not
// stored: a link is shown once).
func (h *handler) createPortalSession(w http.ResponseWriter, r *http.Request, customerID string) {
	if refuseQuery(w, r) {
		return
	}
	body, apiErr := h.readOptionalJSON(w, r)
	if apiErr != nil {
		writeError(w, r, apiErr)
		return
	}
	var in portalSessionBody
	if len(body) > 0 {
		if apiErr := decodeBody(body, &in); apiErr != nil {
			writeError(w, r, apiErr)
			return
		}
	}
	var ttl time.Duration
	if in.ExpiresIn != nil {
		n, err := strconv.ParseInt(string(in.ExpiresIn), 10, 64)
		if err != nil || n < minPortalExpiresIn || n > maxPortalExpiresIn {
			writeError(w, r, invalid(settleflow.CodeParameterInvalid, "expiresIn",
				"expiresIn must be an integer of seconds from 60 to 86400 (default 900: 15 minutes)"))
			return
		}
		ttl = time.Duration(n) * time.Second
	}
	if _, err := h.idempotencyKey(r); err != nil {
		h.fail(w, r, err)
		return
	}
	if h.opts.PortalSessions == nil {
		writeError(w, r, notFoundError("The customer portal is not mounted on this server (httpapi.Options.PortalSessions is nil)."))
		return
	}
	ps, err := h.opts.PortalSessions(r.Context(), principalFrom(r.Context()).Environment, customerID, ttl)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, ps)
}
