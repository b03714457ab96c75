package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestProductSchemasMatchValidation compiles each demo product's payload
// schema, as the catalogue serves it over TLS, with a real JSON Schema
// validator, and checks it against the product itself: the example and the
// README's payloads are accepted by both, every payload the product refuses
// with a 400 is refused by the schema too, and payloads the schema accepts
// at the edges (multi-byte text at the length limit) are created.
func TestProductSchemasMatchValidation(t *testing.T) {
	s := startServer(t, t.TempDir())
	status, _, list := s.do("GET", "/v1/products", s.firstKey, "")
	if status != 200 {
		t.Fatalf("products: %d", status)
	}
	schemas := map[string]*jsonschema.Schema{}
	for _, p := range list["data"].([]any) {
		p := p.(map[string]any)
		name := p["name"].(string)
		raw, _ := json.Marshal(p["payloadSchema"])
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		url := "https://settleflow.test/" + name + ".json"
		if err := c.AddResource(url, doc); err != nil {
			t.Fatal(err)
		}
		sch, err := c.Compile(url)
		if err != nil {
			t.Fatalf("%s: the schema does not compile: %v\n%s", name, err, raw)
		}
		schemas[name] = sch
		if p["example"] == nil {
			t.Errorf("%s has no example", name)
		}
		if err := sch.Validate(p["example"]); err != nil {
			t.Errorf("%s: its own example fails its schema: %v", name, err)
		}
		status, _, one := s.do("GET", "/v1/products/"+name, s.firstKey, "")
		if status != 200 || fmt.Sprint(one["payloadSchema"]) != fmt.Sprint(p["payloadSchema"]) {
			t.Errorf("GET /v1/products/%s: %d %v", name, status, one)
		}
	}
	// The fixed demo products and one of each other pricing model.
	wantModels := map[string]string{"ticket-triage": "fixed", "document-summary": "fixed", "image-moderation": "fixed",
		"document-extraction": "capped", "ticket-resolution": "success_fee", "lead-enrichment": "hybrid"}
	if len(schemas) != len(wantModels) {
		t.Fatalf("%d products with schemas, want %d", len(schemas), len(wantModels))
	}
	for _, p := range list["data"].([]any) {
		p := p.(map[string]any)
		pr, _ := p["pricing"].(map[string]any)
		if m, ok := wantModels[p["name"].(string)]; !ok || pr["model"] != m {
			t.Errorf("%s: pricing %v, want model %s", p["name"], p["pricing"], m)
		}
		if crit := p["successCriteria"]; (crit != nil) != (pr["model"] == "success_fee" || pr["model"] == "hybrid") {
			t.Errorf("%s: pricing %v with successCriteria %v", p["name"], pr, crit)
		}
	}
	if status, _, _ := s.do("GET", "/v1/products/no-such", s.firstKey, ""); status != 404 {
		t.Errorf("unknown product: %d, want 404", status)
	}

	cases := []struct {
		product, payload string
		ok               bool
		param            string // of the 400
	}{
		{"ticket-triage", `{"ticketId":"T-42","subject":"Refund for invoice 7","attachments":1}`, true, ""},
		{"ticket-triage", `{"ticketId":"` + strings.Repeat("é", 100) + `"}`, true, ""},
		{"ticket-triage", `{"ticketId":"` + strings.Repeat("é", 101) + `"}`, false, "payload.ticketId"},
		{"ticket-triage", `{}`, false, "payload.ticketId"},
		{"ticket-triage", `{"ticketId":""}`, false, "payload.ticketId"},
		{"ticket-triage", `{"ticketId":42}`, false, "payload.ticketId"},
		{"ticket-triage", `{"ticketId":"T","attachments":51}`, false, "payload.attachments"},
		{"ticket-triage", `{"ticketId":"T","attachments":-1}`, false, "payload.attachments"},
		{"ticket-triage", `{"ticketId":"T","attachments":1.5}`, false, "payload.attachments"},
		{"ticket-triage", `{"ticketId":"T","priority":"high"}`, false, "payload.priority"},
		{"document-summary", `{"text":"Quarterly revenue rose.","language":"en"}`, true, ""},
		{"document-summary", `{"text":"   "}`, false, "payload.text"},
		{"document-summary", `{"text":""}`, false, "payload.text"},
		{"document-summary", `{"language":"en"}`, false, "payload.text"},
		{"document-summary", `{"text":"Hi","language":"eng"}`, false, "payload.language"},
		{"document-summary", `{"text":"Hi","language":"EN"}`, false, "payload.language"},
		{"image-moderation", `{"imageUrls":["https://example.com/a.png","http://cdn.example.com/b.jpg?w=2"]}`, true, ""},
		{"image-moderation", `{"imageUrls":[]}`, false, "payload.imageUrls"},
		{"image-moderation", `{}`, false, "payload.imageUrls"},
		{"image-moderation", `{"imageUrls":["ftp://example.com/a.png"]}`, false, "payload.imageUrls.0"},
		{"image-moderation", `{"imageUrls":["https://"]}`, false, "payload.imageUrls.0"},
		{"image-moderation", `{"imageUrls":["/relative.png"]}`, false, "payload.imageUrls.0"},
		{"image-moderation", `{"imageUrls":["https://example.com/a b.png"]}`, false, "payload.imageUrls.0"},
		{"image-moderation", `{"imageUrls":[` + strings.TrimSuffix(strings.Repeat(`"https://example.com/x.png",`, 21), ",") + `]}`, false, "payload.imageUrls"},
		{"document-extraction", `{"documentId":"D-1","pages":3,"quality":"scanned"}`, true, ""},
		{"document-extraction", `{"documentId":"` + strings.Repeat("é", 100) + `","pages":500}`, true, ""},
		{"document-extraction", `{"documentId":"D-1","pages":1,"quality":"clean"}`, true, ""},
		{"document-extraction", `{"documentId":"D-1","pages":0}`, false, "payload.pages"},
		{"document-extraction", `{"documentId":"D-1"}`, false, "payload.pages"},
		{"document-extraction", `{"documentId":"D-1","pages":501}`, false, "payload.pages"},
		{"document-extraction", `{"documentId":"D-1","pages":2.5}`, false, "payload.pages"},
		{"document-extraction", `{"documentId":"D-1","pages":2,"quality":"blurry"}`, false, "payload.quality"},
		{"document-extraction", `{"pages":2}`, false, "payload.documentId"},
		{"document-extraction", `{"documentId":"` + strings.Repeat("é", 101) + `","pages":1}`, false, "payload.documentId"},
		{"ticket-resolution", `{"ticketId":"T-1","question":"Where is my invoice?"}`, true, ""},
		{"ticket-resolution", `{"ticketId":"T-1","question":"` + strings.Repeat("é", 5000) + `"}`, true, ""},
		{"ticket-resolution", `{"ticketId":"T-1","question":"` + strings.Repeat("é", 5001) + `"}`, false, "payload.question"},
		{"ticket-resolution", `{"ticketId":"T-1","question":"   "}`, false, "payload.question"},
		{"ticket-resolution", `{"ticketId":"T-1"}`, false, "payload.question"},
		{"ticket-resolution", `{"question":"Where is my invoice?"}`, false, "payload.ticketId"},
		{"lead-enrichment", `{"email":"jane.doe@acme.example","company":"Acme"}`, true, ""},
		{"lead-enrichment", `{"email":"someone@gmail.com"}`, true, ""},
		{"lead-enrichment", `{"email":"not-an-address"}`, false, "payload.email"},
		{"lead-enrichment", `{"email":"a b@c.example"}`, false, "payload.email"},
		{"lead-enrichment", `{"email":"a@b@c.example"}`, false, "payload.email"},
		{"lead-enrichment", `{}`, false, "payload.email"},
		{"lead-enrichment", `{"email":"x@y.example","company":"` + strings.Repeat("é", 201) + `"}`, false, "payload.company"},
		{"lead-enrichment", `{"email":"x@y.example","phone":"555"}`, false, "payload.phone"},
	}
	for _, c := range cases {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(c.payload))
		if err != nil {
			t.Fatal(err)
		}
		schemaErr := schemas[c.product].Validate(inst)
		body := fmt.Sprintf(`{"product":%q,"customerId":"cus_schema","payload":%s}`, c.product, c.payload)
		status, _, got := s.do("POST", "/v1/workflows", s.firstKey, body)
		switch {
		case c.ok && (schemaErr != nil || status != 201):
			t.Errorf("%s %s: schema %v, create %d %v; want both to accept", c.product, c.payload, schemaErr, status, got)
		case !c.ok && schemaErr == nil:
			t.Errorf("%s %s: the schema accepts what the product refuses (create %d %v)", c.product, c.payload, status, got)
		case !c.ok && (status != 400 || got["error"].(map[string]any)["param"] != c.param):
			t.Errorf("%s %s: create %d %v; want 400 naming %s", c.product, c.payload, status, got, c.param)
		}
	}
}
