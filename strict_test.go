package settleflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/settleflow/settleflow"
)

// An application that calls Quote and Create in-process, not through
// httpapi, gets the same strict payload rules: no payload whose meaning
// depends on the parser (a name twice, a case variant, invalid UTF-8) is
// priced or stored.
func TestEngineRefusesAmbiguousPayloads(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	for _, c := range []struct {
		name, payload, code, param string
	}{
		{"duplicate name", `{"ticketId":"T-1","attachments":0,"attachments":50}`, "parameter_invalid", "payload.attachments"},
		{"case variant", `{"ticketId":"T-1","ATTACHMENTS":50}`, "parameter_unknown", "payload.ATTACHMENTS"},
		{"case variant beside the field", `{"ticketId":"T-1","attachments":0,"Attachments":50}`, "parameter_unknown", "payload.Attachments"},
		{"invalid UTF-8", "{\"ticketId\":\"T-\xff\"}", "parameter_invalid", "payload.ticketId"},
		{"lone surrogate", `{"ticketId":"T-\udc00"}`, "parameter_invalid", "payload"},
		{"trailing data", `{"ticketId":"T-1"} {"attachments":50}`, "parameter_invalid", "payload"},
		{"too deep", `{"ticketId":"T-1","x":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`, "parameter_invalid", "payload.x" + strings.Repeat(".0", 62)},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := settleflow.CreateParams{Environment: settleflow.Test, Product: "ticket-triage", CustomerID: "cus_1", Payload: json.RawMessage(c.payload)}
			_, qerr := f.engine.Quote(ctx, p)
			_, _, cerr := f.engine.Create(ctx, p)
			for _, err := range []error{qerr, cerr} {
				var inv *settleflow.InvalidError
				if !errors.As(err, &inv) || string(inv.Code) != c.code || inv.Param != c.param || inv.Message == "" {
					t.Fatalf("err = %v; want code %s param %s", err, c.code, c.param)
				}
			}
		})
	}
	page, err := f.engine.List(ctx, settleflow.ListParams{Environment: settleflow.Test})
	if err != nil || len(page.Data) != 0 {
		t.Fatalf("refused payloads created workflows: %d %v", len(page.Data), err)
	}
}

// What Create stores is what was validated and priced: the compacted
// payload, valid JSON and UTF-8, with the escapes as sent.
func TestEngineStoresValidatedPayload(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	wf, _, err := f.engine.Create(ctx, settleflow.CreateParams{Environment: settleflow.Test, Product: "ticket-triage",
		CustomerID: "cus_1", Payload: json.RawMessage(" {\"ticketId\" : \"T-é\\u00e9\\ud83d\\ude00\",\n \"attachments\": 2 }\n")})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"ticketId":"T-é\u00e9\ud83d\ude00","attachments":2}`
	got, err := f.engine.Fetch(ctx, settleflow.Test, wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []json.RawMessage{wf.Payload, got.Payload} {
		if string(p) != want || !json.Valid(p) || !utf8.Valid(p) {
			t.Fatalf("stored payload %s, want %s", p, want)
		}
	}
	if wf.Quoted.Amount != 429 { // ceil((200 + 2*50) / 0.7)
		t.Fatalf("quoted %d", wf.Quoted.Amount)
	}
}

// Ids have one form, the one the engine makes (upper-case Crockford
// base32): a lower-cased id is no id, so a fetch is 404 and a list cursor is
// refused instead of answering the wrong page.
func TestEngineRefusesNonCanonicalIDs(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	wf, _, err := f.engine.Create(ctx, settleflow.CreateParams{Environment: settleflow.Test, Product: "ticket-triage",
		CustomerID: "cus_1", Payload: json.RawMessage(`{"ticketId":"T-1"}`)})
	if err != nil {
		t.Fatal(err)
	}
	lower := "wf_" + strings.ToLower(strings.TrimPrefix(wf.ID, "wf_"))
	if _, err := f.engine.Fetch(ctx, settleflow.Test, lower); !errors.Is(err, settleflow.ErrNotFound) {
		t.Fatalf("fetch of %s: %v", lower, err)
	}
	for _, p := range []settleflow.ListParams{{StartingAfter: lower}, {EndingBefore: lower}} {
		p.Environment = settleflow.Test
		page, err := f.engine.List(ctx, p)
		var inv *settleflow.InvalidError
		if !errors.As(err, &inv) || inv.Code != "parameter_invalid" || inv.Param == "" {
			t.Fatalf("list %+v: %v %v", p, page, err)
		}
	}
}

// Register reflects each product's payload schema and refuses an example
// payload the product itself would refuse.
func TestRegisterSchemaAndExample(t *testing.T) {
	ps := settleflow.NewProducts()
	bad := triage{TicketID: ""}
	err := settleflow.Register(ps, settleflow.Product[triage]{Name: "bad-example", Price: settleflow.Price{TargetMargin: 3000},
		Example:  &bad,
		Estimate: func(triage) (int64, error) { return 1, nil },
		Execute:  func(context.Context, triage) (settleflow.Execution, error) { return settleflow.Execution{}, nil }})
	if err == nil || !strings.Contains(err.Error(), "example") {
		t.Fatalf("an example the product refuses was registered: %v", err)
	}
	good := triage{TicketID: "T-1"}
	if err := settleflow.Register(ps, settleflow.Product[triage]{Name: "good-example", Price: settleflow.Price{TargetMargin: 3000},
		Example:  &good,
		Estimate: func(triage) (int64, error) { return 1, nil },
		Execute:  func(context.Context, triage) (settleflow.Execution, error) { return settleflow.Execution{}, nil }}); err != nil {
		t.Fatal(err)
	}
	info, ok := ps.Get("good-example")
	if !ok || string(info.Example) != `{"ticketId":"T-1","attachments":0}` {
		t.Fatalf("example %s", info.Example)
	}
	var schema struct {
		Type                 string                    `json:"type"`
		AdditionalProperties bool                      `json:"additionalProperties"`
		Properties           map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(info.PayloadSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Type != "object" || schema.AdditionalProperties || schema.Properties["ticketId"]["type"] != "string" || schema.Properties["attachments"]["type"] != "integer" {
		t.Fatalf("schema %s", info.PayloadSchema)
	}
}
