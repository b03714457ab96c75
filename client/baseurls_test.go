package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/settleflow/settleflow/client"
)

// Several base URLs: requests take them in turn; once one refuses
// connections every request goes to the others, at once, even with retries
// off; bad lists are refused before anything is sent.
func TestBaseURLsInTurn(t *testing.T) {
	t.Parallel()
	var hits [2]atomic.Int32
	srvs := make([]*httptest.Server, 2)
	for i := range srvs {
		srvs[i] = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits[i].Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"object":"list","url":"/v1/products","data":[],"hasMore":false}`))
		}))
		t.Cleanup(srvs[i].Close)
	}
	c := client.New("sk_test_x", client.WithBaseURLs(srvs[0].URL, srvs[1].URL+"/"), client.WithMaxRetries(0))
	if s := c.String(); !strings.Contains(s, srvs[0].URL+", "+srvs[1].URL+",") {
		t.Fatalf("the client prints as %s; want both URLs", s)
	}
	ctx := context.Background()
	for range 6 {
		if _, err := c.Products.List(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if a, b := hits[0].Load(), hits[1].Load(); a != 3 || b != 3 {
		t.Fatalf("the URLs got %d and %d requests, want 3 each", a, b)
	}
	srvs[0].Close()
	for range 6 {
		if _, err := c.Products.List(ctx); err != nil {
			t.Fatalf("with the first URL refusing: %v", err)
		}
	}
	if a, b := hits[0].Load(), hits[1].Load(); a != 3 || b != 9 {
		t.Fatalf("the URLs got %d and %d requests, want 3 and 9", a, b)
	}

	for _, tc := range []struct {
		urls []string
		want string
	}{
		{nil, "no URL"},
		{[]string{srvs[1].URL, "ftp://example.com"}, "scheme must be https"},
		{[]string{"http://example.com"}, "loopback hosts only"},
	} {
		_, err := client.New("sk_test_x", client.WithBaseURLs(tc.urls...)).Products.List(ctx)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("WithBaseURLs(%q): %v; want an error saying %q", tc.urls, err, tc.want)
		}
	}
	// WithBaseURL after WithBaseURLs: the one URL, as before.
	before := hits[1].Load()
	if _, err := client.New("sk_test_x", client.WithBaseURLs("http://127.0.0.1:1"), client.WithBaseURL(srvs[1].URL)).Products.List(ctx); err != nil || hits[1].Load() != before+1 {
		t.Fatalf("WithBaseURL after WithBaseURLs: %v", err)
	}
}
