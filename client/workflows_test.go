package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/client"
	"github.com/settleflow/settleflow/wire"
)

func TestCreateFetchList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newClient(t)
	customer := uniqueCustomer(t)

	q, err := c.Quotes.Create(ctx, &client.QuoteCreateParams{Product: "ticket-triage", CustomerID: customer,
		Payload: json.RawMessage(`{"ticketId": "T-42", "subject": "Refund for invoice 7", "attachments": 1}`)})
	if err != nil {
		t.Fatal(err)
	}
	if q.Object != "quote" || q.Quoted.Amount <= 0 || q.Quoted.Currency != "usd" || q.Margin.Target != 3000 ||
		string(q.Payload) != `{"ticketId":"T-42","subject":"Refund for invoice 7","attachments":1}` {
		t.Fatalf("quote %+v payload %s", q, q.Payload)
	}

	wf, err := c.Workflows.Create(ctx, ticketParams(customer))
	if err != nil {
		t.Fatal(err)
	}
	if wf.Object != "workflow" || len(wf.ID) != 29 || wf.Status != settleflow.Pending || wf.CustomerID != customer ||
		wf.Product != "ticket-triage" || wf.Livemode || wf.Margin.Achieved != nil || wf.CreatedAt.IsZero() {
		t.Fatalf("created %+v", wf)
	}
	// What a quote says a create costs is what the create quotes.
	if wf.Quoted != q.Quoted {
		t.Fatalf("quoted %+v, quote said %+v", wf.Quoted, q.Quoted)
	}
	// The payload keys are stored as sent.
	if string(wf.Payload) != `{"ticketId":"T-42","subject":"Refund for invoice 7","attachments":1}` {
		t.Fatalf("payload %s", wf.Payload)
	}

	got, err := c.Workflows.Fetch(ctx, wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != wf.ID || got.Quoted != wf.Quoted || !got.CreatedAt.Equal(wf.CreatedAt) {
		t.Fatalf("fetched %+v, created %+v", got, wf)
	}

	page, err := c.Workflows.List(ctx, &client.WorkflowListParams{CustomerID: customer})
	if err != nil {
		t.Fatal(err)
	}
	if page.Object != "list" || page.URL != "/v1/workflows" || page.HasMore || len(page.Data) != 1 || page.Data[0].ID != wf.ID {
		t.Fatalf("list %+v", page)
	}

	done := waitTerminal(t, c, wf.ID)
	if done.Status != settleflow.Settled || done.Margin.Achieved == nil || done.Settlement == nil || done.Settlement.TxHash == "" {
		t.Fatalf("settled %+v", done)
	}
	settled, err := c.Workflows.List(ctx, &client.WorkflowListParams{CustomerID: customer, Status: settleflow.Settled, Product: "ticket-triage", Limit: 5})
	if err != nil || len(settled.Data) != 1 {
		t.Fatalf("list Settled: %+v %v", settled, err)
	}
	pending, err := c.Workflows.List(ctx, &client.WorkflowListParams{CustomerID: customer, Status: settleflow.Pending})
	if err != nil || len(pending.Data) != 0 {
		t.Fatalf("list Pending: %+v %v", pending, err)
	}

	// Its event, read back.
	events, err := c.Events.List(ctx, &client.EventListParams{WorkflowID: wf.ID})
	if err != nil || len(events.Data) != 1 {
		t.Fatalf("events %+v %v", events, err)
	}
	ev := events.Data[0]
	if ev.Type != settleflow.EventWorkflowCompleted || ev.Data.WorkflowID != wf.ID || *ev.Data.Margin.Achieved != *done.Margin.Achieved {
		t.Fatalf("event %+v", ev)
	}
	ev2, err := c.Events.Fetch(ctx, ev.ID)
	if err != nil || ev2.ID != ev.ID || ev2.Data.Quoted != wf.Quoted {
		t.Fatalf("fetch event %+v %v", ev2, err)
	}
	typed, err := c.Events.List(ctx, &client.EventListParams{WorkflowID: wf.ID, Type: settleflow.EventWorkflowFailed, CreatedAfter: wf.CreatedAt.Add(-time.Second)})
	if err != nil || len(typed.Data) != 0 {
		t.Fatalf("events of another type %+v %v", typed, err)
	}
}

func TestProducts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newClient(t)
	page, err := c.Products.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range page.Data {
		names = append(names, p.Name)
	}
	if !slices.Contains(names, "ticket-triage") || page.HasMore {
		t.Fatalf("products %v hasMore %v", names, page.HasMore)
	}
	p, err := c.Products.Fetch(ctx, "ticket-triage")
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "ticket-triage" || p.TargetMargin != 3000 || p.MinimumCharge.Currency != "usd" || !json.Valid(p.PayloadSchema) || len(p.Example) < 2 {
		t.Fatalf("product %+v", p)
	}
	// The example the catalogue offers is a payload the product takes.
	if _, err := c.Quotes.Create(ctx, &client.QuoteCreateParams{Product: p.Name, CustomerID: "cus_1", Payload: p.Example}); err != nil {
		t.Fatalf("quote of the example: %v", err)
	}
	_, err = c.Products.Fetch(ctx, "no-such-product")
	var inv *client.InvalidRequestError
	if !errors.As(err, &inv) || inv.Status != 404 || inv.Code != wire.CodeResourceMissing {
		t.Fatalf("unknown product: %v", err)
	}
}

// countingTransport counts the requests through it.
type countingTransport struct {
	n    atomic.Int64
	next http.RoundTripper
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

func TestListAutoPaging(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	counter := &countingTransport{next: &http.Transport{TLSClientConfig: tlsConfig()}}
	c := client.New(ref.key, client.WithBaseURL(ref.baseURL), client.WithHTTPClient(&http.Client{Transport: counter}))
	customer := uniqueCustomer(t)
	var created []string // oldest first
	for range 7 {
		wf, err := c.Workflows.Create(ctx, ticketParams(customer))
		if err != nil {
			t.Fatal(err)
		}
		created = append(created, wf.ID)
	}
	newestFirst := slices.Clone(created)
	slices.Reverse(newestFirst)

	collect := func(p *client.WorkflowListParams) []string {
		t.Helper()
		before := counter.n.Load()
		var ids []string
		for wf, err := range c.Workflows.ListAutoPaging(ctx, p) {
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, wf.ID)
		}
		// One request per page, none after the last (hasMore false).
		if pages, want := counter.n.Load()-before, int64(len(ids)+1)/2; pages != want {
			t.Fatalf("%d requests for %d workflows in pages of 2, want %d", pages, len(ids), want)
		}
		return ids
	}
	// Forward: every workflow once, newest first, in 4 pages of 2.
	if got := collect(&client.WorkflowListParams{CustomerID: customer, Limit: 2}); !slices.Equal(got, newestFirst) {
		t.Fatalf("forward:\n got  %v\n want %v", got, newestFirst)
	}
	// From a cursor: the older ones after it.
	if got := collect(&client.WorkflowListParams{CustomerID: customer, Limit: 2, StartingAfter: created[5]}); !slices.Equal(got, newestFirst[2:]) {
		t.Fatalf("startingAfter:\n got  %v\n want %v", got, newestFirst[2:])
	}
	// Backward from the oldest: the newer ones, oldest first.
	if got := collect(&client.WorkflowListParams{CustomerID: customer, Limit: 2, EndingBefore: created[0]}); !slices.Equal(got, created[1:]) {
		t.Fatalf("backward:\n got  %v\n want %v", got, created[1:])
	}
	// Breaking out stops fetching.
	before := counter.n.Load()
	for range c.Workflows.ListAutoPaging(ctx, &client.WorkflowListParams{CustomerID: customer, Limit: 2}) {
		break
	}
	if n := counter.n.Load() - before; n != 1 {
		t.Fatalf("break after the first item: %d requests", n)
	}
	// An error is yielded once and ends the iteration.
	var errs int
	for wf, err := range c.Workflows.ListAutoPaging(ctx, &client.WorkflowListParams{Limit: 1000}) {
		if err == nil || wf != nil {
			t.Fatalf("got %v, %v", wf, err)
		}
		errs++
	}
	if errs != 1 {
		t.Fatalf("%d errors", errs)
	}

	// The events of these workflows, paged the same way, once they settled.
	start := time.Now().Add(-time.Minute)
	for _, id := range created {
		waitTerminal(t, c, id)
	}
	want := map[string]bool{}
	for _, id := range created {
		want[id] = true
	}
	var seen []string
	var lastID string
	for ev, err := range c.Events.ListAutoPaging(ctx, &client.EventListParams{CreatedAfter: start, Limit: 2, Type: settleflow.EventWorkflowCompleted}) {
		if err != nil {
			t.Fatal(err)
		}
		if lastID != "" && ev.ID >= lastID {
			t.Fatalf("events out of order: %s after %s", ev.ID, lastID)
		}
		lastID = ev.ID
		if want[ev.Data.WorkflowID] {
			seen = append(seen, ev.Data.WorkflowID)
		}
	}
	slices.Sort(seen)
	if sorted := slices.Sorted(slices.Values(created)); !slices.Equal(seen, sorted) {
		t.Fatalf("events of %v, want one each of %v", seen, sorted)
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newClient(t)
	customer := uniqueCustomer(t)

	// A cancel races the workers that start a Pending workflow: cancel a
	// backlog newest first, so that some cancels win; check the losers'
	// errors too.
	won := 0
	ids := backlog(t, c, customer, 8)
	for _, id := range slices.Backward(ids) {
		got, err := c.Workflows.Cancel(ctx, id)
		var inv *client.InvalidRequestError
		switch {
		case err == nil:
			if got.ID != id || got.Status != settleflow.Canceled {
				t.Fatalf("canceled %+v", got)
			}
			won++
		case errors.As(err, &inv) && inv.Status == http.StatusConflict &&
			(inv.Code == settleflow.CodeWorkflowRunning || inv.Code == settleflow.CodeWorkflowSettling || inv.Code == settleflow.CodeWorkflowSettled):
		default:
			t.Fatalf("cancel: %v", err)
		}
	}
	if won == 0 {
		t.Fatal("no cancel of a backlog of 8 won the race")
	}

	// A settled workflow cannot be canceled.
	wf, err := c.Workflows.Create(ctx, ticketParams(customer))
	if err != nil {
		t.Fatal(err)
	}
	waitTerminal(t, c, wf.ID)
	_, err = c.Workflows.Cancel(ctx, wf.ID)
	var inv *client.InvalidRequestError
	if !errors.As(err, &inv) || inv.Status != http.StatusConflict || inv.Code != settleflow.CodeWorkflowSettled {
		t.Fatalf("cancel of a settled workflow: %v", err)
	}
}

// TestWireRoundTrip checks that the root package's wire types read what the
// server writes without loss: unmarshalled and marshalled again, a workflow
// and an event are the server's bytes exactly (margins such as 0.2875
// included).
func TestWireRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newClient(t)
	customer := uniqueCustomer(t)
	wf, err := c.Workflows.Create(ctx, &client.WorkflowCreateParams{Product: "ticket-triage", CustomerID: customer,
		Payload: map[string]any{"ticketId": "T-<&>\u2028", "subject": "ünïcödé \"quoted\"", "attachments": 3}})
	if err != nil {
		t.Fatal(err)
	}
	done := waitTerminal(t, c, wf.ID)
	if done.Margin.Achieved == nil {
		t.Fatalf("no achieved margin: %+v", done)
	}

	get := func(path string) []byte {
		t.Helper()
		hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig()}}
		req, _ := http.NewRequest(http.MethodGet, ref.baseURL+path, nil)
		req.Header.Set("Authorization", "Bearer "+ref.key)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		return bytes.TrimSpace(b)
	}
	raw := get("/v1/workflows/" + wf.ID)
	var w settleflow.Workflow
	if err := json.Unmarshal(raw, &w); err != nil {
		t.Fatal(err)
	}
	again, err := json.Marshal(&w)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, raw) {
		t.Fatalf("workflow round trip:\n server %s\n again  %s", raw, again)
	}

	page, err := c.Events.List(ctx, &client.EventListParams{WorkflowID: wf.ID})
	if err != nil || len(page.Data) != 1 {
		t.Fatalf("events %v %v", page, err)
	}
	rawEv := get("/v1/events/" + page.Data[0].ID)
	var ev settleflow.Event
	if err := json.Unmarshal(rawEv, &ev); err != nil {
		t.Fatal(err)
	}
	againEv, err := json.Marshal(&ev)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(againEv, rawEv) {
		t.Fatalf("event round trip:\n server %s\n again  %s", rawEv, againEv)
	}
}

// TestBasisPointsRoundTrip checks every margin from −100 % to 100 % in steps
// of one basis point: what the server writes (0.2875) reads back exactly.
func TestBasisPointsRoundTrip(t *testing.T) {
	t.Parallel()
	for bp := settleflow.BasisPoints(-10000); bp <= 10000; bp++ {
		m := settleflow.Margin{Target: bp, Achieved: &bp}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var back settleflow.Margin
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if back.Target != bp || back.Achieved == nil || *back.Achieved != bp {
			t.Fatalf("%d → %s → %+v", bp, b, back)
		}
	}
	var m settleflow.Margin
	if err := json.Unmarshal([]byte(`{"target":0.3,"achieved":null}`), &m); err != nil || m.Target != 3000 || m.Achieved != nil {
		t.Fatalf("null achieved: %+v %v", m, err)
	}
}
