package httpapi_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
)

// Cancel over HTTP, and the canceled events read back page by page; every
// answer is validated against the OpenAPI document.
func TestCancelAndEvents(t *testing.T) {
	e := newEnv(t, envOptions{})
	key := e.keys.create(t, settleflow.Test, "starter")
	other := e.keys.create(t, settleflow.Test, "starter") // same environment: sees the same workflows
	before := time.Now().UTC().Add(-time.Second).Format(time.RFC3339Nano)
	var ids []string
	for range 3 {
		r := e.create(key, body1)
		if r.status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		ids = append(ids, r.json(t)["id"].(string))
	}
	for _, id := range ids {
		r := e.do("POST", "/v1/workflows/"+id+"/cancel", key, "")
		if r.status != http.StatusOK || r.json(t)["status"] != "Canceled" {
			t.Fatalf("cancel: %d %s", r.status, r.body)
		}
	}
	if r := e.do("POST", "/v1/workflows/"+ids[0]+"/cancel", other, ""); r.status != http.StatusConflict || r.errorObject(t)["code"] != "workflow_canceled" {
		t.Fatalf("a second cancel: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v1/workflows/"+ids[0], key, ""); r.json(t)["status"] != "Canceled" {
		t.Fatalf("fetch after cancel: %s", r.body)
	}
	if r := e.do("POST", "/v1/workflows/wf_01JD3Q6Y6F8Q2W9T4M5N7P8R0S/cancel", key, ""); r.status != http.StatusNotFound {
		t.Fatalf("cancel of an unknown workflow: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v1/workflows/"+ids[0]+"/cancel", key, ""); r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "POST" {
		t.Fatalf("GET cancel: %d", r.status)
	}

	// Newest first, two pages with no gap or repeat.
	first := e.do("GET", "/v1/events?limit=2&createdAfter="+url.QueryEscape(before), key, "")
	page := first.json(t)
	data := page["data"].([]any)
	if first.status != http.StatusOK || page["url"] != "/v1/events" || page["hasMore"] != true || len(data) != 2 {
		t.Fatalf("first page: %d %s", first.status, first.body)
	}
	last := data[1].(map[string]any)["id"].(string)
	second := e.do("GET", "/v1/events?limit=2&startingAfter="+last, key, "").json(t)
	rest := second["data"].([]any)
	if second["hasMore"] != false || len(rest) != 1 {
		t.Fatalf("second page: %v", second)
	}
	var got []string
	for _, ev := range append(data, rest...) {
		ev := ev.(map[string]any)
		if ev["type"] != "workflow.canceled" || ev["object"] != "event" {
			t.Fatalf("event %v", ev)
		}
		got = append(got, ev["data"].(map[string]any)["workflowId"].(string))
	}
	if got[0] != ids[2] || got[1] != ids[1] || got[2] != ids[0] {
		t.Fatalf("events for %v, want the cancels newest first %v", got, ids)
	}
	id := data[0].(map[string]any)["id"].(string)
	if r := e.do("GET", "/v1/events/"+id, key, ""); r.status != http.StatusOK || r.json(t)["id"] != id {
		t.Fatalf("fetch event: %d %s", r.status, r.body)
	}
	for q, n := range map[string]int{"type=workflow.completed": 0, "type=workflow.canceled": 3, "workflowId=" + ids[1]: 1} {
		if r := e.do("GET", "/v1/events?"+q, key, ""); len(r.json(t)["data"].([]any)) != n {
			t.Errorf("%s: %s, want %d events", q, r.body, n)
		}
	}
	for q, param := range map[string]string{"createdAfter=yesterday": "createdAfter", "type=workflow.done": "type", "limit=0": "limit",
		"starting_after=" + id: "starting_after", "workflowId=": "workflowId"} {
		if r := e.do("GET", "/v1/events?"+q, key, ""); r.status != http.StatusBadRequest || r.errorObject(t)["param"] != param {
			t.Errorf("%s: %d %s, want 400 naming %s", q, r.status, r.body, param)
		}
	}
	live := e.keys.create(t, settleflow.Live, "starter")
	if r := e.do("GET", "/v1/events", live, ""); r.status != http.StatusForbidden {
		t.Errorf("live key without live: %d", r.status)
	}
}
