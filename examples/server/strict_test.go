package main

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// End-to-end tests of the strict decoding rules (issue 10, findings 1, 2, 3
// and 7), through real TLS on loopback against the reference server: what
// is billed, to whom and for how much must not depend on which JSON parser
// reads the request.

// cursorParam is the list cursor's name on the wire today.
const cursorParam = "startingAfter"

// wantError checks a 400-class error answer's code and param.
func wantError(t *testing.T, what string, status int, body map[string]any, wantStatus int, code, param string) {
	t.Helper()
	e, _ := body["error"].(map[string]any)
	got, _ := e["param"].(string)
	if status != wantStatus || e["code"] != code || got != param || e["message"] == "" {
		t.Fatalf("%s: %d %v, want %d code %s param %q", what, status, body, wantStatus, code, param)
	}
}

// listIDs returns the ids of the environment's workflows, failing unless
// the list answer is valid UTF-8 JSON.
func listIDs(t *testing.T, s *server, key string) []string {
	t.Helper()
	status, b := s.raw("GET", "/v1/workflows?limit=100", key, "")
	if status != 200 || !utf8.Valid(b) || !json.Valid(b) {
		t.Fatalf("list: %d, valid UTF-8 %v, valid JSON %v: %q", status, utf8.Valid(b), json.Valid(b), b)
	}
	var page struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &page); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(page.Data))
	for i, w := range page.Data {
		ids[i] = w.ID
	}
	return ids
}

// Finding 1: a name given twice is refused, at the top level (who is
// billed) and in the payload (how much), and nothing is created.
func TestStrictDuplicateNamesRefused(t *testing.T) {
	s := startServer(t, t.TempDir())
	key := s.firstKey
	before := listIDs(t, s, key)
	for _, c := range []struct{ body, param string }{
		{`{"product":"ticket-triage","customerId":"cus_a","payload":{"ticketId":"T-1"},"customerId":"cus_b"}`, "customerId"},
		{`{"product":"ticket-triage","customerId":"cus_a","payload":{"ticketId":"T-1","attachments":0,"subject":"x","attachments":50}}`, "payload.attachments"},
		{`{"product":"ticket-triage","product":"ticket-triage","customerId":"cus_a","payload":{"ticketId":"T-1"}}`, "product"},
	} {
		status, _, body := s.do("POST", "/v1/workflows", key, c.body)
		wantError(t, c.body, status, body, 400, "parameter_invalid", c.param)
	}
	if after := listIDs(t, s, key); len(after) != len(before) {
		t.Fatalf("refused requests created workflows: %v", after)
	}
}

// Finding 2: names are case-sensitive; a case variant is an unknown
// parameter, not an alias that overrides the real one.
func TestStrictCaseVariantNamesRefused(t *testing.T) {
	s := startServer(t, t.TempDir())
	key := s.firstKey
	before := listIDs(t, s, key)
	for _, c := range []struct{ body, param string }{
		{`{"product":"ticket-triage","customerId":"cus_a","CUSTOMERID":"cus_b","payload":{"ticketId":"T-1"}}`, "CUSTOMERID"},
		{`{"product":"ticket-triage","CustomerId":"cus_b","payload":{"ticketId":"T-1"}}`, "CustomerId"},
		{`{"product":"ticket-triage","customerId":"cus_a","payload":{"ticketId":"T-1","ATTACHMENTS":50}}`, "payload.ATTACHMENTS"},
		{`{"product":"ticket-triage","customerId":"cus_a","payload":{"ticketId":"T-1","attachments":0,"Attachments":50}}`, "payload.Attachments"},
	} {
		status, _, body := s.do("POST", "/v1/workflows", key, c.body)
		wantError(t, c.body, status, body, 400, "parameter_unknown", c.param)
	}
	if after := listIDs(t, s, key); len(after) != len(before) {
		t.Fatalf("refused requests created workflows: %v", after)
	}
	// The exact names still work, and what is stored is what was priced.
	status, b := s.raw("POST", "/v1/workflows", key, `{"product":"ticket-triage","customerId":"cus_a","payload":{"ticketId":"T-1", "attachments":2}}`)
	var wf struct {
		CustomerID string          `json:"customerId"`
		Payload    json.RawMessage `json:"payload"`
		Quoted     struct{ Amount int64 }
	}
	if err := json.Unmarshal(b, &wf); status != 201 || err != nil || wf.CustomerID != "cus_a" ||
		string(wf.Payload) != `{"ticketId":"T-1","attachments":2}` || wf.Quoted.Amount != 429 {
		t.Fatalf("create: %d %s", status, b)
	}
}

// Finding 3: invalid UTF-8 is refused, so every answer stays JSON that any
// parser reads (Python's json.loads refuses invalid UTF-8; so does
// utf8.Valid here).
func TestStrictInvalidUTF8Refused(t *testing.T) {
	s := startServer(t, t.TempDir())
	key := s.firstKey
	before := listIDs(t, s, key)
	for _, c := range []struct{ body, param string }{
		{"{\"product\":\"ticket-triage\",\"customerId\":\"cus_a\",\"payload\":{\"ticketId\":\"T-1\",\"subject\":\"caf\xe9\"}}", "payload.subject"},
		{"{\"product\":\"ticket-triage\",\"customerId\":\"cus_a\",\"payload\":{\"ticketId\":\"T-\xff\xfe\"}}", "payload.ticketId"},
		{"{\"product\":\"ticket-triage\",\"customerId\":\"cus_a\xc3\",\"payload\":{\"ticketId\":\"T-1\"}}", "customerId"},
	} {
		status, _, body := s.do("POST", "/v1/workflows", key, c.body)
		wantError(t, c.body, status, body, 400, "body_invalid", c.param)
	}
	// An escaped lone surrogate decodes to no valid UTF-8 either.
	status, _, body := s.do("POST", "/v1/workflows", key, `{"product":"ticket-triage","customerId":"cus_a","payload":{"ticketId":"T-\ud800"}}`)
	wantError(t, "lone surrogate", status, body, 400, "body_invalid", "")
	if after := listIDs(t, s, key); len(after) != len(before) {
		t.Fatalf("refused requests created workflows: %v", after)
	}
	// Valid non-ASCII text is stored and echoed as sent.
	status, b := s.raw("POST", "/v1/workflows", key, `{"product":"ticket-triage","customerId":"cus_a","payload":{"ticketId":"T-1","subject":"café \u00e9 😀"}}`)
	if status != 201 || !utf8.Valid(b) || !json.Valid(b) || !strings.Contains(string(b), `"subject":"café \u00e9 😀"`) {
		t.Fatalf("create: %d %s", status, b)
	}
	listIDs(t, s, key)
}

// Finding 7: an id has one spelling. A lower-cased id as a list cursor is a
// 400 naming the parameter (it used to answer a wrong page); a fetch of it
// is a 404.
func TestStrictLowercaseIDRefused(t *testing.T) {
	s := startServer(t, t.TempDir())
	key := s.firstKey
	var ids []string
	for i := 0; i < 3; i++ {
		status, _, wf := s.do("POST", "/v1/workflows", key, `{"product":"ticket-triage","customerId":"cus_a","payload":{"ticketId":"T-1"}}`)
		if status != 201 {
			t.Fatalf("create: %d %v", status, wf)
		}
		ids = append(ids, wf["id"].(string))
	}
	newest := ids[2]
	lower := "wf_" + strings.ToLower(strings.TrimPrefix(newest, "wf_"))
	// The canonical cursor answers the two older workflows.
	status, _, page := s.do("GET", "/v1/workflows?"+cursorParam+"="+newest, key, "")
	if data, _ := page["data"].([]any); status != 200 || len(data) != 2 {
		t.Fatalf("canonical cursor: %d %v", status, page)
	}
	status, _, body := s.do("GET", "/v1/workflows?"+cursorParam+"="+lower, key, "")
	wantError(t, "lower-case cursor", status, body, 400, "parameter_invalid", cursorParam)
	status, _, body = s.do("GET", "/v1/workflows/"+lower, key, "")
	wantError(t, "lower-case fetch", status, body, 404, "resource_missing", "")
	if status, _, wf := s.do("GET", "/v1/workflows/"+newest, key, ""); status != 200 || wf["id"] != newest {
		t.Fatalf("canonical fetch: %d %v", status, wf)
	}
}
