package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/settleflow/settleflow"
)

// A quote is what a create with the same body quotes at that moment, and it
// stores nothing.
func TestQuoteEqualsCreate(t *testing.T) {
	e := newEnv(t, envOptions{})
	key := e.keys.create(t, settleflow.Test, "starter")
	for _, body := range []string{
		body1,
		`{"product":"ticket-triage","customerId":"cus_9","payload":{"ticketId":"T-7","attachments":40}}`,
		`{"product":"ticket-triage","customerId":"cus_9","payload":{ "attachments" : 3, "ticketId" : "T-8" }}`,
	} {
		q := e.do("POST", "/v1/quotes", key, body)
		if q.status != http.StatusOK {
			t.Fatalf("quote: %d %s", q.status, q.body)
		}
		if n := len(e.do("GET", "/v1/workflows", key, "").json(t)["data"].([]any)); n != 0 && body == body1 {
			t.Fatalf("a quote stored a workflow: %d listed", n)
		}
		got := q.json(t)
		c := e.create(key, body)
		if c.status != http.StatusCreated {
			t.Fatalf("create: %d %s", c.status, c.body)
		}
		var wf settleflow.Workflow
		if err := json.Unmarshal(c.body, &wf); err != nil {
			t.Fatal(err)
		}
		quoted, _ := json.Marshal(got["quoted"])
		payload, _ := json.Marshal(got["payload"])
		wantPayload, _ := json.Marshal(c.json(t)["payload"])
		if got["object"] != "quote" || got["livemode"] != false || string(quoted) != fmt.Sprintf(`{"amount":%d,"currency":%q}`, wf.Quoted.Amount, wf.Quoted.Currency) ||
			got["product"] != wf.Product || got["customerId"] != wf.CustomerID || string(payload) != string(wantPayload) ||
			got["margin"].(map[string]any)["target"] != float64(wf.Margin.Target)/10000 ||
			compact(t, got["pricing"]) != compact(t, c.json(t)["pricing"]) || compact(t, got["successCriteria"]) != compact(t, c.json(t)["successCriteria"]) ||
			compact(t, got["marginFloor"]) != compact(t, c.json(t)["marginFloor"]) || got["budget"] != nil {
			t.Errorf("quote %s\ndiffers from the created workflow %s", q.body, c.body)
		}
	}
}

// A quote is refused exactly as a create of the same body would be.
func TestQuoteValidatesAsCreate(t *testing.T) {
	e := newEnv(t, envOptions{})
	key := e.keys.create(t, settleflow.Test, "starter")
	for _, body := range []string{
		`{}`,
		`{"product":"ticket-triage","customerId":"cus_1"}`,
		`{"product":"nope","customerId":"cus_1","payload":{}}`,
		`{"product":"ticket-triage","customerId":"bob","payload":{"ticketId":"T"}}`,
		`{"product":"ticket-triage","customerId":"cus_1","payload":{"ticketId":42}}`,
		`{"product":"ticket-triage","customerId":"cus_1","payload":{"ticketId":"T","TICKETID":"U"}}`,
		`{"product":"ticket-triage","customerId":"cus_1","customerId":"cus_2","payload":{"ticketId":"T"}}`,
		`{"product":"ticket-triage","customerId":"cus_1","payload":{"ticketId":"T"},"extra":1}`,
		`{"product":"ticket-triage","customerId":"cus_1","payload":[]}`,
	} {
		q, c := e.do("POST", "/v1/quotes", key, body), e.create(key, body)
		qe, ce := q.errorObject(t), c.errorObject(t)
		if q.status != c.status || q.status != http.StatusBadRequest || qe["code"] != ce["code"] || qe["param"] != ce["param"] || qe["message"] != ce["message"] {
			t.Errorf("%s: quote %d %s, create %d %s", body, q.status, q.body, c.status, c.body)
		}
	}
	if r := e.do("GET", "/v1/quotes", key, ""); r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "POST" {
		t.Errorf("GET /v1/quotes: %d, Allow %q", r.status, r.header.Get("Allow"))
	}
	if r := e.do("POST", "/v1/quotes", "", body1); r.status != http.StatusUnauthorized {
		t.Errorf("no key: %d", r.status)
	}
	live := e.keys.create(t, settleflow.Live, "starter")
	if r := e.do("POST", "/v1/quotes", live, body1); r.status != http.StatusForbidden || r.errorObject(t)["code"] != "livemode_not_configured" {
		t.Errorf("live key: %d %s", r.status, r.body)
	}
}

// The catalogue carries each product's payload schema; one product is
// fetched by name; every answer matches the OpenAPI document.
func TestProductsWithSchemas(t *testing.T) {
	e := newEnv(t, envOptions{})
	key := e.keys.create(t, settleflow.Test, "starter")
	list := e.do("GET", "/v1/products", key, "")
	data := list.json(t)["data"].([]any)
	if list.status != http.StatusOK || len(data) == 0 {
		t.Fatalf("products: %d %s", list.status, list.body)
	}
	first := data[0].(map[string]any)
	schema, _ := first["payloadSchema"].(map[string]any)
	if schema["type"] != "object" || schema["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Fatalf("payloadSchema: %v", first["payloadSchema"])
	}
	one := e.do("GET", "/v1/products/"+first["name"].(string), key, "")
	if one.status != http.StatusOK || one.json(t)["name"] != first["name"] {
		t.Fatalf("one product: %d %s", one.status, one.body)
	}
	if r := e.do("GET", "/v1/products/no-such", key, ""); r.status != http.StatusNotFound || r.errorObject(t)["code"] != "resource_missing" {
		t.Fatalf("unknown product: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v1/products/"+first["name"].(string)+"?x=1", key, ""); r.status != http.StatusBadRequest {
		t.Fatalf("a query parameter: %d %s", r.status, r.body)
	}
}
