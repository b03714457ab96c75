package dashboard

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/apikey"
	"github.com/settleflow/settleflow/storage/sqlite"
	"github.com/settleflow/settleflow/webhook"
)

// testClock is real time plus an offset the test moves.
type testClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}
func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.offset += d
	c.mu.Unlock()
}

// nullSettler takes every charge and never confirms one: these tests look
// at the dashboard, not at settlement (the browser test runs the real
// reference server).
type nullSettler struct{}

func (nullSettler) Configured(settleflow.Environment) bool            { return true }
func (nullSettler) Submit(context.Context, []settleflow.Charge) error { return nil }
func (nullSettler) Status(_ context.Context, cs []settleflow.Charge) ([]settleflow.SettlementStatus, error) {
	out := make([]settleflow.SettlementStatus, len(cs))
	for i, c := range cs {
		out[i] = settleflow.SettlementStatus{WorkflowID: c.WorkflowID, State: settleflow.SettlementPending}
	}
	return out, nil
}

type item struct {
	Ref string `json:"ref"`
}

func (item) Validate() error { return nil }

type fixture struct {
	t      *testing.T
	h      *Handler
	srv    *httptest.Server
	client *http.Client
	keys   *apikey.Manager
	engine *settleflow.Engine
	hooks  *webhook.Service
	clock  *testClock
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureWith(t, nil)
}

// newFixtureWith is newFixture with the engine's options tweaked (another
// settler, faster polls) before it is built.
func newFixtureWith(t *testing.T, tweak func(*settleflow.Options)) *fixture {
	t.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "dash.db"), sqlite.OpenOptions{Synchronous: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	keys, err := apikey.New(store.DB(), apikey.Options{})
	if err == nil {
		err = keys.Migrate(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	// Live endpoints must resolve to public addresses: a simulated DNS.
	hooks, err := webhook.New(ctx, store.DB(), webhook.Config{LookupIPAddr: func(context.Context, string) ([]net.IPAddr, error) {
		return []net.IPAddr{{IP: net.ParseIP("93.184.215.14")}}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	ps := settleflow.NewProducts()
	if err := settleflow.Register(ps, settleflow.Product[item]{
		Name: "item", Price: settleflow.Price{TargetMargin: 2500},
		Estimate: func(item) (int64, error) { return 100, nil },
		Execute: func(context.Context, item) (settleflow.Execution, error) {
			return settleflow.Execution{ActualCost: 80}, nil
		},
	}); err != nil {
		t.Fatal(err)
	}
	eo := settleflow.Options{Store: store, Settler: nullSettler{}, Products: ps,
		Notifier: settleflow.NotifierFunc(func(context.Context, []settleflow.Event) error { return nil })}
	if tweak != nil {
		tweak(&eo)
	}
	engine, err := settleflow.New(eo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engine.Stop(context.Background()) })
	clock := &testClock{}
	h, err := New(ctx, Options{Engine: engine, Keys: keys, Webhooks: hooks, DB: store.DB(), Clock: clock, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(h)
	t.Cleanup(srv.Close)
	jar, _ := cookiejar.New(nil)
	client := srv.Client()
	client.Jar = jar
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &fixture{t: t, h: h, srv: srv, client: client, keys: keys, engine: engine, hooks: hooks, clock: clock}
}

type resp struct {
	status int
	header http.Header
	body   string
}

func (f *fixture) do(method, path string, form url.Values) resp {
	f.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, f.srv.URL+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	r, err := f.client.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return resp{r.StatusCode, r.Header, string(b)}
}

func (f *fixture) link() string {
	f.t.Helper()
	l, err := f.h.SignInLink(context.Background(), f.srv.URL)
	if err != nil {
		f.t.Fatal(err)
	}
	u, _ := url.Parse(l)
	return u.Query().Get("token")
}

// signIn uses a fresh link and returns the CSRF token of the session.
func (f *fixture) signIn() string {
	f.t.Helper()
	r := f.do("POST", "/dashboard/signin", url.Values{"token": {f.link()}})
	if r.status != http.StatusSeeOther {
		f.t.Fatalf("sign in: %d %s", r.status, r.body)
	}
	return f.csrf()
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func (f *fixture) csrf() string {
	f.t.Helper()
	m := csrfRE.FindStringSubmatch(f.do("GET", "/dashboard/keys", nil).body)
	if m == nil {
		f.t.Fatal("no CSRF token on the keys page")
	}
	return m[1]
}

func TestSignInLinkWorksOnce(t *testing.T) {
	f := newFixture(t)
	if r := f.do("GET", "/dashboard/", nil); r.status != http.StatusUnauthorized || !strings.Contains(r.body, "dashboard link") {
		t.Fatalf("signed out: %d; want 401 saying how to sign in", r.status)
	}
	tok := f.link()
	// The link's GET only shows a button: a previewer cannot spend it.
	if r := f.do("GET", "/dashboard/signin?token="+url.QueryEscape(tok), nil); r.status != 200 || !strings.Contains(r.body, `value="`+tok+`"`) {
		t.Fatalf("GET link: %d", r.status)
	}
	r := f.do("POST", "/dashboard/signin", url.Values{"token": {tok}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("POST link: %d %s", r.status, r.body)
	}
	c := r.header.Get("Set-Cookie")
	for _, want := range []string{CookieName + "=", "Path=/dashboard/", "HttpOnly", "Secure", "SameSite=Strict", "Max-Age=43200"} {
		if !strings.Contains(c, want) {
			t.Errorf("session cookie %q lacks %q", c, want)
		}
	}
	if r := f.do("GET", "/dashboard/", nil); r.status != 200 {
		t.Fatalf("overview after sign-in: %d", r.status)
	}
	// Reused: refused, and no second session.
	jar, _ := cookiejar.New(nil)
	f.client.Jar = jar
	if r := f.do("POST", "/dashboard/signin", url.Values{"token": {tok}}); r.status != http.StatusBadRequest || !strings.Contains(r.body, "used already") || r.header.Get("Set-Cookie") != "" {
		t.Fatalf("reused link: %d %q", r.status, r.header.Get("Set-Cookie"))
	}
	// Expired: refused.
	old := f.link()
	f.clock.Advance(LinkTTL + time.Second)
	if r := f.do("POST", "/dashboard/signin", url.Values{"token": {old}}); r.status != http.StatusBadRequest || r.header.Get("Set-Cookie") != "" {
		t.Fatalf("expired link: %d", r.status)
	}
	// A forged token: refused.
	if r := f.do("POST", "/dashboard/signin", url.Values{"token": {"forged"}}); r.status != http.StatusBadRequest {
		t.Fatalf("forged link: %d", r.status)
	}
}

func TestSessionEndsAtSignOutAndExpiry(t *testing.T) {
	f := newFixture(t)
	csrf := f.signIn()
	if r := f.do("POST", "/dashboard/signout", url.Values{"csrf": {csrf}}); r.status != 200 {
		t.Fatalf("sign out: %d", r.status)
	}
	if r := f.do("GET", "/dashboard/keys", nil); r.status != http.StatusUnauthorized {
		t.Fatalf("after sign-out: %d", r.status)
	}
	f.signIn()
	f.clock.Advance(SessionTTL + time.Second)
	if r := f.do("GET", "/dashboard/keys", nil); r.status != http.StatusUnauthorized {
		t.Fatalf("after the session's expiry: %d", r.status)
	}
}

// A state-changing request without the session's CSRF token changes nothing.
func TestCSRFRefused(t *testing.T) {
	f := newFixture(t)
	csrf := f.signIn()
	wrong := "0" + csrf[1:] // one character off
	if csrf[0] == '0' {
		wrong = "1" + csrf[1:]
	}
	for _, form := range []url.Values{{"name": {"ci"}, "plan": {"starter"}}, {"name": {"ci"}, "plan": {"starter"}, "csrf": {wrong}}} {
		if r := f.do("POST", "/dashboard/keys", form); r.status != http.StatusForbidden || !strings.Contains(r.body, "CSRF") {
			t.Fatalf("create without the right CSRF token: %d", r.status)
		}
	}
	if ks, _ := f.keys.List(context.Background()); len(ks) != 0 {
		t.Fatalf("a refused form made %d keys", len(ks))
	}
	if r := f.do("POST", "/dashboard/env", url.Values{"env": {"live"}}); r.status != http.StatusForbidden {
		t.Fatalf("env switch without CSRF: %d", r.status)
	}
	for _, h := range []string{"Content-Security-Policy", "X-Frame-Options", "X-Content-Type-Options"} {
		if v := f.do("GET", "/dashboard/keys", nil).header.Get(h); v == "" || strings.Contains(v, "unsafe-inline") {
			t.Errorf("%s: %q", h, v)
		}
	}
}

// A new key's secret is in the answer that created it and nowhere after.
func TestSecretShownOnce(t *testing.T) {
	f := newFixture(t)
	csrf := f.signIn()
	r := f.do("POST", "/dashboard/keys", url.Values{"csrf": {csrf}, "name": {"ci"}, "plan": {"starter"}})
	secret := regexp.MustCompile(`sk_test_[0-9A-Za-z]{40}`).FindString(r.body)
	if r.status != 200 || secret == "" {
		t.Fatalf("create: %d, secret %q", r.status, secret)
	}
	k, err := f.keys.Authenticate(context.Background(), "Bearer "+secret)
	if err != nil {
		t.Fatalf("the shown secret does not authenticate: %v", err)
	}
	if again := f.do("GET", "/dashboard/keys", nil); !strings.Contains(again.body, k.ID) || strings.Contains(again.body, secret) {
		t.Fatal("the keys page after creation shows the secret again (or not the key)")
	}
	// Bad input: a clear error, nothing made.
	r = f.do("POST", "/dashboard/keys", url.Values{"csrf": {csrf}, "name": {""}, "plan": {"starter"}})
	if r.status != http.StatusBadRequest || !strings.Contains(r.body, "name must be") {
		t.Fatalf("empty name: %d", r.status)
	}
	r = f.do("POST", "/dashboard/keys", url.Values{"csrf": {csrf}, "name": {"big"}, "plan": {"enterprise"}, "perMinute": {"ten"}})
	if r.status != http.StatusBadRequest || !strings.Contains(r.body, "whole number") {
		t.Fatalf("non-numeric limit: %d", r.status)
	}
	if ks, _ := f.keys.List(context.Background()); len(ks) != 1 {
		t.Fatalf("%d keys after two bad forms, want 1", len(ks))
	}
	// Rotation: refused twice for one key.
	r = f.do("POST", "/dashboard/keys/"+k.ID+"/rotate", url.Values{"csrf": {csrf}, "expireIn": {"1h"}})
	if r.status != 200 || !regexp.MustCompile(`sk_test_[0-9A-Za-z]{40}`).MatchString(r.body) {
		t.Fatalf("rotate: %d", r.status)
	}
	if r := f.do("POST", "/dashboard/keys/"+k.ID+"/rotate", url.Values{"csrf": {csrf}, "expireIn": {"1h"}}); r.status != http.StatusBadRequest || !strings.Contains(r.body, "already rotated") {
		t.Fatalf("second rotation: %d", r.status)
	}
}

// A test session never shows or changes live data, and the other way round.
func TestEnvironmentBoundary(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	live, _, err := f.keys.Create(ctx, apikey.CreateParams{Environment: settleflow.Live, Name: "live-one"})
	if err != nil {
		t.Fatal(err)
	}
	lw, _, err := f.engine.Create(ctx, settleflow.CreateParams{Environment: settleflow.Live, Product: "item", CustomerID: "cus_live", Payload: []byte(`{"ref":"L"}`)})
	if err != nil {
		t.Fatal(err)
	}
	lep, _, err := f.hooks.CreateEndpoint(ctx, webhook.EndpointParams{Environment: settleflow.Live, URL: "https://example.com/live"})
	if err != nil {
		t.Fatal(err)
	}
	csrf := f.signIn()
	for _, p := range []string{"/dashboard/keys", "/dashboard/workflows", "/dashboard/webhooks", "/dashboard/"} {
		if r := f.do("GET", p, nil); r.status != 200 || strings.Contains(r.body, live.ID) || strings.Contains(r.body, lw.ID) || strings.Contains(r.body, lep.ID) {
			t.Fatalf("test session, %s: %d, shows live data", p, r.status)
		}
	}
	if r := f.do("GET", "/dashboard/workflows/"+lw.ID, nil); r.status != http.StatusNotFound {
		t.Fatalf("a live workflow in a test session: %d", r.status)
	}
	if r := f.do("POST", "/dashboard/keys/"+live.ID+"/revoke", url.Values{"csrf": {csrf}, "confirm": {live.ID}}); r.status != http.StatusNotFound {
		t.Fatalf("revoking a live key from a test session: %d", r.status)
	}
	if k, _ := f.keys.Get(ctx, live.ID); k.RevokedAt != nil {
		t.Fatal("a test session revoked a live key")
	}
	if r := f.do("POST", "/dashboard/webhooks/"+lep.ID+"/disable", url.Values{"csrf": {csrf}}); r.status != http.StatusNotFound {
		t.Fatalf("disabling a live endpoint from a test session: %d", r.status)
	}
	// Switched to live: there it all is.
	if r := f.do("POST", "/dashboard/env", url.Values{"csrf": {csrf}, "env": {"live"}}); r.status != http.StatusSeeOther {
		t.Fatalf("switch: %d", r.status)
	}
	if r := f.do("GET", "/dashboard/keys", nil); !strings.Contains(r.body, live.ID) {
		t.Fatal("live session: the live key is missing")
	}
	if r := f.do("GET", "/dashboard/workflows/"+lw.ID, nil); r.status != 200 || !strings.Contains(r.body, "cus_live") {
		t.Fatalf("live session, live workflow: %d", r.status)
	}
	if r := f.do("POST", "/dashboard/keys/"+live.ID+"/revoke", url.Values{"csrf": {csrf}, "confirm": {"wrong"}}); r.status != http.StatusBadRequest {
		t.Fatalf("revoke without confirmation: %d", r.status)
	}
	if k, _ := f.keys.Get(ctx, live.ID); k.RevokedAt != nil {
		t.Fatal("revoked without confirmation")
	}
}
