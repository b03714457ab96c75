package settlement

import (
	"cmp"
	"context"
	"crypto/ecdsa"
	"fmt"
	"maps"
	"math/big"
	"path/filepath"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/params"
	"go.uber.org/zap"

	"github.com/settleflow/settleflow"
)

// SimulatedOptions configures [NewSimulated]. The zero value is a working
// test chain.
type SimulatedOptions struct {
	// Logger receives the settler's logs; nil is a no-op logger.
	Logger *zap.Logger
	// Clock is Config.Clock.
	Clock settleflow.Clock
	// Funds is the test faucet's opening balance of the test stablecoin,
	// in cents (default 1,000,000,000: ten million dollars). The faucet
	// funds test customers (settleflow.Funds.Faucet).
	Funds int64
	// WithdrawalNotice is the contract's withdrawal notice (default
	// DefaultWithdrawalNotice, 24 hours; whole seconds).
	WithdrawalNotice time.Duration
	// Tuning sets the test chain's confirmation depth (default 2 here),
	// batching, intervals and fees (defaults: FlushInterval 200ms,
	// PollInterval 50ms, StuckAfter 2s, RebroadcastAfter 1s). Its connection
	// and key fields are ignored.
	Tuning ChainConfig
	// BlockInterval is how often the committer checks for work (default
	// 100ms); it seals a block only when transactions are pending or charges
	// wait for confirmations.
	BlockInterval time.Duration
	// ManualCommit disables the committer: the caller mines with
	// Backend.Commit (tests of reorgs).
	ManualCommit bool
	// Backend options of the simulated chain (gas limits, minimum tip).
	BackendOptions []func(*node.Config, *ethconfig.Config)
	// Live, if set, configures live mode on a real chain beside the
	// simulated test chain.
	Live *ChainConfig
	// Lease is Config.Lease for the simulated chain's settler.
	Lease settleflow.SettlementLease
	// DataDir, if set, keeps the chain on disk there (go-ethereum's chain
	// database, the operator's and payee's keys, the deployment's
	// addresses), so that a restart continues the same chain and every
	// transaction hash stays valid. Empty: the chain lives in memory and a
	// restart begins a new one.
	DataDir string
}

// Simulated is a [Settler] whose test mode runs on go-ethereum's in-process
// simulated chain, with the test stablecoin and the settlement contract
// deployed and the operator funded and approved. The chain lives in memory,
// and is lost when it is closed, unless SimulatedOptions.DataDir keeps it on
// disk for the next start.
type Simulated struct {
	*Settler
	// Backend is the simulated chain (Commit, Fork, Rollback for tests).
	Backend ChainBackend
	// Addresses of the deployment.
	Addresses Addresses
	// OperatorKey signs settlements; PayeeKey is the payee's and
	// FaucetKey the test faucet's (for tests).
	OperatorKey, PayeeKey, FaucetKey *ecdsa.PrivateKey
	// CustomerRefSecret keys the customers' references (ChainConfig).
	CustomerRefSecret []byte

	commitMu sync.Mutex
	stop     chan struct{}
	stopped  chan struct{}
	once     sync.Once
}

// NewSimulated starts a simulated chain (chain id 1337), deploys the test
// stablecoin and the settlement contract, funds and approves a fresh operator
// and returns a settler for it in test mode; with opts.DataDir, a chain kept
// there by an earlier run continues instead, deployment and all. Close it
// when done.
func NewSimulated(ctx context.Context, opts SimulatedOptions) (_ *Simulated, err error) {
	var (
		st             chainState
		keys           simKeys
		backendOptions = opts.BackendOptions
	)
	if opts.DataDir != "" {
		if st, keys, err = loadChainState(opts.DataDir); err != nil {
			return nil, err
		}
	} else if keys, err = newSimKeys(); err != nil {
		return nil, err
	}
	opKey, payKey := keys.operator, keys.payee
	op := crypto.PubkeyToAddress(opKey.PublicKey)
	payee := crypto.PubkeyToAddress(payKey.PublicKey)
	faucet := crypto.PubkeyToAddress(keys.faucet.PublicKey)
	eth := new(big.Int).Mul(big.NewInt(1000), big.NewInt(params.Ether))
	alloc := types.GenesisAlloc{op: {Balance: eth}, payee: {Balance: eth}, faucet: {Balance: eth}}
	if opts.DataDir == "" || st.PaymentContracts {
		maps.Copy(alloc, PaymentContractsAlloc())
	}
	var backend ChainBackend
	if opts.DataDir != "" {
		backend, err = openDiskChain(filepath.Join(opts.DataDir, "geth"), alloc, backendOptions)
	} else {
		backend, err = newBackend(alloc, backendOptions)
	}
	if err != nil {
		return nil, err
	}
	s := &Simulated{Backend: backend, OperatorKey: opKey, PayeeKey: payKey, FaucetKey: keys.faucet, CustomerRefSecret: keys.secret,
		stop: make(chan struct{}), stopped: make(chan struct{})}
	funds := opts.Funds
	if funds <= 0 {
		funds = 1_000_000_000
	}
	base, err := BaseUnits(funds, 6)
	if err != nil {
		backend.Close()
		return nil, err
	}
	tr := Transactor{Backend: backend.Client(), Key: opKey, Mine: s.Commit}
	if st.Deployed {
		s.Addresses = st.Addresses
		if err := s.checkDeployment(ctx, opts.DataDir); err != nil {
			backend.Close()
			return nil, err
		}
	} else {
		if s.Addresses, err = tr.DeployDev(ctx, DevDeployment{Payee: payee, Faucet: keys.faucet, Funds: base, Notice: opts.WithdrawalNotice}); err != nil {
			backend.Close()
			return nil, err
		}
		if opts.DataDir != "" {
			st.Addresses, st.Deployed = s.Addresses, true
			if err := saveChainState(opts.DataDir, st); err != nil {
				backend.Close()
				return nil, err
			}
		}
	}

	cc := opts.Tuning
	cc.RPCURL, cc.Client = "", backend.Client()
	cc.ChainID, cc.Contract, cc.Token, cc.Payee = 0, s.Addresses.Contract, s.Addresses.Token, payee
	cc.Key, cc.KeyFile, cc.KeystoreFile = opKey, "", ""
	cc.FaucetKey, cc.FaucetKeyFile, cc.CustomerRefSecret = keys.faucet, "", keys.secret
	if cc.Network == "" {
		cc.Network = "simulated"
	}
	cc.BlocksOnDemand = true // the committer seals a block only when there is work
	if cc.Confirmations == 0 {
		cc.Confirmations = 2
	}
	if cc.FlushInterval <= 0 {
		cc.FlushInterval = 200 * time.Millisecond
	}
	if cc.PollInterval <= 0 {
		cc.PollInterval = 50 * time.Millisecond
	}
	if cc.BlockTime <= 0 {
		// The committer seals a block every BlockInterval while charges
		// wait.
		cc.BlockTime = cmp.Or(opts.BlockInterval, 100*time.Millisecond)
	}
	if cc.StuckAfter <= 0 {
		cc.StuckAfter = 2 * time.Second
	}
	if cc.RebroadcastAfter <= 0 {
		cc.RebroadcastAfter = time.Second
	}
	if s.Settler, err = New(ctx, Config{Test: &cc, Live: opts.Live, Logger: opts.Logger, Clock: opts.Clock, Lease: opts.Lease}); err != nil {
		backend.Close()
		return nil, fmt.Errorf("settlement: simulated: %w", err)
	}
	if opts.ManualCommit {
		close(s.stopped)
	} else {
		interval := opts.BlockInterval
		if interval <= 0 {
			interval = 100 * time.Millisecond
		}
		go s.committer(ctx, interval)
	}
	return s, nil
}

// newBackend is simulated.NewBackend, which panics when its node cannot
// start: here that is an error.
func newBackend(alloc types.GenesisAlloc, options []func(*node.Config, *ethconfig.Config)) (b *simulated.Backend, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("settlement: simulated chain: %v", r)
		}
	}()
	return simulated.NewBackend(alloc, options...), nil
}

// Commit seals a block on the simulated chain. Safe for concurrent use.
func (s *Simulated) Commit() {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	s.Backend.Commit()
}

// committer seals a block when transactions are pending or settlements wait
// for confirmations, so the chain advances only when there is work.
func (s *Simulated) committer(ctx context.Context, interval time.Duration) {
	defer close(s.stopped)
	t := time.NewTicker(interval)
	defer t.Stop()
	test := s.chains[settleflow.Test]
	client := s.Backend.Client()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		pending, err := client.PendingTransactionCount(context.WithoutCancel(ctx))
		if err == nil && (pending > 0 || test.busy()) {
			s.Commit()
		}
	}
}

// Close stops the settler, the committer and the simulated chain.
func (s *Simulated) Close() error {
	var err error
	s.once.Do(func() {
		err = s.Settler.Close()
		close(s.stop)
		<-s.stopped
		if cerr := s.Backend.Close(); err == nil {
			err = cerr
		}
	})
	return err
}
