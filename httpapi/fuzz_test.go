package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/httpapi"
	"github.com/settleflow/settleflow/ratelimit"
	"github.com/settleflow/settleflow/storage/sqlite"
)

// FuzzCreateWorkflow feeds arbitrary bodies, content types and idempotency
// keys to POST /v1/workflows: no input panics or yields a 500, and every
// answer is 201 or a JSON error of the documented kinds.
func FuzzCreateWorkflow(f *testing.F) {
	for _, seed := range []string{
		body1,
		`{}`, `[]`, `null`, ``, `{"product":`, `{"product":"ticket-triage"}`,
		`{"product":"ticket-triage","customerId":"cus_1","payload":{"ticketId":"x","attachments":3}}`,
		`{"product":"ticket-triage","customerId":"cus_1","payload":{"ticketId":"x","attachments":-3}}`,
		`{"product":"ticket-triage","customerId":"cus_1","payload":{"ticketId":"x","attachments":1e400}}`,
		`{"product":"ticket-triage","customerId":"cus_\u0000","payload":{"ticketId":"x"}}`,
		`{"product":"ticket-triage","customerId":"cus_1","payload":{"ticketId":"x"}} trailing`,
		`{"product":["a"],"customerId":{},"payload":[]}`,
		`{"product":"ticket-triage","product":"x","customerId":"cus_1","payload":{"ticketId":"x"}}`,
		"\xff\xfe{}",
		`{"product":"ticket-triage","customerId":"cus_1","payload":{"ticketId":"` + strings.Repeat("é", 300) + `"}}`,
		// Duplicate names: who is billed, and for how much.
		`{"product":"ticket-triage","customerId":"cus_a","payload":{"ticketId":"x"},"customerId":"cus_b"}`,
		`{"product":"ticket-triage","customerId":"cus_1","payload":{"ticketId":"x","attachments":0,"attachments":50}}`,
		`{"product":"ticket-triage","customerId":"cus_1","payload":{"ticketId":"x"},"payload":{"ticketId":"y"}}`,
		`{"product":"ticket-triage","customerId":"cus_1","payload":{"ticketId":"x","t\u0069cketId":"y"}}`,
		// Case variants of names.
		`{"product":"ticket-triage","customerId":"cus_a","CUSTOMERID":"cus_b","payload":{"ticketId":"x"}}`,
		`{"Product":"ticket-triage","CustomerId":"cus_1","Payload":{"ticketId":"x"}}`,
		`{"product":"ticket-triage","customerId":"cus_1","payload":{"ticketId":"x","ATTACHMENTS":50}}`,
		`{"product":"ticket-triage","customerId":"cus_1","payload":{"TicketId":"x","attachments":1}}`,
		"{\"product\":\"ticket-triage\",\"customerId\":\"cus_1\",\"payload\":{\"ticketId\":\"x\",\"attachmentſ\":50}}", // long s folds to s
		// Invalid UTF-8, raw and escaped.
		"{\"product\":\"ticket-triage\",\"customerId\":\"cus_1\",\"payload\":{\"ticketId\":\"caf\xe9\"}}",
		"{\"product\":\"ticket-triage\",\"customerId\":\"cus_\xff\",\"payload\":{\"ticketId\":\"x\"}}",
		"{\"product\":\"ticket-triage\",\"customerId\":\"cus_1\",\"payload\":{\"ticketId\":\"x\",\"\xc3\":1}}",
		"{\"product\":\"ticket-triage\",\"customerId\":\"cus_1\",\"payload\":{\"ticketId\":\"\xed\xa0\x80\"}}", // an encoded surrogate
		`{"product":"ticket-triage","customerId":"cus_1","payload":{"ticketId":"\ud800"}}`,
		`{"product":"ticket-triage","customerId":"cus_1","payload":{"ticketId":"\udc00\ud800"}}`,
		// Nesting at, and beyond, the depth limit.
		`{"product":"ticket-triage","customerId":"cus_1","payload":{"ticketId":"x","attachments":` + strings.Repeat("[", 62) + strings.Repeat("]", 62) + `}}`,
		`{"product":"ticket-triage","customerId":"cus_1","payload":{"ticketId":"x","deep":` + strings.Repeat(`{"a":`, 100) + `1` + strings.Repeat("}", 100) + `}}`,
		strings.Repeat("[", 10000),
		`{"a":` + strings.Repeat("[", 100000),
	} {
		f.Add(seed, "application/json", "")
	}
	f.Add(body1, "application/json; charset=utf-8", "key-1")
	f.Add(body1, "text/json", "")
	f.Add(body1, "application/json", strings.Repeat("k", 300))

	store, err := sqlite.Open(context.Background(), filepath.Join(f.TempDir(), "fuzz.db"), sqlite.OpenOptions{Synchronous: sqlite.SyncNormal})
	if err != nil {
		f.Fatal(err)
	}
	defer store.Close()
	products := settleflow.NewProducts()
	settleflow.Register(products, settleflow.Product[ticket]{
		Name: "ticket-triage", Price: settleflow.Price{TargetMargin: 3000, MinimumCharge: 50},
		Estimate: func(t ticket) (int64, error) { return 200 + 50*int64(t.Attachments), nil },
		Execute:  func(context.Context, ticket) (settleflow.Execution, error) { return settleflow.Execution{}, nil },
	})
	engine, err := settleflow.New(settleflow.Options{Store: store, Settler: idleSettler{}, Products: products,
		Notifier: settleflow.NotifierFunc(func(context.Context, []settleflow.Event) error { return nil })})
	if err != nil {
		f.Fatal(err)
	}
	defer engine.Stop(context.Background())
	auth := authFunc(func(context.Context, string) (httpapi.Principal, error) {
		return httpapi.Principal{KeyID: "key_fuzz", Environment: settleflow.Test, RateLimitKey: "fuzz",
			Windows: []ratelimit.Window{ratelimit.Minute(1 << 30), ratelimit.Day(1 << 30)}}, nil
	})
	h, err := httpapi.New(httpapi.Options{Engine: engine, Keys: auth, Limiter: ratelimit.NewMemory()})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body, contentType, idemKey string) {
		req := httptest.NewRequest("POST", "/v1/workflows", strings.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		if idemKey != "" {
			req.Header.Set("Idempotency-Key", idemKey)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusCreated, http.StatusBadRequest, http.StatusConflict, http.StatusUnsupportedMediaType, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("status %d for body %q: %s", rec.Code, body, rec.Body)
		}
		if rec.Code != http.StatusCreated && !strings.HasPrefix(rec.Body.String(), `{"error":{"type":"`) {
			t.Fatalf("error body %s", rec.Body)
		}
		// Every answer is JSON any parser reads: valid UTF-8 included.
		if b := rec.Body.Bytes(); !json.Valid(b) || !utf8.Valid(b) {
			t.Fatalf("status %d answer is not valid UTF-8 JSON: %q", rec.Code, b)
		}
		if rec.Code != http.StatusCreated {
			return
		}
		// What was stored is what a fetch answers, and it parses too; its
		// payload is the compacted body's payload, nothing more or less.
		var wf struct {
			ID      string          `json:"id"`
			Payload json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &wf); err != nil || wf.ID == "" {
			t.Fatalf("created %s: %v", rec.Body, err)
		}
		get := httptest.NewRequest("GET", "/v1/workflows/"+wf.ID, nil)
		got := httptest.NewRecorder()
		h.ServeHTTP(got, get)
		if b := got.Body.Bytes(); got.Code != http.StatusOK || !json.Valid(b) || !utf8.Valid(b) {
			t.Fatalf("fetch of %s: %d %q", wf.ID, got.Code, b)
		}
		var fetched struct {
			Payload json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(got.Body.Bytes(), &fetched); err != nil || !bytes.Equal(fetched.Payload, wf.Payload) {
			t.Fatalf("fetched payload %s, created %s (%v)", fetched.Payload, wf.Payload, err)
		}
		// The accepted body has one meaning, and the workflow's payload has
		// it too: encoding/json (lenient: last duplicate wins, any case)
		// reads the same values from both. (The answer may spell a
		// character differently, "\u0026" for "&", but not change it.)
		var in struct {
			Payload json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal([]byte(body), &in); err != nil || !sameJSON(in.Payload, wf.Payload) {
			t.Fatalf("stored payload %s is not the body's %s (%v)", wf.Payload, in.Payload, err)
		}
	})
}

// sameJSON reports whether a and b decode to equal values, numbers compared
// by their digits.
func sameJSON(a, b []byte) bool {
	decode := func(raw []byte) (any, error) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		err := dec.Decode(&v)
		return v, err
	}
	va, errA := decode(a)
	vb, errB := decode(b)
	return errA == nil && errB == nil && reflect.DeepEqual(va, vb)
}
