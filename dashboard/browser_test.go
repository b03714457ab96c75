package dashboard_test

import (
	"bufio"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/settleflow/settleflow/dashboard"
)

// -browser-out, read by BrowserSetup (flag.Lookup).
var _ = flag.String("browser-out", "", "directory for the browser test's screenshots (default: under the test's temporary directory)")

// chromiumPath is Debian's Chromium, which .ci/run installs.
const chromiumPath = "/usr/bin/chromium"

// TestDashboardInChromium starts the reference server built from this
// repository, signs in to its dashboard with the link it prints at first
// start and drives every page in headless Chromium (testdata/browser): keys
// created, used, rotated and revoked; an endpoint registered, a real
// delivery and its resend; a Settled workflow's transaction and its
// customer; the live switch. A screenshot of each page lands in
// -browser-out.
func TestDashboardInChromium(t *testing.T) {
	node, out := dashboard.BrowserSetup(t)
	tmp := t.TempDir()

	// The receiver the browser registers: it counts deliveries per event.
	var mu sync.Mutex
	deliveries := map[string]int{}
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		deliveries[r.Header.Get("webhook-id")]++
		mu.Unlock()
		w.Write([]byte(`{"received":true}`))
	}))
	defer recv.Close()

	srv := startServer(t, tmp)
	base, link, key, dir, stderr := srv.base, srv.link, srv.key, srv.dir, srv.stderr
	cmd := exec.Command(node, "dashboard.mjs")
	cmd.Dir = "testdata/browser"
	cmd.Env = append(os.Environ(), "BASE="+base, "LINK="+link, "FIRST_KEY="+key, "RECEIVER_URL="+recv.URL+"/hook",
		"OUT="+out, "CHROMIUM="+chromiumPath, "NODE_EXTRA_CA_CERTS="+filepath.Join(dir, "tls", "cert.pem"))
	b, err := cmd.CombinedOutput()
	t.Logf("browser:\n%s", b)
	if err != nil {
		t.Fatalf("the browser run failed: %v\nserver log:\n%s", err, stderr.String())
	}
	mu.Lock()
	resent := false
	for _, n := range deliveries {
		resent = resent || n >= 2
	}
	mu.Unlock()
	if !resent {
		t.Errorf("the receiver got %v; want one event twice (delivered, then resent from the dashboard)", deliveries)
	}
	for _, name := range []string{"signin", "overview", "keys-created", "keys-rotated", "webhooks-added", "webhooks-delivered",
		"delivery", "delivery-resent", "workflows", "workflow", "customer", "customers", "overview-settled", "overview-live", "webhooks-live"} {
		if fi, err := os.Stat(filepath.Join(out, name+".png")); err != nil || fi.Size() == 0 {
			t.Errorf("no screenshot %s.png: %v", name, err)
		}
	}
}

// referenceServer is the reference server (examples/server) built from
// this repository and started on a fresh data directory.
type referenceServer struct {
	// base is its https:// address, link the sign-in link and key the
	// test secret key its first start printed; dir its data directory,
	// bin the binary (its commands, such as keys, run beside it).
	base, link, key, dir, bin string
	stderr                    *strings.Builder
}

// startServer builds the reference server into tmp and starts it with
// args added; it is interrupted when the test ends.
func startServer(t *testing.T, tmp string, args ...string) *referenceServer {
	t.Helper()
	bin := filepath.Join(tmp, "server")
	goTool := "go" // go test puts the go that runs it first on the PATH
	if root := os.Getenv("GOROOT"); root != "" {
		if p := filepath.Join(root, "bin", "go"); fileExists(p) {
			goTool = p
		}
	}
	build := exec.Command(goTool, "build", "-o", bin, "./examples/server")
	build.Dir = ".."
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/server: %v\n%s", err, b)
	}

	dir := filepath.Join(tmp, "data")
	srv := exec.Command(bin, append([]string{"-data", dir, "-https", "127.0.0.1:0", "-http", "", "-log-level", "warn"}, args...)...)
	stdout, _ := srv.StdoutPipe()
	stderr := new(strings.Builder)
	srv.Stderr = stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { srv.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			srv.Process.Kill()
		}
	})
	var base, link, key string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && (base == "" || link == "") {
		line := sc.Text()
		if m := regexp.MustCompile(`^\s+(sk_test_\w+)$`).FindStringSubmatch(line); m != nil {
			key = m[1]
		}
		if m := regexp.MustCompile(`listening on (https://\S+)`).FindStringSubmatch(line); m != nil {
			base = m[1]
		}
		if m := regexp.MustCompile(`dashboard: sign in at (\S+)`).FindStringSubmatch(line); m != nil {
			link = m[1]
		}
	}
	go io.Copy(io.Discard, stdout)
	if base == "" || link == "" || key == "" {
		t.Fatalf("the server's first start printed no address, sign-in link or key (got %q %q)\n%s", base, link, stderr.String())
	}

	return &referenceServer{base: base, link: link, key: key, dir: dir, bin: bin, stderr: stderr}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
