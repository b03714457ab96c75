package httpapi_test

import (
	"testing"

	"github.com/settleflow/settleflow"
)

// The routes are ServeMux patterns; what ServeMux would do by itself
// (redirect an unclean path, answer 405 in plain text) is answered in the
// API's own shape instead.
func TestRoutes(t *testing.T) {
	e := newEnv(t, envOptions{})
	key := e.keys.create(t, settleflow.Test, "starter")
	for _, c := range []struct {
		method, path string
		status       int
		allow        string
	}{
		{"GET", "/v1/products", 200, ""},
		{"HEAD", "/v1/products", 200, ""},
		{"GET", "/v1/workflows/wf_nope", 404, ""},
		{"GET", "/v1/workflows/", 404, ""},
		{"GET", "/v1/products/", 404, ""},
		{"GET", "/v1/workflows/wf_nope/cancel", 405, "POST"},
		{"DELETE", "/v1/workflows", 405, "GET, POST"},
		{"PUT", "/v1/quotes", 405, "POST"},
		{"GET", "/v2/workflows", 404, ""},
	} {
		r := e.do(c.method, c.path, key, "")
		if r.status != c.status || r.header.Get("Allow") != c.allow {
			t.Errorf("%s %s: %d (Allow %q), want %d (Allow %q)", c.method, c.path, r.status, r.header.Get("Allow"), c.status, c.allow)
			continue
		}
		if c.status >= 400 {
			if ct := r.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("%s %s: Content-Type %q, want the API's JSON error", c.method, c.path, ct)
			}
			if c.method != "HEAD" && r.errorObject(t)["requestId"] == nil {
				t.Errorf("%s %s: no requestId in the error", c.method, c.path)
			}
		}
	}
}
