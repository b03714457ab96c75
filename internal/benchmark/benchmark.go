// Package benchmark is the bench harness behind `go run ./cmd/bench` and the
// engine's Go benchmarks: a raw bun insert baseline on the same SQLite
// settings, and an engine with a no-op product and an instant settler.
package benchmark

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/uptrace/bun"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/storage"
	"github.com/settleflow/settleflow/storage/bunstore"
	"github.com/settleflow/settleflow/storage/sqlite"
)

// Product is the name of the no-op product.
const Product = "noop"

// Failer is the part of testing.TB the constructors need.
type Failer interface {
	Fatal(args ...any)
	Cleanup(func())
}

// Raw inserts rows straight through bun, one transaction each: the baseline.
type Raw struct {
	db    *bun.DB // the baseline writes past the store's writer
	store *bunstore.Store
}

// rawRow is a workflow row as the engine stores it, written by hand.
type rawRow struct {
	bun.BaseModel `bun:"table:settleflow_workflows"`

	ID              string `bun:"id,pk"`
	Livemode        bool   `bun:"livemode"`
	Product         string `bun:"product"`
	CustomerID      string `bun:"customer_id"`
	Payload         string `bun:"payload"`
	QuotedAmount    int64  `bun:"quoted_amount"`
	Currency        string `bun:"currency"`
	TargetMarginBps int64  `bun:"target_margin_bps"`
	Status          string `bun:"status"`
	Attempts        int    `bun:"attempts"`
	RunAt           int64  `bun:"run_at"`
	CreatedAt       int64  `bun:"created_at"`
	UpdatedAt       int64  `bun:"updated_at"`
	Sequence        int64  `bun:"sequence"`
}

// OpenRaw opens a database at path with the engine's schema and settings.
func OpenRaw(path string, sync sqlite.Synchronous) (*Raw, error) {
	s, err := sqlite.Open(context.Background(), path, sqlite.OpenOptions{Synchronous: sync})
	if err != nil {
		return nil, err
	}
	return &Raw{db: s.DB().Bun(), store: s}, nil
}

// NewHarness is OpenRaw for Go benchmarks.
func NewHarness(f Failer, path string) *Raw {
	r, err := OpenRaw(path, "")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { r.Close() })
	return r
}

// Close closes the database.
func (r *Raw) Close() error { return r.store.Close() }

// RawInsert inserts one workflow row in its own transaction.
func (r *Raw) RawInsert(ctx context.Context, i int) error {
	now := time.Now().UTC()
	row := &rawRow{ID: ids.New(ids.Workflow, now), Product: Product, CustomerID: "cus_bench", Payload: `{"units":1}`,
		QuotedAmount: 143, Currency: "usd", TargetMarginBps: 3000, Status: "Settled", RunAt: now.UnixMicro(),
		CreatedAt: now.UnixMicro(), UpdatedAt: now.UnixMicro(), Sequence: int64(i) + 1}
	return r.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewInsert().Model(row).Exec(ctx)
		return err
	})
}

type noop struct {
	Units int64 `json:"units"`
}

// instantSettler confirms every charge as soon as it is submitted. It lives
// here, not in the library: it settles nothing and is only a load generator.
type instantSettler struct {
	mu   sync.Mutex
	seen map[string]bool
}

// Configured: it takes charges of either environment.
func (s *instantSettler) Configured(settleflow.Environment) bool { return true }

func (s *instantSettler) Submit(_ context.Context, cs []settleflow.Charge) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range cs {
		s.seen[c.WorkflowID] = true
	}
	return nil
}

func (s *instantSettler) Status(_ context.Context, cs []settleflow.Charge) ([]settleflow.SettlementStatus, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]settleflow.SettlementStatus, len(cs))
	for i, c := range cs {
		out[i] = settleflow.SettlementStatus{WorkflowID: c.WorkflowID, State: settleflow.SettlementUnknown}
		if s.seen[c.WorkflowID] {
			out[i].State = settleflow.SettlementConfirmed
			out[i].Settlement = &settleflow.Settlement{ChainID: 1337, Network: "instant", TxHash: "0x0", BlockNumber: 1, Confirmations: 1}
		}
	}
	return out, nil
}

// fundedSettler is instantSettler charging customer balances
// (settleflow.Funds), so a create is admitted against its customer's balance
// and reserves it: every customer of the bench (FundedCustomers) is funded
// by one deposit in block 1, large enough for any run. A load generator
// too: no chain, no refunds.
type fundedSettler struct{ instantSettler }

// FundedCustomers is how many customers the creates of a funded engine
// spread over by default (cus_bench_00 … cus_bench_99), and how many the
// funded settler funds.
const FundedCustomers = 100

// spreadCustomer is the customer of the i-th create of an engine whose
// creates spread over n customers.
func spreadCustomer(i, n int64) string { return fmt.Sprintf("cus_bench_%02d", i%n) }

func fundedCustomer(i int64) string { return spreadCustomer(i, FundedCustomers) }

func (s *fundedSettler) Funded(settleflow.Environment) bool { return true }

func (s *fundedSettler) CustomerRef(_ settleflow.Environment, id string) (string, error) {
	h := sha256.Sum256([]byte(id))
	return "0x" + hex.EncodeToString(h[:]), nil
}

func (s *fundedSettler) DepositInfo(settleflow.Environment, string) (settleflow.DepositInfo, error) {
	return settleflow.DepositInfo{}, nil
}

func (s *fundedSettler) FundsEvents(_ context.Context, env settleflow.Environment, after settleflow.FundsCursor) ([]settleflow.FundsEvent, settleflow.FundsCursor, error) {
	if after.Block > 0 {
		return nil, after, nil
	}
	evs := make([]settleflow.FundsEvent, FundedCustomers)
	for i := range evs {
		ref, _ := s.CustomerRef(env, fundedCustomer(int64(i)))
		evs[i] = settleflow.FundsEvent{Kind: settleflow.FundsDeposit, Ref: ref, Amount: 1 << 50, TxHash: "0x0", BlockNumber: 1, LogIndex: uint(i)}
	}
	return evs, settleflow.FundsCursor{Block: 1, Hash: "0x1"}, nil
}

func (s *fundedSettler) Faucet(context.Context, settleflow.Environment, string, int64) (string, error) {
	return "", errors.New("benchmark: no faucet")
}

func (s *fundedSettler) SubmitRefunds(context.Context, []settleflow.RefundCharge) error {
	return errors.New("benchmark: no refunds")
}

func (s *fundedSettler) RefundStatus(_ context.Context, rs []settleflow.RefundCharge) ([]settleflow.SettlementStatus, error) {
	return make([]settleflow.SettlementStatus, len(rs)), nil
}

// Engine is an engine on a fresh SQLite file with the no-op product, an
// instant settler and a notifier that counts completed workflows.
type Engine struct {
	*settleflow.Engine
	store     *bunstore.Store
	lease     *storage.Lease
	completed atomic.Int64
	notify    chan struct{}
	funded    bool
	customers int // creates spread over this many customers; 0: one, cus_bench
}

// OpenEngine builds an Engine on the database at path (not started).
func OpenEngine(path string, sync sqlite.Synchronous) (*Engine, error) {
	// Exclusive, as the reference server opens its database.
	store, err := sqlite.Open(context.Background(), path, sqlite.OpenOptions{Synchronous: sync, Exclusive: true})
	if err != nil {
		return nil, err
	}
	// Workflows in flight: a no-op product finishes at once, so the
	// pipeline's batches (and the commits they share) grow with this.
	return NewEngineOn(store, EngineOptions{Workers: 512})
}

// OpenSQLiteEngine is OpenEngine with options.
func OpenSQLiteEngine(path string, sync sqlite.Synchronous, opts EngineOptions) (*Engine, error) {
	store, err := sqlite.Open(context.Background(), path, sqlite.OpenOptions{Synchronous: sync, Exclusive: true})
	if err != nil {
		return nil, err
	}
	return NewEngineOn(store, opts)
}

// The harness engine's Options.PollInterval and SettlementPollInterval.
const (
	PollInterval           = 50 * time.Millisecond
	SettlementPollInterval = 50 * time.Millisecond
)

// EngineOptions configure [NewEngineOn].
type EngineOptions struct {
	// Workers is the engine's Options.Workers.
	Workers int
	// WorkerID is the engine's Options.WorkerID (default: a fresh one).
	WorkerID string
	// Lease, if not empty, names a settlement lease (storage.DB.Lease)
	// the engine takes part in, as the reference server's instances do:
	// of engines sharing a database, one settles at a time.
	Lease string
	// Funded makes every charge paid from its customer's balance: creates
	// spread over FundedCustomers funded customers (unless Customers says
	// otherwise) and are admitted against their balances, as with the
	// shipped settler.
	Funded bool
	// Customers, if not 0, spreads the creates over that many customers
	// (cus_bench_00, cus_bench_01, …) instead of one (cus_bench), funded
	// or not: an unfunded engine's creates then meet the same fair queue
	// as a funded engine's. At most FundedCustomers when Funded.
	Customers int
	// Work is how long each execution of the no-op product takes (it
	// sleeps, or returns early when canceled); default none.
	Work time.Duration
	// BatchSize is the engine's Options.BatchSize (default the engine's).
	BatchSize int
	// OnEvents, if set, is called with every batch of events handed to
	// the notifier, when it is handed over (before the engine marks them
	// dispatched).
	OnEvents func([]settleflow.Event)
}

// NewEngineOn builds an Engine (not started) on store, which it closes
// when closed: the no-op product, the instant settler, the counting
// notifier.
func NewEngineOn(store *bunstore.Store, opts EngineOptions) (*Engine, error) {
	ps := settleflow.NewProducts()
	if err := settleflow.Register(ps, settleflow.Product[noop]{
		Name:     Product,
		Price:    settleflow.Price{TargetMargin: 3000},
		Estimate: func(p noop) (int64, error) { return 100 * p.Units, nil },
		Execute: func(ctx context.Context, p noop) (settleflow.Execution, error) {
			if opts.Work > 0 {
				t := time.NewTimer(opts.Work)
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
					return settleflow.Execution{}, ctx.Err()
				}
			}
			return settleflow.Execution{ActualCost: 90 * p.Units}, nil
		},
	}); err != nil {
		store.Close()
		return nil, err
	}
	if opts.Customers < 0 || opts.Funded && opts.Customers > FundedCustomers {
		store.Close()
		return nil, fmt.Errorf("benchmark: Customers is %d: want 0 to %d", opts.Customers, FundedCustomers)
	}
	if opts.Funded && opts.Customers == 0 {
		opts.Customers = FundedCustomers
	}
	e := &Engine{store: store, notify: make(chan struct{}, 1), funded: opts.Funded, customers: opts.Customers}
	var settler settleflow.Settler = &instantSettler{seen: map[string]bool{}}
	if opts.Funded {
		settler = &fundedSettler{instantSettler{seen: map[string]bool{}}}
	}
	var lease settleflow.SettlementLease
	if opts.Lease != "" {
		e.lease = store.DB().Lease(opts.Lease, storage.LeaseOptions{})
		lease = e.lease
	}
	var err error
	e.Engine, err = settleflow.New(settleflow.Options{
		SettlementLease: lease,
		Store:           store,
		Settler:         settler,
		TestFaucet:      -1,
		Products:        ps,
		Notifier: settleflow.NotifierFunc(func(_ context.Context, evs []settleflow.Event) error {
			if opts.OnEvents != nil {
				opts.OnEvents(evs)
			}
			e.completed.Add(int64(len(evs)))
			select {
			case e.notify <- struct{}{}:
			default:
			}
			return nil
		}),
		PollInterval:           PollInterval,
		SettlementPollInterval: SettlementPollInterval,
		Workers:                opts.Workers,
		BatchSize:              opts.BatchSize,
		WorkerID:               opts.WorkerID,
	})
	if err != nil {
		if e.lease != nil {
			e.lease.Close()
		}
		store.Close()
		return nil, err
	}
	return e, nil
}

// Leading reports whether the engine holds its settlement lease (always,
// without one).
func (e *Engine) Leading() bool { return e.lease == nil || e.lease.Held() }

// NewEngine is OpenEngine for Go benchmarks.
func NewEngine(f Failer, path string) *Engine {
	e, err := OpenEngine(path, "")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { e.Close() })
	return e
}

// Close stops the engine and closes its store.
func (e *Engine) Close() error {
	e.Stop(context.Background())
	if e.lease != nil {
		e.lease.Close()
	}
	return e.store.Close()
}

// CreateLoop creates n workflows from the given number of goroutines.
func CreateLoop(ctx context.Context, e *Engine, n, goroutines int) error {
	return CreateLoopMany(ctx, []*Engine{e}, n, goroutines)
}

// CreateLoopMany creates n workflows from the given number of goroutines,
// goroutine g creating on es[g % len(es)].
func CreateLoopMany(ctx context.Context, es []*Engine, n, goroutines int) error {
	p := settleflow.CreateParams{Environment: settleflow.Test, Product: Product, CustomerID: "cus_bench", Payload: json.RawMessage(`{"units":1}`)}
	for _, e := range es {
		if e.funded {
			if err := e.SyncFunds(ctx, settleflow.Test); err != nil {
				return err
			}
		}
	}
	var first error
	for err := range Fanout(n, goroutines, func(g int, i int64) error {
		e, p := es[g%len(es)], p
		if e.customers > 0 {
			p.CustomerID = spreadCustomer(i, int64(e.customers))
		}
		_, _, err := e.Create(ctx, p)
		return err
	}) {
		first = cmp.Or(first, err)
	}
	return first
}

// Fanout calls do(g, i) for i = 1 … n from goroutines goroutines (g is the
// calling goroutine's number, 0 … goroutines-1), each goroutine taking the
// next i until none is left or its call fails. The returned channel yields
// each goroutine's error, if any, and is closed once every goroutine has
// returned.
func Fanout(n, goroutines int, do func(g int, i int64) error) <-chan error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				if err := do(g, i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	go func() {
		wg.Wait()
		close(errs)
	}()
	return errs
}

// EndToEnd starts e, creates n workflows from the given number of
// goroutines and returns when all n are Settled and their workflow.completed
// events were handed to the notifier.
func EndToEnd(ctx context.Context, e *Engine, n, goroutines int) error {
	return EndToEndMany(ctx, []*Engine{e}, n, goroutines)
}

// EndToEndMany is EndToEnd on several engines sharing one database: each is
// started, the creates are spread over them (CreateLoopMany), and it returns
// when the engines together have handed n workflow.completed events to their
// notifiers.
func EndToEndMany(ctx context.Context, es []*Engine, n, goroutines int) error {
	completed := func() int64 {
		var c int64
		for _, e := range es {
			c += e.completed.Load()
		}
		return c
	}
	base := completed()
	for _, e := range es {
		if err := e.Start(ctx); err != nil {
			return err
		}
	}
	if err := CreateLoopMany(ctx, es, n, goroutines); err != nil {
		return err
	}
	deadline := time.After(10 * time.Minute)
	for completed()-base < int64(n) {
		select {
		case <-es[0].notify:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			return fmt.Errorf("only %d of %d workflows completed", completed()-base, n)
		}
	}
	return nil
}
