package client

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/settleflow/settleflow"
)

// QuoteService prices workflows without creating them: c.Quotes.
type QuoteService struct{ b *backend }

// QuoteCreateParams is the body of a quote: what a create would send.
type QuoteCreateParams struct {
	// Product, CustomerID and Payload are those of [WorkflowCreateParams].
	Product    string `json:"product,omitempty"`
	CustomerID string `json:"customerId,omitempty"`
	Payload    any    `json:"payload,omitempty"`
}

// Quote is the price a create with the same body would quote now.
type Quote struct {
	// Object is "quote".
	Object   string `json:"object"`
	Livemode bool   `json:"livemode"`
	// Product, CustomerID and Payload are what was priced; Payload is
	// compacted.
	Product    string          `json:"product"`
	CustomerID string          `json:"customerId"`
	Payload    json.RawMessage `json:"payload"`
	// Quoted is the price.
	Quoted settleflow.Money `json:"quoted"`
	// Margin is the product's target margin.
	Margin QuoteMargin `json:"margin"`
}

// QuoteMargin is the margin of a [Quote]: only the target, since nothing has
// run.
type QuoteMargin struct {
	Target settleflow.BasisPoints `json:"target"`
}

// Create prices a workflow exactly as a create with the same body would at
// this moment, with the same validation errors, and stores nothing (POST
// /v1/quotes, operation createQuote).
func (s *QuoteService) Create(ctx context.Context, params *QuoteCreateParams) (*Quote, error) {
	if params == nil {
		params = &QuoteCreateParams{}
	}
	q := new(Quote)
	if _, err := s.b.do(ctx, request{method: http.MethodPost, path: "/v1/quotes", body: params}, q); err != nil {
		return nil, err
	}
	return q, nil
}
