package main

import (
	"time"

	"context"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/settlement/contracts/bindings"
	"github.com/settleflow/settleflow/storage/bunstore"
)

// chainBackend is what the chain commands read a chain through.
type chainBackend interface {
	ethereum.ContractCaller
	ethereum.LogFilterer
	ethereum.ChainReader
	ethereum.ChainStateReader
	ethereum.BlockNumberReader
	ethereum.GasPricer
	ethereum.ChainIDReader
}

// openChain opens env's chain for the chain command cmd ("chain status",
// "chain reconcile"), which its errors name: the chain of the -ENV-* flags
// over RPC, or the embedded test chain in DATA/chain (which only one process
// can open: the server must be stopped). It returns the chain, the contract,
// the last confirmed block (by -ENV-confirmations, or the finalized block;
// the embedded chain's head) and a closer.
func openChain(ctx context.Context, c config, cmd string, env settleflow.Environment) (chainBackend, common.Address, uint64, func(), error) {
	f := c.live
	if env == settleflow.Test {
		f = c.test
	}
	switch {
	case env == settleflow.Live || (env == settleflow.Test && f.rpc != ""):
		if f.rpc == "" || !common.IsHexAddress(f.contract) {
			return nil, common.Address{}, 0, nil, usageError{fmt.Errorf("%s --env %s needs -%s-rpc and -%s-contract (global flags, before the command)", cmd, env, env, env)}
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
				return nil, common.Address{}, 0, nil, fmt.Errorf("%s --env test: the embedded test chain is open in the running server (only one process can open it); stop the server to run %s", cmd, cmd)
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
	return nil, common.Address{}, 0, nil, usageError{fmt.Errorf("%s --env %q: want test or live", cmd, env)}
}

// chainGroup is the chain command: the settlement contract, seen from the
// chain.
func chainGroup() *group {
	var (
		env    string
		asJSON bool
		dep    deployFlags
	)
	return &group{
		name:    "chain",
		summary: "Settlement on chain: deploy the contract, reconcile its settlements with the database.",
		open: func(context.Context, config) (*cmdContext, func(), error) {
			return &cmdContext{}, func() {}, nil
		},
		subs: []subcommand{{
			name: "deploy",
			summary: "Deploy the settlement contract (and, on a testnet with no --token, the 6-decimal test stablecoin, minted to the operator and approved), " +
				"check it, wait for its confirmations, and print the flags the server needs. The key is the operator's: it owns the contract and signs the settlements.",
			flags: func(fs *flag.FlagSet) {
				fs.StringVar(&env, "env", "", "environment: `test` or live (required; the chain id must be of that kind)")
				fs.StringVar(&dep.rpc, "rpc", "", "the chain's JSON-RPC `URL` (required)")
				fs.Int64Var(&dep.chainID, "chain-id", 0, "chain id the RPC must report (required)")
				fs.StringVar(&dep.keyFile, "key-file", "", "the operator's hex private key `file` (required)")
				fs.StringVar(&dep.payee, "payee", "", "the `address` that receives the charges (required)")
				fs.StringVar(&dep.token, "token", "", "the stablecoin's `address` (live: required; test: default a new test stablecoin)")
				fs.Int64Var(&dep.funds, "funds", 100_000_000, "test stablecoin minted to the operator, in `cents`")
				fs.Uint64Var(&dep.confirmations, "confirmations", 2, "blocks to wait on top of the deployment")
			},
			run: func(ctx context.Context, x *cmdContext) error {
				return deploy(ctx, x, settleflow.Environment(env), dep)
			},
		}, {
			name: "status",
			summary: "Print the chain id, the contract, its token and payee, and the operator's balances (token and native), " +
				"its allowance to the contract and its nonce; warn when it cannot pay for the next batches.",
			flags: func(fs *flag.FlagSet) {
				fs.StringVar(&env, "env", "test", "environment: `test` (-test-rpc, else the embedded chain, with the server stopped) or live")
			},
			run: func(ctx context.Context, x *cmdContext) error {
				return chainStatus(ctx, x, settleflow.Environment(env))
			},
		}, {
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
				b, contract, to, closeChain, err := openChain(ctx, x.c, "chain reconcile", e)
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

type deployFlags struct {
	rpc, keyFile, payee, token string
	chainID, funds             int64
	confirmations              uint64
}

// deploy is chain deploy.
func deploy(ctx context.Context, x *cmdContext, env settleflow.Environment, f deployFlags) error {
	switch {
	case !env.Valid():
		return usageError{errors.New("chain deploy needs --env test|live")}
	case f.rpc == "" || f.chainID == 0 || f.keyFile == "" || !common.IsHexAddress(f.payee):
		return usageError{errors.New("chain deploy needs --rpc URL, --chain-id N, --key-file FILE and --payee ADDRESS")}
	case f.token != "" && !common.IsHexAddress(f.token):
		return usageError{fmt.Errorf("--token %q is not an address", f.token)}
	case env == settleflow.Live && f.token == "":
		return usageError{errors.New("live settles in a real stablecoin: give its address with --token")}
	}
	if err := settlement.CheckChainKind(env, f.chainID); err != nil {
		return err
	}
	key, err := crypto.LoadECDSA(f.keyFile)
	if err != nil {
		return fmt.Errorf("--key-file: %w", err) // never the key itself
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	b, err := ethclient.DialContext(ctx, f.rpc)
	if err != nil {
		return err
	}
	defer b.Close()
	id, err := b.ChainID(ctx)
	if err != nil {
		return fmt.Errorf("chain id: %w", err)
	}
	if id.Int64() != f.chainID {
		return fmt.Errorf("the node is on chain id %s, not %d", id, f.chainID)
	}
	operator := crypto.PubkeyToAddress(key.PublicKey)
	payee := common.HexToAddress(f.payee)
	tr := settlement.Transactor{Backend: b, Key: key}
	var a settlement.Addresses
	if f.token == "" {
		funds, err := settlement.BaseUnits(f.funds, 6)
		if err != nil {
			return usageError{err}
		}
		fmt.Fprintf(x.stderr, "deploying the test stablecoin and the settlement contract from %s on chain %d ...\n", operator, f.chainID)
		if a, err = tr.DeployDev(ctx, payee, funds); err != nil {
			return err
		}
	} else {
		a = settlement.Addresses{Token: common.HexToAddress(f.token), Operator: operator, Payee: payee}
		fmt.Fprintf(x.stderr, "deploying the settlement contract from %s on chain %d ...\n", operator, f.chainID)
		if a.Contract, err = tr.DeploySettlement(ctx, a.Token, payee, operator); err != nil {
			return err
		}
	}
	info, err := settlement.Inspect(ctx, b, a.Contract)
	switch {
	case err != nil:
		return fmt.Errorf("checking the deployment: %w", err)
	case info.Token != a.Token || info.Payee != payee || info.Operator != operator:
		return fmt.Errorf("the contract at %s says token %s, payee %s, operator %s: not what was asked", a.Contract, info.Token, info.Payee, info.Operator)
	case info.Decimals != 6:
		return fmt.Errorf("the token %s has %d decimals; settleflow settles in a 6-decimal stablecoin", a.Token, info.Decimals)
	}
	for {
		head, err := b.BlockNumber(ctx)
		if err != nil {
			return err
		}
		if head+1 >= info.DeployedAt+f.confirmations {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %d confirmations: %w", f.confirmations, ctx.Err())
		case <-time.After(time.Second):
		}
	}
	fmt.Fprintf(x.stderr, "deployed in block %d and confirmed; start the server with:\n", info.DeployedAt)
	fmt.Fprintf(x.stdout, "-%[1]s-rpc %[2]s -%[1]s-chain-id %[3]d -%[1]s-contract %[4]s -%[1]s-token %[5]s -%[1]s-payee %[6]s -%[1]s-key-file %[7]s -%[1]s-confirmations %[8]d\n",
		env, f.rpc, f.chainID, a.Contract, a.Token, payee, f.keyFile, f.confirmations)
	if f.token != "" {
		fmt.Fprintf(x.stderr, "the operator %s must hold the stablecoin and approve the contract %s to spend it before the first settlement\n", operator, a.Contract)
	}
	return nil
}

// statusBatches is how many settlement batches the operator's native
// balance should cover, and statusBatchGas the gas of one (a batch of 100
// charges takes about 270,000: BENCHMARKS.md).
const (
	statusBatches  = 10
	statusBatchGas = 300_000
)

// chainStatus is chain status.
func chainStatus(ctx context.Context, x *cmdContext, env settleflow.Environment) error {
	b, contract, _, closeChain, err := openChain(ctx, x.c, "chain status", env)
	if err != nil {
		return err
	}
	defer closeChain()
	id, err := b.ChainID(ctx)
	if err != nil {
		return err
	}
	info, err := settlement.Inspect(ctx, b, contract)
	if err != nil {
		return err
	}
	erc20 := bindings.NewTestUSD()
	call := func(data []byte) ([]byte, error) {
		return b.CallContract(ctx, ethereum.CallMsg{To: &info.Token, Data: data}, nil)
	}
	out, err := call(erc20.PackBalanceOf(info.Operator))
	if err != nil {
		return err
	}
	tokens, err := erc20.UnpackBalanceOf(out)
	if err != nil {
		return err
	}
	if out, err = call(erc20.PackAllowance(info.Operator, contract)); err != nil {
		return err
	}
	allowance, err := erc20.UnpackAllowance(out)
	if err != nil {
		return err
	}
	native, err := b.BalanceAt(ctx, info.Operator, nil)
	if err != nil {
		return err
	}
	nonce, err := b.NonceAt(ctx, info.Operator, nil)
	if err != nil {
		return err
	}
	price, err := b.SuggestGasPrice(ctx)
	if err != nil {
		return err
	}
	w := x.stdout
	fmt.Fprintf(w, "%s: chain %s, contract %s (deployed in block %d)\n", env, id, contract, info.DeployedAt)
	fmt.Fprintf(w, "  token     %s (%d decimals)\n  payee     %s\n  operator  %s, nonce %d\n", info.Token, info.Decimals, info.Payee, info.Operator, nonce)
	fmt.Fprintf(w, "  balance   %s (token), %s (native)\n  allowance %s to the contract\n",
		settlement.FormatUnits(tokens, int(info.Decimals)), settlement.FormatUnits(native, 18), settlement.FormatUnits(allowance, int(info.Decimals)))
	need := new(big.Int).Mul(price, big.NewInt(statusBatches*statusBatchGas))
	var warnings []string
	if native.Cmp(need) < 0 {
		warnings = append(warnings, fmt.Sprintf("the operator's native balance does not pay for %d more batches at the current gas price (%s needed)",
			statusBatches, settlement.FormatUnits(need, 18)))
	}
	if tokens.Sign() == 0 {
		warnings = append(warnings, "the operator holds none of the token: every charge will fail")
	}
	if allowance.Cmp(tokens) < 0 {
		warnings = append(warnings, "the allowance to the contract is below the operator's token balance: charges past it will fail")
	}
	for _, m := range warnings {
		fmt.Fprintln(w, "  warning:", m)
	}
	if len(warnings) == 0 {
		fmt.Fprintln(w, "  ready")
	}
	return nil
}
