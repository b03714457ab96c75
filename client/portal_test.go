package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/settleflow/settleflow/client"
)

// Issue 39: the client issues customer portal links on the reference
// server. A link names its customer and environment, expires when asked
// (15 minutes by default), and opens the portal once: its sign-in page
// holds it, the first sign-in sets the portal's cookie, a second is
// refused. Bad parameters are refused, naming them; a lifetime that is
// not whole seconds is refused by the client before anything is sent.
func TestRealServerPortalSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newClient(t)
	customer := uniqueCustomer(t)
	ps, err := c.Customers.CreatePortalSession(ctx, customer, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ps.Object != "portal_session" || !strings.HasPrefix(ps.ID, "ps_") || ps.CustomerID != customer || ps.Livemode {
		t.Fatalf("portal session %+v", ps)
	}
	if d := time.Until(ps.ExpiresAt); d < 14*time.Minute || d > 16*time.Minute {
		t.Errorf("expires %s away, want 15 minutes", d)
	}
	link, err := url.Parse(ps.URL)
	if err != nil || !strings.HasPrefix(ps.URL, ref.baseURL) || link.Query().Get("token") == "" {
		t.Fatalf("url %q (%v): want a link with a token on the server %s", ps.URL, err, ref.baseURL)
	}
	short, err := c.Customers.CreatePortalSession(ctx, customer, &client.PortalSessionCreateParams{ExpiresIn: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Until(short.ExpiresAt); d < 100*time.Second || d > 140*time.Second || short.URL == ps.URL || short.ID == ps.ID {
		t.Errorf("a 2-minute link: %+v (%s away); want a new link expiring in 2 minutes", short, d)
	}

	// The link opens the portal once.
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig()},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	page, err := hc.Get(ps.URL)
	if err != nil {
		t.Fatal(err)
	}
	page.Body.Close()
	if page.StatusCode != http.StatusOK {
		t.Fatalf("the link's page: %s", page.Status)
	}
	signin := func() *http.Response {
		t.Helper()
		resp, err := hc.PostForm(ref.baseURL+link.Path, url.Values{"token": {link.Query().Get("token")}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if first := signin(); first.StatusCode != http.StatusSeeOther || len(first.Cookies()) == 0 {
		t.Fatalf("the first sign-in: %s, cookies %v; want a redirect with the portal's cookie", first.Status, first.Cookies())
	}
	if second := signin(); second.StatusCode < 400 || len(second.Cookies()) != 0 {
		t.Fatalf("the link used again: %s, cookies %v; want it refused", second.Status, second.Cookies())
	}

	for _, tc := range []struct {
		customer string
		params   *client.PortalSessionCreateParams
		param    string
	}{
		{"not a customer", nil, "customerId"},
		{customer, &client.PortalSessionCreateParams{ExpiresIn: 30 * time.Second}, "expiresIn"},
		{customer, &client.PortalSessionCreateParams{ExpiresIn: 25 * time.Hour}, "expiresIn"},
	} {
		var ie *client.InvalidRequestError
		if _, err := c.Customers.CreatePortalSession(ctx, tc.customer, tc.params); !errors.As(err, &ie) || ie.Param != tc.param || ie.Status != 400 {
			t.Errorf("%q %+v: %v; want a 400 naming %s", tc.customer, tc.params, err, tc.param)
		}
	}
	var api *client.APIError
	for _, bad := range []time.Duration{1500 * time.Millisecond, -time.Minute} {
		if _, err := c.Customers.CreatePortalSession(ctx, customer, &client.PortalSessionCreateParams{ExpiresIn: bad}); err == nil || errors.As(err, &api) {
			t.Errorf("ExpiresIn %s: %v; want the client's own error", bad, err)
		}
	}
	if _, err := c.Customers.CreatePortalSession(ctx, "", nil); err == nil {
		t.Error("an empty customer id was sent")
	}
}
