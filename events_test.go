package settleflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/storage/sqlite"
	"github.com/settleflow/settleflow/webhook"
)

// An event read back is byte for byte the body its webhook delivery
// carried: for an event handed over in memory (completed), one written for
// the dispatcher to claim (canceled) and a failure.
func TestFetchedEventIsTheWebhookBody(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	bodies := map[string][]byte{} // by webhook-id
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies[r.Header.Get("webhook-id")] = b
		mu.Unlock()
	}))
	defer recv.Close()
	db, err := sqlite.OpenDB(filepath.Join(t.TempDir(), "webhooks.db"), sqlite.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	hooks, err := webhook.New(ctx, db, webhook.Config{Logger: zaptest.NewLogger(t), PollInterval: 20 * time.Millisecond,
		Retry: webhook.RetryPolicy{Schedule: []time.Duration{0, 50 * time.Millisecond}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := hooks.CreateEndpoint(ctx, webhook.EndpointParams{Environment: settleflow.Test, URL: recv.URL + "/hook"}); err != nil {
		t.Fatal(err)
	}
	if err := hooks.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer hooks.Stop(ctx)

	f := newFixture(t, func(o *settleflow.Options) { o.Notifier = hooks })
	f.hooks.execute = func(_ context.Context, p triage) error {
		if p.TicketID == "T-fail" {
			return settleflow.Permanent(&settleflow.Failure{Code: "bad_ticket", Message: `ticket <T-fail> & "friends"`})
		}
		return nil
	}
	canceled := f.create(t, settleflow.Test, "T-cancel", 0)
	if _, err := f.engine.Cancel(ctx, settleflow.Test, canceled.ID); err != nil {
		t.Fatal(err)
	}
	if err := f.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	settled := f.create(t, settleflow.Test, "T-<settle>&", 3)
	failed := f.create(t, settleflow.Test, "T-fail", 0)
	f.waitTerminal(t, settleflow.Test, settled.ID, failed.ID)

	page, err := f.engine.ListEvents(ctx, settleflow.EventListParams{Environment: settleflow.Test})
	if err != nil || len(page.Data) != 3 {
		t.Fatalf("ListEvents: %+v %v", page, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, ev := range page.Data {
		var body []byte
		for {
			mu.Lock()
			body = bodies[ev.ID]
			mu.Unlock()
			if body != nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no delivery of %s (%s)", ev.ID, ev.Type)
			}
			time.Sleep(10 * time.Millisecond)
		}
		fetched, err := f.engine.FetchEvent(ctx, settleflow.Test, ev.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, read := range []*settleflow.Event{fetched, &ev} {
			b, err := json.Marshal(read)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != string(body) {
				t.Fatalf("%s read back differs from its webhook body\nread %s\nsent %s", ev.Type, b, body)
			}
		}
	}
}

func TestListEventsValidation(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	evID := ids.New(ids.Event, time.Now())
	for _, c := range []struct {
		p     settleflow.EventListParams
		param string
	}{
		{settleflow.EventListParams{Limit: 101}, "limit"},
		{settleflow.EventListParams{Limit: -1}, "limit"},
		{settleflow.EventListParams{Type: "workflow.settled"}, "type"},
		{settleflow.EventListParams{WorkflowID: "cus_1"}, "workflowId"},
		{settleflow.EventListParams{WorkflowID: evID}, "workflowId"},
		{settleflow.EventListParams{CreatedAfter: time.Date(1969, 1, 1, 0, 0, 0, 0, time.UTC)}, "createdAfter"},
		{settleflow.EventListParams{StartingAfter: evID, EndingBefore: evID}, "endingBefore"},
		{settleflow.EventListParams{StartingAfter: "wf_01JD3Q6Y6F8Q2W9T4M5N7P8R0S"}, "startingAfter"},
		{settleflow.EventListParams{EndingBefore: "evt_x"}, "endingBefore"},
	} {
		c.p.Environment = settleflow.Test
		_, err := f.engine.ListEvents(ctx, c.p)
		var inv *settleflow.InvalidError
		if !errors.As(err, &inv) || inv.Param != c.param || inv.Code != settleflow.CodeParameterInvalid {
			t.Fatalf("ListEvents(%+v): %v; want an InvalidError naming %s", c.p, err, c.param)
		}
	}
	if _, err := f.engine.ListEvents(ctx, settleflow.EventListParams{Environment: "staging"}); err == nil {
		t.Fatal("an unknown environment was accepted")
	}
	page, err := f.engine.ListEvents(ctx, settleflow.EventListParams{Environment: settleflow.Live, Type: settleflow.EventWorkflowCanceled,
		CreatedAfter: time.Now().Add(-time.Hour), StartingAfter: evID})
	if err != nil || page.Data == nil || len(page.Data) != 0 || page.HasMore {
		t.Fatalf("valid empty query: %+v %v; want an empty, non-nil page", page, err)
	}
	for _, id := range []string{"", "evt_x", "wf_01JD3Q6Y6F8Q2W9T4M5N7P8R0S", evID} {
		if _, err := f.engine.FetchEvent(ctx, settleflow.Test, id); !errors.Is(err, settleflow.ErrNotFound) {
			t.Fatalf("FetchEvent(%q): %v; want ErrNotFound", id, err)
		}
	}
}

// TestWorkflowEventsNameTheCustomer: a workflow's events carry its customer,
// which the webhook deliverer's fair queue takes turns by.
func TestWorkflowEventsNameTheCustomer(t *testing.T) {
	f := newFixture(t, nil)
	if err := f.engine.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	w := f.create(t, settleflow.Test, "T-customer", 0)
	evs := f.waitEvents(t, 1)[w.ID]
	if len(evs) == 0 {
		t.Fatalf("no event for %s", w.ID)
	}
	for _, ev := range evs {
		if ev.Data.CustomerID != w.CustomerID {
			t.Errorf("%s names customer %q, want %q", ev.Type, ev.Data.CustomerID, w.CustomerID)
		}
	}
}
