package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/settleflow/settleflow/wire"
)

// OwnerGrantCreateParams ask for an unsigned owner grant.
type OwnerGrantCreateParams struct {
	// Address is the 0x address that will own the customer's balance (the
	// customer's wallet, which signs the grant). Required.
	Address string `json:"address"`
	// Origin, optional, is shown by the wallet: where the customer signs
	// (your portal's origin, https://…). The server's default otherwise.
	Origin string `json:"origin,omitempty"`
	// Deadline, optional, in Unix seconds: when the grant expires, at most
	// 24 hours ahead; 15 minutes ahead by default.
	Deadline int64 `json:"deadline,omitempty"`
}

// SetOwnerParams is a customer's signed owner grant: the grant's fields
// as CreateOwnerGrant answered them, and the wallet's signature of its
// typed data.
type SetOwnerParams struct {
	Address   string `json:"address"`
	Nonce     string `json:"nonce"`
	Origin    string `json:"origin"`
	Deadline  int64  `json:"deadline"`
	Signature string `json:"signature"`
	// IdempotencyKey makes the call safe to repeat: the same key with the
	// same body within 24 hours answers the first owner change again.
	// Without one the client generates one per call, reused across that
	// call's retries.
	IdempotencyKey string `json:"-"`
}

// CreateOwnerGrant returns an unsigned grant of params.Address as the
// owner of the customer's balance, with a fresh nonce and the EIP-712
// typed data for the customer's wallet to sign (eth_signTypedData_v4):
// POST /v1/customers/{customerId}/owner_grants, operation
// createOwnerGrant. Nothing is sent to the chain.
//
// Errors: an *InvalidRequestError naming customerId, address, origin or
// deadline (400), or with Code refunds_not_supported (409: the
// environment's charges are not paid from customer balances).
func (s *CustomerService) CreateOwnerGrant(ctx context.Context, customerID string, params *OwnerGrantCreateParams) (*wire.OwnerGrantRequest, error) {
	if customerID == "" {
		return nil, errEmptyID("customer")
	}
	if params == nil {
		params = &OwnerGrantCreateParams{}
	}
	g := new(wire.OwnerGrantRequest)
	r := request{method: http.MethodPost, path: "/v1/customers/" + url.PathEscape(customerID) + "/owner_grants", body: params}
	if _, err := s.b.do(ctx, r, g); err != nil {
		return nil, err
	}
	return g, nil
}

// SetOwner sends the customer's signed grant: the operator sets the
// address as the owner of the customer's balance on chain (POST
// /v1/customers/{customerId}/owner, operation setOwner). The answer is the
// owner change as sent (Status "sent", its TxHash): Effective "now" if the
// customer had no owner, "after_notice" if it had one (the new address
// owns the balance after the withdrawal notice, unless the current owner
// cancels the change on chain).
//
// Errors: an *InvalidRequestError naming address, nonce, origin, deadline
// or signature (400: malformed, expired, the nonce used already, a
// signature of another customer, chain, contract, origin or address, an
// address that owns the balance already; nothing was sent), or with Code
// refunds_not_supported (409); an *IdempotencyError when the key was used
// with another body.
func (s *CustomerService) SetOwner(ctx context.Context, customerID string, params *SetOwnerParams) (*wire.OwnerChange, error) {
	if customerID == "" {
		return nil, errEmptyID("customer")
	}
	if params == nil {
		params = &SetOwnerParams{}
	}
	r := request{method: http.MethodPost, path: "/v1/customers/" + url.PathEscape(customerID) + "/owner", body: params, idempotencyKey: params.IdempotencyKey}
	c := new(wire.OwnerChange)
	if _, err := s.b.do(ctx, r, c); err != nil {
		return nil, err
	}
	return c, nil
}
