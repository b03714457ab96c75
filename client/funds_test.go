package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/apikey"
	"github.com/settleflow/settleflow/client"
	"github.com/settleflow/settleflow/httpapi"
	"github.com/settleflow/settleflow/internal/fundstest"
	"github.com/settleflow/settleflow/ratelimit"
	"github.com/settleflow/settleflow/storage/sqlite"
	"github.com/settleflow/settleflow/wire"
)

// Customer funds and refunds are tested here against the real HTTP handler
// (httpapi) and engine with the fundstest double as the settler: everything
// but the chain, settled at once, with a live environment to refuse the test
// helper in. TestRealServerCustomerFunds runs the same calls against the
// reference server, whose embedded test chain charges customer balances.

// fundsAPI is an API over an engine whose settler charges customer
// balances; testKey and liveKey are keys of each environment.
type fundsAPI struct {
	srv              *httptest.Server
	engine           *settleflow.Engine
	chain            *fundstest.Settler
	testKey, liveKey string
	// funds counts the requests to the test helper.
	funds atomic.Int64
	// hold keeps a workflow whose ticket is "T-HOLD" Running until it is
	// closed, so a refusal of a workflow not Settled does not race the
	// engine.
	hold chan struct{}
}

func newFundsAPI(t *testing.T) *fundsAPI {
	t.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "api.db"), sqlite.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	products := settleflow.NewProducts()
	hold := make(chan struct{})
	if err := settleflow.Register(products, settleflow.Product[ticket]{
		Name: "ticket-triage", Description: "Triage.", PricingSummary: "2.00 USD per ticket",
		Price:    settleflow.Price{TargetMargin: 3000, MinimumCharge: 50},
		Estimate: func(t ticket) (int64, error) { return 200 + 50*int64(t.Attachments), nil },
		Execute: func(ctx context.Context, t ticket) (settleflow.Execution, error) {
			if t.TicketID == "T-HOLD" {
				select {
				case <-hold:
				case <-ctx.Done():
					return settleflow.Execution{}, ctx.Err()
				}
			}
			return settleflow.Execution{ActualCost: 150, Result: map[string]any{"queue": "billing"}}, nil
		},
	}); err != nil {
		t.Fatal(err)
	}
	a := &fundsAPI{chain: fundstest.New(), hold: hold}
	a.chain.Live = true
	a.engine, err = settleflow.New(settleflow.Options{Store: store, Settler: a.chain, Products: products,
		Notifier:     settleflow.NotifierFunc(func(context.Context, []settleflow.Event) error { return nil }),
		PollInterval: 10 * time.Millisecond, SettlementPollInterval: 10 * time.Millisecond, FundsPollInterval: 10 * time.Millisecond,
		TestFaucet: 100_000})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.engine.Stop(context.Background()) })
	// Cleanups run last first: the held workflow is released before the
	// engine stops and waits for it.
	t.Cleanup(func() { close(hold) })
	keys, err := apikey.New(store.DB(), apikey.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := keys.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { keys.Close() })
	for _, k := range []struct {
		env    settleflow.Environment
		secret *string
	}{{settleflow.Test, &a.testKey}, {settleflow.Live, &a.liveKey}} {
		if _, *k.secret, err = keys.Create(ctx, apikey.CreateParams{Environment: k.env, Name: "funds", Plan: apikey.Pro}); err != nil {
			t.Fatal(err)
		}
	}
	h, err := httpapi.New(httpapi.Options{Engine: a.engine, Keys: httpapi.APIKeys(keys), Limiter: ratelimit.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	a.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/test_helpers/") {
			a.funds.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *fundsAPI) client(key string, opts ...client.Option) *client.Client {
	return client.New(key, append([]client.Option{client.WithBaseURL(a.srv.URL), client.WithHTTPClient(a.srv.Client()),
		client.WithBackoff(time.Millisecond, 10*time.Millisecond, time.Second)}, opts...)...)
}

func waitRefund(t *testing.T, c *client.Client, id string) *settleflow.Refund {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		rf, err := c.Refunds.Fetch(ctx, id)
		if err != nil {
			t.Fatalf("fetch refund %s: %v", id, err)
		}
		if rf.Status != settleflow.RefundPending {
			return rf
		}
		select {
		case <-ctx.Done():
			t.Fatalf("refund %s still Pending", id)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Customers, refunds and the test helper through the client: the faucet's
// funding on a first create, a 402 with its amounts, FundCustomer, partial
// and full refunds with an idempotency key, the lists and the errors.
func TestCustomerFundsAndRefunds(t *testing.T) {
	t.Parallel()
	api := newFundsAPI(t)
	ctx := context.Background()
	c := api.client(api.testKey)

	// A customer never seen: zeros, and where to deposit.
	cus, err := c.Customers.Fetch(ctx, "cus_client")
	if err != nil || cus.Object != "customer" || cus.ID != "cus_client" || cus.Livemode || cus.Balance.OnChain != 0 ||
		cus.Balance.Currency != "usd" || cus.Deposit == nil || cus.Deposit.Contract != fundstest.Contract {
		t.Fatalf("a customer never seen: %+v %v", cus, err)
	}
	var inv *client.InvalidRequestError
	if _, err := c.Customers.Fetch(ctx, "123"); !errors.As(err, &inv) || inv.Code != settleflow.CodeParameterInvalid || inv.Param != "customerId" {
		t.Fatalf("a bad customer id: %v", err)
	}

	// The first create of a test customer is funded by the faucet.
	wf, err := c.Workflows.Create(ctx, ticketParams("cus_client"))
	if err != nil {
		t.Fatal(err)
	}
	if wf.Refunded.Amount != 0 || wf.Refunded.Currency != "usd" {
		t.Fatalf("a new workflow's refunded: %+v", wf.Refunded)
	}
	quoted := wf.Quoted.Amount
	wf = waitTerminalFunds(t, c, wf.ID)
	if wf.Status != settleflow.Settled {
		t.Fatalf("workflow %s %+v", wf.Status, wf.Failure)
	}
	if cus, _ := c.Customers.Fetch(ctx, "cus_client"); cus.Balance.OnChain != 100_000-quoted || cus.Balance.Available != 100_000-quoted {
		t.Fatalf("balance after one charge: %+v", cus.Balance)
	}

	// 402: the customer the faucet never funds.
	var pay *client.PaymentError
	_, err = c.Workflows.Create(ctx, ticketParams(settleflow.TestCustomerInsufficientFunds))
	if !errors.As(err, &pay) || pay.Status != 402 || pay.Type != client.ErrorTypePayment || pay.Code != settleflow.CodeInsufficientFunds ||
		pay.Available != 0 || pay.Amount != quoted || pay.Currency != "usd" || pay.CustomerID != settleflow.TestCustomerInsufficientFunds {
		t.Fatalf("402: %#v", err)
	}
	// The test helper funds it; the same create then goes through.
	before := api.funds.Load()
	funded, err := c.TestHelpers.FundCustomer(ctx, settleflow.TestCustomerInsufficientFunds, quoted)
	if err != nil || funded.Balance.Available != quoted || api.funds.Load() != before+1 {
		t.Fatalf("FundCustomer: %+v %v", funded, err)
	}
	if _, err := c.Workflows.Create(ctx, ticketParams(settleflow.TestCustomerInsufficientFunds)); err != nil {
		t.Fatalf("after funding: %v", err)
	}
	var perm *client.PermissionError
	if _, err := api.client(api.liveKey).TestHelpers.FundCustomer(ctx, "cus_client", 100); !errors.As(err, &perm) || perm.Code != wire.CodeTestModeOnly {
		t.Fatalf("FundCustomer with a live key: %v", err)
	}
	if _, err := c.TestHelpers.FundCustomer(ctx, "cus_client", 0); err == nil {
		t.Fatal("FundCustomer of 0: no error")
	}

	// Refunds: partial with a key, its replay, then the rest.
	p := &client.RefundCreateParams{Amount: 100, Reason: "late answer", IdempotencyKey: "refund-" + wf.ID}
	r1, err := c.Refunds.Create(ctx, wf.ID, p)
	if err != nil || r1.Object != "refund" || r1.Amount != 100 || r1.Reason != "late answer" || r1.WorkflowID != wf.ID || r1.Status != settleflow.RefundPending {
		t.Fatalf("refund: %+v %v", r1, err)
	}
	again, err := c.Refunds.Create(ctx, wf.ID, p)
	if err != nil || again.ID != r1.ID {
		t.Fatalf("replay: %+v %v", again, err)
	}
	var idem *client.IdempotencyError
	if _, err := c.Refunds.Create(ctx, wf.ID, &client.RefundCreateParams{Amount: 5, IdempotencyKey: p.IdempotencyKey}); !errors.As(err, &idem) {
		t.Fatalf("key reused: %v", err)
	}
	if _, err := c.Refunds.Create(ctx, wf.ID, &client.RefundCreateParams{Amount: quoted}); !errors.As(err, &inv) ||
		inv.Code != settleflow.CodeAmountExceedsRefundable || inv.Param != "amount" || inv.Status != 400 {
		t.Fatalf("too much: %v", err)
	}
	r2, err := c.Refunds.Create(ctx, wf.ID, nil)
	if err != nil || r2.Amount != quoted-100 {
		t.Fatalf("the rest: %+v %v", r2, err)
	}
	for _, id := range []string{r1.ID, r2.ID} {
		if rf := waitRefund(t, c, id); rf.Status != settleflow.RefundSucceeded || rf.Settlement == nil {
			t.Fatalf("refund %s: %+v", id, rf)
		}
	}
	if wf, _ := c.Workflows.Fetch(ctx, wf.ID); wf.Refunded.Amount != quoted {
		t.Fatalf("workflow refunded %+v", wf.Refunded)
	}
	if cus, _ := c.Customers.Fetch(ctx, "cus_client"); cus.Balance.OnChain != 100_000 {
		t.Fatalf("balance after a full refund: %+v", cus.Balance)
	}

	// Lists.
	page, err := c.Refunds.List(ctx, &client.RefundListParams{WorkflowID: wf.ID, Limit: 1})
	if err != nil || len(page.Data) != 1 || page.Data[0].ID != r2.ID || !page.HasMore || page.URL != "/v1/refunds" {
		t.Fatalf("first page: %+v %v", page, err)
	}
	var all []string
	for rf, err := range c.Refunds.ListAutoPaging(ctx, &client.RefundListParams{Status: settleflow.RefundSucceeded, Limit: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, rf.ID)
	}
	if len(all) != 2 || all[0] != r2.ID || all[1] != r1.ID {
		t.Fatalf("auto-paging: %v", all)
	}
	var back []string
	for rf, err := range c.Refunds.ListAutoPaging(ctx, &client.RefundListParams{EndingBefore: r1.ID}) {
		if err != nil {
			t.Fatal(err)
		}
		back = append(back, rf.ID)
	}
	if len(back) != 1 || back[0] != r2.ID {
		t.Fatalf("auto-paging back: %v", back)
	}

	// Refusals.
	heldParams := ticketParams("cus_client")
	heldParams.Payload = ticket{TicketID: "T-HOLD", Subject: "Held", Attachments: 1}
	held, err := c.Workflows.Create(ctx, heldParams)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Refunds.Create(ctx, held.ID, nil); !errors.As(err, &inv) || inv.Code != settleflow.CodeWorkflowNotSettled || inv.Status != 409 {
		t.Fatalf("refund of a workflow not Settled: %v", err)
	}
	if _, err := c.Refunds.Create(ctx, "wf_01JD3Q6Y6F8Q2W9T4M5N7P8R0S", nil); !errors.As(err, &inv) || inv.Code != wire.CodeResourceMissing {
		t.Fatalf("refund of an unknown workflow: %v", err)
	}
	if _, err := c.Refunds.Fetch(ctx, "re_01JD3Q6Y6F8Q2W9T4M5N7P8R0S"); !errors.As(err, &inv) || inv.Status != 404 {
		t.Fatalf("unknown refund: %v", err)
	}
	if _, err := c.Refunds.List(ctx, &client.RefundListParams{Status: "Done"}); !errors.As(err, &inv) || inv.Param != "status" {
		t.Fatalf("a bad status filter: %v", err)
	}
	for _, err := range []error{
		func() error { _, err := c.Refunds.Create(ctx, "", nil); return err }(),
		func() error { _, err := c.Refunds.Fetch(ctx, ""); return err }(),
		func() error { _, err := c.Customers.Fetch(ctx, ""); return err }(),
		func() error { _, err := c.TestHelpers.FundCustomer(ctx, "", 1); return err }(),
	} {
		if err == nil {
			t.Fatal("an empty id: no error")
		}
	}
	// The events of refunds and deposits are read back by type.
	evs, err := c.Events.List(ctx, &client.EventListParams{Type: settleflow.EventRefundSucceeded})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs.Data {
		if ev.Data.Refund == nil || ev.Data.WorkflowID != wf.ID {
			t.Fatalf("refund.succeeded event %+v", ev)
		}
	}
}

// FundCustomer is sent once, even when the answer is a 5xx: each call
// deposits, and the server keeps no idempotency key for it.
func TestFundCustomerIsNotRetried(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		answer(w, 503, "api_error", "service_unavailable")
	}))
	defer srv.Close()
	c := client.New("sk_test_"+"0123456789abcdefghijABCDEFGHIJ0123456789", client.WithBaseURL(srv.URL), client.WithHTTPClient(srv.Client()),
		client.WithBackoff(time.Millisecond, time.Millisecond, time.Second))
	var se *client.ServerError
	if _, err := c.TestHelpers.FundCustomer(context.Background(), "cus_1", 100); !errors.As(err, &se) || n.Load() != 1 {
		t.Fatalf("FundCustomer: %v after %d requests, want a ServerError after 1", err, n.Load())
	}
	// Refunds carry an idempotency key, so they are retried.
	n.Store(0)
	if _, err := c.Refunds.Create(context.Background(), "wf_01JD3Q6Y6F8Q2W9T4M5N7P8R0S", nil); !errors.As(err, &se) || n.Load() != 3 {
		t.Fatalf("Refunds.Create: %v after %d requests, want 3", err, n.Load())
	}
}

func waitTerminalFunds(t *testing.T, c *client.Client, id string) *settleflow.Workflow {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		wf, err := c.Workflows.Fetch(ctx, id)
		if err != nil {
			t.Fatalf("fetch %s: %v", id, err)
		}
		if wf.Status.Terminal() {
			return wf
		}
		select {
		case <-ctx.Done():
			t.Fatalf("workflow %s still %s", id, wf.Status)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// The same calls against the reference server, whose embedded test chain
// charges customer balances: a new test customer has deposit instructions
// and a zero balance; the faucet funds it (the server's default,
// settleflow.DefaultTestFaucet) on its first create; the balance moves by
// exactly the charge, a refund and a deposit of the test helper; and
// cus_insufficient_funds is refused with a *PaymentError.
func TestRealServerCustomerFunds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newClient(t)
	customer := uniqueCustomer(t)
	balance := func() settleflow.Balance {
		t.Helper()
		cus, err := c.Customers.Fetch(ctx, customer)
		if err != nil {
			t.Fatal(err)
		}
		return cus.Balance
	}
	cus, err := c.Customers.Fetch(ctx, customer)
	if err != nil {
		t.Fatal(err)
	}
	if cus.Deposit == nil {
		t.Fatalf("the reference server's customer has no deposit instructions: its settler does not charge customer balances (%+v)", cus)
	}
	if cus.ID != customer || cus.Livemode || cus.Balance != (settleflow.Balance{Currency: "usd"}) || cus.Deposit.ChainID != 1337 ||
		!regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`).MatchString(cus.Deposit.Contract) || !regexp.MustCompile(`^0x[0-9a-f]{64}$`).MatchString(cus.Deposit.CustomerRef) {
		t.Fatalf("a customer never seen: %+v %+v", cus, cus.Deposit)
	}
	// The faucet funds a new test customer on its first create, and its
	// charge is what it was quoted.
	wf, err := c.Workflows.Create(ctx, ticketParams(customer))
	if err != nil {
		t.Fatal(err)
	}
	charge := wf.Quoted.Amount
	wf = waitTerminal(t, c, wf.ID)
	if wf.Status != settleflow.Settled {
		t.Fatalf("workflow %s %+v", wf.Status, wf.Failure)
	}
	onChain := settleflow.DefaultTestFaucet - charge
	if b := balance(); b != (settleflow.Balance{OnChain: onChain, Available: onChain, Currency: "usd"}) {
		t.Fatalf("after the faucet and a charge of %d: %+v; want %d", charge, b, onChain)
	}
	rf, err := c.Refunds.Create(ctx, wf.ID, &client.RefundCreateParams{Amount: 1, Reason: "test"})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for rf.Status == settleflow.RefundPending && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		if rf, err = c.Refunds.Fetch(ctx, rf.ID); err != nil {
			t.Fatal(err)
		}
	}
	if rf.Status != settleflow.RefundSucceeded || rf.Amount != 1 || rf.WorkflowID != wf.ID {
		t.Fatalf("refund on chain: %+v", rf)
	}
	onChain++
	if b := balance(); b != (settleflow.Balance{OnChain: onChain, Available: onChain, Currency: "usd"}) {
		t.Fatalf("after a refund of 1: %+v; want %d", b, onChain)
	}
	var pay *client.PaymentError
	if _, err := c.Workflows.Create(ctx, ticketParams(settleflow.TestCustomerInsufficientFunds)); !errors.As(err, &pay) || pay.Amount < 1 ||
		pay.Available >= pay.Amount || pay.CustomerID != settleflow.TestCustomerInsufficientFunds || pay.Code != settleflow.CodeInsufficientFunds {
		t.Fatalf("402 from the reference server: %v", err)
	}
	onChain += 500
	if cus, err := c.TestHelpers.FundCustomer(ctx, customer, 500); err != nil ||
		cus.Balance != (settleflow.Balance{OnChain: onChain, Available: onChain, Currency: "usd"}) {
		t.Fatalf("FundCustomer on the reference server: %+v %v; want %d", cus, err, onChain)
	}
}
