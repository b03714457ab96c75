package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/invopop/jsonschema"

	"github.com/settleflow/settleflow"
)

// The demo catalogue: six products whose cost depends on their payload, one
// or more per pricing model. ticket-triage, document-summary and
// image-moderation are priced fixed (the quote is charged); the pricing
// models of issue 26 have one product each (outcome_products.go):
// document-extraction (capped: cost plus markup, up to the quote), ticket-
// resolution (success_fee: the quote if the ticket is resolved with
// confidence, else nothing) and lead-enrichment (hybrid: a base share
// always, the rest if the lead is found). Every product is deterministic
// (its result and cost follow from its payload, no external call) and so
// idempotent by workflow id. Every product reports its cost as items
// (settleflow.Execution.CostItems, or ReportSpend while it runs) that add
// up to what it cost, so the dashboard's cost breakdown shows where the
// money went for each of them.

// The payload types carry their JSON Schema in jsonschema tags; each
// Validate checks exactly what the schema states, so a payload the catalogue's
// schema accepts is never refused for a reason the schema could have said.

type triage struct {
	TicketID    string `json:"ticketId" jsonschema:"required,minLength=1,maxLength=100,description=The ticket's id in your helpdesk."`
	Subject     string `json:"subject,omitempty" jsonschema:"description=The ticket's subject; billing words route it to the billing queue."`
	Attachments int    `json:"attachments,omitempty" jsonschema:"minimum=0,maximum=50,description=How many files the ticket carries."`
}

func (t triage) Validate() error {
	switch n := utf8.RuneCountInString(t.TicketID); {
	case n == 0:
		return &settleflow.FieldError{Field: "ticketId", Message: "is required"}
	case n > 100:
		return &settleflow.FieldError{Field: "ticketId", Message: "has at most 100 characters"}
	case t.Attachments < 0 || t.Attachments > 50:
		return &settleflow.FieldError{Field: "attachments", Message: "must be between 0 and 50"}
	}
	return nil
}

// nonBlank is the schema's way of saying "not only white space".
const nonBlank = `\S`

type summary struct {
	Text     string `json:"text" jsonschema:"required,minLength=1,maxLength=200000,description=The text to summarize; not only white space."`
	Language string `json:"language,omitempty" jsonschema:"pattern=^[a-z]{2}$,description=A two-letter ISO 639-1 code in lower case."`
}

// JSONSchemaExtend adds what a tag cannot hold (a pattern with a backslash).
func (summary) JSONSchemaExtend(s *jsonschema.Schema) {
	if p, ok := s.Properties.Get("text"); ok {
		p.Pattern = nonBlank
	}
}

var languageCode = regexp.MustCompile(`^[a-z]{2}$`)

func (s summary) Validate() error {
	switch n := utf8.RuneCountInString(s.Text); {
	case strings.TrimSpace(s.Text) == "":
		return &settleflow.FieldError{Field: "text", Message: "is required and not only white space"}
	case n > 200_000:
		return &settleflow.FieldError{Field: "text", Message: "has at most 200000 characters"}
	case s.Language != "" && !languageCode.MatchString(s.Language):
		return &settleflow.FieldError{Field: "language", Message: "must be a two-letter code in lower case"}
	}
	return nil
}

type moderation struct {
	ImageURLs []string `json:"imageUrls" jsonschema:"required,minItems=1,maxItems=20,description=The images to check: absolute http or https URLs."`
}

// imageURL is an absolute http(s) URL with a host: the pattern the schema
// states and Validate checks.
const imageURL = `^https?://[^\s/?#]+([/?#]\S*)?$`

var imageURLPattern = regexp.MustCompile(imageURL)

// JSONSchemaExtend states the items' pattern, which a tag cannot hold.
func (moderation) JSONSchemaExtend(s *jsonschema.Schema) {
	if p, ok := s.Properties.Get("imageUrls"); ok && p.Items != nil {
		p.Items.Pattern = imageURL
	}
}

func (m moderation) Validate() error {
	if len(m.ImageURLs) == 0 || len(m.ImageURLs) > 20 {
		return &settleflow.FieldError{Field: "imageUrls", Message: "must hold 1 to 20 URLs"}
	}
	for i, u := range m.ImageURLs {
		if !imageURLPattern.MatchString(u) {
			return &settleflow.FieldError{Field: fmt.Sprintf("imageUrls.%d", i), Message: "must be an absolute http(s) URL"}
		}
	}
	return nil
}

func demoProducts() (*settleflow.Products, error) {
	ps := settleflow.NewProducts()
	err := settleflow.Register(ps, settleflow.Product[triage]{
		Name:           "ticket-triage",
		Example:        &triage{TicketID: "T-42", Subject: "Refund for invoice 7", Attachments: 1},
		Description:    "Classifies a support ticket and routes it to a queue.",
		Price:          settleflow.Price{TargetMargin: 3000, MinimumCharge: 50},
		PricingSummary: "cost 2.00 USD per ticket plus 0.50 USD per attachment; 30 % target margin; at least 0.50 USD",
		Estimate:       func(t triage) (int64, error) { return 200 + 50*int64(t.Attachments), nil },
		Execute: around("ticket-triage", func(ctx context.Context, t triage) (settleflow.Execution, error) {
			if err := pause(ctx, 50*time.Millisecond); err != nil {
				return settleflow.Execution{}, err
			}
			queue := "general"
			if strings.Contains(strings.ToLower(t.Subject), "invoice") || strings.Contains(strings.ToLower(t.Subject), "refund") {
				queue = "billing"
			}
			// The cost as items, so the dashboard can break it down:
			// 1.70 of model, 0.45 of scanning per attachment.
			items := []settleflow.CostItem{{Category: settleflow.CostModel, Provider: "chat-model", Units: 400, Amount: 170}}
			if t.Attachments > 0 {
				items = append(items, settleflow.CostItem{Category: settleflow.CostTools, Provider: "attachment-scanner",
					Units: int64(t.Attachments), Amount: 45 * int64(t.Attachments)})
			}
			return settleflow.Execution{CostItems: items, Result: map[string]any{"ticketId": t.TicketID, "queue": queue}}, nil
		}),
	})
	if err != nil {
		return nil, err
	}
	err = settleflow.Register(ps, settleflow.Product[summary]{
		Name:           "document-summary",
		Example:        &summary{Text: "The quarterly report shows revenue up 12 % on the year.", Language: "en"},
		Description:    "Summarizes a text.",
		Price:          settleflow.Price{TargetMargin: 4000, MinimumCharge: 25},
		PricingSummary: "cost 0.01 USD per 100 characters; 40 % target margin; at least 0.25 USD",
		Estimate:       func(s summary) (int64, error) { return (int64(len(s.Text)) + 99) / 100, nil },
		Execute: around("document-summary", func(ctx context.Context, s summary) (settleflow.Execution, error) {
			if err := pause(ctx, 100*time.Millisecond); err != nil {
				return settleflow.Execution{}, err
			}
			words := strings.Fields(s.Text)
			head := words
			if len(head) > 12 {
				head = head[:12]
			}
			// 0.01 per 120 bytes of text read by the model, rounded up.
			return settleflow.Execution{
				CostItems: []settleflow.CostItem{{Category: settleflow.CostModel, Provider: "summary-model",
					Units: (int64(len(s.Text)) + 3) / 4, Amount: (int64(len(s.Text)) + 119) / 120}},
				Result: map[string]any{"summary": strings.Join(head, " "), "words": len(words)}}, nil
		}),
	})
	if err != nil {
		return nil, err
	}
	err = settleflow.Register(ps, settleflow.Product[moderation]{
		Name:           "image-moderation",
		Example:        &moderation{ImageURLs: []string{"https://example.com/cat.jpg"}},
		Description:    "Checks images against a content policy.",
		Price:          settleflow.Price{TargetMargin: 2500, MinimumCharge: 10},
		PricingSummary: "cost 0.05 USD per image; 25 % target margin; at least 0.10 USD",
		Estimate:       func(m moderation) (int64, error) { return 5 * int64(len(m.ImageURLs)), nil },
		Execute: around("image-moderation", func(ctx context.Context, m moderation) (settleflow.Execution, error) {
			if err := pause(ctx, 30*time.Millisecond); err != nil {
				return settleflow.Execution{}, err
			}
			verdicts := make([]string, len(m.ImageURLs))
			for i := range verdicts {
				verdicts[i] = "allowed"
			}
			// Per image: 0.05 of the vision model, 0.01 to fetch it.
			n := int64(len(m.ImageURLs))
			return settleflow.Execution{CostItems: []settleflow.CostItem{
				{Category: settleflow.CostModel, Provider: "vision-model", Units: n, Amount: 5 * n},
				{Category: settleflow.CostCompute, Provider: "image-fetch", Units: n, Amount: n},
			}, Result: map[string]any{"verdicts": verdicts}}, nil
		}),
	})
	if err != nil {
		return nil, err
	}
	if err := registerOutcomeProducts(ps); err != nil {
		return nil, err
	}
	return ps, nil
}

// pause stands in for the work a real product does.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// executeAround, when not nil, runs around every execution of a demo
// product (execute runs the product). The server never sets it: the tests
// do, in the test binary running as a server child (scaleout_test.go), to
// record which process executed which workflow when. Set it before the
// server starts.
var executeAround func(ctx context.Context, product string, execute func() (settleflow.Execution, error)) (settleflow.Execution, error)

// around returns f, run through executeAround when that is set.
func around[P any](product string, f func(context.Context, P) (settleflow.Execution, error)) func(context.Context, P) (settleflow.Execution, error) {
	return func(ctx context.Context, p P) (settleflow.Execution, error) {
		if executeAround == nil {
			return f(ctx, p)
		}
		return executeAround(ctx, product, func() (settleflow.Execution, error) { return f(ctx, p) })
	}
}
