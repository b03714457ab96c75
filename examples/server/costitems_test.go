package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestEveryDemoProductReportsItsCostAsItems runs each demo product of the
// catalogue on the reference server (its example payload, and for the
// fixed-price products payloads of other sizes) and checks that the
// workflow's cost carries items, each named and positive, that add up to
// the cost, so the dashboard's cost breakdown is never empty; the fixed-
// price products' costs are still those their pricing summaries state.
func TestEveryDemoProductReportsItsCostAsItems(t *testing.T) {
	s := startServer(t, t.TempDir())
	status, _, list := s.do("GET", "/v1/products", s.firstKey, "")
	if status != 200 {
		t.Fatalf("products: %d", status)
	}
	type run struct {
		product, payload string
		cost             int64 // -1: whatever the product reports
	}
	var runs []run
	for _, p := range list["data"].([]any) {
		p := p.(map[string]any)
		ex, err := json.Marshal(p["example"])
		if err != nil || p["example"] == nil {
			t.Fatalf("%s: example %v %v", p["name"], p["example"], err)
		}
		runs = append(runs, run{p["name"].(string), string(ex), -1})
	}
	text := strings.Repeat("word ", 100) // 500 bytes
	runs = append(runs,
		run{"ticket-triage", `{"ticketId": "T-0"}`, 170},
		run{"ticket-triage", `{"ticketId": "T-3", "attachments": 3}`, 170 + 3*45},
		run{"document-summary", fmt.Sprintf(`{"text": %q}`, text), (500 + 119) / 120},
		run{"image-moderation", `{"imageUrls": ["https://example.com/a.jpg", "https://example.com/b.jpg", "https://example.com/c.jpg"]}`, 3 * 6},
	)
	ids := make([]string, len(runs))
	for i, r := range runs {
		body := fmt.Sprintf(`{"product": %q, "customerId": "cus_items", "payload": %s}`, r.product, r.payload)
		status, _, wf := s.do("POST", "/v1/workflows", s.firstKey, body)
		if status != 201 {
			t.Fatalf("%s %s: %d %v", r.product, r.payload, status, wf)
		}
		ids[i] = wf["id"].(string)
	}
	for i, r := range runs {
		var wf map[string]any
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
			_, _, wf = s.do("GET", "/v1/workflows/"+ids[i], s.firstKey, "")
			if wf["status"] == "Settled" || wf["status"] == "Failed" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %v", r.product, wf)
			}
		}
		cost, _ := wf["cost"].(map[string]any)
		if cost == nil {
			t.Errorf("%s %s: no cost: %v", r.product, r.payload, wf)
			continue
		}
		amount := int64(cost["amount"].(float64))
		items, _ := cost["items"].([]any)
		var sum int64
		for _, it := range items {
			it := it.(map[string]any)
			if p, _ := it["provider"].(string); p == "" || it["category"] == "" || it["amount"].(float64) <= 0 || it["units"].(float64) <= 0 {
				t.Errorf("%s: cost item %v", r.product, it)
			}
			sum += int64(it["amount"].(float64))
		}
		if len(items) == 0 || sum != amount {
			t.Errorf("%s %s: cost %d with items %v (sum %d); want items adding up to the cost", r.product, r.payload, amount, items, sum)
		}
		if r.cost >= 0 && amount != r.cost {
			t.Errorf("%s %s: cost %d, want %d", r.product, r.payload, amount, r.cost)
		}
	}
}
