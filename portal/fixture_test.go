package portal

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"io"
	"log"
	"math/big"
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

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap/zaptest"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/settlement/contracts/bindings"
	"github.com/settleflow/settleflow/storage/bunstore"
	"github.com/settleflow/settleflow/storage/sqlite"
)

// openStore opens the fixture's Store: SQLite, or Postgres under
// TestPostgres.
var openStore = func(t *testing.T) *bunstore.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "portal.db"), sqlite.OpenOptions{Synchronous: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

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

type job struct {
	N int `json:"n"`
}

func (job) Validate() error { return nil }

// fixture is the portal on a real engine, SQLite and the in-process
// simulated chain, served over TLS on loopback.
type fixture struct {
	t      *testing.T
	h      *Handler
	srv    *httptest.Server
	engine *settleflow.Engine
	sim    *settlement.Simulated // nil on another chain
	chain  chainSettler
	clock  *testClock
}

// chainSettler is a settler the portal can use as its Chain.
type chainSettler interface {
	settleflow.Settler
	Chain
}

func newFixture(t *testing.T, tweak func(*Options)) *fixture {
	t.Helper()
	return newFixtureNotice(t, time.Hour, tweak)
}

// newFixtureNotice is newFixture with the contract's withdrawal notice.
func newFixtureNotice(t *testing.T, notice time.Duration, tweak func(*Options)) *fixture {
	t.Helper()
	sim, err := settlement.NewSimulated(context.Background(), settlement.SimulatedOptions{WithdrawalNotice: notice,
		Tuning: settlement.ChainConfig{Confirmations: 2}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	f := newFixtureOn(t, sim, tweak)
	f.sim = sim
	return f
}

// newFixtureOn is the fixture on chain.
func newFixtureOn(t *testing.T, sim chainSettler, tweak func(*Options)) *fixture {
	t.Helper()
	ctx := context.Background()
	store := openStore(t)
	ps := settleflow.NewProducts()
	if err := settleflow.Register(ps, settleflow.Product[job]{
		Name: "report", Price: settleflow.Price{TargetMargin: 2500},
		Estimate: func(job) (int64, error) { return 300, nil },
		Execute: func(context.Context, job) (settleflow.Execution, error) {
			return settleflow.Execution{ActualCost: 250}, nil
		},
	}); err != nil {
		t.Fatal(err)
	}
	// No test faucet: a customer has what it deposits through the portal.
	engine, err := settleflow.New(settleflow.Options{Store: store, Settler: sim, Products: ps, Logger: zaptest.NewLogger(t).Named("engine"), TestFaucet: -1,
		Notifier: settleflow.NotifierFunc(func(context.Context, []settleflow.Event) error { return nil })})
	if err != nil {
		t.Fatal(err)
	}
	if err := engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engine.Stop(context.Background()) })
	clock := &testClock{}
	var base string
	opts := Options{Engine: engine, DB: store.DB(), Chain: sim, BaseURL: func() string { return base }, Clock: clock,
		Logger: zaptest.NewLogger(t).Named("portal")}
	if tweak != nil {
		tweak(&opts)
	}
	h, err := New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	// Chromium's first handshakes with the test certificate fail by
	// design (it is trusted through ignoreHTTPSErrors): not worth a line.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	base = srv.URL
	return &fixture{t: t, h: h, srv: srv, engine: engine, chain: sim, clock: clock}
}

// browser is one cookie jar: a customer's browser.
type browser struct {
	f      *fixture
	client *http.Client
	csrf   string
	origin string
}

func (f *fixture) browser() *browser {
	jar, _ := cookiejar.New(nil)
	c := f.srv.Client()
	c = &http.Client{Transport: c.Transport, Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &browser{f: f, client: c, origin: f.srv.URL}
}

type answer struct {
	status int
	header http.Header
	body   string
}

func (b *browser) do(method, path string, body io.Reader, hdr map[string]string) answer {
	b.f.t.Helper()
	u := path
	if !strings.HasPrefix(u, "https://") {
		u = b.f.srv.URL + path
	}
	req, _ := http.NewRequest(method, u, body)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := b.client.Do(req)
	if err != nil {
		b.f.t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return answer{status: res.StatusCode, header: res.Header, body: string(out)}
}

func (b *browser) get(path string) answer { return b.do("GET", path, nil, nil) }

// signin opens link's page and presses the button.
func (b *browser) signin(link string) answer {
	b.f.t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		b.f.t.Fatal(err)
	}
	page := b.get(link)
	if page.status != 200 || !strings.Contains(page.body, `id="open"`) {
		b.f.t.Fatalf("sign-in page: %d %s", page.status, page.body)
	}
	a := b.do("POST", "/portal/signin", strings.NewReader(url.Values{"token": {u.Query().Get("token")}}.Encode()),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if a.status == http.StatusSeeOther {
		acc := b.get("/portal/")
		m := regexp.MustCompile(`data-csrf="([0-9a-f]+)"`).FindStringSubmatch(acc.body)
		if m != nil {
			b.csrf = m[1]
		}
	}
	return a
}

// post sends a JSON request as the page's script does.
func (b *browser) post(path string, v any) (answer, map[string]any) {
	b.f.t.Helper()
	body, _ := json.Marshal(v)
	a := b.do("POST", path, bytes.NewReader(body), map[string]string{"Content-Type": "application/json", "Accept": "application/json",
		"X-CSRF-Token": b.csrf, "Origin": b.origin})
	var out map[string]any
	_ = json.Unmarshal([]byte(a.body), &out)
	return a, out
}

func (f *fixture) link(env settleflow.Environment, customerID string) string {
	f.t.Helper()
	ps, err := f.h.CreateSession(context.Background(), SessionParams{Environment: env, CustomerID: customerID})
	if err != nil {
		f.t.Fatal(err)
	}
	return ps.URL
}

// wallet is a customer's key holding test dollars and gas.
type wallet struct {
	key  *ecdsa.PrivateKey
	addr common.Address
}

func (f *fixture) wallet(cents int64) wallet {
	f.t.Helper()
	key, _ := crypto.GenerateKey()
	w := wallet{key: key, addr: crypto.PubkeyToAddress(key.PublicKey)}
	ctx := context.Background()
	faucet := settlement.Transactor{Backend: f.sim.Backend.Client(), Key: f.sim.FaucetKey, Mine: f.sim.Commit}
	if _, err := faucet.SendValue(ctx, &w.addr, big.NewInt(1e18), nil); err != nil {
		f.t.Fatal(err)
	}
	if cents > 0 {
		v, _ := settlement.BaseUnits(cents, 6)
		if _, err := faucet.Send(ctx, &f.sim.Addresses.Token, bindings.NewTestUSD().PackTransfer(w.addr, v)); err != nil {
			f.t.Fatal(err)
		}
	}
	return w
}

// signTyped signs EIP-712 typed data JSON as a wallet's
// eth_signTypedData_v4 does.
func signTyped(t *testing.T, key *ecdsa.PrivateKey, typedData []byte) string {
	t.Helper()
	var td apitypes.TypedData
	if err := json.Unmarshal(typedData, &td); err != nil {
		t.Fatalf("typed data: %v\n%s", err, typedData)
	}
	hash, _, err := apitypes.TypedDataAndHash(td)
	if err != nil {
		t.Fatalf("typed data hash: %v", err)
	}
	sig, err := crypto.Sign(hash, key)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27
	return hexutil.Encode(sig)
}

func rawJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// waitFor polls cond every 50 ms for up to d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// jsonRound copies v into out through JSON.
func jsonRound(v, out any) error { return json.Unmarshal(rawJSON(v), out) }

// metric reads one of the portal's counters (by its field name in
// metrics) with these label values.
func (f *fixture) metric(field string, labels ...string) float64 {
	f.t.Helper()
	names := map[string]string{"relays": "settleflow_portal_relays_total", "gasUsed": "settleflow_portal_relay_gas_used_total",
		"feeWei": "settleflow_portal_relay_fee_wei_total", "refused": "settleflow_portal_refused_total", "sessions": "settleflow_portal_sessions_total",
		"ownerChanges": "settleflow_portal_owner_changes_total"}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(f.h.Collectors()...)
	mfs, err := reg.Gather()
	if err != nil {
		f.t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != names[field] {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			if len(m.GetLabel()) != len(labels) {
				continue
			}
			// Labels come sorted by name: env, then reason.
			for i, l := range m.GetLabel() {
				if l.GetValue() != labels[i] {
					continue next
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}
