package dashboard

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
)

// fundsSettler is the dashboard tests' settler that charges customer
// balances (settleflow.Funds), after the root package's ledgerSettler: an
// in-memory chain whose blocks hold deposits, charges confirmed as soon as
// they are submitted (except those of slowCustomer, which stay pending),
// and refunds applied once by refund id. Test mode is funded; live is
// configured but not funded, so live charges settle and refunds there are
// refused. A unit-test fake: the settlement package runs the real paths.
type fundsSettler struct {
	mu      sync.Mutex
	head    uint64
	events  []settleflow.FundsEvent
	charged map[string]int64 // workflow id → amount
	refunds map[string]int64 // refund id → amount
}

// slowCustomer's charges never confirm: its workflows stay Settling.
const slowCustomer = "cus_slow"

func newFundsSettler() *fundsSettler {
	return &fundsSettler{charged: map[string]int64{}, refunds: map[string]int64{}}
}

func (s *fundsSettler) Configured(settleflow.Environment) bool { return true }
func (s *fundsSettler) Funded(env settleflow.Environment) bool { return env == settleflow.Test }

func (s *fundsSettler) CustomerRef(env settleflow.Environment, customerID string) (string, error) {
	h := sha256.Sum256([]byte("secret\x00" + string(env) + "\x00" + customerID))
	return "0x" + hex.EncodeToString(h[:]), nil
}

func (s *fundsSettler) DepositInfo(env settleflow.Environment, customerID string) (settleflow.DepositInfo, error) {
	ref, _ := s.CustomerRef(env, customerID)
	return settleflow.DepositInfo{ChainID: 31337, Network: "dashboard-testnet", Contract: "0x5e771e0000000000000000000000000000000001",
		Token: "0x70ce000000000000000000000000000000000002", CustomerRef: ref}, nil
}

func blockHash(n uint64) string { return fmt.Sprintf("0xb%063x", n) }

func (s *fundsSettler) FundsEvents(_ context.Context, _ settleflow.Environment, after settleflow.FundsCursor) ([]settleflow.FundsEvent, settleflow.FundsCursor, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if after.Block > 0 && after.Hash != blockHash(after.Block) {
		return nil, after, errors.New("cursor not canonical")
	}
	var out []settleflow.FundsEvent
	for _, ev := range s.events {
		if ev.BlockNumber > after.Block {
			out = append(out, ev)
		}
	}
	return out, settleflow.FundsCursor{Block: s.head, Hash: blockHash(s.head)}, nil
}

func (s *fundsSettler) Faucet(_ context.Context, env settleflow.Environment, customerID string, amount int64) (string, error) {
	if env != settleflow.Test {
		return "", errors.New("no faucet in live mode")
	}
	ref, _ := s.CustomerRef(env, customerID)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.head++
	tx := fmt.Sprintf("0x%064x", s.head)
	s.events = append(s.events, settleflow.FundsEvent{Kind: settleflow.FundsDeposit, Ref: ref, Amount: amount, Owner: "0xfaucet",
		TxHash: tx, BlockNumber: s.head})
	return tx, nil
}

func (s *fundsSettler) Submit(_ context.Context, cs []settleflow.Charge) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range cs {
		if c.CustomerID == slowCustomer {
			continue
		}
		if _, ok := s.charged[c.WorkflowID]; !ok {
			s.charged[c.WorkflowID] = c.Amount
		}
	}
	return nil
}

func (s *fundsSettler) Status(_ context.Context, cs []settleflow.Charge) ([]settleflow.SettlementStatus, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]settleflow.SettlementStatus, len(cs))
	for i, c := range cs {
		out[i].WorkflowID = c.WorkflowID
		switch _, ok := s.charged[c.WorkflowID]; {
		case ok:
			out[i].State = settleflow.SettlementConfirmed
			out[i].Settlement = &settleflow.Settlement{ChainID: 31337, Network: "dashboard-testnet",
				TxHash: fmt.Sprintf("0x%064x", c.Sequence), BlockNumber: s.head, Confirmations: 1}
		case c.CustomerID == slowCustomer:
			out[i].State = settleflow.SettlementPending
		}
	}
	return out, nil
}

func (s *fundsSettler) SubmitRefunds(_ context.Context, rs []settleflow.RefundCharge) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range rs {
		if _, done := s.refunds[r.RefundID]; !done {
			s.refunds[r.RefundID] = r.Amount
		}
	}
	return nil
}

func (s *fundsSettler) RefundStatus(_ context.Context, rs []settleflow.RefundCharge) ([]settleflow.SettlementStatus, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]settleflow.SettlementStatus, len(rs))
	for i, r := range rs {
		out[i].WorkflowID = r.WorkflowID
		if _, ok := s.refunds[r.RefundID]; ok {
			out[i].State = settleflow.SettlementConfirmed
			out[i].Settlement = &settleflow.Settlement{ChainID: 31337, Network: "dashboard-testnet", TxHash: "0x" + fmt.Sprintf("%064x", len(s.refunds)), BlockNumber: s.head, Confirmations: 1}
		}
	}
	return out, nil
}

// refunded is how many refunds the chain holds.
func (s *fundsSettler) refunded() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.refunds)
}

// newFundedFixture is a dashboard whose engine charges test customers'
// balances (the faucet funds each new test customer with 1,000.00) and
// runs, so workflows settle and refunds succeed.
func newFundedFixture(t *testing.T) (*fixture, *fundsSettler) {
	t.Helper()
	fs := newFundsSettler()
	f := newFixtureWith(t, func(o *settleflow.Options) {
		o.Settler = fs
		o.PollInterval = 20 * time.Millisecond
		o.SettlementPollInterval = 20 * time.Millisecond
		o.FundsPollInterval = 20 * time.Millisecond
	})
	if err := f.engine.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return f, fs
}

// settled creates a workflow of customer in env and waits until it is
// Settled (or, for slowCustomer, Settling).
func (f *fixture) settled(env settleflow.Environment, customer, ref string) *settleflow.Workflow {
	f.t.Helper()
	ctx := context.Background()
	wf, _, err := f.engine.Create(ctx, settleflow.CreateParams{Environment: env, Product: "item", CustomerID: customer,
		Payload: []byte(`{"ref":"` + ref + `"}`)})
	if err != nil {
		f.t.Fatal(err)
	}
	want := settleflow.Settled
	if customer == slowCustomer {
		want = settleflow.Settling
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, err := f.engine.Fetch(ctx, env, wf.ID)
		if err != nil {
			f.t.Fatal(err)
		}
		if got.Status == want {
			return got
		}
		if got.Status.Terminal() || time.Now().After(deadline) {
			f.t.Fatalf("workflow %s is %s, want %s", wf.ID, got.Status, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
