package settlement

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/params"
	"github.com/ethereum/go-ethereum/rpc"
	"go.uber.org/zap/zaptest"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/settlement/contracts/bindings"
)

// A Backend that injects the errors a node, a provider or the network
// gives: JSON-RPC errors with a code (as go-ethereum's client returns
// them: with ErrorCode and ErrorData), timeouts, dropped connections,
// HTTP 429 and 5xx.

// rpcErr is a JSON-RPC error as go-ethereum's rpc client returns it.
type rpcErr struct {
	code int
	msg  string
	data any
}

func (e *rpcErr) Error() string   { return e.msg }
func (e *rpcErr) ErrorCode() int  { return e.code }
func (e *rpcErr) ErrorData() any  { return e.data }
func (e *rpcErr) Is(t error) bool { return false }

var (
	_ rpc.Error     = (*rpcErr)(nil)
	_ rpc.DataError = (*rpcErr)(nil)
)

// faultKinds are the transient errors injected, by name.
var faultKinds = map[string]func() error{
	"limit exceeded -32005":   func() error { return &rpcErr{code: -32005, msg: "limit exceeded"} },
	"internal error -32603":   func() error { return &rpcErr{code: -32603, msg: "internal error"} },
	"header not found -32000": func() error { return &rpcErr{code: -32000, msg: "header not found"} },
	"timeout":                 func() error { return fmt.Errorf("Post \"http://node\": %w", context.DeadlineExceeded) },
	"connection reset":        func() error { return fmt.Errorf("Post \"http://node\": read tcp: %w", syscall.ECONNRESET) },
	"http 429": func() error {
		return rpc.HTTPError{StatusCode: 429, Status: "429 Too Many Requests", Body: []byte("rate limited")}
	},
	"http 502": func() error {
		return rpc.HTTPError{StatusCode: 502, Status: "502 Bad Gateway", Body: []byte("bad gateway")}
	},
}

// faulty wraps a Backend; fault, when set, is asked before each call of
// the named methods whether to fail it (and, for SendTransaction, whether
// the node got the transaction anyway).
type faulty struct {
	Backend
	mu    sync.Mutex
	fault func(method string) (err error, forwarded bool)
	calls map[string]int
	fails map[string]int
}

func newFaulty(b Backend) *faulty {
	return &faulty{Backend: b, calls: map[string]int{}, fails: map[string]int{}}
}

func (f *faulty) set(fn func(method string) (error, bool)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fault = fn
}

func (f *faulty) check(method string) (error, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[method]++
	if f.fault == nil {
		return nil, false
	}
	err, fwd := f.fault(method)
	if err != nil {
		f.fails[method]++
	}
	return err, fwd
}

func (f *faulty) failed(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fails[method]
}

func (f *faulty) EstimateGas(ctx context.Context, m ethereum.CallMsg) (uint64, error) {
	if err, _ := f.check("EstimateGas"); err != nil {
		return 0, err
	}
	return f.Backend.EstimateGas(ctx, m)
}

func (f *faulty) SendTransaction(ctx context.Context, tx *types.Transaction) error {
	err, fwd := f.check("SendTransaction")
	if err == nil {
		return f.Backend.SendTransaction(ctx, tx)
	}
	if fwd {
		f.Backend.SendTransaction(ctx, tx) //nolint:errcheck // the answer is lost
	}
	return err
}

func (f *faulty) TransactionReceipt(ctx context.Context, h common.Hash) (*types.Receipt, error) {
	if err, _ := f.check("TransactionReceipt"); err != nil {
		return nil, err
	}
	return f.Backend.TransactionReceipt(ctx, h)
}

func (f *faulty) HeaderByNumber(ctx context.Context, n *big.Int) (*types.Header, error) {
	if err, _ := f.check("HeaderByNumber"); err != nil {
		return nil, err
	}
	return f.Backend.HeaderByNumber(ctx, n)
}

func (f *faulty) CallContract(ctx context.Context, m ethereum.CallMsg, n *big.Int) ([]byte, error) {
	if err, _ := f.check("CallContract"); err != nil {
		return nil, err
	}
	return f.Backend.CallContract(ctx, m, n)
}

func (f *faulty) FilterLogs(ctx context.Context, q ethereum.FilterQuery) ([]types.Log, error) {
	if err, _ := f.check("FilterLogs"); err != nil {
		return nil, err
	}
	return f.Backend.FilterLogs(ctx, q)
}

func (f *faulty) NonceAt(ctx context.Context, a common.Address, n *big.Int) (uint64, error) {
	if err, _ := f.check("NonceAt"); err != nil {
		return 0, err
	}
	return f.Backend.NonceAt(ctx, a, n)
}

func (f *faulty) PendingNonceAt(ctx context.Context, a common.Address) (uint64, error) {
	if err, _ := f.check("PendingNonceAt"); err != nil {
		return 0, err
	}
	return f.Backend.PendingNonceAt(ctx, a)
}

// sideSettler starts a settler on s's test chain through b (another
// process's view of the same chain), signing with key (nil: the
// operator's), and mines a block every 50 ms while the test runs.
func sideSettler(t *testing.T, s *Simulated, b Backend, key *ecdsa.PrivateKey) *Settler {
	t.Helper()
	if key == nil {
		key = s.OperatorKey
	}
	cc := ChainConfig{Client: b, Contract: s.Addresses.Contract, Key: key, CustomerRefSecret: s.CustomerRefSecret, Network: "simulated",
		Confirmations: 2, BatchSize: 10, FlushInterval: 100 * time.Millisecond, PollInterval: 50 * time.Millisecond, BlockTime: 100 * time.Millisecond,
		StuckAfter: 2 * time.Second, RebroadcastAfter: time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := New(ctx, Config{Test: &cc, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// mine seals a block every 50 ms until the test ends.
func mine(t *testing.T, s *Simulated) {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tk := time.NewTicker(50 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
				s.Commit()
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
}

// neverFailed polls Status until every charge is confirmed, failing the
// test at once if any is ever reported Failed.
func neverFailed(t *testing.T, st settleflow.Settler, chs []settleflow.Charge, timeout time.Duration) {
	t.Helper()
	waitFor(t, st, chs, timeout, nil, func(x settleflow.SettlementStatus) bool {
		if x.State == settleflow.SettlementFailed {
			t.Fatalf("charge %s failed: %v", x.WorkflowID, x.Failure)
		}
		return x.State == settleflow.SettlementConfirmed
	})
}

// Finding 6: every transient error kind, at gas estimation, at sending
// (refused, or the node got the transaction and the answer was lost) and
// at reading receipts, leaves every charge Confirmed, charged exactly once.
func TestTransientRPCErrorsConfirmOnce(t *testing.T) {
	s := newSim(t, SimulatedOptions{})
	mine(t, s)
	for name, kind := range faultKinds {
		t.Run(name, func(t *testing.T) {
			fb := newFaulty(s.Backend.Client())
			st := sideSettler(t, s, fb, nil)
			rng := rand.New(rand.NewPCG(uint64(len(name)), 7))
			var rmu sync.Mutex
			seen := map[string]int{}
			fb.set(func(m string) (error, bool) {
				rmu.Lock()
				defer rmu.Unlock()
				switch m {
				case "EstimateGas", "SendTransaction", "TransactionReceipt":
					// The first two calls of each fail (a send once refused,
					// once received by the node with the answer lost), then
					// one in four.
					seen[m]++
					if seen[m] <= 2 {
						return kind(), m == "SendTransaction" && seen[m] == 2
					}
					if rng.IntN(100) < 25 {
						return kind(), m == "SendTransaction" && rng.IntN(2) == 0
					}
				}
				return nil, false
			})
			var chs []settleflow.Charge
			var sum int64
			for i := range 20 {
				chs = append(chs, charge(fmt.Sprintf("wf_tr_%x_%d", crypto.Keccak256([]byte(name))[:4], i), int64(100+i)))
				sum += int64(100 + i)
			}
			held0, owed0 := balances(t, s)
			ctx := context.Background()
			for i := 0; i < len(chs); i += 10 {
				if err := st.Submit(ctx, chs[i:i+10]); err != nil {
					t.Fatal(err)
				}
			}
			neverFailed(t, st, chs, time.Minute)
			fb.set(nil)
			for _, m := range []string{"EstimateGas", "SendTransaction", "TransactionReceipt"} {
				if fb.failed(m) == 0 {
					t.Errorf("no %s call was failed: the test did not test it (calls: %v)", m, fb.calls)
				}
			}
			// Give any duplicate a chance to land, then count the money.
			time.Sleep(500 * time.Millisecond)
			checkMoved(t, s, held0, owed0, sum)
		})
	}
}

// settleDirect sends a settle of charges from the operator's key, outside
// any settler (as a process that died would have), and waits for it.
func settleDirect(t *testing.T, s *Simulated, chs []settleflow.Charge) {
	t.Helper()
	tr := Transactor{Backend: s.Backend.Client(), Key: s.OperatorKey, Mine: s.Commit}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := tr.Send(ctx, &s.Addresses.Contract, settleData(s, chs)); err != nil {
		t.Fatalf("settle: %v", err)
	}
}

func sortRefs(r [][32]byte) {
	for i := range r {
		for j := i + 1; j < len(r); j++ {
			if string(r[j][:]) < string(r[i][:]) {
				r[i], r[j] = r[j], r[i]
			}
		}
	}
}

// Finding 6: a settle the chain refuses (the node says it reverts with a
// contract error) fails only the charges whose sequences the chain
// confirms unrecorded; one recorded before (by a transaction this settler
// never knew) ends Confirmed. (A rotated operator key no longer fails
// anything: TestOperatorRotationPausesSettling.)
func TestRevertingSettleFailsOnlyUnrecorded(t *testing.T) {
	s := newSim(t, SimulatedOptions{})
	mine(t, s)
	fb := newFaulty(s.Backend.Client())
	st := sideSettler(t, s, fb, nil)
	recorded := charge("wf_revert_recorded", 250)
	fresh := charge("wf_revert_fresh", 300)
	settleDirect(t, s, []settleflow.Charge{recorded})

	// The node answers every estimate with the contract's BadCharge revert.
	badCharge := bindings.SettleflowSettlementBadChargeErrorID()
	fb.set(func(m string) (error, bool) {
		if m != "EstimateGas" {
			return nil, false
		}
		return &rpcErr{code: 3, msg: "execution reverted", data: "0x" + common.Bytes2Hex(badCharge[:4])}, false
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	chs := []settleflow.Charge{recorded, fresh}
	if err := st.Submit(ctx, chs); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, st, chs, 30*time.Second, nil, func(x settleflow.SettlementStatus) bool {
		return x.State == settleflow.SettlementConfirmed || x.State == settleflow.SettlementFailed
	})
	if got[0].State != settleflow.SettlementConfirmed {
		t.Errorf("the charge recorded on chain: %s; want Confirmed", describe(got[:1]))
	}
	if got[1].State != settleflow.SettlementFailed || got[1].Failure.Code != CodeSettlementReverted ||
		!strings.Contains(got[1].Failure.Message, "has not recorded sequence") {
		t.Errorf("the charge never recorded: %s; want Failed settlement_reverted, its sequence confirmed unrecorded", describe(got[1:]))
	}
}

// Finding 6, the restart path: a process sent a settle and died before it
// was mined; the next process's settler is told by the node that its own
// settle of the same charges reverts (or the node answers "header not
// found"). It must not report them Failed while a transaction of the
// operator's is in flight: the old one lands, and they end Confirmed,
// charged once.
func TestRestartWithSentSettleNeverFailsCharges(t *testing.T) {
	s := newSim(t, SimulatedOptions{ManualCommit: true})
	var chs []settleflow.Charge
	var sum int64
	for i := range 5 {
		chs = append(chs, charge(fmt.Sprintf("wf_restart_pending_%d", i), int64(500+i)))
		sum += int64(500 + i)
	}
	held0, owed0 := balances(t, s)
	ctx := context.Background()
	first := sideSettler(t, s, s.Backend.Client(), nil)
	if err := first.Submit(ctx, chs); err != nil {
		t.Fatal(err)
	}
	waitFor(t, first, chs, 30*time.Second, nil, func(x settleflow.SettlementStatus) bool { return x.Settlement != nil })
	first.Close() // the process dies; its transaction waits in the node's pool

	fb := newFaulty(s.Backend.Client())
	var n int
	var fmu sync.Mutex
	fb.set(func(m string) (error, bool) {
		if m != "EstimateGas" {
			return nil, false
		}
		fmu.Lock()
		defer fmu.Unlock()
		n++
		if n%2 == 0 {
			return &rpcErr{code: -32000, msg: "header not found"}, false
		}
		return &rpcErr{code: 3, msg: "execution reverted", data: "0x"}, false
	})
	second := sideSettler(t, s, fb, nil)
	// The engine finds no record and submits them again.
	if st, err := second.Status(ctx, chs); err != nil || st[0].State != settleflow.SettlementUnknown {
		t.Fatalf("after the restart: %s %v", describe(st), err)
	}
	if err := second.Submit(ctx, chs); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) || fb.failed("EstimateGas") < 4 {
		st, err := second.Status(ctx, chs)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range st {
			if x.State == settleflow.SettlementFailed {
				t.Fatalf("a charge of a settle still in flight was reported Failed: %s", describe(st))
			}
		}
		if time.Now().After(deadline.Add(30 * time.Second)) {
			t.Fatal("the settler never estimated")
		}
		time.Sleep(50 * time.Millisecond)
	}
	fb.set(nil)
	mine(t, s)
	neverFailed(t, second, chs, time.Minute)
	checkMoved(t, s, held0, owed0, sum)
}

// Finding 6: an operator with no ETH leaves its charges pending (Health
// says why, naming the balance needed), never failed; funding it lets
// them confirm.
func TestOperatorOutOfGasWaits(t *testing.T) {
	s := newSim(t, SimulatedOptions{})
	mine(t, s)
	broke, _ := crypto.GenerateKey()
	brokeAddr := crypto.PubkeyToAddress(broke.PublicKey)
	tr := Transactor{Backend: s.Backend.Client(), Key: s.OperatorKey, Mine: s.Commit}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := tr.Send(ctx, &s.Addresses.Contract, settlementABI.PackSetOperator(brokeAddr)); err != nil {
		t.Fatalf("setOperator: %v", err)
	}
	st := sideSettler(t, s, s.Backend.Client(), broke)
	var chs []settleflow.Charge
	var sum int64
	for i := range 8 {
		chs = append(chs, charge(fmt.Sprintf("wf_nogas_%d", i), int64(40+i)))
		sum += int64(40 + i)
	}
	held0, owed0 := balances(t, s)
	if err := st.Submit(ctx, chs); err != nil {
		t.Fatal(err)
	}
	var h ChainHealth
	deadline := time.Now().Add(30 * time.Second)
	for {
		h = st.Health()[0]
		if h.GasShort {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Health never reported the operator short of gas: %+v", h)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !h.Degraded() || h.Operator != brokeAddr || h.GasNeeded == nil || h.GasNeeded.Sign() <= 0 || !strings.Contains(h.Problem(), brokeAddr.Hex()) {
		t.Fatalf("Health: %+v (%s)", h, h.Problem())
	}
	// It waits: pending, not failed, for a while.
	end := time.Now().Add(time.Second)
	for time.Now().Before(end) {
		got, err := st.Status(ctx, chs)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range got {
			if x.State != settleflow.SettlementPending {
				t.Fatalf("an operator with no gas money: %s; want every charge pending", describe(got))
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Fund it with what Health says it needs (and a margin).
	payTr := Transactor{Backend: s.Backend.Client(), Key: s.PayeeKey, Mine: s.Commit}
	fund := new(big.Int).Mul(h.GasNeeded, big.NewInt(10))
	fund.Add(fund, big.NewInt(params.Ether/100))
	if _, err := payTr.SendValue(ctx, &brokeAddr, fund, nil); err != nil {
		t.Fatalf("funding the operator: %v", err)
	}
	neverFailed(t, st, chs, time.Minute)
	checkMoved(t, s, held0, owed0, sum)
	if h := st.Health()[0]; h.Degraded() {
		t.Errorf("after funding, Health: %s", h.Problem())
	}
}

// The settler's health: steps failing for longer than a few polls (the
// node unreachable) degrade it, and it recovers when they succeed.
func TestHealthUnreachable(t *testing.T) {
	s := newSim(t, SimulatedOptions{})
	fb := newFaulty(s.Backend.Client())
	st := sideSettler(t, s, fb, nil)
	if h := st.Health()[0]; h.Degraded() {
		t.Fatalf("at start: %s", h.Problem())
	}
	fb.set(func(string) (error, bool) { return fmt.Errorf("dial tcp: %w", syscall.ECONNREFUSED), false })
	deadline := time.Now().Add(20 * time.Second)
	for !st.Health()[0].Unreachable {
		if time.Now().After(deadline) {
			t.Fatal("never reported unreachable")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if p := st.Health()[0].Problem(); !strings.Contains(p, "unreachable") || !strings.Contains(p, "connection refused") {
		t.Errorf("Problem: %q", p)
	}
	fb.set(nil)
	deadline = time.Now().Add(40 * time.Second)
	for st.Health()[0].Degraded() {
		if time.Now().After(deadline) {
			t.Fatal("never recovered")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// classifyRevert: only a revert is permanent.
func TestClassifyRevert(t *testing.T) {
	for name, kind := range faultKinds {
		if f := classifyRevert(kind()); f != nil {
			t.Errorf("%s: classified as a revert: %v", name, f)
		}
	}
	for _, e := range []error{
		errors.New("insufficient funds for gas * price + value"),
		&rpcErr{code: -32000, msg: "insufficient funds for gas * price + value"},
		&rpcErr{code: -32603, msg: "internal error", data: "0x"},
		&rpcErr{code: -32000, msg: "nonce too low"},
	} {
		if f := classifyRevert(e); f != nil {
			t.Errorf("%v: classified as a revert: %v", e, f)
		}
	}
	notOp := append([]byte(nil), notOperatorID[:4]...)
	revertStr := append(append([]byte(nil), errorStringID...), make([]byte, 96)...)
	revertStr[4+31] = 0x20
	revertStr[4+63] = 2
	copy(revertStr[4+64:], "no")
	for _, e := range []error{
		&rpcErr{code: 3, msg: "execution reverted", data: "0x" + common.Bytes2Hex(notOp)},
		&rpcErr{code: 3, msg: "execution reverted: no", data: "0x" + common.Bytes2Hex(revertStr)},
		&rpcErr{code: -32000, msg: "execution reverted"},
		errors.New("execution reverted"),
	} {
		if f := classifyRevert(e); f == nil || f.Code != CodeSettlementReverted {
			t.Errorf("%v: not classified as a revert", e)
		}
	}
}
