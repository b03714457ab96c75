package settlement

import (
	"context"
	"fmt"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"go.uber.org/zap/zaptest"

	"github.com/settleflow/settleflow"
)

func newSim(t *testing.T, opts SimulatedOptions) *Simulated {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = zaptest.NewLogger(t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := NewSimulated(ctx, opts)
	if err != nil {
		t.Fatalf("NewSimulated: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	for _, id := range testCustomers {
		deposit(t, s, id, 100_000_000)
	}
	return s
}

// testCustomers are the customers charge spreads charges over; newSim
// funds each with $1,000,000.00 from the faucet.
var testCustomers = []string{"cus_t0", "cus_t1", "cus_t2", "cus_t3", "cus_t4"}

// deposit funds a test customer from the faucet and waits until the
// deposit is mined.
func deposit(t *testing.T, s *Simulated, customerID string, cents int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tx, err := s.Faucet(ctx, settleflow.Test, customerID, cents)
	if err != nil {
		t.Fatalf("faucet for %s: %v", customerID, err)
	}
	tr := Transactor{Backend: s.Backend.Client(), Mine: s.Commit}
	if _, err := tr.Wait(ctx, common.HexToHash(tx)); err != nil {
		t.Fatalf("faucet deposit for %s: %v", customerID, err)
	}
}

// refOf is a customer's reference on s's test chain.
func refOf(s *Simulated, customerID string) [32]byte {
	return CustomerRef(s.CustomerRefSecret, settleflow.Test, customerID)
}

// customerBalance reads a customer's balance in the contract.
func customerBalance(t *testing.T, s *Simulated, customerID string) *big.Int {
	t.Helper()
	out, err := s.Backend.Client().CallContract(context.Background(), ethereum.CallMsg{To: &s.Addresses.Contract, Data: settlementABI.PackBalanceOf(refOf(s, customerID))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := settlementABI.UnpackBalanceOf(out)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// payeeOwed reads what the contract owes the payee.
func payeeOwed(t *testing.T, s *Simulated) *big.Int {
	t.Helper()
	out, err := s.Backend.Client().CallContract(context.Background(), ethereum.CallMsg{To: &s.Addresses.Contract, Data: settlementABI.PackPayeeOwed()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := settlementABI.UnpackPayeeOwed(out)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

var (
	seqMu sync.Mutex
	seqs  = map[string]uint64{}
)

// seqOf is the test's sequence number for a workflow id: assigned on first
// sight, from 1, and the same ever after (as the engine assigns it).
func seqOf(id string) uint64 {
	seqMu.Lock()
	defer seqMu.Unlock()
	if n, ok := seqs[id]; ok {
		return n
	}
	n := uint64(len(seqs) + 1)
	seqs[id] = n
	return n
}

// charge is a test charge of one of testCustomers.
func charge(id string, cents int64) settleflow.Charge {
	n := seqOf(id)
	return settleflow.Charge{WorkflowID: id, Sequence: n, Environment: settleflow.Test, CustomerID: testCustomers[n%uint64(len(testCustomers))], Amount: cents, Currency: "usd"}
}

func balance(t *testing.T, b Backend, token, who common.Address) *big.Int {
	t.Helper()
	v, err := TokenBalance(context.Background(), b, token, who)
	if err != nil {
		t.Fatalf("balance of %s: %v", who, err)
	}
	return v
}

// balances reads what the contract holds for the test customers and what
// it owes the payee.
func balances(t *testing.T, s *Simulated) (held, owed *big.Int) {
	t.Helper()
	held = new(big.Int)
	for _, id := range testCustomers {
		held.Add(held, customerBalance(t, s, id))
	}
	return held, payeeOwed(t, s)
}

func cents(c int64) *big.Int { v, _ := BaseUnits(c, 6); return v }

// checkMoved asserts that exactly sumCents moved from the test customers'
// balances to what the payee is owed, and that the contract's token
// holdings equal its customers' balances plus what the payee is owed.
func checkMoved(t *testing.T, s *Simulated, held0, owed0 *big.Int, sumCents int64) {
	t.Helper()
	held1, owed1 := balances(t, s)
	want := cents(sumCents)
	if got := new(big.Int).Sub(owed1, owed0); got.Cmp(want) != 0 {
		t.Errorf("the payee earned %s base units, want %s", got, want)
	}
	if got := new(big.Int).Sub(held0, held1); got.Cmp(want) != 0 {
		t.Errorf("the customers paid %s base units, want %s", got, want)
	}
	if tb := balance(t, s.Backend.Client(), s.Addresses.Token, s.Addresses.Contract); tb.Cmp(new(big.Int).Add(held1, owed1)) != 0 {
		t.Errorf("the contract holds %s base units; its test customers' balances and what the payee is owed add up to %s", tb, new(big.Int).Add(held1, owed1))
	}
}

// waitFor polls Status until every charge satisfies ok, calling tick (if
// any) between polls; it fails the test after the timeout.
func waitFor(t *testing.T, s settleflow.Settler, charges []settleflow.Charge, timeout time.Duration, tick func(), ok func(settleflow.SettlementStatus) bool) []settleflow.SettlementStatus {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last []settleflow.SettlementStatus
	for {
		st, err := s.Status(context.Background(), charges)
		if err != nil {
			t.Fatalf("Status: %v", err)
		}
		last = st
		all := true
		for _, x := range st {
			if !ok(x) {
				all = false
				break
			}
		}
		if all {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out; last status: %s", describe(last))
		}
		if tick != nil {
			tick()
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func confirmed(x settleflow.SettlementStatus) bool { return x.State == settleflow.SettlementConfirmed }

func describe(st []settleflow.SettlementStatus) string {
	out := ""
	for i, x := range st {
		if i == 5 {
			return out + fmt.Sprintf(" … (%d in all)", len(st))
		}
		out += fmt.Sprintf("[%s %s", x.WorkflowID, x.State)
		if x.Settlement != nil {
			out += fmt.Sprintf(" tx=%s block=%d conf=%d", x.Settlement.TxHash, x.Settlement.BlockNumber, x.Settlement.Confirmations)
		}
		if x.Failure != nil {
			out += " " + x.Failure.Error()
		}
		out += "] "
	}
	return out
}

// waitForRefunds polls RefundStatus until every refund is confirmed or
// failed, calling tick (if any) between polls.
func waitForRefunds(t *testing.T, s settleflow.Funds, rs []settleflow.RefundCharge, timeout time.Duration, tick func()) []settleflow.SettlementStatus {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		st, err := s.RefundStatus(context.Background(), rs)
		if err != nil {
			t.Fatalf("RefundStatus: %v", err)
		}
		done := true
		for _, x := range st {
			if x.Err != nil || (x.State != settleflow.SettlementConfirmed && x.State != settleflow.SettlementFailed) {
				done = false
			}
		}
		if done {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out; refunds: %s", describe(st))
		}
		if tick != nil {
			tick()
		}
		time.Sleep(20 * time.Millisecond)
	}
}
