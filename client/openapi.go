package client

import (
	"context"
	"encoding/json"
	"net/http"
)

// OpenAPI returns the API's OpenAPI 3.1 document as served (GET
// /v1/openapi.json, operation openAPI): every operation, schema and error
// code of the server the client talks to.
func (c *Client) OpenAPI(ctx context.Context) (json.RawMessage, error) {
	var doc json.RawMessage
	if _, err := c.b.do(ctx, request{method: http.MethodGet, path: "/v1/openapi.json"}, &doc); err != nil {
		return nil, err
	}
	return doc, nil
}
