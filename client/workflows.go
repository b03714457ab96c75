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

// WorkflowService is the workflows resource: c.Workflows.
type WorkflowService struct{ b *backend }

// WorkflowCreateParams is the body of a create (and of a quote).
type WorkflowCreateParams struct {
	// Product names the product to run (GET /v1/products lists them).
	Product string `json:"product,omitempty"`
	// CustomerID is the customer charged: cus_ followed by 1–255 of
	// [A-Za-z0-9_-].
	CustomerID string `json:"customerId,omitempty"`
	// Payload is the product's input, a JSON object: a struct or map, or
	// a json.RawMessage sent as it is. The server stores its keys as sent.
	Payload any `json:"payload,omitempty"`
	// SuccessCriteria, optional, is a criteria tree that replaces the
	// product's default success criteria for this workflow: anything that
	// marshals to the tree's JSON object, such as a map, a json.RawMessage
	// or a *criteria.Criteria (package
	// github.com/settleflow/settleflow/criteria). For example
	//
	//	json.RawMessage(`{"type": "all_of", "criteria": [
	//		{"type": "exact", "path": "/status", "value": "resolved"},
	//		{"type": "numeric_threshold", "path": "/confidence", "op": ">=", "value": 0.8}]}`)
	//
	// The workflow's result is judged by it once the product ran (its
	// Outcome); under success_fee and hybrid pricing that verdict decides
	// the charge, under fixed and capped pricing it is only recorded. A
	// tree that does not parse is an *InvalidRequestError whose Param names
	// the node at fault (successCriteria.criteria[1].op). nil sends none.
	SuccessCriteria any `json:"successCriteria,omitempty"`
	// MarginFloor, optional, is the least margin the workflow must keep at
	// the price quoted, as basis points (2500 is sent as 0.25): it may raise
	// the product's margin floor, never lower it (that is an
	// *InvalidRequestError with Param marginFloor, Code parameter_invalid).
	// A quote whose margin on the estimated cost is below the floor in force
	// is refused with Code margin_below_floor (wire.CodeMarginBelowFloor,
	// Param marginFloor), and an execution whose reported spend passes the
	// budget the floor leaves is stopped and fails with
	// margin_floor_exceeded. nil sends none.
	MarginFloor *wire.BasisPoints `json:"marginFloor,omitempty"`
	// IdempotencyKey, optional, makes the create safe to repeat: the same
	// key with the same body within 24 hours answers the first workflow
	// again instead of creating another, and with another body fails with
	// an *IdempotencyError. Without one the client generates one per call
	// (and reuses it for that call's retries); set your own (an order id,
	// say) to make your own retries of the call safe too, for example after
	// a context canceled mid-request, when whether the create happened is
	// unknown.
	IdempotencyKey string `json:"-"`
}

// WorkflowListParams filters and pages a list of workflows. The zero value
// lists the ten newest.
type WorkflowListParams struct {
	// Status keeps only workflows in this status.
	Status wire.Status
	// CustomerID and Product keep only the workflows of this customer, of
	// this product.
	CustomerID string
	Product    string
	// Limit is the page size, 1–100; 0 means the server's default (10).
	Limit int
	// StartingAfter, a workflow id, asks for the page of older workflows
	// after it; EndingBefore for the page of newer workflows before it. At
	// most one may be set.
	StartingAfter string
	EndingBefore  string
}

func (p *WorkflowListParams) query(c cursors) url.Values {
	q := url.Values{}
	if p != nil {
		if p.Status != "" {
			q.Set("status", string(p.Status))
		}
		if p.CustomerID != "" {
			q.Set("customerId", p.CustomerID)
		}
		if p.Product != "" {
			q.Set("product", p.Product)
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

func (p *WorkflowListParams) cursors() cursors {
	if p == nil {
		return cursors{}
	}
	return cursors{startingAfter: p.StartingAfter, endingBefore: p.EndingBefore}
}

// Create creates a workflow (POST /v1/workflows, operation createWorkflow).
// It is answered at once, quoted and Pending; the product runs in the
// background and the outcome arrives by webhook (or Fetch it later).
//
// The request carries an Idempotency-Key (params.IdempotencyKey, or one the
// client generates) that stays the same across the call's retries, so a
// create whose answer was lost is answered again by the server rather than
// repeated: a call makes at most one workflow.
func (s *WorkflowService) Create(ctx context.Context, params *WorkflowCreateParams) (*wire.Workflow, error) {
	if params == nil {
		params = &WorkflowCreateParams{}
	}
	wf := new(wire.Workflow)
	_, err := s.b.do(ctx, request{method: http.MethodPost, path: "/v1/workflows", body: params, idempotencyKey: params.IdempotencyKey}, wf)
	if err != nil {
		return nil, err
	}
	return wf, nil
}

// Fetch returns the workflow with this id (GET /v1/workflows/{id}, operation
// fetchWorkflow). An unknown id is an *InvalidRequestError with Code
// resource_missing.
func (s *WorkflowService) Fetch(ctx context.Context, id string) (*wire.Workflow, error) {
	if id == "" {
		return nil, errEmptyID("workflow")
	}
	wf := new(wire.Workflow)
	if _, err := s.b.do(ctx, request{method: http.MethodGet, path: "/v1/workflows/" + url.PathEscape(id)}, wf); err != nil {
		return nil, err
	}
	return wf, nil
}

// List returns one page of workflows, newest first (GET /v1/workflows,
// operation listWorkflows). params may be nil.
func (s *WorkflowService) List(ctx context.Context, params *WorkflowListParams) (*Page[*wire.Workflow], error) {
	return s.list(ctx, params, params.cursors())
}

func (s *WorkflowService) list(ctx context.Context, params *WorkflowListParams, c cursors) (*Page[*wire.Workflow], error) {
	return getPage[*wire.Workflow](ctx, s.b, "/v1/workflows", params.query(c))
}

// ListAutoPaging iterates over every workflow params selects, fetching
// pages of params.Limit as it goes:
//
//	for wf, err := range c.Workflows.ListAutoPaging(ctx, &client.WorkflowListParams{Status: wire.Settled}) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(wf.ID, wf.Quoted.Amount)
//	}
//
// It walks from the newest workflow (or from params.StartingAfter) to the
// oldest. With params.EndingBefore it walks the other way instead, from the
// workflow just newer than EndingBefore to the newest, oldest first. Paging is
// by keyset: no workflow is yielded twice or skipped, even while others are
// created. An error is yielded once and ends the iteration.
func (s *WorkflowService) ListAutoPaging(ctx context.Context, params *WorkflowListParams) iter.Seq2[*wire.Workflow, error] {
	return autoPage(ctx, params.cursors(), func(ctx context.Context, c cursors) (*Page[*wire.Workflow], error) {
		return s.list(ctx, params, c)
	}, func(w *wire.Workflow) string { return w.ID })
}

// Cancel cancels a workflow that is still Pending (POST
// /v1/workflows/{id}/cancel, operation cancelWorkflow): it becomes Canceled,
// is never executed and nothing is charged. A workflow in another status is
// an *InvalidRequestError (409) whose Code names the status
// (workflow_running, workflow_settled, …).
//
// If an attempt is retried after its answer was lost and the retry finds the
// workflow already Canceled, the cancel did happen: Cancel then fetches and
// returns the workflow instead of the workflow_canceled error.
func (s *WorkflowService) Cancel(ctx context.Context, id string) (*wire.Workflow, error) {
	if id == "" {
		return nil, errEmptyID("workflow")
	}
	wf := new(wire.Workflow)
	res, err := s.b.do(ctx, request{method: http.MethodPost, path: "/v1/workflows/" + url.PathEscape(id) + "/cancel"}, wf)
	var apiErr *APIError
	if err != nil && res.attempts > 1 && errors.As(err, &apiErr) && apiErr.Code == wire.CodeWorkflowCanceled {
		return s.Fetch(ctx, id)
	}
	if err != nil {
		return nil, err
	}
	return wf, nil
}

func errEmptyID(what string) error { return errors.New("settleflow: the " + what + " id is empty") }
