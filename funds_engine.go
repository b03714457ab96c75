package settleflow

import (
	"context"
	"fmt"
	"sync"
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

// DefaultTestFaucet is what the test faucet deposits for a test customer
// seen for the first time: 1,000.00.
const DefaultTestFaucet int64 = 100_000

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
		return nil
	}
	ref, err := f.CustomerRef(env, ins.Workflow.CustomerID)
	if err != nil {
		return fmt.Errorf("settleflow: customer reference: %w", err)
	}
	ins.Reserve, ins.Ref = true, ref
	if env == Test && e.opts.TestFaucet > 0 && ins.Workflow.CustomerID != TestCustomerInsufficientFunds {
		if err := e.faucet(ctx, f, ins.Workflow.CustomerID, ref); err != nil {
			// The admission below says whether the customer can pay; a
			// faucet that failed is logged, not the caller's error.
			e.log.Warn("test faucet failed", zap.String("customer", ins.Workflow.CustomerID), zap.Error(err))
		}
	}
	return nil
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
		wait, cancel := context.WithTimeout(ctx, e.opts.FaucetWait)
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
				return fmt.Errorf("settleflow: the test faucet's deposit for %s was not confirmed within %s", customerID, e.opts.FaucetWait)
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
// atLeast, for at most Options.FaucetWait.
func (e *Engine) awaitDeposit(ctx context.Context, customerID, ref string, atLeast int64, tx string) error {
	wait, cancel := context.WithTimeout(ctx, e.opts.FaucetWait)
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
			return fmt.Errorf("settleflow: the test deposit %s was not confirmed within %s", tx, e.opts.FaucetWait)
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

// SyncFunds applies the deposits and withdrawals confirmed on env's chain
// since the last time, at once (the engine also does it in the background
// every Options.FundsPollInterval while started). It does nothing for an
// environment whose charges are not paid from customer balances.
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
		if err != nil {
			return fmt.Errorf("settleflow: following %s deposits: %w", env, err)
		}
		if to == from {
			return nil
		}
		applied, err := e.store.ApplyFunds(ctx, FundsBatch{Environment: env, From: from, To: to, Events: evs,
			EventsFor: func(ev FundsEvent, after *Account) *Event { return e.fundedEvent(env, ev, after) },
			UpdatedAt: e.now()})
		if err != nil {
			return fmt.Errorf("settleflow: applying %s deposits: %w", env, err)
		}
		if applied {
			for _, ev := range evs {
				e.log.Info("funds on chain", zap.String("env", string(env)), zap.String("kind", string(ev.Kind)),
					zap.String("ref", ev.Ref), zap.Int64("amount", ev.Amount), zap.String("tx", ev.TxHash))
			}
			if len(evs) > 0 {
				stage.Signal(e.eventsWake)
			}
		}
		// Not applied: another engine moved the cursor; read it again.
	}
	return nil
}

// fundedEvent is the customer.funded event of a deposit, for a customer the
// engine knows by id (a deposit for a reference no create or lookup has named
// yet is credited without an event).
func (e *Engine) fundedEvent(env Environment, ev FundsEvent, after *Account) *Event {
	if ev.Kind != FundsDeposit || after == nil || after.CustomerID == "" {
		return nil
	}
	now := e.now()
	bal := after.Balance()
	return &Event{ID: ids.New(ids.Event, now), Object: "event", Type: EventCustomerFunded, Livemode: env.Livemode(), CreatedAt: now,
		Data: EventData{CustomerID: after.CustomerID, Balance: &bal,
			Deposit: &DepositEvent{Amount: Money{Amount: ev.Amount, Currency: Currency}, TxHash: ev.TxHash, BlockNumber: ev.BlockNumber}}}
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
	d, err := f.DepositInfo(env, customerID)
	if err != nil {
		return nil, fmt.Errorf("settleflow: deposit instructions: %w", err)
	}
	c.Deposit = &d
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
