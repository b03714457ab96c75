package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// runCLI runs a subcommand on the data directory like cli, but returns its
// error instead of failing the test.
func runCLI(dir string, args ...string) (string, error) {
	var out, errOut bytes.Buffer
	err := run(context.Background(), append([]string{"-data", dir}, args...), &out, &errOut)
	return out.String() + errOut.String(), err
}

// The webhook URL policy through the reference server's commands, beside a
// running server: live endpoints on loopback, private, link-local or
// numeric-trick hosts, over plain http or with credentials are refused with
// the reason; a test endpoint on loopback is accepted by default and
// receives deliveries; -webhook-strict-test-urls holds test endpoints to the
// live rules; no listing shows credentials or query values.
func TestWebhookURLPolicyThroughCLI(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	got := make(chan string, 10)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.URL.RawQuery
		w.Write([]byte(`{"received": true}`))
	}))
	defer recv.Close()

	for url, want := range map[string]string{
		"https://127.0.0.1/hooks":                  "webhook URL https://127.0.0.1/hooks resolves to a loopback address (127.0.0.1); live endpoints must resolve to public addresses",
		"https://localhost/hooks":                  "webhook URL https://localhost/hooks names a loopback host; live endpoints must resolve to public addresses",
		"https://[::1]/hooks":                      "resolves to a loopback address (::1)",
		"https://169.254.169.254/latest":           "resolves to a link-local address (169.254.169.254)",
		"https://10.1.2.3/hooks":                   "resolves to a private address (10.1.2.3)",
		"https://192.168.1.1/hooks":                "resolves to a private address (192.168.1.1)",
		"https://0x7f000001/hooks":                 `numeric host "0x7f000001" that is not a canonical IP address`,
		"https://0/hooks":                          `numeric host "0" that is not a canonical IP address`,
		"http://93.184.215.14/hooks":               "webhook URL http://93.184.215.14/hooks is plain http; live endpoints must use https",
		"https://user:hunter2@93.184.215.14/hooks": "webhook URL https://REDACTED@93.184.215.14/hooks carries credentials",
	} {
		out, err := runCLI(dir, "webhooks", "add", "--env", "live", "--url", url)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("webhooks add --env live --url %s: %v (output %q); want refused with %q", url, err, out, want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("the refusal repeats the password: %v", err)
		}
	}
	if list := cli(t, dir, "webhooks", "list"); strings.Contains(list, "we_") {
		t.Fatalf("refused endpoints were stored:\n%s", list)
	}

	// A test endpoint on loopback over http is accepted by default...
	hook := recv.URL + "/hooks?token=s3cret"
	out := cli(t, dir, "webhooks", "add", "--env", "test", "--url", hook)
	if !strings.Contains(out, recv.URL+"/hooks?token=REDACTED") || strings.Contains(out, "s3cret") {
		t.Fatalf("webhooks add printed %q; want the URL with its query value redacted", out)
	}
	// ...but not with -webhook-strict-test-urls.
	if _, err := runCLI(dir, "-webhook-strict-test-urls", "webhooks", "add", "--env", "test", "--url", recv.URL+"/strict"); err == nil ||
		!strings.Contains(err.Error(), "is plain http; test endpoints must use https (strict test URLs are on)") {
		t.Fatalf("strict test URLs: add of %s/strict = %v, want refused", recv.URL, err)
	}
	if _, err := runCLI(dir, "-webhook-strict-test-urls", "webhooks", "add", "--env", "test", "--url", "https://127.0.0.1/strict"); err == nil ||
		!strings.Contains(err.Error(), "resolves to a loopback address (127.0.0.1); test endpoints must resolve to public addresses") {
		t.Fatalf("strict test URLs: add of https://127.0.0.1/strict = %v, want refused", err)
	}
	if _, err := runCLI(dir, "webhooks", "add", "--env", "test", "--url", "http://admin:hunter2@127.0.0.1:9/x"); err == nil ||
		!strings.Contains(err.Error(), "carries credentials") || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("test endpoint with credentials: %v, want refused without repeating them", err)
	}

	// An endpoint stored with credentials before the policy existed is
	// listed without them.
	db, err := openDB(context.Background(), config{dataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	legacy := strings.Replace(recv.URL, "http://", "http://admin:hunter2@", 1) + "/legacy"
	if _, err := db.Bun().NewRaw(`UPDATE webhook_endpoints SET url = ? WHERE url = ?`, legacy, hook).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	list := cli(t, dir, "webhooks", "list")
	db.Bun().NewRaw(`UPDATE webhook_endpoints SET url = ? WHERE url = ?`, hook, legacy).Exec(context.Background())
	db.Close()
	if strings.Contains(list, "hunter2") || strings.Contains(list, "admin") || !strings.Contains(list, "http://REDACTED@127.0.0.1:") {
		t.Fatalf("webhooks list shows credentials or misses the endpoint:\n%s", list)
	}
	if list := cli(t, dir, "webhooks", "list"); strings.Contains(list, "s3cret") || !strings.Contains(list, "/hooks?token=REDACTED") {
		t.Fatalf("webhooks list shows a query value or misses the endpoint:\n%s", list)
	}

	// The running server delivers to the accepted loopback endpoint, to the
	// full URL: redaction is for display only.
	status, _, wf := s.do("POST", "/v1/workflows", s.firstKey, `{"product":"ticket-triage","customerId":"cus_42","payload":{"ticketId":"T-1","subject":"Refund please","attachments":2}}`)
	if status != 201 {
		t.Fatalf("create workflow: %d %v", status, wf)
	}
	select {
	case q := <-got:
		if q != "token=s3cret" {
			t.Fatalf("the receiver was called with query %q", q)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("no webhook reached the test endpoint on loopback")
	}
}
