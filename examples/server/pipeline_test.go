package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/settlement/contracts/bindings"
	"github.com/settleflow/settleflow/webhook"
)

// childArgsEnv, set, makes the test binary the reference server with these
// arguments (JSON), so a test can kill it with SIGKILL.
const childArgsEnv = "SETTLEFLOW_SERVER_CHILD_ARGS"

func TestMain(m *testing.M) {
	if v := os.Getenv(childArgsEnv); v != "" {
		var args []string
		if err := json.Unmarshal([]byte(v), &args); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(2)
		}
		recordExecutions() // scaleout_test.go; only if the test asked
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := run(ctx, args, os.Stdout, os.Stderr)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// processServer is the reference server in a process of its own.
type processServer struct {
	cmd    *exec.Cmd
	url    string
	client *http.Client
	done   chan struct{}
}

func startProcessServer(t *testing.T, dir string, extra ...string) *processServer {
	t.Helper()
	args, _ := json.Marshal(append([]string{"-data", dir, "-https", "127.0.0.1:0", "-http", "", "-log-level", "warn"}, extra...))
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childArgsEnv+"="+string(args))
	logf, err := os.OpenFile(filepath.Join(dir, "server.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &processServer{cmd: cmd, done: make(chan struct{})}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := listenLine.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		cmd.Wait()
		logf.Close()
		close(s.done)
	}()
	t.Cleanup(func() { s.kill() })
	select {
	case addr := <-found:
		s.url = "https://" + addr
	case <-s.done:
		log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
		t.Fatalf("server exited at start:\n%s", log)
	case <-time.After(time.Minute):
		t.Fatal("server did not start within a minute")
	}
	pem, err := os.ReadFile(filepath.Join(dir, "tls", "cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	s.client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, MaxIdleConnsPerHost: 16}}
	return s
}

// kill ends the server with SIGKILL: nothing of it runs after, no deferred
// code, no flush.
func (s *processServer) kill() {
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
}

func (s *processServer) create(t *testing.T, key string, i int) string {
	req, _ := http.NewRequest("POST", s.url+"/v1/workflows", strings.NewReader(
		fmt.Sprintf(`{"product":"image-moderation","customerId":"cus_%d","payload":{"imageUrls":["https://example.com/%d.png"]}}`, i%7, i)))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", fmt.Sprint("pipeline-", i))
	resp, err := s.client.Do(req)
	if err != nil {
		t.Errorf("create %d: %v", i, err)
		return ""
	}
	defer resp.Body.Close()
	var wf struct {
		ID string `json:"id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&wf); err != nil || resp.StatusCode != http.StatusCreated {
		t.Errorf("create %d: HTTP %d %v", i, resp.StatusCode, err)
	}
	return wf.ID
}

// createMany creates workflows from..to-1 over 16 connections.
func (s *processServer) createMany(t *testing.T, key string, from, to int) []string {
	ids := make([]string, to-from)
	goRange(from, to, 16, func(i int) { ids[i-from] = s.create(t, key, i) })()
	return ids
}

// goRange calls fn for each i in from..to-1 on workers goroutines, each
// taking the next i as it finishes one; wait returns when all have run.
func goRange(from, to, workers int, fn func(i int)) (wait func()) {
	var next atomic.Int64
	next.Store(int64(from))
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < to; i = int(next.Add(1) - 1) {
				fn(i)
			}
		}()
	}
	return wg.Wait
}

// The whole pipeline against a receiver that is fast, is killed under (the
// server, with SIGKILL, while deliveries are in flight), then turns slow,
// then fails, then recovers: every workflow.completed arrives, verified,
// and while the receiver fails the server sends it fewer requests at once
// than while it was fast. GET /readyz and /healthz report the stages.
func TestPipelineSurvivesKillAndAFlakyReceiver(t *testing.T) {
	dir := t.TempDir()
	const (
		fast = iota
		slow
		failing
		recovered
	)
	var (
		mu       sync.Mutex
		secret   string
		phase    = fast
		seen     = map[string]bool{} // workflow ids whose workflow.completed arrived
		answered [4]int              // requests per phase
		peak     [4]int              // most requests at once, per phase (failing: after its first 10)
		inflight int
		bad      int
	)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		p := phase
		inflight++
		if p != failing || answered[failing] >= 10 {
			peak[p] = max(peak[p], inflight)
		}
		sec := secret
		mu.Unlock()
		defer func() { mu.Lock(); inflight--; mu.Unlock() }()
		ev, err := webhook.ConstructEvent(body, r.Header.Get("service-signature"), sec)
		if err == nil {
			err = webhook.VerifyStandard(body, r.Header, sec)
		}
		if err != nil {
			mu.Lock()
			bad++
			mu.Unlock()
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		switch p {
		case fast, recovered:
			time.Sleep(10 * time.Millisecond)
		case slow:
			time.Sleep(1500 * time.Millisecond) // slower than a tenth of the 10 s timeout
		case failing:
			time.Sleep(5 * time.Millisecond)
		}
		mu.Lock()
		defer mu.Unlock()
		answered[p]++
		if p == failing {
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
			return
		}
		if ev.Type == settleflow.EventWorkflowCompleted {
			seen[ev.Data.WorkflowID] = true
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer recv.Close()
	secret = addEndpoint(t, dir, recv.URL)
	out := cli(t, dir, "keys", "create", "--env", "test", "--name", "pipeline", "--plan", "enterprise", "--per-minute", "1000000", "--per-day", "100000000")
	key := regexp.MustCompile(`sk_test_[0-9A-Za-z]+`).FindString(out)
	if key == "" {
		t.Fatalf("keys create printed no key: %s", out)
	}
	flags := []string{"-webhook-retry-schedule", "0s,200ms,300ms,500ms,500ms,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s"}
	delivered := func(ids []string) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, id := range ids {
			if seen[id] {
				n++
			}
		}
		return n
	}
	waitUntil := func(what string, timeout time.Duration, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(timeout)
		for !cond() {
			if time.Now().After(deadline) {
				log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
				t.Fatalf("timed out after %v waiting for %s; server log:\n%s", timeout, what, log)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// Fast, and killed while deliveries are in flight.
	s := startProcessServer(t, dir, flags...)
	ids := s.createMany(t, key, 0, 400)
	waitUntil("the first deliveries", time.Minute, func() bool { return delivered(ids) >= 100 })
	s.kill()
	killedAt := delivered(ids)
	if killedAt == len(ids) {
		t.Fatal("every webhook had arrived before the kill: the test did not kill the server mid-delivery")
	}

	// Restarted on the same data: what was acknowledged goes on.
	s = startProcessServer(t, dir, flags...)
	waitUntil("the fast phase", time.Minute, func() bool { return delivered(ids) >= 300 })
	mu.Lock()
	phase = slow
	mu.Unlock()
	waitUntil("slow answers", time.Minute, func() bool { mu.Lock(); defer mu.Unlock(); return answered[slow] >= 12 })
	mu.Lock()
	phase = failing
	mu.Unlock()
	ids = append(ids, s.createMany(t, key, 400, 500)...)
	waitUntil("failed attempts", time.Minute, func() bool { mu.Lock(); defer mu.Unlock(); return answered[failing] >= 150 })

	// While it fails the server is behind on webhooks; /healthz says so and
	// still answers 200.
	status, _, body := (&server{t: t, https: strings.TrimPrefix(s.url, "https://"), client: s.client}).do("GET", "/healthz", "", "")
	stages, _ := body["stages"].([]any)
	if status != 200 || len(stages) != 4 {
		t.Errorf("GET /healthz while the receiver fails: %d %v; want 200 and four stages", status, body)
	} else if wh, _ := stages[3].(map[string]any); wh["stage"] != "webhooks" || wh["depth"].(float64) == 0 {
		t.Errorf("GET /healthz: the webhooks stage %v; want pending deliveries", wh)
	}

	mu.Lock()
	phase = recovered
	mu.Unlock()
	waitUntil("every workflow.completed", 2*time.Minute, func() bool { return delivered(ids) == len(ids) })
	mu.Lock()
	defer mu.Unlock()
	t.Logf("delivered %d before the kill; requests per phase %v; peak in flight per phase %v", killedAt, answered, peak)
	if bad != 0 {
		t.Errorf("%d deliveries failed verification", bad)
	}
	if peak[failing] >= peak[fast] || peak[failing] > 2 {
		t.Errorf("at most %d requests at once while the receiver failed, %d while it was fast; want at most 2, and fewer", peak[failing], peak[fast])
	}
}

func (s *processServer) get(t *testing.T, key, path string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest("GET", s.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return m
}

func (s *processServer) settled(t *testing.T, key, id string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		w := s.get(t, key, "/v1/workflows/"+id)
		if w["status"] == "Settled" {
			return w["settlement"].(map[string]any)
		}
		if w["status"] == "Failed" || time.Now().After(deadline) {
			t.Fatalf("workflow %s: %v", id, w)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The embedded test chain lives in the data directory: after the server is
// killed (SIGKILL) and started again, a Settled workflow's transaction is
// still on the chain, and new workflows settle on the same chain, after it.
func TestEmbeddedChainSurvivesKill(t *testing.T) {
	dir := t.TempDir()
	out := cli(t, dir, "keys", "create", "--env", "test", "--name", "chain")
	key := regexp.MustCompile(`sk_test_[0-9A-Za-z]+`).FindString(out)
	s := startProcessServer(t, dir)
	before := s.settled(t, key, s.create(t, key, 1))
	s.kill()

	s = startProcessServer(t, dir)
	id2 := s.create(t, key, 2)
	after := s.settled(t, key, id2)
	if after["chainId"] != before["chainId"] || after["blockNumber"].(float64) <= before["blockNumber"].(float64) {
		t.Fatalf("after the restart settled at %v, before at %v: not the same chain, continued", after, before)
	}
	s.kill()

	if out, _, code := runCmd(t, dir, "chain", "status", "--env", "test"); code != 0 || !strings.Contains(out, "chain 1337") || !strings.Contains(out, "ready") {
		t.Fatalf("chain status: exit %d\n%s", code, out)
	}
	// The chain and the database agree.
	if out, errOut, code := runCmd(t, dir, "chain", "reconcile", "--env", "test"); code != 0 || !strings.Contains(out, "no discrepancy") {
		t.Fatalf("chain reconcile: exit %d\n%s%s", code, out, errOut)
	}

	// The chain itself, opened from its directory: the receipts are there.
	chain, err := settlement.NewSimulated(context.Background(), settlement.SimulatedOptions{DataDir: filepath.Join(dir, "chain"), ManualCommit: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []map[string]any{before, after} {
		r, err := chain.Backend.Client().TransactionReceipt(context.Background(), common.HexToHash(st["txHash"].(string)))
		if err != nil || r.Status != 1 || r.BlockNumber.Uint64() != uint64(st["blockNumber"].(float64)) {
			t.Fatalf("receipt of %v: %+v %v", st, r, err)
		}
	}
	// Plant two discrepancies: a settlement sent to the contract outside
	// the engine, and a Settled workflow's charge altered in the database.
	// (Debited from cus_1, who holds a balance from the faucet.)
	tr := settlement.Transactor{Backend: chain.Backend.Client(), Key: chain.OperatorKey, Mine: chain.Commit}
	charge := settlement.PackedCharge{Cents: 777, Sequence: 424242, Tag: settlement.WorkflowTag("wf_outside")}.Pack()
	if _, err := tr.Send(context.Background(), &chain.Addresses.Contract, bindings.NewSettleflowSettlement().PackSettle(
		[][32]byte{settlement.CustomerRef(chain.CustomerRefSecret, "test", "cus_1")}, []*big.Int{charge})); err != nil {
		t.Fatal(err)
	}
	chain.Close()
	db, err := openDB(context.Background(), config{dataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	altered := id2
	if _, err := db.Bun().NewRaw("UPDATE settleflow_workflows SET charged = charged + 1 WHERE id = ?", altered).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	db.Close()
	out, _, code := runCmd(t, dir, "chain", "reconcile", "--env", "test")
	if code != 1 || !strings.Contains(out, "not_in_database") || !strings.Contains(out, fmt.Sprintf("tag %016x", settlement.WorkflowTag("wf_outside"))) ||
		!strings.Contains(out, "amount_mismatch") || !strings.Contains(out, altered) {
		t.Fatalf("chain reconcile after planting: exit %d\n%s", code, out)
	}
}
