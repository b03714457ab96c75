package webhook

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
)

// fakeDNS resolves the names in m and nothing else, as a DNS server that
// knows only them would.
func fakeDNS(m map[string][]string) func(context.Context, string) ([]net.IPAddr, error) {
	return func(_ context.Context, host string) ([]net.IPAddr, error) {
		addrs, ok := m[host]
		if !ok {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		out := make([]net.IPAddr, len(addrs))
		for i, a := range addrs {
			out[i] = net.IPAddr{IP: net.ParseIP(a)}
		}
		return out, nil
	}
}

// policyDNS is what the policy tests resolve names with.
var policyDNS = fakeDNS(map[string][]string{
	"public.example":  {"93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"},
	"private.example": {"10.0.0.7"},
	"mixed.example":   {"93.184.215.14", "127.0.0.1"},
	"mapped.example":  {"::ffff:127.0.0.1"},
	"meta.example":    {"169.254.169.254"},
})

// Registration applies the URL policy: live endpoints need https and public
// addresses; test endpoints may be http and local, unless StrictTestURLs;
// credentials and non-canonical numeric hosts are refused everywhere. Each
// refusal says why, and never repeats the credentials.
func TestURLPolicyAtRegistration(t *testing.T) {
	const (
		live   = "live"
		test   = "test"
		strict = "strict" // test with StrictTestURLs
	)
	const notCanonical = "is not a canonical IP address"
	for _, c := range []struct {
		env, url string
		want     string // "" accepted, else a part of the refusal
	}{
		// Live: https and public addresses only.
		{live, "https://public.example/hooks?token=abc", ""},
		{live, "https://93.184.215.14:8443/hooks", ""},
		{live, "https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/hooks", ""},
		{live, "https://127.0.0.1/hooks", "webhook URL https://127.0.0.1/hooks resolves to a loopback address (127.0.0.1); live endpoints must resolve to public addresses"},
		{live, "https://localhost/hooks", "webhook URL https://localhost/hooks names a loopback host; live endpoints must resolve to public addresses"},
		{live, "https://api.LOCALHOST./hooks", "names a loopback host"},
		{live, "https://[::1]/hooks", "resolves to a loopback address (::1)"},
		{live, "https://169.254.169.254/latest/meta-data/", "resolves to a link-local address (169.254.169.254)"},
		{live, "https://10.1.2.3/hooks", "resolves to a private address (10.1.2.3); live endpoints must resolve to public addresses"},
		{live, "https://172.16.0.1/hooks", "private address (172.16.0.1)"},
		{live, "https://192.168.1.1/hooks", "private address (192.168.1.1)"},
		{live, "https://100.64.0.1/hooks", "shared (carrier-grade NAT) address (100.64.0.1)"},
		{live, "https://0.0.0.0/hooks", "unspecified address (0.0.0.0)"},
		{live, "https://[::]/hooks", "unspecified address (::)"},
		{live, "https://[::ffff:127.0.0.1]/hooks", "loopback address (127.0.0.1)"},
		{live, "https://[::ffff:10.0.0.1]/hooks", "private address (10.0.0.1)"},
		{live, "https://[64:ff9b::a00:1]/hooks", "private address (64:ff9b::a00:1)"},
		{live, "https://[fd00::1]/hooks", "private address (fd00::1)"},
		{live, "https://[fe80::1%25eth0]/hooks", "link-local address (fe80::1)"},
		{live, "https://224.0.0.1/hooks", "multicast address (224.0.0.1)"},
		{live, "https://192.0.2.1/hooks", "documentation address (192.0.2.1)"},
		{live, "https://0x7f000001/hooks", "numeric host \"0x7f000001\" that " + notCanonical},
		{live, "https://0/hooks", "numeric host \"0\" that " + notCanonical},
		{live, "https://017700000001/hooks", notCanonical},
		{live, "https://2130706433/hooks", notCanonical},
		{live, "https://127.1/hooks", notCanonical},
		{live, "https://127.000.000.001/hooks", notCanonical},
		{live, "https://127.0.0.1./hooks", notCanonical},
		{live, "https://foo.0x7f/hooks", notCanonical},
		{live, "http://public.example/hooks", "webhook URL http://public.example/hooks is plain http; live endpoints must use https"},
		{live, "https://user:pass@public.example/hooks", "webhook URL https://REDACTED@public.example/hooks carries credentials"},
		{live, "https://private.example/hooks", "webhook URL https://private.example/hooks resolves to a private address (10.0.0.7); live endpoints must resolve to public addresses"},
		{live, "https://mixed.example/hooks", "loopback address (127.0.0.1)"},
		{live, "https://mapped.example/hooks", "loopback address (127.0.0.1)"},
		{live, "https://meta.example/hooks", "link-local address (169.254.169.254)"},
		{live, "https://nowhere.example/hooks?token=s3cret", "webhook URL https://nowhere.example/hooks?token=REDACTED: host nowhere.example does not resolve (no such host)"},
		{live, "ftp://public.example/", "url must be an absolute http or https URL"},

		// Test, by default: http and local receivers work.
		{test, "http://127.0.0.1:8080/hooks", ""},
		{test, "http://localhost:3000/hooks", ""},
		{test, "http://[::1]:3000/hooks", ""},
		{test, "http://10.1.2.3/hooks", ""},
		{test, "http://192.168.1.1/hooks", ""},
		{test, "http://private.example/hooks", ""},
		{test, "http://not-up-yet.internal/hooks", ""}, // not resolved at registration
		{test, "https://public.example/hooks", ""},
		{test, "http://169.254.169.254/latest/meta-data/", "resolves to a link-local address (169.254.169.254); test endpoints must not resolve to link-local, unspecified or multicast addresses"},
		{test, "http://0.0.0.0:8080/", "unspecified address (0.0.0.0)"},
		{test, "http://0x7f000001/hooks", notCanonical},
		{test, "http://0/hooks", notCanonical},
		{test, "http://user:pass@127.0.0.1:8080/hooks", "carries credentials"},
		{test, "http://user@127.0.0.1:8080/hooks", "carries credentials"},

		// Test with StrictTestURLs: the live rules.
		{strict, "https://public.example/hooks", ""},
		{strict, "http://127.0.0.1:8080/hooks", "is plain http; test endpoints must use https (strict test URLs are on)"},
		{strict, "https://127.0.0.1/hooks", "loopback address (127.0.0.1); test endpoints must resolve to public addresses (strict test URLs are on)"},
		{strict, "https://localhost/hooks", "names a loopback host"},
		{strict, "https://private.example/hooks", "private address (10.0.0.7)"},
	} {
		cfg := fastConfig(t)
		cfg.LookupIPAddr = policyDNS
		env := settleflow.Environment(c.env)
		if c.env == strict {
			cfg.StrictTestURLs = true
			env = settleflow.Test
		}
		s, err := New(context.Background(), openDB(t), cfg)
		if err != nil {
			t.Fatal(err)
		}
		ep, _, err := s.CreateEndpoint(context.Background(), EndpointParams{Environment: env, URL: c.url})
		if c.want == "" {
			if err != nil {
				t.Errorf("%s %s refused: %v", c.env, c.url, err)
			} else if ep.URL != c.url {
				t.Errorf("%s %s stored as %s", c.env, c.url, ep.URL)
			}
			continue
		}
		var inv *settleflow.InvalidError
		switch {
		case !errors.As(err, &inv):
			t.Errorf("%s %s = %v, want an InvalidError containing %q", c.env, c.url, err, c.want)
		case inv.Param != "url" || !strings.Contains(inv.Message, c.want):
			t.Errorf("%s %s refused with %q (param %q), want it to contain %q", c.env, c.url, inv.Message, inv.Param, c.want)
		case strings.Contains(inv.Message, "user:pass") || strings.Contains(inv.Message, "s3cret"):
			t.Errorf("%s refusal repeats a credential: %q", c.env, inv.Message)
		}
		if eps, _ := s.ListEndpoints(context.Background(), ""); len(eps) != 0 {
			t.Errorf("%s %s: refused, yet %d endpoints stored", c.env, c.url, len(eps))
		}
	}
}

// A host that passed registration with a public address but resolves to
// loopback when the deliverer connects (DNS rebinding) is refused in the
// dialer: the attempt fails with the recorded reason, is retried on the
// schedule, and nothing reaches the receiver.
func TestDialTimeRebindingRefused(t *testing.T) {
	ctx := context.Background()
	// A TLS receiver whose certificate names example.com, so that without
	// the policy the delivery would go through (see the control below).
	rc := newUnstartedReceiver(t, nil)
	rc.StartTLS()
	_, port, _ := net.SplitHostPort(rc.Listener.Addr().String())
	hookURL := "https://example.com:" + port + "/hooks"

	var rebound atomic.Bool
	lookup := func(_ context.Context, host string) ([]net.IPAddr, error) {
		if host != "example.com" {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		if rebound.Load() {
			return []net.IPAddr{{IP: net.ParseIP("127.0.0.1")}}, nil
		}
		return []net.IPAddr{{IP: net.ParseIP("93.184.215.14")}}, nil
	}
	newCfg := func() Config {
		cfg := fastConfig(t)
		cfg.LookupIPAddr = lookup
		// Trust the receiver's certificate; the policy still guards a
		// clone of this transport.
		cfg.Transport = &http.Transport{TLSClientConfig: rc.Client().Transport.(*http.Transport).TLSClientConfig.Clone()}
		return cfg
	}

	s := newService(t, openDB(t), newCfg())
	ep, _ := createEndpoint(t, s, settleflow.Live, hookURL)
	rebound.Store(true)
	if err := s.Notify(ctx, []settleflow.Event{testEvent(true)}); err != nil {
		t.Fatal(err)
	}
	var d *Delivery
	waitFor(t, 10*time.Second, "the delivery to complete", func() bool {
		ds, _ := s.ListDeliveries(ctx, DeliveryQuery{EndpointID: ep.ID})
		if len(ds) == 1 && ds[0].Status != DeliveryPending {
			d = ds[0]
			return true
		}
		return false
	})
	if d.Status != DeliveryFailed || rc.count() != 0 {
		t.Fatalf("delivery %s with %d requests to the receiver on loopback; want it failed, none delivered", d.Status, rc.count())
	}
	const want = "refused by the webhook URL policy: webhook host example.com resolves to a loopback address (127.0.0.1); live endpoints must resolve to public addresses"
	if d.LastError != want || d.LastStatusCode != 0 {
		t.Errorf("delivery last error %q (status %d), want %q", d.LastError, d.LastStatusCode, want)
	}
	attempts, err := s.ListAttempts(ctx, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(attempts) != len(fastConfig(t).Retry.Schedule) {
		t.Errorf("%d attempts, want the whole schedule (%d)", len(attempts), len(fastConfig(t).Retry.Schedule))
	}
	for _, a := range attempts {
		if a.Error != want {
			t.Errorf("attempt %d recorded %q, want %q", a.Number, a.Error, want)
		}
	}
	if n := rc.count(); n != 0 {
		t.Fatalf("the receiver on loopback got %d requests", n)
	}
	if e, _ := s.GetEndpoint(ctx, ep.ID); !e.Enabled() {
		t.Errorf("the endpoint was disabled: %s", e.DisabledReason)
	}

	// Control: the same setup with the test rules for live (loopback
	// allowed) delivers, so the refusal above was the policy's doing.
	cfg := newCfg()
	cfg.liveAsTest = true
	s2 := newService(t, openDB(t), cfg)
	createEndpoint(t, s2, settleflow.Live, hookURL)
	if err := s2.Notify(ctx, []settleflow.Event{testEvent(true)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the control delivery", func() bool { return rc.count() == 1 })
}

// The dialer's Control hook refuses a socket address outside the policy by
// itself, whatever resolved it.
func TestDialControlChecksSocketAddress(t *testing.T) {
	cfg := Config{LookupIPAddr: policyDNS}
	live := newURLPolicy(cfg, settleflow.Live)
	for addr, want := range map[string]string{
		"127.0.0.1:443":          "loopback address (127.0.0.1)",
		"[::ffff:7f00:1]:443":    "loopback address (127.0.0.1)",
		"169.254.169.254:80":     "link-local address (169.254.169.254)",
		"10.0.0.1:443":           "private address (10.0.0.1)",
		"93.184.215.14:443":      "",
		"not-an-address:443":     "not an IP address",
		"[2606:2800:21f::1]:443": "",
	} {
		err := live.control("x.example")(context.Background(), "tcp", addr, nil)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("control(%s) = %v, want %q", addr, err, want)
		}
	}
	test := newURLPolicy(cfg, settleflow.Test)
	if err := test.control("localhost")(context.Background(), "tcp", "127.0.0.1:8080", nil); err != nil {
		t.Errorf("test control refused loopback: %v", err)
	}
	if err := test.control("meta")(context.Background(), "tcp", "169.254.169.254:80", nil); err == nil {
		t.Error("test control allowed the metadata address")
	}
}

// Endpoints stored before the policy (or under a laxer setting) are checked
// again before every attempt: each attempt fails with the reason recorded.
func TestSendTimeRecheckOfStoredURLs(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	rc := newReceiver(t, nil)
	// Stored as an older version, or a server without strict test URLs,
	// would have: plain http on loopback, and a URL with credentials.
	lax, err := New(ctx, db, fastConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := createEndpoint(t, lax, settleflow.Test, rc.URL+"/plain")
	creds, _ := createEndpoint(t, lax, settleflow.Test, rc.URL+"/creds")
	u, _ := url.Parse(rc.URL + "/creds")
	u.User = url.UserPassword("user", "hunter2")
	if _, err := db.Bun().NewUpdate().Model((*endpointRow)(nil)).Set("url = ?", u.String()).Where("id = ?", creds.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}

	cfg := fastConfig(t)
	cfg.StrictTestURLs = true
	s := newService(t, db, cfg)
	if err := s.Notify(ctx, []settleflow.Event{testEvent(false)}); err != nil {
		t.Fatal(err)
	}
	wants := map[string]string{
		plain.ID: "refused by the webhook URL policy: webhook URL " + rc.URL + "/plain is plain http; test endpoints must use https (strict test URLs are on)",
		creds.ID: "refused by the webhook URL policy: webhook URL http://REDACTED@" + u.Host + "/creds carries credentials",
	}
	for id, want := range wants {
		waitFor(t, 10*time.Second, "the delivery to fail", func() bool {
			ds, _ := s.ListDeliveries(ctx, DeliveryQuery{EndpointID: id})
			return len(ds) == 1 && ds[0].Status == DeliveryFailed
		})
		ds, _ := s.ListDeliveries(ctx, DeliveryQuery{EndpointID: id})
		if !strings.HasPrefix(ds[0].LastError, want) || strings.Contains(ds[0].LastError, "hunter2") {
			t.Errorf("last error %q, want it to start with %q", ds[0].LastError, want)
		}
	}
	if n := rc.count(); n != 0 {
		t.Fatalf("the receiver got %d requests", n)
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://hooks.example/x":                      "https://hooks.example/x",
		"https://user:pass@hooks.example/x":            "https://REDACTED@hooks.example/x",
		"https://user@hooks.example/x":                 "https://REDACTED@hooks.example/x",
		"https://hooks.example/x?token=abc&v=2":        "https://hooks.example/x?token=REDACTED&v=REDACTED",
		"https://hooks.example/x?abc123":               "https://hooks.example/x?REDACTED",
		"https://hooks.example/x#frag":                 "https://hooks.example/x",
		"https://u:p@hooks.example:8443/a/b?k=v&flag=": "https://REDACTED@hooks.example:8443/a/b?k=REDACTED&flag=REDACTED",
		"http://[::1]:80/x":                            "http://[::1]:80/x",
		"https://hooks.example/x\x00":                  "(invalid URL)",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}
