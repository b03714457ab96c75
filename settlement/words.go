package settlement

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/settleflow/settleflow"
)

// What the chain recorded, read back: a settle transaction's calldata and
// its receipt's events say, for each charge it carried, whether it was
// debited, declined or skipped; each bitmap word's debited charges, run by
// run, form the word's commitment, which a refund resends.

var (
	wordSettledEventID    = settlementABI.GetABI().Events["WordSettled"].ID
	alreadySettledEventID = settlementABI.GetABI().Events["AlreadySettled"].ID
	chargeDeclinedEventID = settlementABI.GetABI().Events["ChargeDeclined"].ID
	refundedEventID       = settlementABI.GetABI().Events["Refunded"].ID
	refundRejectedEventID = settlementABI.GetABI().Events["RefundRejected"].ID
	refundSkippedEventID  = settlementABI.GetABI().Events["RefundSkipped"].ID

	settleMethod = settlementABI.GetABI().Methods["settle"]
)

// Outcome of one charge a settle carried.
type outcome int

const (
	debited  outcome = iota // recorded and debited from its customer
	declined                // recorded, nothing debited: the balance could not cover it
	skipped                 // its sequence was recorded before: nothing done
)

// carried is one charge as a settle transaction carried it.
type carried struct {
	charge  PackedCharge
	word    *big.Int // the packed word as sent
	ref     [32]byte
	outcome outcome
	balance *big.Int // the customer's balance, when declined
}

// settleTx is a settle transaction read back.
type settleTx struct {
	hash    common.Hash
	block   uint64
	charges []carried
	// runs are the runs of debits, in order, with the word they extend.
	runs []run
}

// run is one run of debits a settle made in one bitmap word.
type run struct {
	word  uint64
	items []int // indexes into settleTx.charges
}

// decodeSettle reads a settle call's calldata with the events of its
// receipt (its logs, any order). The runs it finds must match the
// transaction's WordSettled events, or the calldata is not what the
// contract ran.
func decodeSettle(contract common.Address, hash common.Hash, block uint64, data []byte, logs []*types.Log) (*settleTx, error) {
	if len(data) < 4 || !bytesEqual(data[:4], settleMethod.ID) {
		return nil, fmt.Errorf("settlement: transaction %s is not a call to settle", hash.Hex())
	}
	args, err := settleMethod.Inputs.Unpack(data[4:])
	if err != nil || len(args) != 2 {
		return nil, fmt.Errorf("settlement: transaction %s: settle arguments: %v", hash.Hex(), err)
	}
	customers, ok1 := args[0].([][32]byte)
	words, ok2 := args[1].([]*big.Int)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("settlement: transaction %s: settle arguments of unexpected types", hash.Hex())
	}
	skips := map[uint64]int{}
	declines := map[uint64]*big.Int{}
	var settled []*types.Log
	for _, l := range logs {
		if l.Address != contract || len(l.Topics) < 2 {
			continue
		}
		switch l.Topics[0] {
		case alreadySettledEventID:
			skips[new(big.Int).SetBytes(l.Topics[1][:]).Uint64()]++
		case chargeDeclinedEventID:
			ev, err := settlementABI.UnpackChargeDeclinedEvent(l)
			if err != nil {
				return nil, fmt.Errorf("settlement: transaction %s: ChargeDeclined: %w", hash.Hex(), err)
			}
			declines[ev.Sequence.Uint64()] = ev.Balance
		case wordSettledEventID:
			settled = append(settled, l)
		}
	}
	left := map[uint64]int{} // occurrences of each sequence not yet seen
	for _, w := range words {
		pc, err := UnpackCharge(w)
		if err != nil {
			return nil, fmt.Errorf("settlement: transaction %s: %w", hash.Hex(), err)
		}
		left[pc.Sequence]++
	}
	tx := &settleTx{hash: hash, block: block, charges: make([]carried, len(words))}
	var cur *run
	for i, w := range words {
		pc, _ := UnpackCharge(w)
		if int(pc.Customer) >= len(customers) {
			return nil, fmt.Errorf("settlement: transaction %s: charge %d names customer %d of %d", hash.Hex(), i, pc.Customer, len(customers))
		}
		ch := carried{charge: pc, word: w, ref: customers[pc.Customer]}
		// The contract skips every occurrence of a sequence recorded
		// before, and every one after the first within the transaction:
		// as many AlreadySettled events as the occurrences it skipped.
		if left[pc.Sequence] == skips[pc.Sequence] {
			ch.outcome = skipped
			skips[pc.Sequence]--
		} else if b, ok := declines[pc.Sequence]; ok {
			ch.outcome, ch.balance = declined, b
		}
		left[pc.Sequence]--
		tx.charges[i] = ch
		wd := pc.Sequence >> 8
		if cur == nil || cur.word != wd {
			if cur != nil && len(cur.items) > 0 {
				tx.runs = append(tx.runs, *cur)
			}
			cur = &run{word: wd}
		}
		if ch.outcome == debited {
			cur.items = append(cur.items, i)
		}
	}
	if cur != nil && len(cur.items) > 0 {
		tx.runs = append(tx.runs, *cur)
	}
	if len(settled) != len(tx.runs) {
		return nil, fmt.Errorf("settlement: transaction %s: %d runs of debits in its calldata, %d WordSettled events", hash.Hex(), len(tx.runs), len(settled))
	}
	return tx, nil
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }

// runHash is the hash of a run's (charge, customer) pairs, as the contract
// computes it.
func (t *settleTx) runHash(r run) common.Hash {
	buf := make([]byte, 0, 64*len(r.items))
	for _, i := range r.items {
		var w [32]byte
		t.charges[i].word.FillBytes(w[:])
		buf = append(buf, w[:]...)
		buf = append(buf, t.charges[i].ref[:]...)
	}
	return crypto.Keccak256Hash(buf)
}

// record is the chain's record of the i-th charge of the transaction.
func (c *chain) record(t *settleTx, i int) *chargeRecord {
	ch := t.charges[i]
	rec := &chargeRecord{sequence: ch.charge.Sequence, declined: ch.outcome == declined, tag: ch.charge.Tag, ref: ch.ref,
		amount:     new(big.Int).Mul(new(big.Int).SetUint64(ch.charge.Cents), c.unit),
		settlement: &settleflow.Settlement{ChainID: c.chainID.Int64(), Network: c.network, TxHash: t.hash.Hex(), BlockNumber: t.block}}
	if ch.outcome == declined {
		rec.balance = ch.balance
	}
	return rec
}

// readSettle reads a mined settle transaction back.
func (c *chain) readSettle(ctx context.Context, hash common.Hash) (*settleTx, error) {
	c.mu.Lock()
	t := c.settles[hash]
	c.mu.Unlock()
	if t != nil {
		return t, nil
	}
	tx, _, err := c.b.TransactionByHash(ctx, hash)
	if err != nil {
		return nil, fmt.Errorf("settlement: %s: transaction %s: %w", c.env, hash.Hex(), err)
	}
	r, err := c.b.TransactionReceipt(ctx, hash)
	if err != nil {
		return nil, fmt.Errorf("settlement: %s: receipt of %s: %w", c.env, hash.Hex(), err)
	}
	if tx.To() == nil || *tx.To() != c.contract {
		return nil, fmt.Errorf("settlement: %s: transaction %s is not to the contract (a settle sent through another contract cannot be read back)", c.env, hash.Hex())
	}
	if t, err = decodeSettle(c.contract, hash, r.BlockNumber.Uint64(), tx.Data(), r.Logs); err != nil {
		return nil, err
	}
	c.mu.Lock()
	if len(c.settles) > 4096 {
		clear(c.settles)
	}
	c.settles[hash] = t
	c.mu.Unlock()
	return t, nil
}

// wordHistory is a bitmap word's debits as the chain holds them: the runs
// of the settles that debited sequences of the word, in order.
type wordHistory struct {
	word       uint64
	commitment common.Hash
	txs        []*settleTx
	runs       []wordRun
}

// wordRun is one run of a word's history.
type wordRun struct {
	tx  *settleTx
	run run
}

// newWordHistory is the history of word in txs, the settles that debited
// sequences of it, in chain order.
func newWordHistory(word uint64, txs []*settleTx) *wordHistory {
	h := &wordHistory{word: word, txs: txs}
	for _, t := range txs {
		for _, r := range t.runs {
			if r.word == word {
				h.runs = append(h.runs, wordRun{t, r})
			}
		}
	}
	return h
}

// chain is the hash chain of the history's runs, as the contract keeps it.
func (h *wordHistory) chain() common.Hash {
	var chain common.Hash
	for _, r := range h.runs {
		seg := r.tx.runHash(r.run)
		chain = crypto.Keccak256Hash(chain[:], seg[:])
	}
	return chain
}

// history reads a word's debits back: its WordSettled events, each
// transaction's calldata and receipt; the runs' hash chain must be the
// word's commitment on chain.
func (c *chain) history(ctx context.Context, word uint64) (*wordHistory, error) {
	w := new(big.Int).SetUint64(word)
	out, err := c.call(ctx, settlementABI.PackWordCommit(w))
	if err != nil {
		return nil, err
	}
	commit, err := settlementABI.UnpackWordCommit(out)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	h := c.words[word]
	c.mu.Unlock()
	if h != nil && h.commitment == commit {
		return h, nil
	}
	logs, err := c.searchLogs(ctx, [][]common.Hash{{wordSettledEventID}, {common.BigToHash(w)}}, nil)
	if err != nil {
		return nil, err
	}
	var txs []*settleTx
	seen := map[common.Hash]bool{}
	for _, l := range logs {
		if seen[l.TxHash] {
			continue
		}
		seen[l.TxHash] = true
		t, err := c.readSettle(ctx, l.TxHash)
		if err != nil {
			return nil, err
		}
		txs = append(txs, t)
	}
	h = newWordHistory(word, txs)
	if chain := h.chain(); chain != commit {
		return nil, fmt.Errorf("settlement: %s: the debits of word %d read back from %d transactions hash to %s, the contract says %s (does the node keep every log since block %d?)",
			c.env, word, len(txs), chain.Hex(), common.Hash(commit).Hex(), c.deployed)
	}
	h.commitment = commit
	c.mu.Lock()
	if len(c.words) > 1024 {
		clear(c.words)
	}
	c.words[word] = h
	c.mu.Unlock()
	return h, nil
}

// find is the record of seq's debit in the history; nil if none.
func (c *chain) findDebit(h *wordHistory, seq uint64) *chargeRecord {
	for _, r := range h.runs {
		for _, i := range r.run.items {
			if r.tx.charges[i].charge.Sequence == seq {
				return c.record(r.tx, i)
			}
		}
	}
	return nil
}

// refundArgs are the word's charges as a refund resends them: flat, each
// with the index of its customer in customers (each customer once) in bits
// 240-255, with the lengths of the runs, and the index of each sequence's
// charge.
func (h *wordHistory) refundArgs() (customers [][32]byte, charges []*big.Int, runs []*big.Int, index map[uint64]int) {
	index = map[uint64]int{}
	table := map[[32]byte]int64{}
	for _, r := range h.runs {
		runs = append(runs, big.NewInt(int64(len(r.run.items))))
		for _, i := range r.run.items {
			ch := r.tx.charges[i]
			t, ok := table[ch.ref]
			if !ok {
				t = int64(len(customers))
				table[ch.ref] = t
				customers = append(customers, ch.ref)
			}
			index[ch.charge.Sequence] = len(charges)
			charges = append(charges, new(big.Int).Or(ch.word, new(big.Int).Lsh(big.NewInt(t), 240)))
		}
	}
	return customers, charges, runs, index
}

// lookup finds what the chain recorded under a sequence: the contract's
// views say whether it is recorded and declined; its events and the
// settles' calldata say where and for whom. nil if the sequence was never
// recorded.
func (c *chain) lookup(ctx context.Context, seq uint64) (*chargeRecord, error) {
	n := new(big.Int).SetUint64(seq)
	out, err := c.call(ctx, settlementABI.PackSettled(n))
	if err != nil {
		return nil, err
	}
	if done, err := settlementABI.UnpackSettled(out); err != nil || !done {
		return nil, err
	}
	if out, err = c.call(ctx, settlementABI.PackDeclined(n)); err != nil {
		return nil, err
	}
	isDeclined, err := settlementABI.UnpackDeclined(out)
	if err != nil {
		return nil, err
	}
	if isDeclined {
		logs, err := c.searchLogs(ctx, [][]common.Hash{{chargeDeclinedEventID}, {common.BigToHash(n)}}, func(l []types.Log) bool { return len(l) > 0 })
		if err != nil {
			return nil, err
		}
		if len(logs) == 0 {
			return nil, c.noEvent("declined", seq)
		}
		t, err := c.readSettle(ctx, logs[0].TxHash)
		if err != nil {
			return nil, err
		}
		for i, ch := range t.charges {
			if ch.charge.Sequence == seq && ch.outcome == declined {
				return c.record(t, i), nil
			}
		}
		return nil, c.noEvent("declined", seq)
	}
	h, err := c.history(ctx, seq>>8)
	if err != nil {
		return nil, err
	}
	if rec := c.findDebit(h, seq); rec != nil {
		return rec, nil
	}
	return nil, c.noEvent("settled", seq)
}

func (c *chain) noEvent(what string, seq uint64) error {
	// The bit is set, so the event exists at or below the block the view
	// read; a node that prunes logs (or a reorg in between) hides it.
	return fmt.Errorf("settlement: %s: sequence %d is %s on chain but its record was not found (does the node keep logs since block %d?)", c.env, seq, what, c.deployed)
}
