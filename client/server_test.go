package client_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/client"
)

// remoteProduct is the demo product the suite's server leaves to workers.
const remoteProduct = "image-moderation"

// The suite runs against the real reference server, built from this
// repository and started once on loopback by TestMain with its own data
// directory, keys and webhook endpoint.
var ref *refServer

type refServer struct {
	dir      string
	baseURL  string
	pool     *x509.CertPool
	certFile string
	keyFile  string
	// key is a test key with a limit no test reaches; tinyKey an enterprise
	// test key of 2 requests a minute; liveKey a live key, which the server
	// refuses (403) since it has no live settlement.
	key, tinyKey, liveKey string
	// workerKey is a test worker key for remoteProduct, the one demo
	// product the suite's server leaves to workers (with a 2 s task lease).
	workerKey     string
	webhookSecret string
	hooks         *hookRecorder
	stderr        *lockedBuffer
}

func TestMain(m *testing.M) {
	os.Exit(func() int {
		s, stop, err := startRefServer()
		if err != nil {
			fmt.Fprintln(os.Stderr, "client tests: starting the reference server:", err)
			return 1
		}
		defer stop()
		ref = s
		code := m.Run()
		if code != 0 {
			fmt.Fprintf(os.Stderr, "reference server stderr:\n%s\n", s.stderr.String())
		}
		return code
	}())
}

func startRefServer() (_ *refServer, stop func(), err error) {
	tmp, err := os.MkdirTemp("", "settleflow-client-test-")
	if err != nil {
		return nil, nil, err
	}
	var cleanups []func()
	stop = func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
		os.RemoveAll(tmp)
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()

	// Build the server from this repository (the module root is ..).
	bin := filepath.Join(tmp, "server")
	build := exec.Command(goTool(), "build", "-o", bin, "./examples/server")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		return nil, nil, fmt.Errorf("go build ./examples/server: %v\n%s", err, out)
	}
	s := &refServer{dir: filepath.Join(tmp, "data"), hooks: newHookRecorder(), stderr: &lockedBuffer{}}
	run := func(args ...string) ([]string, error) {
		cmd := exec.Command(bin, append([]string{"-data", s.dir}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("server %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return strings.Split(strings.TrimSpace(string(out)), "\n"), nil
	}
	secretOf := func(lines []string, err error) (string, error) {
		if err != nil {
			return "", err
		}
		if len(lines) != 2 || !strings.HasPrefix(lines[1], "sk_") {
			return "", fmt.Errorf("keys create printed %q", lines)
		}
		return lines[1], nil
	}
	if s.key, err = secretOf(run("keys", "create", "--env", "test", "--name", "suite", "--plan", "enterprise", "--per-minute", "100000", "--per-day", "10000000")); err != nil {
		return nil, nil, err
	}
	if s.tinyKey, err = secretOf(run("keys", "create", "--env", "test", "--name", "tiny", "--plan", "enterprise", "--per-minute", "2", "--per-day", "1000")); err != nil {
		return nil, nil, err
	}
	if s.liveKey, err = secretOf(run("keys", "create", "--env", "live", "--name", "live")); err != nil {
		return nil, nil, err
	}
	lines, err := run("keys", "create", "--env", "test", "--name", "workers", "--kind", "worker", "--products", remoteProduct)
	if err != nil {
		return nil, nil, err
	}
	if len(lines) != 2 || !strings.HasPrefix(lines[1], "rk_test_") {
		return nil, nil, fmt.Errorf("keys create -kind worker printed %q", lines)
	}
	s.workerKey = lines[1]

	// The webhook receiver, then its endpoint.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	hookSrv := &http.Server{Handler: s.hooks, ReadHeaderTimeout: 5 * time.Second}
	go hookSrv.Serve(ln)
	cleanups = append(cleanups, func() { hookSrv.Close() })
	lines, err = run("webhooks", "add", "--env", "test", "--url", "http://"+ln.Addr().String()+"/hook")
	if err != nil {
		return nil, nil, err
	}
	for _, l := range lines {
		if i := strings.Index(l, "whsec_"); i >= 0 {
			s.webhookSecret = strings.TrimSpace(l[i:])
		}
	}
	if s.webhookSecret == "" {
		return nil, nil, fmt.Errorf("webhooks add printed no secret: %q", lines)
	}

	// Serve.
	cmd := exec.Command(bin, "-data", s.dir, "-https", "127.0.0.1:0", "-http", "", "-log-level", "warn", "-auth-failures-per-minute", "0",
		// Two workers: a burst of workflows waits Pending long enough for a
		// cancel to win (TestCancel), and the suite's others still run at once.
		"-workers", "2",
		// The suite makes many clients, each with its own connections.
		"-max-conns-per-ip", "0",
		// One product for the worker tests (failover_test.go), which no
		// other test creates, with a short lease so a lost one passes soon.
		"-remote", remoteProduct, "-task-lease", "2s")
	cmd.Stderr = s.stderr
	dieWithParent(cmd)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	cleanups = append(cleanups, func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	listening := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if _, rest, ok := strings.Cut(sc.Text(), "listening on "); ok {
				select {
				case listening <- strings.Fields(rest)[0]:
				default:
				}
			}
		}
	}()
	select {
	case s.baseURL = <-listening:
	case <-exited:
		return nil, nil, fmt.Errorf("the server exited: %s", s.stderr.String())
	case <-time.After(30 * time.Second):
		return nil, nil, fmt.Errorf("the server printed no address in 30 s: %s", s.stderr.String())
	}
	s.certFile = filepath.Join(s.dir, "tls", "cert.pem")
	s.keyFile = filepath.Join(s.dir, "tls", "key.pem")
	pem, err := os.ReadFile(s.certFile)
	if err != nil {
		return nil, nil, err
	}
	s.pool = x509.NewCertPool()
	if !s.pool.AppendCertsFromPEM(pem) {
		return nil, nil, errors.New("no certificate in " + s.certFile)
	}
	return s, stop, nil
}

// goTool is the go command that runs these tests.
func goTool() string {
	if root := os.Getenv("GOROOT"); root != "" {
		if p := filepath.Join(root, "bin", "go"); fileExists(p) {
			return p
		}
	}
	return "go"
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// backlog creates n workflows at once and returns their ids; with the
// server's two workers, the last ones stay Pending for a while.
func backlog(t testing.TB, c *client.Client, customer string, n int) []string {
	t.Helper()
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			wf, err := c.Workflows.Create(context.Background(), &client.WorkflowCreateParams{Product: "document-summary", CustomerID: customer,
				Payload: map[string]string{"text": "The quarterly report shows revenue up 12 % on the year.", "language": "en"}})
			if err == nil {
				ids[i] = wf.ID
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	return ids
}

// newClient is a client of the reference server with the suite's key.
func newClient(t testing.TB, opts ...client.Option) *client.Client {
	t.Helper()
	return client.New(ref.key, append([]client.Option{client.WithBaseURL(ref.baseURL), client.WithRootCAs(ref.pool)}, opts...)...)
}

// uniqueCustomer returns a customer id no other test uses, so lists
// filtered by it see only this test's workflows.
func uniqueCustomer(t testing.TB) string {
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	return fmt.Sprintf("cus_%s_%d", name, time.Now().UnixNano())
}

// ticket is the payload of the demo product ticket-triage.
type ticket struct {
	TicketID    string `json:"ticketId"`
	Subject     string `json:"subject"`
	Attachments int    `json:"attachments"`
}

func ticketParams(customer string) *client.WorkflowCreateParams {
	return &client.WorkflowCreateParams{
		Product:    "ticket-triage",
		CustomerID: customer,
		Payload:    ticket{TicketID: "T-42", Subject: "Refund for invoice 7", Attachments: 1},
	}
}

// waitTerminal polls the workflow until its status is terminal.
func waitTerminal(t testing.TB, c *client.Client, id string) *settleflow.Workflow {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		wf, err := c.Workflows.Fetch(ctx, id)
		if err != nil {
			t.Fatalf("fetch %s: %v", id, err)
		}
		if wf.Status.Terminal() {
			return wf
		}
		select {
		case <-ctx.Done():
			t.Fatalf("workflow %s still %s", id, wf.Status)
		case <-time.After(150 * time.Millisecond):
		}
	}
}

// delivery is one webhook request the receiver got.
type delivery struct {
	body   []byte
	header http.Header
}

// hookRecorder is the suite's webhook endpoint: it records every delivery
// by the workflow id in its body (a customer event's by its type and
// customer: "customer.owner_set/cus_…"), and acknowledges it.
type hookRecorder struct {
	mu      sync.Mutex
	got     map[string][]delivery
	changed chan struct{}
}

func newHookRecorder() *hookRecorder {
	return &hookRecorder{got: map[string][]delivery{}, changed: make(chan struct{})}
}

func (h *hookRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "unreadable", http.StatusBadRequest)
		return
	}
	var ev struct {
		Type string `json:"type"`
		Data struct {
			WorkflowID string `json:"workflowId"`
			CustomerID string `json:"customerId"`
		} `json:"data"`
	}
	json.Unmarshal(body, &ev)
	key := ev.Data.WorkflowID
	if key == "" && ev.Data.CustomerID != "" {
		key = ev.Type + "/" + ev.Data.CustomerID
	}
	h.mu.Lock()
	h.got[key] = append(h.got[key], delivery{body: body, header: r.Header.Clone()})
	close(h.changed)
	h.changed = make(chan struct{})
	h.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"received": true}`)
}

// wait returns the first delivery about workflowID (or a customer event's
// key, "type/customerId").
func (h *hookRecorder) wait(t testing.TB, workflowID string, timeout time.Duration) delivery {
	t.Helper()
	deadline := time.After(timeout)
	for {
		h.mu.Lock()
		ds, changed := h.got[workflowID], h.changed
		h.mu.Unlock()
		if len(ds) > 0 {
			return ds[0]
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("no webhook delivery for %s within %v", workflowID, timeout)
		}
	}
}

// lockedBuffer is a bytes.Buffer safe for a writing process and a reader.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// tlsConfig trusts the reference server's certificate.
func tlsConfig() *tls.Config { return &tls.Config{RootCAs: ref.pool} }
