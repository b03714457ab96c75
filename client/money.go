package client

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"net/url"
	"strconv"

	"github.com/settleflow/settleflow/wire"
)

// CustomerService reads customers' funds: c.Customers.
type CustomerService struct{ b *backend }

// Fetch returns the customer's balance and deposit instructions in the
// key's environment (GET /v1/customers/{customerId}, operation
// fetchCustomer). A customer the server never saw has a zero balance; an id
// that is not cus_ followed by 1–255 of [A-Za-z0-9_-] is an
// *InvalidRequestError naming customerId. Deposit is nil where the
// environment's charges are not paid from customer balances.
func (s *CustomerService) Fetch(ctx context.Context, customerID string) (*wire.Customer, error) {
	if customerID == "" {
		return nil, errEmptyID("customer")
	}
	c := new(wire.Customer)
	if _, err := s.b.do(ctx, request{method: http.MethodGet, path: "/v1/customers/" + url.PathEscape(customerID)}, c); err != nil {
		return nil, err
	}
	return c, nil
}

// RefundService creates and reads refunds: c.Refunds.
type RefundService struct{ b *backend }

// RefundCreateParams is the body of a refund. The zero value (or nil)
// refunds all that is left of the charge.
type RefundCreateParams struct {
	// Amount in minor units, at least 1; 0 refunds all that is left (the
	// charge less its refunds that are not Failed).
	Amount int64 `json:"amount,omitempty"`
	// Reason, optional, at most 500 characters.
	Reason string `json:"reason,omitempty"`
	// IdempotencyKey makes the refund safe to repeat, as
	// [WorkflowCreateParams].IdempotencyKey makes a create: the same key
	// with the same body within 24 hours answers the first refund again.
	// Without one the client generates one per call, reused across that
	// call's retries.
	IdempotencyKey string `json:"-"`
}

// RefundListParams filters and pages a list of refunds. The zero value
// lists the ten newest.
type RefundListParams struct {
	// WorkflowID keeps only the refunds of this workflow.
	WorkflowID string
	// Status keeps only refunds in this status.
	Status wire.RefundStatus
	// Limit is the page size, 1–100; 0 means the server's default (10).
	Limit int
	// StartingAfter, a refund id, asks for the page of older refunds after
	// it; EndingBefore for the page of newer refunds before it. At most one
	// may be set.
	StartingAfter string
	EndingBefore  string
}

func (p *RefundListParams) query(c cursors) url.Values {
	q := url.Values{}
	if p != nil {
		if p.WorkflowID != "" {
			q.Set("workflowId", p.WorkflowID)
		}
		if p.Status != "" {
			q.Set("status", string(p.Status))
		}
		if p.Limit != 0 {
			q.Set("limit", strconv.Itoa(p.Limit))
		}
	}
	if c.startingAfter != "" {
		q.Set("startingAfter", c.startingAfter)
	}
	if c.endingBefore != "" {
		q.Set("endingBefore", c.endingBefore)
	}
	return q
}

func (p *RefundListParams) cursors() cursors {
	if p == nil {
		return cursors{}
	}
	return cursors{startingAfter: p.StartingAfter, endingBefore: p.EndingBefore}
}

// Create refunds part or all of a Settled workflow's charge to its
// customer's balance (POST /v1/workflows/{id}/refunds, operation
// createRefund). params may be nil: all that is left. The refund is
// answered Pending and settles on chain in the background (refund.succeeded
// or refund.failed follows; Fetch it to follow it).
//
// Errors: an *InvalidRequestError with Code workflow_not_settled (409: the
// workflow is not Settled), amount_exceeds_refundable (400, Param amount:
// more than is left to refund), refunds_not_supported (409: the
// environment's charges are not paid from customer balances) or
// resource_missing (404); an *IdempotencyError when the key was used with
// another body.
func (s *RefundService) Create(ctx context.Context, workflowID string, params *RefundCreateParams) (*wire.Refund, error) {
	if workflowID == "" {
		return nil, errEmptyID("workflow")
	}
	r := request{method: http.MethodPost, path: "/v1/workflows/" + url.PathEscape(workflowID) + "/refunds"}
	if params != nil {
		r.body, r.idempotencyKey = params, params.IdempotencyKey
	}
	rf := new(wire.Refund)
	if _, err := s.b.do(ctx, r, rf); err != nil {
		return nil, err
	}
	return rf, nil
}

// Fetch returns the refund with this id (GET /v1/refunds/{id}, operation
// fetchRefund).
func (s *RefundService) Fetch(ctx context.Context, id string) (*wire.Refund, error) {
	if id == "" {
		return nil, errEmptyID("refund")
	}
	rf := new(wire.Refund)
	if _, err := s.b.do(ctx, request{method: http.MethodGet, path: "/v1/refunds/" + url.PathEscape(id)}, rf); err != nil {
		return nil, err
	}
	return rf, nil
}

// List returns one page of refunds, newest first (GET /v1/refunds,
// operation listRefunds). params may be nil.
func (s *RefundService) List(ctx context.Context, params *RefundListParams) (*Page[*wire.Refund], error) {
	return s.list(ctx, params, params.cursors())
}

func (s *RefundService) list(ctx context.Context, params *RefundListParams, c cursors) (*Page[*wire.Refund], error) {
	return getPage[*wire.Refund](ctx, s.b, "/v1/refunds", params.query(c))
}

// ListAutoPaging iterates over every refund params selects, as
// [WorkflowService.ListAutoPaging] does over workflows: newest to oldest,
// or with params.EndingBefore from just after it to the newest, oldest
// first.
func (s *RefundService) ListAutoPaging(ctx context.Context, params *RefundListParams) iter.Seq2[*wire.Refund, error] {
	return autoPage(ctx, params.cursors(), func(ctx context.Context, c cursors) (*Page[*wire.Refund], error) {
		return s.list(ctx, params, c)
	}, func(r *wire.Refund) string { return r.ID })
}

// TestHelperService calls the test helpers, which work with test keys
// only: c.TestHelpers.
type TestHelperService struct{ b *backend }

// FundCustomer deposits amount (minor units, at least 1) for a test customer
// from the test faucet, as a deposit on the test chain would, and returns
// the customer once the deposit is confirmed and applied (POST
// /v1/test_helpers/customers/{customerId}/fund, operation fundTestCustomer).
// With a live key it is a *PermissionError with Code test_mode_only.
//
// Each call deposits, so the call is not retried: an answer that is lost
// (a timeout, a 5xx) leaves unknown whether it deposited; Fetch the
// customer to see.
func (s *TestHelperService) FundCustomer(ctx context.Context, customerID string, amount int64) (*wire.Customer, error) {
	if customerID == "" {
		return nil, errEmptyID("customer")
	}
	if amount < 1 {
		return nil, errors.New("settleflow: the amount to fund must be at least 1 (minor units)")
	}
	c := new(wire.Customer)
	_, err := s.b.do(ctx, request{method: http.MethodPost, path: "/v1/test_helpers/customers/" + url.PathEscape(customerID) + "/fund",
		body: struct {
			Amount int64 `json:"amount"`
		}{amount}, noRetry: true}, c)
	if err != nil {
		return nil, err
	}
	return c, nil
}
