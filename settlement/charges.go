package settlement

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"go.uber.org/zap"

	"github.com/settleflow/settleflow"
)

// Charges: Submit queues them, the worker sends them in batches (settle),
// Status and the receipts say how each ended: debited from its customer's
// balance, declined (the balance could not cover it) or skipped (its
// sequence was recorded before).

// prepare validates a charge and returns its item (not yet registered).
func (c *chain) prepare(ch settleflow.Charge) (*item, error) {
	if _, err := WorkflowKey(ch.WorkflowID); err != nil {
		return nil, permanent(CodeInvalidCharge, "%v", err)
	}
	if ch.Sequence == 0 {
		return nil, permanent(CodeInvalidCharge, "workflow %s has no sequence number (0): the contract records charges by sequence", ch.WorkflowID)
	}
	if !strings.EqualFold(ch.Currency, settleflow.Currency) {
		return nil, permanent(CodeInvalidCharge, "workflow %s: currency %q cannot be settled in a USD stablecoin", ch.WorkflowID, ch.Currency)
	}
	amt, err := BaseUnits(ch.Amount, c.decimals)
	if err != nil {
		return nil, permanent(CodeInvalidCharge, "workflow %s: %v", ch.WorkflowID, err)
	}
	return &item{charge: ch, tag: WorkflowTag(ch.WorkflowID), ref: c.ref(ch.CustomerID), seq: new(big.Int).SetUint64(ch.Sequence), amount: amt}, nil
}

// submit queues charges, adding those it refuses for good to refused (by
// workflow id): a bad id, sequence, amount or currency, or a sequence
// another workflow holds. Whether the customer can pay is the contract's to
// say (a charge its balance cannot cover is declined on chain).
func (c *chain) submit(charges []settleflow.Charge, refused map[string]*settleflow.Failure) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	seqs := map[uint64]string{}
	added := 0
	for _, ch := range charges {
		it, err := c.prepare(ch)
		if err != nil {
			refused[ch.WorkflowID] = failureOf(err)
			continue
		}
		if err := c.seqConflictLocked(it, seqs); err != nil {
			refused[ch.WorkflowID] = failureOf(err)
			continue
		}
		if old, ok := c.items[ch.WorkflowID]; ok && old.state != stFailed {
			continue // already taken: Submit is idempotent
		}
		seqs[ch.Sequence] = ch.WorkflowID
		it.queuedAt = now
		c.items[ch.WorkflowID] = it
		c.bySeq[ch.Sequence] = it
		c.queue = append(c.queue, it)
		added++
	}
	if added > 0 && len(c.queue) >= c.cfg.BatchSize {
		c.poke()
	}
}

// seqConflictLocked refuses a charge whose sequence another workflow holds,
// in memory or earlier in the same Submit (batch): the contract would skip it
// as already settled, and it would never be charged.
func (c *chain) seqConflictLocked(it *item, batch map[uint64]string) error {
	other, ok := batch[it.charge.Sequence]
	if !ok {
		if old := c.bySeq[it.charge.Sequence]; old != nil && old.state != stFailed {
			other, ok = old.charge.WorkflowID, true
		}
	}
	if ok && other != it.charge.WorkflowID {
		return permanent(CodeInvalidCharge, "workflow %s has sequence %d, which belongs to workflow %s", it.charge.WorkflowID, it.charge.Sequence, other)
	}
	return nil
}

// ---- Status ----

func (c *chain) status(ctx context.Context, ch settleflow.Charge) (settleflow.SettlementStatus, error) {
	st := settleflow.SettlementStatus{WorkflowID: ch.WorkflowID}
	c.mu.Lock()
	it := c.items[ch.WorkflowID]
	if it != nil {
		switch it.state {
		case stQueued:
			st.State = settleflow.SettlementPending
			st.CheckAfter = c.checkAfterLocked(it)
		case stSent:
			st.State = settleflow.SettlementPending
			s := &settleflow.Settlement{ChainID: c.chainID.Int64(), Network: c.network}
			if r := it.tx.receipt; r != nil {
				s.TxHash = r.TxHash.Hex()
				s.BlockNumber = r.BlockNumber.Uint64()
				s.Confirmations = c.confirmationsLocked(s.BlockNumber)
			} else {
				s.TxHash = it.tx.latest().Hash().Hex()
			}
			st.Settlement = s
			st.CheckAfter = c.checkAfterLocked(it)
		case stConfirmed:
			st.State = settleflow.SettlementConfirmed
			s := *it.settlement
			s.Confirmations = c.confirmationsLocked(s.BlockNumber)
			st.Settlement = &s
		case stFailed:
			st.State = settleflow.SettlementFailed
			f := *it.failure
			st.Failure = &f
		}
		c.mu.Unlock()
		return st, nil
	}
	c.mu.Unlock()

	// No record: look on chain before answering Unknown.
	if _, err := WorkflowKey(ch.WorkflowID); err != nil || ch.Sequence == 0 {
		return st, nil // cannot have been settled; Submit says why
	}
	rec, err := c.lookup(ctx, ch.Sequence)
	if err != nil || rec == nil {
		return st, err
	}
	if _, err := c.refreshHead(ctx); err != nil {
		return st, err
	}
	s := *rec.settlement
	st.Settlement = &s
	c.mu.Lock()
	defer c.mu.Unlock()
	s.Confirmations = c.confirmationsLocked(s.BlockNumber)
	if !c.finalLocked(s.BlockNumber) {
		st.State = settleflow.SettlementPending
		return st, nil
	}
	it = &item{charge: ch, tag: WorkflowTag(ch.WorkflowID), ref: c.ref(ch.CustomerID), seq: new(big.Int).SetUint64(ch.Sequence), doneAt: c.now()}
	if f := c.outcomeOf(it, rec); f != nil {
		st.State, st.Failure, st.Settlement = settleflow.SettlementFailed, f, nil
		it.state, it.failure = stFailed, f
	} else {
		st.State = settleflow.SettlementConfirmed
		saved := s
		it.state, it.settlement = stConfirmed, &saved
	}
	if _, ok := c.items[ch.WorkflowID]; !ok {
		c.items[ch.WorkflowID] = it
		if it.state == stConfirmed {
			c.bySeq[ch.Sequence] = it
		}
	}
	return st, nil
}

// outcomeOf says how a charge ended given what the chain recorded under its
// sequence: nil if it was debited for this very charge, else its failure
// (declined for lack of balance, or the sequence recorded for another
// workflow or customer).
func (c *chain) outcomeOf(it *item, rec *chargeRecord) *settleflow.Failure {
	ch := it.charge
	switch {
	case rec.declined && rec.ref == it.ref:
		return failure(CodeInsufficientFunds, "customer %s's balance on chain (%s) could not cover the charge of %s: declined in transaction %s (block %d); nothing was charged",
			ch.CustomerID, c.formatCents(rec.balance), c.formatCents(rec.amount), rec.settlement.TxHash, rec.settlement.BlockNumber)
	case rec.declined:
		return failure(CodeInvalidCharge, "sequence %d was declined on chain for another customer (transaction %s, block %d), not for %s's workflow %s; nothing was charged for %s",
			ch.Sequence, rec.settlement.TxHash, rec.settlement.BlockNumber, ch.CustomerID, ch.WorkflowID, ch.WorkflowID)
	case rec.tag != it.tag || rec.ref != it.ref:
		return failure(CodeInvalidCharge, "sequence %d was settled on chain for another workflow (tag %016x, transaction %s, block %d), not for %s; nothing was charged for %s",
			ch.Sequence, rec.tag, rec.settlement.TxHash, rec.settlement.BlockNumber, ch.WorkflowID, ch.WorkflowID)
	}
	return nil
}

// formatCents writes base units as dollars ("12.34 USD").
func (c *chain) formatCents(base *big.Int) string {
	if base == nil {
		return "?"
	}
	return FormatUnits(base, int(c.decimals)) + " USD"
}

func (c *chain) confirmationsLocked(block uint64) uint64 {
	if block == 0 || c.head < block {
		return 0
	}
	return c.head - block + 1
}

func (c *chain) finalLocked(block uint64) bool {
	if block == 0 {
		return false
	}
	if c.cfg.Confirmations == 0 {
		return block <= c.finalized
	}
	return c.confirmationsLocked(block) >= c.cfg.Confirmations
}

// ---- sending ----

// send builds, signs and sends one batch's settle transaction: the charges
// in sequence order (consecutive ones share a bitmap word, written once),
// their customers in ascending order (as the contract requires), each
// customer once.
func (c *chain) send(ctx context.Context, head *types.Header, batch []*item) error {
	batch = slices.Clone(batch)
	slices.SortStableFunc(batch, func(a, b *item) int { return a.seq.Cmp(b.seq) })
	refs := make([][32]byte, 0, len(batch))
	for _, it := range batch {
		refs = append(refs, it.ref)
	}
	slices.SortFunc(refs, func(a, b [32]byte) int { return bytes.Compare(a[:], b[:]) })
	refs = slices.Compact(refs)
	index := make(map[[32]byte]uint16, len(refs))
	for i, r := range refs {
		index[r] = uint16(i)
	}
	words := make([]*big.Int, len(batch))
	for i, it := range batch {
		words[i] = PackedCharge{Cents: uint64(it.charge.Amount), Customer: index[it.ref], Sequence: it.charge.Sequence, Tag: it.tag}.Pack()
	}
	data := settlementABI.PackSettle(refs, words)
	gas, err := c.estimate(ctx, head, data, len(batch))
	if err != nil {
		if len(batch) > 1 && isGasCapError(err) {
			// Over the transaction gas cap (EIP-7825): send half now; the
			// rest stays queued for the next batch.
			c.log.Info("settlement batch over the gas cap; splitting", zap.Int("charges", len(batch)))
			return c.send(ctx, head, batch[:len(batch)/2])
		}
		if f := classifyRevert(err); f != nil {
			// The node says the settle reverts: fail the charges the chain
			// confirms it has not recorded (the others end as recorded).
			c.log.Error("settlement batch refused by the chain; checking its charges on chain before failing them", zap.Int("charges", len(batch)),
				zap.String("code", string(f.Code)), zap.String("reason", f.Message))
			return c.failUnrecorded(ctx, batch, f)
		}
		// Anything else is the node's or the network's trouble: retried.
		return fmt.Errorf("estimate gas: %w", err)
	}
	return c.dispatch(ctx, head, data, gas, &sentTx{items: batch})
}

// noneInFlight fails unless every transaction the operator signed is
// mined: one sent before a restart, unknown to this process, may carry
// the charges a caller is about to fail.
func (c *chain) noneInFlight(ctx context.Context) error {
	latest, err := c.b.NonceAt(ctx, c.from, nil)
	if err != nil {
		return fmt.Errorf("nonce: %w", err)
	}
	pending, err := c.b.PendingNonceAt(ctx, c.from)
	if err != nil {
		return fmt.Errorf("pending nonce: %w", err)
	}
	if pending > latest {
		return fmt.Errorf("the operator has %d transaction(s) not yet mined (nonces %d-%d): deciding on failed charges once they are", pending-latest, latest, pending-1)
	}
	return nil
}

// recordedSeqs reads the contract's bitmaps of recorded sequences (one
// view per bitmap word) and says which of seqs it holds, debited or
// declined.
func (c *chain) recordedSeqs(ctx context.Context, seqs []uint64) (map[uint64]bool, error) {
	words := map[uint64]*big.Int{}
	out := make(map[uint64]bool, len(seqs))
	for _, seq := range seqs {
		w := seq >> 8
		bits, ok := words[w]
		if !ok {
			res, err := c.call(ctx, settlementABI.PackSettledWords(new(big.Int).SetUint64(w)))
			if err != nil {
				return nil, err
			}
			if bits, err = settlementABI.UnpackSettledWords(res); err != nil {
				return nil, fmt.Errorf("settlement: %s: settledWords(%d): %w", c.env, w, err)
			}
			words[w] = bits
		}
		out[seq] = bits.Bit(int(seq&255)) == 1
	}
	return out, nil
}

// failUnrecorded ends queued charges the chain refused to settle: those
// whose sequence the contract has recorded end as recorded (once the
// record is final; until then they stay queued); those it confirms it has
// not recorded fail with f, once no transaction of the operator's is
// still in flight. An error leaves every charge queued.
func (c *chain) failUnrecorded(ctx context.Context, items []*item, f *settleflow.Failure) error {
	if err := c.noneInFlight(ctx); err != nil {
		return err
	}
	seqs := make([]uint64, len(items))
	for i, it := range items {
		seqs[i] = it.charge.Sequence
	}
	recorded, err := c.recordedSeqs(ctx, seqs)
	if err != nil {
		return err
	}
	recs := map[uint64]*chargeRecord{}
	for _, it := range items {
		if recorded[it.charge.Sequence] {
			rec, err := c.lookup(ctx, it.charge.Sequence)
			if err != nil {
				return err
			}
			if rec == nil {
				return fmt.Errorf("settlement: %s: sequence %d is recorded on chain but its record was not found", c.env, it.charge.Sequence)
			}
			recs[it.charge.Sequence] = rec
		}
	}
	if len(recs) > 0 {
		if _, err := c.refreshHead(ctx); err != nil {
			return err
		}
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	var failed, ended []*item
	for _, it := range items {
		if it.state != stQueued || c.items[it.charge.WorkflowID] != it {
			continue // no longer this batch's to decide
		}
		rec := recs[it.charge.Sequence]
		switch {
		case !recorded[it.charge.Sequence]:
			failed = append(failed, it)
		case !c.finalLocked(rec.settlement.BlockNumber):
			// Recorded, not yet final: stays queued; the next batch skips it
			// and its receipt's reading finds the record.
		default:
			ended = append(ended, it)
			if f := c.outcomeOf(it, rec); f != nil {
				it.state, it.failure = stFailed, f
			} else {
				saved := *rec.settlement
				it.state, it.settlement = stConfirmed, &saved
			}
			it.doneAt, it.tx = now, nil
		}
	}
	c.dequeueLocked(ended)
	for _, it := range failed {
		c.failLocked([]*item{it}, failure(f.Code, "%s; the chain has not recorded sequence %d: nothing was charged", f.Message, it.charge.Sequence))
	}
	if len(failed) > 0 || len(ended) > 0 {
		c.log.Error("settlement charges refused by the chain", zap.Int("failed", len(failed)), zap.Int("foundRecorded", len(ended)),
			zap.String("code", string(f.Code)), zap.String("reason", f.Message))
	}
	return nil
}

// finish ends a settle transaction that reached the configured depth: each
// charge is confirmed by its debit (in this transaction, or an earlier one
// when the contract skipped it as recorded), fails if it was declined or
// if its sequence was recorded for another workflow, and otherwise goes
// back to the queue. A reverted transaction fails no charge whose sequence
// the chain holds, nor any before maxReverts reverts (see below).
func (c *chain) finish(ctx context.Context, t *sentTx) error {
	r := t.receipt
	recs := map[uint64]*chargeRecord{}
	var skippedSeqs []uint64
	debitedN := 0
	if r.Status == types.ReceiptStatusSuccessful {
		st, err := decodeSettle(c.contract, r.TxHash, r.BlockNumber.Uint64(), t.latest().Data(), r.Logs)
		if err != nil {
			return err
		}
		c.mu.Lock()
		c.settles[r.TxHash] = st
		c.mu.Unlock()
		for i, ch := range st.charges {
			switch ch.outcome {
			case debited:
				debitedN++
				recs[ch.charge.Sequence] = c.record(st, i)
			case declined:
				recs[ch.charge.Sequence] = c.record(st, i)
			case skipped:
				skippedSeqs = append(skippedSeqs, ch.charge.Sequence)
			}
		}
	}
	// Each charge the transaction debited bears an equal share of its cost.
	if debitedN > 0 {
		share := r.GasUsed / uint64(debitedN)
		var fee string
		if r.EffectiveGasPrice != nil {
			fee = FormatUnits(new(big.Int).Mul(new(big.Int).SetUint64(share), r.EffectiveGasPrice), 18)
		}
		for _, rec := range recs {
			if !rec.declined {
				rec.settlement.GasUsed, rec.settlement.Fee = share, fee
			}
		}
	}
	// Skipped sequences were recorded earlier (or earlier in this batch):
	// find where. Each record found is kept on t, so that a read that
	// fails costs the next step only the records still missing.
	var errs []error
	for _, seq := range skippedSeqs {
		if recs[seq] != nil {
			continue
		}
		if rec := t.found[seq]; rec != nil {
			recs[seq] = rec
			continue
		}
		rec, err := c.lookup(ctx, seq)
		if err == nil && rec == nil {
			err = fmt.Errorf("settlement: %s: sequence %d was skipped as recorded but the chain has no record of it (does the node keep logs since block %d?)", c.env, seq, c.deployed)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		recs[seq] = rec
		c.mu.Lock()
		if t.found == nil {
			t.found = map[uint64]*chargeRecord{}
		}
		t.found[seq] = rec
		c.mu.Unlock()
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%d of %d skipped charges' records not read yet: %w", len(errs), len(skippedSeqs), err)
	}
	// A reverted transaction recorded nothing, but another (one sent before
	// a restart) may have recorded its charges: read each sequence on chain
	// before deciding. Those not recorded go back to the queue (the next
	// estimate says whether the settle still reverts) until maxReverts of
	// their transactions have reverted; then they fail, once the chain
	// confirms them unrecorded and no transaction of ours is in flight.
	reverted := r.Status != types.ReceiptStatusSuccessful
	var giveUp bool
	if reverted {
		var seqs []uint64
		for _, it := range t.items {
			if it.tx == t {
				seqs = append(seqs, it.charge.Sequence)
			}
		}
		recorded, err := c.recordedSeqs(ctx, seqs)
		if err != nil {
			return err
		}
		for _, seq := range seqs {
			if recorded[seq] && recs[seq] == nil {
				rec, err := c.lookup(ctx, seq)
				if err != nil {
					return err
				}
				if rec == nil {
					return fmt.Errorf("settlement: %s: sequence %d is recorded on chain but its record was not found", c.env, seq)
				}
				recs[seq] = rec
			}
		}
		giveUp = c.noneInFlight(ctx) == nil
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeTxLocked(t)
	var requeue []*item
	declinedN, failedN := 0, 0
	for _, it := range t.items {
		if it.tx != t {
			continue // resubmitted after a failure: someone else's now
		}
		it.tx = nil
		rec := recs[it.charge.Sequence]
		switch {
		case rec == nil && reverted && it.reverts+1 >= maxReverts && giveUp:
			it.state, it.doneAt = stFailed, now
			it.failure = failure(CodeSettlementReverted, "settlement transaction %s reverted in block %d, the %d time for this charge, and the chain has not recorded sequence %d; nothing was charged",
				r.TxHash.Hex(), r.BlockNumber.Uint64(), maxReverts, it.charge.Sequence)
			failedN++
		case rec == nil:
			if reverted {
				it.reverts++
			}
			it.state, it.queuedAt = stQueued, now
			requeue = append(requeue, it)
		case !c.finalLocked(rec.settlement.BlockNumber):
			// Recorded by another transaction not yet final: queued again,
			// the next batch skips it and finds the record.
			it.state, it.queuedAt = stQueued, now
			requeue = append(requeue, it)
		default:
			if f := c.outcomeOf(it, rec); f != nil {
				it.state, it.doneAt, it.failure = stFailed, now, f
				if f.Code == CodeInsufficientFunds {
					declinedN++
				}
				continue
			}
			saved := *rec.settlement
			it.state, it.doneAt, it.settlement = stConfirmed, now, &saved
		}
	}
	c.queue = append(requeue, c.queue...)
	if reverted {
		c.log.Error("settlement transaction reverted; its charges were checked on chain", zap.Stringer("tx", r.TxHash), zap.Uint64("block", r.BlockNumber.Uint64()),
			zap.Uint64("gasUsed", r.GasUsed), zap.Uint64("gas", t.latest().Gas()), zap.Int("requeued", len(requeue)), zap.Int("failed", failedN))
	} else {
		c.log.Info("settlement confirmed", zap.Stringer("tx", r.TxHash), zap.Uint64("block", r.BlockNumber.Uint64()),
			zap.Int("charges", len(t.items)), zap.Int("debited", debitedN), zap.Int("declined", declinedN))
	}
	return nil
}

// ---- what the chain recorded ----

// chargeRecord is what the chain recorded under one sequence.
type chargeRecord struct {
	sequence   uint64
	declined   bool     // recorded, nothing debited: the balance could not cover it
	tag        uint64   // the workflow's tag (WorkflowTag)
	ref        [32]byte // the customer's reference
	amount     *big.Int // base units
	balance    *big.Int // the customer's balance when declined
	settlement *settleflow.Settlement
}

// call runs a view of the contract at the head.
func (c *chain) call(ctx context.Context, data []byte) ([]byte, error) {
	out, err := c.b.CallContract(ctx, ethereum.CallMsg{To: &c.contract, Data: data}, nil)
	if err != nil {
		return nil, fmt.Errorf("settlement: %s: call %s: %w", c.env, c.contract, err)
	}
	return out, nil
}

// defaultLogRange is the window of a log search when the node refuses to
// search the contract's whole life in one query.
const defaultLogRange = 10_000

// searchLogs searches the contract's logs matching topics, from its
// deployment to the head: in one query unless LogRange is set or the node
// refuses, else in windows of LogRange blocks from the head down (recent
// logs are found first) until enough says the logs found are enough (nil:
// search everything). Logs are in chain order within each window; removed
// logs are dropped.
func (c *chain) searchLogs(ctx context.Context, topics [][]common.Hash, enough func([]types.Log) bool) ([]types.Log, error) {
	q := ethereum.FilterQuery{Addresses: []common.Address{c.contract}, Topics: topics}
	var found []types.Log
	keep := func(logs []types.Log) {
		for _, l := range logs {
			if !l.Removed {
				found = append(found, l)
			}
		}
	}
	window := c.cfg.LogRange
	if window == 0 {
		q.FromBlock = new(big.Int).SetUint64(c.deployed)
		logs, err := c.b.FilterLogs(ctx, q)
		if err == nil {
			keep(logs)
			return found, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("settlement: %s: logs: %w", c.env, err)
		}
		c.log.Info("log search over the contract's life refused; searching in windows", zap.Error(err))
		window = defaultLogRange
	}
	head, err := c.b.BlockNumber(ctx)
	if err != nil {
		return nil, fmt.Errorf("settlement: %s: head: %w", c.env, err)
	}
	var windows [][]types.Log
	for to := head; ; {
		from := c.deployed
		if to >= c.deployed+window {
			from = to - window + 1
		}
		q.FromBlock, q.ToBlock = new(big.Int).SetUint64(from), new(big.Int).SetUint64(to)
		logs, err := c.b.FilterLogs(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("settlement: %s: logs in blocks %d-%d: %w", c.env, from, to, err)
		}
		windows = append(windows, logs)
		found = found[:0]
		for i := len(windows) - 1; i >= 0; i-- {
			keep(windows[i])
		}
		if (enough != nil && enough(found)) || from <= c.deployed {
			return found, nil
		}
		to = from - 1
	}
}
