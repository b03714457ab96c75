package settlement

import (
	"fmt"
	"maps"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core"
	"github.com/ethereum/go-ethereum/core/rawdb"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/eth"
	"github.com/ethereum/go-ethereum/eth/catalyst"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/eth/filters"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/ethdb"
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/p2p"
	"github.com/ethereum/go-ethereum/params"
	"github.com/ethereum/go-ethereum/rpc"
)

// ChainBackend is the chain under a [Simulated]: go-ethereum's simulated
// backend in memory, or, with SimulatedOptions.DataDir, the same dev chain
// kept on disk.
type ChainBackend interface {
	// Client talks to the chain in process.
	Client() simulated.Client
	// Commit seals a block with the pending transactions.
	Commit() common.Hash
	// Rollback drops the pending transactions.
	Rollback()
	// Fork makes parentHash the head, to build a side chain on (reorg tests).
	Fork(parentHash common.Hash) error
	// AdjustTime seals an empty block that far in the future.
	AdjustTime(adjustment time.Duration) error
	// Close stops the chain (and, on disk, flushes it).
	Close() error
}

var _ ChainBackend = (*simulated.Backend)(nil)

// diskChain is the dev chain of go-ethereum's simulated backend — the same
// genesis rules, blocks sealed on demand by a simulated beacon — on a
// chain database in a directory. (simulated.NewBackend rewinds any database
// it is given to genesis, so it cannot continue a chain.) Every block's state
// is kept (archive mode), so a process that dies leaves a head with its
// state.
type diskChain struct {
	stack  *node.Node
	beacon *catalyst.SimulatedBeacon
	client simulated.Client
	db     ethdb.KeyValueSyncer
	// syncErr is the first failure to flush a block to disk, reported by
	// Close.
	syncErr error
}

func openDiskChain(dir string, alloc types.GenesisAlloc, options []func(*node.Config, *ethconfig.Config)) (_ *diskChain, err error) {
	nodeConf := node.DefaultConfig
	nodeConf.DataDir = dir
	nodeConf.Name = "settleflow" // the database's folder, whatever the executable is called
	nodeConf.IPCPath = ""        // nothing but this process talks to it
	nodeConf.P2P = p2p.Config{NoDiscovery: true}

	genesisAlloc := core.SystemContractAllocs()
	maps.Copy(genesisAlloc, alloc)
	ethConf := ethconfig.Defaults
	ethConf.Genesis = &core.Genesis{Config: params.AllDevChainProtocolChanges, GasLimit: ethconfig.Defaults.Miner.GasCeil, Alloc: genesisAlloc}
	ethConf.SyncMode = ethconfig.FullSync
	ethConf.TxPool.NoLocals = true
	ethConf.LogNoHistory = true
	ethConf.NoPruning = true
	ethConf.StateScheme = rawdb.HashScheme
	for _, o := range options {
		o(&nodeConf, &ethConf)
	}
	stack, err := node.New(&nodeConf)
	if err != nil {
		return nil, fmt.Errorf("settlement: chain in %s: %w", dir, err)
	}
	defer func() {
		if err != nil {
			stack.Close()
		}
	}()
	backend, err := eth.New(stack, &ethConf)
	if err != nil {
		return nil, fmt.Errorf("settlement: chain in %s: %w", dir, err)
	}
	fs := filters.NewFilterSystem(backend.APIBackend, filters.Config{})
	stack.RegisterAPIs([]rpc.API{{Namespace: "eth", Service: filters.NewFilterAPI(fs)}})
	if err := stack.Start(); err != nil {
		return nil, fmt.Errorf("settlement: chain in %s: %w", dir, err)
	}
	beacon, err := catalyst.NewSimulatedBeacon(0, common.Address{}, backend)
	if err != nil {
		return nil, fmt.Errorf("settlement: chain in %s: %w", dir, err)
	}
	return &diskChain{stack: stack, beacon: beacon, client: ethclient.NewClient(stack.Attach()), db: backend.ChainDb()}, nil
}

func (d *diskChain) Client() simulated.Client { return d.client }

// Commit seals a block and flushes the chain database (its write-ahead log)
// to disk before it returns: go-ethereum writes without syncing, and a block
// a settlement was confirmed in must survive the process being killed.
func (d *diskChain) Commit() common.Hash {
	h := d.beacon.Commit()
	if err := d.db.SyncKeyValue(); err != nil && d.syncErr == nil {
		d.syncErr = err
	}
	return h
}
func (d *diskChain) Rollback()                         { d.beacon.Rollback() }
func (d *diskChain) Fork(parentHash common.Hash) error { return d.beacon.Fork(parentHash) }
func (d *diskChain) AdjustTime(adj time.Duration) error {
	return d.beacon.AdjustTime(adj)
}

func (d *diskChain) Close() error {
	err := d.syncErr
	if serr := d.beacon.Stop(); err == nil {
		err = serr
	}
	if cerr := d.stack.Close(); err == nil {
		err = cerr
	}
	return err
}
