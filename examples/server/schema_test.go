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
	if len(schemas) != 3 {
		t.Fatalf("%d products with schemas, want 3", len(schemas))
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
