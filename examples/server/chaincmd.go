package main

import (
	"crypto/rand"
	"encoding/hex"
	"os"
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
	"github.com/settleflow/settleflow/storage/bunstore"
)

// chainBackend is what the chain commands read a chain through.
type chainBackend interface {
	ethereum.ContractCaller
	settlement.ReconcileBackend
	ethereum.ChainReader
	ethereum.ChainStateReader
	ethereum.BlockNumberReader
	ethereum.GasPricer
	ethereum.ChainIDReader
}

// openedChain is a chain a chain command reads.
type openedChain struct {
	b        chainBackend
	contract common.Address
	// to is the last confirmed block.
	to uint64
	// secret is the deployment's customer reference secret (nil if the
	// flags name none).
	secret []byte
	close  func()
}

// openChain opens env's chain for the chain command cmd ("chain status",
// "chain reconcile"), which its errors name: the chain of the -ENV-* flags
// over RPC, or the embedded test chain in DATA/chain (which only one process
// can open: the server must be stopped). It returns the chain, the contract,
// the last confirmed block (by -ENV-confirmations, or the finalized block;
// the embedded chain's head), the customer reference secret and a closer.
func openChain(ctx context.Context, c config, cmd string, env settleflow.Environment) (*openedChain, error) {
	b, contract, to, closer, secret, err := openChain0(ctx, c, cmd, env)
	if err != nil {
		return nil, err
	}
	return &openedChain{b: b, contract: contract, to: to, secret: secret, close: closer}, nil
}

func openChain0(ctx context.Context, c config, cmd string, env settleflow.Environment) (chainBackend, common.Address, uint64, func(), []byte, error) {
	f := c.live
	if env == settleflow.Test {
		f = c.test
	}
	switch {
	case env == settleflow.Live || (env == settleflow.Test && f.rpc != ""):
		if f.rpc == "" || !common.IsHexAddress(f.contract) {
			return nil, common.Address{}, 0, nil, nil, usageError{fmt.Errorf("%s --env %s needs -%s-rpc and -%s-contract (global flags, before the command)", cmd, env, env, env)}
		}
		var secret []byte
		if f.secretFile != "" {
			var err error
			if secret, err = readSecretFile(f.secretFile); err != nil {
				return nil, common.Address{}, 0, nil, nil, fmt.Errorf("-%s-customer-ref-secret-file: %w", env, err)
			}
		}
		cl, err := rpc.DialContext(ctx, f.rpc)
		if err != nil {
			return nil, common.Address{}, 0, nil, nil, fmt.Errorf("%s chain: %w", env, err)
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
				return nil, common.Address{}, 0, nil, nil, fmt.Errorf("%s chain: head: %w", env, err)
			}
			to = head + 1 - f.confirmations
		} else {
			fin, err := b.HeaderByNumber(ctx, big.NewInt(int64(rpc.FinalizedBlockNumber)))
			if err != nil {
				cl.Close()
				return nil, common.Address{}, 0, nil, nil, fmt.Errorf("%s chain: finalized block: %w", env, err)
			}
			to = fin.Number.Uint64()
		}
		return b, common.HexToAddress(f.contract), to, cl.Close, secret, nil
	case env == settleflow.Test:
		dir := filepath.Join(c.dataDir, "chain")
		sim, err := settlement.NewSimulated(ctx, settlement.SimulatedOptions{DataDir: dir, ManualCommit: true})
		if err != nil {
			if strings.Contains(err.Error(), "datadir already used") {
				return nil, common.Address{}, 0, nil, nil, fmt.Errorf("%s --env test: the embedded test chain is open in the running server (only one process can open it); stop the server to run %s", cmd, cmd)
			}
			return nil, common.Address{}, 0, nil, nil, err
		}
		head, err := sim.Backend.Client().BlockNumber(ctx)
		if err != nil {
			sim.Close()
			return nil, common.Address{}, 0, nil, nil, err
		}
		return sim.Backend.Client(), sim.Addresses.Contract, head, func() { sim.Close() }, sim.CustomerRefSecret, nil
	}
	return nil, common.Address{}, 0, nil, nil, usageError{fmt.Errorf("%s --env %q: want test or live", cmd, env)}
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
			summary: "Deploy the settlement contract (and, on a testnet with no --token, the 6-decimal test stablecoin, minted to a test faucet that funds test customers), " +
				"check it, wait for its confirmations, and print the flags the server needs. The key is the operator's: it owns the contract and signs settlements and refunds; customers pay from their deposits.",
			flags: func(fs *flag.FlagSet) {
				fs.StringVar(&env, "env", "", "environment: `test` or live (required; the chain id must be of that kind)")
				fs.StringVar(&dep.rpc, "rpc", "", "the chain's JSON-RPC `URL` (required)")
				fs.Int64Var(&dep.chainID, "chain-id", 0, "chain id the RPC must report (required)")
				fs.StringVar(&dep.keyFile, "key-file", "", "the operator's hex private key `file` (required)")
				fs.StringVar(&dep.payee, "payee", "", "the `address` that receives the charges (required)")
				fs.StringVar(&dep.token, "token", "", "the stablecoin's `address` (live: required; test: default a new test stablecoin)")
				fs.Int64Var(&dep.funds, "funds", 100_000_000, "test stablecoin minted to the test faucet, in `cents`")
				fs.StringVar(&dep.secretFile, "customer-ref-secret-file", "", "`file` of the customer reference secret: used if it exists, else made (default DATA/ENV-customer-ref.secret)")
				fs.StringVar(&dep.faucetKeyFile, "faucet-key-file", "", "test faucet key `file`: used if it exists, else made (default DATA/test-faucet.key; test stablecoin only)")
				fs.DurationVar(&dep.notice, "withdrawal-notice", settlement.DefaultWithdrawalNotice, "how long a customer's owner waits between asking for a withdrawal and withdrawing (whole seconds)")
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
			summary: "Compare the contract's records, from its deployment to the confirmed head, with the database: " +
				"each Settled workflow charged more than 0 debited once, for exactly its charge (not its quote), from its customer, in the transaction it names; none charged 0 on chain; no debit without its workflow; " +
				"each Succeeded refund applied once, within its charge; each customer's balance equal to deposits − withdrawals − charges + refunds, " +
				"on chain and in the database; the contract holding exactly its customers' balances plus what the payee is owed; " +
				"each balance owner set or proposed on chain by an owner grant the engine sent (POST /v1/customers/{id}/owner), or moved by that owner itself. " +
				"Exits 1 if anything disagrees, naming each discrepancy.",
			flags: func(fs *flag.FlagSet) {
				fs.StringVar(&env, "env", "test", "environment: `test` (-test-rpc, -test-contract; else the embedded chain, with the server stopped) or live (-live-rpc, -live-contract)")
				fs.BoolVar(&asJSON, "json", false, "print the report as JSON")
			},
			run: func(ctx context.Context, x *cmdContext) error {
				e := settleflow.Environment(env)
				ch, err := openChain(ctx, x.c, "chain reconcile", e)
				if err != nil {
					return err
				}
				defer ch.close()
				b, contract, to := ch.b, ch.contract, ch.to
				if ch.secret == nil {
					return usageError{fmt.Errorf("chain reconcile --env %s needs -%s-customer-ref-secret-file: customers are found on chain by it", e, e)}
				}
				info, err := settlement.Inspect(ctx, b, contract)
				if err != nil {
					return err
				}
				db, err := readLedger(ctx, x.c, e)
				if err != nil {
					return err
				}
				rep, err := settlement.Reconcile(ctx, b, db.records, settlement.ReconcileOptions{Contract: contract, Decimals: info.Decimals,
					FromBlock: info.DeployedAt, ToBlock: to, Refunds: db.refunds, Accounts: db.accounts, State: b,
					CheckOwners: true, OwnerGrants: db.owners,
					RefOf: func(id string) [32]byte { return settlement.CustomerRef(ch.secret, e, id) }})
				if err != nil {
					return err
				}
				if asJSON {
					if err := printJSON(x.stdout, rep); err != nil {
						return err
					}
				} else {
					fmt.Fprintf(x.stdout, "%s: contract %s, blocks %d–%d\n", e, contract, rep.FromBlock, rep.ToBlock)
					fmt.Fprintf(x.stdout, "  on chain:    %d charges, %s; %d declined; %d refunds, %s\n", rep.OnChain, dollars(rep.TotalOnChain), rep.Declined, rep.Refunds, dollars(rep.TotalRefunded))
					fmt.Fprintf(x.stdout, "  in database: %d Settled workflows charged, %s; %d charged nothing (not on chain); %d Succeeded refunds\n",
						rep.InDatabase, dollars(rep.TotalInDatabase), db.uncharged, len(db.refunds))
					fmt.Fprintf(x.stdout, "  customers:   %d, holding %s; the payee is owed %s\n", rep.Customers, dollars(rep.Held), dollars(rep.PayeeOwed))
					if rep.Surplus != nil && rep.Surplus.Sign() > 0 {
						fmt.Fprintf(x.stdout, "  surplus:     %s base units of the token sent to the contract directly, owed to no one (not a discrepancy)\n", rep.Surplus)
					}
					if len(rep.Discrepancies) > 0 {
						tw := tabwriter.NewWriter(x.stdout, 2, 4, 2, ' ', 0)
						fmt.Fprintln(tw, "KIND\tSEQUENCE\tSUBJECT\tDETAIL")
						for _, d := range rep.Discrepancies {
							fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", d.Kind, d.Sequence, d.WorkflowID, d.Detail)
						}
						tw.Flush()
					}
				}
				if n := len(rep.Discrepancies); n > 0 {
					return fmt.Errorf("%d discrepancies between the chain and the database", n)
				}
				if !asJSON { // --json prints the report alone: one JSON document
					fmt.Fprintln(x.stdout, "  no discrepancy")
				}
				return nil
			},
		}},
	}
}

// ledger is what the database says of env's money: its Settled workflows
// charged on chain, Succeeded refunds and customer accounts.
type ledger struct {
	records  []settlement.ReconcileRecord
	refunds  []settlement.RefundRecord
	accounts []settlement.AccountRecord
	// owners are the owner grants the engine sent.
	owners []settlement.OwnerGrantRecord
	// uncharged counts the Settled workflows charged 0, which never reach
	// the chain.
	uncharged int
}

// readLedger reads env's ledger from the database.
func readLedger(ctx context.Context, c config, env settleflow.Environment) (*ledger, error) {
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
	out := &ledger{}
	q := settleflow.ListQuery{Environment: env, Status: settleflow.Settled, Limit: 100}
	for {
		ws, more, err := store.ListWorkflows(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, w := range ws {
			// The charge is what the workflow was charged (its "charged",
			// at most the quote), not the quote.
			amount := w.ChargeAmount()
			if amount == 0 && w.Settlement == nil {
				// Charged 0: Settled without the chain, with no sequence;
				// nothing of it is expected there (a debit of it would be
				// not_in_database).
				out.uncharged++
				continue
			}
			// A workflow charged more than 0 must have been debited on
			// chain: without a settlement it is still compared, and found
			// missing_on_chain unless the chain has its sequence.
			rec := settlement.ReconcileRecord{WorkflowID: w.ID, Sequence: w.Sequence, CustomerID: w.CustomerID, Amount: amount}
			if w.Settlement != nil {
				rec.TxHash = w.Settlement.TxHash
			}
			out.records = append(out.records, rec)
		}
		if !more || len(ws) == 0 {
			break
		}
		q.StartingAfter = ws[len(ws)-1].ID
	}
	rq := settleflow.RefundQuery{Environment: env, Status: settleflow.RefundSucceeded, Limit: 100}
	for {
		rs, more, err := store.ListRefunds(ctx, rq)
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			rec := settlement.RefundRecord{RefundID: r.ID, WorkflowID: r.WorkflowID, Sequence: r.Sequence, Amount: r.Amount}
			if r.Settlement != nil {
				rec.TxHash = r.Settlement.TxHash
			}
			out.refunds = append(out.refunds, rec)
		}
		if !more || len(rs) == 0 {
			break
		}
		rq.StartingAfter = rs[len(rs)-1].ID
	}
	accounts, err := store.ListAccounts(ctx, env)
	if err != nil {
		return nil, err
	}
	for _, a := range accounts {
		out.accounts = append(out.accounts, settlement.AccountRecord{CustomerID: a.CustomerID, Ref: common.HexToHash(a.Ref), OnChain: a.OnChain()})
	}
	grants, err := store.ListOwnerGrants(ctx, env)
	if err != nil {
		return nil, err
	}
	for _, g := range grants {
		out.owners = append(out.owners, settlement.OwnerGrantRecord{CustomerID: g.CustomerID, Ref: common.HexToHash(g.Ref),
			Owner: common.HexToAddress(g.Owner), TxHash: g.TxHash})
	}
	return out, nil
}

// dollars writes cents as "12.34".
func dollars(cents int64) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s%d.%02d", sign, cents/100, cents%100)
}

type deployFlags struct {
	rpc, keyFile, payee, token string
	chainID, funds             int64
	confirmations              uint64
	secretFile, faucetKeyFile  string
	notice                     time.Duration
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
	// The customer reference secret: kept if the file exists (a second
	// deployment for the same customers), else made and written.
	secretFile := f.secretFile
	if secretFile == "" {
		secretFile = filepath.Join(x.c.dataDir, string(env)+"-customer-ref.secret")
	}
	if abs, err := filepath.Abs(secretFile); err == nil {
		secretFile = abs // printed for other processes, maybe elsewhere
	}
	if _, err := readSecretFile(secretFile); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("--customer-ref-secret-file: %w", err)
		}
		secret := make([]byte, 32)
		if _, err := rand.Read(secret); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(secretFile), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(secretFile, []byte(hex.EncodeToString(secret)+"\n"), 0o600); err != nil {
			return err
		}
		fmt.Fprintf(x.stderr, "wrote a new customer reference secret to %s: keep it with the deployment (customers' balances are found by it)\n", secretFile)
	}
	tr := settlement.Transactor{Backend: b, Key: key}
	var a settlement.Addresses
	faucetFile := ""
	if f.token == "" {
		funds, err := settlement.BaseUnits(f.funds, 6)
		if err != nil {
			return usageError{err}
		}
		// The test faucet: a key of its own (its transactions never take
		// the operator's nonces), holding the minted test tokens.
		faucetFile = f.faucetKeyFile
		if faucetFile == "" {
			faucetFile = filepath.Join(x.c.dataDir, "test-faucet.key")
		}
		if abs, err := filepath.Abs(faucetFile); err == nil {
			faucetFile = abs
		}
		faucet, err := crypto.LoadECDSA(faucetFile)
		if errors.Is(err, os.ErrNotExist) {
			if faucet, err = crypto.GenerateKey(); err == nil {
				if err = os.MkdirAll(filepath.Dir(faucetFile), 0o700); err == nil {
					err = crypto.SaveECDSA(faucetFile, faucet)
				}
			}
		}
		if err != nil {
			return fmt.Errorf("--faucet-key-file: %w", err)
		}
		fmt.Fprintf(x.stderr, "deploying the test stablecoin and the settlement contract from %s on chain %d ...\n", operator, f.chainID)
		if a, err = tr.DeployDev(ctx, settlement.DevDeployment{Payee: payee, Faucet: faucet, Funds: funds, Notice: f.notice}); err != nil {
			return err
		}
	} else {
		a = settlement.Addresses{Token: common.HexToAddress(f.token), Operator: operator, Payee: payee}
		fmt.Fprintf(x.stderr, "deploying the settlement contract from %s on chain %d ...\n", operator, f.chainID)
		if a.Contract, err = tr.DeploySettlement(ctx, a.Token, payee, operator, 6, f.notice); err != nil {
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
	fmt.Fprintf(x.stdout, "-%[1]s-rpc %[2]s -%[1]s-chain-id %[3]d -%[1]s-contract %[4]s -%[1]s-token %[5]s -%[1]s-payee %[6]s -%[1]s-key-file %[7]s -%[1]s-confirmations %[8]d -%[1]s-customer-ref-secret-file %[9]s",
		env, f.rpc, f.chainID, a.Contract, a.Token, payee, f.keyFile, f.confirmations, secretFile)
	if faucetFile != "" {
		fmt.Fprintf(x.stdout, " -%s-faucet-key-file %s", env, faucetFile)
	}
	fmt.Fprintln(x.stdout)
	fmt.Fprintf(x.stderr, "customers deposit into %s (approve it for the token, then deposit; or one signed EIP-3009 authorization); the operator only pays gas\n", a.Contract)
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
	ch, err := openChain(ctx, x.c, "chain status", env)
	if err != nil {
		return err
	}
	defer ch.close()
	b, contract := ch.b, ch.contract
	id, err := b.ChainID(ctx)
	if err != nil {
		return err
	}
	info, err := settlement.Inspect(ctx, b, contract)
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
	customers := -1
	if db, err := readLedger(ctx, x.c, env); err == nil {
		customers = 0
		for _, a := range db.accounts {
			if a.OnChain != 0 {
				customers++
			}
		}
	}
	w := x.stdout
	dec := int(info.Decimals)
	fmt.Fprintf(w, "%s: chain %s, contract %s, version %d (deployed in block %d)\n", env, id, contract, info.Version, info.DeployedAt)
	fmt.Fprintf(w, "  token     %s (%d decimals)\n  payee     %s\n  operator  %s, nonce %d, %s (native) for gas\n", info.Token, info.Decimals, info.Payee, info.Operator, nonce, settlement.FormatUnits(native, 18))
	fmt.Fprintf(w, "  held      %s for customers", settlement.FormatUnits(info.Held(), dec))
	if customers >= 0 {
		fmt.Fprintf(w, " (%d with a balance in the database)", customers)
	}
	fmt.Fprintf(w, "\n  owed      %s to the payee, not claimed (refunds come out of it)\n  notice    %s before a customer's owner can withdraw\n",
		settlement.FormatUnits(info.PayeeOwed, dec), info.WithdrawalNotice)
	need := new(big.Int).Mul(price, big.NewInt(statusBatches*statusBatchGas))
	var warnings []string
	if native.Cmp(need) < 0 {
		warnings = append(warnings, fmt.Sprintf("the operator's native balance does not pay for %d more batches at the current gas price (%s needed)",
			statusBatches, settlement.FormatUnits(need, 18)))
	}
	for _, m := range warnings {
		fmt.Fprintln(w, "  warning:", m)
	}
	if len(warnings) == 0 {
		fmt.Fprintln(w, "  ready")
	}
	return nil
}
