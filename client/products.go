package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/settleflow/settleflow/wire"
)

// ProductService reads the catalogue: c.Products.
type ProductService struct{ b *backend }

// List returns every product, sorted by name, each with its payload's JSON
// Schema and an example payload (GET /v1/products, operation listProducts).
// The catalogue fits one page.
func (s *ProductService) List(ctx context.Context) (*Page[*wire.ProductInfo], error) {
	page := new(Page[*wire.ProductInfo])
	if _, err := s.b.do(ctx, request{method: http.MethodGet, path: "/v1/products"}, page); err != nil {
		return nil, err
	}
	return page, nil
}

// Fetch returns the product named name (GET /v1/products/{name}, operation
// fetchProduct). An unknown name is an *InvalidRequestError with Code
// resource_missing.
func (s *ProductService) Fetch(ctx context.Context, name string) (*wire.ProductInfo, error) {
	if name == "" {
		return nil, errEmptyID("product")
	}
	p := new(wire.ProductInfo)
	if _, err := s.b.do(ctx, request{method: http.MethodGet, path: "/v1/products/" + url.PathEscape(name)}, p); err != nil {
		return nil, err
	}
	return p, nil
}
