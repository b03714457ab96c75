package settlement

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/settleflow/settleflow"
)

// waitHealth polls st's health until ok says so.
func waitHealth(t *testing.T, st *Settler, what string, ok func(ChainHealth) bool) ChainHealth {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if h := st.Health()[0]; ok(h) {
			return h
		}
		if time.Now().After(deadline) {
			t.Fatalf("Health never reported %s: %+v", what, st.Health()[0])
		}
	}
}

// stillPending checks for a second that every charge stays pending.
func stillPending(t *testing.T, st *Settler, chs []settleflow.Charge) {
	t.Helper()
	for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		got, err := st.Status(context.Background(), chs)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range got {
			if x.State != settleflow.SettlementPending {
				t.Fatalf("%s; want every charge pending", describe(got))
			}
		}
	}
}

// Issue 43, low: after the operator's key was rotated (setOperator), every
// queued charge failed as a revert. Settling pauses instead: the charges
// wait, Health is degraded naming the contract's operator (readiness
// answers 503), and they confirm once the signer is the operator again.
func TestOperatorRotationPausesSettling(t *testing.T) {
	s := newSim(t, SimulatedOptions{})
	mine(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st := sideSettler(t, s, s.Backend.Client(), nil)
	owner := Transactor{Backend: s.Backend.Client(), Key: s.OperatorKey, Mine: s.Commit}
	rotated, _ := crypto.GenerateKey()
	rotatedAddr := crypto.PubkeyToAddress(rotated.PublicKey)
	if _, err := owner.Send(ctx, &s.Addresses.Contract, settlementABI.PackSetOperator(rotatedAddr)); err != nil {
		t.Fatal(err)
	}
	var chs []settleflow.Charge
	var sum int64
	for i := range 5 {
		chs = append(chs, charge(fmt.Sprintf("wf_rotated_%d", i), int64(60+i)))
		sum += int64(60 + i)
	}
	held0, owed0 := balances(t, s)
	if err := st.Submit(ctx, chs); err != nil {
		t.Fatal(err)
	}
	h := waitHealth(t, st, "the signer no longer the operator", func(h ChainHealth) bool { return h.NotOperator })
	if !h.Degraded() || h.ContractOperator != rotatedAddr || !strings.Contains(h.Problem(), rotatedAddr.Hex()) ||
		!strings.Contains(h.Problem(), "paused") {
		t.Fatalf("Health: %+v (%s)", h, h.Problem())
	}
	stillPending(t, st, chs)
	// The key rotation is undone: the charges settle, once each.
	if _, err := owner.Send(ctx, &s.Addresses.Contract, settlementABI.PackSetOperator(s.Addresses.Operator)); err != nil {
		t.Fatal(err)
	}
	neverFailed(t, st, chs, time.Minute)
	checkMoved(t, s, held0, owed0, sum)
	waitHealth(t, st, "recovery", func(h ChainHealth) bool { return !h.Degraded() })
}

// sendHook is a Backend whose SendTransaction a test decides: fn says
// whether to forward the transaction and what to answer.
type sendHook struct {
	Backend
	mu sync.Mutex
	fn func(tx *types.Transaction) (forward bool, err error)
}

func (b *sendHook) SendTransaction(ctx context.Context, tx *types.Transaction) error {
	b.mu.Lock()
	fn := b.fn
	b.mu.Unlock()
	if fn == nil {
		return b.Backend.SendTransaction(ctx, tx)
	}
	forward, err := fn(tx)
	if forward {
		if ferr := b.Backend.SendTransaction(ctx, tx); ferr != nil {
			return ferr
		}
	}
	return err
}

func (b *sendHook) set(fn func(tx *types.Transaction) (bool, error)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.fn = fn
}

// Issue 43, low: a fee bump the node refused because the operator cannot
// pay for the higher fees was a plain step error. It is reported as
// GasShort (Health degraded, naming the balance needed); the charges wait
// and confirm once the bump goes through.
func TestFeeBumpShortOfGasReported(t *testing.T) {
	s := newSim(t, SimulatedOptions{})
	mine(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b := &sendHook{Backend: s.Backend.Client()}
	var first common.Hash
	b.set(func(tx *types.Transaction) (bool, error) {
		switch {
		case first == (common.Hash{}):
			// The first version is lost on its way: the node never has it.
			first = tx.Hash()
			return false, nil
		case tx.Hash() == first:
			// Its rebroadcast does not get through either.
			return false, fmt.Errorf("Post \"http://node\": connection reset by peer")
		}
		// The bump: the operator cannot pay its fees.
		return false, &rpcErr{code: -32000, msg: "insufficient funds for gas * price + value: balance 1, tx cost 2, overshot 1"}
	})
	st := sideSettler(t, s, b, nil)
	chs := []settleflow.Charge{charge("wf_bump_short_1", 70), charge("wf_bump_short_2", 71)}
	held0, owed0 := balances(t, s)
	if err := st.Submit(ctx, chs); err != nil {
		t.Fatal(err)
	}
	h := waitHealth(t, st, "a bump short of gas", func(h ChainHealth) bool { return h.GasShort })
	if !h.Degraded() || h.GasNeeded == nil || h.GasNeeded.Sign() <= 0 || !strings.Contains(h.Problem(), "cannot pay for gas") {
		t.Fatalf("Health: %+v (%s)", h, h.Problem())
	}
	stillPending(t, st, chs)
	b.set(nil) // the operator is funded: the next bump goes through
	neverFailed(t, st, chs, time.Minute)
	checkMoved(t, s, held0, owed0, 141)
	waitHealth(t, st, "recovery", func(h ChainHealth) bool { return !h.Degraded() })
}

// staleSettled is a Backend whose node lags once: the next stale calls
// of settled(seq) answer false, as a node behind the charge's block does.
type staleSettled struct {
	Backend
	mu    sync.Mutex
	data  []byte
	stale int
}

func (b *staleSettled) CallContract(ctx context.Context, m ethereum.CallMsg, n *big.Int) ([]byte, error) {
	b.mu.Lock()
	lag := b.stale > 0 && string(m.Data) == string(b.data)
	if lag {
		b.stale--
	}
	b.mu.Unlock()
	if lag {
		return make([]byte, 32), nil // false
	}
	return b.Backend.CallContract(ctx, m, n)
}

// Issue 43, low: a refund was failed for good on one stale settled() read
// from a lagging node. A charge that reads as not settled is read again a
// confirmation depth later before its refund fails: the refund applies.
func TestRefundSurvivesStaleSettledRead(t *testing.T) {
	s := newSim(t, SimulatedOptions{})
	mine(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b := &staleSettled{Backend: s.Backend.Client()}
	st := sideSettler(t, s, b, nil)
	ch := charge("wf_stale_refund", 400)
	if err := st.Submit(ctx, []settleflow.Charge{ch}); err != nil {
		t.Fatal(err)
	}
	neverFailed(t, st, []settleflow.Charge{ch}, time.Minute)
	b.mu.Lock()
	b.data, b.stale = settlementABI.PackSettled(new(big.Int).SetUint64(ch.Sequence)), 1
	b.mu.Unlock()
	before := customerBalance(t, s, ch.CustomerID)
	rs := []settleflow.RefundCharge{{RefundID: "re_stale_read", WorkflowID: ch.WorkflowID, Environment: settleflow.Test, CustomerID: ch.CustomerID,
		Sequence: ch.Sequence, Amount: 150, Currency: "usd"}}
	if err := st.SubmitRefunds(ctx, rs); err != nil {
		t.Fatal(err)
	}
	got := waitForRefunds(t, st, rs, time.Minute, nil)
	if got[0].State != settleflow.SettlementConfirmed {
		t.Fatalf("a refund after one stale settled() read: %s", describe(got))
	}
	b.mu.Lock()
	left := b.stale
	b.mu.Unlock()
	if left != 0 {
		t.Fatal("the stale read was never made: the test proves nothing")
	}
	if d := new(big.Int).Sub(customerBalance(t, s, ch.CustomerID), before); d.Cmp(cents(150)) != 0 {
		t.Fatalf("refunded %s, want %s", d, cents(150))
	}
}

// Issue 43, low: a refund's status read back from the chain (after a
// restart) named its first rejection's reason (the payee owed too little,
// not final) instead of the final one (it would pass the charge).
func TestRefundStatusNamesFinalRejection(t *testing.T) {
	ctx := context.Background()
	s := newSim(t, SimulatedOptions{ManualCommit: true})
	op := Transactor{Backend: s.Backend.Client(), Key: s.OperatorKey, Mine: s.Commit}
	payee := Transactor{Backend: s.Backend.Client(), Key: s.PayeeKey, Mine: s.Commit}
	faucet := Transactor{Backend: s.Backend.Client(), Key: s.FaucetKey, Mine: s.Commit}
	ch := charge("wf_final_rejection", 500)
	ref := refOf(s, ch.CustomerID)
	w := PackedCharge{Cents: 500, Customer: 0, Sequence: ch.Sequence, Tag: WorkflowTag(ch.WorkflowID)}.Pack()
	if _, err := op.Send(ctx, &s.Addresses.Contract, settlementABI.PackSettle([][32]byte{ref}, []*big.Int{w})); err != nil {
		t.Fatal(err)
	}
	if _, err := payee.Send(ctx, &s.Addresses.Contract, settlementABI.PackClaim()); err != nil {
		t.Fatal(err)
	}
	key, _ := RefundKey("re_final_rejection")
	refund := func(cents uint64) []byte {
		return settlementABI.PackRefund(new(big.Int).SetUint64(ch.Sequence>>8), [][32]byte{ref}, []*big.Int{w}, []*big.Int{big.NewInt(1)},
			[][32]byte{key}, []*big.Int{packRefund(cents, 0)})
	}
	// First rejected for the payee's funds (not final), then, the payee
	// funded, for good: more than the charge.
	if _, err := op.Send(ctx, &s.Addresses.Contract, refund(200)); err != nil {
		t.Fatal(err)
	}
	if _, err := faucet.Send(ctx, &s.Addresses.Contract, settlementABI.PackFundPayee(cents(1000))); err != nil {
		t.Fatal(err)
	}
	if _, err := op.Send(ctx, &s.Addresses.Contract, refund(600)); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		s.Commit()
	}
	// The settler never sent it: it reads the refund's end from the chain,
	// as after a restart.
	got, err := s.RefundStatus(ctx, []settleflow.RefundCharge{{RefundID: "re_final_rejection", WorkflowID: ch.WorkflowID, Environment: settleflow.Test,
		CustomerID: ch.CustomerID, Sequence: ch.Sequence, Amount: 600, Currency: "usd"}})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].State != settleflow.SettlementFailed || got[0].Failure == nil || got[0].Failure.Code != settleflow.CodeAmountExceedsRefundable {
		t.Fatalf("a refund rejected for the payee's funds, then for good: %s; want failed, %s", describe(got), settleflow.CodeAmountExceedsRefundable)
	}
}
