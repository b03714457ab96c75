package settlement

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
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
	tag        uint64   // the workflow's tag (WorkflowTag) as the contract records it
	ref        [32]byte // the customer's reference
	seq        *big.Int // charge.Sequence: the contract's idempotency key
	amount     *big.Int // base units
	state      itemState
	tx         *sentTx
	queuedAt   time.Time
	doneAt     time.Time
	settlement *settleflow.Settlement // set when confirmed
	failure    *settleflow.Failure
	// reverts counts settle transactions of it that reverted with its
	// sequence unrecorded: it is sent again, at most maxReverts times.
	reverts int
}

// sentTx is one nonce's settlement transaction with every version signed for
// it (replacements), newest last.
type sentTx struct {
	nonce    uint64
	items    []*item  // the charges of a settle transaction
	refunds  []*ritem // the refunds of a refund transaction
	owners   []*oitem // the owner grants of a setOwner transaction
	word     uint64   // the bitmap word a refund transaction refunds charges of
	txs      []*types.Transaction
	sentAt   time.Time
	sentHead uint64
	receipt  *types.Receipt
	orphaned time.Time // when the nonce was seen used by no tx of ours
	// found are the records of the charges it skipped, read so far (a
	// read that fails is retried for the missing ones only).
	found map[uint64]*chargeRecord
	// decided are the decisions of the refunds it skipped, read so far.
	decided map[[32]byte]refundDecision
}

func (t *sentTx) latest() *types.Transaction { return t.txs[len(t.txs)-1] }

// chain settles one environment's charges on one chain. A single goroutine
// (run) sends and tracks transactions; Submit and Status only touch the
// in-memory state under mu, plus read-only calls.
type chain struct {
	// relayBudget counts the hour's relays (relay.go); mu guards it.
	relayBudget relayBudget

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
	unit     *big.Int // base units per cent
	notice   time.Duration
	secret   []byte            // the deployment's customer reference secret
	faucet   *ecdsa.PrivateKey // the test faucet's key; nil: no faucet
	faucetMu sync.Mutex
	deployed uint64 // the contract's deployment block: no event is older
	closer   func()
	lease    settleflow.SettlementLease // nil: always the sender
	// term is the lease term of the current step (1 without a lease); 0:
	// not the sender. Touched by the worker goroutine only.
	term uint64

	// fundsLogs is the funds follower's log query window (FundsLogRange at
	// most), halved while the node refuses a range.
	fundsLogs logWindow

	mu        sync.Mutex
	items     map[string]*item
	bySeq     map[uint64]*item // the live item holding each sequence
	queue     []*item
	refunds   map[string]*ritem // by refund id
	rqueue    []*ritem
	owners    map[[32]byte]*oitem // owner grants (by grant.key) and relayed deposits (by nonce)
	oqueue    []*oitem
	tdomain   *tokenDomain              // the token's EIP-712 domain, once read
	settles   map[common.Hash]*settleTx // settle transactions read back
	words     map[uint64]*wordHistory   // words' debits read back
	txs       []*sentTx
	nonce     uint64
	nonceOK   bool
	head      uint64
	finalized uint64
	// fundedUntil is the block a faucet deposit sent is confirmed at:
	// until then the chain is busy (the simulated chain keeps mining).
	fundedUntil uint64

	// The worker's health, under mu: the current streak of failed steps
	// (backoff), and whether the operator ran out of gas money.
	failures     int       // consecutive failed steps
	failingSince time.Time // when the streak began
	lastErr      error
	misses       int          // consecutive steps that could not read the head
	missSince    time.Time    // when they began
	gasShort     *gasShortage // nil: the operator could pay for its last send
	// notOperator: the contract's operator is no longer this signer (the
	// key was rotated); settling is paused, nothing fails. nil: it is.
	notOperator *operatorLoss

	wake   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

// gasShortage is the operator's lack of gas money for its pending batch.
type gasShortage struct {
	since  time.Time
	need   *big.Int // wei: the batch's gas × its fee cap
	have   *big.Int // wei: the operator's balance when it was refused; nil if unread
	what   string   // "charges" or "refunds"
	n      int      // how many wait
	logged bool
}

// newChain connects and checks one environment's chain, then starts its worker.
func newChain(ctx context.Context, env settleflow.Environment, cc ChainConfig, log *zap.Logger, clock settleflow.Clock, lease settleflow.SettlementLease) (_ *chain, err error) {
	cc = cc.withDefaults()
	c := &chain{env: env, cfg: cc, clock: clock, b: cc.Client, lease: lease, items: map[string]*item{}, bySeq: map[uint64]*item{},
		refunds: map[string]*ritem{}, owners: map[[32]byte]*oitem{}, settles: map[common.Hash]*settleTx{}, words: map[uint64]*wordHistory{},
		wake: make(chan struct{}, 1), done: make(chan struct{})}

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
	id, err := retryRead(ctx, func() (*big.Int, error) { return c.b.ChainID(ctx) })
	if err != nil {
		return nil, fmt.Errorf("settlement: %s: chain id: %w", env, err)
	}
	if !id.IsInt64() {
		return nil, fmt.Errorf("settlement: %s: chain id %s out of range", env, id)
	}
	if env == settleflow.Live && cc.ChainID == 0 {
		return nil, fmt.Errorf("settlement: live: ChainID must be configured (the node reports %s)", id)
	}
	if env == settleflow.Live && cc.BlocksOnDemand {
		return nil, fmt.Errorf("settlement: live: BlocksOnDemand is for a test chain that seals blocks on demand; a live chain's head time is what shows its node current")
	}
	if cc.ChainID != 0 && id.Int64() != cc.ChainID {
		return nil, fmt.Errorf("settlement: %s: node is on chain id %s, configured %d", env, id, cc.ChainID)
	}
	if err := CheckChainKind(env, id.Int64()); err != nil {
		return nil, err
	}
	if len(cc.CustomerRefSecret) < MinCustomerRefSecret {
		return nil, fmt.Errorf("settlement: %s: CustomerRefSecret must be at least %d bytes (32 random bytes, kept with the deployment: customers' balances on chain are keyed by it)", env, MinCustomerRefSecret)
	}
	c.secret = bytes.Clone(cc.CustomerRefSecret)
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
	if c.faucet, err = cc.faucetKey(); err != nil {
		return nil, err
	}
	if c.faucet != nil && env == settleflow.Live {
		return nil, fmt.Errorf("settlement: live: a faucet key is configured; live customers are never funded by a faucet")
	}
	c.contract = cc.Contract
	if c.contract == (common.Address{}) {
		return nil, fmt.Errorf("settlement: %s: Contract not configured", env)
	}
	code, err := retryRead(ctx, func() ([]byte, error) { return c.b.CodeAt(ctx, c.contract, nil) })
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
	out, err := retryRead(ctx, func() ([]byte, error) {
		return c.b.CallContract(ctx, ethereum.CallMsg{To: &c.contract, Data: settlementABI.PackDeployedAt()}, nil)
	})
	if err != nil {
		return nil, fmt.Errorf("settlement: %s: call %s: %w", env, c.contract, err)
	}
	deployed, err := settlementABI.UnpackDeployedAt(out)
	if err != nil || !deployed.IsUint64() {
		return nil, fmt.Errorf("settlement: %s: %s is not a SettleflowSettlement contract with a sequence bitmap (deployedAt: %v)", env, c.contract, err)
	}
	c.deployed = deployed.Uint64()
	if v, err := retryRead(ctx, func() (uint64, error) { return contractVersion(ctx, c.b, c.contract) }); err != nil || v != ContractVersion {
		return nil, fmt.Errorf("settlement: %s: %s is settlement contract %s; this build needs version %d (owners set by the operator with the owner's signed grant, grant nonces kept per signer): deploy it with `chain deploy` and configure its address",
			env, c.contract, versionName(v, err), ContractVersion)
	}
	if out, err = retryRead(ctx, func() ([]byte, error) {
		return c.b.CallContract(ctx, ethereum.CallMsg{To: &c.contract, Data: settlementABI.PackUnit()}, nil)
	}); err == nil {
		c.unit, err = settlementABI.UnpackUnit(out)
	}
	if err != nil || c.unit == nil || c.unit.Sign() <= 0 {
		return nil, fmt.Errorf("settlement: %s: %s is not a version 2 SettleflowSettlement contract (customer balances): it has no unit (%v); deploy the current contract", env, c.contract, err)
	}
	if out, err = retryRead(ctx, func() ([]byte, error) {
		return c.b.CallContract(ctx, ethereum.CallMsg{To: &c.contract, Data: settlementABI.PackWithdrawalNotice()}, nil)
	}); err != nil {
		return nil, fmt.Errorf("settlement: %s: withdrawal notice: %w", env, err)
	}
	notice, err := settlementABI.UnpackWithdrawalNotice(out)
	if err != nil || !notice.IsInt64() {
		return nil, fmt.Errorf("settlement: %s: withdrawal notice: %v", env, err)
	}
	c.notice = time.Duration(notice.Int64()) * time.Second
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
	out, err = retryRead(ctx, func() ([]byte, error) {
		return c.b.CallContract(ctx, ethereum.CallMsg{To: &c.token, Data: erc20ABI.PackDecimals()}, nil)
	})
	if err != nil {
		return nil, fmt.Errorf("settlement: %s: token decimals: %w", env, err)
	}
	if c.decimals, err = erc20ABI.UnpackDecimals(out); err != nil || c.decimals < 2 {
		return nil, fmt.Errorf("settlement: %s: token %s has unusable decimals (%d, %v)", env, c.token, c.decimals, err)
	}
	if want, _ := BaseUnits(1, c.decimals); want.Cmp(c.unit) != 0 {
		return nil, fmt.Errorf("settlement: %s: contract %s counts %s base units per cent, but its token has %d decimals (%s per cent)", env, c.contract, c.unit, c.decimals, want)
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

// retryRead runs a read of the chain at start, again while it fails
// with a transient error (anything but a revert), up to 8 times over
// about 16 s: a flaky node or provider does not stop the server from
// starting.
func retryRead[T any](ctx context.Context, read func() (T, error)) (T, error) {
	wait := 200 * time.Millisecond
	for attempt := 1; ; attempt++ {
		v, err := read()
		if err == nil || classifyRevert(err) != nil || attempt == 8 || ctx.Err() != nil {
			return v, err
		}
		select {
		case <-ctx.Done():
			return v, err
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
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
	out, err := retryRead(ctx, func() ([]byte, error) { return c.b.CallContract(ctx, ethereum.CallMsg{To: &to, Data: data}, nil) })
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
	return len(c.queue) > 0 || len(c.rqueue) > 0 || len(c.oqueue) > 0 || len(c.txs) > 0 || c.head < c.fundedUntil
}

// ref is a customer's reference in this environment's contract.
func (c *chain) ref(customerID string) [32]byte { return CustomerRef(c.secret, c.env, customerID) }

// ---- the worker ----

func (c *chain) run(ctx context.Context) {
	defer close(c.done)
	timer := time.NewTimer(c.cfg.PollInterval)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-c.wake:
			if c.backingOff() {
				continue // the timer is set to the end of the backoff
			}
		}
		stepCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := c.step(stepCtx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		timer.Reset(c.afterStep(err))
	}
}

// operatorLoss is the contract naming another operator than this signer.
type operatorLoss struct {
	since   time.Time
	current common.Address // the contract's operator when last read; zero if unread
}

// maxBackoff bounds the wait between failed steps.
const maxBackoff = 30 * time.Second

// backoffCap is the longest wait between two failed steps: 32 polls,
// within a second and maxBackoff.
func (c *chain) backoffCap() time.Duration {
	return min(max(32*c.cfg.PollInterval, time.Second), maxBackoff)
}

// unreachableAfter is how long steps must have failed in a row before
// the chain is reported unreachable (Health): a few polls, at least 2 s,
// so that one refused call does not flip readiness.
func (c *chain) unreachableAfter() time.Duration {
	return max(5*c.cfg.PollInterval, 2*time.Second)
}

func (c *chain) backingOff() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failures > 0
}

// afterStep records how a step ended and returns the wait before the
// next: the poll interval after a success; after failures, twice the last
// wait, up to backoffCap when the node did not answer at all (or the
// operator cannot pay for gas), up to 2 polls when the step got part of
// its work done. A streak of failures is logged when it begins, at its
// 10th, 100th and every 1000th step, and when it ends, not at every step.
func (c *chain) afterStep(err error) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var he *headError
	if errors.As(err, &he) {
		if c.misses == 0 {
			c.missSince = time.Now()
		}
		c.misses++
	} else {
		c.misses, c.missSince = 0, time.Time{}
	}
	if err == nil {
		if c.failures > 0 {
			c.log.Info("settlement steps succeed again", zap.Int("failedSteps", c.failures),
				zap.Duration("after", time.Since(c.failingSince).Round(time.Millisecond)), zap.NamedError("lastError", c.lastErr))
		}
		c.failures, c.failingSince, c.lastErr = 0, time.Time{}, nil
		return c.cfg.PollInterval
	}
	if c.failures == 0 {
		c.failingSince = time.Now()
		if !errors.Is(err, errGasShort) && !errors.Is(err, errNotOperator) {
			c.log.Warn("settlement step failed; retrying with backoff (logged again when it succeeds)", zap.Error(err))
		}
	} else if n := c.failures + 1; n == 10 || n == 100 || n%1000 == 0 {
		c.log.Warn("settlement steps still failing; retrying with backoff", zap.Int("failedSteps", n),
			zap.Duration("for", time.Since(c.failingSince).Round(time.Millisecond)), zap.Error(err))
	} else {
		c.log.Debug("settlement step failed again", zap.Int("failedSteps", n), zap.Error(err))
	}
	c.failures++
	c.lastErr = err
	d := min(c.cfg.PollInterval<<min(c.failures-1, 16), c.backoffCap())
	if he == nil && !errors.Is(err, errGasShort) && !errors.Is(err, errNotOperator) {
		d = min(d, 2*c.cfg.PollInterval)
	}
	return d
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
		return &headError{err}
	}
	// Each part goes on when another fails: one flaky call does not stop
	// the receipts of other transactions being read, nor batches being
	// sent.
	errs := []error{c.track(ctx, head)}
	if c.term != 0 {
		errs = append(errs, c.flush(ctx, head), c.flushRefunds(ctx, head), c.flushOwners(ctx, head))
	}
	c.prune()
	return errors.Join(errs...)
}

// headError: a step could not read the chain's head (the node did not
// answer); nothing was done.
type headError struct{ err error }

func (e *headError) Error() string { return e.err.Error() }
func (e *headError) Unwrap() error { return e.err }

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
		for _, r := range c.rqueue {
			if c.refunds[r.rc.RefundID] == r {
				delete(c.refunds, r.rc.RefundID)
			}
		}
		dropped += len(c.rqueue)
		clear(c.rqueue)
		c.rqueue = c.rqueue[:0]
		c.gasShort = nil // nothing of ours waits for gas now
		c.notOperator = nil
		for _, it := range c.oqueue {
			it.state, it.err, it.doneAt = stFailed, errLeaseLost, c.now()
			closeOnce(it.sent)
		}
		dropped += len(c.oqueue)
		clear(c.oqueue)
		c.oqueue = c.oqueue[:0]
		c.log.Warn("settlement lease lost: sending stops; unsent charges and refunds dropped for the new holder", zap.Int("dropped", dropped))
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
	for id, r := range c.refunds {
		if (r.state == stConfirmed || r.state == stFailed) && r.doneAt.Before(cut) {
			delete(c.refunds, id)
		}
	}
	for n, it := range c.owners {
		if (it.state == stConfirmed || it.state == stFailed) && it.doneAt.Before(cut) {
			delete(c.owners, n)
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
		for _, t := range c.txs {
			if t.refunds != nil && t.receipt == nil {
				due = false // a refund resends commitments a settle may change
			}
		}
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

// declineHeadroom is the gas a settle may need per charge beyond its
// estimate: a charge estimated as a debit can be declined in the block (a
// withdrawal matured in between) or the reverse (a deposit landed), and
// the two cost differently. Measured on the simulated chain at a batch of
// 100 (TestDeclineHeadroom), with a margin.
const declineHeadroom = 3_000

// estimate asks the node for the gas of a call to the contract carrying
// charges charges, with a margin (a fifth, 20,000, and declineHeadroom per
// charge), within the transaction gas cap (EIP-7825) and the block's
// limit. errTooMuchGas: over the cap.
func (c *chain) estimate(ctx context.Context, head *types.Header, data []byte, charges int) (uint64, error) {
	gasCap := params.MaxTxGas // EIP-7825
	if head.GasLimit > 0 && head.GasLimit < gasCap {
		gasCap = head.GasLimit
	}
	gas, err := c.b.EstimateGas(ctx, ethereum.CallMsg{From: c.from, To: &c.contract, Data: data})
	if err != nil {
		if isNotOperator(err) {
			return 0, c.operatorLost(ctx)
		}
		return 0, err
	}
	c.operatorBack()
	if gas+gas/5 > gasCap {
		return 0, errTooMuchGas
	}
	return min(gas+gas/5+20_000+uint64(charges)*declineHeadroom, gasCap), nil
}

// errNotOperator: the contract's operator is no longer this signer (its
// key was rotated, setOperator): every settle, refund and setOwner would
// revert, so none is sent and none fails; they wait, queued, and Health
// reports it (readiness degraded) until this signer is the operator again
// (or the process is restarted with the new key, whose engine submits the
// charges again).
var errNotOperator = errors.New("the signer is no longer the contract's operator: settling is paused")

// isNotOperator reports whether err is the node saying that the call
// reverts with the contract's NotOperator error.
func isNotOperator(err error) bool {
	var de rpc.DataError
	if !errors.As(err, &de) {
		return false
	}
	var data []byte
	switch d := de.ErrorData().(type) {
	case string:
		data, _ = hexutil.Decode(d)
	case []byte:
		data = d
	}
	return len(data) >= 4 && bytes.Equal(data[:4], notOperatorID[:4])
}

// operatorLost records that the contract names another operator, logs it
// once (with the operator it names) and returns errNotOperator. The
// returned error does not carry the node's revert: callers must not take
// it for a refusal of what they sent.
func (c *chain) operatorLost(ctx context.Context) error {
	var current common.Address
	if out, err := c.call(ctx, settlementABI.PackOperator()); err == nil {
		current, _ = settlementABI.UnpackOperator(out)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.notOperator == nil {
		c.notOperator = &operatorLoss{since: time.Now()}
		c.log.Error("the contract's operator is no longer this signer (its key was rotated): settling is paused, nothing fails; configure the operator's key",
			zap.Stringer("signer", c.from), zap.Stringer("contractOperator", current))
	}
	if current != (common.Address{}) {
		c.notOperator.current = current
	}
	return fmt.Errorf("%w: signer %s, contract operator %s", errNotOperator, c.from, c.notOperator.current)
}

// operatorBack clears the pause once a call from this signer is accepted.
func (c *chain) operatorBack() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.notOperator != nil {
		c.log.Info("this signer is the contract's operator again: settling resumes", zap.Stringer("signer", c.from),
			zap.Duration("after", time.Since(c.notOperator.since).Round(time.Millisecond)))
		c.notOperator = nil
	}
}

// dispatch signs data to the contract under the next nonce, sends it and
// tracks it as t (whose items or refunds it carries). Every error is
// transient: the charges stay queued. An operator that cannot pay for gas
// is errGasShort: nothing was sent; the batch waits until it can
// (Health reports it).
func (c *chain) dispatch(ctx context.Context, head *types.Header, data []byte, gas uint64, t *sentTx) error {
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
	what, n := t.what()
	// Logged before it leaves: a process killed right after sending still
	// shows which transaction, under which nonce, it may have sent.
	c.log.Info("settlement sending", zap.Stringer("tx", tx.Hash()), zap.Uint64("nonce", tx.Nonce()), zap.Int(what, n))
	uncertain := false // the node may or may not have it
	if err := c.b.SendTransaction(ctx, tx); err != nil && !isAlreadyKnown(err) {
		switch {
		case isInsufficientGasFunds(err):
			// Nothing was sent: the operator cannot pay for it. The batch
			// waits, queued, until the operator is funded.
			c.mu.Lock()
			c.nonceOK = false
			c.mu.Unlock()
			return c.gasShortage(ctx, new(big.Int).Mul(new(big.Int).SetUint64(gas), feeCap), what, n, err)
		case isRefusedTx(err):
			// The node refused the transaction (nonce too low, underpriced,
			// ...): nothing was sent; resync the nonce and retry next step.
			c.mu.Lock()
			c.nonceOK = false
			c.mu.Unlock()
			return fmt.Errorf("send: %w", err)
		}
		// Any other error (a dropped connection, a timeout, an internal or
		// rate-limit error from the node or a proxy): the node may have it.
		// Track it as sent; it is rebroadcast if the node does not know it.
		c.log.Warn("send failed; will rebroadcast", zap.Stringer("tx", tx.Hash()), zap.Uint64("nonce", tx.Nonce()), zap.Error(err))
		uncertain = true
	}
	t.nonce, t.txs, t.sentAt, t.sentHead = tx.Nonce(), []*types.Transaction{tx}, time.Now(), head.Number.Uint64()
	c.mu.Lock()
	if c.gasShort != nil {
		c.log.Info("the operator can pay for gas again", zap.Stringer("operator", c.from),
			zap.Duration("after", time.Since(c.gasShort.since).Round(time.Millisecond)))
		c.gasShort = nil
	}
	c.nonce++
	c.txs = append(c.txs, t)
	for _, it := range t.items {
		it.state = stSent
		it.tx = t
	}
	c.dequeueLocked(t.items)
	for _, r := range t.refunds {
		r.state = stSent
		r.tx = t
	}
	c.dequeueRefundsLocked(t.refunds)
	c.mu.Unlock()
	if !uncertain {
		c.log.Info("settlement sent", zap.Stringer("tx", tx.Hash()), zap.Uint64("nonce", tx.Nonce()), zap.Int(what, n),
			zap.Uint64("gas", gas), zap.Stringer("tipCap", tip), zap.Stringer("feeCap", feeCap))
	}
	return nil
}

// what names what t carries, and how many: "charges", "refunds" or
// "ownerGrants".
func (t *sentTx) what() (string, int) {
	switch {
	case t.owners != nil:
		return "ownerGrants", len(t.owners)
	case t.refunds != nil:
		return "refunds", len(t.refunds)
	}
	return "charges", len(t.items)
}

// errGasShort: the operator cannot pay for the gas of its next
// transaction; the batch waits.
var errGasShort = errors.New("the operator cannot pay for gas")

// gasShortage records that the operator cannot pay need wei for a batch of
// n charges or refunds, logs it once (naming the operator and the balance
// needed) and returns errGasShort.
func (c *chain) gasShortage(ctx context.Context, need *big.Int, what string, n int, cause error) error {
	have, berr := c.b.BalanceAt(ctx, c.from, nil)
	if berr != nil {
		have = nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.gasShort
	if g == nil {
		g = &gasShortage{since: time.Now()}
		c.gasShort = g
	}
	g.need, g.have, g.what, g.n = need, have, what, n
	if !g.logged {
		g.logged = true
		fields := []zap.Field{zap.Stringer("operator", c.from), zap.String("needWei", need.String()),
			zap.String("need", FormatUnits(need, 18)+" ETH"), zap.Int(what, n), zap.NamedError("nodeSays", cause)}
		if have != nil {
			fields = append(fields, zap.String("balance", FormatUnits(have, 18)+" ETH"))
		}
		c.log.Error("the operator cannot pay for gas: its "+what+" wait, none fails; send it at least the balance needed (gas × fee cap of the pending batch)", fields...)
	}
	return fmt.Errorf("%w: operator %s needs %s wei (%v)", errGasShort, c.from, need, cause)
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

// track follows every unfinished transaction: receipts, reorgs, depth,
// stuck and dropped transactions.
func (c *chain) track(ctx context.Context, head *types.Header) error {
	c.mu.Lock()
	txs := append([]*sentTx(nil), c.txs...)
	c.mu.Unlock()
	var latestNonce *uint64
	var errs []error
	for _, t := range txs {
		if err := c.trackOne(ctx, head, t, &latestNonce); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// trackOne follows one transaction (see track); latestNonce is the
// operator's mined nonce, read once per step when first needed.
func (c *chain) trackOne(ctx context.Context, head *types.Header, t *sentTx, latestNonce **uint64) error {
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
			if *latestNonce == nil {
				n, err := c.b.NonceAt(ctx, c.from, nil)
				if err != nil {
					return fmt.Errorf("nonce: %w", err)
				}
				*latestNonce = &n
			}
			return c.unmined(ctx, head, t, **latestNonce)
		}
	}
	c.mu.Lock()
	final := c.finalLocked(t.receipt.BlockNumber.Uint64())
	c.mu.Unlock()
	if final {
		finish := c.finish
		if t.refunds != nil {
			finish = c.finishRefunds
		}
		if t.owners != nil {
			finish = c.finishOwners
		}
		if err := finish(ctx, t); err != nil {
			return err
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
		for _, r := range t.refunds {
			r.state, r.tx, r.queuedAt = stQueued, nil, now
		}
		c.rqueue = append(append([]*ritem(nil), t.refunds...), c.rqueue...)
		for _, it := range t.owners {
			it.state, it.tx, it.queuedAt = stQueued, nil, now
		}
		c.oqueue = append(append([]*oitem(nil), t.owners...), c.oqueue...)
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
		if isInsufficientGasFunds(err) {
			// The operator cannot pay for the higher fees: the stuck
			// version stays; Health reports it (GasShort) until it can.
			what, n := t.what()
			return c.gasShortage(ctx, new(big.Int).Mul(new(big.Int).SetUint64(tx.Gas()), feeCap), what, n, err)
		}
		return fmt.Errorf("replace: %w", err)
	}
	c.mu.Lock()
	if c.gasShort != nil {
		c.log.Info("the operator can pay for gas again", zap.Stringer("operator", c.from),
			zap.Duration("after", time.Since(c.gasShort.since).Round(time.Millisecond)))
		c.gasShort = nil
	}
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
	notOperatorID = bindings.SettleflowSettlementNotOperatorErrorID()
	// Solidity's Error(string) and Panic(uint256) revert data.
	errorStringID = []byte{0x08, 0xc3, 0x79, 0xa0}
	panicID       = []byte{0x4e, 0x48, 0x7b, 0x71}
)

// isRefusedTx reports whether a node's answer to a sent transaction says
// for certain that it refused it: nothing was sent. Any other error leaves
// the transaction possibly sent.
func isRefusedTx(err error) bool {
	msg := strings.ToLower(err.Error())
	for _, s := range []string{"nonce too low", "nonce too high", "underpriced", "intrinsic gas too low", "exceeds block gas limit",
		"fee cap less than block base fee", "max fee per gas less than block base fee", "gas limit too high", "invalid sender",
		"max priority fee per gas higher than max fee per gas", "tip higher than fee cap", "txpool is full", "exceeds the configured cap",
		"oversized data", "negative value", "invalid chain id", "only replay-protected"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// classifyRevert says whether err is the node saying that a call reverts
// when executed: then the failure it reports; else nil, and err is
// transient (any other JSON-RPC error, a timeout, a dropped connection, an
// HTTP 429 or 5xx), to be retried. Only revert data (a contract error,
// Error(string) or Panic(uint256)) or a message that begins "execution
// reverted" count as a revert.
func classifyRevert(err error) *settleflow.Failure {
	if err == nil {
		return nil
	}
	var de rpc.DataError
	if errors.As(err, &de) {
		var data []byte
		switch d := de.ErrorData().(type) {
		case string:
			data, _ = hexutil.Decode(d)
		case []byte:
			data = d
		}
		if len(data) >= 4 {
			switch {
			case bytes.Equal(data[:4], notOperatorID[:4]):
				return failure(CodeSettlementReverted, "the signer is not the contract's operator")
			case bytes.Equal(data[:4], errorStringID) || bytes.Equal(data[:4], panicID):
				if reason, err := abi.UnpackRevert(data); err == nil {
					return failure(CodeSettlementReverted, "the contract reverts: %s", reason)
				}
			default:
				if e, err := settlementABI.UnpackError(data); err == nil {
					return failure(CodeSettlementReverted, "the contract refuses the call: %s", errName(e))
				}
			}
		}
	}
	var re rpc.Error
	msg := err.Error()
	if errors.As(err, &re) {
		msg = re.Error()
	}
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(msg)), "execution reverted") {
		return failure(CodeSettlementReverted, "%s", msg)
	}
	return nil
}

// errName is a contract error's name: "StaleCommitment" for a
// *bindings.SettleflowSettlementStaleCommitment.
func errName(e any) string {
	n := fmt.Sprintf("%T", e)
	if i := strings.LastIndex(n, "SettleflowSettlement"); i >= 0 {
		n = n[i+len("SettleflowSettlement"):]
	}
	return n
}

// now is the settler's clock, in UTC: the time settlements are stamped with.
func (c *chain) now() time.Time { return c.clock.Now().UTC() }
