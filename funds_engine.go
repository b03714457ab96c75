package settleflow

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/internal/stage"
	"go.uber.org/zap"
)

// The engine's side of customer funds: admission (Create reserves the quote
// against the customer's available balance, in the Store's insert), the
// test faucet, and following deposits and withdrawals from the chain.

// TestCustomerInsufficientFunds is the test customer the faucet never funds,
// so a 402 can be tried in test mode (as a card test number lets one try a
// decline).
const TestCustomerInsufficientFunds = "cus_insufficient_funds"

// x402CustomerPrefix begins the id of a customer that is a wallet paying
// over x402 (x402.CustomerID): the test faucet never funds one, which pays
// for each workflow itself.
const x402CustomerPrefix = "cus_x402_"

// DefaultTestFaucet is what the test faucet deposits for a test customer
// seen for the first time: 1,000.00.
const DefaultTestFaucet int64 = 100_000

// DefaultFundsMaxAge is Options.FundsMaxAge's default, the reference
// server's: past it a create that needs funds is refused rather than
// admitted against balances the chain may have moved on from.
const DefaultFundsMaxAge = 10 * time.Minute

// funds returns the settler's Funds side if it charges customer balances in
// env.
func (e *Engine) funds(env Environment) (Funds, bool) {
	f, ok := e.settler.(Funds)
	if !ok || !f.Funded(env) {
		return nil, false
	}
	return f, true
}

// fundsState is what the engine keeps in memory about funds.
type fundsState struct {
	// faucetSeen holds the test customers this process has made sure of
	// (funded, or found funded before), so the faucet is asked about once
	// per customer and process.
	faucetSeen sync.Map // customer id → struct{}
	// syncMu serializes following the chain of each environment.
	syncMu [2]sync.Mutex
	// currentAt is, per environment, when the view of funds was last
	// current (FundsStatus.CurrentAt, unix microseconds; 0 never), as this
	// engine last followed it or read it; readAt is when it last read it
	// from the Store (unix microseconds, the engine's clock).
	currentAt, readAt [2]atomic.Int64
	// triedAt is when a create last followed the chain itself because the
	// view was stale; markedAt when this engine last told the Store it was
	// current (unix microseconds, the engine's clock), and markedFor the
	// time it marked it current at (the chain's, see FundsChainTimer).
	triedAt, markedAt, markedFor [2]atomic.Int64
}

func envIndex(env Environment) int {
	if env == Live {
		return 1
	}
	return 0
}

// reserve prepares ins to be admitted against the customer's balance, when
// the settler charges customer balances in env; it runs the test faucet for
// a customer seen for the first time.
func (e *Engine) reserve(ctx context.Context, ins *Insert, env Environment) error {
	f, ok := e.funds(env)
	if !ok {
		if len(ins.Workflow.Authorization) > 0 {
			return &InvalidError{Code: CodeParameterInvalid, Param: "authorization",
				Message: fmt.Sprintf("a payment authorization pays into a customer balance, and %s charges none", env)}
		}
		return nil
	}
	ref, err := f.CustomerRef(env, ins.Workflow.CustomerID)
	if err != nil {
		return fmt.Errorf("settleflow: customer reference: %w", err)
	}
	if len(ins.Workflow.Authorization) > 0 {
		// Paid by its authorization, not the balance: nothing to reserve,
		// but the charge is the account's (the ledger counts it when
		// Settled).
		ins.Workflow.AccountRef = ref
		return nil
	}
	ins.Reserve, ins.Ref = true, ref
	if env == Test && e.opts.TestFaucet > 0 && ins.Workflow.CustomerID != TestCustomerInsufficientFunds &&
		!strings.HasPrefix(ins.Workflow.CustomerID, x402CustomerPrefix) {
		if err := e.faucet(ctx, f, ins.Workflow.CustomerID, ref); err != nil {
			// The admission below says whether the customer can pay; a
			// faucet that failed is logged, not the caller's error. One
			// whose deposit is sent and not confirmed yet is: admitted
			// now, the customer would be refused 402 for a deposit on
			// its way.
			e.log.Warn("test faucet failed", zap.String("customer", ins.Workflow.CustomerID), zap.Error(err))
			var unconfirmed *FundsUnconfirmedError
			if errors.As(err, &unconfirmed) {
				return err
			}
		}
	}
	// After the faucet, which follows the chain while it waits: a balance
	// older than the bound is not trusted.
	return e.fundsCurrent(ctx, env)
}

// faucet funds a test customer the first time any engine sharing the Store
// sees it, and waits (at most Options.FaucetWait) until the deposit is
// confirmed and applied, so the customer's first create is admitted.
//
// The Store's mark (MarkFaucet) is what says the faucet funded a customer,
// not this process's memory: a restarted engine, which has forgotten whom
// it funded, funds nobody the mark names unless the mark's faucet deposited
// nothing (its process died before sending). It takes such a faucet over
// only once the mark is older than Options.FaucetTakeover, the account has
// not changed since the mark (a customer funded, then withdrawn to zero,
// has), and the engine has followed the chain to its head (a deposit the
// follower has not reached yet is not "nothing deposited").
func (e *Engine) faucet(ctx context.Context, f Funds, customerID, ref string) error {
	if _, seen := e.funds0.faucetSeen.Load(customerID); seen {
		return nil
	}
	now := e.now()
	mine, err := e.store.MarkFaucet(ctx, Test, customerID, ref, now, time.Time{})
	if err != nil {
		return err
	}
	if !mine {
		// Another request (here or in another engine, or before a restart)
		// is funding it, or did: wait for its deposit, so that concurrent
		// first creates are not refused while it confirms; take over if its
		// mark grows stale with nothing deposited.
		if a, err := e.store.GetAccount(ctx, Test, customerID, ref); err == nil && fundedBefore(a) {
			e.funds0.faucetSeen.Store(customerID, struct{}{})
			return nil
		}
		waitFor := e.faucetWait(ctx)
		wait, cancel := context.WithTimeout(ctx, waitFor)
		defer cancel()
		for !mine {
			before, cerr := e.store.FundsCursor(wait, Test)
			serr := e.SyncFunds(wait, Test)
			if serr != nil && wait.Err() == nil {
				e.log.Warn("following test deposits failed", zap.Error(serr))
			}
			after, aerr := e.store.FundsCursor(wait, Test)
			a, err := e.store.GetAccount(wait, Test, customerID, ref)
			if err == nil && fundedBefore(a) {
				e.funds0.faucetSeen.Store(customerID, struct{}{})
				return nil
			}
			// Caught up: the follow found nothing new, so nothing the
			// faucet sent has confirmed.
			caughtUp := serr == nil && cerr == nil && aerr == nil && before == after
			if err == nil && caughtUp {
				now := e.now()
				if mine, err = e.store.MarkFaucet(wait, Test, customerID, ref, now, now.Add(-e.opts.FaucetTakeover)); err != nil && wait.Err() == nil {
					return err
				}
				if mine {
					e.log.Warn("test faucet: taking over a faucet that deposited nothing", zap.String("customer", customerID))
					break
				}
			}
			select {
			case <-wait.Done():
				return &FundsUnconfirmedError{Environment: Test, CustomerID: customerID, Waited: waitFor, RetryAfter: e.fundsRetryAfter()}
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	tx, err := f.Faucet(ctx, Test, customerID, e.opts.TestFaucet)
	if err != nil {
		return err
	}
	e.log.Info("test faucet deposit sent", zap.String("customer", customerID), zap.Int64("amount", e.opts.TestFaucet), zap.String("tx", tx))
	if err := e.awaitDeposit(ctx, customerID, ref, 1, tx); err != nil {
		return err
	}
	e.funds0.faucetSeen.Store(customerID, struct{}{})
	return nil
}

// fundedBefore reports whether an account the faucet marked has been
// funded since: it holds deposits, or changed after the mark (a deposit
// later withdrawn to zero leaves Deposited 0 but moved UpdatedAt on).
func fundedBefore(a *Account) bool {
	return a.Deposited > 0 || (!a.FaucetAt.IsZero() && a.UpdatedAt.After(a.FaucetAt))
}

// awaitDeposit follows the test chain until the customer's deposits reach
// atLeast, for at most Options.FaucetWait (see faucetWait); past it, a
// *FundsUnconfirmedError.
func (e *Engine) awaitDeposit(ctx context.Context, customerID, ref string, atLeast int64, tx string) error {
	waitFor := e.faucetWait(ctx)
	wait, cancel := context.WithTimeout(ctx, waitFor)
	defer cancel()
	for {
		if err := e.SyncFunds(wait, Test); err != nil && wait.Err() == nil {
			e.log.Warn("following test deposits failed", zap.Error(err))
		}
		a, err := e.store.GetAccount(wait, Test, customerID, ref)
		if err == nil && a.Deposited >= atLeast {
			return nil
		}
		select {
		case <-wait.Done():
			return &FundsUnconfirmedError{Environment: Test, CustomerID: customerID, TxHash: tx, Waited: waitFor, RetryAfter: e.fundsRetryAfter()}
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// FundTestCustomer deposits amount for a customer of the test environment
// from the test faucet, whether or not the faucet funded it before, and
// waits (at most Options.FaucetWait) until the deposit is confirmed and
// applied; it returns the customer as it is then. It is the test helper
// behind `customers fund` and POST /v1/test_helpers/customers/{id}/fund: a
// deposit without a wallet. Live is never funded this way.
func (e *Engine) FundTestCustomer(ctx context.Context, customerID string, amount int64) (*Customer, error) {
	if err := checkCustomerID(customerID); err != nil {
		return nil, err
	}
	if amount < 1 || amount > MaxAmount {
		return nil, &InvalidError{Code: CodeParameterInvalid, Param: "amount", Message: fmt.Sprintf("amount must be between 1 and %d (minor units)", MaxAmount)}
	}
	f, ok := e.funds(Test)
	if !ok {
		return nil, ErrRefundsNotSupported
	}
	ref, err := f.CustomerRef(Test, customerID)
	if err != nil {
		return nil, fmt.Errorf("settleflow: customer reference: %w", err)
	}
	// Mark the account funded by the faucet: it names the account with the
	// customer id (so the deposit is announced by customer.funded, even
	// for a customer never seen), and the automatic faucet of a first
	// create then leaves it alone.
	if _, err := e.store.MarkFaucet(ctx, Test, customerID, ref, e.now(), time.Time{}); err != nil {
		return nil, err
	}
	e.funds0.faucetSeen.Store(customerID, struct{}{})
	before, err := e.store.GetAccount(ctx, Test, customerID, ref)
	if err != nil {
		return nil, err
	}
	tx, err := f.Faucet(ctx, Test, customerID, amount)
	if err != nil {
		return nil, fmt.Errorf("settleflow: test faucet: %w", err)
	}
	e.log.Info("test faucet deposit sent", zap.String("customer", customerID), zap.Int64("amount", amount), zap.String("tx", tx))
	if err := e.awaitDeposit(ctx, customerID, ref, before.Deposited+amount, tx); err != nil {
		return nil, err
	}
	return e.Customer(ctx, Test, customerID)
}

// maxFundsSteps bounds one SyncFunds: the log ranges it reads in a row
// before it lets other work run.
const maxFundsSteps = 100

// fundsHistoryLimit bounds the cursors a rewind after a reorg looks back
// through for a block both chains share.
const fundsHistoryLimit = 1024

// FundsUnavailableError is returned by Create when the engine cannot know
// whether the customer can pay: its view of the environment's funds is
// older than Options.FundsMaxAge (the funds follower is stopped or behind,
// or its node is stalled: its newest block is that old),
// or the customer has balance changes on chain that could not be applied
// (quarantined: its balance is unknown). Nothing was stored. Over HTTP it
// is a 503 with code funds_unavailable and a Retry-After header.
type FundsUnavailableError struct {
	Environment Environment
	// CustomerID and Quarantined are set when only this customer's
	// balance is unknown: Quarantined of its events are quarantined.
	CustomerID  string
	Quarantined int64
	// CurrentAt is when the view of funds was last current (zero: never),
	// MaxAge the bound it passed; both zero for a quarantined customer.
	CurrentAt time.Time
	MaxAge    time.Duration
	// RetryAfter is when to try again.
	RetryAfter time.Duration
}

func (e *FundsUnavailableError) Error() string {
	if e.CustomerID != "" {
		return fmt.Sprintf("settleflow: funds unavailable: %d balance change(s) of customer %s on chain could not be applied (quarantined), so its balance is unknown",
			e.Quarantined, e.CustomerID)
	}
	if e.CurrentAt.IsZero() {
		return fmt.Sprintf("settleflow: funds unavailable: the %s deposits and withdrawals on chain have not been followed yet", e.Environment)
	}
	return fmt.Sprintf("settleflow: funds unavailable: the view of %s funds was last current at %s (the node's newest block then, or the follower's last read), longer ago than %s",
		e.Environment, e.CurrentAt.Format(time.RFC3339), e.MaxAge)
}

// fundsStatusEvery is how often, at most, an engine whose view of funds is
// stale reads the Store for a fresher one (another engine may follow).
const fundsStatusEvery = 250 * time.Millisecond

// fundsCurrent refuses, with a *FundsUnavailableError, a create that needs
// funds of env while the view of them is older than Options.FundsMaxAge.
func (e *Engine) fundsCurrent(ctx context.Context, env Environment) error {
	maxAge := e.opts.FundsMaxAge
	if maxAge <= 0 {
		return nil
	}
	i := envIndex(env)
	now := e.now()
	fresh := func() (time.Time, bool) {
		us := e.funds0.currentAt[i].Load()
		if us == 0 {
			return time.Time{}, false
		}
		at := time.UnixMicro(us).UTC()
		return at, now.Sub(at) <= maxAge
	}
	if _, ok := fresh(); ok {
		return nil
	}
	if now.UnixMicro()-e.funds0.readAt[i].Load() >= fundsStatusEvery.Microseconds() {
		st, err := e.store.FundsStatus(ctx, env)
		if err != nil {
			return fmt.Errorf("settleflow: funds status: %w", err)
		}
		e.noteCurrent(env, st.CurrentAt)
		e.funds0.readAt[i].Store(now.UnixMicro())
	}
	if _, ok := fresh(); ok {
		return nil
	}
	// Stale: follow the chain now (the background follower may not have
	// run yet, or may run on a stopped instance), for a bounded time; one
	// caller at a time, the others then find it current.
	// A sync that failed a moment ago is not tried again at once: while
	// the node is down, creates are refused, not queued behind each other.
	mu := &e.funds0.syncMu[i]
	mu.Lock() // waits for a sync under way
	now = e.now()
	_, current := fresh()
	mu.Unlock()
	if !current && now.UnixMicro()-e.funds0.triedAt[i].Load() >= fundsStatusEvery.Microseconds() {
		wait, cancel := context.WithTimeout(ctx, fundsCatchUp)
		err := e.SyncFunds(wait, env)
		cancel()
		now = e.now()
		e.funds0.triedAt[i].Store(now.UnixMicro())
		if err != nil {
			e.log.Warn("following deposits on chain for a create failed", zap.String("env", string(env)), zap.Error(err))
		}
	}
	at, ok := fresh()
	if ok {
		return nil
	}
	return &FundsUnavailableError{Environment: env, CurrentAt: at, MaxAge: maxAge, RetryAfter: e.fundsRetryAfter()}
}

// fundsCatchUp bounds how long a create whose view of funds is stale
// follows the chain itself before it is refused.
const fundsCatchUp = 5 * time.Second

// fundsMarkEvery is how often, at most, a current follower records it in
// the Store: a tenth of FundsMaxAge, at most 10 s.
func (e *Engine) fundsMarkEvery() time.Duration {
	if e.opts.FundsMaxAge <= 0 {
		return 10 * time.Second
	}
	return min(10*time.Second, e.opts.FundsMaxAge/10)
}

// fundsRetryAfter is the Retry-After of a create refused while the view of
// funds is stale: the follower's next round.
func (e *Engine) fundsRetryAfter() time.Duration {
	return max(time.Second, e.opts.FundsPollInterval)
}

// quarantinedRetryAfter is the Retry-After of a create refused for a
// customer with quarantined events: an operator must look first.
const quarantinedRetryAfter = time.Minute

// noteCurrent records at as when env's view of funds was current, unless
// a later time is known.
func (e *Engine) noteCurrent(env Environment, at time.Time) {
	if at.IsZero() {
		return
	}
	c := &e.funds0.currentAt[envIndex(env)]
	for {
		old := c.Load()
		if old >= at.UnixMicro() || c.CompareAndSwap(old, at.UnixMicro()) {
			return
		}
	}
}

// SyncFunds applies the deposits, withdrawals and owner changes confirmed
// on env's chain since the last time, at once (the engine also does it in
// the background every Options.FundsPollInterval while started). An event
// that cannot be applied is quarantined (logged, counted in FundsHealth)
// and the others are applied; after a reorg deeper than the confirmation
// depth it rewinds to a block both chains share and applies the new
// chain's events. It does nothing for an environment whose charges are not
// paid from customer balances.
func (e *Engine) SyncFunds(ctx context.Context, env Environment) error {
	f, ok := e.funds(env)
	if !ok {
		return nil
	}
	mu := &e.funds0.syncMu[envIndex(env)]
	mu.Lock()
	defer mu.Unlock()
	for range maxFundsSteps {
		from, err := e.store.FundsCursor(ctx, env)
		if err != nil {
			return fmt.Errorf("settleflow: funds cursor: %w", err)
		}
		evs, to, err := f.FundsEvents(ctx, env, from)
		if errors.Is(err, ErrFundsReorg) {
			if err := e.rewindFunds(ctx, f, env, from, err); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("settleflow: following %s deposits: %w", env, err)
		}
		if to == from {
			// Current, as of the chain's newest block: a stalled node
			// that still answers has nothing newer, and its view grows
			// old with its head (FundsChainTimer). The Store learns it at
			// most every fundsMarkEvery (other instances read it there),
			// not at every poll.
			now := e.now()
			at, err := e.fundsChainTime(ctx, f, env, now)
			if err != nil {
				return err
			}
			// A view that moved on by more than that (a stalled node's
			// head moving again) is written at once.
			marked, markedFor := &e.funds0.markedAt[envIndex(env)], &e.funds0.markedFor[envIndex(env)]
			every := e.fundsMarkEvery().Microseconds()
			if now.UnixMicro()-marked.Load() >= every || at.UnixMicro()-markedFor.Load() >= every {
				if err := e.store.MarkFundsCurrent(ctx, env, from, at); err != nil {
					return fmt.Errorf("settleflow: funds cursor: %w", err)
				}
				marked.Store(now.UnixMicro())
				markedFor.Store(at.UnixMicro())
			}
			e.noteCurrent(env, at)
			return nil
		}
		res, err := e.store.ApplyFunds(ctx, FundsBatch{Environment: env, From: from, To: to, Events: evs,
			EventsFor: func(ev FundsEvent, after *Account) *Event { return e.customerEvent(env, ev, after) },
			UpdatedAt: e.now()})
		if err != nil {
			return fmt.Errorf("settleflow: applying %s deposits: %w", env, err)
		}
		if res.Applied {
			quarantined := map[string]string{}
			for _, q := range res.Quarantined {
				quarantined[fmt.Sprintf("%s/%d", q.Event.TxHash, q.Event.LogIndex)] = q.Reason
				e.log.Error("funds on chain: an event could not be applied and is quarantined; its customer's creates are refused until an operator resolves it",
					zap.String("env", string(env)), zap.String("kind", string(q.Event.Kind)), zap.String("ref", q.Event.Ref),
					zap.String("tx", q.Event.TxHash), zap.Uint("logIndex", q.Event.LogIndex), zap.Uint64("block", q.Event.BlockNumber),
					zap.String("reason", q.Reason))
			}
			for _, ev := range evs {
				if _, q := quarantined[fmt.Sprintf("%s/%d", ev.TxHash, ev.LogIndex)]; q || ev.Invalid != "" {
					continue
				}
				e.log.Info("funds on chain", zap.String("env", string(env)), zap.String("kind", string(ev.Kind)),
					zap.String("ref", ev.Ref), zap.Int64("amount", ev.Amount), zap.String("owner", ev.Owner), zap.String("tx", ev.TxHash))
			}
			if len(evs) > 0 {
				stage.Signal(e.eventsWake)
			}
		}
		// Not applied: another engine moved the cursor; read it again.
	}
	return nil
}

// fundsChainTime is when env's view of funds, followed to the chain's
// head, is current: the block time of the node's newest block when the
// settler tells it (FundsChainTimer), never later than now (the engine's
// clock, the one clock ages are measured with); now when it does not.
func (e *Engine) fundsChainTime(ctx context.Context, f Funds, env Environment, now time.Time) (time.Time, error) {
	t, ok := f.(FundsChainTimer)
	if !ok {
		return now, nil
	}
	at, err := t.FundsChainTime(ctx, env)
	if err != nil {
		return time.Time{}, fmt.Errorf("settleflow: following %s deposits: the chain's head: %w", env, err)
	}
	if at.IsZero() || at.After(now) {
		return now, nil
	}
	return at.UTC(), nil
}

// rewindFunds goes back, after a reorg deeper than the confirmation depth
// made the cursor's block leave the chain, to the newest block of the
// Store's history still on the chain, reverting what was applied after it.
func (e *Engine) rewindFunds(ctx context.Context, f Funds, env Environment, from FundsCursor, cause error) error {
	hist, err := e.store.FundsHistory(ctx, env, fundsHistoryLimit)
	if err != nil {
		return fmt.Errorf("settleflow: funds history: %w", err)
	}
	for _, c := range hist {
		if c.Block >= from.Block {
			continue
		}
		_, _, err := f.FundsEvents(ctx, env, c)
		if errors.Is(err, ErrFundsReorg) {
			continue
		}
		if err != nil {
			return fmt.Errorf("settleflow: following %s deposits after a reorg: %w", env, err)
		}
		ok, err := e.store.RewindFunds(ctx, FundsRewind{Environment: env, From: from, To: c, UpdatedAt: e.now()})
		if err != nil {
			return fmt.Errorf("settleflow: rewinding %s deposits after a reorg: %w", env, err)
		}
		if ok {
			e.log.Error("funds on chain: a reorg deeper than the confirmation depth; rewound to a block both chains share and applying the new chain's events",
				zap.String("env", string(env)), zap.Uint64("from", from.Block), zap.String("fromHash", from.Hash),
				zap.Uint64("to", c.Block), zap.String("toHash", c.Hash), zap.NamedError("cause", cause))
		}
		return nil
	}
	return fmt.Errorf("settleflow: following %s deposits: %w; and none of the %d blocks kept of the cursor's history is on the chain any more: the funds follower cannot rewind by itself", env, cause, len(hist))
}

// FundsHealth is how current an engine's view of one environment's
// customer funds is: part of the server's readiness.
type FundsHealth struct {
	Environment Environment `json:"environment"`
	// Block is the last block followed (at the confirmation depth).
	Block uint64 `json:"block"`
	// CurrentAt is when the follower last found nothing newer on chain;
	// null if never.
	CurrentAt *time.Time `json:"currentAt"`
	// AgeSeconds is how old the view is (since CurrentAt; -1 if never).
	AgeSeconds float64 `json:"ageSeconds"`
	// MaxAgeSeconds is Options.FundsMaxAge (0: no bound).
	// CurrentAt is the block time of the node's newest block when the
	// follower was last current (see FundsChainTimer), so a stalled node
	// ages the view like a stopped follower.
	MaxAgeSeconds float64 `json:"maxAgeSeconds"`
	// Stale is set while AgeSeconds passes MaxAgeSeconds: creates that
	// need funds are refused (funds_unavailable).
	Stale bool `json:"stale"`
	// Quarantined counts the environment's balance changes on chain that
	// could not be applied; their customers' creates are refused.
	Quarantined int64 `json:"quarantined"`
}

// FundsHealth reports, for each environment whose charges are paid from
// customer balances, how current the engine's view of funds is and how many
// events are quarantined (one read of the Store each).
func (e *Engine) FundsHealth(ctx context.Context) ([]FundsHealth, error) {
	var out []FundsHealth
	now := e.now()
	for _, env := range e.fundedEnvs() {
		st, err := e.store.FundsStatus(ctx, env)
		if err != nil {
			return nil, err
		}
		e.noteCurrent(env, st.CurrentAt)
		h := FundsHealth{Environment: env, Block: st.Cursor.Block, AgeSeconds: -1, MaxAgeSeconds: max(0, e.opts.FundsMaxAge.Seconds()), Quarantined: st.Quarantined}
		if !st.CurrentAt.IsZero() {
			at := st.CurrentAt
			h.CurrentAt = &at
			h.AgeSeconds = math.Max(0, now.Sub(at).Seconds())
		}
		h.Stale = e.opts.FundsMaxAge > 0 && (h.CurrentAt == nil || now.Sub(st.CurrentAt) > e.opts.FundsMaxAge)
		out = append(out, h)
	}
	return out, nil
}

// customerEvent is the event announcing a balance change followed on
// chain, for a customer the engine knows by id (a change for a reference
// no create, faucet or owner grant has named is applied without an event):
// customer.funded for a deposit, customer.owner_set for an owner set,
// customer.withdrawal_requested for a withdrawal request,
// customer.owner_change_proposed and customer.owner_change_canceled for an
// owner change proposed or dropped; nil for the others. The Store writes it in the transaction that applies the change,
// once per change.
func (e *Engine) customerEvent(env Environment, ev FundsEvent, after *Account) *Event {
	if after == nil || after.CustomerID == "" {
		return nil
	}
	bal := after.Balance()
	data := EventData{CustomerID: after.CustomerID, Balance: &bal}
	var typ EventType
	switch ev.Kind {
	case FundsDeposit:
		typ = EventCustomerFunded
		data.Deposit = &DepositEvent{Amount: Money{Amount: ev.Amount, Currency: Currency}, TxHash: ev.TxHash, BlockNumber: ev.BlockNumber}
	case FundsOwnerSet:
		typ = EventCustomerOwnerSet
		data.Owner = &OwnerSetEvent{Address: ev.Owner, TxHash: ev.TxHash, BlockNumber: ev.BlockNumber}
	case FundsWithdrawalRequested:
		typ = EventCustomerWithdrawalRequested
		w := &WithdrawalRequestEvent{Amount: Money{Amount: ev.Amount, Currency: Currency}, TxHash: ev.TxHash, BlockNumber: ev.BlockNumber}
		if !ev.AvailableAt.IsZero() {
			at := ev.AvailableAt.UTC()
			w.AvailableAt = &at
		}
		data.Withdrawal = w
	case FundsOwnerChangeProposed, FundsOwnerChangeCanceled:
		typ = EventCustomerOwnerChangeCanceled
		oc := &OwnerChangeEvent{Address: ev.Owner, TxHash: ev.TxHash, BlockNumber: ev.BlockNumber}
		if ev.Kind == FundsOwnerChangeProposed {
			typ = EventCustomerOwnerChangeProposed
			if !ev.AvailableAt.IsZero() {
				at := ev.AvailableAt.UTC()
				oc.EffectiveAt = &at
			}
		}
		data.OwnerChange = oc
	default:
		return nil
	}
	now := e.now()
	return &Event{ID: ids.New(ids.Event, now), Object: "event", Type: typ, Livemode: env.Livemode(), CreatedAt: now, Data: data}
}

// Customer returns a customer's balance and deposit instructions in env. A
// customer never seen has a zero balance (it can be funded before its first
// workflow). An invalid customer id is an *InvalidError naming customerId.
// With a settler that does not charge customer balances in env, the balance
// is zero and Deposit is nil.
func (e *Engine) Customer(ctx context.Context, env Environment, customerID string) (*Customer, error) {
	if !env.Valid() {
		return nil, fmt.Errorf("settleflow: environment %q is neither test nor live", env)
	}
	if err := checkCustomerID(customerID); err != nil {
		return nil, err
	}
	c := &Customer{ID: customerID, Object: "customer", Livemode: env.Livemode(), Balance: Balance{Currency: Currency}}
	f, ok := e.funds(env)
	if !ok {
		return c, nil
	}
	ref, err := f.CustomerRef(env, customerID)
	if err != nil {
		return nil, fmt.Errorf("settleflow: customer reference: %w", err)
	}
	a, err := e.store.GetAccount(ctx, env, customerID, ref)
	if err != nil {
		return nil, err
	}
	c.Balance = a.Balance()
	if a.Owner != "" {
		owner := a.Owner
		c.Owner = &owner
	}
	d, err := f.DepositInfo(env, customerID)
	if err != nil {
		return nil, fmt.Errorf("settleflow: deposit instructions: %w", err)
	}
	c.Deposit = &d
	// A change of owner proposed on chain, read there: the one thing a
	// leaked portal link can start that the owner must see in time.
	if r, ok := e.settler.(OwnerChangeReader); ok && c.Owner != nil {
		if c.OwnerChange, err = r.ProposedOwner(ctx, env, customerID); err != nil {
			return nil, fmt.Errorf("settleflow: the owner change proposed for %s: %w", customerID, err)
		}
	}
	return c, nil
}

// checkCustomerID refuses a customer id that is not cus_ followed by 1–255
// of A-Z, a-z, 0-9, _ and -, with the message create gives.
func checkCustomerID(id string) error {
	if !customerIDPattern.MatchString(id) {
		return &InvalidError{Code: CodeParameterInvalid, Param: "customerId", Message: customerIDMessage}
	}
	return nil
}

// fundedEnvs lists the environments whose charges are paid from customer
// balances: those the funds stage follows.
func (e *Engine) fundedEnvs() []Environment {
	var envs []Environment
	for _, env := range []Environment{Test, Live} {
		if _, ok := e.funds(env); ok {
			envs = append(envs, env)
		}
	}
	return envs
}

// FundsBlock is the chain block up to which the engine's view of env's
// customer funds has followed the chain (0 before it first did): a deposit
// mined at or before it is in the balances the engine admits against and
// charges. See SyncFunds.
func (e *Engine) FundsBlock(ctx context.Context, env Environment) (uint64, error) {
	c, err := e.store.FundsCursor(ctx, env)
	if err != nil {
		return 0, err
	}
	return c.Block, nil
}
