package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/webhook"
)

// TestWebhookDelivery verifies a real delivery of the reference server, as
// the README's receiver does, and rejects it tampered with.
func TestWebhookDelivery(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	wf, err := c.Workflows.Create(context.Background(), ticketParams(uniqueCustomer(t)))
	if err != nil {
		t.Fatal(err)
	}
	d := ref.hooks.wait(t, wf.ID, 30*time.Second)
	header := d.header.Get(webhook.DefaultSignatureHeader)

	ev, err := webhook.ConstructEvent(d.body, header, ref.webhookSecret)
	if err != nil {
		t.Fatal(err)
	}
	settled, err := c.Workflows.Fetch(context.Background(), wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Type != settleflow.EventWorkflowCompleted || ev.Data.WorkflowID != wf.ID || ev.Data.Status != settleflow.Settled ||
		ev.Data.Margin.Achieved == nil || settled.Margin.Achieved == nil || *ev.Data.Margin.Achieved != *settled.Margin.Achieved ||
		ev.Data.Quoted != wf.Quoted || ev.Data.Settlement == nil || *ev.Data.Settlement != *settled.Settlement {
		t.Fatalf("event %+v, workflow %+v", ev, settled)
	}
	// The event read back over the API is the same event.
	back, err := c.Events.Fetch(context.Background(), ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(back); !bytes.Equal(b, d.body) {
		t.Fatalf("event read back:\n %s\ndelivered:\n %s", b, d.body)
	}
	// The Standard Webhooks headers verify too.
	if err := webhook.VerifyStandard(d.body, d.header, ref.webhookSecret); err != nil {
		t.Fatal(err)
	}
	if d.header.Get(webhook.HeaderWebhookID) != ev.ID {
		t.Fatalf("webhook-id %q, event %s", d.header.Get(webhook.HeaderWebhookID), ev.ID)
	}

	reason := func(err error) webhook.Reason {
		var sve *webhook.SignatureVerificationError
		if !errors.As(err, &sve) {
			t.Fatalf("%v is no *webhook.SignatureVerificationError", err)
		}
		return sve.Reason
	}
	tampered := bytes.Replace(d.body, []byte(`"amount":`), []byte(`"amount":1`), 1)
	if bytes.Equal(tampered, d.body) {
		t.Fatal("nothing tampered")
	}
	if _, err := webhook.ConstructEvent(tampered, header, ref.webhookSecret); reason(err) != webhook.ReasonNoMatchingSignature {
		t.Fatalf("tampered body: %v", err)
	}
	if err := webhook.VerifyStandard(tampered, d.header, ref.webhookSecret); reason(err) != webhook.ReasonNoMatchingSignature {
		t.Fatalf("tampered body, standard: %v", err)
	}
	other, _ := webhook.NewSecret()
	if _, err := webhook.ConstructEvent(d.body, header, other); reason(err) != webhook.ReasonNoMatchingSignature {
		t.Fatalf("another secret: %v", err)
	}
	if _, err := webhook.ConstructEvent(d.body, "", ref.webhookSecret); reason(err) != webhook.ReasonMissingHeader {
		t.Fatalf("no header: %v", err)
	}
}

// The shared webhook test vectors (testdata/webhooks.json), run through
// what this package's documentation tells receivers to use.
type vectorFile struct {
	SignatureHeader string `json:"signatureHeader"`
	Tolerance       int64  `json:"tolerance"`
	Vectors         []struct {
		Name    string            `json:"name"`
		Scheme  string            `json:"scheme"`
		Secret  string            `json:"secret"`
		Now     int64             `json:"now"`
		Body    string            `json:"body"`
		Headers map[string]string `json:"headers"`
		Expect  struct {
			OK             bool           `json:"ok"`
			Reason         webhook.Reason `json:"reason"`
			EventID        string         `json:"eventId"`
			Type           string         `json:"type"`
			WorkflowID     string         `json:"workflowId"`
			MarginAchieved *int64         `json:"marginAchieved"`
			QuotedAmount   int64          `json:"quotedAmount"`
			FailureCode    string         `json:"failureCode"`
			FailureMessage string         `json:"failureMessage"`
		} `json:"expect"`
	} `json:"vectors"`
}

func TestWebhookVectors(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../testdata/webhooks.json")
	if err != nil {
		t.Fatal(err)
	}
	var f vectorFile
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	schemes, reasons := map[string]int{}, map[webhook.Reason]bool{}
	for _, v := range f.Vectors {
		schemes[v.Scheme]++
		reasons[v.Expect.Reason] = true
		t.Run(v.Name, func(t *testing.T) {
			opts := webhook.VerifyOptions{Tolerance: time.Duration(f.Tolerance) * time.Second, Now: func() time.Time { return time.Unix(v.Now, 0) }}
			var err error
			switch v.Scheme {
			case "service":
				var ev settleflow.Event
				ev, err = webhook.ConstructEventWithOptions([]byte(v.Body), v.Headers[f.SignatureHeader], v.Secret, opts)
				if err == nil {
					e := v.Expect
					if ev.ID != e.EventID || string(ev.Type) != e.Type || ev.Data.WorkflowID != e.WorkflowID || ev.Data.Quoted.Amount != e.QuotedAmount {
						t.Fatalf("event %+v, want %+v", ev, e)
					}
					if a := ev.Data.Margin.Achieved; (a == nil) != (e.MarginAchieved == nil) || (a != nil && int64(*a) != *e.MarginAchieved) {
						t.Fatalf("margin achieved %v, want %v", a, e.MarginAchieved)
					}
					if e.FailureCode != "" && (ev.Data.Failure == nil || string(ev.Data.Failure.Code) != e.FailureCode || ev.Data.Failure.Message != e.FailureMessage) {
						t.Fatalf("failure %+v, want %s %q", ev.Data.Failure, e.FailureCode, e.FailureMessage)
					}
				}
			case "standard":
				h := http.Header{}
				for k, val := range v.Headers {
					h.Set(k, val)
				}
				err = webhook.VerifyStandardWithOptions([]byte(v.Body), h, v.Secret, opts)
			default:
				t.Fatalf("scheme %q", v.Scheme)
			}
			if v.Expect.OK {
				if err != nil {
					t.Fatalf("want ok, got %v", err)
				}
				return
			}
			var sve *webhook.SignatureVerificationError
			if !errors.As(err, &sve) || sve.Reason != v.Expect.Reason {
				t.Fatalf("want %s, got %v", v.Expect.Reason, err)
			}
		})
	}
	if schemes["service"] < 10 || schemes["standard"] < 3 {
		t.Fatalf("vectors per scheme: %v", schemes)
	}
	for _, r := range []webhook.Reason{webhook.ReasonMissingHeader, webhook.ReasonMalformedHeader, webhook.ReasonNoSignature,
		webhook.ReasonTimestampOutsideTolerance, webhook.ReasonNoMatchingSignature, webhook.ReasonInvalidPayload} {
		if !reasons[r] {
			t.Errorf("no vector expects %s", r)
		}
	}
}
