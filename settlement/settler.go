package settlement

//go:generate bash contracts/gen.sh

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"go.uber.org/zap"

	"github.com/settleflow/settleflow"
)

// Settler implements [settleflow.Settler] on one chain per configured
// environment. Create it with [New] (or [NewSimulated]); Close it when done.
type Settler struct {
	chains map[settleflow.Environment]*chain
	log    *zap.Logger

	mu     sync.RWMutex
	closed bool
}

var _ settleflow.Settler = (*Settler)(nil)

// ChainInfo describes the chain an environment settles on.
type ChainInfo struct {
	ChainID  int64
	Network  string
	Contract common.Address
	Token    common.Address
	Payee    common.Address
	Operator common.Address
	// Decimals of the token (6 for USDC): one cent is 10^(Decimals-2) base units.
	Decimals uint8
}

// New connects the configured chains, checks each (chain id and kind,
// contract, token, payee, operator key) and starts their workers. An
// environment left nil in cfg is not configured: its charges fail with
// "livemode_not_configured".
func New(ctx context.Context, cfg Config) (*Settler, error) {
	log := cfg.Logger
	if log == nil {
		log = zap.NewNop()
	}
	clock := cfg.Clock
	if clock == nil {
		clock = settleflow.SystemClock
	}
	s := &Settler{chains: map[settleflow.Environment]*chain{}, log: log.Named("settlement")}
	for env, cc := range map[settleflow.Environment]*ChainConfig{settleflow.Live: cfg.Live, settleflow.Test: cfg.Test} {
		if cc == nil {
			continue
		}
		c, err := newChain(ctx, env, *cc, s.log, clock, cfg.Lease)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.chains[env] = c
	}
	return s, nil
}

// Configured reports whether env has a chain. The HTTP layer answers 403
// livemode_not_configured for an environment that has none.
func (s *Settler) Configured(env settleflow.Environment) bool {
	_, ok := s.chains[env]
	return ok
}

// Chain describes env's chain; false if env is not configured.
func (s *Settler) Chain(env settleflow.Environment) (ChainInfo, bool) {
	c, ok := s.chains[env]
	if !ok {
		return ChainInfo{}, false
	}
	return ChainInfo{ChainID: c.chainID.Int64(), Network: c.network, Contract: c.contract, Token: c.token,
		Payee: c.payee, Operator: c.from, Decimals: c.decimals}, true
}

// Submit validates the charges and queues them for the next batch on their
// environment's chain. It returns once they are queued in memory, not on
// chain: see the package documentation for why that is safe. A charge
// already taken is ignored (idempotent per WorkflowID). Refusals are per
// charge, in a *settleflow.RefusedError ("livemode_not_configured",
// "invalid_charge"); every
// charge it does not name was taken. Any other error (RPC unreachable) is
// transient.
func (s *Settler) Submit(ctx context.Context, charges []settleflow.Charge) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	refused := map[string]*settleflow.Failure{}
	byEnv := map[settleflow.Environment][]settleflow.Charge{}
	var order []settleflow.Environment
	for _, ch := range charges {
		if _, ok := s.chains[ch.Environment]; !ok {
			refused[ch.WorkflowID] = failure(CodeLivemodeNotConfigured, "no chain is configured for %s mode", ch.Environment)
			continue
		}
		if _, ok := byEnv[ch.Environment]; !ok {
			order = append(order, ch.Environment)
		}
		byEnv[ch.Environment] = append(byEnv[ch.Environment], ch)
	}
	for _, env := range order {
		s.chains[env].submit(byEnv[env], refused)
	}
	if len(refused) > 0 {
		return &settleflow.RefusedError{Refused: refused}
	}
	return nil
}

// Status reports each charge's state, in order, without waiting: from memory,
// and for a charge with no record, from the chain (so charges that landed
// before a restart are found). Unknown means the charge never settled and is
// not queued: submit it again. A charge whose state cannot be read now (the
// node did not answer) gets Err. A charge of an environment with no chain
// gets Err, not Failed: with no chain to look at, nobody can say it was not
// charged (it may have been submitted before the chain was unconfigured).
func (s *Settler) Status(ctx context.Context, charges []settleflow.Charge) ([]settleflow.SettlementStatus, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrClosed
	}
	out := make([]settleflow.SettlementStatus, len(charges))
	// A chain read that fails is that charge's Err (asked again after a
	// backoff), not the batch's: one flaky call must not hold up the
	// others. After statusErrStreak failures in a row on one chain, its
	// node is taken to be down for this call: the rest get the same error
	// without asking.
	down := map[settleflow.Environment]error{}
	streak := map[settleflow.Environment]int{}
	for i, ch := range charges {
		c, ok := s.chains[ch.Environment]
		if !ok {
			out[i] = settleflow.SettlementStatus{WorkflowID: ch.WorkflowID,
				Err: fmt.Errorf("settlement: no chain is configured for %s mode, so the state of workflow %s's charge cannot be checked", ch.Environment, ch.WorkflowID)}
			continue
		}
		if err := down[ch.Environment]; err != nil {
			out[i] = settleflow.SettlementStatus{WorkflowID: ch.WorkflowID, Err: err}
			continue
		}
		st, err := c.status(ctx, ch)
		if err != nil {
			out[i] = settleflow.SettlementStatus{WorkflowID: ch.WorkflowID, Err: err}
			if streak[ch.Environment]++; streak[ch.Environment] >= statusErrStreak || ctx.Err() != nil {
				down[ch.Environment] = err
			}
			continue
		}
		streak[ch.Environment] = 0
		out[i] = st
	}
	return out, nil
}

// statusErrStreak is how many charges' reads in a row may fail in one
// Status call before the rest of that chain's charges are answered with
// the last error without asking.
const statusErrStreak = 3

// Close stops the workers and closes the RPC connections it opened. Charges
// still queued in memory are dropped (the engine resubmits them).
func (s *Settler) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	for _, c := range s.chains {
		c.close()
	}
	return nil
}

// ChainHealth is one environment's settlement condition, as
// [Settler.Health] reports it.
type ChainHealth struct {
	Environment settleflow.Environment
	// Unreachable: the node has not answered the settler's reading of the
	// chain's head for longer than a few polls (2 s at least);
	// FailingSince says since when, LastError why. It retries with
	// backoff; no charge fails for it.
	Unreachable  bool
	FailingSince time.Time
	LastError    string
	// GasShort: the operator cannot pay for the gas of its next
	// transaction; its charges and refunds wait, none fails. GasNeeded is
	// that transaction's gas × fee cap in wei, GasBalance the operator's
	// balance when the node refused it (nil if it could not be read).
	GasShort   bool
	Operator   common.Address
	GasNeeded  *big.Int
	GasBalance *big.Int
	// NotOperator: the contract names another operator than this
	// settler's signer (the key was rotated with setOperator): every
	// settle, refund and owner grant would revert, so settling is paused
	// (nothing fails, everything waits queued) until the signer is the
	// operator again or the process restarts with the new key.
	// ContractOperator is the operator the contract names (zero if it
	// could not be read), NotOperatorSince since when.
	NotOperator      bool
	ContractOperator common.Address
	NotOperatorSince time.Time
	// RefundsAwaitingPayee counts refunds the contract rejected for now
	// because the payee is owed less than they need: they are sent again
	// with backoff and go through once the payee is funded (fundPayee).
	RefundsAwaitingPayee int
}

// Degraded reports whether the chain cannot settle now: unreachable, the
// operator cannot pay for gas, or the signer is no longer the contract's
// operator. Refunds waiting for the payee's funds do not degrade it:
// charges still settle.
func (h ChainHealth) Degraded() bool { return h.Unreachable || h.GasShort || h.NotOperator }

// Problem says in a sentence why the chain is degraded; "" if it is not.
func (h ChainHealth) Problem() string {
	var p []string
	if h.Unreachable {
		p = append(p, fmt.Sprintf("%s chain unreachable since %s: %s", h.Environment, h.FailingSince.UTC().Format(time.RFC3339), h.LastError))
	}
	if h.GasShort {
		need := "an unknown amount"
		if h.GasNeeded != nil {
			need = FormatUnits(h.GasNeeded, 18) + " ETH"
		}
		p = append(p, fmt.Sprintf("%s operator %s cannot pay for gas: it needs %s for its pending batch", h.Environment, h.Operator, need))
	}
	if h.NotOperator {
		names := "another operator"
		if h.ContractOperator != (common.Address{}) {
			names = h.ContractOperator.Hex()
		}
		p = append(p, fmt.Sprintf("%s signer %s is no longer the contract's operator (it names %s) since %s: settling is paused, nothing fails; configure the operator's key",
			h.Environment, h.Operator, names, h.NotOperatorSince.UTC().Format(time.RFC3339)))
	}
	return strings.Join(p, "; ")
}

// Health reports each configured chain's condition, test then live.
func (s *Settler) Health() []ChainHealth {
	var out []ChainHealth
	for _, env := range []settleflow.Environment{settleflow.Test, settleflow.Live} {
		if c, ok := s.chains[env]; ok {
			out = append(out, c.health())
		}
	}
	return out
}

func (c *chain) health() ChainHealth {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := ChainHealth{Environment: c.env, Operator: c.from}
	if c.misses > 0 && time.Since(c.missSince) >= c.unreachableAfter() {
		h.Unreachable, h.FailingSince = true, c.now().Add(-time.Since(c.missSince))
		h.LastError = c.lastErr.Error()
	}
	if g := c.gasShort; g != nil {
		h.GasShort = true
		h.GasNeeded = new(big.Int).Set(g.need)
		if g.have != nil {
			h.GasBalance = new(big.Int).Set(g.have)
		}
	}
	if o := c.notOperator; o != nil {
		h.NotOperator, h.ContractOperator, h.NotOperatorSince = true, o.current, c.now().Add(-time.Since(o.since))
	}
	for _, r := range c.rqueue {
		if r.payeeShort > 0 {
			h.RefundsAwaitingPayee++
		}
	}
	return h
}
