package settlement

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/settleflow/settleflow"
)

// Finding 9 (the refunds' part): a refund whose charge's sequence is not
// among its word's debits as read back (a reorg between reading the
// charge and reading the word, a node that hides a log) used to be sent as
// a refund of the word's charge 0, another customer's charge; now it
// fails on its own with a clear failure and the rest of the word's refunds
// go on.
func TestRefundOfMissingSequenceIsNotCharge0(t *testing.T) {
	ref := [32]byte{1}
	word := func(seq uint64) *big.Int {
		return PackedCharge{Cents: 100, Sequence: seq, Tag: 7}.Pack()
	}
	tx := &settleTx{hash: common.Hash{9}, block: 5, charges: []carried{
		{charge: PackedCharge{Cents: 100, Sequence: 2, Tag: 7}, word: word(2), ref: ref},
		{charge: PackedCharge{Cents: 100, Sequence: 3, Tag: 7}, word: word(3), ref: ref},
	}, runs: []run{{word: 0, items: []int{0, 1}}}}
	h := newWordHistory(0, []*settleTx{tx})
	_, charges, _, index := h.refundArgs()
	if len(charges) != 2 {
		t.Fatalf("refundArgs: %d charges", len(charges))
	}
	mk := func(id string, seq uint64) *ritem {
		return &ritem{rc: settleflow.RefundCharge{RefundID: id, Sequence: seq, Amount: 10, Currency: "usd"}}
	}
	present, absent, last := mk("re_present", 2), mk("re_absent", 4), mk("re_last", 3)
	ok, missing := refundable([]*ritem{present, absent, last}, index)
	if len(ok) != 2 || ok[0] != present || ok[1] != last {
		t.Errorf("sendable: %v; want re_present and re_last", ok)
	}
	if len(missing) != 1 || missing[0] != absent {
		t.Errorf("missing: %v; want re_absent", missing)
	}
}
