package settlement

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"go.uber.org/zap"

	"github.com/settleflow/settleflow"
)

// Refunds: SubmitRefunds queues them; the worker sends them grouped by the
// bitmap word of their charges' sequences (the contract checks each refund
// against the word's commitment, so the transaction resends the word's
// debits as the settles made them); RefundStatus and the receipts say how
// each ended. A refund's id is its key on chain: applied at most once,
// however often it is sent.

// ritem is one refund the chain settles.
type ritem struct {
	rc         settleflow.RefundCharge
	key        [32]byte
	state      itemState
	tx         *sentTx
	queuedAt   time.Time
	doneAt     time.Time
	settlement *settleflow.Settlement
	failure    *settleflow.Failure
	// reverted counts refund transactions of it that reverted (the word's
	// commitment changed under it): it is sent again, at most maxReverts
	// times.
	reverted int
}

// maxReverts is how many refund transactions of one refund may revert
// before it fails.
const maxReverts = 3

// Refund rejection reasons, as the contract's RefundRejected reports them.
const (
	rejectedExceedsCharge = 1
	rejectedPayeeOwed     = 2
)

// submitRefunds queues refunds, adding those it refuses for good to refused
// (by refund id).
func (c *chain) submitRefunds(rcs []settleflow.RefundCharge, refused map[string]*settleflow.Failure) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rc := range rcs {
		key, err := RefundKey(rc.RefundID)
		switch {
		case err != nil:
			refused[rc.RefundID] = failure(CodeInvalidCharge, "%v", err)
			continue
		case rc.Sequence == 0:
			refused[rc.RefundID] = failure(CodeInvalidCharge, "refund %s names no charge (sequence 0)", rc.RefundID)
			continue
		case rc.Amount < 1:
			refused[rc.RefundID] = failure(CodeInvalidCharge, "refund %s: amount %d; a refund is at least 1 cent", rc.RefundID, rc.Amount)
			continue
		case !strings.EqualFold(rc.Currency, settleflow.Currency):
			refused[rc.RefundID] = failure(CodeInvalidCharge, "refund %s: currency %q cannot be refunded in a USD stablecoin", rc.RefundID, rc.Currency)
			continue
		}
		if old, ok := c.refunds[rc.RefundID]; ok && old.state != stFailed {
			continue // already taken: idempotent
		}
		r := &ritem{rc: rc, key: key, queuedAt: now}
		c.refunds[rc.RefundID] = r
		c.rqueue = append(c.rqueue, r)
	}
	if len(c.rqueue) >= c.cfg.BatchSize {
		c.poke()
	}
}

// refundStatus reports a refund's state: from memory, else from the chain.
func (c *chain) refundStatus(ctx context.Context, rc settleflow.RefundCharge) (settleflow.SettlementStatus, error) {
	st := settleflow.SettlementStatus{WorkflowID: rc.RefundID}
	c.mu.Lock()
	if r := c.refunds[rc.RefundID]; r != nil {
		switch r.state {
		case stQueued:
			st.State = settleflow.SettlementPending
		case stSent:
			st.State = settleflow.SettlementPending
			s := &settleflow.Settlement{ChainID: c.chainID.Int64(), Network: c.network, TxHash: r.tx.latest().Hash().Hex()}
			if rcp := r.tx.receipt; rcp != nil {
				s.TxHash, s.BlockNumber = rcp.TxHash.Hex(), rcp.BlockNumber.Uint64()
				s.Confirmations = c.confirmationsLocked(s.BlockNumber)
			}
			st.Settlement = s
		case stConfirmed:
			st.State = settleflow.SettlementConfirmed
			s := *r.settlement
			s.Confirmations = c.confirmationsLocked(s.BlockNumber)
			st.Settlement = &s
		case stFailed:
			st.State = settleflow.SettlementFailed
			f := *r.failure
			st.Failure = &f
		}
		if st.State == settleflow.SettlementPending {
			st.CheckAfter = c.cfg.BlockTime * time.Duration(max(c.cfg.Confirmations, 1))
		}
		c.mu.Unlock()
		return st, nil
	}
	c.mu.Unlock()
	key, err := RefundKey(rc.RefundID)
	if err != nil {
		return st, nil // never sent; SubmitRefunds says why
	}
	s, f, err := c.refundOnChain(ctx, key)
	if err != nil || (s == nil && f == nil) {
		return st, err
	}
	if _, err := c.refreshHead(ctx); err != nil {
		return st, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s.Confirmations = c.confirmationsLocked(s.BlockNumber)
	if !c.finalLocked(s.BlockNumber) {
		st.State, st.Settlement = settleflow.SettlementPending, s
		return st, nil
	}
	r := &ritem{rc: rc, key: key, doneAt: c.now()}
	if f != nil {
		st.State, st.Failure = settleflow.SettlementFailed, f
		r.state, r.failure = stFailed, f
	} else {
		st.State, st.Settlement = settleflow.SettlementConfirmed, s
		saved := *s
		r.state, r.settlement = stConfirmed, &saved
	}
	if _, ok := c.refunds[rc.RefundID]; !ok {
		c.refunds[rc.RefundID] = r
	}
	return st, nil
}

// refundOnChain finds how a refund key ended on chain: applied (its
// settlement), rejected (its failure, with the transaction that decided),
// or neither (never seen).
func (c *chain) refundOnChain(ctx context.Context, key [32]byte) (*settleflow.Settlement, *settleflow.Failure, error) {
	out, err := c.call(ctx, settlementABI.PackRefundState(key))
	if err != nil {
		return nil, nil, err
	}
	state, err := settlementABI.UnpackRefundState(out)
	if err != nil {
		return nil, nil, err
	}
	var ev common.Hash
	switch state.Uint64() {
	case 0:
		return nil, nil, nil
	case 1:
		ev = refundedEventID
	default:
		ev = refundRejectedEventID
	}
	logs, err := c.searchLogs(ctx, [][]common.Hash{{ev}, {common.Hash(key)}}, func(l []types.Log) bool { return len(l) > 0 })
	if err != nil {
		return nil, nil, err
	}
	if len(logs) == 0 {
		return nil, nil, fmt.Errorf("settlement: %s: refund %s is decided on chain but its event was not found (does the node keep logs since block %d?)", c.env, WorkflowIDFromKey(key), c.deployed)
	}
	l := &logs[0]
	s := &settleflow.Settlement{ChainID: c.chainID.Int64(), Network: c.network, TxHash: l.TxHash.Hex(), BlockNumber: l.BlockNumber}
	if ev == refundedEventID {
		return s, nil, nil
	}
	return s, c.rejection(l), nil
}

// rejection is the failure a RefundRejected log reports.
func (c *chain) rejection(l *types.Log) *settleflow.Failure {
	ev, err := settlementABI.UnpackRefundRejectedEvent(l)
	if err != nil {
		return failure(CodeSettlementReverted, "the contract rejected the refund in transaction %s", l.TxHash.Hex())
	}
	switch ev.Reason.Uint64() {
	case rejectedExceedsCharge:
		return failure(settleflow.CodeAmountExceedsRefundable, "the contract rejected the refund in transaction %s: with the refunds already applied to sequence %s it would pass the charge; nothing was refunded", l.TxHash.Hex(), ev.Sequence)
	case rejectedPayeeOwed:
		return failure(CodeInsufficientFunds, "the contract rejected the refund in transaction %s: the payee is owed less than the refund (it has claimed its earnings; fundPayee restores them); nothing was refunded", l.TxHash.Hex())
	}
	return failure(CodeSettlementReverted, "the contract rejected the refund in transaction %s (reason %s); nothing was refunded", l.TxHash.Hex(), ev.Reason)
}

// flushRefunds sends the queued refunds that are due, one transaction per
// bitmap word of the charges they refund. It waits while a settle
// transaction is unmined: the word's commitment it resends may change.
func (c *chain) flushRefunds(ctx context.Context, head *types.Header) error {
	c.mu.Lock()
	n := len(c.rqueue)
	due := n >= c.cfg.BatchSize || (n > 0 && time.Since(c.rqueue[0].queuedAt) >= c.cfg.FlushInterval)
	for _, t := range c.txs {
		if t.items != nil && t.receipt == nil {
			due = false
		}
	}
	if !due {
		c.mu.Unlock()
		return nil
	}
	queued := slices.Clone(c.rqueue)
	c.mu.Unlock()
	groups := map[uint64][]*ritem{}
	var order []uint64
	for _, r := range queued {
		rec, err := c.lookup(ctx, r.rc.Sequence)
		if err != nil {
			return err
		}
		var f *settleflow.Failure
		switch {
		case rec == nil:
			f = failure(CodeInvalidCharge, "the charge of workflow %s (sequence %d) is not settled on chain: there is nothing to refund", r.rc.WorkflowID, r.rc.Sequence)
		case rec.declined:
			f = failure(CodeInvalidCharge, "the charge of workflow %s (sequence %d) was declined on chain: nothing was charged, nothing can be refunded", r.rc.WorkflowID, r.rc.Sequence)
		case rec.tag != WorkflowTag(r.rc.WorkflowID):
			f = failure(CodeInvalidCharge, "sequence %d was settled on chain for another workflow than %s: refusing to refund it", r.rc.Sequence, r.rc.WorkflowID)
		}
		if f != nil {
			c.mu.Lock()
			c.failRefundsLocked([]*ritem{r}, f)
			c.mu.Unlock()
			continue
		}
		w := r.rc.Sequence >> 8
		if _, ok := groups[w]; !ok {
			order = append(order, w)
		}
		groups[w] = append(groups[w], r)
	}
	for _, w := range order {
		h, err := c.history(ctx, w)
		if err != nil {
			return err
		}
		customers, charges, runs, index := h.refundArgs()
		for chunk := range slices.Chunk(groups[w], c.cfg.BatchSize) {
			keys := make([][32]byte, len(chunk))
			items := make([]*big.Int, len(chunk))
			for i, r := range chunk {
				keys[i], items[i] = r.key, packRefund(uint64(r.rc.Amount), uint16(index[r.rc.Sequence]))
			}
			data := settlementABI.PackRefund(new(big.Int).SetUint64(w), customers, charges, runs, keys, items)
			gas, err := c.estimate(ctx, head, data)
			if err != nil {
				if f := classifyRevert(err); f != nil && !strings.Contains(f.Message, "StaleCommitment") {
					c.mu.Lock()
					c.failRefundsLocked(chunk, f)
					c.mu.Unlock()
					c.log.Error("refund transaction refused by the chain", zap.Int("refunds", len(chunk)), zap.String("reason", f.Message))
					continue
				}
				return fmt.Errorf("estimate refund gas: %w", err)
			}
			f, err := c.dispatch(ctx, head, data, gas, &sentTx{refunds: chunk, word: w})
			if f != nil {
				c.mu.Lock()
				c.failRefundsLocked(chunk, f)
				c.mu.Unlock()
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// finishRefunds ends a refund transaction that reached the configured
// depth: each refund is applied, rejected, or was decided before (skipped:
// the chain says how), and otherwise goes back to the queue.
func (c *chain) finishRefunds(ctx context.Context, t *sentTx) error {
	r := t.receipt
	type outcome struct {
		s *settleflow.Settlement
		f *settleflow.Failure
	}
	out := map[[32]byte]outcome{}
	var skipped [][32]byte
	here := &settleflow.Settlement{ChainID: c.chainID.Int64(), Network: c.network, TxHash: r.TxHash.Hex(), BlockNumber: r.BlockNumber.Uint64()}
	if r.Status == types.ReceiptStatusSuccessful {
		applied := 0
		for _, l := range r.Logs {
			if l.Address == c.contract && len(l.Topics) >= 2 && l.Topics[0] == refundedEventID {
				applied++
			}
		}
		if applied > 0 {
			here.GasUsed = r.GasUsed / uint64(applied)
			if r.EffectiveGasPrice != nil {
				here.Fee = FormatUnits(new(big.Int).Mul(new(big.Int).SetUint64(here.GasUsed), r.EffectiveGasPrice), 18)
			}
		}
		for _, l := range r.Logs {
			if l.Address != c.contract || len(l.Topics) < 2 {
				continue
			}
			key := [32]byte(l.Topics[1])
			switch l.Topics[0] {
			case refundedEventID:
				s := *here
				out[key] = outcome{s: &s}
			case refundRejectedEventID:
				out[key] = outcome{f: c.rejection(l)}
			case refundSkippedEventID:
				skipped = append(skipped, key)
			}
		}
	}
	for _, key := range skipped {
		if _, ok := out[key]; ok {
			continue
		}
		s, f, err := c.refundOnChain(ctx, key)
		if err != nil {
			return err
		}
		out[key] = outcome{s, f}
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeTxLocked(t)
	var requeue []*ritem
	for _, it := range t.refunds {
		if it.tx != t {
			continue
		}
		it.tx = nil
		o, ok := out[it.key]
		switch {
		case r.Status != types.ReceiptStatusSuccessful && it.reverted+1 >= maxReverts:
			it.state, it.doneAt = stFailed, now
			it.failure = failure(CodeSettlementReverted, "refund transaction %s reverted in block %d, the %d time for this refund; nothing was refunded", r.TxHash.Hex(), r.BlockNumber.Uint64(), maxReverts)
		case r.Status != types.ReceiptStatusSuccessful:
			// The word's commitment changed under it (a settle mined
			// first): nothing was applied; send it again.
			it.reverted++
			it.state, it.queuedAt = stQueued, now
			requeue = append(requeue, it)
		case !ok || (o.s == nil && o.f == nil):
			it.state, it.queuedAt = stQueued, now
			requeue = append(requeue, it)
		case o.f != nil:
			it.state, it.doneAt, it.failure = stFailed, now, o.f
		default:
			it.state, it.doneAt, it.settlement = stConfirmed, now, o.s
		}
	}
	c.rqueue = append(requeue, c.rqueue...)
	c.log.Info("refund transaction confirmed", zap.Stringer("tx", r.TxHash), zap.Uint64("block", r.BlockNumber.Uint64()),
		zap.Uint64("status", r.Status), zap.Int("refunds", len(t.refunds)))
	return nil
}

// failRefundsLocked ends refunds with a failure and takes them off the queue.
func (c *chain) failRefundsLocked(rs []*ritem, f *settleflow.Failure) {
	now := c.now()
	for _, r := range rs {
		r.state, r.failure, r.doneAt, r.tx = stFailed, f, now, nil
	}
	c.dequeueRefundsLocked(rs)
}

func (c *chain) dequeueRefundsLocked(rs []*ritem) {
	if len(rs) == 0 {
		return
	}
	drop := make(map[*ritem]bool, len(rs))
	for _, r := range rs {
		drop[r] = true
	}
	q := c.rqueue[:0]
	for _, r := range c.rqueue {
		if !drop[r] {
			q = append(q, r)
		}
	}
	clear(c.rqueue[len(q):])
	c.rqueue = q
}
