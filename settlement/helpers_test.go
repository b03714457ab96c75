package settlement

import (
	"context"
	"fmt"
	"math/big"
	"sync"
	"testing"
	"time"

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
	return s
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

func charge(id string, cents int64) settleflow.Charge {
	return settleflow.Charge{WorkflowID: id, Sequence: seqOf(id), Environment: settleflow.Test, CustomerID: "cus_" + id, Amount: cents, Currency: "usd"}
}

func balance(t *testing.T, b Backend, token, who common.Address) *big.Int {
	t.Helper()
	v, err := TokenBalance(context.Background(), b, token, who)
	if err != nil {
		t.Fatalf("balance of %s: %v", who, err)
	}
	return v
}

// balances reads the operator's and the payee's token balances.
func balances(t *testing.T, s *Simulated) (op, payee *big.Int) {
	t.Helper()
	c := s.Backend.Client()
	return balance(t, c, s.Addresses.Token, s.Addresses.Operator), balance(t, c, s.Addresses.Token, s.Addresses.Payee)
}

func cents(c int64) *big.Int { v, _ := BaseUnits(c, 6); return v }

// checkMoved asserts that exactly sumCents moved from the operator to the payee.
func checkMoved(t *testing.T, s *Simulated, op0, pay0 *big.Int, sumCents int64) {
	t.Helper()
	op1, pay1 := balances(t, s)
	want := cents(sumCents)
	if got := new(big.Int).Sub(pay1, pay0); got.Cmp(want) != 0 {
		t.Errorf("payee received %s base units, want %s", got, want)
	}
	if got := new(big.Int).Sub(op0, op1); got.Cmp(want) != 0 {
		t.Errorf("operator paid %s base units, want %s", got, want)
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
