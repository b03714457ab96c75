package settlement

import (
	"context"
	"fmt"
	"testing"
	"time"

	"math/big"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/node"

	"github.com/settleflow/settleflow"
)

// Finding 5 (the gas limit's part): a charge estimated as a debit can be
// declined in the block (its customer's withdrawal matured in between),
// or the reverse (a deposit landed), and a declined charge writes the
// declined bitmap and emits ChargeDeclined while a debited one extends
// the word's commitment. TestDeclineHeadroom measures a batch of 100 all
// debited and all declined, under each rule set of the gas report, and
// checks that declineHeadroom per charge covers the difference either
// way. Run with -v to read the figures.
func TestDeclineHeadroom(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const n = 100
	for _, rules := range gasRules {
		s := newSim(t, SimulatedOptions{ManualCommit: true, BackendOptions: []func(*node.Config, *ethconfig.Config){rules.opt}})
		op := crypto.PubkeyToAddress(s.OperatorKey.PublicKey)
		var debitData []byte
		estimate := func(customers []string) uint64 {
			t.Helper()
			var chs []settleflow.Charge
			for i := range n {
				id := fmt.Sprintf("wf_headroom_%s_%d", rules.name, i)
				// A fresh word: sequences 256·k+1… not used by other tests.
				seq := uint64(1_000_000)<<8 | uint64(i+1)
				chs = append(chs, settleflow.Charge{WorkflowID: id, Sequence: seq, Environment: settleflow.Test,
					CustomerID: customers[i%len(customers)], Amount: 100, Currency: "usd"})
			}
			data := settleData(s, chs)
			if debitData == nil {
				debitData = data
			}
			gas, err := s.Backend.Client().EstimateGas(ctx, ethereum.CallMsg{From: op, To: &s.Addresses.Contract, Data: data})
			if err != nil {
				t.Fatalf("%s: estimate: %v", rules.name, err)
			}
			return gas
		}
		debited := estimate(testCustomers) // funded: every charge debited
		var empty []string
		for i := range len(testCustomers) {
			empty = append(empty, fmt.Sprintf("cus_headroom_empty_%d", i))
		}
		declined := estimate(empty) // no balance: every charge declined
		diff := int64(declined) - int64(debited)
		perCharge := max(diff, -diff) / n
		t.Logf("%s: a batch of %d charges over %d customers: all debited %d gas (%d per charge), all declined %d gas (%d per charge); difference %d per charge; headroom %d per charge",
			rules.name, n, len(testCustomers), debited, debited/n, declined, declined/n, diff/n, declineHeadroom)
		// The limit the settler sets for the all-debited batch must carry
		// it when every charge turns into a decline.
		c := s.chains[settleflow.Test]
		head, err := s.Backend.Client().HeaderByNumber(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		limit, err := c.estimate(ctx, head, debitData, n)
		if err != nil {
			t.Fatal(err)
		}
		old := debited + debited/5 + 20_000
		t.Logf("%s: the gas limit for the all-debited batch: %d (without the headroom: %d)", rules.name, limit, old)
		if limit < declined {
			t.Errorf("%s: the limit %d set for 100 debits does not carry them all declined (%d)", rules.name, limit, declined)
		}
		if uint64(perCharge) > declineHeadroom {
			t.Errorf("%s: a charge that flips between debit and decline costs %d gas more; declineHeadroom is %d", rules.name, perCharge, declineHeadroom)
		}
	}
}

// settleData is the calldata of a settle of chs, as send builds it.
func settleData(s *Simulated, chs []settleflow.Charge) []byte {
	refs := map[[32]byte]bool{}
	for _, ch := range chs {
		refs[refOf(s, ch.CustomerID)] = true
	}
	var list [][32]byte
	for r := range refs {
		list = append(list, r)
	}
	sortRefs(list)
	idx := map[[32]byte]uint16{}
	for i, r := range list {
		idx[r] = uint16(i)
	}
	var words []*big.Int
	for _, ch := range chs {
		words = append(words, PackedCharge{Cents: uint64(ch.Amount), Customer: idx[refOf(s, ch.CustomerID)], Sequence: ch.Sequence, Tag: WorkflowTag(ch.WorkflowID)}.Pack())
	}
	return settlementABI.PackSettle(list, words)
}
