package client_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/client"
	"github.com/settleflow/settleflow/wire"
)

func newTextLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

// checkAPIError checks what every API error carries.
func checkAPIError(t *testing.T, err error, status int, typ client.ErrorType, code settleflow.ErrorCode) *client.APIError {
	t.Helper()
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("%v (%T) is no *client.APIError", err, err)
	}
	if apiErr.Status != status || apiErr.Type != typ || apiErr.Code != code ||
		!strings.HasPrefix(apiErr.RequestID, "req_") || apiErr.Message == "" || apiErr.Header.Get("Request-Id") != apiErr.RequestID {
		t.Fatalf("got %d %s %s %q %q, want %d %s %s", apiErr.Status, apiErr.Type, apiErr.Code, apiErr.RequestID, apiErr.Message, status, typ, code)
	}
	if !strings.Contains(err.Error(), string(code)) || !strings.Contains(err.Error(), apiErr.RequestID) {
		t.Fatalf("message %q", err.Error())
	}
	return apiErr
}

func TestErrorsFromTheServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newClient(t)

	t.Run("401 unknown key", func(t *testing.T) {
		key := "sk_test_" + strings.Repeat("Zz9", 14)
		bad := client.New(key, client.WithBaseURL(ref.baseURL), client.WithRootCAs(ref.pool))
		_, err := bad.Workflows.List(ctx, nil)
		var auth *client.AuthenticationError
		if !errors.As(err, &auth) {
			t.Fatalf("%v (%T)", err, err)
		}
		checkAPIError(t, err, 401, client.ErrorTypeAuthentication, wire.CodeAPIKeyInvalid)
		if strings.Contains(err.Error(), key) {
			t.Fatalf("the key is in %q", err)
		}
	})
	t.Run("401 malformed key", func(t *testing.T) {
		bad := client.New("sk_test_short", client.WithBaseURL(ref.baseURL), client.WithRootCAs(ref.pool))
		_, err := bad.Products.List(ctx)
		var auth *client.AuthenticationError
		if !errors.As(err, &auth) {
			t.Fatalf("%v (%T)", err, err)
		}
		checkAPIError(t, err, 401, client.ErrorTypeAuthentication, wire.CodeAPIKeyMalformed)
	})
	t.Run("403 live key without live settlement", func(t *testing.T) {
		live := client.New(ref.liveKey, client.WithBaseURL(ref.baseURL), client.WithRootCAs(ref.pool))
		_, err := live.Workflows.Create(ctx, ticketParams("cus_live"))
		var perm *client.PermissionError
		if !errors.As(err, &perm) {
			t.Fatalf("%v (%T)", err, err)
		}
		checkAPIError(t, err, 403, client.ErrorTypePermission, settleflow.CodeLivemodeNotConfigured)
	})
	t.Run("400 with param", func(t *testing.T) {
		_, err := c.Workflows.Create(ctx, &client.WorkflowCreateParams{Product: "ticket-triage", Payload: ticket{TicketID: "T-1"}})
		var inv *client.InvalidRequestError
		if !errors.As(err, &inv) || inv.Param != "customerId" {
			t.Fatalf("%v (%T)", err, err)
		}
		checkAPIError(t, err, 400, client.ErrorTypeInvalidRequest, settleflow.CodeParameterMissing)
		if !strings.Contains(err.Error(), "(param customerId)") {
			t.Fatalf("message %q", err)
		}

		_, err = c.Quotes.Create(ctx, &client.QuoteCreateParams{Product: "ticket-triage", CustomerID: "cus_1",
			Payload: map[string]any{"ticketId": "T-1", "attachments": "5"}})
		if !errors.As(err, &inv) || inv.Param != "payload.attachments" {
			t.Fatalf("%v", err)
		}
		checkAPIError(t, err, 400, client.ErrorTypeInvalidRequest, settleflow.CodeParameterInvalid)

		_, err = c.Workflows.List(ctx, &client.WorkflowListParams{Limit: 101})
		if !errors.As(err, &inv) || inv.Param != "limit" {
			t.Fatalf("%v", err)
		}
	})
	t.Run("404", func(t *testing.T) {
		_, err := c.Workflows.Fetch(ctx, "wf_01KAQ0Q2ZZ8X7C6V5B4N3M2K1J")
		var inv *client.InvalidRequestError
		if !errors.As(err, &inv) {
			t.Fatalf("%v (%T)", err, err)
		}
		checkAPIError(t, err, 404, client.ErrorTypeInvalidRequest, wire.CodeResourceMissing)
		_, err = c.Events.Fetch(ctx, "evt_01KAQ0Q3K9V6G1Q2W3E4R5T6Y7")
		checkAPIError(t, err, 404, client.ErrorTypeInvalidRequest, wire.CodeResourceMissing)
	})
	t.Run("409 idempotency key reused", func(t *testing.T) {
		customer := uniqueCustomer(t)
		p := ticketParams(customer)
		p.IdempotencyKey = "reuse-" + customer
		if _, err := c.Workflows.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		p.Payload = ticket{TicketID: "T-other"}
		_, err := c.Workflows.Create(ctx, p)
		var idem *client.IdempotencyError
		if !errors.As(err, &idem) {
			t.Fatalf("%v (%T)", err, err)
		}
		checkAPIError(t, err, 409, client.ErrorTypeIdempotency, wire.CodeIdempotencyKeyReused)
	})
	t.Run("429 from a key's limit", func(t *testing.T) {
		tiny := client.New(ref.tinyKey, client.WithBaseURL(ref.baseURL), client.WithRootCAs(ref.pool), client.WithMaxRetries(0))
		var err error
		for i := 0; i < 3 && err == nil; i++ {
			_, err = tiny.Products.List(ctx)
		}
		var rl *client.RateLimitError
		if !errors.As(err, &rl) {
			t.Fatalf("%v (%T)", err, err)
		}
		checkAPIError(t, err, 429, client.ErrorTypeRateLimit, wire.CodeRateLimitExceeded)
		if rl.RetryAfter <= 0 || rl.RetryAfter > time.Minute || rl.Header.Get("X-RateLimit-Limit") != "2" ||
			rl.Header.Get("X-RateLimit-Remaining") != "0" || rl.Header.Get("Retry-After") == "" {
			t.Fatalf("RetryAfter %v, header %v", rl.RetryAfter, rl.Header)
		}
	})
}

// TestErrorCategories checks errors.As on every category, also for answers
// without the envelope (a proxy's 502 page).
func TestErrorCategories(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status   int
		typ      string
		body     string
		category func(error) bool
	}{
		{401, "authentication_error", "", as[*client.AuthenticationError]},
		{402, "payment_error", "", as[*client.PaymentError]},
		{402, "", "payment needed", as[*client.PaymentError]},
		{403, "permission_error", "", as[*client.PermissionError]},
		{429, "rate_limit_error", "", as[*client.RateLimitError]},
		{409, "idempotency_error", "", as[*client.IdempotencyError]},
		{400, "invalid_request_error", "", as[*client.InvalidRequestError]},
		{500, "api_error", "", as[*client.ServerError]},
		{502, "", "<html>bad gateway</html>", as[*client.ServerError]},
		{401, "", "no envelope", as[*client.AuthenticationError]},
		{418, "", "", as[*client.InvalidRequestError]},
		{400, "some_future_type", "", func(err error) bool {
			var inv *client.InvalidRequestError
			var apiErr *client.APIError
			return !errors.As(err, &inv) && errors.As(err, &apiErr)
		}},
	}
	for _, tc := range cases {
		p := newProxy(t, func(p *proxy, n int, w http.ResponseWriter, r *http.Request, body []byte) {
			if tc.body != "" {
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
				return
			}
			answer(w, tc.status, tc.typ, "some_code")
		})
		_, err := p.client(client.WithMaxRetries(0)).Products.List(context.Background())
		var apiErr *client.APIError
		if !tc.category(err) || !errors.As(err, &apiErr) || apiErr.Status != tc.status {
			t.Errorf("%d %q: %v (%T)", tc.status, tc.typ, err, err)
		}
	}
}

func as[T error](err error) bool {
	var target T
	return errors.As(err, &target)
}
