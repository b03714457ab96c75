package settlement

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/settleflow/settleflow"
)

// The settler's side of customer funds (settleflow.Funds): every charge is
// debited from its customer's balance in the contract; deposits and
// withdrawals are followed from the contract's events at the environment's
// confirmation depth; refunds are settled like charges.

var _ settleflow.Funds = (*Settler)(nil)

var (
	depositedEventID           = settlementABI.GetABI().Events["Deposited"].ID
	ownerSetEventID            = settlementABI.GetABI().Events["OwnerSet"].ID
	withdrawalRequestedEventID = settlementABI.GetABI().Events["WithdrawalRequested"].ID
	withdrawalCanceledEventID  = settlementABI.GetABI().Events["WithdrawalCanceled"].ID
	withdrawnEventID           = settlementABI.GetABI().Events["Withdrawn"].ID
	ownerChangeCanceledEventID = settlementABI.GetABI().Events["OwnerChangeCanceled"].ID
)

// FundsLogRange is the most blocks FundsEvents reads in one call: fewer
// while the node refuses ranges that large (see logWindow).
const FundsLogRange = 5_000

// Funded reports whether env has a chain: every configured chain charges
// customer balances.
func (s *Settler) Funded(env settleflow.Environment) bool { return s.Configured(env) }

// CustomerRef is the customer's key in env's contract, 0x-hex.
func (s *Settler) CustomerRef(env settleflow.Environment, customerID string) (string, error) {
	c, ok := s.chains[env]
	if !ok {
		return "", fmt.Errorf("settlement: no chain is configured for %s mode", env)
	}
	ref := c.ref(customerID)
	return common.Hash(ref).Hex(), nil
}

// DepositInfo says where a customer of env deposits.
func (s *Settler) DepositInfo(env settleflow.Environment, customerID string) (settleflow.DepositInfo, error) {
	c, ok := s.chains[env]
	if !ok {
		return settleflow.DepositInfo{}, fmt.Errorf("settlement: no chain is configured for %s mode", env)
	}
	ref := c.ref(customerID)
	return settleflow.DepositInfo{ChainID: c.chainID.Int64(), Network: c.network, Contract: c.contract.Hex(), Token: c.token.Hex(),
		CustomerRef: common.Hash(ref).Hex()}, nil
}

// FundsEvents returns the deposits and withdrawals confirmed on env's chain
// in blocks after cursor (at most FundsLogRange blocks), oldest first, and
// the cursor after them.
func (s *Settler) FundsEvents(ctx context.Context, env settleflow.Environment, after settleflow.FundsCursor) ([]settleflow.FundsEvent, settleflow.FundsCursor, error) {
	c, ok := s.chains[env]
	if !ok {
		return nil, after, fmt.Errorf("settlement: no chain is configured for %s mode", env)
	}
	return c.fundsEvents(ctx, after)
}

// Faucet deposits amount (cents) for a test customer from the faucet
// account's test tokens. It returns once the deposit is sent.
func (s *Settler) Faucet(ctx context.Context, env settleflow.Environment, customerID string, amount int64) (string, error) {
	if env != settleflow.Test {
		return "", fmt.Errorf("settlement: the faucet funds test customers only; live customers deposit themselves")
	}
	c, ok := s.chains[env]
	if !ok {
		return "", fmt.Errorf("settlement: no chain is configured for test mode")
	}
	return c.fund(ctx, customerID, amount)
}

// SubmitRefunds queues refunds for their environment's chain. Refusals
// are per refund, in a *settleflow.RefusedError keyed by refund id.
func (s *Settler) SubmitRefunds(ctx context.Context, refunds []settleflow.RefundCharge) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	refused := map[string]*settleflow.Failure{}
	byEnv := map[settleflow.Environment][]settleflow.RefundCharge{}
	for _, r := range refunds {
		if _, ok := s.chains[r.Environment]; !ok {
			refused[r.RefundID] = failure(CodeLivemodeNotConfigured, "no chain is configured for %s mode", r.Environment)
			continue
		}
		byEnv[r.Environment] = append(byEnv[r.Environment], r)
	}
	for env, rs := range byEnv {
		s.chains[env].submitRefunds(rs, refused)
	}
	if len(refused) > 0 {
		return &settleflow.RefusedError{Refused: refused}
	}
	return nil
}

// RefundStatus reports each refund's state, in order, without waiting.
func (s *Settler) RefundStatus(ctx context.Context, refunds []settleflow.RefundCharge) ([]settleflow.SettlementStatus, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrClosed
	}
	out := make([]settleflow.SettlementStatus, len(refunds))
	for i, r := range refunds {
		c, ok := s.chains[r.Environment]
		if !ok {
			out[i] = settleflow.SettlementStatus{WorkflowID: r.RefundID,
				Err: fmt.Errorf("settlement: no chain is configured for %s mode, so the state of refund %s cannot be checked", r.Environment, r.RefundID)}
			continue
		}
		var err error
		if out[i], err = c.refundStatus(ctx, r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// safeHead is the newest block at the confirmation depth (the finalized
// block with depth 0).
func (c *chain) safeHead(ctx context.Context) (*types.Header, error) {
	if c.cfg.Confirmations == 0 {
		h, err := c.b.HeaderByNumber(ctx, big.NewInt(int64(rpc.FinalizedBlockNumber)))
		if err != nil {
			return nil, fmt.Errorf("settlement: %s: finalized block: %w", c.env, err)
		}
		return h, nil
	}
	head, err := c.b.HeaderByNumber(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("settlement: %s: head: %w", c.env, err)
	}
	n := head.Number.Uint64()
	if n+1 < c.cfg.Confirmations {
		return nil, nil
	}
	return c.b.HeaderByNumber(ctx, new(big.Int).SetUint64(n+1-c.cfg.Confirmations))
}

// fundsEvents reads the customers' balance changes in the blocks after
// cursor up to the confirmation depth, as many blocks as the log window
// spans. An event it cannot read is returned with Invalid set (the Store
// quarantines it): one customer's event never stops the others'.
func (c *chain) fundsEvents(ctx context.Context, after settleflow.FundsCursor) ([]settleflow.FundsEvent, settleflow.FundsCursor, error) {
	from := c.deployed
	if after.Block != 0 || after.Hash != "" {
		// A block the node does not have is not a reorg: a node behind
		// (another one behind a load balancer) does not know it yet. A
		// block of that number with another hash is one.
		h, err := c.b.HeaderByNumber(ctx, new(big.Int).SetUint64(after.Block))
		if err != nil {
			return nil, after, fmt.Errorf("settlement: %s: block %d, where deposits were last read: %w", c.env, after.Block, err)
		}
		if h.Hash() != common.HexToHash(after.Hash) {
			return nil, after, fmt.Errorf("settlement: %s: block %d (%s), where deposits were last read, is no longer on the chain: a reorg deeper than the confirmation depth (%d): %w",
				c.env, after.Block, after.Hash, c.cfg.Confirmations, settleflow.ErrFundsReorg)
		}
		from = after.Block + 1
	}
	safe, err := c.safeHead(ctx)
	if err != nil || safe == nil || safe.Number.Uint64() < from {
		return nil, after, err
	}
	logs, to, err := c.fundsLogs.read(ctx, c.b, ethereum.FilterQuery{
		Addresses: []common.Address{c.contract},
		Topics: [][]common.Hash{{depositedEventID, ownerSetEventID, withdrawalRequestedEventID, withdrawalCanceledEventID, withdrawnEventID,
			ownerChangeProposedEventID, ownerChangeCanceledEventID}},
	}, from, safe.Number.Uint64())
	if err != nil {
		return nil, after, fmt.Errorf("settlement: %s: funds events: %w", c.env, err)
	}
	// The cursor names the block the logs were read at: its header is
	// read after them, and the safe head read again after that. A safe
	// head still of the same hash means the chain up to it (the logs'
	// blocks, the header's) did not change meanwhile; one that changed
	// (a reorg while the logs were read) is read again at the next call,
	// not stored as a cursor of another fork than the logs applied.
	toHeader := safe
	if to != safe.Number.Uint64() {
		if toHeader, err = c.b.HeaderByNumber(ctx, new(big.Int).SetUint64(to)); err != nil {
			return nil, after, fmt.Errorf("settlement: %s: block %d: %w", c.env, to, err)
		}
	}
	again, err := c.b.HeaderByNumber(ctx, safe.Number)
	if err != nil {
		return nil, after, fmt.Errorf("settlement: %s: block %d: %w", c.env, safe.Number.Uint64(), err)
	}
	if again.Hash() != safe.Hash() {
		return nil, after, fmt.Errorf("settlement: %s: block %d changed from %s to %s while its deposits were read (a reorg): reading them again",
			c.env, safe.Number.Uint64(), safe.Hash().Hex(), again.Hash().Hex())
	}
	for i := range logs {
		if l := &logs[i]; l.BlockNumber == to && l.BlockHash != toHeader.Hash() {
			return nil, after, fmt.Errorf("settlement: %s: a log of block %d is of block %s, not %s (a reorg while it was read): reading it again",
				c.env, to, l.BlockHash.Hex(), toHeader.Hash().Hex())
		}
	}
	slices.SortFunc(logs, func(a, b types.Log) int {
		return cmp.Or(cmp.Compare(a.BlockNumber, b.BlockNumber), cmp.Compare(a.Index, b.Index))
	})
	var out []settleflow.FundsEvent
	for i := range logs {
		l := &logs[i]
		if l.Removed || len(l.Topics) < 2 {
			continue // not a customer's: no reference to charge it to
		}
		if ev, ok := c.fundsEvent(l); ok {
			out = append(out, ev)
		}
	}
	return out, settleflow.FundsCursor{Block: to, Hash: toHeader.Hash().Hex()}, nil
}

// fundsEvent reads one log of the contract as a balance change; one it
// cannot read has Invalid set. ok is false for a log that is none.
func (c *chain) fundsEvent(l *types.Log) (ev settleflow.FundsEvent, ok bool) {
	ev = settleflow.FundsEvent{Ref: l.Topics[1].Hex(), TxHash: l.TxHash.Hex(), BlockNumber: l.BlockNumber, LogIndex: l.Index}
	var amount *big.Int
	var err error
	switch l.Topics[0] {
	case ownerSetEventID:
		ev.Kind = settleflow.FundsOwnerSet
		if len(l.Topics) < 3 {
			ev.Invalid = "OwnerSet names no owner"
			return ev, true
		}
		ev.Owner = common.BytesToAddress(l.Topics[2][:]).Hex()
		return ev, true
	case ownerChangeProposedEventID, ownerChangeCanceledEventID:
		ev.Kind = settleflow.FundsOwnerChangeCanceled
		if l.Topics[0] == ownerChangeProposedEventID {
			ev.Kind = settleflow.FundsOwnerChangeProposed
		}
		if len(l.Topics) < 3 {
			ev.Invalid = fmt.Sprintf("%s names no owner", ev.Kind)
			return ev, true
		}
		ev.Owner = common.BytesToAddress(l.Topics[2][:]).Hex()
		if ev.Kind == settleflow.FundsOwnerChangeProposed {
			if len(l.Data) != 32 {
				ev.Invalid = fmt.Sprintf("OwnerChangeProposed with %d bytes of data", len(l.Data))
				return ev, true
			}
			if at := new(big.Int).SetBytes(l.Data); at.IsInt64() && at.Sign() > 0 {
				ev.AvailableAt = time.Unix(at.Int64(), 0).UTC()
			}
		}
		return ev, true
	case depositedEventID:
		ev.Kind = settleflow.FundsDeposit
		e, uerr := settlementABI.UnpackDepositedEvent(l)
		if err = uerr; err == nil {
			amount = e.Amount
		}
	case withdrawalRequestedEventID:
		ev.Kind = settleflow.FundsWithdrawalRequested
		e, uerr := settlementABI.UnpackWithdrawalRequestedEvent(l)
		if err = uerr; err == nil {
			amount = e.Amount
			if e.AvailableAt != nil && e.AvailableAt.IsInt64() && e.AvailableAt.Sign() > 0 {
				ev.AvailableAt = time.Unix(e.AvailableAt.Int64(), 0).UTC()
			}
		}
	case withdrawalCanceledEventID:
		ev.Kind = settleflow.FundsWithdrawalCanceled
		return ev, true
	case withdrawnEventID:
		ev.Kind = settleflow.FundsWithdrawn
		e, uerr := settlementABI.UnpackWithdrawnEvent(l)
		if err = uerr; err == nil {
			amount = e.Amount
		}
	default:
		return ev, false
	}
	if err != nil {
		ev.Invalid = fmt.Sprintf("the %s log does not decode: %v", ev.Kind, err)
		return ev, true
	}
	cents, rem := new(big.Int).QuoRem(amount, c.unit, new(big.Int))
	switch {
	case rem.Sign() != 0:
		ev.Invalid = fmt.Sprintf("moves %s base units, not whole cents", amount)
	case cents.Sign() < 0 || !cents.IsInt64():
		ev.Invalid = fmt.Sprintf("moves %s base units (%s cents), more than a balance can hold (%d cents)", amount, cents, int64(math.MaxInt64))
	default:
		ev.Amount = cents.Int64()
	}
	return ev, true
}

// fund deposits cents for a test customer from the faucet account, which
// holds test tokens and has approved the contract. The faucet account is
// not the operator's, so its transactions never compete for the settling
// account's nonces; several processes sharing it retry on a nonce taken.
func (c *chain) fund(ctx context.Context, customerID string, cents int64) (string, error) {
	if c.faucet == nil {
		return "", fmt.Errorf("settlement: %s: no test faucet is configured (ChainConfig.FaucetKey): deposit test tokens for the customer with the contract's deposit", c.env)
	}
	if cents < 1 {
		return "", fmt.Errorf("settlement: faucet amount %d; it must be at least 1 cent", cents)
	}
	amount, err := BaseUnits(cents, c.decimals)
	if err != nil {
		return "", err
	}
	from := crypto.PubkeyToAddress(c.faucet.PublicKey)
	ref := c.ref(customerID)
	c.faucetMu.Lock()
	defer c.faucetMu.Unlock()
	holds, err := TokenBalance(ctx, c.b, c.token, from)
	if err != nil {
		return "", fmt.Errorf("settlement: %s: the faucet's balance: %w", c.env, err)
	}
	if holds.Cmp(amount) < 0 {
		have := new(big.Int).Quo(holds, c.unit)
		return "", &settleflow.InvalidError{Code: settleflow.CodeParameterInvalid, Param: "amount",
			Message: fmt.Sprintf("the test faucet holds %s (%d cents), less than the %d cents asked for; ask for less, or refill it: mint test tokens to the faucet %s (TestUSD's mint, signed by the key that deployed the token: the operator's on the embedded chain and on a chain deploy --dev), or start a new test chain",
				FormatUnits(holds, int(c.decimals)), have.Int64(), cents, from.Hex())}
	}
	// A deposit names the owner the contract records (none: zero), or it
	// reverts (contract version 3: owners are set by the operator only).
	owner, err := c.ownerOf(ctx, ref)
	if err != nil {
		return "", err
	}
	data := settlementABI.PackDeposit(ref, owner, amount)
	gas, err := c.b.EstimateGas(ctx, ethereum.CallMsg{From: from, To: &c.contract, Data: data})
	if err != nil {
		return "", fmt.Errorf("settlement: %s: faucet deposit for %s refused (does faucet %s hold test tokens and allow the contract?): %w", c.env, customerID, from, err)
	}
	head, err := c.b.HeaderByNumber(ctx, nil)
	if err != nil {
		return "", fmt.Errorf("settlement: %s: head: %w", c.env, err)
	}
	// The node's tip, not TipCap (which is the settling account's): a
	// test deposit should land in the next block.
	tip, feeCap, err := fees(ctx, c.b, head, nil, c.cfg.MaxFeeCap)
	if err != nil {
		return "", err
	}
	for attempt := 0; ; attempt++ {
		nonce, err := c.b.PendingNonceAt(ctx, from)
		if err != nil {
			return "", fmt.Errorf("settlement: %s: faucet nonce: %w", c.env, err)
		}
		tx, err := types.SignNewTx(c.faucet, c.signer, &types.DynamicFeeTx{
			ChainID: c.chainID, Nonce: nonce, GasTipCap: tip, GasFeeCap: feeCap, Gas: gas + gas/5 + DepositGasRoom, To: &c.contract, Data: data,
		})
		if err != nil {
			return "", err
		}
		err = c.b.SendTransaction(ctx, tx)
		if err == nil || isAlreadyKnown(err) {
			c.mu.Lock()
			c.fundedUntil = max(c.fundedUntil, head.Number.Uint64()+max(c.cfg.Confirmations, 1)+1)
			c.mu.Unlock()
			c.poke()
			// A node may take a moment to count a sent transaction in the
			// account's pending nonce (geth promotes it from its pool in
			// the background): the next deposit, which reads that nonce
			// under faucetMu, must not reuse this one.
			c.awaitPendingNonce(ctx, from, nonce)
			return tx.Hash().Hex(), nil
		}
		if attempt < 8 && (isNonceTooLow(err) || isUnderpriced(err)) {
			// Another process used the nonce, or the node has not yet
			// counted one of ours: read it again after a moment.
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-time.After(time.Duration(attempt+1) * 10 * time.Millisecond):
			}
			continue
		}
		return "", fmt.Errorf("settlement: %s: faucet deposit for %s: %w", c.env, customerID, err)
	}
}

// ownerOf reads the owner the contract records for ref (zero: none).
func (c *chain) ownerOf(ctx context.Context, ref [32]byte) (common.Address, error) {
	out, err := c.b.CallContract(ctx, ethereum.CallMsg{To: &c.contract, Data: settlementABI.PackAccount(ref)}, nil)
	if err != nil {
		return common.Address{}, fmt.Errorf("settlement: %s: account: %w", c.env, err)
	}
	a, err := settlementABI.UnpackAccount(out)
	if err != nil {
		return common.Address{}, fmt.Errorf("settlement: %s: account: %w", c.env, err)
	}
	return a.Owner, nil
}

// awaitPendingNonce waits, for at most a second, until the node's pending
// nonce of from has passed nonce (the transaction sent with it is counted).
// It gives up quietly: the next deposit then retries on a reused nonce.
func (c *chain) awaitPendingNonce(ctx context.Context, from common.Address, nonce uint64) {
	AwaitPendingNonce(ctx, c.b, from, nonce)
}

// AwaitPendingNonce waits, at most a second, until b counts from's
// transaction of nonce in from's pending nonce: a node may take a moment
// to (geth promotes a sent transaction from its pool in the background),
// and a sender that reads the pending nonce for its next transaction
// before then would reuse this one. Callers sending from one account
// concurrently call it before they let the next send read the nonce.
func AwaitPendingNonce(ctx context.Context, b Backend, from common.Address, nonce uint64) {
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		if n, err := b.PendingNonceAt(ctx, from); err != nil || n > nonce {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(2 * time.Millisecond):
		}
	}
}

func isUnderpriced(err error) bool {
	return err != nil && strings.Contains(strings.ToLower(err.Error()), "underpriced")
}

var _ settleflow.FundsChainTimer = (*Settler)(nil)

// FundsChainTime returns the block time of env's head as its node reports
// it (settleflow.FundsChainTimer): the engine's view of funds is as current
// as that block, so a node that keeps answering while its head stands
// still (stalled, cut off from its peers) makes the view stale after
// Options.FundsMaxAge. The head, not the block at the confirmation depth:
// that one trails the head by the depth by design (the finalized block of
// Confirmations 0 by some 13 minutes on Ethereum, more on a rollup), while
// the head's age is the node's. Zero for a chain that seals blocks on
// demand (ChainConfig.BlocksOnDemand: the simulated chain): its head time
// says nothing, and the view is current whenever the node answers.
func (s *Settler) FundsChainTime(ctx context.Context, env settleflow.Environment) (time.Time, error) {
	c, ok := s.chains[env]
	if !ok {
		return time.Time{}, fmt.Errorf("settlement: no chain is configured for %s mode", env)
	}
	if c.cfg.BlocksOnDemand {
		return time.Time{}, nil
	}
	h, err := c.b.HeaderByNumber(ctx, nil)
	if err != nil {
		return time.Time{}, fmt.Errorf("settlement: %s: head: %w", c.env, err)
	}
	return time.Unix(int64(h.Time), 0).UTC(), nil
}
