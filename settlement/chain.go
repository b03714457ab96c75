package settlement

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/params"
	"github.com/ethereum/go-ethereum/rpc"
	"go.uber.org/zap"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/settlement/contracts/bindings"
)

var (
	settlementABI = bindings.NewSettleflowSettlement()
	erc20ABI      = bindings.NewTestUSD()

	settledEventID        = settlementABI.GetABI().Events["Settled"].ID
	alreadySettledEventID = settlementABI.GetABI().Events["AlreadySettled"].ID
)

type itemState int

const (
	stQueued    itemState = iota // waiting for a batch
	stSent                       // in a transaction, not final
	stConfirmed                  // final at the configured depth
	stFailed                     // failed for good
)

// item is one charge the chain settles.
type item struct {
	charge     settleflow.Charge
	key        [32]byte // the workflow id as the contract's event records it
	seq        *big.Int // charge.Sequence: the contract's idempotency key
	amount     *big.Int // base units
	state      itemState
	tx         *sentTx
	queuedAt   time.Time
	doneAt     time.Time
	settlement *settleflow.Settlement // set when confirmed
	failure    *settleflow.Failure
}

// sentTx is one nonce's settlement transaction with every version signed for
// it (replacements), newest last.
type sentTx struct {
	nonce    uint64
	items    []*item
	txs      []*types.Transaction
	sentAt   time.Time
	sentHead uint64
	receipt  *types.Receipt
	orphaned time.Time // when the nonce was seen used by no tx of ours
}

func (t *sentTx) latest() *types.Transaction { return t.txs[len(t.txs)-1] }

// chain settles one environment's charges on one chain. A single goroutine
// (run) sends and tracks transactions; Submit and Status only touch the
// in-memory state under mu, plus read-only calls.
type chain struct {
	clock    settleflow.Clock
	env      settleflow.Environment
	cfg      ChainConfig
	b        Backend
	log      *zap.Logger
	key      *ecdsa.PrivateKey
	from     common.Address
	signer   types.Signer
	chainID  *big.Int
	network  string
	contract common.Address
	token    common.Address
	payee    common.Address
	decimals uint8
	deployed uint64 // the contract's deployment block: no Settled event is older
	closer   func()
	lease    settleflow.SettlementLease // nil: always the sender
	// term is the lease term of the current step (1 without a lease); 0:
	// not the sender. Touched by the worker goroutine only.
	term uint64

	mu        sync.Mutex
	items     map[string]*item
	bySeq     map[uint64]*item // the live item holding each sequence
	queue     []*item
	txs       []*sentTx
	nonce     uint64
	nonceOK   bool
	head      uint64
	finalized uint64

	wake   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

// newChain connects and checks one environment's chain, then starts its worker.
func newChain(ctx context.Context, env settleflow.Environment, cc ChainConfig, log *zap.Logger, clock settleflow.Clock, lease settleflow.SettlementLease) (_ *chain, err error) {
	cc = cc.withDefaults()
	c := &chain{env: env, cfg: cc, clock: clock, b: cc.Client, lease: lease, items: map[string]*item{}, bySeq: map[uint64]*item{}, wake: make(chan struct{}, 1), done: make(chan struct{})}
	if c.b == nil {
		if cc.RPCURL == "" {
			return nil, fmt.Errorf("settlement: %s: no RPCURL or Client configured", env)
		}
		cl, err := rpc.DialContext(ctx, cc.RPCURL)
		if err != nil {
			return nil, fmt.Errorf("settlement: %s: dial %s: %w", env, redact(cc.RPCURL), err)
		}
		c.b = ethclient.NewClient(cl)
		c.closer = cl.Close
	}
	defer func() {
		if err != nil && c.closer != nil {
			c.closer()
		}
	}()
	id, err := c.b.ChainID(ctx)
	if err != nil {
		return nil, fmt.Errorf("settlement: %s: chain id: %w", env, err)
	}
	if !id.IsInt64() {
		return nil, fmt.Errorf("settlement: %s: chain id %s out of range", env, id)
	}
	if env == settleflow.Live && cc.ChainID == 0 {
		return nil, fmt.Errorf("settlement: live: ChainID must be configured (the node reports %s)", id)
	}
	if cc.ChainID != 0 && id.Int64() != cc.ChainID {
		return nil, fmt.Errorf("settlement: %s: node is on chain id %s, configured %d", env, id, cc.ChainID)
	}
	if err := CheckChainKind(env, id.Int64()); err != nil {
		return nil, err
	}
	c.chainID = id
	c.signer = types.LatestSignerForChainID(id)
	c.network = cc.Network
	if c.network == "" {
		c.network = NetworkName(id.Int64())
	}
	if c.key, err = cc.signingKey(); err != nil {
		return nil, err
	}
	c.from = crypto.PubkeyToAddress(c.key.PublicKey)
	c.contract = cc.Contract
	if c.contract == (common.Address{}) {
		return nil, fmt.Errorf("settlement: %s: Contract not configured", env)
	}
	code, err := c.b.CodeAt(ctx, c.contract, nil)
	if err != nil {
		return nil, fmt.Errorf("settlement: %s: contract code: %w", env, err)
	}
	if len(code) == 0 {
		return nil, fmt.Errorf("settlement: %s: no contract at %s on chain %s", env, c.contract, id)
	}
	if c.token, err = c.callAddress(ctx, settlementABI.PackToken(), c.contract); err != nil {
		return nil, err
	}
	if c.payee, err = c.callAddress(ctx, settlementABI.PackPayee(), c.contract); err != nil {
		return nil, err
	}
	op, err := c.callAddress(ctx, settlementABI.PackOperator(), c.contract)
	if err != nil {
		return nil, err
	}
	out, err := c.b.CallContract(ctx, ethereum.CallMsg{To: &c.contract, Data: settlementABI.PackDeployedAt()}, nil)
	if err != nil {
		return nil, fmt.Errorf("settlement: %s: call %s: %w", env, c.contract, err)
	}
	deployed, err := settlementABI.UnpackDeployedAt(out)
	if err != nil || !deployed.IsUint64() {
		return nil, fmt.Errorf("settlement: %s: %s is not a SettleflowSettlement contract with a sequence bitmap (deployedAt: %v)", env, c.contract, err)
	}
	c.deployed = deployed.Uint64()
	if c.cfg.BlockTime <= 0 {
		c.cfg.BlockTime = estimateBlockTime(ctx, c.b, 12*time.Second)
	}
	switch {
	case cc.Token != (common.Address{}) && cc.Token != c.token:
		return nil, fmt.Errorf("settlement: %s: contract's token is %s, configured %s", env, c.token, cc.Token)
	case cc.Payee != (common.Address{}) && cc.Payee != c.payee:
		return nil, fmt.Errorf("settlement: %s: contract's payee is %s, configured %s", env, c.payee, cc.Payee)
	case op != c.from:
		return nil, fmt.Errorf("settlement: %s: signer %s is not the contract's operator %s", env, c.from, op)
	}
	out, err = c.b.CallContract(ctx, ethereum.CallMsg{To: &c.token, Data: erc20ABI.PackDecimals()}, nil)
	if err != nil {
		return nil, fmt.Errorf("settlement: %s: token decimals: %w", env, err)
	}
	if c.decimals, err = erc20ABI.UnpackDecimals(out); err != nil || c.decimals < 2 {
		return nil, fmt.Errorf("settlement: %s: token %s has unusable decimals (%d, %v)", env, c.token, c.decimals, err)
	}
	c.log = log.With(zap.String("env", string(env)), zap.Int64("chainId", id.Int64()), zap.String("network", c.network))
	c.log.Info("settlement chain ready",
		zap.Stringer("contract", c.contract), zap.Stringer("token", c.token), zap.Stringer("payee", c.payee),
		zap.Stringer("operator", c.from), zap.Uint64("confirmations", cc.Confirmations))

	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c.cancel = cancel
	go c.run(runCtx)
	return c, nil
}

func redact(url string) string {
	if i := strings.Index(url, "://"); i >= 0 {
		rest := url[i+3:]
		if j := strings.IndexAny(rest, "/?"); j >= 0 {
			return url[:i+3] + rest[:j] + "/…"
		}
	}
	return url
}

func (c *chain) callAddress(ctx context.Context, data []byte, to common.Address) (common.Address, error) {
	out, err := c.b.CallContract(ctx, ethereum.CallMsg{To: &to, Data: data}, nil)
	if err != nil {
		return common.Address{}, fmt.Errorf("settlement: %s: call %s: %w", c.env, to, err)
	}
	if len(out) != 32 {
		return common.Address{}, fmt.Errorf("settlement: %s: %s is not a SettleflowSettlement contract", c.env, to)
	}
	return common.BytesToAddress(out[12:]), nil
}

func (c *chain) close() {
	c.cancel()
	<-c.done
	if c.closer != nil {
		c.closer()
	}
}

func (c *chain) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// busy reports whether the chain has charges that are not final yet.
func (c *chain) busy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.queue) > 0 || len(c.txs) > 0
}

// ---- Submit ----

// prepare validates a charge and returns its item (not yet registered).
func (c *chain) prepare(ch settleflow.Charge) (*item, error) {
	key, err := WorkflowKey(ch.WorkflowID)
	if err != nil {
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
	return &item{charge: ch, key: key, seq: new(big.Int).SetUint64(ch.Sequence), amount: amt}, nil
}

// submit queues charges, adding those it refuses for good to refused (by
// workflow id). A charge is refused for what is wrong with it alone: a bad
// id, sequence or currency, a sequence another workflow holds, or a balance
// or allowance that cannot cover it after the charges before it. An error
// return is transient (RPC trouble).
func (c *chain) submit(ctx context.Context, charges []settleflow.Charge, refused map[string]*settleflow.Failure) error {
	fresh := make([]*item, 0, len(charges))
	for _, ch := range charges {
		it, err := c.prepare(ch)
		if err != nil {
			refused[ch.WorkflowID] = failureOf(err)
			continue
		}
		fresh = append(fresh, it)
	}
	c.mu.Lock()
	owed := c.committedLocked()
	added := fresh[:0]
	seen := map[string]bool{}
	seqs := map[uint64]string{}
	for _, it := range fresh {
		if err := c.seqConflictLocked(it, seqs); err != nil {
			refused[it.charge.WorkflowID] = failureOf(err)
			continue
		}
		if old, ok := c.items[it.charge.WorkflowID]; (ok && old.state != stFailed) || seen[it.charge.WorkflowID] {
			continue // already taken: Submit is idempotent
		}
		seen[it.charge.WorkflowID] = true
		seqs[it.charge.Sequence] = it.charge.WorkflowID
		added = append(added, it)
	}
	c.mu.Unlock()
	if len(added) == 0 {
		return nil
	}
	bal, allow, err := c.funds(ctx)
	if err != nil {
		return err // RPC trouble: transient
	}
	// Take charges in order while the operator can cover them; refuse the
	// rest, each for itself.
	need := new(big.Int).Set(owed)
	affordable := added[:0]
	for _, it := range added {
		next := new(big.Int).Add(need, it.amount)
		switch {
		case bal.Cmp(next) < 0:
			refused[it.charge.WorkflowID] = failure(CodeInsufficientFunds, "operator %s holds %s base units of token %s; %s are needed with this charge", c.from, bal, c.token, next)
		case allow.Cmp(next) < 0:
			refused[it.charge.WorkflowID] = failure(CodeInsufficientAllowance, "operator %s allows the contract %s base units; %s are needed with this charge", c.from, allow, next)
		default:
			need = next
			affordable = append(affordable, it)
		}
	}
	now := c.now()
	c.mu.Lock()
	for _, it := range affordable {
		if old, ok := c.items[it.charge.WorkflowID]; ok && old.state != stFailed {
			continue
		}
		if c.seqConflictLocked(it, nil) != nil {
			continue // taken meanwhile by a concurrent Submit; that one wins
		}
		it.queuedAt = now
		c.items[it.charge.WorkflowID] = it
		c.bySeq[it.charge.Sequence] = it
		c.queue = append(c.queue, it)
	}
	full := len(c.queue) >= c.cfg.BatchSize
	c.mu.Unlock()
	if full {
		c.poke()
	}
	return nil
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

// committedLocked is what the operator still owes: queued charges and those
// in transactions not mined yet.
func (c *chain) committedLocked() *big.Int {
	sum := new(big.Int)
	for _, it := range c.queue {
		sum.Add(sum, it.amount)
	}
	for _, t := range c.txs {
		if t.receipt == nil {
			for _, it := range t.items {
				sum.Add(sum, it.amount)
			}
		}
	}
	return sum
}

// funds reads the operator's token balance and its allowance to the contract.
func (c *chain) funds(ctx context.Context) (bal, allow *big.Int, err error) {
	out, err := c.b.CallContract(ctx, ethereum.CallMsg{To: &c.token, Data: erc20ABI.PackBalanceOf(c.from)}, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("settlement: %s: balance: %w", c.env, err)
	}
	if bal, err = erc20ABI.UnpackBalanceOf(out); err != nil {
		return nil, nil, fmt.Errorf("settlement: %s: balance: %w", c.env, err)
	}
	out, err = c.b.CallContract(ctx, ethereum.CallMsg{To: &c.token, Data: erc20ABI.PackAllowance(c.from, c.contract)}, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("settlement: %s: allowance: %w", c.env, err)
	}
	if allow, err = erc20ABI.UnpackAllowance(out); err != nil {
		return nil, nil, fmt.Errorf("settlement: %s: allowance: %w", c.env, err)
	}
	return bal, allow, nil
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
	key, err := WorkflowKey(ch.WorkflowID)
	if err != nil || ch.Sequence == 0 {
		return st, nil // cannot have been settled; Submit says why
	}
	seq := new(big.Int).SetUint64(ch.Sequence)
	s, owner, err := c.lookup(ctx, seq)
	if err != nil || s == nil {
		return st, err
	}
	if owner != key {
		st.State = settleflow.SettlementFailed
		st.Failure = conflict(ch, owner, s)
		return st, nil
	}
	st.Settlement = s
	if _, err := c.refreshHead(ctx); err != nil {
		return st, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s.Confirmations = c.confirmationsLocked(s.BlockNumber)
	if c.finalLocked(s.BlockNumber) {
		st.State = settleflow.SettlementConfirmed
		if _, ok := c.items[ch.WorkflowID]; !ok {
			saved := *s
			it := &item{charge: ch, key: key, seq: seq, state: stConfirmed, settlement: &saved, doneAt: c.now()}
			c.items[ch.WorkflowID] = it
			c.bySeq[ch.Sequence] = it
		}
	} else {
		st.State = settleflow.SettlementPending
	}
	return st, nil
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

// conflict is the failure of a charge whose sequence was settled on chain
// for another workflow: this one was never charged.
func conflict(ch settleflow.Charge, owner [32]byte, s *settleflow.Settlement) *settleflow.Failure {
	return failure(CodeInvalidCharge, "sequence %d was settled for workflow %s (transaction %s, block %d), not for %s; nothing was charged for %s",
		ch.Sequence, WorkflowIDFromKey(owner), s.TxHash, s.BlockNumber, ch.WorkflowID, ch.WorkflowID)
}

// defaultLogRange is the window of a log search when the node refuses to
// search the contract's whole life in one query.
const defaultLogRange = 10_000

// lookup finds a sequence's settlement on chain: the contract's settled view,
// then its Settled event (indexed by sequence), which also names the workflow
// it was settled for (owner). nil if the sequence never settled.
func (c *chain) lookup(ctx context.Context, seq *big.Int) (s *settleflow.Settlement, owner [32]byte, err error) {
	out, err := c.b.CallContract(ctx, ethereum.CallMsg{To: &c.contract, Data: settlementABI.PackSettled(seq)}, nil)
	if err != nil {
		return nil, owner, fmt.Errorf("settlement: %s: settled: %w", c.env, err)
	}
	done, err := settlementABI.UnpackSettled(out)
	if err != nil {
		return nil, owner, fmt.Errorf("settlement: %s: settled: %w", c.env, err)
	}
	if !done {
		return nil, owner, nil
	}
	found, err := c.settledEvents(ctx, []*big.Int{seq})
	if err != nil {
		return nil, owner, err
	}
	l := found[seq.Uint64()]
	if l == nil {
		// The bit is set, so the event exists at or below the block the view
		// read; a node that prunes logs (or a reorg in between) hides it.
		return nil, owner, fmt.Errorf("settlement: %s: sequence %s is settled on chain but no Settled event was found (does the node keep logs since block %d?)", c.env, seq, c.deployed)
	}
	return &settleflow.Settlement{ChainID: c.chainID.Int64(), Network: c.network, TxHash: l.TxHash.Hex(), BlockNumber: l.BlockNumber},
		[32]byte(l.Topics[1]), nil
}

// settledEvents searches the contract's Settled events for seqs (at most a
// batch), from its deployment to the head: in one query unless LogRange is
// set or the node refuses, else in windows of LogRange blocks from the head
// down (recent settlements are found first) until every one is found.
func (c *chain) settledEvents(ctx context.Context, seqs []*big.Int) (map[uint64]*types.Log, error) {
	topics := make([]common.Hash, len(seqs))
	for i, n := range seqs {
		topics[i] = common.BigToHash(n)
	}
	q := ethereum.FilterQuery{
		Addresses: []common.Address{c.contract},
		Topics:    [][]common.Hash{{settledEventID}, nil, topics},
	}
	found := map[uint64]*types.Log{}
	keep := func(logs []types.Log) {
		for i := range logs {
			l := &logs[i]
			if l.Removed || len(l.Topics) != 4 {
				continue
			}
			if n := new(big.Int).SetBytes(l.Topics[2][:]); n.IsUint64() && found[n.Uint64()] == nil {
				found[n.Uint64()] = l
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
			return nil, fmt.Errorf("settlement: %s: settled events: %w", c.env, err)
		}
		c.log.Info("log search over the contract's life refused; searching in windows", zap.Error(err))
		window = defaultLogRange
	}
	head, err := c.b.BlockNumber(ctx)
	if err != nil {
		return nil, fmt.Errorf("settlement: %s: head: %w", c.env, err)
	}
	for to := head; ; {
		from := c.deployed
		if to >= c.deployed+window {
			from = to - window + 1
		}
		q.FromBlock, q.ToBlock = new(big.Int).SetUint64(from), new(big.Int).SetUint64(to)
		logs, err := c.b.FilterLogs(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("settlement: %s: settled events in blocks %d-%d: %w", c.env, from, to, err)
		}
		keep(logs)
		if len(found) >= len(seqs) || from <= c.deployed {
			return found, nil
		}
		to = from - 1
	}
}

// ---- the worker ----

func (c *chain) run(ctx context.Context) {
	defer close(c.done)
	t := time.NewTicker(c.cfg.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-c.wake:
		}
		stepCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		if err := c.step(stepCtx); err != nil && ctx.Err() == nil {
			c.log.Warn("settlement step failed; retrying", zap.Error(err))
		}
		cancel()
	}
}

// refreshHead reads the head and, when depth is "finalized", the finalized
// block, and keeps them for Status.
func (c *chain) refreshHead(ctx context.Context) (*types.Header, error) {
	head, err := c.b.HeaderByNumber(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("head: %w", err)
	}
	var fin uint64
	if c.cfg.Confirmations == 0 {
		if fh, err := c.b.HeaderByNumber(ctx, big.NewInt(int64(rpc.FinalizedBlockNumber))); err == nil {
			fin = fh.Number.Uint64()
		}
	}
	c.mu.Lock()
	c.head = head.Number.Uint64()
	c.finalized = fin
	c.mu.Unlock()
	return head, nil
}

func (c *chain) step(ctx context.Context) error {
	c.followLease()
	head, err := c.refreshHead(ctx)
	if err != nil {
		return err
	}
	if err := c.track(ctx, head); err != nil {
		return err
	}
	if c.term != 0 {
		if err := c.flush(ctx, head); err != nil {
			return err
		}
	}
	c.prune()
	return nil
}

// leaseTerm is the lease's current term; 1 without a lease.
func (c *chain) leaseTerm() uint64 {
	if c.lease == nil {
		return 1
	}
	return c.lease.Term()
}

// errLeaseLost stops a send begun under a term that has ended.
var errLeaseLost = errors.New("the settlement lease was lost: not sending")

// sending reports whether this step may still send: the lease term it began
// with holds.
func (c *chain) sending() bool { return c.term != 0 && c.leaseTerm() == c.term }

// followLease starts a step under the lease's current term. A new term
// reads the nonce back from the chain (another holder may have sent in
// between); the end of one drops the charges queued and not sent, which
// the new holder's engine submits again (the contract keeps each single).
// Transactions already sent are still followed to their receipts.
func (c *chain) followLease() {
	term := c.leaseTerm()
	if term == c.term {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if term == 0 {
		dropped := len(c.queue)
		for _, it := range c.queue {
			if c.items[it.charge.WorkflowID] == it {
				delete(c.items, it.charge.WorkflowID)
			}
			if c.bySeq[it.charge.Sequence] == it {
				delete(c.bySeq, it.charge.Sequence)
			}
		}
		clear(c.queue)
		c.queue = c.queue[:0]
		c.log.Warn("settlement lease lost: sending stops; unsent charges dropped for the new holder", zap.Int("dropped", dropped))
	} else {
		c.nonceOK = false
		if c.lease != nil {
			c.log.Info("settlement lease held: sending, from the chain's nonce", zap.Uint64("term", term))
		}
	}
	c.term = term
}

func (c *chain) prune() {
	cut := c.now().Add(-c.cfg.Retain)
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, it := range c.items {
		if (it.state == stConfirmed || it.state == stFailed) && it.doneAt.Before(cut) {
			delete(c.items, id)
			if c.bySeq[it.charge.Sequence] == it {
				delete(c.bySeq, it.charge.Sequence)
			}
		}
	}
}

// flush sends every batch that is due: full, or its oldest charge waited
// FlushInterval.
func (c *chain) flush(ctx context.Context, head *types.Header) error {
	for {
		c.mu.Lock()
		n := len(c.queue)
		due := n >= c.cfg.BatchSize || (n > 0 && time.Since(c.queue[0].queuedAt) >= c.cfg.FlushInterval)
		if !due {
			c.mu.Unlock()
			return nil
		}
		batch := append([]*item(nil), c.queue[:min(n, c.cfg.BatchSize)]...)
		c.mu.Unlock()
		if err := c.send(ctx, head, batch); err != nil {
			return err
		}
	}
}

// fail ends items with a failure and takes them off the queue.
func (c *chain) failLocked(items []*item, f *settleflow.Failure) {
	now := c.now()
	for _, it := range items {
		it.state = stFailed
		it.failure = f
		it.doneAt = now
		it.tx = nil
	}
	c.dequeueLocked(items)
}

func (c *chain) dequeueLocked(items []*item) {
	drop := make(map[*item]bool, len(items))
	for _, it := range items {
		drop[it] = true
	}
	q := c.queue[:0]
	for _, it := range c.queue {
		if !drop[it] {
			q = append(q, it)
		}
	}
	clear(c.queue[len(q):])
	c.queue = q
}

// send builds, signs and sends one batch's transaction.
func (c *chain) send(ctx context.Context, head *types.Header, batch []*item) error {
	bal, allow, err := c.funds(ctx)
	if err != nil {
		return err
	}
	c.mu.Lock()
	inflight := new(big.Int)
	for _, t := range c.txs {
		if t.receipt == nil {
			for _, it := range t.items {
				inflight.Add(inflight, it.amount)
			}
		}
	}
	c.mu.Unlock()
	avail := new(big.Int).Sub(bal, inflight)
	availAllow := new(big.Int).Sub(allow, inflight)
	var ok, poor, unallowed []*item
	sum := new(big.Int)
	for _, it := range batch {
		next := new(big.Int).Add(sum, it.amount)
		switch {
		case next.Cmp(avail) > 0:
			poor = append(poor, it)
		case next.Cmp(availAllow) > 0:
			unallowed = append(unallowed, it)
		default:
			ok = append(ok, it)
			sum = next
		}
	}
	// A charge that cannot be paid may have settled in an earlier life: the
	// contract skips it at no charge, so it goes along instead of failing.
	for _, group := range []*[]*item{&poor, &unallowed} {
		keep := (*group)[:0]
		for _, it := range *group {
			s, _, err := c.lookup(ctx, it.seq)
			if err != nil {
				return err
			}
			if s != nil {
				ok = append(ok, it) // finish tells whether it was this workflow's
			} else {
				keep = append(keep, it)
			}
		}
		*group = keep
	}
	c.mu.Lock()
	if len(poor) > 0 {
		c.failLocked(poor, failure(CodeInsufficientFunds, "operator %s holds %s base units of token %s, not enough for this charge", c.from, bal, c.token))
	}
	if len(unallowed) > 0 {
		c.failLocked(unallowed, failure(CodeInsufficientAllowance, "operator %s allows the contract %s base units, not enough for this charge", c.from, allow))
	}
	c.mu.Unlock()
	if len(ok) == 0 {
		return nil
	}

	// In sequence order, consecutive charges share the contract's bitmap
	// words: one storage write per word.
	slices.SortStableFunc(ok, func(a, b *item) int { return a.seq.Cmp(b.seq) })
	charges := make([]bindings.SettleflowSettlementCharge, len(ok))
	for i, it := range ok {
		charges[i] = bindings.SettleflowSettlementCharge{WorkflowId: it.key, Sequence: it.seq, CustomerRef: CustomerRef(it.charge.CustomerID), Amount: it.amount}
	}
	data := settlementABI.PackSettle(charges)
	gasCap := params.MaxTxGas // EIP-7825
	if head.GasLimit > 0 && head.GasLimit < gasCap {
		gasCap = head.GasLimit
	}
	gas, err := c.b.EstimateGas(ctx, ethereum.CallMsg{From: c.from, To: &c.contract, Data: data})
	if err == nil && gas+gas/5 > gasCap && len(ok) > 1 {
		err = errTooMuchGas
	}
	if err != nil {
		if len(ok) > 1 && isGasCapError(err) {
			// Over the transaction gas cap (EIP-7825): send half now; the
			// rest stays queued for the next batch.
			c.log.Info("settlement batch over the gas cap; splitting", zap.Int("charges", len(ok)))
			return c.send(ctx, head, ok[:len(ok)/2])
		}
		if f := classifyRevert(err); f != nil {
			c.mu.Lock()
			c.failLocked(ok, f)
			c.mu.Unlock()
			c.log.Error("settlement batch refused by the chain", zap.Int("charges", len(ok)), zap.String("code", string(f.Code)), zap.String("reason", f.Message))
			return nil
		}
		return fmt.Errorf("estimate gas: %w", err)
	}
	gas = min(gas+gas/5+20_000, gasCap)
	tip, feeCap, err := fees(ctx, c.b, head, c.cfg.TipCap, c.cfg.MaxFeeCap)
	if err != nil {
		return err
	}
	if !c.sending() {
		return errLeaseLost
	}
	if !c.nonceOK {
		n, err := c.b.PendingNonceAt(ctx, c.from)
		if err != nil {
			return fmt.Errorf("nonce: %w", err)
		}
		c.mu.Lock()
		c.nonce, c.nonceOK = n, true
		c.mu.Unlock()
	}
	tx, err := types.SignNewTx(c.key, c.signer, &types.DynamicFeeTx{
		ChainID: c.chainID, Nonce: c.nonce, GasTipCap: tip, GasFeeCap: feeCap, Gas: gas, To: &c.contract, Data: data,
	})
	if err != nil {
		return fmt.Errorf("sign: %w", err)
	}
	// Logged before it leaves: a process killed right after sending still
	// shows which transaction, under which nonce, it may have sent.
	c.log.Info("settlement sending", zap.Stringer("tx", tx.Hash()), zap.Uint64("nonce", tx.Nonce()), zap.Int("charges", len(ok)))
	uncertain := false // the node may or may not have it
	if err := c.b.SendTransaction(ctx, tx); err != nil && !isAlreadyKnown(err) {
		var rpcErr rpc.Error
		switch {
		case isInsufficientGasFunds(err):
			c.mu.Lock()
			c.failLocked(ok, failure(CodeInsufficientGasFunds, "operator %s cannot pay for gas: %v", c.from, err))
			c.mu.Unlock()
			return nil
		case errors.As(err, &rpcErr):
			// The node refused the transaction (nonce too low, underpriced,
			// ...): nothing was sent; resync the nonce and retry next step.
			c.mu.Lock()
			c.nonceOK = false
			c.mu.Unlock()
			return fmt.Errorf("send: %w", err)
		}
		// Transport trouble: the node may have it. Track it as sent; it is
		// rebroadcast if the node does not know it.
		c.log.Warn("send failed; will rebroadcast", zap.Stringer("tx", tx.Hash()), zap.Uint64("nonce", tx.Nonce()), zap.Error(err))
		uncertain = true
	}
	t := &sentTx{nonce: tx.Nonce(), items: ok, txs: []*types.Transaction{tx}, sentAt: time.Now(), sentHead: head.Number.Uint64()}
	c.mu.Lock()
	c.nonce++
	c.txs = append(c.txs, t)
	for _, it := range ok {
		it.state = stSent
		it.tx = t
	}
	c.dequeueLocked(ok)
	c.mu.Unlock()
	if uncertain {
		// Not "sent": the node did not confirm taking it (a process
		// stopping mid-send cancels it, and its successor rightly reuses
		// the nonce if the node never saw it).
		return nil
	}
	c.log.Info("settlement sent", zap.Stringer("tx", tx.Hash()), zap.Uint64("nonce", tx.Nonce()), zap.Int("charges", len(ok)),
		zap.Stringer("total", sum), zap.Uint64("gas", gas), zap.Stringer("tipCap", tip), zap.Stringer("feeCap", feeCap))
	return nil
}

// track follows every unfinished transaction: receipts, reorgs, depth,
// stuck and dropped transactions.
func (c *chain) track(ctx context.Context, head *types.Header) error {
	c.mu.Lock()
	txs := append([]*sentTx(nil), c.txs...)
	c.mu.Unlock()
	var latestNonce *uint64
	for _, t := range txs {
		if t.receipt != nil {
			h, err := c.b.HeaderByNumber(ctx, t.receipt.BlockNumber)
			if err != nil && !errors.Is(err, ethereum.NotFound) {
				return fmt.Errorf("header: %w", err)
			}
			if err != nil || h.Hash() != t.receipt.BlockHash {
				c.log.Warn("settlement transaction reorged out; re-checking", zap.Stringer("tx", t.receipt.TxHash),
					zap.Uint64("block", t.receipt.BlockNumber.Uint64()))
				c.mu.Lock()
				t.receipt = nil
				t.sentAt, t.sentHead = time.Now(), head.Number.Uint64()
				c.mu.Unlock()
			}
		}
		if t.receipt == nil {
			r, err := c.findReceipt(ctx, t)
			if err != nil {
				return err
			}
			if r != nil {
				c.mu.Lock()
				t.receipt, t.orphaned = r, time.Time{}
				c.mu.Unlock()
				c.log.Info("settlement mined", zap.Stringer("tx", r.TxHash), zap.Uint64("block", r.BlockNumber.Uint64()),
					zap.Uint64("status", r.Status), zap.Uint64("gasUsed", r.GasUsed))
			} else {
				if latestNonce == nil {
					n, err := c.b.NonceAt(ctx, c.from, nil)
					if err != nil {
						return fmt.Errorf("nonce: %w", err)
					}
					latestNonce = &n
				}
				if err := c.unmined(ctx, head, t, *latestNonce); err != nil {
					return err
				}
				continue
			}
		}
		c.mu.Lock()
		final := c.finalLocked(t.receipt.BlockNumber.Uint64())
		c.mu.Unlock()
		if final {
			if err := c.finish(ctx, t); err != nil {
				return err
			}
		}
	}
	return nil
}

// findReceipt returns the receipt of whichever version of t was mined, if
// any, on the canonical chain.
func (c *chain) findReceipt(ctx context.Context, t *sentTx) (*types.Receipt, error) {
	for i := len(t.txs) - 1; i >= 0; i-- {
		r, err := c.b.TransactionReceipt(ctx, t.txs[i].Hash())
		if errors.Is(err, ethereum.NotFound) || (err == nil && r == nil) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("receipt: %w", err)
		}
		h, err := c.b.HeaderByNumber(ctx, r.BlockNumber)
		if errors.Is(err, ethereum.NotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("header: %w", err)
		}
		if h.Hash() == r.BlockHash {
			return r, nil
		}
	}
	return nil, nil
}

// unmined handles a transaction with no receipt: its nonce went to a
// transaction we do not know, it is stuck (fee bump), or the node dropped it
// (rebroadcast).
func (c *chain) unmined(ctx context.Context, head *types.Header, t *sentTx, latestNonce uint64) error {
	if !c.sending() {
		// Not the sender: no bump, rebroadcast or requeue; the receipt, if
		// the transaction is mined, is still found.
		return nil
	}
	if t.nonce < latestNonce {
		// The nonce is used, yet none of our versions has a receipt. Give
		// receipts of a fresh block a moment; then the nonce went to a
		// transaction we never tracked, and the charges go back to the queue
		// (the contract skips any that did settle).
		c.mu.Lock()
		defer c.mu.Unlock()
		if t.orphaned.IsZero() {
			t.orphaned = time.Now()
			return nil
		}
		if time.Since(t.orphaned) < c.cfg.RebroadcastAfter {
			return nil
		}
		c.log.Warn("settlement nonce used by an unknown transaction; requeueing its charges", zap.Uint64("nonce", t.nonce))
		c.removeTxLocked(t)
		now := c.now()
		for _, it := range t.items {
			it.state, it.tx, it.queuedAt = stQueued, nil, now
		}
		c.queue = append(append([]*item(nil), t.items...), c.queue...)
		return nil
	}
	if time.Since(t.sentAt) >= c.cfg.StuckAfter && head.Number.Uint64() > t.sentHead {
		return c.bump(ctx, head, t)
	}
	if time.Since(t.sentAt) < c.cfg.RebroadcastAfter {
		return nil
	}
	_, _, err := c.b.TransactionByHash(ctx, t.latest().Hash())
	if err == nil {
		return nil // the node still has it
	}
	if !errors.Is(err, ethereum.NotFound) {
		return fmt.Errorf("transaction: %w", err)
	}
	c.log.Warn("settlement transaction unknown to the node; rebroadcasting", zap.Stringer("tx", t.latest().Hash()), zap.Uint64("nonce", t.nonce))
	if err := c.b.SendTransaction(ctx, t.latest()); err != nil && !isAlreadyKnown(err) {
		if isNonceTooLow(err) {
			return nil // mined meanwhile; the next step finds the receipt
		}
		return fmt.Errorf("rebroadcast: %w", err)
	}
	c.mu.Lock()
	t.sentAt, t.sentHead = time.Now(), head.Number.Uint64()
	c.mu.Unlock()
	return nil
}

// bump replaces a stuck transaction: same nonce and calldata, tip and fee cap
// each raised by at least 12.5 % (nodes require 10 %) and to the current
// market.
func (c *chain) bump(ctx context.Context, head *types.Header, t *sentTx) error {
	old := t.latest()
	tip, feeCap, err := fees(ctx, c.b, head, c.cfg.TipCap, nil)
	if err != nil {
		return err
	}
	minTip := bumped(old.GasTipCap())
	minCap := bumped(old.GasFeeCap())
	if tip.Cmp(minTip) < 0 {
		tip = minTip
	}
	if feeCap.Cmp(minCap) < 0 {
		feeCap = minCap
	}
	if floor := new(big.Int).Add(head.BaseFee, tip); head.BaseFee != nil && feeCap.Cmp(floor) < 0 {
		feeCap = floor
	}
	if max := c.cfg.MaxFeeCap; max != nil && feeCap.Cmp(max) > 0 {
		c.log.Warn("settlement transaction stuck at the fee cap limit", zap.Stringer("tx", old.Hash()), zap.Stringer("maxFeeCap", max))
		c.mu.Lock()
		t.sentAt, t.sentHead = time.Now(), head.Number.Uint64()
		c.mu.Unlock()
		return nil
	}
	tx, err := types.SignNewTx(c.key, c.signer, &types.DynamicFeeTx{
		ChainID: c.chainID, Nonce: t.nonce, GasTipCap: tip, GasFeeCap: feeCap, Gas: old.Gas(), To: old.To(), Data: old.Data(),
	})
	if err != nil {
		return fmt.Errorf("sign: %w", err)
	}
	if err := c.b.SendTransaction(ctx, tx); err != nil && !isAlreadyKnown(err) {
		if isNonceTooLow(err) {
			return nil // an earlier version was mined meanwhile
		}
		return fmt.Errorf("replace: %w", err)
	}
	c.mu.Lock()
	t.txs = append(t.txs, tx)
	t.sentAt, t.sentHead = time.Now(), head.Number.Uint64()
	c.mu.Unlock()
	c.log.Warn("settlement transaction stuck; replaced with higher fees", zap.Stringer("old", old.Hash()), zap.Stringer("new", tx.Hash()),
		zap.Uint64("nonce", t.nonce), zap.Stringer("tipCap", tip), zap.Stringer("feeCap", feeCap))
	return nil
}

func bumped(v *big.Int) *big.Int {
	b := new(big.Int).Mul(v, big.NewInt(1125))
	b.Div(b, big.NewInt(1000))
	return b.Add(b, big.NewInt(1))
}

// finish ends a transaction that reached the configured depth: each charge
// is confirmed by its Settled event (here, or from an earlier transaction
// when the contract skipped it as AlreadySettled), fails if the transaction
// reverted or its sequence was settled for another workflow, and otherwise
// goes back to the queue.
func (c *chain) finish(ctx context.Context, t *sentTx) error {
	r := t.receipt
	type record struct {
		s     *settleflow.Settlement
		owner [32]byte
	}
	settled := map[uint64]record{}
	var skipped []*big.Int
	// Each charge the transaction settled bears an equal share of its cost.
	var gasShare uint64
	var fee string
	if n := countSettled(r, c.contract); n > 0 {
		gasShare = r.GasUsed / uint64(n)
		if r.EffectiveGasPrice != nil {
			fee = FormatUnits(new(big.Int).Mul(new(big.Int).SetUint64(gasShare), r.EffectiveGasPrice), 18)
		}
	}
	if r.Status == types.ReceiptStatusSuccessful {
		for _, l := range r.Logs {
			if l.Address != c.contract || len(l.Topics) < 3 {
				continue
			}
			seq := new(big.Int).SetBytes(l.Topics[2][:])
			if !seq.IsUint64() {
				continue
			}
			switch l.Topics[0] {
			case settledEventID:
				settled[seq.Uint64()] = record{&settleflow.Settlement{ChainID: c.chainID.Int64(), Network: c.network, TxHash: r.TxHash.Hex(),
					BlockNumber: r.BlockNumber.Uint64(), GasUsed: gasShare, Fee: fee}, [32]byte(l.Topics[1])}
			case alreadySettledEventID:
				skipped = append(skipped, seq)
			}
		}
	}
	// Skipped sequences settled earlier (or earlier in this batch): find
	// where, all in one search.
	var earlier []*big.Int
	for _, n := range skipped {
		if _, ok := settled[n.Uint64()]; !ok {
			earlier = append(earlier, n)
		}
	}
	if len(earlier) > 0 {
		found, err := c.settledEvents(ctx, earlier)
		if err != nil {
			return err
		}
		for _, n := range earlier {
			l := found[n.Uint64()]
			if l == nil {
				return fmt.Errorf("settlement: %s: sequence %s was skipped as settled but no Settled event was found (does the node keep logs since block %d?)", c.env, n, c.deployed)
			}
			settled[n.Uint64()] = record{&settleflow.Settlement{ChainID: c.chainID.Int64(), Network: c.network, TxHash: l.TxHash.Hex(), BlockNumber: l.BlockNumber}, [32]byte(l.Topics[1])}
		}
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeTxLocked(t)
	var requeue []*item
	for _, it := range t.items {
		if it.tx != t {
			continue // resubmitted after a failure: someone else's now
		}
		it.tx = nil
		switch rec, ok := settled[it.charge.Sequence]; {
		case r.Status != types.ReceiptStatusSuccessful:
			it.state, it.doneAt = stFailed, now
			it.failure = failure(CodeSettlementReverted, "settlement transaction %s reverted in block %d; nothing was charged", r.TxHash.Hex(), r.BlockNumber.Uint64())
		case ok && rec.owner == it.key:
			saved := *rec.s
			it.state, it.doneAt, it.settlement = stConfirmed, now, &saved
		case ok:
			it.state, it.doneAt = stFailed, now
			it.failure = conflict(it.charge, rec.owner, rec.s)
		default:
			it.state, it.queuedAt = stQueued, now
			requeue = append(requeue, it)
		}
	}
	c.queue = append(requeue, c.queue...)
	if r.Status != types.ReceiptStatusSuccessful {
		c.log.Error("settlement transaction reverted", zap.Stringer("tx", r.TxHash), zap.Uint64("block", r.BlockNumber.Uint64()))
	} else {
		c.log.Info("settlement confirmed", zap.Stringer("tx", r.TxHash), zap.Uint64("block", r.BlockNumber.Uint64()), zap.Int("charges", len(t.items)))
	}
	return nil
}

func (c *chain) removeTxLocked(t *sentTx) {
	for i, x := range c.txs {
		if x == t {
			c.txs = append(c.txs[:i], c.txs[i+1:]...)
			return
		}
	}
}

// ---- errors ----

var errTooMuchGas = errors.New("gas required exceeds allowance")

// isGasCapError reports whether a batch needs more gas than a transaction or
// block may use.
func isGasCapError(err error) bool {
	msg := strings.ToLower(err.Error())
	return errors.Is(err, errTooMuchGas) || strings.Contains(msg, "exceeds allowance") ||
		strings.Contains(msg, "gas limit too high") || strings.Contains(msg, "exceeds block gas limit")
}

func isAlreadyKnown(err error) bool {
	return err != nil && strings.Contains(strings.ToLower(err.Error()), "already known")
}

func isNonceTooLow(err error) bool {
	return err != nil && strings.Contains(strings.ToLower(err.Error()), "nonce too low")
}

func isInsufficientGasFunds(err error) bool {
	return err != nil && strings.Contains(strings.ToLower(err.Error()), "insufficient funds for gas")
}

var (
	errInsufficientBalance   = bindings.TestUSDERC20InsufficientBalanceErrorID()
	errInsufficientAllowance = bindings.TestUSDERC20InsufficientAllowanceErrorID()
	errNotOperator           = bindings.SettleflowSettlementNotOperatorErrorID()
)

// classifyRevert turns a node's refusal to run a settlement into a Failure,
// or nil when err is not such a refusal (RPC trouble: transient).
func classifyRevert(err error) *settleflow.Failure {
	if isInsufficientGasFunds(err) {
		return failure(CodeInsufficientGasFunds, "the operator cannot pay for gas: %v", err)
	}
	var de rpc.DataError
	if !errors.As(err, &de) {
		if strings.Contains(strings.ToLower(err.Error()), "execution reverted") {
			return failure(CodeSettlementReverted, "%v", err)
		}
		return nil
	}
	var data []byte
	if s, ok := de.ErrorData().(string); ok {
		data, _ = hexutil.Decode(s)
	}
	if len(data) >= 4 {
		sel := data[:4]
		switch {
		case bytes.Equal(sel, errInsufficientBalance[:4]):
			return failure(CodeInsufficientFunds, "the operator's token balance cannot cover the batch")
		case bytes.Equal(sel, errInsufficientAllowance[:4]):
			return failure(CodeInsufficientAllowance, "the operator's allowance to the contract cannot cover the batch")
		case bytes.Equal(sel, errNotOperator[:4]):
			return failure(CodeSettlementReverted, "the signer is not the contract's operator")
		}
	}
	msg := strings.ToLower(err.Error())
	switch {
	case strings.Contains(msg, "exceeds balance"):
		return failure(CodeInsufficientFunds, "%v", err)
	case strings.Contains(msg, "allowance"):
		return failure(CodeInsufficientAllowance, "%v", err)
	}
	return failure(CodeSettlementReverted, "%v", err)
}

// now is the settler's clock, in UTC: the time settlements are stamped with.
func (c *chain) now() time.Time { return c.clock.Now().UTC() }

// countSettled counts the contract's Settled events in a receipt.
func countSettled(r *types.Receipt, contract common.Address) int {
	n := 0
	if r.Status != types.ReceiptStatusSuccessful {
		return 0
	}
	for _, l := range r.Logs {
		if l.Address == contract && len(l.Topics) > 0 && l.Topics[0] == settledEventID {
			n++
		}
	}
	return n
}
