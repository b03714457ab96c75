package settlement

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"go.uber.org/zap/zaptest"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/httpapi"
	"github.com/settleflow/settleflow/internal/pgtest"
	"github.com/settleflow/settleflow/ratelimit"
	"github.com/settleflow/settleflow/storage/postgres"
	"github.com/settleflow/settleflow/storage/sqlite"
)

// The funds follower against the simulated chain, on both databases: one
// customer's hostile event never stops it (issue 37, finding 2), it follows
// owners (finding 4) and it recovers from a reorg deeper than the
// confirmation depth (finding 8).

// followerStores opens an empty Store of each kind the machine has.
func followerStores(t *testing.T) map[string]func(t *testing.T) settleflow.Store {
	return map[string]func(t *testing.T) settleflow.Store{
		"sqlite": func(t *testing.T) settleflow.Store {
			s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "settleflow.db"), sqlite.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
		"postgres": func(t *testing.T) settleflow.Store {
			open := pgtest.Connect(t).Schema(t, "sf_follower")
			s, err := postgres.OpenDB(context.Background(), open())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
	}
}

type followerJob struct {
	N int `json:"n"`
}

// followerEngine is an engine on store and the simulated chain s, not
// started: the test follows the chain with SyncFunds.
func followerEngine(t *testing.T, store settleflow.Store, s settleflow.Settler, tweak func(*settleflow.Options)) *settleflow.Engine {
	t.Helper()
	ps := settleflow.NewProducts()
	if err := settleflow.Register(ps, settleflow.Product[followerJob]{
		Name:     "noop",
		Price:    settleflow.Price{TargetMargin: 2000, MinimumCharge: 100},
		Estimate: func(followerJob) (int64, error) { return 50, nil },
		Execute: func(context.Context, followerJob) (settleflow.Execution, error) {
			return settleflow.Execution{ActualCost: 50}, nil
		},
	}); err != nil {
		t.Fatal(err)
	}
	o := settleflow.Options{Store: store, Settler: s, Products: ps, Logger: zaptest.NewLogger(t), TestFaucet: -1,
		Notifier: settleflow.NotifierFunc(func(context.Context, []settleflow.Event) error { return nil })}
	if tweak != nil {
		tweak(&o)
	}
	e, err := settleflow.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func createNoop(ctx context.Context, e *settleflow.Engine, customerID string) (*settleflow.Workflow, error) {
	wf, _, err := e.Create(ctx, settleflow.CreateParams{Environment: settleflow.Test, Product: "noop", CustomerID: customerID, Payload: []byte(`{"n":1}`)})
	return wf, err
}

// walletFor gives a fresh account ETH for gas and cents of test tokens, and
// approves the contract for them.
func walletFor(t *testing.T, s *Simulated, amount int64) (*ecdsa.PrivateKey, Transactor) {
	t.Helper()
	ctx := context.Background()
	key, _ := crypto.GenerateKey()
	who := crypto.PubkeyToAddress(key.PublicKey)
	faucet := Transactor{Backend: s.Backend.Client(), Key: s.FaucetKey, Mine: s.Commit}
	if _, err := faucet.SendValue(ctx, &who, big.NewInt(1e18), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := faucet.Send(ctx, &s.Addresses.Token, erc20ABI.PackTransfer(who, cents(amount))); err != nil {
		t.Fatal(err)
	}
	tr := Transactor{Backend: s.Backend.Client(), Key: key, Mine: s.Commit}
	if _, err := tr.Send(ctx, &s.Addresses.Token, erc20ABI.PackApprove(s.Addresses.Contract, cents(amount))); err != nil {
		t.Fatal(err)
	}
	return key, tr
}

// syncAll mines past the confirmation depth and follows the chain.
func syncAll(t *testing.T, s *Simulated, e *settleflow.Engine) {
	t.Helper()
	for range 3 {
		s.Commit()
	}
	if err := e.SyncFunds(context.Background(), settleflow.Test); err != nil {
		t.Fatalf("SyncFunds: %v", err)
	}
}

// mintTo gives who amount cents of test tokens (the operator deployed the
// token: it mints) and ETH for gas, and approves the contract for them.
func mintTo(t *testing.T, s *Simulated, key *ecdsa.PrivateKey, amount *big.Int) Transactor {
	t.Helper()
	ctx := context.Background()
	who := crypto.PubkeyToAddress(key.PublicKey)
	op := Transactor{Backend: s.Backend.Client(), Key: s.OperatorKey, Mine: s.Commit}
	if _, err := op.Send(ctx, &s.Addresses.Token, erc20ABI.PackMint(who, amount)); err != nil {
		t.Fatal(err)
	}
	faucet := Transactor{Backend: s.Backend.Client(), Key: s.FaucetKey, Mine: s.Commit}
	if _, err := faucet.SendValue(ctx, &who, big.NewInt(1e18), nil); err != nil {
		t.Fatal(err)
	}
	tr := Transactor{Backend: s.Backend.Client(), Key: key, Mine: s.Commit}
	if _, err := tr.Send(ctx, &s.Addresses.Token, erc20ABI.PackApprove(s.Addresses.Contract, amount)); err != nil {
		t.Fatal(err)
	}
	return tr
}

// Balance changes whose amounts do not fit an int64 of cents (a deposit of
// 2^63 cents of test tokens, which only a token's minter can make, and a
// withdrawal request the contract clamps to that balance; version 2
// accepted any requested amount) are quarantined: the follower goes on,
// later deposits of other customers are applied, the hostile customer's
// creates are refused (funds_unavailable, its balance unknown), readiness
// counts them (issue 37, finding 2).
func TestFollowerQuarantinesAHostileEvent(t *testing.T) {
	for name, open := range followerStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := newSim(t, SimulatedOptions{ManualCommit: true})
			e := followerEngine(t, open(t), s, nil)
			syncAll(t, s, e)

			// The attacker deposits 2^63 cents for a customer, becomes its
			// owner, and asks to withdraw twice that.
			key, _ := crypto.GenerateKey()
			huge := new(big.Int).Lsh(cents(1), 63)
			attacker := mintTo(t, s, key, huge)
			hostile := refOf(s, "cus_hostile")
			if _, err := attacker.Send(ctx, &s.Addresses.Contract, settlementABI.PackDeposit(hostile, common.Address{}, huge)); err != nil {
				t.Fatal(err)
			}
			if _, err := s.SetOwner(ctx, settleflow.Test, "cus_hostile", newGrant(t, s, key, "cus_hostile")); err != nil {
				t.Fatal(err)
			}
			waitMined(t, s)
			if _, err := attacker.Send(ctx, &s.Addresses.Contract, settlementABI.PackRequestWithdrawal(hostile, new(big.Int).Lsh(huge, 1))); err != nil {
				t.Fatal(err)
			}
			// Later: other customers deposit.
			deposit(t, s, "cus_t0", 500)
			deposit(t, s, "cus_later", 700)
			syncAll(t, s, e)

			if c, err := e.Customer(ctx, settleflow.Test, "cus_later"); err != nil || c.Balance.OnChain != 700 {
				t.Fatalf("a deposit after the hostile events was not applied: %+v %v", c, err)
			}
			if c, err := e.Customer(ctx, settleflow.Test, "cus_t0"); err != nil || c.Balance.OnChain != 100_000_000+500 {
				t.Fatalf("cus_t0 after the hostile events: %+v %v", c, err)
			}
			c, err := e.Customer(ctx, settleflow.Test, "cus_hostile")
			if err != nil || c.Owner == nil || *c.Owner != crypto.PubkeyToAddress(key.PublicKey).Hex() {
				t.Fatalf("the hostile customer: %+v %v; want its owner followed", c, err)
			}
			h, err := e.FundsHealth(ctx)
			if err != nil || len(h) != 1 || h[0].Quarantined != 2 {
				t.Fatalf("funds health %+v %v; want the deposit and the request quarantined", h, err)
			}
			_, err = createNoop(ctx, e, "cus_hostile")
			var fu *settleflow.FundsUnavailableError
			if !errors.As(err, &fu) || fu.CustomerID != "cus_hostile" || fu.Quarantined != 2 {
				t.Fatalf("create for the hostile customer: %v; want funds unavailable (quarantined)", err)
			}
			if _, err := createNoop(ctx, e, "cus_later"); err != nil {
				t.Fatalf("create for another customer: %v", err)
			}
			// The follower goes on: once more, nothing quarantined twice.
			deposit(t, s, "cus_later", 300)
			syncAll(t, s, e)
			if c, err := e.Customer(ctx, settleflow.Test, "cus_later"); err != nil || c.Balance.OnChain != 1000 {
				t.Fatalf("the follower stopped after the quarantine: %+v %v", c, err)
			}
			if h, _ := e.FundsHealth(ctx); h[0].Quarantined != 2 {
				t.Fatalf("quarantined twice: %+v", h)
			}
		})
	}
}

// testKey authenticates every request as a test key.
type testKey struct{}

func (testKey) Authenticate(context.Context, string) (httpapi.Principal, error) {
	return httpapi.Principal{KeyID: "key_test", Environment: settleflow.Test, RateLimitKey: "key_test",
		Windows: []ratelimit.Window{ratelimit.Minute(100_000)}}, nil
}

// serveAPI serves e's API over HTTP on loopback.
func serveAPI(t *testing.T, e *settleflow.Engine) *httptest.Server {
	t.Helper()
	h, err := httpapi.New(httpapi.Options{Engine: e, Keys: testKey{}, Limiter: ratelimit.NewMemory(), Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func call(t *testing.T, srv *httptest.Server, method, path, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer sk_test_x")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// The owner the operator sets with the owner's grant (the contract emits
// OwnerSet; version 2 emitted it at the first deposit) is followed into the
// database and shown by GET /v1/customers/{id}; a customer with no owner
// shows null (issue 37, finding 4).
func TestFollowerOwnerOnTheCustomer(t *testing.T) {
	for name, open := range followerStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := newSim(t, SimulatedOptions{ManualCommit: true})
			e := followerEngine(t, open(t), s, nil)
			srv := serveAPI(t, e)
			ownerKey, _ := crypto.GenerateKey()
			owner := crypto.PubkeyToAddress(ownerKey.PublicKey)
			if _, err := s.SetOwner(ctx, settleflow.Test, "cus_owned", newGrant(t, s, ownerKey, "cus_owned")); err != nil {
				t.Fatal(err)
			}
			waitMined(t, s)
			deposit(t, s, "cus_owned", 1000)
			syncAll(t, s, e)
			if _, err := e.Customer(ctx, settleflow.Test, "cus_owned"); err != nil {
				t.Fatalf("customer: %v", err)
			}
			for _, c := range []struct {
				id    string
				owner any
			}{{"cus_owned", owner.Hex()}, {"cus_nobody", nil}} {
				resp, body := call(t, srv, http.MethodGet, "/v1/customers/"+c.id, "")
				var got map[string]any
				if err := json.Unmarshal(body, &got); err != nil || resp.StatusCode != http.StatusOK {
					t.Fatalf("GET %s: %d %s", c.id, resp.StatusCode, body)
				}
				if o, ok := got["owner"]; !ok || o != c.owner {
					t.Fatalf("GET %s: owner %v (present %v), want %v: %s", c.id, o, ok, c.owner, body)
				}
			}
		})
	}
}

// A reorg deeper than the confirmation depth: the follower rewinds by
// itself to a block both chains share, reverts the deposit the new chain
// dropped, counts the re-included one once and applies the new chain's
// own; every balance then matches the contract's (issue 37, finding 8).
func TestFollowerRecoversFromADeepReorg(t *testing.T) {
	for name, open := range followerStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := newSim(t, SimulatedOptions{ManualCommit: true})
			e := followerEngine(t, open(t), s, nil)
			_, gone := walletFor(t, s, 1000)
			_, kept := walletFor(t, s, 1000)
			_, fresh := walletFor(t, s, 1000)
			syncAll(t, s, e)
			parent, err := s.Backend.Client().HeaderByNumber(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			// The old branch: two deposits, then blocks past the depth.
			goneTx, err := gone.Send(ctx, &s.Addresses.Contract, settlementABI.PackDeposit(refOf(s, "cus_gone"), common.Address{}, cents(1000)))
			if err != nil {
				t.Fatal(err)
			}
			keptTx, err := kept.Send(ctx, &s.Addresses.Contract, settlementABI.PackDeposit(refOf(s, "cus_kept"), common.Address{}, cents(500)))
			if err != nil {
				t.Fatal(err)
			}
			for range 4 {
				s.Commit()
			}
			syncAll(t, s, e)
			for id, want := range map[string]int64{"cus_gone": 1000, "cus_kept": 500} {
				if c, _ := e.Customer(ctx, settleflow.Test, id); c.Balance.OnChain != want {
					t.Fatalf("%s before the reorg: %+v", id, c.Balance)
				}
			}
			keep, _, err := s.Backend.Client().TransactionByHash(ctx, keptTx.TxHash)
			if err != nil {
				t.Fatal(err)
			}
			// The reorg: back to the parent; the node forgets both
			// deposits, the kept one is sent again, a new one is made,
			// and the new branch outgrows the old one.
			if err := s.Backend.Fork(parent.Hash()); err != nil {
				t.Fatal(err)
			}
			waitInPool(t, s, goneTx.TxHash)
			s.Backend.Rollback()
			if err := s.Backend.Client().SendTransaction(ctx, keep); err != nil {
				t.Fatal(err)
			}
			if _, err := fresh.Send(ctx, &s.Addresses.Contract, settlementABI.PackDeposit(refOf(s, "cus_new"), common.Address{}, cents(300))); err != nil {
				t.Fatal(err)
			}
			for range 8 {
				s.Commit()
			}
			if r, err := s.Backend.Client().TransactionReceipt(ctx, goneTx.TxHash); err == nil {
				t.Fatalf("the dropped deposit is on the new chain: %+v", r)
			}
			syncAll(t, s, e)
			for _, id := range append([]string{"cus_gone", "cus_kept", "cus_new"}, testCustomers...) {
				c, err := e.Customer(ctx, settleflow.Test, id)
				if err != nil {
					t.Fatal(err)
				}
				onChain := new(big.Int).Quo(customerBalance(t, s, id), cents(1)).Int64()
				if c.Balance.OnChain != onChain {
					t.Errorf("%s: the engine says %d, the contract holds %d", id, c.Balance.OnChain, onChain)
				}
			}
			for id, want := range map[string]int64{"cus_gone": 0, "cus_kept": 500, "cus_new": 300} {
				if c, _ := e.Customer(ctx, settleflow.Test, id); c.Balance.OnChain != want {
					t.Errorf("%s after the reorg: %+v, want %d", id, c.Balance, want)
				}
			}
			// And it goes on following.
			deposit(t, s, "cus_new", 1)
			syncAll(t, s, e)
			if c, _ := e.Customer(ctx, settleflow.Test, "cus_new"); c.Balance.OnChain != 301 {
				t.Errorf("after the recovery: %+v", c.Balance)
			}
		})
	}
}

// stepClock is a clock the test moves.
type stepClock struct{ at atomic.Int64 }

func (c *stepClock) Now() time.Time          { return time.Unix(0, c.at.Load()).UTC() }
func (c *stepClock) Advance(d time.Duration) { c.at.Add(int64(d)) }
func newStepClock(at time.Time) *stepClock   { c := &stepClock{}; c.at.Store(at.UnixNano()); return c }
func (c *stepClock) String() string          { return c.Now().String() }

var _ settleflow.Clock = (*stepClock)(nil)

// downNode is a node that stops answering when down is set.
type downNode struct {
	Backend
	down atomic.Bool
}

var errNodeDown = errors.New("dial tcp 127.0.0.1:8545: connect: connection refused")

func (n *downNode) HeaderByNumber(ctx context.Context, number *big.Int) (*types.Header, error) {
	if n.down.Load() {
		return nil, errNodeDown
	}
	return n.Backend.HeaderByNumber(ctx, number)
}

func (n *downNode) FilterLogs(ctx context.Context, q ethereum.FilterQuery) ([]types.Log, error) {
	if n.down.Load() {
		return nil, errNodeDown
	}
	return n.Backend.FilterLogs(ctx, q)
}

// A follower that has not been current for longer than FundsMaxAge (its
// node stopped answering): a create that needs funds answers 503
// funds_unavailable with Retry-After, nothing is stored, FundsHealth
// reports it stale; a create finding the view stale with the node up
// follows the chain itself and is admitted (issue 37, finding 8).
func TestFollowerStaleRefusesCreates(t *testing.T) {
	for name, open := range followerStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := newSim(t, SimulatedOptions{ManualCommit: true})
			node := &downNode{Backend: s.Backend.Client()}
			cc := ChainConfig{Client: node, Contract: s.Addresses.Contract, Token: s.Addresses.Token, Payee: s.Settler.chains[settleflow.Test].payee,
				Key: s.OperatorKey, CustomerRefSecret: s.CustomerRefSecret, Confirmations: 2, Network: "simulated",
				BlocksOnDemand: true} // a chain mined by hand: its head time is no stall
			st, err := New(ctx, Config{Test: &cc, Logger: zaptest.NewLogger(t)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			clock := newStepClock(time.Now())
			e := followerEngine(t, open(t), st, func(o *settleflow.Options) {
				o.Clock, o.FundsMaxAge = clock, time.Minute
			})
			srv := serveAPI(t, e)
			body := `{"product": "noop", "customerId": "cus_t0", "payload": {"n": 1}}`
			for range 3 {
				s.Commit()
			}
			// Never followed: the create follows the chain itself.
			if resp, b := call(t, srv, http.MethodPost, "/v1/workflows", body); resp.StatusCode != http.StatusCreated {
				t.Fatalf("create before the first follow: %d %s", resp.StatusCode, b)
			}
			// The node stops answering; time passes.
			node.down.Store(true)
			clock.Advance(2 * time.Minute)
			resp, b := call(t, srv, http.MethodPost, "/v1/workflows", body)
			var env struct {
				Error struct {
					Type, Code string
				} `json:"error"`
			}
			if err := json.Unmarshal(b, &env); err != nil || resp.StatusCode != http.StatusServiceUnavailable ||
				env.Error.Code != "funds_unavailable" || env.Error.Type != "api_error" || resp.Header.Get("Retry-After") == "" {
				t.Fatalf("create with a stale view: %d %s (Retry-After %q)", resp.StatusCode, b, resp.Header.Get("Retry-After"))
			}
			page, err := e.List(ctx, settleflow.ListParams{Environment: settleflow.Test, Limit: 100})
			if err != nil || len(page.Data) != 1 {
				t.Fatalf("stored %+v (%v), want the one workflow admitted while current", page, err)
			}
			h, err := e.FundsHealth(ctx)
			if err != nil || len(h) != 1 || !h[0].Stale || h[0].AgeSeconds < 120 {
				t.Fatalf("funds health %+v %v; want stale", h, err)
			}
			if err := e.SyncFunds(ctx, settleflow.Test); err == nil {
				t.Fatal("SyncFunds with the node down: no error")
			}
			// The node is back: the next create (a moment later) follows
			// the chain and is admitted.
			node.down.Store(false)
			clock.Advance(time.Second)
			if resp, b := call(t, srv, http.MethodPost, "/v1/workflows", body); resp.StatusCode != http.StatusCreated {
				t.Fatalf("create once the node is back: %d %s", resp.StatusCode, b)
			}
			if h, _ := e.FundsHealth(ctx); h[0].Stale {
				t.Fatalf("still stale: %+v", h)
			}
		})
	}
}

// A node that keeps answering while its head stands still (stalled, cut
// off from its peers) has nothing newer to report, forever: the view of
// funds is as old as its newest block, so once that is older than
// FundsMaxAge creates that need funds are refused with funds_unavailable
// and FundsHealth reports it stale, although every read succeeds; a new
// block makes it current again (issue 43, finding 6).
func TestFollowerStalledNodeIsStale(t *testing.T) {
	for name, open := range followerStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := newSim(t, SimulatedOptions{ManualCommit: true})
			cc := ChainConfig{Client: s.Backend.Client(), Contract: s.Addresses.Contract, Token: s.Addresses.Token, Payee: s.Settler.chains[settleflow.Test].payee,
				Key: s.OperatorKey, CustomerRefSecret: s.CustomerRefSecret, Confirmations: 2, Network: "simulated"}
			st, err := New(ctx, Config{Test: &cc, Logger: zaptest.NewLogger(t)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			for range 3 {
				s.Commit()
			}
			head, err := s.Backend.Client().HeaderByNumber(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			clock := newStepClock(time.Unix(int64(head.Time), 0))
			e := followerEngine(t, open(t), st, func(o *settleflow.Options) {
				o.Clock, o.FundsMaxAge = clock, time.Minute
			})
			srv := serveAPI(t, e)
			body := `{"product": "noop", "customerId": "cus_t0", "payload": {"n": 1}}`
			if resp, b := call(t, srv, http.MethodPost, "/v1/workflows", body); resp.StatusCode != http.StatusCreated {
				t.Fatalf("create with a current node: %d %s", resp.StatusCode, b)
			}
			// No block for two minutes; the node answers every read.
			clock.Advance(2 * time.Minute)
			if err := e.SyncFunds(ctx, settleflow.Test); err != nil {
				t.Fatalf("SyncFunds with the node answering: %v", err)
			}
			resp, b := call(t, srv, http.MethodPost, "/v1/workflows", body)
			var env struct {
				Error struct {
					Type, Code, Message string
				} `json:"error"`
			}
			if err := json.Unmarshal(b, &env); err != nil || resp.StatusCode != http.StatusServiceUnavailable ||
				env.Error.Code != "funds_unavailable" || resp.Header.Get("Retry-After") == "" {
				t.Fatalf("create while the node's head stands still: %d %s", resp.StatusCode, b)
			}
			page, err := e.List(ctx, settleflow.ListParams{Environment: settleflow.Test, Limit: 100})
			if err != nil || len(page.Data) != 1 {
				t.Fatalf("stored %+v (%v), want the one workflow admitted while current", page, err)
			}
			h, err := e.FundsHealth(ctx)
			if err != nil || len(h) != 1 || !h[0].Stale || h[0].AgeSeconds < 110 {
				t.Fatalf("funds health %+v %v; want stale, two minutes old", h, err)
			}
			// The chain moves again: a block of the engine's time.
			if err := s.Backend.AdjustTime(2 * time.Minute); err != nil {
				t.Fatal(err)
			}
			clock.Advance(time.Second)
			if resp, b := call(t, srv, http.MethodPost, "/v1/workflows", body); resp.StatusCode != http.StatusCreated {
				t.Fatalf("create once the chain moves: %d %s", resp.StatusCode, b)
			}
			if h, _ := e.FundsHealth(ctx); h[0].Stale {
				t.Fatalf("still stale: %+v", h)
			}
		})
	}
}

// A keyed create retried during a funds outage (the node stopped
// answering, the view is stale) answers the workflow its key created, not
// 503: the key is looked up before the refusal stands. The same key with
// another request is still ErrIdempotencyKeyReused, and a new key is
// refused funds_unavailable (issue 43, low finding).
func TestFollowerKeyedRetryDuringOutageReplays(t *testing.T) {
	for name, open := range followerStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := newSim(t, SimulatedOptions{ManualCommit: true})
			node := &downNode{Backend: s.Backend.Client()}
			cc := ChainConfig{Client: node, Contract: s.Addresses.Contract, Token: s.Addresses.Token, Payee: s.Settler.chains[settleflow.Test].payee,
				Key: s.OperatorKey, CustomerRefSecret: s.CustomerRefSecret, Confirmations: 2, Network: "simulated", BlocksOnDemand: true}
			st, err := New(ctx, Config{Test: &cc, Logger: zaptest.NewLogger(t)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			clock := newStepClock(time.Now())
			e := followerEngine(t, open(t), st, func(o *settleflow.Options) {
				o.Clock, o.FundsMaxAge = clock, time.Minute
			})
			for range 3 {
				s.Commit()
			}
			p := settleflow.CreateParams{Environment: settleflow.Test, Product: "noop", CustomerID: "cus_t0", Payload: []byte(`{"n": 1}`), IdempotencyKey: "order-1"}
			first, replayed, err := e.Create(ctx, p)
			if err != nil || replayed {
				t.Fatalf("first keyed create: %v (replayed %v)", err, replayed)
			}
			node.down.Store(true)
			clock.Advance(2 * time.Minute)
			again, replayed, err := e.Create(ctx, p)
			if err != nil || !replayed || again.ID != first.ID {
				t.Fatalf("keyed retry during the outage: %+v replayed %v, %v; want %s replayed", again, replayed, err, first.ID)
			}
			other := p
			other.Payload = []byte(`{"n": 2}`)
			if _, _, err := e.Create(ctx, other); !errors.Is(err, settleflow.ErrIdempotencyKeyReused) {
				t.Fatalf("the key with another request during the outage: %v; want ErrIdempotencyKeyReused", err)
			}
			fresh := p
			fresh.IdempotencyKey = "order-2"
			var fu *settleflow.FundsUnavailableError
			if _, _, err := e.Create(ctx, fresh); !errors.As(err, &fu) {
				t.Fatalf("a new key during the outage: %v; want funds unavailable", err)
			}
		})
	}
}
