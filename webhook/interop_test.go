package webhook

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
)

// TestStandardWebhooksNodeInterop has real deliveries (with one secret, and
// with two during a rotation) verified by the standardwebhooks package from
// npm, pinned in testdata/node. It needs `npm ci` run in testdata/node.
func TestStandardWebhooksNodeInterop(t *testing.T) {
	dir := filepath.Join("testdata", "node")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "standardwebhooks")); err != nil {
		t.Skip("skipping: webhook/testdata/node/node_modules is absent; run `npm ci` in webhook/testdata/node to enable the standardwebhooks interop test")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node_modules is installed but node is not on PATH")
	}
	ctx := context.Background()
	s := newService(t, openDB(t), fastConfig(t))
	rc := newReceiver(t, nil)
	ep, oldSecret := createEndpoint(t, s, settleflow.Test, rc.URL)
	if err := s.Notify(ctx, []settleflow.Event{testEvent(false)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "first delivery", func() bool { return rc.count() == 1 })
	newSecret, err := s.RotateSecret(ctx, ep.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	failed := testEvent(false)
	failed.Type = settleflow.EventWorkflowFailed
	failed.Data.Status = "Failed"
	failed.Data.Result = nil
	failed.Data.Failure = &settleflow.Failure{Code: settleflow.FailureExecutionFailed, Message: "ticket \"T-42\" — not found ✓"}
	if err := s.Notify(ctx, []settleflow.Event{failed}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "second delivery", func() bool { return rc.count() == 2 })

	run := func(r captured, secret string) error {
		headers := map[string]string{}
		for k := range r.Header {
			headers[strings.ToLower(k)] = r.Header.Get(k)
		}
		in, _ := json.Marshal(map[string]any{
			"body":    base64.StdEncoding.EncodeToString(r.Body),
			"headers": headers,
			"secret":  secret,
		})
		cmd := exec.Command(node, "verify.mjs")
		cmd.Dir = dir
		cmd.Stdin = bytes.NewReader(in)
		out, err := cmd.CombinedOutput()
		t.Logf("node: %s", strings.TrimSpace(string(out)))
		return err
	}
	reqs := rc.requests()
	if err := run(reqs[0], oldSecret); err != nil {
		t.Fatalf("standardwebhooks rejected a delivery: %v", err)
	}
	for _, sec := range []string{oldSecret, newSecret} {
		if err := run(reqs[1], sec); err != nil {
			t.Fatalf("standardwebhooks rejected a delivery signed during rotation: %v", err)
		}
	}
	// The harness itself must be able to say no.
	other, _ := NewSecret()
	if err := run(reqs[0], other); err == nil {
		t.Fatal("standardwebhooks accepted a delivery under a foreign secret")
	}
}
