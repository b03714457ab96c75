package settlement

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"errors"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"go.uber.org/zap/zaptest"

	"github.com/settleflow/settleflow"
)

// relayAuth is key's signed authorization of a deposit of cents for
// customerID on st's test chain (no owner), as a wallet signs it.
func relayAuth(t *testing.T, st *Settler, key *ecdsa.PrivateKey, customerID string, cents int64) DepositAuthorization {
	t.Helper()
	c := st.chains[settleflow.Test]
	d, err := c.tokenDomain(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var salt [32]byte
	rand.Read(salt[:])
	v, err := BaseUnits(cents, c.decimals)
	if err != nil {
		t.Fatal(err)
	}
	from := crypto.PubkeyToAddress(key.PublicKey)
	validBefore := time.Now().Add(time.Hour).Unix()
	p := &depositAuth{from: from, value: v, validBefore: uint64(validBefore), salt: salt}
	digest := c.depositDigest(d, DepositNonce(c.ref(customerID), common.Address{}, salt), p)
	sig, err := crypto.Sign(digest[:], key)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27
	return DepositAuthorization{From: from.Hex(), Amount: cents, ValidBefore: validBefore, Salt: hexutil.Encode(salt[:]), Signature: hexutil.Encode(sig)}
}

// The relay's budget across customers (issue 43, finding 7): a wallet gets
// PerWalletHour relays an hour whichever customers it deposits for, and all
// customers together PerHour; past either, RelayDeposit refuses with a
// *RelayBudgetError naming the scope and sends nothing. The same
// authorization sent again costs nothing more. RelayBudgets reports the
// hour's use, the budget spent (readiness) and the refusals (metrics).
func TestRelayBudgetAcrossCustomers(t *testing.T) {
	ctx := context.Background()
	s := newSim(t, SimulatedOptions{Tuning: ChainConfig{Relays: RelayBudget{PerHour: 3, PerWalletHour: 2}}})
	w1, _ := walletFor(t, s, 1_000)
	w2, _ := walletFor(t, s, 1_000)
	relay := func(key *ecdsa.PrivateKey, customerID string) (string, error) {
		return s.RelayDeposit(ctx, settleflow.Test, customerID, relayAuth(t, s.Settler, key, customerID, 100))
	}
	first := relayAuth(t, s.Settler, w1, "cus_relay_a", 100)
	tx1, err := s.RelayDeposit(ctx, settleflow.Test, "cus_relay_a", first)
	if err != nil {
		t.Fatalf("first relay: %v", err)
	}
	if _, err := relay(w1, "cus_relay_b"); err != nil {
		t.Fatalf("wallet 1's second relay: %v", err)
	}
	_, err = relay(w1, "cus_relay_c")
	var be *RelayBudgetError
	if !errors.As(err, &be) || be.Scope != RelayScopeWallet || be.Limit != 2 || be.Wallet != crypto.PubkeyToAddress(w1.PublicKey).Hex() {
		t.Fatalf("wallet 1's third relay, another customer: %v; want the wallet's budget spent", err)
	}
	if _, err := relay(w2, "cus_relay_c"); err != nil {
		t.Fatalf("wallet 2's first relay: %v", err)
	}
	_, err = relay(w2, "cus_relay_d")
	if !errors.As(err, &be) || be.Scope != RelayScopeOperator || be.Limit != 3 || !be.Until.After(time.Now()) {
		t.Fatalf("a fourth relay this hour: %v; want the operator's budget spent", err)
	}
	// The same authorization again: its first transaction, not a refusal.
	if tx, err := s.RelayDeposit(ctx, settleflow.Test, "cus_relay_a", first); err != nil || tx != tx1 {
		t.Fatalf("the first authorization again: %s %v, want %s", tx, err, tx1)
	}
	st := s.RelayBudgets()
	if len(st) != 1 || st[0].Used != 3 || st[0].Limit != 3 || !st[0].Spent || st[0].WalletsSpent != 1 || st[0].WalletLimit != 2 ||
		st[0].Refused[RelayScopeWallet] != 1 || st[0].Refused[RelayScopeOperator] != 1 || st[0].Problem() == "" {
		t.Fatalf("relay budgets %+v", st)
	}
	// Nothing was sent for the refused ones: three deposits credited.
	deadline := time.Now().Add(time.Minute)
	for _, id := range []string{"cus_relay_a", "cus_relay_b", "cus_relay_c"} {
		for customerBalance(t, s, id).Cmp(cents(100)) != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%s holds %s, want 100 cents", id, customerBalance(t, s, id))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if b := customerBalance(t, s, "cus_relay_d"); b.Sign() != 0 {
		t.Fatalf("the refused relay was sent: cus_relay_d holds %s", b)
	}
}

// cancelOnSend is a node whose SendTransaction first cancels the request
// that queued the transaction: the request ends after queueing, before
// the send.
type cancelOnSend struct {
	Backend
	mu     sync.Mutex
	cancel context.CancelFunc
}

func (n *cancelOnSend) SendTransaction(ctx context.Context, tx *types.Transaction) error {
	n.mu.Lock()
	n.cancel()
	n.mu.Unlock()
	return n.Backend.SendTransaction(ctx, tx)
}

// request is a request's ctx that n cancels at its next send.
func (n *cancelOnSend) request() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	n.mu.Lock()
	n.cancel = cancel
	n.mu.Unlock()
	return ctx
}

// A relay (and an owner grant) whose request is canceled once it is
// queued is still sent (the operator pays for it), so RelayDeposit and
// SetOwner still answer its transaction for the caller to record, not the
// request's end (issue 43, low finding).
func TestRelayCanceledAfterQueueingAnswersTheTransaction(t *testing.T) {
	s := newSim(t, SimulatedOptions{})
	w, _ := walletFor(t, s, 1_000)
	node := &cancelOnSend{Backend: s.Backend.Client()}
	ctx := node.request()
	cc := ChainConfig{Client: node, Contract: s.Addresses.Contract, Token: s.Addresses.Token, Payee: s.Settler.chains[settleflow.Test].payee,
		Key: s.OperatorKey, CustomerRefSecret: s.CustomerRefSecret, Confirmations: 2, Network: "simulated", PollInterval: 50 * time.Millisecond}
	st, err := New(context.Background(), Config{Test: &cc, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	tx, err := st.RelayDeposit(ctx, settleflow.Test, "cus_relay_canceled", relayAuth(t, st, w, "cus_relay_canceled", 100))
	if err != nil || tx == "" {
		t.Fatalf("relay canceled after queueing: %q %v; want its transaction", tx, err)
	}
	if ctx.Err() == nil {
		t.Fatal("the request was never canceled: the test cancels nothing")
	}
	deadline := time.Now().Add(time.Minute)
	for {
		rc, err := st.RelayReceipt(context.Background(), settleflow.Test, tx)
		if err == nil && rc.Mined {
			if !rc.Succeeded {
				t.Fatal("the relayed deposit reverted")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the answered transaction %s was not mined: %+v %v", tx, rc, err)
		}
		time.Sleep(20 * time.Millisecond)
	}

	key, _ := crypto.GenerateKey()
	ctx = node.request()
	tx, err = st.SetOwner(ctx, settleflow.Test, "cus_owner_canceled", newGrant(t, s, key, "cus_owner_canceled"))
	if err != nil || tx == "" {
		t.Fatalf("owner grant canceled after queueing: %q %v; want its transaction", tx, err)
	}
	if ctx.Err() == nil {
		t.Fatal("the grant's request was never canceled: the test cancels nothing")
	}
}

// sendAhead sends key's transaction to with data, its tip ten times
// relayed's, without mining it: it lands in the next block before relayed.
func sendAhead(t *testing.T, s *Simulated, key *ecdsa.PrivateKey, relayed *types.Transaction, to *common.Address, data []byte) *types.Transaction {
	t.Helper()
	ctx := context.Background()
	client := s.Backend.Client()
	chainID, err := client.ChainID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	nonce, err := client.PendingNonceAt(ctx, crypto.PubkeyToAddress(key.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	tip := new(big.Int).Mul(relayed.GasTipCap(), big.NewInt(10))
	tx, err := types.SignNewTx(key, types.LatestSignerForChainID(chainID), &types.DynamicFeeTx{ChainID: chainID, Nonce: nonce,
		GasTipCap: tip, GasFeeCap: new(big.Int).Add(relayed.GasFeeCap(), tip), Gas: relayed.Gas(), To: to, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.SendTransaction(ctx, tx); err != nil {
		t.Fatal(err)
	}
	return tx
}

// A relay front-run from the mempool (an observer sends the same
// depositWithAuthorization first, with a higher tip) reverts, but the
// deposit was credited as signed, once: RelayReceipt names the
// transaction that credited it (CreditedBy), so the relay shows credited,
// not failed (issue 43, low finding). A relay that reverted for another
// reason (the wallet moved its tokens first) names none: it failed.
func TestRelayFrontRunShowsCredited(t *testing.T) {
	ctx := context.Background()
	s := newSim(t, SimulatedOptions{ManualCommit: true})
	wallet, _ := walletFor(t, s, 1_000)
	attacker, _ := walletFor(t, s, 0)
	client := s.Backend.Client()
	relay := func(key *ecdsa.PrivateKey, customerID string) (string, *types.Transaction) {
		tx, err := s.RelayDeposit(ctx, settleflow.Test, customerID, relayAuth(t, s.Settler, key, customerID, 100))
		if err != nil {
			t.Fatal(err)
		}
		relayed, _, err := client.TransactionByHash(ctx, common.HexToHash(tx))
		if err != nil {
			t.Fatal(err)
		}
		return tx, relayed
	}
	tx, relayed := relay(wallet, "cus_frontrun")
	front := sendAhead(t, s, attacker, relayed, relayed.To(), relayed.Data()) // the observer copies the calldata
	s.Commit()
	rc, err := s.RelayReceipt(ctx, settleflow.Test, tx)
	if err != nil || !rc.Mined {
		t.Fatalf("receipt of the front-run relay: %+v %v", rc, err)
	}
	if rc.Succeeded {
		t.Fatal("the relay was not front-run: the test front-runs nothing")
	}
	if rc.CreditedBy != front.Hash().Hex() {
		t.Fatalf("the front-run relay: credited by %q, want the front-runner's %s", rc.CreditedBy, front.Hash().Hex())
	}
	if b := customerBalance(t, s, "cus_frontrun"); b.Cmp(cents(100)) != 0 {
		t.Fatalf("cus_frontrun holds %s, want 100 cents (credited once)", b)
	}

	// The wallet moves its tokens away before the relay is mined.
	poor, _ := walletFor(t, s, 100)
	tx, relayed = relay(poor, "cus_moved")
	sendAhead(t, s, poor, relayed, &s.Addresses.Token, erc20ABI.PackTransfer(s.Addresses.Payee, cents(100)))
	s.Commit()
	rc, err = s.RelayReceipt(ctx, settleflow.Test, tx)
	if err != nil || !rc.Mined || rc.Succeeded || rc.CreditedBy != "" {
		t.Fatalf("a relay whose wallet moved its tokens first: %+v %v; want reverted, credited by none", rc, err)
	}
}
