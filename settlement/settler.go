package settlement

//go:generate bash contracts/gen.sh

import (
	"context"
	"fmt"
	"sync"

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
// not queued: submit it again. A charge of an environment with no chain gets
// Err, not Failed: with no chain to look at, nobody can say it was not
// charged (it may have been submitted before the chain was unconfigured).
func (s *Settler) Status(ctx context.Context, charges []settleflow.Charge) ([]settleflow.SettlementStatus, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrClosed
	}
	out := make([]settleflow.SettlementStatus, len(charges))
	for i, ch := range charges {
		c, ok := s.chains[ch.Environment]
		if !ok {
			out[i] = settleflow.SettlementStatus{WorkflowID: ch.WorkflowID,
				Err: fmt.Errorf("settlement: no chain is configured for %s mode, so the state of workflow %s's charge cannot be checked", ch.Environment, ch.WorkflowID)}
			continue
		}
		var err error
		if out[i], err = c.status(ctx, ch); err != nil {
			return nil, err
		}
	}
	return out, nil
}

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
