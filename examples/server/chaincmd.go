package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/storage/bunstore"
)

// chainBackend is what the chain commands read a chain through.
type chainBackend interface {
	ethereum.ContractCaller
	ethereum.LogFilterer
	ethereum.ChainReader
	ethereum.BlockNumberReader
}

// openChain opens env's chain for the chain commands: the chain of the
// -ENV-* flags over RPC, or the embedded test chain in DATA/chain (which
// only one process can open: the server must be stopped). It returns the
// chain, the contract, the last confirmed block (by -ENV-confirmations, or
// the finalized block; the embedded chain's head) and a closer.
func openChain(ctx context.Context, c config, env settleflow.Environment) (chainBackend, common.Address, uint64, func(), error) {
	f := c.live
	if env == settleflow.Test {
		f = c.test
	}
	switch {
	case env == settleflow.Live || (env == settleflow.Test && f.rpc != ""):
		if f.rpc == "" || !common.IsHexAddress(f.contract) {
			return nil, common.Address{}, 0, nil, usageError{fmt.Errorf("%s needs -%s-rpc and -%s-contract (global flags, before the command)", env, env, env)}
		}
		cl, err := rpc.DialContext(ctx, f.rpc)
		if err != nil {
			return nil, common.Address{}, 0, nil, fmt.Errorf("%s chain: %w", env, err)
		}
		b := ethclient.NewClient(cl)
		// The confirmed head: -ENV-confirmations blocks deep, or the
		// finalized block.
		var to uint64
		if f.confirmations > 0 {
			head, err := b.BlockNumber(ctx)
			if err == nil && head+1 < f.confirmations {
				err = errors.New("the chain is shorter than the confirmation depth")
			}
			if err != nil {
				cl.Close()
				return nil, common.Address{}, 0, nil, fmt.Errorf("%s chain: head: %w", env, err)
			}
			to = head + 1 - f.confirmations
		} else {
			fin, err := b.HeaderByNumber(ctx, big.NewInt(int64(rpc.FinalizedBlockNumber)))
			if err != nil {
				cl.Close()
				return nil, common.Address{}, 0, nil, fmt.Errorf("%s chain: finalized block: %w", env, err)
			}
			to = fin.Number.Uint64()
		}
		return b, common.HexToAddress(f.contract), to, cl.Close, nil
	case env == settleflow.Test:
		dir := filepath.Join(c.dataDir, "chain")
		sim, err := settlement.NewSimulated(ctx, settlement.SimulatedOptions{DataDir: dir, ManualCommit: true})
		if err != nil {
			if strings.Contains(err.Error(), "datadir already used") {
				return nil, common.Address{}, 0, nil, errors.New("the embedded test chain is open in the running server; stop the server to reconcile it")
			}
			return nil, common.Address{}, 0, nil, err
		}
		head, err := sim.Backend.Client().BlockNumber(ctx)
		if err != nil {
			sim.Close()
			return nil, common.Address{}, 0, nil, err
		}
		return sim.Backend.Client(), sim.Addresses.Contract, head, func() { sim.Close() }, nil
	}
	return nil, common.Address{}, 0, nil, usageError{fmt.Errorf("--env %q: want test or live", env)}
}

// chainGroup is the chain command: the settlement contract, seen from the
// chain.
func chainGroup() *group {
	var (
		env    string
		asJSON bool
	)
	return &group{
		name:    "chain",
		summary: "Check settlement on chain: reconcile the contract's settlements with the database.",
		open: func(context.Context, config) (*cmdContext, func(), error) {
			return &cmdContext{}, func() {}, nil
		},
		subs: []subcommand{{
			name: "reconcile",
			summary: "Compare every Settled event of the contract, from its deployment to the confirmed head, with the Settled workflows: " +
				"each workflow settled once, for exactly its quoted amount and customer, in the transaction it names; no settlement without its workflow; the totals. " +
				"Exits 1 if anything disagrees.",
			flags: func(fs *flag.FlagSet) {
				fs.StringVar(&env, "env", "test", "environment: `test` (-test-rpc, -test-contract; else the embedded chain, with the server stopped) or live (-live-rpc, -live-contract)")
				fs.BoolVar(&asJSON, "json", false, "print the report as JSON")
			},
			run: func(ctx context.Context, x *cmdContext) error {
				e := settleflow.Environment(env)
				b, contract, to, closeChain, err := openChain(ctx, x.c, e)
				if err != nil {
					return err
				}
				defer closeChain()
				info, err := settlement.Inspect(ctx, b, contract)
				if err != nil {
					return err
				}
				records, err := settledRecords(ctx, x.c, e)
				if err != nil {
					return err
				}
				rep, err := settlement.Reconcile(ctx, b, records, settlement.ReconcileOptions{Contract: contract, Decimals: info.Decimals,
					FromBlock: info.DeployedAt, ToBlock: to})
				if err != nil {
					return err
				}
				if asJSON {
					if err := printJSON(x.stdout, rep); err != nil {
						return err
					}
				} else {
					fmt.Fprintf(x.stdout, "%s: contract %s, blocks %d–%d\n", e, contract, rep.FromBlock, rep.ToBlock)
					fmt.Fprintf(x.stdout, "  on chain:    %d settlements, %d.%02d\n", rep.OnChain, rep.TotalOnChain/100, rep.TotalOnChain%100)
					fmt.Fprintf(x.stdout, "  in database: %d Settled workflows, %d.%02d\n", rep.InDatabase, rep.TotalInDatabase/100, rep.TotalInDatabase%100)
					if len(rep.Discrepancies) > 0 {
						tw := tabwriter.NewWriter(x.stdout, 2, 4, 2, ' ', 0)
						fmt.Fprintln(tw, "KIND\tSEQUENCE\tWORKFLOW\tDETAIL")
						for _, d := range rep.Discrepancies {
							fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", d.Kind, d.Sequence, d.WorkflowID, d.Detail)
						}
						tw.Flush()
					}
				}
				if n := len(rep.Discrepancies); n > 0 {
					return fmt.Errorf("%d discrepancies between the chain and the database", n)
				}
				fmt.Fprintln(x.stdout, "  no discrepancy")
				return nil
			},
		}},
	}
}

// settledRecords reads env's Settled workflows from the database.
func settledRecords(ctx context.Context, c config, env settleflow.Environment) ([]settlement.ReconcileRecord, error) {
	db, err := openDB(ctx, c)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	store, err := bunstore.New(db)
	if err == nil {
		err = store.Migrate(ctx)
	}
	if err != nil {
		return nil, err
	}
	var out []settlement.ReconcileRecord
	q := settleflow.ListQuery{Environment: env, Status: settleflow.Settled, Limit: 100}
	for {
		ws, more, err := store.ListWorkflows(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, w := range ws {
			r := settlement.ReconcileRecord{WorkflowID: w.ID, Sequence: w.Sequence, CustomerID: w.CustomerID, Amount: w.Quoted.Amount}
			if w.Settlement != nil {
				r.TxHash = w.Settlement.TxHash
			}
			out = append(out, r)
		}
		if !more || len(ws) == 0 {
			return out, nil
		}
		q.StartingAfter = ws[len(ws)-1].ID
	}
}
