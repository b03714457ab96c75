package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/settleflow/settleflow/wire"
)

// PortalSessionCreateParams ask for a customer portal link. The zero value
// (or nil) asks for the server's default lifetime.
type PortalSessionCreateParams struct {
	// ExpiresIn, optional, is how long the link works if unused: whole
	// seconds from 60 seconds to 24 hours. Zero means the server's default,
	// 15 minutes.
	ExpiresIn time.Duration
}

// portalSessionBody is the request body: expiresIn in seconds, left out
// when zero.
type portalSessionBody struct {
	ExpiresIn int64 `json:"expiresIn,omitempty"`
}

// CreatePortalSession issues a one-time link to the customer portal for
// the customer, in the key's environment (POST
// /v1/customers/{customerId}/portal_sessions, operation
// createPortalSession). Send the customer to the answer's URL before
// ExpiresAt: it opens a portal session once, where the customer sees its
// balance and statement, connects its wallet, deposits and withdraws. The
// URL is in this answer only (the server keeps a hash of it): do not log
// it. Each call issues a new link.
//
// Errors: an *InvalidRequestError naming customerId or expiresIn (400), or
// with Code refunds_not_supported (409: the environment's charges are not
// paid from customer balances), or with Code resource_missing (404: the
// server does not mount the portal). An ExpiresIn that is not whole seconds is refused
// before anything is sent.
func (s *CustomerService) CreatePortalSession(ctx context.Context, customerID string, params *PortalSessionCreateParams) (*wire.PortalSession, error) {
	if customerID == "" {
		return nil, errEmptyID("customer")
	}
	var body portalSessionBody
	if params != nil && params.ExpiresIn != 0 {
		if params.ExpiresIn < time.Second || params.ExpiresIn%time.Second != 0 {
			return nil, fmt.Errorf("settleflow: PortalSessionCreateParams.ExpiresIn %s is not a whole number of seconds (60s to 24h)", params.ExpiresIn)
		}
		body.ExpiresIn = int64(params.ExpiresIn / time.Second)
	}
	ps := new(wire.PortalSession)
	r := request{method: http.MethodPost, path: "/v1/customers/" + url.PathEscape(customerID) + "/portal_sessions", body: body}
	if _, err := s.b.do(ctx, r, ps); err != nil {
		return nil, err
	}
	return ps, nil
}
