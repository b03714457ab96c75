package settleflow_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
)

// ledgerSettler is the test double of a settler that charges customer
// balances (settleflow.Funds): an in-memory chain of numbered blocks holding
// each customer's balance, deposits and withdrawal requests as events, charges
// debited (or declined when the balance cannot cover them, recorded once by
// sequence as the contract does) and refunds applied once by refund id. It is
// a unit-test fake: the settlement package runs the same paths against real
// chains.
type ledgerSettler struct {
	*recordingSettler

	mu       sync.Mutex
	head     uint64 // the last block
	events   []settleflow.FundsEvent
	balance  map[string]int64  // by ref
	charges  map[uint64]string // sequence → "charged" | "declined"
	refunds  map[string]int64  // refund id → amount applied
	refundOf map[uint64]int64  // sequence → amount refunded
	amountOf map[uint64]int64  // sequence → amount charged
	faucets  int
	// faucetOff makes Faucet fail.
	faucetOff bool
	// faucetDelay is how long a faucet deposit takes to reach the chain's
	// confirmed blocks.
	faucetDelay time.Duration
}

func newLedgerSettler(t *testing.T) *ledgerSettler {
	return &ledgerSettler{recordingSettler: newRecordingSettler(t, ""), balance: map[string]int64{},
		charges: map[uint64]string{}, refunds: map[string]int64{}, refundOf: map[uint64]int64{}, amountOf: map[uint64]int64{}}
}

func (s *ledgerSettler) Funded(env settleflow.Environment) bool { return s.Configured(env) }

func (s *ledgerSettler) CustomerRef(env settleflow.Environment, customerID string) (string, error) {
	h := sha256.Sum256([]byte("secret\x00" + string(env) + "\x00" + customerID))
	return "0x" + hex.EncodeToString(h[:]), nil
}

func (s *ledgerSettler) DepositInfo(env settleflow.Environment, customerID string) (settleflow.DepositInfo, error) {
	ref, _ := s.CustomerRef(env, customerID)
	return settleflow.DepositInfo{ChainID: 1337, Network: "ledger", Contract: "0x01", Token: "0x02", CustomerRef: ref}, nil
}

// block appends a block holding evs.
func (s *ledgerSettler) block(evs ...settleflow.FundsEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.head++
	for i, ev := range evs {
		ev.BlockNumber, ev.LogIndex = s.head, uint(i)
		ev.TxHash = fmt.Sprintf("0x%064x", s.head)
		switch ev.Kind {
		case settleflow.FundsDeposit:
			s.balance[ev.Ref] += ev.Amount
		case settleflow.FundsWithdrawn:
			s.balance[ev.Ref] -= ev.Amount
		}
		s.events = append(s.events, ev)
	}
}

func (s *ledgerSettler) deposit(t *testing.T, customerID string, amount int64) {
	t.Helper()
	ref, _ := s.CustomerRef(settleflow.Test, customerID)
	s.block(settleflow.FundsEvent{Kind: settleflow.FundsDeposit, Ref: ref, Amount: amount, Owner: "0xowner"})
}

func blockHash(n uint64) string { return fmt.Sprintf("0xb%063x", n) }

func (s *ledgerSettler) FundsEvents(_ context.Context, env settleflow.Environment, after settleflow.FundsCursor) ([]settleflow.FundsEvent, settleflow.FundsCursor, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if after.Block > 0 && after.Hash != blockHash(after.Block) {
		return nil, after, errors.New("cursor not canonical")
	}
	var out []settleflow.FundsEvent
	for _, ev := range s.events {
		if ev.BlockNumber > after.Block {
			out = append(out, ev)
		}
	}
	return out, settleflow.FundsCursor{Block: s.head, Hash: blockHash(s.head)}, nil
}

func (s *ledgerSettler) Faucet(_ context.Context, env settleflow.Environment, customerID string, amount int64) (string, error) {
	if env != settleflow.Test || s.faucetOff {
		return "", errors.New("no faucet")
	}
	s.mu.Lock()
	s.faucets++
	s.mu.Unlock()
	ref, _ := s.CustomerRef(env, customerID)
	ev := settleflow.FundsEvent{Kind: settleflow.FundsDeposit, Ref: ref, Amount: amount, Owner: "0xfaucet"}
	if s.faucetDelay > 0 {
		time.AfterFunc(s.faucetDelay, func() { s.block(ev) })
	} else {
		s.block(ev)
	}
	return "0xfaucet", nil
}

// Submit debits each new charge from its customer's balance or declines it,
// then records it as the recording settler does.
func (s *ledgerSettler) Submit(ctx context.Context, cs []settleflow.Charge) error {
	s.mu.Lock()
	for _, c := range cs {
		if _, done := s.charges[c.Sequence]; done || c.Sequence == 0 {
			continue
		}
		ref, _ := s.CustomerRef(c.Environment, c.CustomerID)
		if s.balance[ref] < c.Amount {
			s.charges[c.Sequence] = "declined"
			continue
		}
		s.balance[ref] -= c.Amount
		s.charges[c.Sequence] = "charged"
		s.amountOf[c.Sequence] = c.Amount
	}
	s.mu.Unlock()
	return s.recordingSettler.Submit(ctx, cs)
}

func (s *ledgerSettler) Status(ctx context.Context, cs []settleflow.Charge) ([]settleflow.SettlementStatus, error) {
	sts, err := s.recordingSettler.Status(ctx, cs)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, c := range cs {
		if s.charges[c.Sequence] == "declined" {
			sts[i].State, sts[i].Settlement = settleflow.SettlementFailed, nil
			sts[i].Failure = &settleflow.Failure{Code: settleflow.FailureInsufficientFunds, Message: "the customer's balance could not cover the charge"}
		}
	}
	return sts, nil
}

func (s *ledgerSettler) SubmitRefunds(_ context.Context, rs []settleflow.RefundCharge) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range rs {
		if _, done := s.refunds[r.RefundID]; done {
			continue
		}
		if s.charges[r.Sequence] != "charged" || s.refundOf[r.Sequence]+r.Amount > s.amountOf[r.Sequence] {
			return &settleflow.RefusedError{Refused: map[string]*settleflow.Failure{r.RefundID: {Code: "refund_exceeds_charge", Message: "over the charge"}}}
		}
		ref, _ := s.CustomerRef(r.Environment, r.CustomerID)
		s.refunds[r.RefundID] = r.Amount
		s.refundOf[r.Sequence] += r.Amount
		s.balance[ref] += r.Amount
	}
	return nil
}

func (s *ledgerSettler) RefundStatus(_ context.Context, rs []settleflow.RefundCharge) ([]settleflow.SettlementStatus, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]settleflow.SettlementStatus, len(rs))
	for i, r := range rs {
		out[i].WorkflowID = r.WorkflowID
		if _, ok := s.refunds[r.RefundID]; ok {
			out[i].State = settleflow.SettlementConfirmed
			out[i].Settlement = &settleflow.Settlement{ChainID: 1337, Network: "ledger", TxHash: "0xrefund", BlockNumber: s.head, Confirmations: 12}
		}
	}
	return out, nil
}

func (s *ledgerSettler) balanceOf(customerID string) int64 {
	ref, _ := s.CustomerRef(settleflow.Test, customerID)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.balance[ref]
}

func newFundedFixture(t *testing.T, tweak func(*settleflow.Options)) (*fixture, *ledgerSettler) {
	t.Helper()
	ls := newLedgerSettler(t)
	f := newFixture(t, func(o *settleflow.Options) {
		o.Settler = ls
		o.FundsPollInterval = 20 * time.Millisecond
		o.TestFaucet = -1
		if tweak != nil {
			tweak(o)
		}
	})
	f.settler = ls.recordingSettler
	return f, ls
}

func createFor(ctx context.Context, e *settleflow.Engine, customer, ticket string) (*settleflow.Workflow, error) {
	wf, _, err := e.Create(ctx, settleflow.CreateParams{Environment: settleflow.Test, Product: "ticket-triage", CustomerID: customer,
		Payload: json.RawMessage(fmt.Sprintf(`{"ticketId": %q}`, ticket))})
	return wf, err
}

// A quote of ticket-triage without attachments: ceil(200 / 0.7).
const triageQuote = 286

func TestFundsAdmitExactlyWhatTheBalanceCovers(t *testing.T) {
	ctx := context.Background()
	f, ls := newFundedFixture(t, nil)
	ls.deposit(t, "cus_a", 10*triageQuote)
	if err := f.engine.SyncFunds(ctx, settleflow.Test); err != nil {
		t.Fatal(err)
	}
	c, err := f.engine.Customer(ctx, settleflow.Test, "cus_a")
	if err != nil || c.Balance.Available != 10*triageQuote || c.Deposit == nil {
		t.Fatalf("customer before: %+v %v", c, err)
	}
	var mu sync.Mutex
	var admitted []*settleflow.Workflow
	refused := 0
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wf, err := createFor(ctx, f.engine, "cus_a", fmt.Sprintf("T-%d", i))
			mu.Lock()
			defer mu.Unlock()
			var ins *settleflow.InsufficientFundsError
			switch {
			case err == nil:
				admitted = append(admitted, wf)
			case errors.As(err, &ins):
				refused++
				if ins.Quoted.Amount != triageQuote || ins.Balance.Available >= triageQuote || ins.CustomerID != "cus_a" {
					t.Errorf("refusal %+v", ins)
				}
			default:
				t.Errorf("create: %v", err)
			}
		}()
	}
	wg.Wait()
	if len(admitted) != 10 || refused != 90 {
		t.Fatalf("admitted %d, refused %d; want 10 and 90", len(admitted), refused)
	}
	page, err := f.engine.List(ctx, settleflow.ListParams{Environment: settleflow.Test, Limit: 100})
	if err != nil || len(page.Data) != 10 {
		t.Fatalf("stored %d workflows (%v), want 10: a refused create stores nothing", len(page.Data), err)
	}
	c, _ = f.engine.Customer(ctx, settleflow.Test, "cus_a")
	if c.Balance.Reserved != 10*triageQuote || c.Balance.Available != 0 {
		t.Fatalf("balance after admission %+v", c.Balance)
	}
	if err := f.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(admitted))
	for i, w := range admitted {
		ids[i] = w.ID
	}
	for id, w := range f.waitTerminal(t, settleflow.Test, ids...) {
		if w.Status != settleflow.Settled {
			t.Fatalf("%s %s %+v", id, w.Status, w.Failure)
		}
	}
	c, _ = f.engine.Customer(ctx, settleflow.Test, "cus_a")
	if c.Balance.OnChain != 0 || c.Balance.Reserved != 0 || c.Balance.Available != 0 {
		t.Fatalf("balance after settling %+v", c.Balance)
	}
	if got := ls.balanceOf("cus_a"); got != 0 {
		t.Fatalf("chain balance %d, want 0", got)
	}
	// One cent short of a quote is refused; a deposit that makes it exact admits.
	ls.deposit(t, "cus_a", triageQuote-1)
	f.engine.SyncFunds(ctx, settleflow.Test)
	var ins *settleflow.InsufficientFundsError
	if _, err := createFor(ctx, f.engine, "cus_a", "T-short"); !errors.As(err, &ins) || ins.Balance.Available != triageQuote-1 {
		t.Fatalf("one cent short: %v", err)
	}
	ls.deposit(t, "cus_a", 1)
	f.engine.SyncFunds(ctx, settleflow.Test)
	if _, err := createFor(ctx, f.engine, "cus_a", "T-exact"); err != nil {
		t.Fatalf("exact balance: %v", err)
	}
}

func TestFundsFaucetFundsANewTestCustomerOnce(t *testing.T) {
	ctx := context.Background()
	f, ls := newFundedFixture(t, func(o *settleflow.Options) { o.TestFaucet = 1000 })
	if _, err := createFor(ctx, f.engine, "cus_new", "T-1"); err != nil {
		t.Fatalf("first create of a new test customer: %v", err)
	}
	for i := range 2 {
		if _, err := createFor(ctx, f.engine, "cus_new", fmt.Sprintf("T-%d", i+2)); err != nil {
			t.Fatal(err)
		}
	}
	c, _ := f.engine.Customer(ctx, settleflow.Test, "cus_new")
	if ls.faucets != 1 || c.Balance.OnChain != 1000 || c.Balance.Reserved != 3*triageQuote {
		t.Fatalf("faucets %d, balance %+v", ls.faucets, c.Balance)
	}
	// The faucet's deposit was announced.
	evs, err := f.engine.ListEvents(ctx, settleflow.EventListParams{Environment: settleflow.Test, Type: settleflow.EventCustomerFunded})
	if err != nil || len(evs.Data) != 1 || evs.Data[0].Data.CustomerID != "cus_new" || evs.Data[0].Data.Deposit.Amount.Amount != 1000 {
		t.Fatalf("customer.funded events: %+v %v", evs, err)
	}
	raw, _ := json.Marshal(evs.Data[0])
	var env struct {
		Data map[string]json.RawMessage `json:"data"`
	}
	json.Unmarshal(raw, &env)
	if len(env.Data) != 3 || env.Data["customerId"] == nil || env.Data["balance"] == nil || env.Data["deposit"] == nil {
		t.Fatalf("customer.funded data: %s", raw)
	}
	// The test customer that is never funded.
	var ins *settleflow.InsufficientFundsError
	if _, err := createFor(ctx, f.engine, settleflow.TestCustomerInsufficientFunds, "T-x"); !errors.As(err, &ins) || ins.Balance.Available != 0 {
		t.Fatalf("%s: %v", settleflow.TestCustomerInsufficientFunds, err)
	}
	if ls.faucets != 1 {
		t.Fatalf("faucets %d", ls.faucets)
	}
}

// Concurrent first creates of a new test customer, while the faucet's
// deposit is still confirming: one faucet deposit, and every create waits
// for it and is admitted (none refused with 402 meanwhile).
func TestFundsFaucetConcurrentFirstCreates(t *testing.T) {
	ctx := context.Background()
	f, ls := newFundedFixture(t, func(o *settleflow.Options) { o.TestFaucet = 10_000 })
	ls.mu.Lock()
	ls.faucetDelay = 300 * time.Millisecond
	ls.mu.Unlock()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := createFor(ctx, f.engine, "cus_burst", fmt.Sprintf("T-burst-%d", i)); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a concurrent first create: %v", err)
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.faucets != 1 {
		t.Errorf("faucet deposits %d, want 1", ls.faucets)
	}
}

// A new test customer's first create whose faucet deposit is sent but not
// confirmed within Options.FaucetWait, or before the create's context
// ends, is refused with a *FundsUnconfirmedError naming the customer and
// the deposit, stores nothing, and is not admitted against a balance that
// lacks the deposit (no 402); once the deposit confirms, a create is
// admitted with no second deposit.
func TestFundsFaucetUnconfirmedIsItsOwnError(t *testing.T) {
	ctx := context.Background()
	f, ls := newFundedFixture(t, func(o *settleflow.Options) { o.TestFaucet = 1000; o.FaucetWait = 300 * time.Millisecond })
	ls.mu.Lock()
	ls.faucetDelay = 2 * time.Second
	ls.mu.Unlock()
	sent := time.Now()
	_, err := createFor(ctx, f.engine, "cus_slow", "T-1")
	var unconfirmed *settleflow.FundsUnconfirmedError
	if !errors.As(err, &unconfirmed) || unconfirmed.CustomerID != "cus_slow" || unconfirmed.TxHash != "0xfaucet" ||
		unconfirmed.Environment != settleflow.Test || unconfirmed.Waited != 300*time.Millisecond || unconfirmed.RetryAfter <= 0 {
		t.Fatalf("a first create whose faucet deposit is not confirmed: %#v (%v)", err, err)
	}
	if list, err := f.engine.List(ctx, settleflow.ListParams{Environment: settleflow.Test, CustomerID: "cus_slow"}); err != nil || len(list.Data) != 0 {
		t.Fatalf("a refused create stored %+v (%v)", list, err)
	}

	// The caller's deadline ends the wait first: the caller hears why,
	// before its context ends.
	f2, ls2 := newFundedFixture(t, func(o *settleflow.Options) { o.TestFaucet = 1000; o.FaucetWait = time.Minute })
	ls2.mu.Lock()
	ls2.faucetDelay = time.Hour
	ls2.mu.Unlock()
	dctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, err = createFor(dctx, f2.engine, "cus_deadline", "T-1")
	if !errors.As(err, &unconfirmed) || dctx.Err() != nil || unconfirmed.Waited > time.Second {
		t.Fatalf("a first create under a deadline: %v (context: %v)", err, dctx.Err())
	}

	// The first deposit confirms: the next create is admitted, funded once.
	for time.Since(sent) < 2500*time.Millisecond {
		time.Sleep(100 * time.Millisecond)
	}
	if err := f.engine.SyncFunds(ctx, settleflow.Test); err != nil {
		t.Fatal(err)
	}
	if _, err := createFor(ctx, f.engine, "cus_slow", "T-2"); err != nil {
		t.Fatalf("after the deposit confirmed: %v", err)
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.faucets != 1 {
		t.Fatalf("faucet deposits %d, want 1", ls.faucets)
	}
}

// A faucet begun by a process that died before sending its deposit (its
// mark, nothing deposited) is taken over once the mark is older than
// Options.FaucetTakeover: the customer's create is admitted, funded once.
func TestFundsFaucetTakesOverADeadOne(t *testing.T) {
	ctx := context.Background()
	f, ls := newFundedFixture(t, func(o *settleflow.Options) { o.TestFaucet = 1000; o.FaucetTakeover = 300 * time.Millisecond })
	ref, _ := ls.CustomerRef(settleflow.Test, "cus_dead")
	// Measured from the mark's own time: the takeover waits 300ms from
	// it, however long the mark took to write.
	marked := time.Now()
	if mine, err := f.store.MarkFaucet(ctx, settleflow.Test, "cus_dead", ref, marked, time.Time{}); !mine || err != nil {
		t.Fatalf("the dead process's mark: %v %v", mine, err)
	}
	if _, err := createFor(ctx, f.engine, "cus_dead", "T-dead"); err != nil {
		t.Fatalf("a create after a dead faucet: %v", err)
	}
	if took := time.Since(marked); took < 300*time.Millisecond {
		t.Errorf("took over after %s, before the mark was stale", took)
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.faucets != 1 {
		t.Errorf("faucet deposits %d, want 1", ls.faucets)
	}
}

func TestFundsPendingWithdrawalIsNotAvailable(t *testing.T) {
	ctx := context.Background()
	f, ls := newFundedFixture(t, nil)
	ls.deposit(t, "cus_w", 3*triageQuote)
	ref, _ := ls.CustomerRef(settleflow.Test, "cus_w")
	ls.block(settleflow.FundsEvent{Kind: settleflow.FundsWithdrawalRequested, Ref: ref, Amount: 2 * triageQuote})
	f.engine.SyncFunds(ctx, settleflow.Test)
	if _, err := createFor(ctx, f.engine, "cus_w", "T-1"); err != nil {
		t.Fatal(err)
	}
	var ins *settleflow.InsufficientFundsError
	if _, err := createFor(ctx, f.engine, "cus_w", "T-2"); !errors.As(err, &ins) || ins.Balance.PendingWithdrawal != 2*triageQuote {
		t.Fatalf("second create against balance under notice: %v", err)
	}
	ls.block(settleflow.FundsEvent{Kind: settleflow.FundsWithdrawalCanceled, Ref: ref})
	f.engine.SyncFunds(ctx, settleflow.Test)
	if _, err := createFor(ctx, f.engine, "cus_w", "T-3"); err != nil {
		t.Fatalf("after the request was canceled: %v", err)
	}
}

func TestFundsDeclinedChargeFailsAndReleases(t *testing.T) {
	ctx := context.Background()
	f, ls := newFundedFixture(t, nil)
	ls.deposit(t, "cus_d", 2*triageQuote)
	f.engine.SyncFunds(ctx, settleflow.Test)
	a, err := createFor(ctx, f.engine, "cus_d", "T-1")
	if err != nil {
		t.Fatal(err)
	}
	// The customer withdraws on chain behind the engine's back.
	ref, _ := ls.CustomerRef(settleflow.Test, "cus_d")
	ls.mu.Lock()
	ls.balance[ref] = 0
	ls.mu.Unlock()
	if err := f.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	w := f.waitTerminal(t, settleflow.Test, a.ID)[a.ID]
	if w.Status != settleflow.Failed || w.Failure == nil || w.Failure.Code != settleflow.FailureInsufficientFunds {
		t.Fatalf("declined charge: %s %+v", w.Status, w.Failure)
	}
	c, _ := f.engine.Customer(ctx, settleflow.Test, "cus_d")
	if c.Balance.Reserved != 0 || c.Balance.OnChain != 2*triageQuote {
		t.Fatalf("balance after a declined charge %+v", c.Balance)
	}
}

func TestFundsRefunds(t *testing.T) {
	ctx := context.Background()
	f, ls := newFundedFixture(t, nil)
	ls.deposit(t, "cus_r", 2*triageQuote)
	f.engine.SyncFunds(ctx, settleflow.Test)
	a, _ := createFor(ctx, f.engine, "cus_r", "T-1")
	b, _ := createFor(ctx, f.engine, "cus_r", "T-2")
	if a == nil || b == nil {
		t.Fatal("creates refused")
	}
	// Not settled yet.
	var se *settleflow.StateError
	if _, _, err := f.engine.Refund(ctx, settleflow.RefundParams{Environment: settleflow.Test, WorkflowID: a.ID}); !errors.As(err, &se) || se.Status != settleflow.Pending {
		t.Fatalf("refund of a Pending workflow: %v", err)
	}
	if err := f.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	f.waitTerminal(t, settleflow.Test, a.ID, b.ID)
	if got := ls.balanceOf("cus_r"); got != 0 {
		t.Fatalf("chain balance after charges %d", got)
	}
	// A partial refund, then the rest (amount 0), then one more cent.
	r1, replayed, err := f.engine.Refund(ctx, settleflow.RefundParams{Environment: settleflow.Test, WorkflowID: a.ID, Amount: 100, Reason: "late", IdempotencyKey: "r-1"})
	if err != nil || replayed || r1.Amount != 100 || r1.Status != settleflow.RefundPending {
		t.Fatalf("partial refund: %+v %v %v", r1, replayed, err)
	}
	again, replayed, err := f.engine.Refund(ctx, settleflow.RefundParams{Environment: settleflow.Test, WorkflowID: a.ID, Amount: 100, Reason: "late", IdempotencyKey: "r-1"})
	if err != nil || !replayed || again.ID != r1.ID {
		t.Fatalf("replay: %+v %v %v", again, replayed, err)
	}
	if _, _, err := f.engine.Refund(ctx, settleflow.RefundParams{Environment: settleflow.Test, WorkflowID: a.ID, Amount: 5, IdempotencyKey: "r-1"}); !errors.Is(err, settleflow.ErrIdempotencyKeyReused) {
		t.Fatalf("key reused: %v", err)
	}
	r2, _, err := f.engine.Refund(ctx, settleflow.RefundParams{Environment: settleflow.Test, WorkflowID: a.ID})
	if err != nil || r2.Amount != triageQuote-100 {
		t.Fatalf("refund of the rest: %+v %v", r2, err)
	}
	var re *settleflow.RefundableError
	if _, _, err := f.engine.Refund(ctx, settleflow.RefundParams{Environment: settleflow.Test, WorkflowID: a.ID, Amount: 1}); !errors.As(err, &re) || re.Refundable != 0 {
		t.Fatalf("third refund: %v", err)
	}
	for _, id := range []string{r1.ID, r2.ID} {
		deadline := time.Now().Add(10 * time.Second)
		for {
			r, err := f.engine.FetchRefund(ctx, settleflow.Test, id)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status == settleflow.RefundSucceeded && r.Settlement != nil {
				break
			}
			if r.Status == settleflow.RefundFailed || time.Now().After(deadline) {
				t.Fatalf("refund %s: %s %+v", id, r.Status, r.Failure)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if got := ls.balanceOf("cus_r"); got != triageQuote {
		t.Fatalf("chain balance after refunds %d, want %d", got, triageQuote)
	}
	w, _ := f.engine.Fetch(ctx, settleflow.Test, a.ID)
	if w.Refunded.Amount != triageQuote || w.Refunded.Currency != "usd" {
		t.Fatalf("workflow refunded %+v", w.Refunded)
	}
	c, _ := f.engine.Customer(ctx, settleflow.Test, "cus_r")
	if c.Balance.OnChain != triageQuote || c.Balance.Available != triageQuote {
		t.Fatalf("balance after refunds %+v", c.Balance)
	}
	page, err := f.engine.ListRefunds(ctx, settleflow.RefundListParams{Environment: settleflow.Test, WorkflowID: a.ID})
	if err != nil || len(page.Data) != 2 || page.Data[0].ID != r2.ID {
		t.Fatalf("list refunds: %+v %v", page, err)
	}
	evs, _ := f.engine.ListEvents(ctx, settleflow.EventListParams{Environment: settleflow.Test, Type: settleflow.EventRefundSucceeded})
	if len(evs.Data) != 2 || evs.Data[0].Data.Refund == nil || evs.Data[0].Data.Refund.Status != settleflow.RefundSucceeded {
		t.Fatalf("refund events %+v", evs)
	}
}

func TestFundsRefundsNeedAFundedSettler(t *testing.T) {
	f := newFixture(t, nil)
	if _, _, err := f.engine.Refund(context.Background(), settleflow.RefundParams{Environment: settleflow.Test, WorkflowID: "wf_01KAAAAAAAAAAAAAAAAAAAAAAA"}); !errors.Is(err, settleflow.ErrRefundsNotSupported) {
		t.Fatalf("refund without a funded settler: %v", err)
	}
	c, err := f.engine.Customer(context.Background(), settleflow.Test, "cus_1")
	if err != nil || c.Deposit != nil || c.Balance.Available != 0 {
		t.Fatalf("customer without funds: %+v %v", c, err)
	}
}

// FundTestCustomer deposits for a customer never seen, announces the deposit
// (customer.funded) and counts as the faucet's funding: the customer's first
// create is not funded again.
func TestFundsFundTestCustomerAnnouncesTheDeposit(t *testing.T) {
	ctx := context.Background()
	f, ls := newFundedFixture(t, func(o *settleflow.Options) { o.TestFaucet = 1000 })
	c, err := f.engine.FundTestCustomer(ctx, "cus_helper", 500)
	if err != nil || c.Balance.Available != 500 {
		t.Fatalf("FundTestCustomer: %+v %v", c, err)
	}
	evs, err := f.engine.ListEvents(ctx, settleflow.EventListParams{Environment: settleflow.Test, Type: settleflow.EventCustomerFunded})
	if err != nil || len(evs.Data) != 1 || evs.Data[0].Data.CustomerID != "cus_helper" || evs.Data[0].Data.Deposit.Amount.Amount != 500 {
		t.Fatalf("customer.funded events: %+v %v", evs, err)
	}
	if _, err := createFor(ctx, f.engine, "cus_helper", "T-1"); err != nil {
		t.Fatal(err)
	}
	if ls.faucets != 1 {
		t.Fatalf("faucet deposits %d, want 1: the helper's", ls.faucets)
	}
}
