package x402

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"go.uber.org/zap"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/wire"
)

// fundConcurrency bounds the permits a Submit takes at once.
const fundConcurrency = 16

// storedAuthorization is what a workflow paid by an upto permit keeps
// (settleflow.CreateParams.Authorization): the scheme, the network and the
// payload as the buyer sent it.
type storedAuthorization struct {
	Scheme  string          `json:"scheme"`
	Network string          `json:"network"`
	Payload json.RawMessage `json:"payload"`
}

// FundingSettler is the settler of an engine that sells over x402 by the
// upto scheme: a [settlement.Settler] whose Submit first takes each charge
// paid by a permit (settleflow.Charge.Authorization) from the buyer into
// the buyer's customer balance ([Facilitator.FundUpto]: the charge, never
// more, once), waits until the engine's view of funds has the deposit,
// and then hands the charges to the settlement contract as any other. A
// permit that can no longer be settled (expired, the buyer's funds or
// allowance gone) fails its workflow's charge with insufficient_funds and
// moves nothing. Everything else of the Settler is unchanged.
//
// Build it around the settler, build the engine with it, then Attach the
// engine.
type FundingSettler struct {
	*settlement.Settler
	fac    *Facilitator
	engine atomic.Pointer[settleflow.Engine]
	log    *zap.Logger
	// FundsWait bounds the wait for the engine's view of funds to have a
	// deposit (default 2 minutes): past it the batch is tried again later.
	FundsWait time.Duration
}

// NewFundingSettler wraps s; f takes the payments (its chain must be s's
// test or live chain, the one x402 sells on).
func NewFundingSettler(s *settlement.Settler, f *Facilitator, log *zap.Logger) *FundingSettler {
	if log == nil {
		log = zap.NewNop()
	}
	return &FundingSettler{Settler: s, fac: f, log: log, FundsWait: 2 * time.Minute}
}

// Attach names the engine whose charges fs settles (its funds view is
// awaited after a deposit).
func (fs *FundingSettler) Attach(e *settleflow.Engine) { fs.engine.Store(e) }

// Submit funds the charges paid by a permit, then submits every charge it
// could fund and every other to the settlement contract. A charge whose
// permit cannot be settled is refused (settleflow.RefusedError); a
// transient failure to fund one returns an error after the others were
// submitted (the engine submits them again, harmlessly).
func (fs *FundingSettler) Submit(ctx context.Context, cs []settleflow.Charge) error {
	var (
		take     = make([]settleflow.Charge, 0, len(cs))
		refused  map[string]*wire.Failure
		retryErr error
		errs     = make([]error, len(cs))
		wg       sync.WaitGroup
		sem      = make(chan struct{}, fundConcurrency)
	)
	// The permits are taken concurrently: each is two of the collector's
	// transactions, sent one at a time (their nonces) and mined together.
	for i, c := range cs {
		if len(c.Authorization) == 0 {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = fs.fund(ctx, c)
		}()
	}
	wg.Wait()
	for i, c := range cs {
		if len(c.Authorization) == 0 {
			take = append(take, c)
			continue
		}
		err := errs[i]
		var xe *Error
		switch {
		case err == nil:
			take = append(take, c)
		case errors.As(err, &xe):
			if refused == nil {
				refused = map[string]*wire.Failure{}
			}
			fs.log.Warn("x402 permit could not be settled", zap.String("workflow", c.WorkflowID), zap.String("code", xe.Code), zap.String("reason", xe.Message))
			refused[c.WorkflowID] = &wire.Failure{Code: wire.FailureInsufficientFunds,
				Message: "the buyer's x402 permit could not be settled, nothing was taken: " + xe.Message}
		default:
			fs.log.Warn("x402 permit funding failed, will retry", zap.String("workflow", c.WorkflowID), zap.Error(err))
			retryErr = err
		}
	}
	var err error
	if len(take) > 0 {
		err = fs.Settler.Submit(ctx, take)
	}
	var re *settleflow.RefusedError
	switch {
	case err != nil && !errors.As(err, &re):
		return err
	case retryErr != nil:
		return fmt.Errorf("x402: funding a charge: %w", retryErr)
	case len(refused) == 0:
		return err
	}
	if re != nil {
		for id, f := range re.Refused {
			refused[id] = f
		}
	}
	return &settleflow.RefusedError{Refused: refused}
}

// fund takes c's amount of its permit into its customer's balance and
// waits for the engine to see the deposit.
func (fs *FundingSettler) fund(ctx context.Context, c settleflow.Charge) error {
	var st storedAuthorization
	if err := json.Unmarshal(c.Authorization, &st); err != nil || st.Scheme != SchemeUpto {
		return refused(CodeMalformed, "%v", errNotUpto)
	}
	if st.Network != fs.fac.Network() {
		return refused(CodeNetwork, "the permit is for %s; this facilitator pays on %s", st.Network, fs.fac.Network())
	}
	a, err := ParseUpto(st.Payload)
	if err != nil {
		var xe *Error
		if errors.As(err, &xe) {
			xe.Status = 402
		}
		return err
	}
	e := fs.engine.Load()
	if e == nil {
		return errors.New("x402: FundingSettler has no engine attached")
	}
	amount, err := settlement.BaseUnits(c.Amount, 6)
	if err != nil {
		return refused(CodeAmount, "charge %d: %v", c.Amount, err)
	}
	ref, owner, err := accountOf(ctx, e, c.Environment, c.CustomerID)
	if err != nil {
		return err
	}
	got, err := fs.fac.FundUpto(ctx, a, amount, ref, owner)
	if err != nil {
		return err
	}
	if got.Transfer != (common.Hash{}) || got.Deposit != (common.Hash{}) {
		fs.log.Info("x402 upto payment taken", zap.String("workflow", c.WorkflowID), zap.String("payer", a.From.Hex()),
			zap.String("amount", amount.String()), zap.String("max", a.Max.String()),
			zap.String("transfer", got.Transfer.Hex()), zap.String("deposit", got.Deposit.Hex()))
	}
	if got.Block == 0 {
		return nil // deposited by an earlier call, which waited for it
	}
	// The ledger counts the charge against the customer's account when it
	// is Settled: the account must hold the deposit by then.
	return awaitFunds(ctx, e, c.Environment, got.Block, fs.FundsWait, fs.fac.mine, fs.log)
}
