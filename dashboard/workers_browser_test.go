package dashboard_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/settleflow/settleflow/client"
	"github.com/settleflow/settleflow/dashboard"
)

// TestWorkersInChromium starts the reference server with ticket-triage
// left to workers, runs a real Go worker (client.Worker, over HTTPS with a
// worker key made by `server keys create -kind worker`) that fails the
// first attempt of one workflow and completes its second, and holds
// another workflow's task; then drives the dashboard in headless Chromium
// (testdata/browser/workers.mjs): the Workers page shows the worker by
// key, host and name with its last claim and its task in flight; the
// retried workflow's page shows both attempts, the worker of each and how
// each ended; the held workflow's attempt is running; live mode has no
// worker. Screenshots land in -browser-out (workers.png,
// workflow-attempts.png, workflow-attempt-running.png, workers-live.png).
func TestWorkersInChromium(t *testing.T) {
	node, out := dashboard.BrowserSetup(t)
	srv := startServer(t, t.TempDir(), "-remote", "ticket-triage")

	mk := exec.Command(srv.bin, "-data", srv.dir, "keys", "create", "--env", "test", "--name", "triage-workers", "--kind", "worker")
	b, err := mk.Output()
	if err != nil {
		t.Fatalf("keys create: %v\n%s", err, b)
	}
	lines := strings.Fields(string(b))
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "key_") || !regexp.MustCompile(`^rk_test_\w+$`).MatchString(lines[1]) {
		t.Fatalf("keys create printed %q", b)
	}
	keyID, workerKey := lines[0], lines[1]

	pem, err := os.ReadFile(filepath.Join(srv.dir, "tls", "cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	api := client.New(srv.key, client.WithBaseURL(srv.base), client.WithRootCAs(pool))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	create := func(ticket string) string {
		t.Helper()
		wf, err := api.Workflows.Create(ctx, &client.WorkflowCreateParams{Product: "ticket-triage", CustomerID: "cus_workers",
			Payload: map[string]any{"ticketId": ticket, "subject": "Refund for invoice 7", "attachments": 1}})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		return wf.ID
	}

	const host, name = "render-box-7", "triage-1"
	release := make(chan struct{})
	var once sync.Once
	defer once.Do(func() { close(release) })
	heldStarted := make(chan string, 1)
	w := client.New(workerKey, client.WithBaseURL(srv.base), client.WithRootCAs(pool)).
		NewWorker(client.WorkerOptions{Concurrency: 2, Host: host, Name: name, Wait: 5 * time.Second, DrainTimeout: 5 * time.Second})
	w.Handle("ticket-triage", func(ctx context.Context, task *client.Task) (client.TaskResult, error) {
		var p struct {
			TicketID string `json:"ticketId"`
		}
		if err := json.Unmarshal(task.Payload, &p); err != nil {
			return client.TaskResult{}, client.Permanent(err)
		}
		switch {
		case p.TicketID == "T-RETRY" && task.Attempt == 1:
			return client.TaskResult{}, errors.New("the model was busy; try again")
		case p.TicketID == "T-HELD":
			heldStarted <- task.WorkflowID
			select {
			case <-release:
			case <-ctx.Done():
				return client.TaskResult{}, ctx.Err()
			}
		}
		return client.TaskResult{Result: map[string]any{"queue": "billing"},
			CostItems: []client.CostItem{{Category: "model", Provider: "test-model", Units: 1, Amount: 10}}}, nil
	})
	workerCtx, stopWorker := context.WithCancel(ctx)
	workerDone := make(chan error, 1)
	go func() { workerDone <- w.Run(workerCtx) }()
	defer func() {
		once.Do(func() { close(release) })
		stopWorker()
		<-workerDone
	}()

	retried := create("T-RETRY")
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		wf, err := api.Workflows.Fetch(ctx, retried)
		if err != nil {
			t.Fatal(err)
		}
		if wf.Status == "Settled" {
			break
		}
		if wf.Status == "Failed" || time.Now().After(deadline) {
			t.Fatalf("the retried workflow: %s %+v", wf.Status, wf.Failure)
		}
	}
	held := create("T-HELD")
	select {
	case id := <-heldStarted:
		if id != held {
			t.Fatalf("the worker holds %s, want %s", id, held)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the worker never got the held workflow's task")
	}

	cmd := exec.Command(node, "workers.mjs")
	cmd.Dir = "testdata/browser"
	cmd.Env = append(os.Environ(), "BASE="+srv.base, "LINK="+srv.link, "KEY_ID="+keyID, "KEY_NAME=triage-workers",
		"HOST="+host, "NAME="+name, "RETRIED="+retried, "HELD="+held, "OUT="+out, "CHROMIUM="+chromiumPath,
		"NODE_EXTRA_CA_CERTS="+filepath.Join(srv.dir, "tls", "cert.pem"))
	b, err = cmd.CombinedOutput()
	t.Logf("browser:\n%s", b)
	if err != nil {
		t.Fatalf("the browser run failed: %v\nserver log:\n%s", err, srv.stderr.String())
	}
	for _, name := range []string{"workers", "workflow-attempts", "workflow-attempt-running", "workers-live"} {
		if fi, err := os.Stat(filepath.Join(out, name+".png")); err != nil || fi.Size() == 0 {
			t.Errorf("no screenshot %s.png: %v", name, err)
		}
	}
	t.Logf("screenshots in %s", out)
}
