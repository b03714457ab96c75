package portal

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/apikey"
	"github.com/settleflow/settleflow/httpapi"
	"github.com/settleflow/settleflow/ratelimit"
)

// TestPortalSessionsEndpoint: POST /v1/customers/{customerId}/portal_sessions
// through the API with the portal mounted: the wire shape, the link's
// lifetime, refusals, and a server without the portal.
func TestPortalSessionsEndpoint(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	keys, err := apikey.New(f.h.opts.DB, apikey.Options{})
	if err == nil {
		err = keys.Migrate(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	_, secret, err := keys.Create(ctx, apikey.CreateParams{Environment: settleflow.Test, Name: "portal"})
	if err != nil {
		t.Fatal(err)
	}
	serve := func(ps httpapi.PortalSessions) *httptest.Server {
		api, err := httpapi.New(httpapi.Options{Engine: f.engine, Keys: httpapi.APIKeys(keys), Limiter: ratelimit.NewMemory(), PortalSessions: ps})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(api)
		t.Cleanup(srv.Close)
		return srv
	}
	srv := serve(f.h.CreatePortalSession)
	post := func(srv *httptest.Server, path, body string) (int, map[string]any, string) {
		req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+secret)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		var out map[string]any
		_ = json.Unmarshal(b, &out)
		return res.StatusCode, out, string(b)
	}
	status, out, raw := post(srv, "/v1/customers/cus_api/portal_sessions", "")
	if status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, raw)
	}
	var names []string
	for k := range out {
		names = append(names, k)
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "customerId,expiresAt,id,livemode,object,url" || out["object"] != "portal_session" ||
		out["customerId"] != "cus_api" || out["livemode"] != false || !strings.HasPrefix(out["id"].(string), "ps_") {
		t.Fatalf("wire shape: %s", raw)
	}
	exp, err := time.Parse(time.RFC3339Nano, out["expiresAt"].(string))
	if err != nil || time.Until(exp) < 14*time.Minute || time.Until(exp) > 15*time.Minute {
		t.Fatalf("expiresAt %v: %v", out["expiresAt"], err)
	}
	// The link opens the customer's portal.
	b := f.browser()
	if a := b.signin(out["url"].(string)); a.status != http.StatusSeeOther {
		t.Fatalf("the API's link: %d", a.status)
	}
	var n int
	if err := f.h.opts.DB.Bun().NewRaw("SELECT COUNT(*) FROM portal_sessions WHERE customer_id = 'cus_api'").Scan(context.Background(), &n); err != nil || n != 1 ||
		b.get("/portal/").status != http.StatusOK {
		t.Fatalf("the API's link did not open cus_api's portal: %d %v", n, err)
	}
	// expiresIn.
	status, out, raw = post(srv, "/v1/customers/cus_api/portal_sessions", `{"expiresIn": 3600}`)
	exp, _ = time.Parse(time.RFC3339Nano, out["expiresAt"].(string))
	if status != http.StatusCreated || time.Until(exp) < 59*time.Minute {
		t.Fatalf("expiresIn 3600: %d %s", status, raw)
	}
	for _, c := range []struct{ path, body, code, param string }{
		{"/v1/customers/cus_api/portal_sessions", `{"expiresIn": 30}`, "parameter_invalid", "expiresIn"},
		{"/v1/customers/cus_api/portal_sessions", `{"expiresIn": 90000}`, "parameter_invalid", "expiresIn"},
		{"/v1/customers/cus_api/portal_sessions", `{"expiresIn": "900"}`, "parameter_invalid", "expiresIn"},
		{"/v1/customers/cus_api/portal_sessions", `{"returnUrl": "x"}`, "parameter_unknown", "returnUrl"},
		{"/v1/customers/nope/portal_sessions", `{}`, "parameter_invalid", "customerId"},
	} {
		var before int
		f.h.opts.DB.Bun().NewRaw("SELECT COUNT(*) FROM portal_links").Scan(ctx, &before)
		status, out, raw := post(srv, c.path, c.body)
		e, _ := out["error"].(map[string]any)
		if status != http.StatusBadRequest || e["code"] != c.code || e["param"] != c.param {
			t.Errorf("%s %s: %d %s", c.path, c.body, status, raw)
		}
		var after int
		f.h.opts.DB.Bun().NewRaw("SELECT COUNT(*) FROM portal_links").Scan(ctx, &after)
		if after != before {
			t.Errorf("%s %s made a link", c.path, c.body)
		}
	}
	// Without the portal mounted: 404, named.
	status, out, raw = post(serve(nil), "/v1/customers/cus_api/portal_sessions", "")
	if e, _ := out["error"].(map[string]any); status != http.StatusNotFound || e["code"] != "resource_missing" || !strings.Contains(raw, "portal") {
		t.Fatalf("no portal: %d %s", status, raw)
	}
}
