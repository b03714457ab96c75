package httpapi

import (
	_ "embed"
	"net/http"
)

// openAPIDocument is the OpenAPI 3.1 document of the API, served at
// /v1/openapi.json and used by the tests to validate every response.
//
//go:embed openapi.json
var openAPIDocument []byte

// OpenAPI returns the OpenAPI 3.1 document of the API.
func OpenAPI() []byte { return append([]byte(nil), openAPIDocument...) }

func (h *handler) openAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.WriteHeader(http.StatusOK)
	w.Write(openAPIDocument)
}
