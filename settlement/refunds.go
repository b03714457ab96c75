package settlement

import (
	"context"
	"errors"
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
	// charge is its charge's debit as read back from the chain, once read.
	charge *chargeRecord
	// notBefore holds it back until then: it waits for the payee's funds.
	notBefore time.Time
	// unsettledAt is the head at which its charge was first read as not
	// settled on chain, unsettledReads how many reads since said so: it
	// fails for that only once reads a confirmation depth apart agree (a
	// lagging node's one stale answer fails nothing); 0 while settled.
	unsettledAt    uint64
	unsettledReads int
	// payeeShort counts the times the contract rejected it because the
	// payee is owed less than it (not final: sent again after a backoff,
	// which grows with each rejection); 0 once applied.
	payeeShort int
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
// A read of the chain that fails is the refund's Err (the engine asks
// again later), never the whole call's: one flaky call must not hold up
// the other refunds.
func (c *chain) refundStatus(ctx context.Context, rc settleflow.RefundCharge) (settleflow.SettlementStatus, error) {
	st, err := c.readRefundStatus(ctx, rc)
	if err != nil {
		return settleflow.SettlementStatus{WorkflowID: rc.RefundID, Err: err}, nil
	}
	return st, nil
}

func (c *chain) readRefundStatus(ctx context.Context, rc settleflow.RefundCharge) (settleflow.SettlementStatus, error) {
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
	// A key rejected for good may have been rejected for the payee's
	// funds before (not final): the decision is its rejection for good.
	decision := func(logs []types.Log) *types.Log {
		for i := len(logs) - 1; i >= 0; i-- {
			if ev == refundedEventID || rejectionReason(&logs[i]) != rejectedPayeeOwed {
				return &logs[i]
			}
		}
		return nil
	}
	logs, err := c.searchLogs(ctx, [][]common.Hash{{ev}, {common.Hash(key)}}, func(l []types.Log) bool { return decision(l) != nil })
	if err != nil {
		return nil, nil, err
	}
	l := decision(logs)
	if l == nil {
		return nil, nil, fmt.Errorf("settlement: %s: refund %s is decided on chain but its event was not found (does the node keep logs since block %d?)", c.env, WorkflowIDFromKey(key), c.deployed)
	}
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
// bitmap word of the charges they refund. A word's refunds wait while a
// settle transaction writing that word is unmined: the word's commitment
// they resend may change.
// Refunds waiting for the payee's funds are due at their notBefore.
func (c *chain) flushRefunds(ctx context.Context, head *types.Header) error {
	now := time.Now()
	c.mu.Lock()
	var queued []*ritem
	for _, r := range c.rqueue {
		if !now.Before(r.notBefore) {
			queued = append(queued, r)
		}
	}
	n := len(queued)
	due := n >= c.cfg.BatchSize || (n > 0 && time.Since(queued[0].queuedAt) >= c.cfg.FlushInterval)
	// Words an unmined settle writes: their commitment may change under a
	// refund, whose refunds wait for it.
	busy := map[uint64]bool{}
	for _, t := range c.txs {
		if t.items != nil && t.receipt == nil {
			for _, it := range t.items {
				busy[it.charge.Sequence>>8] = true
			}
		}
	}
	c.mu.Unlock()
	if !due {
		return nil
	}
	groups := map[uint64][]*ritem{}
	var order []uint64
	// A read that fails holds back that refund (or that word's refunds)
	// to the next step; the others go on.
	var errs []error
	for _, r := range queued {
		// The charge's record is read once: a debit at the confirmation
		// depth does not change (a reorg deeper than it is out of scope).
		c.mu.Lock()
		rec := r.charge
		c.mu.Unlock()
		if rec == nil {
			var err error
			if rec, err = c.lookup(ctx, r.rc.Sequence); err != nil {
				errs = append(errs, err)
				continue
			}
			if rec != nil && !rec.declined {
				c.mu.Lock()
				r.charge = rec
				c.mu.Unlock()
			}
		}
		if !c.unsettledForGood(r, rec, head) {
			continue // read again at a later step
		}
		var f *settleflow.Failure
		switch {
		case rec == nil:
			f = failure(CodeInvalidCharge, "the charge of workflow %s (sequence %d) is not settled on chain (read again %d blocks later, still not): there is nothing to refund",
				r.rc.WorkflowID, r.rc.Sequence, max(c.cfg.Confirmations, 1))
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
		if busy[w] {
			continue
		}
		if _, ok := groups[w]; !ok {
			order = append(order, w)
		}
		groups[w] = append(groups[w], r)
	}
	for _, w := range order {
		h, err := c.history(ctx, w)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		customers, charges, runs, index := h.refundArgs()
		rs, missing := refundable(groups[w], index)
		if len(missing) > 0 {
			c.mu.Lock()
			for _, r := range missing {
				c.failRefundsLocked([]*ritem{r}, failure(CodeInvalidCharge,
					"the charge of workflow %s (sequence %d) is not among the debits of its bitmap word %d read back from the chain: refusing to refund it; nothing was refunded",
					r.rc.WorkflowID, r.rc.Sequence, w))
			}
			c.mu.Unlock()
			c.log.Error("refunds whose charge is not among its word's debits failed", zap.Uint64("word", w), zap.Int("refunds", len(missing)))
		}
		chunks := slices.Collect(slices.Chunk(rs, c.cfg.BatchSize))
		for len(chunks) > 0 {
			chunk := chunks[0]
			chunks = chunks[1:]
			keys := make([][32]byte, len(chunk))
			items := make([]*big.Int, len(chunk))
			for i, r := range chunk {
				keys[i], items[i] = r.key, packRefund(uint64(r.rc.Amount), uint16(index[r.rc.Sequence]))
			}
			data := settlementABI.PackRefund(new(big.Int).SetUint64(w), customers, charges, runs, keys, items)
			gas, err := c.estimate(ctx, head, data, 0)
			if err != nil {
				if len(chunk) > 1 && isGasCapError(err) {
					// Over the transaction or block gas cap: in halves.
					c.log.Info("refund transaction over the gas cap; splitting", zap.Int("refunds", len(chunk)))
					chunks = append([][]*ritem{chunk[:len(chunk)/2], chunk[len(chunk)/2:]}, chunks...)
					continue
				}
				if f := classifyRevert(err); f != nil && !strings.Contains(f.Message, "StaleCommitment") {
					c.log.Error("refund transaction refused by the chain; checking its refunds on chain before failing them", zap.Int("refunds", len(chunk)), zap.String("reason", f.Message))
					if err := c.failUndecidedRefunds(ctx, chunk, f); err != nil {
						errs = append(errs, err)
					}
					continue
				}
				errs = append(errs, fmt.Errorf("estimate refund gas: %w", err))
				continue
			}
			if err := c.dispatch(ctx, head, data, gas, &sentTx{refunds: chunk, word: w}); err != nil {
				return errors.Join(append(errs, err)...)
			}
		}
	}
	return errors.Join(errs...)
}

// unsettledForGood reports whether a refund may be decided on its charge's
// record rec as read at head: yes when rec is found; when it is not (the
// contract's settled() said no), only once a second read, at least the
// confirmation depth (1 block at least) after the first, says no again. A
// node behind the others (one answer of a load-balanced provider) can
// answer settled() from a block before the charge's: one such answer
// failed the refund for good.
func (c *chain) unsettledForGood(r *ritem, rec *chargeRecord, head *types.Header) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rec != nil {
		r.unsettledAt, r.unsettledReads = 0, 0
		return true
	}
	n := head.Number.Uint64()
	if r.unsettledReads == 0 {
		r.unsettledAt, r.unsettledReads = n, 1
		c.log.Warn("a refund's charge reads as not settled on chain; reading again before failing it",
			zap.String("refund", r.rc.RefundID), zap.Uint64("sequence", r.rc.Sequence), zap.Uint64("head", n))
		return false
	}
	r.unsettledReads++
	return n >= r.unsettledAt+max(c.cfg.Confirmations, 1)
}

// refundable splits a word's refunds into those whose charge is among the
// word's debits (index: the position of each debited sequence in the
// charges a refund resends) and those whose charge is not, which cannot be
// sent: an index they lack would name another charge.
func refundable(rs []*ritem, index map[uint64]int) (ok, missing []*ritem) {
	for _, r := range rs {
		if _, found := index[r.rc.Sequence]; found {
			ok = append(ok, r)
		} else {
			missing = append(missing, r)
		}
	}
	return ok, missing
}

// failUndecidedRefunds ends queued refunds the chain refused to apply:
// those whose key the contract has decided end as decided (once final;
// until then they stay queued); the others fail with f, once no
// transaction of the operator's is in flight. An error leaves every
// refund queued.
func (c *chain) failUndecidedRefunds(ctx context.Context, rs []*ritem, f *settleflow.Failure) error {
	if err := c.noneInFlight(ctx); err != nil {
		return err
	}
	type decided struct {
		s *settleflow.Settlement
		f *settleflow.Failure
	}
	out := map[*ritem]decided{}
	for _, r := range rs {
		s, rf, err := c.refundOnChain(ctx, r.key)
		if err != nil {
			return err
		}
		if s != nil || rf != nil {
			out[r] = decided{s, rf}
		}
	}
	if len(out) > 0 {
		if _, err := c.refreshHead(ctx); err != nil {
			return err
		}
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range rs {
		if r.state != stQueued || c.refunds[r.rc.RefundID] != r {
			continue
		}
		d, ok := out[r]
		switch {
		case !ok:
			c.failRefundsLocked([]*ritem{r}, failure(f.Code, "%s; the chain has not decided refund %s: nothing was refunded", f.Message, r.rc.RefundID))
		case !c.finalLocked(d.s.BlockNumber):
			// Decided, not yet final: stays queued.
		case d.f != nil:
			c.failRefundsLocked([]*ritem{r}, d.f)
		default:
			r.state, r.doneAt, r.settlement, r.tx = stConfirmed, now, d.s, nil
			c.dequeueRefundsLocked([]*ritem{r})
		}
	}
	return nil
}

// finishRefunds ends a refund transaction that reached the configured
// depth: each refund is applied, rejected for good, or was decided before
// (skipped: the chain says how); one rejected because the payee is owed
// too little waits for the payee's funds and is sent again (the contract
// leaves it undecided); any other goes back to the queue. A reverted
// transaction fails no refund the chain has decided, nor any before
// maxReverts reverts.
func (c *chain) finishRefunds(ctx context.Context, t *sentTx) error {
	r := t.receipt
	type outcome struct {
		s          *settleflow.Settlement
		f          *settleflow.Failure
		payeeShort bool // rejected for now: the payee is owed too little
	}
	out := map[[32]byte]outcome{}
	var skipped [][32]byte
	here := &settleflow.Settlement{ChainID: c.chainID.Int64(), Network: c.network, TxHash: r.TxHash.Hex(), BlockNumber: r.BlockNumber.Uint64()}
	reverted := r.Status != types.ReceiptStatusSuccessful
	if !reverted {
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
				if rejectionReason(l) == rejectedPayeeOwed {
					out[key] = outcome{payeeShort: true}
				} else {
					out[key] = outcome{f: c.rejection(l)}
				}
			case refundSkippedEventID:
				skipped = append(skipped, key)
			}
		}
	} else {
		// Nothing was applied by it; another transaction may have decided
		// some of its refunds.
		for _, it := range t.refunds {
			if it.tx == t {
				skipped = append(skipped, it.key)
			}
		}
	}
	// Each decision read is kept on t: a read that fails costs the next
	// step only the ones still missing.
	var errs []error
	for _, key := range skipped {
		if _, ok := out[key]; ok {
			continue
		}
		if d, ok := t.decided[key]; ok {
			out[key] = outcome{s: d.s, f: d.f}
			continue
		}
		s, f, err := c.refundOnChain(ctx, key)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if s != nil || f != nil {
			out[key] = outcome{s: s, f: f}
			c.mu.Lock()
			if t.decided == nil {
				t.decided = map[[32]byte]refundDecision{}
			}
			t.decided[key] = refundDecision{s, f}
			c.mu.Unlock()
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%d refunds' decisions not read yet: %w", len(errs), err)
	}
	giveUp := false
	if reverted {
		giveUp = c.noneInFlight(ctx) == nil
	}
	if _, err := c.refreshHead(ctx); err != nil {
		return err
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeTxLocked(t)
	var requeue []*ritem
	waiting := 0
	for _, it := range t.refunds {
		if it.tx != t {
			continue
		}
		it.tx = nil
		o, ok := out[it.key]
		decided := ok && (o.s != nil || o.f != nil)
		switch {
		case decided && o.s != nil && !c.finalLocked(o.s.BlockNumber):
			// Decided by another transaction, not final yet: sent again,
			// it is skipped and read back.
			it.state, it.queuedAt = stQueued, now
			requeue = append(requeue, it)
		case decided && o.f != nil:
			it.state, it.doneAt, it.failure = stFailed, now, o.f
		case decided:
			it.state, it.doneAt, it.settlement = stConfirmed, now, o.s
			it.payeeShort = 0
		case o.payeeShort:
			// Not final: the payee has claimed what the refund needs. Sent
			// again, later and later, until fundPayee restores it.
			it.payeeShort++
			it.state, it.queuedAt = stQueued, now
			it.notBefore = time.Now().Add(c.payeeBackoff(it.payeeShort))
			requeue = append(requeue, it)
			waiting++
		case reverted && it.reverted+1 >= maxReverts && giveUp:
			it.state, it.doneAt = stFailed, now
			it.failure = failure(CodeSettlementReverted, "refund transaction %s reverted in block %d, the %d time for this refund, and the chain has not decided it; nothing was refunded", r.TxHash.Hex(), r.BlockNumber.Uint64(), maxReverts)
		default:
			// Reverted (the word's commitment changed under it: a settle
			// mined first) or not reached: nothing was applied; send it
			// again.
			if reverted {
				it.reverted++
			}
			it.state, it.queuedAt = stQueued, now
			requeue = append(requeue, it)
		}
	}
	c.rqueue = append(requeue, c.rqueue...)
	c.log.Info("refund transaction confirmed", zap.Stringer("tx", r.TxHash), zap.Uint64("block", r.BlockNumber.Uint64()),
		zap.Uint64("status", r.Status), zap.Int("refunds", len(t.refunds)))
	if waiting > 0 {
		c.log.Warn("refunds wait for the payee's funds: the contract rejected them for now because the payee is owed less than they need (it claimed its earnings); they are sent again with backoff, and go through once fundPayee restores the payee's funds",
			zap.Stringer("tx", r.TxHash), zap.Int("refunds", waiting), zap.Stringer("payee", c.payee))
	}
	return nil
}

// payeeBackoff is how long a refund rejected n times because the payee is
// owed too little waits before it is sent again: 8 polls (at least a
// second), doubling, at most 64 polls (at least 10 s) or 10 minutes.
func (c *chain) payeeBackoff(n int) time.Duration {
	base := max(8*c.cfg.PollInterval, time.Second)
	limit := min(max(64*c.cfg.PollInterval, 10*time.Second), 10*time.Minute)
	return min(base<<min(n-1, 16), limit)
}

// refundDecision is how the chain decided a refund key: applied (s) or
// rejected (f, with s the transaction that decided).
type refundDecision struct {
	s *settleflow.Settlement
	f *settleflow.Failure
}

// rejectionReason is a RefundRejected log's reason; 0 if unreadable.
func rejectionReason(l *types.Log) uint64 {
	ev, err := settlementABI.UnpackRefundRejectedEvent(l)
	if err != nil || !ev.Reason.IsUint64() {
		return 0
	}
	return ev.Reason.Uint64()
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
