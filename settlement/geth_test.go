package settlement

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"go.uber.org/zap/zaptest"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/gethdev"
)

func freePort(t *testing.T) int { return gethdev.FreePort(t) }

// gethDev is a geth --dev node on loopback, stopped when the test ends.
type gethDev struct {
	client  *ethclient.Client
	url     string
	keyfile string // the dev account's keystore file (empty password)
	devKey  *ecdsa.PrivateKey
}

// startGeth starts `geth --dev` (gethdev.Start; the test is skipped
// without SETTLEFLOW_GETH), mining a block a second.
func startGeth(t *testing.T) *gethDev {
	t.Helper()
	n := gethdev.Start(t, gethdev.Options{Verbosity: 3})
	return &gethDev{client: n.Client, url: n.URL, keyfile: n.KeyFile, devKey: n.DevKey}
}

// TestGethDev settles against a real `geth --dev` node on loopback. It needs
// the geth binary in SETTLEFLOW_GETH; build one with
//
//	settlement/scripts/install-geth.sh /tmp/geth-bin
//	SETTLEFLOW_GETH=/tmp/geth-bin/geth go test -run TestGethDev -v ./settlement
func TestGethDev(t *testing.T) {
	t.Parallel() // mostly waiting for geth's blocks: beside the other geth test
	g := startGeth(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	client, url, files, devKey := g.client, g.url, []string{g.keyfile}, g.devKey
	payeeKey, _ := crypto.GenerateKey()
	payee := crypto.PubkeyToAddress(payeeKey.PublicKey)
	faucetKey, _ := crypto.GenerateKey()
	tr := Transactor{Backend: client, Key: devKey}
	addrs, err := tr.DeployDev(ctx, DevDeployment{Payee: payee, Faucet: faucetKey, Funds: cents(1_000_000)})
	if err != nil {
		t.Fatalf("deploy: %v", err)
	}
	secret := []byte("geth-dev-customer-ref-secret-32b")
	cc := ChainConfig{RPCURL: url, ChainID: 1337, Contract: addrs.Contract, Token: addrs.Token, Payee: payee,
		KeystoreFile: files[0], Confirmations: 2, FlushInterval: 100 * time.Millisecond, PollInterval: 200 * time.Millisecond,
		CustomerRefSecret: secret, FaucetKey: faucetKey}
	s, err := New(ctx, Config{Test: &cc, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer s.Close()
	if info, _ := s.Chain(settleflow.Test); info.Network != "dev" || info.Operator != addrs.Operator || info.Decimals != 6 {
		t.Errorf("chain info %+v", info)
	}
	// Live on a dev chain is refused.
	if _, err := New(ctx, Config{Live: &ChainConfig{RPCURL: url, ChainID: 1337, Contract: addrs.Contract, KeystoreFile: files[0]}}); err == nil {
		t.Error("live mode accepted geth --dev (chain id 1337)")
	}

	// Each customer is funded from the faucet; one cannot cover its charge.
	chs := []settleflow.Charge{charge("wf_geth_1", 1250), charge("wf_geth_2", 99), charge("wf_geth_3", 100000)}
	refBalance := func(customerID string) *big.Int {
		out, err := client.CallContract(ctx, ethereum.CallMsg{To: &addrs.Contract, Data: settlementABI.PackBalanceOf(CustomerRef(secret, settleflow.Test, customerID))}, nil)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := settlementABI.UnpackBalanceOf(out)
		return v
	}
	ftr := Transactor{Backend: client, Key: faucetKey}
	for _, ch := range chs {
		tx, err := s.Faucet(ctx, settleflow.Test, ch.CustomerID, 200_000)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ftr.Wait(ctx, common.HexToHash(tx)); err != nil {
			t.Fatal(err)
		}
	}
	poor := charge("wf_geth_poor", 300_000)
	chs = append(chs, poor)
	held0 := new(big.Int)
	for _, ch := range chs {
		held0.Add(held0, refBalance(ch.CustomerID))
	}
	if err := s.Submit(ctx, chs); err != nil {
		t.Fatal(err)
	}
	if err := s.Submit(ctx, chs[:1]); err != nil { // a duplicate
		t.Fatal(err)
	}
	st := waitFor(t, s, chs, 90*time.Second, nil, func(x settleflow.SettlementStatus) bool {
		return x.State == settleflow.SettlementConfirmed || x.State == settleflow.SettlementFailed
	})
	for _, x := range st[:3] {
		if x.State != settleflow.SettlementConfirmed || x.Settlement.ChainID != 1337 || x.Settlement.Confirmations < 2 || x.Settlement.BlockNumber == 0 {
			t.Errorf("settlement %s", describe([]settleflow.SettlementStatus{x}))
		}
	}
	if st[3].State != settleflow.SettlementFailed || st[3].Failure.Code != CodeInsufficientFunds {
		t.Errorf("a charge over its customer's balance: %s", describe(st[3:]))
	}
	want := cents(1250 + 99 + 100000)
	held1 := new(big.Int)
	for _, ch := range chs {
		held1.Add(held1, refBalance(ch.CustomerID))
	}
	if got := new(big.Int).Sub(held0, held1); got.Cmp(want) != 0 {
		t.Errorf("customers paid %s, want %s", got, want)
	}
	out, _ := client.CallContract(ctx, ethereum.CallMsg{To: &addrs.Contract, Data: settlementABI.PackPayeeOwed()}, nil)
	if owed, _ := settlementABI.UnpackPayeeOwed(out); owed.Cmp(want) != 0 {
		t.Errorf("payee is owed %s, want %s", owed, want)
	}

	// A partial then a full refund of the first charge; a third is
	// rejected by the contract itself (the database is not asked here).
	rc := func(id string, amount int64) settleflow.RefundCharge {
		return settleflow.RefundCharge{RefundID: id, WorkflowID: chs[0].WorkflowID, Environment: settleflow.Test, CustomerID: chs[0].CustomerID,
			Sequence: chs[0].Sequence, Amount: amount, Currency: "usd"}
	}
	before := refBalance(chs[0].CustomerID)
	rs := []settleflow.RefundCharge{rc("re_geth_1", 250), rc("re_geth_2", 1000)}
	if err := s.SubmitRefunds(ctx, rs); err != nil {
		t.Fatal(err)
	}
	rst := waitForRefunds(t, s, rs, 90*time.Second, nil)
	if rst[0].State != settleflow.SettlementConfirmed || rst[1].State != settleflow.SettlementConfirmed {
		t.Fatalf("refunds: %s", describe(rst))
	}
	if got := new(big.Int).Sub(refBalance(chs[0].CustomerID), before); got.Cmp(cents(1250)) != 0 {
		t.Errorf("refunded %s, want %s", got, cents(1250))
	}
	third := []settleflow.RefundCharge{rc("re_geth_3", 1)}
	if err := s.SubmitRefunds(ctx, third); err != nil {
		t.Fatal(err)
	}
	if rst := waitForRefunds(t, s, third, 90*time.Second, nil); rst[0].State != settleflow.SettlementFailed || rst[0].Failure.Code != settleflow.CodeAmountExceedsRefundable {
		t.Errorf("a refund past the charge: %s", describe(rst))
	}

	// A restarted settler, with nothing in memory, finds them on chain.
	s.Close()
	s2, err := New(ctx, Config{Test: &cc, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	st2, err := s2.Status(ctx, chs)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range st2 {
		if x.State != st[i].State || (x.State == settleflow.SettlementConfirmed && x.Settlement.TxHash != st[i].Settlement.TxHash) {
			t.Errorf("after restart: %s", describe(st2))
		}
	}
	again, err := s2.RefundStatus(ctx, append(rs, third...))
	if err != nil || again[0].State != settleflow.SettlementConfirmed || again[1].State != settleflow.SettlementConfirmed || again[2].State != settleflow.SettlementFailed {
		t.Errorf("refunds after restart: %s, %v", describe(again), err)
	}
}

// gethAccount is a new account on g's chain with gas money and tokens
// (cents) from the faucet, the contract approved for them.
func gethAccount(t *testing.T, g *gethDev, addrs Addresses, faucetKey *ecdsa.PrivateKey, tokens int64) (*ecdsa.PrivateKey, Transactor) {
	t.Helper()
	ctx := context.Background()
	key, _ := crypto.GenerateKey()
	who := crypto.PubkeyToAddress(key.PublicKey)
	faucet := Transactor{Backend: g.client, Key: faucetKey}
	if _, err := faucet.SendValue(ctx, &who, big.NewInt(1e17), nil); err != nil {
		t.Fatal(err)
	}
	if tokens > 0 {
		if _, err := faucet.Send(ctx, &addrs.Token, erc20ABI.PackTransfer(who, cents(tokens))); err != nil {
			t.Fatal(err)
		}
	}
	tr := Transactor{Backend: g.client, Key: key}
	if _, err := tr.Send(ctx, &addrs.Token, erc20ABI.PackApprove(addrs.Contract, cents(tokens+1))); err != nil {
		t.Fatal(err)
	}
	return key, tr
}

// gethGrant is key's OwnerGrant for ref on g's chain, under nonce (zero: a
// fresh one), an hour to run.
func gethGrant(t *testing.T, g *gethDev, contract common.Address, ref [32]byte, key *ecdsa.PrivateKey, nonce string) settleflow.OwnerGrant {
	t.Helper()
	if nonce == "" {
		var n [32]byte
		rand.Read(n[:])
		nonce = hexutil.Encode(n[:])
	}
	h, err := g.client.HeaderByNumber(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	gr := settleflow.OwnerGrant{Owner: crypto.PubkeyToAddress(key.PublicKey).Hex(), Nonce: nonce, Origin: "https://app.example",
		Deadline: time.Unix(int64(h.Time), 0).Add(time.Hour).UTC()}
	gr.Signature = signGrant(t, big.NewInt(1337), contract, ref, key, gr)
	return gr
}

// The owners' money paths of contract version 4 on geth --dev: an owner
// who spends a victim's grant nonce first (changeOwner on its own balance)
// does not stop the victim's grant, sent through the settler's queue; an
// owner change restarts the notice of a withdrawal request already due.
// And a rotated operator key pauses settling on a real node.
func TestGethDevOwners(t *testing.T) {
	t.Parallel() // mostly waiting for geth's blocks: beside the other geth test
	g := startGeth(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	faucetKey, _ := crypto.GenerateKey()
	op := Transactor{Backend: g.client, Key: g.devKey}
	const notice = 4 * time.Second
	addrs, err := op.DeployDev(ctx, DevDeployment{Payee: common.HexToAddress("0x000000000000000000000000000000000000dEaD"), Faucet: faucetKey,
		Funds: cents(1_000_000), Notice: notice})
	if err != nil {
		t.Fatalf("deploy: %v", err)
	}
	secret := []byte("geth-dev-customer-ref-secret-32b")
	cc := ChainConfig{RPCURL: g.url, ChainID: 1337, Contract: addrs.Contract, Token: addrs.Token, KeystoreFile: g.keyfile, Confirmations: 1,
		FlushInterval: 100 * time.Millisecond, PollInterval: 200 * time.Millisecond, CustomerRefSecret: secret, FaucetKey: faucetKey}
	s, err := New(ctx, Config{Test: &cc, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer s.Close()
	ref := func(id string) [32]byte { return CustomerRef(secret, settleflow.Test, id) }
	account := func(id string) (owner common.Address, bal, pending *big.Int, availableAt time.Time) {
		t.Helper()
		out, err := g.client.CallContract(ctx, ethereum.CallMsg{To: &addrs.Contract, Data: settlementABI.PackAccount(ref(id))}, nil)
		if err != nil {
			t.Fatal(err)
		}
		a, err := settlementABI.UnpackAccount(out)
		if err != nil {
			t.Fatal(err)
		}
		return a.Owner, a.Balance, a.Pending, time.Unix(a.AvailableAt.Int64(), 0).UTC()
	}
	// setOwner sends gr through the settler and waits for the owner on chain.
	setOwner := func(id string, gr settleflow.OwnerGrant) {
		t.Helper()
		if _, err := s.SetOwner(ctx, settleflow.Test, id, gr); err != nil {
			t.Fatalf("SetOwner %s: %v", id, err)
		}
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
			if o, _, _, _ := account(id); o == common.HexToAddress(gr.Owner) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s's owner never became %s", id, gr.Owner)
			}
		}
	}
	chainTime := func() time.Time {
		t.Helper()
		h, err := g.client.HeaderByNumber(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		return time.Unix(int64(h.Time), 0).UTC()
	}
	waitChainTime := func(at time.Time) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); chainTime().Before(at.Add(time.Second)); time.Sleep(200 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the chain's clock never reached %s", at)
			}
		}
	}

	// The nonce burn: the attacker owns a balance and moves it to a second
	// address of its own under the victim's grant's nonce, mined first.
	attackerKey, attacker := gethAccount(t, g, addrs, faucetKey, 0)
	setOwner("cus_geth_burner", gethGrant(t, g, addrs.Contract, ref("cus_geth_burner"), attackerKey, ""))
	victimKey, victim := gethAccount(t, g, addrs, faucetKey, 1000)
	vg := gethGrant(t, g, addrs.Contract, ref("cus_geth_victim"), victimKey, "")
	secondKey, _ := crypto.GenerateKey()
	burn := gethGrant(t, g, addrs.Contract, ref("cus_geth_burner"), secondKey, vg.Nonce)
	if _, err := attacker.Send(ctx, &addrs.Contract, packGrant(t, ref("cus_geth_burner"), burn, true)); err != nil {
		t.Fatalf("the attacker's changeOwner under the victim's nonce: %v", err)
	}
	setOwner("cus_geth_victim", vg)

	// A withdrawal request already due, then the owner moves to a second
	// address: the new owner waits a full notice.
	victimAddr := crypto.PubkeyToAddress(victimKey.PublicKey)
	if _, err := victim.Send(ctx, &addrs.Contract, settlementABI.PackDeposit(ref("cus_geth_victim"), victimAddr, cents(1000))); err != nil {
		t.Fatal(err)
	}
	if _, err := victim.Send(ctx, &addrs.Contract, settlementABI.PackRequestWithdrawal(ref("cus_geth_victim"), cents(300))); err != nil {
		t.Fatal(err)
	}
	_, _, _, due := account("cus_geth_victim")
	waitChainTime(due)
	nextKey, next := gethAccount(t, g, addrs, faucetKey, 0)
	if _, err := victim.Send(ctx, &addrs.Contract, packGrant(t, ref("cus_geth_victim"), gethGrant(t, g, addrs.Contract, ref("cus_geth_victim"), nextKey, ""), true)); err != nil {
		t.Fatal(err)
	}
	changedAt := chainTime()
	owner, _, pending, at := account("cus_geth_victim")
	if owner != crypto.PubkeyToAddress(nextKey.PublicKey) || pending.Cmp(cents(300)) != 0 || at.Before(changedAt.Add(notice-2*time.Second)) {
		t.Fatalf("after the owner change: owner %s, pending %s, due %s (changed at %s); want the request kept, due a notice later", owner, pending, at, changedAt)
	}
	if _, err := next.Send(ctx, &addrs.Contract, settlementABI.PackWithdraw(ref("cus_geth_victim"))); err == nil {
		t.Fatal("the new owner withdrew a request at once")
	}
	waitChainTime(at)
	before := balance(t, g.client, addrs.Token, crypto.PubkeyToAddress(nextKey.PublicKey))
	if _, err := next.Send(ctx, &addrs.Contract, settlementABI.PackWithdraw(ref("cus_geth_victim"))); err != nil {
		t.Fatalf("the new owner's withdrawal after the notice: %v", err)
	}
	if got := new(big.Int).Sub(balance(t, g.client, addrs.Token, crypto.PubkeyToAddress(nextKey.PublicKey)), before); got.Cmp(cents(300)) != 0 {
		t.Fatalf("withdrew %s, want %s", got, cents(300))
	}
	if _, bal, _, _ := account("cus_geth_victim"); bal.Cmp(cents(700)) != 0 {
		t.Fatalf("balance %s after withdrawing 300 of 1000", bal)
	}

	// A rotated operator key pauses settling (the charge waits, Health
	// says why) and the operator set back settles it once.
	ch := charge("wf_geth_rotated", 150)
	tx, err := s.Faucet(ctx, settleflow.Test, ch.CustomerID, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := op.Wait(ctx, common.HexToHash(tx)); err != nil {
		t.Fatal(err)
	}
	rotated, _ := crypto.GenerateKey()
	if _, err := op.Send(ctx, &addrs.Contract, settlementABI.PackSetOperator(crypto.PubkeyToAddress(rotated.PublicKey))); err != nil {
		t.Fatal(err)
	}
	if err := s.Submit(ctx, []settleflow.Charge{ch}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); !s.Health()[0].NotOperator; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("Health never reported the rotated key: %+v", s.Health()[0])
		}
	}
	if st, _ := s.Status(ctx, []settleflow.Charge{ch}); st[0].State != settleflow.SettlementPending {
		t.Fatalf("a charge after the operator key's rotation: %s; want pending", describe(st))
	}
	if _, err := op.Send(ctx, &addrs.Contract, settlementABI.PackSetOperator(addrs.Operator)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, []settleflow.Charge{ch}, time.Minute, nil, func(x settleflow.SettlementStatus) bool {
		if x.State == settleflow.SettlementFailed {
			t.Fatalf("the charge failed: %v", x.Failure)
		}
		return x.State == settleflow.SettlementConfirmed
	})
	if h := s.Health()[0]; h.Degraded() {
		t.Errorf("after the operator was set back: %s", h.Problem())
	}
}
