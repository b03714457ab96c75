package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/settleflow/settleflow"
)

// Every endpoint that takes query parameters parses them alike: a known
// parameter given empty (`limit=`) is 400 parameter_invalid naming it, on
// every list and on the margins report; an endpoint that takes none refuses
// any, empty or not, as parameter_unknown. (GET /v1/workflows?limit= used
// to answer 200 while GET /v1/refunds?limit= was 400.)
func TestEmptyListParameterIsRefusedEverywhere(t *testing.T) {
	e := newEnv(t, envOptions{})
	key := e.keys.create(t, settleflow.Test, "starter")
	for path, params := range map[string][]string{
		"/v1/workflows": {"status", "limit", "startingAfter", "endingBefore", "customerId", "product"},
		"/v1/refunds":   {"workflowId", "status", "limit", "startingAfter", "endingBefore"},
		"/v1/events":    {"type", "workflowId", "createdAfter", "limit", "startingAfter", "endingBefore"},
	} {
		for _, p := range params {
			for _, q := range []string{p + "=", "limit=5&" + p + "="} {
				if p == "limit" && q != p+"=" {
					continue
				}
				r := e.do("GET", path+"?"+q, key, "")
				if eo := r.errorObject(t); r.status != http.StatusBadRequest || eo["code"] != "parameter_invalid" || eo["param"] != p {
					t.Errorf("GET %s?%s: %d %s; want 400 parameter_invalid naming %s", path, q, r.status, r.body, p)
				}
			}
		}
		// The same list without the empty parameter answers.
		if r := e.do("GET", path+"?limit=5", key, ""); r.status != http.StatusOK {
			t.Errorf("GET %s?limit=5: %d %s", path, r.status, r.body)
		}
	}
	for _, p := range []string{"product", "createdAfter", "createdBefore", "groupBy"} {
		q := "groupBy=day&" + p + "="
		if p == "groupBy" {
			q = "groupBy="
		}
		r := e.do("GET", "/v1/margins?"+q, key, "")
		if eo := r.errorObject(t); r.status != http.StatusBadRequest || eo["code"] != "parameter_invalid" || eo["param"] != p {
			t.Errorf("GET /v1/margins?%s: %d %s; want 400 parameter_invalid naming %s", q, r.status, r.body, p)
		}
	}
	r := e.do("GET", "/v1/products?limit=", key, "")
	if eo := r.errorObject(t); r.status != http.StatusBadRequest || eo["code"] != "parameter_unknown" || eo["param"] != "limit" {
		t.Errorf("GET /v1/products?limit=: %d %s; want 400 parameter_unknown naming limit (the catalogue takes no parameters)", r.status, r.body)
	}
}
