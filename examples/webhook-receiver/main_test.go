package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/settleflow/settleflow/webhook/signature"
	"github.com/settleflow/settleflow/wire"
)

func TestReceiver(t *testing.T) {
	secret, err := signature.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	var logs logRecords
	srv := httptest.NewServer(newHandler(secret, signature.DefaultHeader, slog.New(&logs)))
	defer srv.Close()

	body, _ := json.Marshal(wire.Event{
		ID: "evt_01JD3Q6Y6F8Q2W9T4M5N7P8R0S", Object: "event", Type: wire.EventWorkflowCompleted,
		CreatedAt: time.Now().UTC(),
		Data:      wire.EventData{WorkflowID: "wf_01JD3Q6Y6F8Q2W9T4M5N7P8R0S", Status: "Settled"},
	})
	post := func(sig string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		if sig != "" {
			req.Header.Set("service-signature", sig)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	sig, _ := signature.Sign(time.Now(), body, secret)
	if code, b := post(sig); code != 200 || b != `{"received": true}` {
		t.Fatalf("good signature: %d %s", code, b)
	}
	other, _ := signature.NewSecret()
	bad, _ := signature.Sign(time.Now(), body, other)
	if code, _ := post(bad); code != 400 {
		t.Fatalf("bad signature: %d", code)
	}
	if code, _ := post(""); code != 400 {
		t.Fatalf("no signature: %d", code)
	}
	got := logs.withMessage("webhook received")
	if len(got) != 1 || got[0]["workflowId"] != "wf_01JD3Q6Y6F8Q2W9T4M5N7P8R0S" ||
		got[0]["type"] != "workflow.completed" {
		t.Fatalf("logs = %+v", got)
	}
	for _, e := range logs.all() {
		if strings.Contains(fmt.Sprint(e), secret) {
			t.Fatal("secret logged")
		}
	}
}

// logRecords is a slog.Handler that keeps every record as a map of its
// message ("msg") and attributes, for the test to look at.
type logRecords struct {
	mu      sync.Mutex
	records []map[string]any
}

func (h *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (h *logRecords) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *logRecords) WithGroup(string) slog.Handler            { return h }

func (h *logRecords) Handle(_ context.Context, r slog.Record) error {
	m := map[string]any{"msg": r.Message}
	r.Attrs(func(a slog.Attr) bool {
		m[a.Key] = a.Value.Resolve().Any()
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, m)
	return nil
}

func (h *logRecords) all() []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]map[string]any(nil), h.records...)
}

func (h *logRecords) withMessage(msg string) []map[string]any {
	var out []map[string]any
	for _, m := range h.all() {
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}
