package client_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/client"
)

// A worker given several base URLs (docs/workers.md, "Several instances and
// retries"), against two HTTPS proxies on loopback in front of the suite's
// reference server (its remoteProduct is left to workers, with a 2 s
// lease), each proxy counting what it was sent:
//
//   - a first URL that refuses connections: every call goes to the next;
//   - a completion answered 502 (after the server recorded it) is retried,
//     and the server counts it once: the workflow settles with the cost of
//     one completion;
//   - a completion answered 409 lease_lost is final: sent once;
//   - a claim whose connection is cut after it was sent is never sent
//     again, to the same URL or the other, even on a kept-alive connection
//     (net/http resends a request with an Idempotency-Key there): the
//     worker claims anew later and gets the attempt the server ran again.
func TestWorkerSeveralURLs(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := newClient(t)

	// hook, when set, decides what the proxies do with a request; nil forwards.
	var hook atomic.Pointer[func(p *proxy, n int, w http.ResponseWriter, r *http.Request, body []byte) bool]
	handle := func(p *proxy, n int, w http.ResponseWriter, r *http.Request, body []byte) {
		if h := hook.Load(); h != nil && (*h)(p, n, w, r, body) {
			return
		}
		p.forward(n, w, r, body)
	}
	a, b := newTLSProxy(t, handle), newTLSProxy(t, handle)
	pool := x509.NewCertPool()
	pool.AddCert(a.srv.Certificate())
	pool.AddCert(b.srv.Certificate())
	refused := "https://" + closedAddr(t)
	workerClient := func(urls ...string) *client.Client {
		return client.New(ref.workerKey, client.WithBaseURLs(urls...), client.WithRootCAs(pool),
			client.WithBackoff(50*time.Millisecond, 200*time.Millisecond, time.Second))
	}
	// seen is every request the two proxies saw to path.
	seen := func(path string) []seenRequest {
		var out []seenRequest
		for _, r := range append(a.requests(), b.requests()...) {
			if r.path == path {
				out = append(out, r)
			}
		}
		return out
	}
	create := func(t *testing.T) string {
		wf, err := c.Workflows.Create(ctx, &client.WorkflowCreateParams{Product: remoteProduct, CustomerID: uniqueCustomer(t),
			Payload: map[string]any{"imageUrls": []string{"https://example.com/cat.jpg"}}})
		if err != nil {
			t.Fatal(err)
		}
		return wf.ID
	}
	// attempts records, per workflow, the tasks the worker's handler ran.
	var mu sync.Mutex
	attempts := map[string][]*client.Task{}
	// slowNext makes the next first attempt the worker runs outlast its
	// lease without a heartbeat (set before the create: the task may be
	// claimed before create returns).
	var slowNext atomic.Bool
	// startWorker runs a worker until the test ends or stop is called, which
	// returns once the worker drained its tasks (and reported their ends).
	startWorker := func(t *testing.T, cl *client.Client, heartbeats time.Duration) (stop func()) {
		w := cl.NewWorker(client.WorkerOptions{Wait: 5 * time.Second, HeartbeatInterval: heartbeats})
		w.Handle(remoteProduct, func(ctx context.Context, task *client.Task) (client.TaskResult, error) {
			mu.Lock()
			attempts[task.WorkflowID] = append(attempts[task.WorkflowID], task)
			mu.Unlock()
			if task.Attempt == 1 && slowNext.CompareAndSwap(true, false) {
				// Sleep past the lease; the heartbeat (every hour for the
				// worker that gets it) does not come.
				time.Sleep(time.Until(task.LeaseExpiresAt) + 2*time.Second)
			}
			return client.TaskResult{Result: map[string]any{"verdicts": []string{"allowed"}},
				CostItems: []client.CostItem{{Category: "model", Provider: "vision-model", Units: 1, Amount: 3}}}, nil
		})
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- w.Run(runCtx) }()
		stop = sync.OnceFunc(func() {
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("worker: %v", err)
			}
		})
		t.Cleanup(stop)
		return stop
	}
	settled := func(t *testing.T, id string) *settleflow.Workflow {
		t.Helper()
		wf := waitTerminal(t, c, id)
		if wf.Status != settleflow.Settled || wf.Cost == nil || wf.Cost.Amount != 3 {
			t.Fatalf("workflow %s ended %s with cost %+v; want Settled, costing the 3 of one completion", id, wf.Status, wf.Cost)
		}
		return wf
	}
	tasksOf := func(id string) []*client.Task {
		mu.Lock()
		defer mu.Unlock()
		return append([]*client.Task(nil), attempts[id]...)
	}

	t.Run("refused first URL", func(t *testing.T) {
		wc := workerClient(refused, a.srv.URL)
		before := len(seen("/v1/tasks/claim"))
		for range 4 {
			if _, err := wc.Tasks.Claim(ctx, &client.TaskClaimParams{Products: []string{remoteProduct}}); err != nil {
				t.Fatalf("claim with the first URL refusing: %v", err)
			}
		}
		if n := len(seen("/v1/tasks/claim")) - before; n != 4 {
			t.Fatalf("the proxy saw %d claims, want the 4 sent", n)
		}
		startWorker(t, wc, 500*time.Millisecond)
		id := create(t)
		settled(t, id)
		tasks := tasksOf(id)
		if len(tasks) != 1 || tasks[0].Attempt != 1 {
			t.Fatalf("the workflow ran as %d tasks, want attempt 1 only", len(tasks))
		}
		if n := len(seen("/v1/tasks/" + tasks[0].ID + "/complete")); n != 1 {
			t.Fatalf("%d completions reached the second URL, want 1", n)
		}
	})

	t.Run("502 on complete is retried", func(t *testing.T) {
		var once atomic.Bool
		h := func(p *proxy, n int, w http.ResponseWriter, r *http.Request, body []byte) bool {
			if !strings.HasSuffix(r.URL.Path, "/complete") || !once.CompareAndSwap(false, true) {
				return false
			}
			// The server records it; the worker hears 502.
			if _, _, err := p.roundTrip(n, r, body); err != nil {
				t.Errorf("forwarding: %v", err)
			}
			answer(w, http.StatusBadGateway, "api_error", "bad_gateway")
			return true
		}
		hook.Store(&h)
		defer hook.Store(nil)
		startWorker(t, workerClient(a.srv.URL, b.srv.URL), 500*time.Millisecond)
		id := create(t)
		settled(t, id)
		tasks := tasksOf(id)
		if len(tasks) != 1 {
			t.Fatalf("the workflow ran as %d tasks, want 1", len(tasks))
		}
		got := seen("/v1/tasks/" + tasks[0].ID + "/complete")
		if len(got) != 2 || got[0].status != http.StatusOK || got[1].status != http.StatusOK {
			t.Fatalf("completions seen %v; want 2, each answered 200 by the server (the first then 502 by the proxy)", got)
		}
	})

	t.Run("409 lease_lost on complete is final", func(t *testing.T) {
		stop := startWorker(t, workerClient(a.srv.URL, b.srv.URL), time.Hour)
		slowNext.Store(true)
		id := create(t)
		settled(t, id)
		stop() // the slow attempt's handler has returned and its end was reported
		tasks := tasksOf(id)
		if len(tasks) != 2 || tasks[0].Attempt != 1 || tasks[1].Attempt != 2 {
			var ends []string
			for _, r := range append(a.requests(), b.requests()...) {
				if strings.HasPrefix(r.path, "/v1/tasks/task_") {
					ends = append(ends, fmt.Sprintf("%s %d", r.path, r.status))
				}
			}
			var got []string
			for _, tk := range tasks {
				got = append(got, fmt.Sprintf("%s attempt %d", tk.ID, tk.Attempt))
			}
			t.Fatalf("the workflow ran as %d tasks (%v), want attempts 1 and 2; task calls seen: %v", len(tasks), got, ends)
		}
		lost := seen("/v1/tasks/" + tasks[0].ID + "/complete")
		if len(lost) != 1 || lost[0].status != http.StatusConflict || !strings.Contains(string(lost[0].answer), `"lease_lost"`) {
			t.Fatalf("the late completion was sent as %v; want once, answered 409 lease_lost", lost)
		}
		if n := len(seen("/v1/tasks/" + tasks[1].ID + "/complete")); n != 1 {
			t.Fatalf("attempt 2 completed %d times, want 1", n)
		}
	})

	t.Run("claim cut after it was sent", func(t *testing.T) {
		wc := workerClient(a.srv.URL, b.srv.URL)
		// One claim to each URL, so the next finds a kept-alive connection.
		for range 2 {
			if _, err := wc.Tasks.Claim(ctx, &client.TaskClaimParams{Products: []string{remoteProduct}}); err != nil {
				t.Fatal(err)
			}
		}
		var claims atomic.Int32
		var first atomic.Pointer[seenRequest]
		h := func(p *proxy, n int, w http.ResponseWriter, r *http.Request, body []byte) bool {
			if r.URL.Path != "/v1/tasks/claim" || claims.Add(1) != 1 {
				return false
			}
			// The server leases the task; the worker never hears of it.
			if _, _, err := p.roundTrip(n, r, body); err != nil {
				t.Errorf("forwarding: %v", err)
			}
			sr := p.requests()[n]
			first.Store(&sr)
			drop(w)
			return true
		}
		hook.Store(&h)
		defer hook.Store(nil)
		id := create(t)
		got, err := wc.Tasks.Claim(ctx, &client.TaskClaimParams{Products: []string{remoteProduct}, WaitSeconds: 10})
		var conn *client.ConnectionError
		if !errors.As(err, &conn) || len(got) != 0 {
			t.Fatalf("a claim cut after it was sent: %d tasks, %v; want a *ConnectionError", len(got), err)
		}
		if n, sr := claims.Load(), first.Load(); n != 1 || sr == nil || sr.status != http.StatusOK || !strings.Contains(string(sr.answer), id) {
			t.Fatalf("%d claims reached the proxies (the first %v); want the one, which leased the workflow's task", n, sr)
		}
		hook.Store(nil)
		// The worker claims anew and gets the attempt the server runs again
		// once the lost one's lease passed.
		startWorker(t, wc, 500*time.Millisecond)
		settled(t, id)
		if tasks := tasksOf(id); len(tasks) != 1 || tasks[0].Attempt != 2 {
			t.Fatalf("the worker ran %d tasks of the workflow, want one: attempt 2", len(tasks))
		}
	})
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
