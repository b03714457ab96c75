package client

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/settleflow/settleflow/wire"
)

// QuoteService prices workflows without creating them: c.Quotes.
type QuoteService struct{ b *backend }

// QuoteCreateParams is the body of a quote: what a create would send.
type QuoteCreateParams struct {
	// Product, CustomerID, Payload, SuccessCriteria and MarginFloor are
	// those of [WorkflowCreateParams], with the same validation.
	Product         string            `json:"product,omitempty"`
	CustomerID      string            `json:"customerId,omitempty"`
	Payload         any               `json:"payload,omitempty"`
	SuccessCriteria any               `json:"successCriteria,omitempty"`
	MarginFloor     *wire.BasisPoints `json:"marginFloor,omitempty"`
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
	// Quoted is the price: the most the workflow can be charged.
	Quoted wire.Money `json:"quoted"`
	// Pricing is the product's pricing model: how much of Quoted is
	// charged once the workflow ran (fixed: all of it; capped: cost plus
	// markup up to it; success_fee: all of it or nothing, by the outcome;
	// hybrid: a base share always, the rest on success).
	Pricing wire.Pricing `json:"pricing"`
	// SuccessCriteria is the criteria tree the outcome would be judged by
	// (the request's, else the product's); JSON null when there is none.
	SuccessCriteria json.RawMessage `json:"successCriteria"`
	// MarginFloor is the margin floor in force (the product's, or the
	// request's if higher), nil when there is none.
	MarginFloor *wire.BasisPoints `json:"marginFloor"`
	// Budget is the most the execution may spend and keep MarginFloor at
	// Quoted, floor(quoted × (1 − floor)); nil without a floor.
	Budget *wire.Money `json:"budget"`
	// Margin is the product's target margin.
	Margin QuoteMargin `json:"margin"`
}

// QuoteMargin is the margin of a [Quote]: only the target, since nothing has
// run.
type QuoteMargin struct {
	Target wire.BasisPoints `json:"target"`
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
