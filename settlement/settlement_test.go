package settlement

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/params"
	"go.uber.org/zap/zaptest"

	"github.com/settleflow/settleflow"
)

func TestBaseUnitsAndKeys(t *testing.T) {
	for _, tc := range []struct {
		cents int64
		want  string
	}{{0, "0"}, {1, "10000"}, {1250, "12500000"}, {9223372036854775807, "92233720368547758070000"}} {
		got, err := BaseUnits(tc.cents, 6)
		if err != nil || got.String() != tc.want {
			t.Errorf("BaseUnits(%d, 6) = %v, %v; want %s", tc.cents, got, err, tc.want)
		}
	}
	if _, err := BaseUnits(-1, 6); err == nil {
		t.Error("negative amount accepted")
	}
	if got, _ := BaseUnits(7, 18); got.String() != "70000000000000000" {
		t.Errorf("BaseUnits(7, 18) = %s", got)
	}
	id := "wf_01JD3Q6Y6F8Q2W9T4M5N7P8R0S"
	k, err := WorkflowKey(id)
	if err != nil || WorkflowIDFromKey(k) != id {
		t.Errorf("WorkflowKey round trip: %q, %v", WorkflowIDFromKey(k), err)
	}
	for _, bad := range []string{"", strings.Repeat("x", 33), "wf_\x00"} {
		if _, err := WorkflowKey(bad); err == nil {
			t.Errorf("WorkflowKey(%q) accepted", bad)
		}
	}
}

func TestSettleOne(t *testing.T) {
	s := newSim(t, SimulatedOptions{})
	held0, owed0 := balances(t, s)
	ch := []settleflow.Charge{charge("wf_one", 1250)}
	if st, _ := s.Status(context.Background(), ch); st[0].State != settleflow.SettlementUnknown {
		t.Fatalf("before Submit: %s", describe(st))
	}
	if err := s.Submit(context.Background(), ch); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, s, ch, 30*time.Second, nil, confirmed)
	got := st[0].Settlement
	if got.ChainID != 1337 || got.Network != "simulated" || got.BlockNumber == 0 || got.Confirmations < 2 || len(got.TxHash) != 66 {
		t.Errorf("settlement = %+v", got)
	}
	checkMoved(t, s, held0, owed0, 1250)

	// The batch's event on chain carries the charge packed: the workflow's
	// tag, its sequence, its customer's reference and the amount.
	r, err := s.Backend.Client().TransactionReceipt(context.Background(), common.HexToHash(got.TxHash))
	if err != nil {
		t.Fatal(err)
	}
	tx, _, err := s.Backend.Client().TransactionByHash(context.Background(), common.HexToHash(got.TxHash))
	if err != nil {
		t.Fatal(err)
	}
	st0, err := decodeSettle(s.Addresses.Contract, r.TxHash, r.BlockNumber.Uint64(), tx.Data(), r.Logs)
	if err != nil || len(st0.charges) != 1 || len(st0.runs) != 1 || st0.charges[0].outcome != debited {
		t.Fatalf("settle read back: %+v, %v", st0, err)
	}
	if pc := st0.charges[0].charge; pc != (PackedCharge{Cents: 1250, Customer: 0, Sequence: seqOf("wf_one"), Tag: WorkflowTag("wf_one")}) ||
		st0.charges[0].ref != refOf(s, ch[0].CustomerID) {
		t.Errorf("charge on chain = %+v, customer %x", pc, st0.charges[0].ref)
	}
}

func TestSettleMany(t *testing.T) {
	s := newSim(t, SimulatedOptions{Tuning: ChainConfig{BatchSize: 10}})
	held0, owed0 := balances(t, s)
	var chs []settleflow.Charge
	var sum int64
	for i := range 35 {
		c := int64(100 + 37*i)
		chs = append(chs, charge(fmt.Sprintf("wf_many_%02d", i), c))
		sum += c
	}
	chs = append(chs, charge("wf_free", 0)) // a zero charge is recorded too
	if err := s.Submit(context.Background(), chs); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, s, chs, 30*time.Second, nil, confirmed)
	txs := map[string]int{}
	for _, x := range st {
		txs[x.Settlement.TxHash]++
	}
	if len(txs) != 4 {
		t.Errorf("36 charges in batches of 10 went out in %d transactions, want 4: %v", len(txs), txs)
	}
	checkMoved(t, s, held0, owed0, sum)
}

func TestDuplicateChargesNothingMore(t *testing.T) {
	ctx := context.Background()
	s := newSim(t, SimulatedOptions{})
	held0, owed0 := balances(t, s)
	first := []settleflow.Charge{charge("wf_dup", 500), charge("wf_dup", 500), charge("wf_other", 300)}
	if err := s.Submit(ctx, first); err != nil {
		t.Fatal(err)
	}
	if err := s.Submit(ctx, first[:1]); err != nil { // again, while queued
		t.Fatal(err)
	}
	st := waitFor(t, s, first, 30*time.Second, nil, confirmed)
	origTx := st[0].Settlement.TxHash
	checkMoved(t, s, held0, owed0, 800)

	// A second settler on the same contract with an empty memory (a restart
	// that forgot everything): Status finds the charge on chain, and
	// submitting it anyway charges nothing more.
	// Its log search goes one block at a time (a node that limits
	// eth_getLogs ranges).
	fresh, err := New(ctx, Config{Logger: zaptest.NewLogger(t), Test: &ChainConfig{
		Client: s.Backend.Client(), Contract: s.Addresses.Contract, Key: s.OperatorKey, CustomerRefSecret: s.CustomerRefSecret,
		Confirmations: 2, FlushInterval: 10 * time.Millisecond, PollInterval: 20 * time.Millisecond, LogRange: 1,
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	again := []settleflow.Charge{charge("wf_dup", 500)}
	st, err = fresh.Status(ctx, again)
	if err != nil || st[0].State != settleflow.SettlementConfirmed || st[0].Settlement.TxHash != origTx {
		t.Fatalf("fresh settler's Status: %s, %v", describe(st), err)
	}
	// Bypass that memory too: a brand-new settler is asked to settle it.
	fresh2, err := New(ctx, Config{Logger: zaptest.NewLogger(t), Test: &ChainConfig{
		Client: s.Backend.Client(), Contract: s.Addresses.Contract, Key: s.OperatorKey, CustomerRefSecret: s.CustomerRefSecret,
		Confirmations: 2, FlushInterval: 10 * time.Millisecond, PollInterval: 20 * time.Millisecond,
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh2.Close()
	if err := fresh2.Submit(ctx, append(again, charge("wf_new", 200))); err != nil {
		t.Fatal(err)
	}
	// The simulated chain's committer only watches its own settler: mine here.
	st = waitFor(t, fresh2, append(again, charge("wf_new", 200)), 30*time.Second, s.Commit, confirmed)
	if st[0].Settlement.TxHash != origTx {
		t.Errorf("resubmitted charge reports tx %s, want the original %s", st[0].Settlement.TxHash, origTx)
	}
	if st[1].Settlement.TxHash == origTx {
		t.Error("the new charge reports the old transaction")
	}
	checkMoved(t, s, held0, owed0, 1000) // 500 + 300 + 200: the duplicate paid nothing
}

func TestConcurrentChargesNonceOrder(t *testing.T) {
	s := newSim(t, SimulatedOptions{Tuning: ChainConfig{BatchSize: 7, FlushInterval: 50 * time.Millisecond}})
	ctx := context.Background()
	held0, owed0 := balances(t, s)
	startNonce, err := s.Backend.Client().NonceAt(ctx, s.Addresses.Operator, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	chs := make([]settleflow.Charge, 50)
	var sum int64
	errs := make(chan error, 50)
	for i := range chs {
		chs[i] = charge(fmt.Sprintf("wf_conc_%02d", i), int64(1000+i))
		sum += int64(1000 + i)
		wg.Add(1)
		go func(c settleflow.Charge) {
			defer wg.Done()
			errs <- s.Submit(ctx, []settleflow.Charge{c})
		}(chs[i])
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	st := waitFor(t, s, chs, 60*time.Second, nil, confirmed)
	nonces := map[uint64]bool{}
	for _, x := range st {
		tx, _, err := s.Backend.Client().TransactionByHash(ctx, common.HexToHash(x.Settlement.TxHash))
		if err != nil {
			t.Fatal(err)
		}
		nonces[tx.Nonce()] = true
	}
	if len(nonces) < 8 {
		t.Errorf("50 charges in batches of at most 7 used %d transactions", len(nonces))
	}
	for n := startNonce; n < startNonce+uint64(len(nonces)); n++ {
		if !nonces[n] {
			t.Errorf("nonces used %v: gap at %d", nonces, n)
		}
	}
	end, _ := s.Backend.Client().NonceAt(ctx, s.Addresses.Operator, nil)
	if end != startNonce+uint64(len(nonces)) {
		t.Errorf("account nonce went %d→%d for %d settlement transactions", startNonce, end, len(nonces))
	}
	checkMoved(t, s, held0, owed0, sum)
}

func TestStuckTransactionReplaced(t *testing.T) {
	// The miner includes nothing tipping under 1000 wei; the settler starts
	// at 800 and must bump (800 → 901 → 1014).
	s := newSim(t, SimulatedOptions{
		BackendOptions: []func(*node.Config, *ethconfig.Config){simulated.WithMinerMinTip(big.NewInt(1000))},
		Tuning:         ChainConfig{TipCap: big.NewInt(800), StuckAfter: 300 * time.Millisecond},
	})
	held0, owed0 := balances(t, s)
	ch := []settleflow.Charge{charge("wf_stuck", 4200)}
	if err := s.Submit(context.Background(), ch); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, s, ch, 10*time.Second, nil, func(x settleflow.SettlementStatus) bool {
		return x.Settlement != nil && x.Settlement.TxHash != ""
	})
	firstTx := st[0].Settlement.TxHash
	st = waitFor(t, s, ch, 60*time.Second, nil, confirmed)
	if st[0].Settlement.TxHash == firstTx {
		t.Fatalf("settled by the first transaction %s: it was not stuck", firstTx)
	}
	tx, _, err := s.Backend.Client().TransactionByHash(context.Background(), common.HexToHash(st[0].Settlement.TxHash))
	if err != nil {
		t.Fatal(err)
	}
	if tx.GasTipCap().Cmp(big.NewInt(1000)) < 0 {
		t.Errorf("mined tip %s is under the miner's minimum", tx.GasTipCap())
	}
	first, _, err := s.Backend.Client().TransactionByHash(context.Background(), common.HexToHash(firstTx))
	if err == nil && first.Nonce() != tx.Nonce() {
		t.Errorf("replacement nonce %d, original %d", tx.Nonce(), first.Nonce())
	}
	checkMoved(t, s, held0, owed0, 4200)
}

// reorgSetup settles one charge by hand up to its first inclusion and
// returns the parent of the including block and the transaction hash.
func reorgSetup(t *testing.T, s *Simulated, ch []settleflow.Charge) (parent *types.Header, tx common.Hash, block uint64) {
	t.Helper()
	ctx := context.Background()
	if err := s.Submit(ctx, ch); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, s, ch, 10*time.Second, nil, func(x settleflow.SettlementStatus) bool {
		return x.Settlement != nil && x.Settlement.TxHash != ""
	})
	tx = common.HexToHash(st[0].Settlement.TxHash)
	waitInPool(t, s, tx)
	parent, err := s.Backend.Client().HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Commit()
	st = waitFor(t, s, ch, 10*time.Second, nil, func(x settleflow.SettlementStatus) bool {
		return x.Settlement != nil && x.Settlement.BlockNumber != 0
	})
	if st[0].State != settleflow.SettlementPending || st[0].Settlement.BlockNumber != parent.Number.Uint64()+1 {
		t.Fatalf("after one block: %s", describe(st))
	}
	return parent, tx, st[0].Settlement.BlockNumber
}

func waitInPool(t *testing.T, s *Simulated, tx common.Hash) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, pending, err := s.Backend.Client().TransactionByHash(context.Background(), tx)
		if err == nil && pending {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("transaction %s never reached the pool (err %v)", tx, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestReorgReincluded(t *testing.T) {
	s := newSim(t, SimulatedOptions{ManualCommit: true, Tuning: ChainConfig{Confirmations: 3, FlushInterval: 10 * time.Millisecond, PollInterval: 20 * time.Millisecond}})
	held0, owed0 := balances(t, s)
	ch := []settleflow.Charge{charge("wf_reorg_in", 777)}
	parent, tx, oldBlock := reorgSetup(t, s, ch)

	// Reorg: the chain goes back to the parent; the transaction returns to the
	// pool and is mined again on the new branch, which outgrows the old one.
	if err := s.Backend.Fork(parent.Hash()); err != nil {
		t.Fatal(err)
	}
	waitInPool(t, s, tx)
	s.Commit()
	s.Commit()
	st := waitFor(t, s, ch, 30*time.Second, s.Commit, confirmed)
	if st[0].Settlement.TxHash != tx.Hex() {
		t.Errorf("settled by %s, want the re-included %s", st[0].Settlement.TxHash, tx.Hex())
	}
	r, err := s.Backend.Client().TransactionReceipt(context.Background(), tx)
	if err != nil {
		t.Fatal(err)
	}
	canon, _ := s.Backend.Client().HeaderByNumber(context.Background(), r.BlockNumber)
	if canon.Hash() != r.BlockHash || st[0].Settlement.BlockNumber != r.BlockNumber.Uint64() {
		t.Errorf("reported block %d, canonical receipt in %d (old block %d)", st[0].Settlement.BlockNumber, r.BlockNumber, oldBlock)
	}
	checkMoved(t, s, held0, owed0, 777)
}

func TestReorgDroppedIsResent(t *testing.T) {
	s := newSim(t, SimulatedOptions{ManualCommit: true, Tuning: ChainConfig{Confirmations: 3, FlushInterval: 10 * time.Millisecond,
		PollInterval: 20 * time.Millisecond, RebroadcastAfter: 100 * time.Millisecond}})
	ctx := context.Background()
	held0, owed0 := balances(t, s)
	ch := []settleflow.Charge{charge("wf_reorg_drop", 999)}
	parent, tx, _ := reorgSetup(t, s, ch)

	if err := s.Backend.Fork(parent.Hash()); err != nil {
		t.Fatal(err)
	}
	waitInPool(t, s, tx)
	s.Backend.Rollback() // the node forgets it: dropped
	if _, _, err := s.Backend.Client().TransactionByHash(ctx, tx); !errors.Is(err, ethereum.NotFound) {
		t.Fatalf("after Rollback the transaction is still known: %v", err)
	}
	s.Commit()
	s.Commit() // the new branch, without it, is now the longer one
	if n, _ := s.Backend.Client().NonceAt(ctx, s.Addresses.Operator, nil); n != tx2nonce(t, s, tx) {
		t.Fatalf("operator nonce %d after the drop", n)
	}
	// Only the settler can bring it back.
	waitInPool(t, s, tx)
	st := waitFor(t, s, ch, 30*time.Second, s.Commit, confirmed)
	if st[0].Settlement.BlockNumber <= parent.Number.Uint64()+2 {
		t.Errorf("settled in block %d, before the new branch's tip", st[0].Settlement.BlockNumber)
	}
	checkMoved(t, s, held0, owed0, 999)
}

func tx2nonce(t *testing.T, s *Simulated, h common.Hash) uint64 {
	t.Helper()
	// The dropped transaction is signed with the nonce the operator is at now.
	s.Settler.chains[settleflow.Test].mu.Lock()
	defer s.Settler.chains[settleflow.Test].mu.Unlock()
	for _, x := range s.Settler.chains[settleflow.Test].txs {
		for _, v := range x.txs {
			if v.Hash() == h {
				return v.Nonce()
			}
		}
	}
	t.Fatalf("transaction %s not tracked", h)
	return 0
}

func TestChainKindGuard(t *testing.T) {
	for _, tc := range []struct {
		env settleflow.Environment
		id  int64
		ok  bool
	}{
		{settleflow.Test, 1, false}, {settleflow.Test, 8453, false}, {settleflow.Test, 42161, false},
		{settleflow.Test, 11155111, true}, {settleflow.Test, 1337, true},
		{settleflow.Live, 1337, false}, {settleflow.Live, 84532, false}, {settleflow.Live, 11155420, false},
		{settleflow.Live, 1, true}, {settleflow.Live, 8453, true},
	} {
		if err := CheckChainKind(tc.env, tc.id); (err == nil) != tc.ok {
			t.Errorf("CheckChainKind(%s, %d) = %v", tc.env, tc.id, err)
		}
	}
	ctx := context.Background()
	key, _ := crypto.GenerateKey()

	// A testnet (the simulated chain, 1337) configured for live is refused.
	sim := simulated.NewBackend(types.GenesisAlloc{})
	defer sim.Close()
	_, err := New(ctx, Config{Live: &ChainConfig{Client: sim.Client(), ChainID: 1337, Contract: common.Address{1}, Key: key}})
	if err == nil || !strings.Contains(err.Error(), "live mode refuses chain id 1337") {
		t.Errorf("live on 1337: %v", err)
	}
	// A chain reporting mainnet's id 1 configured for test is refused.
	mainnetLike := simulated.NewBackend(types.GenesisAlloc{}, func(_ *node.Config, ec *ethconfig.Config) {
		cfg := *params.AllDevChainProtocolChanges
		cfg.ChainID = big.NewInt(1)
		ec.Genesis.Config = &cfg
		ec.NetworkId = 1
	})
	defer mainnetLike.Close()
	_, err = New(ctx, Config{Test: &ChainConfig{Client: mainnetLike.Client(), Contract: common.Address{1}, Key: key}})
	if err == nil || !strings.Contains(err.Error(), "test mode refuses chain id 1") {
		t.Errorf("test on 1: %v", err)
	}
	// A chain id other than the configured one is refused.
	_, err = New(ctx, Config{Test: &ChainConfig{Client: sim.Client(), ChainID: 11155111, Contract: common.Address{1}, Key: key}})
	if err == nil || !strings.Contains(err.Error(), "configured 11155111") {
		t.Errorf("wrong chain id: %v", err)
	}
	// Live needs its chain id spelled out.
	_, err = New(ctx, Config{Live: &ChainConfig{Client: mainnetLike.Client(), Contract: common.Address{1}, Key: key}})
	if err == nil || !strings.Contains(err.Error(), "ChainID must be configured") {
		t.Errorf("live without ChainID: %v", err)
	}
}

// refusal returns the code Submit's *settleflow.RefusedError gives for the
// charge of workflow id, "" if err refused no such charge.
func refusal(err error, id string) settleflow.ErrorCode {
	var re *settleflow.RefusedError
	if errors.As(err, &re) && re.Refused[id] != nil {
		return re.Refused[id].Code
	}
	return ""
}

// refusedIDs returns the workflow ids err refused, sorted.
func refusedIDs(err error) []string {
	var re *settleflow.RefusedError
	if !errors.As(err, &re) {
		return nil
	}
	var ids []string
	for id := range re.Refused {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func TestErrorsWithMeaning(t *testing.T) {
	ctx := context.Background()
	s := newSim(t, SimulatedOptions{})

	// Live is not configured: the live charge is refused, the test charge
	// beside it is taken.
	withLive := []settleflow.Charge{{WorkflowID: "wf_live", Sequence: 1, Environment: settleflow.Live, Amount: 1, Currency: "usd"}, charge("wf_beside_live", 1)}
	err := s.Submit(ctx, withLive)
	if refusal(err, "wf_live") != CodeLivemodeNotConfigured || !slices.Equal(refusedIDs(err), []string{"wf_live"}) {
		t.Errorf("live charge: %v", err)
	}
	// With no live chain nobody can say whether a live charge was settled:
	// Status says it cannot tell, and does not call it failed.
	if got, err := s.Status(ctx, withLive); err != nil || got[0].Err == nil || got[0].State == settleflow.SettlementFailed || got[1].Err != nil {
		t.Errorf("Status of a live charge with no live chain: %s, %v", describe(got), err)
	}
	// Bad charges, each refused for itself; the good one among them is taken.
	noSeq := charge("wf_noseq", 1)
	noSeq.Sequence = 0 // the engine always sets it
	bads := []settleflow.Charge{charge(strings.Repeat("w", 33), 1), charge("wf_neg", -1),
		{WorkflowID: "wf_eur", Sequence: seqOf("wf_eur"), Environment: settleflow.Test, Amount: 1, Currency: "eur"}, noSeq}
	err = s.Submit(ctx, append([]settleflow.Charge{charge("wf_good", 1)}, bads...))
	for _, bad := range bads {
		if refusal(err, bad.WorkflowID) != CodeInvalidCharge {
			t.Errorf("charge %+v: %v", bad, err)
		}
	}
	if refusal(err, "wf_good") != "" {
		t.Errorf("the good charge was refused with the bad ones: %v", err)
	}
	waitFor(t, s, []settleflow.Charge{withLive[1], charge("wf_good", 1)}, 30*time.Second, nil, confirmed)
	// The node refuses a batch: decoded into a clear code.
	data := settlementABI.PackSettle([][32]byte{refOf(s, "cus_t0")}, []*big.Int{PackedCharge{Cents: 1, Sequence: seqOf("wf_estimate"), Tag: 1}.Pack()})
	_, err = s.Backend.Client().EstimateGas(ctx, ethereum.CallMsg{From: s.Addresses.Payee, To: &s.Addresses.Contract, Data: data})
	if f := classifyRevert(err); f == nil || f.Code != CodeSettlementReverted || !strings.Contains(f.Message, "operator") {
		t.Errorf("not the operator: %v → %+v", err, f)
	}
	unsorted := settlementABI.PackSettle([][32]byte{refOf(s, "cus_t0"), refOf(s, "cus_t0")}, []*big.Int{PackedCharge{Cents: 1, Sequence: seqOf("wf_estimate"), Tag: 1}.Pack()})
	_, err = s.Backend.Client().EstimateGas(ctx, ethereum.CallMsg{From: s.Addresses.Operator, To: &s.Addresses.Contract, Data: unsorted})
	if f := classifyRevert(err); f == nil || f.Code != CodeSettlementReverted || !strings.Contains(f.Message, "CustomersNotSorted") {
		t.Errorf("a customer twice: %v → %+v", err, f)
	}

	// An unreachable node is a transient (plain) error: Submit only
	// queues, but asking the chain about a charge it holds no record of
	// gives that charge an Err (the engine asks again later).
	s.Backend.Close()
	got, err := s.Status(ctx, []settleflow.Charge{charge("wf_down", 1)})
	if err != nil || got[0].Err == nil || settleflow.IsPermanent(got[0].Err) || got[0].State == settleflow.SettlementFailed {
		t.Errorf("node down: %s, %v", describe(got), err)
	}
	_, err = New(ctx, Config{Test: &ChainConfig{RPCURL: "http://127.0.0.1:1", Contract: common.Address{1}, Key: s.OperatorKey}})
	if err == nil || settleflow.IsPermanent(err) {
		t.Errorf("dial nothing: %v", err)
	}
}

// A charge its customer's balance cannot cover is declined on chain: it
// fails with insufficient_funds and charges nothing, the rest of its batch
// is debited, and a settler that forgot everything finds it declined too.
func TestDeclinedCharge(t *testing.T) {
	ctx := context.Background()
	s := newSim(t, SimulatedOptions{Tuning: ChainConfig{FlushInterval: time.Hour, BatchSize: 3}})
	deposit(t, s, "cus_poor", 500)
	poor := func(id string, c int64) settleflow.Charge {
		ch := charge(id, c)
		ch.CustomerID = "cus_poor"
		return ch
	}
	held0, owed0 := balances(t, s)
	// $3.00 fits, then $2.50 does not ($2.00 left), then a rich customer's.
	batch := []settleflow.Charge{poor("wf_poor_a", 300), poor("wf_poor_b", 250), charge("wf_rich_c", 100)}
	if err := s.Submit(ctx, batch); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, s, batch, 30*time.Second, nil, func(x settleflow.SettlementStatus) bool {
		return x.State == settleflow.SettlementConfirmed || x.State == settleflow.SettlementFailed
	})
	if st[0].State != settleflow.SettlementConfirmed || st[2].State != settleflow.SettlementConfirmed || st[1].State != settleflow.SettlementFailed ||
		st[1].Failure.Code != CodeInsufficientFunds || !strings.Contains(st[1].Failure.Message, "cus_poor") || !strings.Contains(st[1].Failure.Message, "2 USD") {
		t.Fatalf("statuses: %s", describe(st))
	}
	if got := customerBalance(t, s, "cus_poor"); got.Cmp(cents(200)) != 0 {
		t.Errorf("cus_poor holds %s, want $2.00", got)
	}
	held1, owed1 := balances(t, s)
	if new(big.Int).Sub(held0, held1).Cmp(cents(100)) != 0 || new(big.Int).Sub(owed1, owed0).Cmp(cents(400)) != 0 {
		t.Errorf("the rich customers paid %s, the payee earned %s; want $1.00 and $4.00", new(big.Int).Sub(held0, held1), new(big.Int).Sub(owed1, owed0))
	}
	all := new(big.Int).Add(new(big.Int).Add(held1, owed1), customerBalance(t, s, "cus_poor"))
	if tb := balance(t, s.Backend.Client(), s.Addresses.Token, s.Addresses.Contract); tb.Cmp(all) != 0 {
		t.Errorf("the contract holds %s, its customers and payee are owed %s", tb, all)
	}
	// A settler that forgot everything: the declined charge is failed, not
	// unknown (submitting it again would charge nothing: its sequence is
	// recorded).
	fresh, err := New(ctx, Config{Logger: zaptest.NewLogger(t), Test: &ChainConfig{Client: s.Backend.Client(), Contract: s.Addresses.Contract,
		Key: s.OperatorKey, CustomerRefSecret: s.CustomerRefSecret, Confirmations: 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	got, err := fresh.Status(ctx, batch)
	if err != nil || got[1].State != settleflow.SettlementFailed || got[1].Failure.Code != CodeInsufficientFunds || got[0].State != settleflow.SettlementConfirmed {
		t.Fatalf("a fresh settler's Status: %s, %v", describe(got), err)
	}
}

func TestOversizedBatchSplits(t *testing.T) {
	// A batch over what one transaction may use (here the block gas limit,
	// lowered so that 2,000 charges do not fit; on mainnets the EIP-7825 cap of
	// 16,777,216) goes out in parts: the settler splits it.
	s := newSim(t, SimulatedOptions{Tuning: ChainConfig{BatchSize: 2000},
		BackendOptions: []func(*node.Config, *ethconfig.Config){simulated.WithBlockGasLimit(3_000_000)}})
	held0, owed0 := balances(t, s)
	chs := make([]settleflow.Charge, 2000)
	var sum int64
	for i := range chs {
		chs[i] = charge(fmt.Sprintf("wf_big_%03d", i), int64(i+1))
		sum += int64(i + 1)
	}
	if err := s.Submit(context.Background(), chs); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, s, chs, 60*time.Second, nil, confirmed)
	txs := map[string]bool{}
	for _, x := range st {
		txs[x.Settlement.TxHash] = true
	}
	if len(txs) < 2 {
		t.Errorf("2000 charges went out in %d transaction(s)", len(txs))
	}
	checkMoved(t, s, held0, owed0, sum)
}

func TestFinalizedDepthByDefault(t *testing.T) {
	// Confirmations 0 (the live default) waits for the "finalized" block; the
	// simulated beacon finalizes in epochs of 32 blocks.
	ctx := context.Background()
	sim := newSim(t, SimulatedOptions{ManualCommit: true})
	s, err := New(ctx, Config{Logger: zaptest.NewLogger(t), Test: &ChainConfig{
		Client: sim.Backend.Client(), Contract: sim.Addresses.Contract, Key: sim.OperatorKey, CustomerRefSecret: sim.CustomerRefSecret,
		FlushInterval: 10 * time.Millisecond, PollInterval: 20 * time.Millisecond,
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ch := []settleflow.Charge{charge("wf_final", 5)}
	if err := s.Submit(ctx, ch); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, s, ch, 10*time.Second, sim.Commit, func(x settleflow.SettlementStatus) bool {
		return x.Settlement != nil && x.Settlement.BlockNumber != 0
	})
	block := st[0].Settlement.BlockNumber
	for range 5 {
		sim.Commit()
	}
	time.Sleep(100 * time.Millisecond)
	fin, err := sim.Backend.Client().HeaderByNumber(ctx, big.NewInt(-3)) // finalized
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := s.Status(ctx, ch); fin.Number.Uint64() < block && st[0].State != settleflow.SettlementPending {
		t.Fatalf("confirmed before finality (block %d, finalized %d): %s", block, fin.Number, describe(st))
	}
	waitFor(t, s, ch, 30*time.Second, sim.Commit, confirmed)
	fin, _ = sim.Backend.Client().HeaderByNumber(ctx, big.NewInt(-3))
	if fin.Number.Uint64() < block {
		t.Errorf("confirmed in block %d while finalized is %d", block, fin.Number)
	}
}

func TestRevertedSettlementChargesNothing(t *testing.T) {
	// A settlement that reverts on chain charges nothing and is not taken
	// for a settlement. Here the contract's owner (not the operator)
	// replaces the operator in the same block, with a higher tip, so the
	// settlement runs second and reverts with NotOperator. The charge then
	// waits (issue 43: a rotated operator key pauses settling, Health
	// NotOperator, instead of failing every queued charge as a revert);
	// the operator set back, it is charged once. A charge the node says
	// reverts for another reason fails: TestRevertingSettleFailsOnlyUnrecorded.
	ctx := context.Background()
	sim := newSim(t, SimulatedOptions{ManualCommit: true})
	owner := Transactor{Backend: sim.Backend.Client(), Key: sim.PayeeKey, Mine: sim.Commit}
	contract, err := owner.DeploySettlement(ctx, sim.Addresses.Token, sim.Addresses.Payee, sim.Addresses.Operator, 6, 0)
	if err != nil {
		t.Fatal(err)
	}
	faucet := Transactor{Backend: sim.Backend.Client(), Key: sim.FaucetKey, Mine: sim.Commit}
	if _, err := faucet.Send(ctx, &sim.Addresses.Token, erc20ABI.PackApprove(contract, cents(1_000_000))); err != nil {
		t.Fatal(err)
	}
	if _, err := faucet.Send(ctx, &contract, settlementABI.PackDeposit(refOf(sim, charge("wf_revert", 1).CustomerID), common.Address{}, cents(1000))); err != nil {
		t.Fatal(err)
	}
	s, err := New(ctx, Config{Logger: zaptest.NewLogger(t), Test: &ChainConfig{
		Client: sim.Backend.Client(), Contract: contract, Key: sim.OperatorKey, CustomerRefSecret: sim.CustomerRefSecret, Confirmations: 2,
		FlushInterval: 10 * time.Millisecond, PollInterval: 20 * time.Millisecond,
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cus := charge("wf_revert", 1).CustomerID
	before := balance(t, sim.Backend.Client(), sim.Addresses.Token, contract)
	ch := []settleflow.Charge{charge("wf_revert", 321)}
	if err := s.Submit(ctx, ch); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, s, ch, 10*time.Second, nil, func(x settleflow.SettlementStatus) bool {
		return x.Settlement != nil && x.Settlement.TxHash != ""
	})
	sent := common.HexToHash(st[0].Settlement.TxHash)
	waitInPool(t, sim, sent)
	owner.TipCap = big.NewInt(params.GWei)
	if _, err := owner.Send(ctx, &contract, settlementABI.PackSetOperator(sim.Addresses.Payee)); err != nil {
		t.Fatal(err)
	}
	// The reverted transaction is mined; the charge waits, not failed.
	for deadline := time.Now().Add(30 * time.Second); !s.Health()[0].NotOperator; time.Sleep(20 * time.Millisecond) {
		sim.Commit()
		if time.Now().After(deadline) {
			t.Fatalf("Health never reported the signer no longer the operator: %+v", s.Health()[0])
		}
	}
	r, err := sim.Backend.Client().TransactionReceipt(ctx, sent)
	if err != nil || r.Status != types.ReceiptStatusFailed {
		t.Errorf("the settlement transaction did not revert: %v %+v", err, r)
	}
	if st, _ := s.Status(ctx, ch); st[0].State != settleflow.SettlementPending {
		t.Fatalf("after a revert for a rotated operator key: %s; want pending", describe(st))
	}
	out, _ := sim.Backend.Client().CallContract(ctx, ethereum.CallMsg{To: &contract, Data: settlementABI.PackBalanceOf(refOf(sim, cus))}, nil)
	if b, _ := settlementABI.UnpackBalanceOf(out); b == nil || b.Cmp(cents(1000)) != 0 || balance(t, sim.Backend.Client(), sim.Addresses.Token, contract).Cmp(before) != 0 {
		t.Errorf("a reverted settlement moved money: balance %v", b)
	}
	// The operator set back: the charge is debited once.
	if _, err := owner.Send(ctx, &contract, settlementABI.PackSetOperator(sim.Addresses.Operator)); err != nil {
		t.Fatal(err)
	}
	st = waitFor(t, s, ch, 30*time.Second, sim.Commit, confirmed)
	if st[0].Settlement.TxHash == sent.Hex() {
		t.Errorf("confirmed by the reverted transaction %s", sent)
	}
	out, _ = sim.Backend.Client().CallContract(ctx, ethereum.CallMsg{To: &contract, Data: settlementABI.PackBalanceOf(refOf(sim, cus))}, nil)
	if b, _ := settlementABI.UnpackBalanceOf(out); b == nil || b.Cmp(cents(1000-321)) != 0 {
		t.Errorf("balance %v after the charge of 321 from 1000", b)
	}
}

func TestSequenceConflict(t *testing.T) {
	ctx := context.Background()
	s := newSim(t, SimulatedOptions{})
	held0, owed0 := balances(t, s)
	a := charge("wf_seq_a", 700)
	b := settleflow.Charge{WorkflowID: "wf_seq_b", Sequence: a.Sequence, Environment: settleflow.Test, CustomerID: a.CustomerID, Amount: 300, Currency: "usd"}

	// Two workflows with one sequence in one Submit (the first is taken, the
	// second refused), or one after the other.
	if err := s.Submit(ctx, []settleflow.Charge{a, b}); !slices.Equal(refusedIDs(err), []string{"wf_seq_b"}) || refusal(err, "wf_seq_b") != CodeInvalidCharge {
		t.Fatalf("a sequence shared within a batch: %v", err)
	}
	if err := s.Submit(ctx, []settleflow.Charge{a}); err != nil {
		t.Fatal(err)
	}
	if err := s.Submit(ctx, []settleflow.Charge{b}); refusal(err, "wf_seq_b") != CodeInvalidCharge {
		t.Fatalf("a sequence taken in memory: %v", err)
	}
	st := waitFor(t, s, []settleflow.Charge{a}, 30*time.Second, nil, confirmed)

	// A settler with an empty memory finds the sequence settled for another
	// workflow: b fails (and was never charged) whether asked or submitted.
	fresh, err := New(ctx, Config{Logger: zaptest.NewLogger(t), Test: &ChainConfig{
		Client: s.Backend.Client(), Contract: s.Addresses.Contract, Key: s.OperatorKey, CustomerRefSecret: s.CustomerRefSecret,
		Confirmations: 2, FlushInterval: 10 * time.Millisecond, PollInterval: 20 * time.Millisecond,
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	got, err := fresh.Status(ctx, []settleflow.Charge{b})
	if err != nil || got[0].State != settleflow.SettlementFailed || got[0].Failure.Code != CodeInvalidCharge ||
		!strings.Contains(got[0].Failure.Message, st[0].Settlement.TxHash) {
		t.Fatalf("fresh Status of the conflicting charge: %s, %v", describe(got), err)
	}
	if err := fresh.Submit(ctx, []settleflow.Charge{b}); err != nil {
		t.Fatal(err)
	}
	got = waitFor(t, fresh, []settleflow.Charge{b}, 30*time.Second, s.Commit, func(x settleflow.SettlementStatus) bool {
		return x.State == settleflow.SettlementFailed
	})
	if got[0].Failure.Code != CodeInvalidCharge || !strings.Contains(got[0].Failure.Message, fmt.Sprintf("%016x", WorkflowTag("wf_seq_a"))) {
		t.Errorf("submitted conflicting charge: %s", describe(got))
	}
	checkMoved(t, s, held0, owed0, 700)
}

// TestContractBitmap drives the contract directly: sequences across bitmap
// words, out of order, with duplicates inside the batch and from an earlier
// batch. Each sequence is debited once; the payee is owed the sum.
func TestContractBitmap(t *testing.T) {
	ctx := context.Background()
	s := newSim(t, SimulatedOptions{ManualCommit: true})
	tr := Transactor{Backend: s.Backend.Client(), Key: s.OperatorKey, Mine: s.Commit}
	held0, owed0 := balances(t, s)
	ref := refOf(s, "cus_t0")
	var sent []byte
	mk := func(seqs ...uint64) []byte {
		out := make([]*big.Int, len(seqs))
		for i, n := range seqs {
			out[i] = PackedCharge{Cents: n, Sequence: n, Tag: WorkflowTag(fmt.Sprintf("wf_bits_%d", n))}.Pack()
		}
		sent = settlementABI.PackSettle([][32]byte{ref}, out)
		return sent
	}
	events := func(r *types.Receipt) (settledSeqs, skippedSeqs []uint64) {
		st, err := decodeSettle(s.Addresses.Contract, r.TxHash, r.BlockNumber.Uint64(), sent, r.Logs)
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range st.charges {
			pc := ch.charge
			if pc.Tag != WorkflowTag(fmt.Sprintf("wf_bits_%d", pc.Sequence)) || pc.Cents != pc.Sequence {
				t.Errorf("charge %+v", pc)
			}
			switch ch.outcome {
			case debited:
				settledSeqs = append(settledSeqs, pc.Sequence)
			case skipped:
				skippedSeqs = append(skippedSeqs, pc.Sequence)
			}
		}
		return settledSeqs, skippedSeqs
	}
	r, err := tr.Send(ctx, &s.Addresses.Contract, mk(255, 256, 1, 255, 1000, 256, 511, 512))
	if err != nil {
		t.Fatal(err)
	}
	settled, skipped := events(r)
	if fmt.Sprint(settled) != "[255 256 1 1000 511 512]" || fmt.Sprint(skipped) != "[255 256]" {
		t.Errorf("first batch: settled %v, skipped %v", settled, skipped)
	}
	r, err = tr.Send(ctx, &s.Addresses.Contract, mk(2, 1000, 257))
	if err != nil {
		t.Fatal(err)
	}
	settled, skipped = events(r)
	if fmt.Sprint(settled) != "[2 257]" || fmt.Sprint(skipped) != "[1000]" {
		t.Errorf("second batch: settled %v, skipped %v", settled, skipped)
	}
	// A batch of nothing new moves nothing and does not revert.
	if _, err := tr.Send(ctx, &s.Addresses.Contract, mk(1, 2)); err != nil {
		t.Fatal(err)
	}
	for n := uint64(0); n < 1100; n++ {
		out, err := s.Backend.Client().CallContract(ctx, ethereum.CallMsg{To: &s.Addresses.Contract, Data: settlementABI.PackSettled(new(big.Int).SetUint64(n))}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := settlementABI.UnpackSettled(out)
		want := map[uint64]bool{1: true, 2: true, 255: true, 256: true, 257: true, 511: true, 512: true, 1000: true}[n]
		if got != want {
			t.Errorf("settled(%d) = %v", n, got)
		}
	}
	checkMoved(t, s, held0, owed0, 1+2+255+256+257+511+512+1000)
	// Sequence 0, a customer index out of range, an unsorted or zero
	// customer list are refused.
	for name, data := range map[string][]byte{
		"sequence 0":     mk(0),
		"customer index": settlementABI.PackSettle([][32]byte{ref}, []*big.Int{PackedCharge{Cents: 1, Customer: 1, Sequence: 3}.Pack()}),
		"zero customer":  settlementABI.PackSettle([][32]byte{{}}, []*big.Int{PackedCharge{Cents: 1, Sequence: 3}.Pack()}),
	} {
		if _, err := s.Backend.Client().EstimateGas(ctx, ethereum.CallMsg{From: s.Addresses.Operator, To: &s.Addresses.Contract, Data: data}); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}
