package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/settleflow/settleflow"
)

// The demo catalogue: three products whose cost depends on their payload.

type triage struct {
	TicketID    string `json:"ticketId"`
	Subject     string `json:"subject"`
	Attachments int    `json:"attachments"`
}

func (t triage) Validate() error {
	switch {
	case t.TicketID == "":
		return &settleflow.FieldError{Field: "ticketId", Message: "is required"}
	case len(t.TicketID) > 100:
		return &settleflow.FieldError{Field: "ticketId", Message: "has at most 100 characters"}
	case t.Attachments < 0 || t.Attachments > 50:
		return &settleflow.FieldError{Field: "attachments", Message: "must be between 0 and 50"}
	}
	return nil
}

type summary struct {
	Text     string `json:"text"`
	Language string `json:"language"`
}

func (s summary) Validate() error {
	switch {
	case strings.TrimSpace(s.Text) == "":
		return &settleflow.FieldError{Field: "text", Message: "is required"}
	case len(s.Text) > 200_000:
		return &settleflow.FieldError{Field: "text", Message: "has at most 200000 characters"}
	case s.Language != "" && len(s.Language) != 2:
		return &settleflow.FieldError{Field: "language", Message: "must be a two-letter code"}
	}
	return nil
}

type moderation struct {
	ImageURLs []string `json:"imageUrls"`
}

func (m moderation) Validate() error {
	if len(m.ImageURLs) == 0 || len(m.ImageURLs) > 20 {
		return &settleflow.FieldError{Field: "imageUrls", Message: "must hold 1 to 20 URLs"}
	}
	for i, u := range m.ImageURLs {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
			return &settleflow.FieldError{Field: fmt.Sprintf("imageUrls.%d", i), Message: "must be an absolute http(s) URL"}
		}
	}
	return nil
}

func demoProducts() (*settleflow.Products, error) {
	ps := settleflow.NewProducts()
	err := settleflow.Register(ps, settleflow.Product[triage]{
		Name:           "ticket-triage",
		Description:    "Classifies a support ticket and routes it to a queue.",
		Price:          settleflow.Price{TargetMargin: 3000, MinimumCharge: 50},
		PricingSummary: "cost 2.00 USD per ticket plus 0.50 USD per attachment; 30 % target margin; at least 0.50 USD",
		Estimate:       func(t triage) (int64, error) { return 200 + 50*int64(t.Attachments), nil },
		Execute: func(ctx context.Context, t triage) (settleflow.Execution, error) {
			if err := pause(ctx, 50*time.Millisecond); err != nil {
				return settleflow.Execution{}, err
			}
			queue := "general"
			if strings.Contains(strings.ToLower(t.Subject), "invoice") || strings.Contains(strings.ToLower(t.Subject), "refund") {
				queue = "billing"
			}
			return settleflow.Execution{ActualCost: 170 + 45*int64(t.Attachments),
				Result: map[string]any{"ticketId": t.TicketID, "queue": queue}}, nil
		},
	})
	if err != nil {
		return nil, err
	}
	err = settleflow.Register(ps, settleflow.Product[summary]{
		Name:           "document-summary",
		Description:    "Summarizes a text.",
		Price:          settleflow.Price{TargetMargin: 4000, MinimumCharge: 25},
		PricingSummary: "cost 0.01 USD per 100 characters; 40 % target margin; at least 0.25 USD",
		Estimate:       func(s summary) (int64, error) { return (int64(len(s.Text)) + 99) / 100, nil },
		Execute: func(ctx context.Context, s summary) (settleflow.Execution, error) {
			if err := pause(ctx, 100*time.Millisecond); err != nil {
				return settleflow.Execution{}, err
			}
			words := strings.Fields(s.Text)
			head := words
			if len(head) > 12 {
				head = head[:12]
			}
			return settleflow.Execution{ActualCost: (int64(len(s.Text)) + 119) / 120,
				Result: map[string]any{"summary": strings.Join(head, " "), "words": len(words)}}, nil
		},
	})
	if err != nil {
		return nil, err
	}
	err = settleflow.Register(ps, settleflow.Product[moderation]{
		Name:           "image-moderation",
		Description:    "Checks images against a content policy.",
		Price:          settleflow.Price{TargetMargin: 2500, MinimumCharge: 10},
		PricingSummary: "cost 0.05 USD per image; 25 % target margin; at least 0.10 USD",
		Estimate:       func(m moderation) (int64, error) { return 5 * int64(len(m.ImageURLs)), nil },
		Execute: func(ctx context.Context, m moderation) (settleflow.Execution, error) {
			if err := pause(ctx, 30*time.Millisecond); err != nil {
				return settleflow.Execution{}, err
			}
			verdicts := make([]string, len(m.ImageURLs))
			for i := range verdicts {
				verdicts[i] = "allowed"
			}
			return settleflow.Execution{ActualCost: 6 * int64(len(m.ImageURLs)), Result: map[string]any{"verdicts": verdicts}}, nil
		},
	})
	return ps, err
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
