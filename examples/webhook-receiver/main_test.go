package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/webhook"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

func TestReceiver(t *testing.T) {
	secret, err := webhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zap.InfoLevel)
	srv := httptest.NewServer(newHandler(secret, webhook.DefaultSignatureHeader, zap.New(core)))
	defer srv.Close()

	body, _ := json.Marshal(settleflow.Event{
		ID: "evt_01JD3Q6Y6F8Q2W9T4M5N7P8R0S", Object: "event", Type: settleflow.EventWorkflowCompleted,
		CreatedAt: time.Now().UTC(),
		Data:      settleflow.EventData{WorkflowID: "wf_01JD3Q6Y6F8Q2W9T4M5N7P8R0S", Status: "Settled"},
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

	sig, _ := webhook.Sign(time.Now(), body, secret)
	if code, b := post(sig); code != 200 || b != `{"received": true}` {
		t.Fatalf("good signature: %d %s", code, b)
	}
	other, _ := webhook.NewSecret()
	bad, _ := webhook.Sign(time.Now(), body, other)
	if code, _ := post(bad); code != 400 {
		t.Fatalf("bad signature: %d", code)
	}
	if code, _ := post(""); code != 400 {
		t.Fatalf("no signature: %d", code)
	}
	got := logs.FilterMessage("webhook received").All()
	if len(got) != 1 || got[0].ContextMap()["workflowId"] != "wf_01JD3Q6Y6F8Q2W9T4M5N7P8R0S" ||
		got[0].ContextMap()["type"] != "workflow.completed" {
		t.Fatalf("logs = %+v", got)
	}
	for _, e := range logs.All() {
		if strings.Contains(e.Message+fmt.Sprint(e.ContextMap()), secret) {
			t.Fatal("secret logged")
		}
	}
}
