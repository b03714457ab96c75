package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/settleflow/settleflow/httpapi"
)

// Every answer of the HTTPS listener is nosniff, whoever writes it.
func TestEdgeNosniffEverywhere(t *testing.T) {
	h := withHealth(&health{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	for _, p := range []string{"/", "/v1/anything", "/dashboard/"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", p, nil))
		if rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: %v", p, rec.Header())
		}
	}
}

// The route label is a copy of the API's routing: every route the OpenAPI
// document names gets its own pattern as label, so that a route added to the
// API without a label shows up here rather than as "other" on a dashboard.
func TestEdgeRouteLabelsCoverOpenAPI(t *testing.T) {
	var doc struct {
		Paths map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(httpapi.OpenAPI(), &doc); err != nil || len(doc.Paths) == 0 {
		t.Fatalf("OpenAPI paths: %v", err)
	}
	param := regexp.MustCompile(`\{[^}/]+\}`)
	for pattern := range doc.Paths {
		path := param.ReplaceAllString(pattern, "x_01")
		if got := routeLabel(httptest.NewRequest("GET", path, nil)); got != pattern {
			t.Errorf("route label of %s: %q, want %q", path, got, pattern)
		}
		if got := routeLabel(httptest.NewRequest("GET", path+"/more/x", nil)); got != "other" {
			t.Errorf("route label of %s/more/x: %q, want other", path, got)
		}
	}
}

// TestPortalMounted: /portal/ goes to the portal, /portal is sent there,
// everything else to the API.
func TestPortalMounted(t *testing.T) {
	mark := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(name)) })
	}
	h := withPortal(mark("portal"), mark("api"))
	for path, want := range map[string]string{"/portal/": "portal", "/portal/statement": "portal", "/portals": "api", "/v1/workflows": "api"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Body.String() != want {
			t.Errorf("%s went to %q, want %s", path, rec.Body.String(), want)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/portal", nil))
	if rec.Code != http.StatusMovedPermanently || rec.Header().Get("Location") != "/portal/" {
		t.Errorf("/portal: %d %s", rec.Code, rec.Header().Get("Location"))
	}
}
