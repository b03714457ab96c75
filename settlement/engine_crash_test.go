package settlement_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/params"
	"github.com/ethereum/go-ethereum/rpc"
	"go.uber.org/zap"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/settlement/contracts/bindings"
	"github.com/settleflow/settleflow/storage/sqlite"
)

// The engine crash test runs the engine in a child process (this test
// binary, re-executed) against a chain that lives in the parent, so the chain
// outlives every SIGKILL of the engine.
const chainCrashChildEnv = "SETTLEFLOW_SETTLEMENT_CRASH_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(chainCrashChildEnv) != "" {
		if err := chainCrashChild(); err != nil {
			fmt.Fprintln(os.Stderr, "crash child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// job is the payload of the child's product, which does nothing.
type job struct {
	N int `json:"n"`
}

// chainCrashChild opens the engine on SQLite with the chain's settler over
// JSON-RPC, creates workflows 0..TOTAL-1 (one idempotency key per index, so
// a re-created index replays) and prints "ACK index id" for each. With
// FINISH set it exits, printing DONE, once every workflow is terminal;
// otherwise it runs until it is killed.
func chainCrashChild() error {
	dir := os.Getenv("CRASH_DIR")
	total, _ := strconv.Atoi(os.Getenv("CRASH_TOTAL"))
	finish := os.Getenv("CRASH_FINISH") != ""
	ctx := context.Background()
	log, err := zap.NewDevelopment() // to stderr: the parent keeps it in a file
	if err != nil {
		return err
	}
	store, err := sqlite.Open(ctx, filepath.Join(dir, "settleflow.db"), sqlite.OpenOptions{})
	if err != nil {
		return err
	}
	settler, err := settlement.New(ctx, settlement.Config{Logger: log, Test: &settlement.ChainConfig{
		RPCURL: os.Getenv("CRASH_RPC"), ChainID: 1337, Contract: common.HexToAddress(os.Getenv("CRASH_CONTRACT")),
		KeyFile: filepath.Join(dir, "operator.key"), Confirmations: 2, BatchSize: 25, CustomerRefSecret: common.FromHex(os.Getenv("CRASH_SECRET")),
		FlushInterval: 50 * time.Millisecond, PollInterval: 25 * time.Millisecond,
		RebroadcastAfter: 300 * time.Millisecond, StuckAfter: time.Minute,
	}})
	if err != nil {
		return err
	}
	ps := settleflow.NewProducts()
	err = settleflow.Register(ps, settleflow.Product[job]{
		Name:     "noop",
		Price:    settleflow.Price{TargetMargin: 2000, MinimumCharge: 50},
		Estimate: func(p job) (int64, error) { return 40 + int64(p.N%13), nil },
		Execute: func(context.Context, job) (settleflow.Execution, error) {
			return settleflow.Execution{ActualCost: 40}, nil
		},
	})
	if err != nil {
		return err
	}
	engine, err := settleflow.New(settleflow.Options{
		Store: store, Settler: settler, Products: ps, Logger: log,
		Notifier: settleflow.NotifierFunc(func(context.Context, []settleflow.Event) error { return nil }),
		Workers:  16, BatchSize: 64, TestFaucet: -1, // the parent funded the customers
		PollInterval: 20 * time.Millisecond, SettlementPollInterval: 50 * time.Millisecond,
		ExecutionTimeout: time.Second, // a killed child's leases expire in about 2 s
		Retry:            settleflow.RetryPolicy{Base: 20 * time.Millisecond, Max: 200 * time.Millisecond},
	})
	if err != nil {
		return err
	}
	if err := engine.Start(ctx); err != nil {
		return err
	}
	// The customers' deposits, confirmed before the first child started.
	if err := engine.SyncFunds(ctx, settleflow.Test); err != nil {
		return err
	}
	out := bufio.NewWriter(os.Stdout)
	var outMu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < total; i += 4 {
				wf, _, err := engine.Create(ctx, settleflow.CreateParams{
					Environment: settleflow.Test, Product: "noop", CustomerID: fmt.Sprintf("cus_%d", i%11),
					Payload: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)), IdempotencyKey: fmt.Sprintf("chain-crash-%d", i),
				})
				if err != nil {
					errs <- err
					return
				}
				outMu.Lock()
				fmt.Fprintf(out, "ACK %d %s\n", i, wf.ID)
				out.Flush()
				outMu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	if !finish {
		select {} // wait for the SIGKILL
	}
	for {
		var open int
		if err := store.DB().Bun().QueryRowContext(ctx, `SELECT count(*) FROM settleflow_workflows WHERE status NOT IN ('Settled', 'Failed')`).Scan(&open); err != nil {
			return err
		}
		if open == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := engine.Stop(ctx); err != nil {
		return err
	}
	settler.Close()
	store.Close()
	fmt.Fprintln(out, "DONE")
	return out.Flush()
}

// What the parent does to the unmined settlement transaction(s) of a child it
// has just killed.
type afterKill int

const (
	mineIt afterKill = iota // the batch lands: the restart must find it on chain
	dropIt                  // the node forgets it: the restart must send it again
	keepIt                  // still pending at the restart: a resubmission races it
)

func (a afterKill) String() string { return [...]string{"mined", "dropped", "kept pending"}[a] }

// TestEngineCrashChargesOnce kills the engine (SIGKILL) between sending a
// settlement batch and recording its outcome, three times (the batch then
// mined, dropped, or left pending across the restart), restarts it until
// every workflow is Settled, and then scans the contract's events: each
// workflow, by id and by sequence, was charged exactly once, for its quoted
// amount, and the operator and payee balances moved by exactly the sum.
func TestEngineCrashChargesOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("the engine crash test takes a while; run without -short")
	}
	const total = 150
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := t.TempDir()

	// The chain: the simulated backend, served over HTTP on loopback, mined
	// by this test only (Commit), so a transaction stays in the pool until
	// the test chooses.
	opKey, _ := crypto.GenerateKey()
	payKey, _ := crypto.GenerateKey()
	op, payee := crypto.PubkeyToAddress(opKey.PublicKey), crypto.PubkeyToAddress(payKey.PublicKey)
	port := settlement.FreePort(t)
	eth := new(big.Int).Mul(big.NewInt(1000), big.NewInt(params.Ether))
	backend := simulated.NewBackend(types.GenesisAlloc{op: {Balance: eth}}, func(nc *node.Config, _ *ethconfig.Config) {
		nc.HTTPHost, nc.HTTPPort = "127.0.0.1", port
		nc.HTTPModules = []string{"eth", "net", "web3", "txpool"}
		nc.HTTPVirtualHosts = []string{"127.0.0.1"}
	})
	defer backend.Close()
	client := backend.Client()
	tr := settlement.Transactor{Backend: client, Key: opKey, Mine: func() { backend.Commit() }}
	funds, _ := settlement.BaseUnits(100_000_000, 6)
	addrs, err := tr.DeployDev(ctx, settlement.DevDeployment{Payee: payee, Funds: funds})
	if err != nil {
		t.Fatal(err)
	}
	// The children's 11 customers, each funded with $10,000.00 by the
	// operator (who holds the minted test tokens).
	secret := make([]byte, 32)
	rand.Read(secret)
	maxUint := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
	token := bindings.NewTestUSD()
	if _, err := tr.Send(ctx, &addrs.Token, token.PackApprove(addrs.Contract, maxUint)); err != nil {
		t.Fatal(err)
	}
	perCustomer, _ := settlement.BaseUnits(1_000_000, 6)
	refs := map[[32]byte]string{}
	for i := range 11 {
		id := fmt.Sprintf("cus_%d", i)
		ref := settlement.CustomerRef(secret, settleflow.Test, id)
		refs[ref] = id
		if _, err := tr.Send(ctx, &addrs.Contract, bindings.NewSettleflowSettlement().PackDeposit(ref, common.Address{}, perCustomer)); err != nil {
			t.Fatal(err)
		}
	}
	backend.Commit()
	backend.Commit() // the deposits are confirmed (depth 2) for the first child
	if err := crypto.SaveECDSA(filepath.Join(dir, "operator.key"), opKey); err != nil {
		t.Fatal(err)
	}
	rpcURL := fmt.Sprintf("http://127.0.0.1:%d", port)
	tokenBalance := func(who common.Address) *big.Int {
		v, err := settlement.TokenBalance(ctx, client, addrs.Token, who)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	contractHeld0 := tokenBalance(addrs.Contract)
	// The pool itself (txpool_status), not the miner's pending block, which
	// is cached and still shows a transaction the pool dropped.
	rpcClient, err := rpc.DialContext(ctx, rpcURL)
	if err != nil {
		t.Fatal(err)
	}
	defer rpcClient.Close()
	pending := func() uint64 {
		var st struct{ Pending, Queued hexutil.Uint64 }
		if err := rpcClient.CallContext(ctx, &st, "txpool_status"); err != nil {
			t.Fatal(err)
		}
		return uint64(st.Pending + st.Queued)
	}

	// poolCharges maps each transaction in the pool to the sequences its
	// settle call charges.
	settleABI := bindings.NewSettleflowSettlement().GetABI()
	poolCharges := func() map[common.Hash][]uint64 {
		var content map[string]map[string]map[string]struct {
			Hash  common.Hash
			Input hexutil.Bytes
		}
		if err := rpcClient.CallContext(ctx, &content, "txpool_content"); err != nil {
			t.Fatal(err)
		}
		out := map[common.Hash][]uint64{}
		for _, byAddr := range content {
			for _, byNonce := range byAddr {
				for _, tx := range byNonce {
					method, err := settleABI.MethodById(tx.Input)
					if err != nil || method.Name != "settle" {
						continue
					}
					args, err := method.Inputs.Unpack(tx.Input[4:])
					if err != nil {
						t.Fatal(err)
					}
					for _, w := range *abi.ConvertType(args[1], new([]*big.Int)).(*[]*big.Int) {
						c, err := settlement.UnpackCharge(w)
						if err != nil {
							t.Fatal(err)
						}
						out[tx.Hash] = append(out[tx.Hash], c.Sequence)
					}
				}
			}
		}
		return out
	}
	kept := map[uint64]common.Hash{} // sequences left pending by the last kill
	raced := 0                       // kept charges resubmitted while pending

	acked := map[int]string{}
	var logs []string
	runs := 0
	// run starts a child. With kill, it mines nothing until a settlement
	// transaction reaches the pool, kills the child there (sent, not mined,
	// so not recorded), and treats the pool as told. Without, it
	// mines until the child is done; hold first keeps the transaction left
	// pending by the previous kill unmined until the new child sends one
	// that charges one of them again (or 20 s pass).
	run := func(kill bool, after afterKill, hold bool) {
		t.Helper()
		runs++
		logPath := filepath.Join(dir, fmt.Sprintf("child-%d.log", runs))
		logs = append(logs, logPath)
		logFile, err := os.Create(logPath)
		if err != nil {
			t.Fatal(err)
		}
		defer logFile.Close()
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), chainCrashChildEnv+"=1", "CRASH_DIR="+dir, "CRASH_TOTAL="+strconv.Itoa(total),
			"CRASH_RPC="+rpcURL, "CRASH_CONTRACT="+addrs.Contract.Hex(), "CRASH_SECRET="+common.Bytes2Hex(secret))
		if !kill {
			cmd.Env = append(cmd.Env, "CRASH_FINISH=1")
		}
		cmd.Stderr = logFile
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
		}()
		done, exited := false, false
		var waitErr error
		start := time.Now()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for !exited {
			select {
			case line, ok := <-lines:
				if !ok {
					waitErr, exited = cmd.Wait(), true
					continue
				}
				if line == "DONE" {
					done = true
					continue
				}
				var i int
				var id string
				if _, err := fmt.Sscanf(line, "ACK %d %s", &i, &id); err != nil {
					t.Fatalf("child said %q", line)
				}
				if prev, ok := acked[i]; ok && prev != id {
					t.Fatalf("index %d acknowledged as %s and as %s", i, prev, id)
				}
				acked[i] = id
			case <-tick.C:
				if time.Since(start) > 90*time.Second {
					cmd.Process.Kill()
					t.Fatalf("run %d: no progress in 90 s; child log %s", runs, logPath)
				}
				n := pending()
				switch {
				case kill && n > 0:
					cmd.Process.Signal(syscall.SIGKILL)
					for range lines {
					}
					cmd.Wait()
					exited = true
					switch after {
					case mineIt:
						backend.Commit()
					case dropIt:
						backend.Rollback()
					case keepIt:
						for h, seqs := range poolCharges() {
							for _, n := range seqs {
								kept[n] = h
							}
						}
					}
					t.Logf("run %d: killed with %d settlement transaction(s) sent, not mined; %s", runs, n, after)
				case kill:
					// Mine nothing: the child's first batch must stay in the pool.
				case hold && time.Since(start) < 20*time.Second:
					// Keep the old transaction pending until a new one charges
					// one of its sequences again: both are then mined, the
					// original first (lower nonce).
					for h, seqs := range poolCharges() {
						for _, n := range seqs {
							if old, ok := kept[n]; ok && old != h {
								raced++
							}
						}
					}
					if raced > 0 {
						t.Logf("run %d: %d charges of the pending transaction resubmitted beside it; mining", runs, raced)
						hold = false
						backend.Commit()
					}
				default:
					if hold {
						t.Logf("run %d: no resubmission of the pending transaction's charges in 20 s; mining", runs)
						hold = false
					}
					backend.Commit()
				}
			}
		}
		if !kill && (waitErr != nil || !done) {
			t.Fatalf("final run: %v (done %v); child log %s", waitErr, done, logPath)
		}
	}
	defer func() {
		if t.Failed() {
			if db, err := sqlite.Open(context.Background(), filepath.Join(dir, "settleflow.db"), sqlite.OpenOptions{}); err == nil {
				rows, err := db.DB().Bun().QueryContext(context.Background(), `SELECT status, count(*), max(attempts) FROM settleflow_workflows GROUP BY status`)
				for err == nil && rows.Next() {
					var st string
					var n, att int
					rows.Scan(&st, &n, &att)
					t.Logf("workflows %s: %d (max attempts %d)", st, n, att)
				}
				if rows != nil {
					rows.Close()
				}
				db.Close()
			}
			for _, p := range logs {
				if b, err := os.ReadFile(p); err == nil {
					if len(b) > 6000 {
						b = b[len(b)-6000:]
					}
					t.Logf("%s (tail):\n%s", p, b)
				}
			}
		}
	}()
	run(true, mineIt, false)
	run(true, dropIt, false)
	run(true, keepIt, false)
	run(false, 0, true)
	if len(acked) != total {
		t.Fatalf("%d workflows acknowledged, want %d", len(acked), total)
	}

	// Every workflow is Settled in the engine's database.
	store, err := sqlite.Open(ctx, filepath.Join(dir, "settleflow.db"), sqlite.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var stored int
	if err := store.DB().Bun().QueryRowContext(ctx, `SELECT count(*) FROM settleflow_workflows`).Scan(&stored); err != nil || stored != total {
		t.Fatalf("%d workflows stored (%v), want %d", stored, err, total)
	}
	workflows := map[string]*settleflow.Workflow{}
	bySeq := map[uint64]string{}
	sum := new(big.Int)
	for i, id := range acked {
		w, err := store.GetWorkflow(ctx, settleflow.Test, id)
		if err != nil {
			t.Fatalf("workflow %d (%s): %v", i, id, err)
		}
		if w.Status != settleflow.Settled || w.Settlement == nil {
			t.Fatalf("workflow %s ended %s (failure %+v)", id, w.Status, w.Failure)
		}
		if w.Sequence == 0 || bySeq[w.Sequence] != "" {
			t.Fatalf("workflow %s has sequence %d (also %q's)", id, w.Sequence, bySeq[w.Sequence])
		}
		bySeq[w.Sequence] = id
		workflows[id] = w
		amt, _ := settlement.BaseUnits(w.Quoted.Amount, 6)
		sum.Add(sum, amt)
	}

	// Reconcile: each workflow debited once, by tag and by sequence, for
	// its quoted amount, from its customer, in the transaction the engine
	// recorded; every customer's balance as its deposits and charges add
	// up; the contract holding exactly its customers' balances and what
	// the payee is owed.
	head, err := client.BlockNumber(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var records []settlement.ReconcileRecord
	var accounts []settlement.AccountRecord
	spent := map[string]int64{}
	for _, w := range workflows {
		records = append(records, settlement.ReconcileRecord{WorkflowID: w.ID, Sequence: w.Sequence, CustomerID: w.CustomerID, Amount: w.Quoted.Amount, TxHash: w.Settlement.TxHash})
		spent[w.CustomerID] += w.Quoted.Amount
	}
	for ref, id := range refs {
		accounts = append(accounts, settlement.AccountRecord{CustomerID: id, Ref: ref, OnChain: 1_000_000 - spent[id]})
	}
	rep, err := settlement.Reconcile(ctx, client, records, settlement.ReconcileOptions{Contract: addrs.Contract, Decimals: 6, ToBlock: head,
		RefOf: func(id string) [32]byte { return settlement.CustomerRef(secret, settleflow.Test, id) }, Accounts: accounts, State: client})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Discrepancies) != 0 || rep.OnChain != total || rep.Declined != 0 {
		t.Errorf("reconcile: %d charges on chain (want %d), %d declined, discrepancies %+v", rep.OnChain, total, rep.Declined, rep.Discrepancies)
	}
	abi := bindings.NewSettleflowSettlement()
	found, err := client.FilterLogs(ctx, ethereum.FilterQuery{FromBlock: big.NewInt(0), Addresses: []common.Address{addrs.Contract}})
	if err != nil {
		t.Fatal(err)
	}
	skipped := 0
	txs := map[common.Hash]bool{}
	for i := range found {
		l := &found[i]
		if e, err := abi.UnpackAlreadySettledEvent(l); err == nil {
			skipped++
			if e.Sequence.Uint64() == 0 || bySeq[e.Sequence.Uint64()] == "" {
				t.Errorf("AlreadySettled for sequence %s, which no workflow has", e.Sequence)
			}
		}
		if _, err := abi.UnpackWordSettledEvent(l); err == nil {
			txs[l.TxHash] = true
		}
	}
	// Money: the customers paid exactly the sum, the payee is owed it,
	// and the contract holds what it held.
	held := new(big.Int)
	for ref := range refs {
		out, err := client.CallContract(ctx, ethereum.CallMsg{To: &addrs.Contract, Data: abi.PackBalanceOf(ref)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := abi.UnpackBalanceOf(out)
		held.Add(held, b)
	}
	if paid := new(big.Int).Sub(new(big.Int).Mul(perCustomer, big.NewInt(11)), held); paid.Cmp(sum) != 0 {
		t.Errorf("customers paid %s base units, want %s", paid, sum)
	}
	out, _ := client.CallContract(ctx, ethereum.CallMsg{To: &addrs.Contract, Data: abi.PackPayeeOwed()}, nil)
	if owed, _ := abi.UnpackPayeeOwed(out); owed == nil || owed.Cmp(sum) != 0 {
		t.Errorf("payee is owed %v base units, want %s", owed, sum)
	}
	if got := tokenBalance(addrs.Contract); got.Cmp(contractHeld0) != 0 {
		t.Errorf("the contract holds %s base units, held %s before: settling moves no tokens", got, contractHeld0)
	}
	if raced > 0 && skipped < raced {
		t.Errorf("%d charges were resubmitted while their first transaction was pending, %d skipped as AlreadySettled", raced, skipped)
	}
	t.Logf("%d workflows settled once each in %d transactions (%s base units); %d resubmitted charges skipped as AlreadySettled; %d engine runs",
		total, len(txs), sum, skipped, runs)
}
