// Package fundstest is a test double of a settler that charges customer
// balances (settleflow.Settler and settleflow.Funds), in memory: a chain of
// numbered blocks holding deposits, charges debited from their customer's
// balance (or declined when it cannot cover them) and refunds credited back,
// each applied once. It lets the HTTP API and its clients be tested end to
// end without a chain; the settlement package runs the same paths against
// real ones. It is for tests only.
package fundstest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"

	"github.com/settleflow/settleflow"
)

// Settler is the double. The zero value is not usable; call New.
type Settler struct {
	// Live makes the live environment configured and funded too; by
	// default only test is.
	Live bool
	// LiveUnfunded makes the live environment configured but not funded
	// (it overrides Live): live charges are confirmed without touching any
	// balance, as by a settler that does not charge balances, and the
	// engine refuses refunds there.
	LiveUnfunded bool
	// Hold, when set, keeps the charges of the customers it reports
	// pending: Submit leaves them undebited and Status reports them
	// SettlementPending, so their workflows stay Settling. Set it before
	// the engine starts.
	Hold func(customerID string) bool
	// HoldFaucet keeps the faucet's deposits unconfirmed, as a chain that
	// makes no more blocks would: Faucet answers with a transaction hash,
	// and FundsEvents never reports the deposit. Set it before the engine
	// starts.
	HoldFaucet bool

	mu       sync.Mutex
	head     uint64
	events   []event
	balance  map[string]int64 // by customer ref
	charges  map[string]charge
	refunds  map[string]settleflow.RefundCharge
	refunded map[string]int64 // workflow id → amount refunded
	faucets  int
}

type event struct {
	env settleflow.Environment
	ev  settleflow.FundsEvent
}

type charge struct {
	c        settleflow.Charge
	declined bool
	block    uint64
}

// New returns an empty chain.
func New() *Settler {
	return &Settler{balance: map[string]int64{}, charges: map[string]charge{},
		refunds: map[string]settleflow.RefundCharge{}, refunded: map[string]int64{}}
}

// ChainID and Network are what DepositInfo and every settlement report.
const (
	ChainID = 1337
	Network = "fundstest"
	// Contract and Token are the addresses DepositInfo names.
	Contract = "0x5e771e0000000000000000000000000000000001"
	Token    = "0x5e771e0000000000000000000000000000000002"
)

// Configured reports test, and live when Live or LiveUnfunded is set.
func (s *Settler) Configured(env settleflow.Environment) bool {
	return env == settleflow.Test || (env == settleflow.Live && (s.Live || s.LiveUnfunded))
}

// Funded reports test, and live when Live is set and LiveUnfunded is not:
// those environments are paid from balances.
func (s *Settler) Funded(env settleflow.Environment) bool {
	return env == settleflow.Test || (env == settleflow.Live && s.Live && !s.LiveUnfunded)
}

// CustomerRef derives the reference from the environment and the id.
func (s *Settler) CustomerRef(env settleflow.Environment, customerID string) (string, error) {
	h := sha256.Sum256([]byte("fundstest\x00" + string(env) + "\x00" + customerID))
	return "0x" + hex.EncodeToString(h[:]), nil
}

// DepositInfo names the double's contract and token.
func (s *Settler) DepositInfo(env settleflow.Environment, customerID string) (settleflow.DepositInfo, error) {
	ref, err := s.CustomerRef(env, customerID)
	if err != nil {
		return settleflow.DepositInfo{}, err
	}
	return settleflow.DepositInfo{ChainID: ChainID, Network: Network, Contract: Contract, Token: Token, CustomerRef: ref}, nil
}

func blockHash(n uint64) string { return fmt.Sprintf("0x%064x", n) }

// Deposit adds a block with a deposit of amount for the customer, as if it
// had been made on chain; the engine applies it at its next SyncFunds.
func (s *Settler) Deposit(env settleflow.Environment, customerID string, amount int64) {
	ref, _ := s.CustomerRef(env, customerID)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.head++
	s.balance[ref] += amount
	s.events = append(s.events, event{env, settleflow.FundsEvent{Kind: settleflow.FundsDeposit, Ref: ref, Amount: amount, Owner: "0xowner",
		TxHash: blockHash(s.head), BlockNumber: s.head}})
}

// Balance is the customer's balance on the double's chain.
func (s *Settler) Balance(env settleflow.Environment, customerID string) int64 {
	ref, _ := s.CustomerRef(env, customerID)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.balance[ref]
}

// Refunds counts the refunds applied.
func (s *Settler) Refunds() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.refunds)
}

// Faucets counts the Faucet calls that deposited.
func (s *Settler) Faucets() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faucets
}

// FundsEvents returns every event after the cursor, up to the head.
func (s *Settler) FundsEvents(_ context.Context, env settleflow.Environment, after settleflow.FundsCursor) ([]settleflow.FundsEvent, settleflow.FundsCursor, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if after.Block > 0 && after.Hash != blockHash(after.Block) {
		return nil, after, errors.New("fundstest: cursor not on the chain")
	}
	var out []settleflow.FundsEvent
	for _, e := range s.events {
		if e.ev.BlockNumber > after.Block && e.env == env {
			out = append(out, e.ev)
		}
	}
	if s.head == 0 {
		return nil, after, nil
	}
	return out, settleflow.FundsCursor{Block: s.head, Hash: blockHash(s.head)}, nil
}

// Faucet deposits amount for a test customer (with HoldFaucet, a deposit
// that never confirms).
func (s *Settler) Faucet(_ context.Context, env settleflow.Environment, customerID string, amount int64) (string, error) {
	if env != settleflow.Test {
		return "", errors.New("fundstest: the faucet funds test customers only")
	}
	if s.HoldFaucet {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.faucets++
		return fmt.Sprintf("0x%064x", 1<<40+s.faucets), nil
	}
	s.Deposit(env, customerID, amount)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faucets++
	return blockHash(s.head), nil
}

// Submit debits each charge not seen before from its customer's balance,
// or declines it when the balance cannot cover it; with LiveUnfunded it
// confirms a live charge without a balance. Charges Hold reports are left
// pending.
func (s *Settler) Submit(_ context.Context, cs []settleflow.Charge) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range cs {
		if _, done := s.charges[c.WorkflowID]; done || s.held(c) {
			continue
		}
		ref, _ := s.CustomerRef(c.Environment, c.CustomerID)
		s.head++
		if c.Environment == settleflow.Live && s.LiveUnfunded {
			s.charges[c.WorkflowID] = charge{c: c, block: s.head}
			continue
		}
		if s.balance[ref] < c.Amount {
			s.charges[c.WorkflowID] = charge{c: c, declined: true, block: s.head}
			continue
		}
		s.balance[ref] -= c.Amount
		s.charges[c.WorkflowID] = charge{c: c, block: s.head}
	}
	return nil
}

// Status reports each charge confirmed, declined (Failed,
// insufficient_funds), held (Pending) or unknown.
func (s *Settler) Status(_ context.Context, cs []settleflow.Charge) ([]settleflow.SettlementStatus, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]settleflow.SettlementStatus, len(cs))
	for i, c := range cs {
		out[i].WorkflowID = c.WorkflowID
		ch, ok := s.charges[c.WorkflowID]
		switch {
		case !ok && s.held(c):
			out[i].State = settleflow.SettlementPending
		case !ok:
		case ch.declined:
			out[i].State = settleflow.SettlementFailed
			out[i].Failure = &settleflow.Failure{Code: settleflow.FailureInsufficientFunds, Message: "the customer's balance could not cover the charge"}
		default:
			out[i].State = settleflow.SettlementConfirmed
			out[i].Settlement = s.settlement(ch.block)
		}
	}
	return out, nil
}

func (s *Settler) held(c settleflow.Charge) bool { return s.Hold != nil && s.Hold(c.CustomerID) }

func (s *Settler) settlement(block uint64) *settleflow.Settlement {
	return &settleflow.Settlement{ChainID: ChainID, Network: Network, TxHash: blockHash(block), BlockNumber: block, Confirmations: s.head - block + 1}
}

// SubmitRefunds credits each refund not seen before to its customer's
// balance; a refund beyond its charge is refused, as the contract refuses it.
func (s *Settler) SubmitRefunds(_ context.Context, rs []settleflow.RefundCharge) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	refused := map[string]*settleflow.Failure{}
	for _, r := range rs {
		if _, done := s.refunds[r.RefundID]; done {
			continue
		}
		ch, ok := s.charges[r.WorkflowID]
		if !ok || ch.declined || s.refunded[r.WorkflowID]+r.Amount > ch.c.Amount {
			refused[r.RefundID] = &settleflow.Failure{Code: "refund_exceeds_charge", Message: "the refund exceeds the charge"}
			continue
		}
		ref, _ := s.CustomerRef(r.Environment, r.CustomerID)
		s.head++
		s.refunds[r.RefundID] = r
		s.refunded[r.WorkflowID] += r.Amount
		s.balance[ref] += r.Amount
	}
	if len(refused) > 0 {
		return &settleflow.RefusedError{Refused: refused}
	}
	return nil
}

// RefundStatus reports each refund confirmed or unknown.
func (s *Settler) RefundStatus(_ context.Context, rs []settleflow.RefundCharge) ([]settleflow.SettlementStatus, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]settleflow.SettlementStatus, len(rs))
	for i, r := range rs {
		out[i].WorkflowID = r.WorkflowID
		if _, ok := s.refunds[r.RefundID]; ok {
			out[i].State = settleflow.SettlementConfirmed
			out[i].Settlement = s.settlement(s.head)
		}
	}
	return out, nil
}

var (
	_ settleflow.Settler = (*Settler)(nil)
	_ settleflow.Funds   = (*Settler)(nil)
)
