package settleflow_test

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"math/big"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
	"go.uber.org/zap/zaptest"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/settlement/contracts/bindings"
	"github.com/settleflow/settleflow/wire"
)

// eventLog is a Notifier that keeps what the outbox delivered.
type eventLog struct {
	mu  sync.Mutex
	got []settleflow.Event
}

func (l *eventLog) Notify(_ context.Context, evs []settleflow.Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, evs...)
	return nil
}

// of returns the delivered events of typ.
func (l *eventLog) of(typ settleflow.EventType) []settleflow.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []settleflow.Event
	for _, ev := range l.got {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

// Issue 39: customer.owner_set and customer.withdrawal_requested on the
// simulated chain's contract, on SQLite and Postgres. The operator sets a
// customer's owner with the wallet's signed grant; the wallet puts part of
// the balance under withdrawal notice; the funds follower of a started
// engine announces each once (in the transaction that applies it), the
// outbox delivers it, and an engine restarted on the same database and
// chain, following more blocks, announces neither again.
func TestCustomerEventsFromTheChain(t *testing.T) {
	faucetStores(t, func(t *testing.T, open func() settleflow.Store) {
		ctx := context.Background()
		chain, err := settlement.NewSimulated(ctx, settlement.SimulatedOptions{Logger: zaptest.NewLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { chain.Close() })
		start := func() (*settleflow.Engine, *eventLog) {
			t.Helper()
			log := &eventLog{}
			e, err := settleflow.New(settleflow.Options{Store: open(), Settler: chain, Products: settleflow.NewProducts(), Logger: zaptest.NewLogger(t),
				Notifier: log, FundsPollInterval: 20 * time.Millisecond, PollInterval: 20 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Start(ctx); err != nil {
				t.Fatal(err)
			}
			return e, log
		}
		e, log := start()
		const customer = "cus_events"
		if _, err := e.FundTestCustomer(ctx, customer, 5000); err != nil {
			t.Fatal(err)
		}

		// The owner, set by the operator with the wallet's grant.
		key, _ := crypto.GenerateKey()
		addr := crypto.PubkeyToAddress(key.PublicKey)
		g, err := e.CreateOwnerGrant(ctx, settleflow.OwnerGrantParams{Environment: settleflow.Test, CustomerID: customer, Address: addr.Hex()})
		if err != nil {
			t.Fatal(err)
		}
		var td apitypes.TypedData
		if err := json.Unmarshal(g.TypedData, &td); err != nil {
			t.Fatal(err)
		}
		h, _, err := apitypes.TypedDataAndHash(td)
		if err != nil {
			t.Fatal(err)
		}
		sig, _ := crypto.Sign(h, key)
		sig[64] += 27
		ch, _, err := e.SetOwner(ctx, settleflow.SetOwnerParams{Environment: settleflow.Test, CustomerID: customer,
			Grant: settleflow.OwnerGrant{Owner: g.Address, Nonce: g.Nonce, Origin: g.Origin, Deadline: time.Unix(g.Deadline, 0).UTC(), Signature: hexutil.Encode(sig)}})
		if err != nil {
			t.Fatal(err)
		}
		set := waitEvents(t, chain, log, settleflow.EventCustomerOwnerSet, 1)[0]
		if d := set.Data; d.CustomerID != customer || d.Owner == nil || d.Owner.Address != addr.Hex() || d.Owner.TxHash != ch.TxHash ||
			d.Owner.BlockNumber == 0 || d.Balance == nil || d.Balance.OnChain != 5000 || d.Deposit != nil || d.Withdrawal != nil {
			t.Fatalf("customer.owner_set %+v; want the owner %s set in %s", d, addr.Hex(), ch.TxHash)
		}

		// The owner asks to withdraw 12.34 (gas from the faucet).
		b := chain.Backend.Client()
		faucet := settlement.Transactor{Backend: b, Key: chain.FaucetKey, Mine: chain.Commit}
		if _, err := faucet.SendValue(ctx, &addr, big.NewInt(1e18), nil); err != nil {
			t.Fatal(err)
		}
		ref, err := chain.CustomerRef(settleflow.Test, customer)
		if err != nil {
			t.Fatal(err)
		}
		owner := settlement.Transactor{Backend: b, Key: key, Mine: chain.Commit}
		rcpt, err := owner.Send(ctx, &chain.Addresses.Contract, bindings.NewSettleflowSettlement().PackRequestWithdrawal(common.HexToHash(ref), big.NewInt(1234*10_000)))
		if err != nil {
			t.Fatal(err)
		}
		blk, err := b.HeaderByNumber(ctx, rcpt.BlockNumber)
		if err != nil {
			t.Fatal(err)
		}
		wr := waitEvents(t, chain, log, settleflow.EventCustomerWithdrawalRequested, 1)[0]
		wantAt := time.Unix(int64(blk.Time), 0).Add(settlement.DefaultWithdrawalNotice).UTC()
		if d := wr.Data; d.CustomerID != customer || d.Withdrawal == nil || d.Withdrawal.Amount.Amount != 1234 || d.Withdrawal.TxHash != rcpt.TxHash.Hex() ||
			d.Withdrawal.BlockNumber != rcpt.BlockNumber.Uint64() || d.Withdrawal.AvailableAt == nil || !d.Withdrawal.AvailableAt.Equal(wantAt) ||
			d.Balance == nil || d.Balance.PendingWithdrawal != 1234 || d.Balance.Available != 5000-1234 {
			t.Fatalf("customer.withdrawal_requested %+v (withdrawal %+v); want 1234 in %s, available at %s", d, d.Withdrawal, rcpt.TxHash.Hex(), wantAt)
		}
		// Read back as delivered: the outbox holds exactly these.
		for _, want := range []settleflow.Event{set, wr} {
			got, err := e.FetchEvent(ctx, settleflow.Test, want.ID)
			if err != nil {
				t.Fatal(err)
			}
			a, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			if string(a) != string(w) {
				t.Errorf("read back %s, delivered %s", a, w)
			}
		}
		if err := e.Stop(ctx); err != nil {
			t.Fatal(err)
		}

		// A restart on the same database and chain follows more blocks and
		// announces nothing again.
		e, log = start()
		t.Cleanup(func() { e.Stop(context.Background()) })
		head, err := b.HeaderByNumber(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			chain.Commit()
		}
		followed(t, e, head.Number.Uint64()+1)
		for _, typ := range []settleflow.EventType{settleflow.EventCustomerOwnerSet, settleflow.EventCustomerWithdrawalRequested} {
			pg, err := e.ListEvents(ctx, settleflow.EventListParams{Environment: settleflow.Test, Type: typ, Limit: 100})
			if err != nil || len(pg.Data) != 1 {
				t.Errorf("%s after the restart: %d in the outbox (%v), want 1", typ, len(pg.Data), err)
			}
			if got := log.of(typ); len(got) != 0 {
				t.Errorf("%s delivered again after the restart: %+v", typ, got)
			}
		}
	})
}

// waitEvents mines blocks until the follower announced n events of typ
// (and they were delivered), and returns them; none more may follow.
func waitEvents(t *testing.T, chain *settlement.Simulated, log *eventLog, typ settleflow.EventType, n int) []settleflow.Event {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		got := log.of(typ)
		if len(got) > n {
			t.Fatalf("%d %s events delivered, want %d: %+v", len(got), typ, n, got)
		}
		if len(got) == n {
			ids := make([]string, len(got))
			for i, ev := range got {
				ids[i] = ev.ID
			}
			if u := slices.Compact(slices.Sorted(slices.Values(ids))); len(u) != n {
				t.Fatalf("the same %s event delivered twice: %v", typ, ids)
			}
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s event delivered within 30s (%d of %d)", typ, len(got), n)
		}
		chain.Commit() // the confirmation depth
	}
}

// followed waits until e's funds follower passed block.
func followed(t *testing.T, e *settleflow.Engine, block uint64) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		hs, err := e.FundsHealth(context.Background())
		if err == nil && len(hs) > 0 && hs[0].Block >= block {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the funds follower did not pass block %d within 30s: %+v %v", block, hs, err)
		}
	}
}

// Issue 43: an owner change proposed on chain (the operator's setOwner for
// a balance that has an owner: what a leaked portal link can start) is
// announced (customer.owner_change_proposed, with the proposed owner and
// when it takes effect) and shown by Customer; the owner's cancel is
// announced (customer.owner_change_canceled) and the proposal is gone.
func TestOwnerChangeProposalIsVisible(t *testing.T) {
	faucetStores(t, func(t *testing.T, open func() settleflow.Store) {
		ctx := context.Background()
		chain, err := settlement.NewSimulated(ctx, settlement.SimulatedOptions{Logger: zaptest.NewLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { chain.Close() })
		log := &eventLog{}
		e, err := settleflow.New(settleflow.Options{Store: open(), Settler: chain, Products: settleflow.NewProducts(), Logger: zaptest.NewLogger(t),
			Notifier: log, FundsPollInterval: 20 * time.Millisecond, PollInterval: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Stop(context.Background()) })
		const customer = "cus_proposed"
		if _, err := e.FundTestCustomer(ctx, customer, 5000); err != nil {
			t.Fatal(err)
		}
		setOwner := func(key *ecdsa.PrivateKey) *settleflow.OwnerChange {
			t.Helper()
			g, err := e.CreateOwnerGrant(ctx, settleflow.OwnerGrantParams{Environment: settleflow.Test, CustomerID: customer,
				Address: crypto.PubkeyToAddress(key.PublicKey).Hex()})
			if err != nil {
				t.Fatal(err)
			}
			var td apitypes.TypedData
			if err := json.Unmarshal(g.TypedData, &td); err != nil {
				t.Fatal(err)
			}
			h, _, err := apitypes.TypedDataAndHash(td)
			if err != nil {
				t.Fatal(err)
			}
			sig, _ := crypto.Sign(h, key)
			sig[64] += 27
			ch, _, err := e.SetOwner(ctx, settleflow.SetOwnerParams{Environment: settleflow.Test, CustomerID: customer,
				Grant: settleflow.OwnerGrant{Owner: g.Address, Nonce: g.Nonce, Origin: g.Origin, Deadline: time.Unix(g.Deadline, 0).UTC(), Signature: hexutil.Encode(sig)}})
			if err != nil {
				t.Fatal(err)
			}
			return ch
		}
		ownerKey, _ := crypto.GenerateKey()
		owner := crypto.PubkeyToAddress(ownerKey.PublicKey)
		setOwner(ownerKey)
		waitEvents(t, chain, log, settleflow.EventCustomerOwnerSet, 1)
		c, err := e.Customer(ctx, settleflow.Test, customer)
		if err != nil || c.OwnerChange != nil {
			t.Fatalf("no change proposed yet: %+v %v", c, err)
		}

		// Another address's grant: a proposal, effective after the notice.
		nextKey, _ := crypto.GenerateKey()
		next := crypto.PubkeyToAddress(nextKey.PublicKey)
		ch := setOwner(nextKey)
		if ch.Effective != wire.OwnerEffectiveAfterNotice {
			t.Fatalf("owner change %+v; want after_notice", ch)
		}
		b := chain.Backend.Client()
		rcpt, err := b.TransactionReceipt(ctx, common.HexToHash(ch.TxHash))
		for i := 0; err != nil && i < 100; i++ {
			time.Sleep(50 * time.Millisecond)
			rcpt, err = b.TransactionReceipt(ctx, common.HexToHash(ch.TxHash))
		}
		if err != nil {
			t.Fatal(err)
		}
		blk, err := b.HeaderByNumber(ctx, rcpt.BlockNumber)
		if err != nil {
			t.Fatal(err)
		}
		wantAt := time.Unix(int64(blk.Time), 0).Add(settlement.DefaultWithdrawalNotice).UTC()
		c, err = e.Customer(ctx, settleflow.Test, customer)
		if err != nil || c.OwnerChange == nil || c.OwnerChange.Address != next.Hex() || !c.OwnerChange.EffectiveAt.Equal(wantAt) ||
			c.Owner == nil || !strings.EqualFold(*c.Owner, owner.Hex()) {
			t.Fatalf("customer %+v (%v); want the change to %s at %s shown", c, err, next.Hex(), wantAt)
		}
		pr := waitEvents(t, chain, log, settleflow.EventCustomerOwnerChangeProposed, 1)[0]
		if d := pr.Data; d.CustomerID != customer || d.OwnerChange == nil || d.OwnerChange.Address != next.Hex() || d.OwnerChange.TxHash != ch.TxHash ||
			d.OwnerChange.EffectiveAt == nil || !d.OwnerChange.EffectiveAt.Equal(wantAt) || d.Balance == nil || d.Balance.OnChain != 5000 || d.Owner != nil {
			t.Fatalf("customer.owner_change_proposed %+v (%+v); want %s at %s", d, d.OwnerChange, next.Hex(), wantAt)
		}
		if js, _ := json.Marshal(pr); !strings.Contains(string(js), `"ownerChange":{"address":"`+next.Hex()+`","effectiveAt":"`) {
			t.Fatalf("the webhook body: %s", js)
		}

		// The owner cancels it from its wallet.
		faucet := settlement.Transactor{Backend: b, Key: chain.FaucetKey, Mine: chain.Commit}
		if _, err := faucet.SendValue(ctx, &owner, big.NewInt(1e18), nil); err != nil {
			t.Fatal(err)
		}
		ref, err := chain.CustomerRef(settleflow.Test, customer)
		if err != nil {
			t.Fatal(err)
		}
		own := settlement.Transactor{Backend: b, Key: ownerKey, Mine: chain.Commit}
		crc, err := own.Send(ctx, &chain.Addresses.Contract, bindings.NewSettleflowSettlement().PackCancelOwnerChange(common.HexToHash(ref)))
		if err != nil {
			t.Fatal(err)
		}
		cn := waitEvents(t, chain, log, settleflow.EventCustomerOwnerChangeCanceled, 1)[0]
		if d := cn.Data; d.CustomerID != customer || d.OwnerChange == nil || d.OwnerChange.Address != next.Hex() || d.OwnerChange.TxHash != crc.TxHash.Hex() ||
			d.OwnerChange.EffectiveAt != nil {
			t.Fatalf("customer.owner_change_canceled %+v (%+v)", d, d.OwnerChange)
		}
		if c, err = e.Customer(ctx, settleflow.Test, customer); err != nil || c.OwnerChange != nil {
			t.Fatalf("after the cancel: %+v %v", c, err)
		}
	})
}
