package server

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap/zaptest"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/storage/sqlite"
	"github.com/settleflow/settleflow/webhook"
)

// A spent relay budget across customers (issue 43, finding 7) is
// "degraded" with a sentence in relayProblems, and /readyz still answers
// 200 (everything else works); the gauges say it, and the refusals are
// counted by scope.
func TestReadinessReportsASpentRelayBudget(t *testing.T) {
	ctx := context.Background()
	sim, err := settlement.NewSimulated(ctx, settlement.SimulatedOptions{Logger: zaptest.NewLogger(t),
		Tuning: settlement.ChainConfig{Relays: settlement.RelayBudget{PerHour: 1, PerWalletHour: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "settleflow.db"), sqlite.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	hooks, err := webhook.New(ctx, store.DB(), webhook.Config{Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	e, err := settleflow.New(settleflow.Options{Store: store, Settler: sim, Products: settleflow.NewProducts(), Notifier: hooks,
		TestFaucet: -1, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.SyncFunds(ctx, settleflow.Test); err != nil {
		t.Fatal(err)
	}
	h := &health{engine: e, hooks: hooks, maxLag: 30 * time.Second, log: zaptest.NewLogger(t), lease: heldLease(true), now: time.Now, settler: sim}
	ready := func() (int, healthBody) {
		t.Helper()
		h.mu.Lock()
		h.readAt = time.Time{}
		h.mu.Unlock()
		rec := httptest.NewRecorder()
		h.handler(true).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		var b healthBody
		if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
			t.Fatal(err)
		}
		return rec.Code, b
	}
	if code, b := ready(); code != http.StatusOK || len(b.RelayProblems) != 0 {
		t.Fatalf("before any relay: %d %+v", code, b)
	}
	// The faucet's wallet holds test tokens: it signs two deposits.
	relay := func(customerID string) error {
		var salt [32]byte
		rand.Read(salt[:])
		a := settlement.DepositAuthorization{From: crypto.PubkeyToAddress(sim.FaucetKey.PublicKey).Hex(), Amount: 100,
			ValidBefore: time.Now().Add(time.Hour).Unix(), Salt: hexutil.Encode(salt[:])}
		raw, err := sim.DepositTypedData(ctx, settleflow.Test, customerID, a)
		if err != nil {
			t.Fatal(err)
		}
		var td apitypes.TypedData
		if err := json.Unmarshal(raw, &td); err != nil {
			t.Fatal(err)
		}
		digest, _, err := apitypes.TypedDataAndHash(td)
		if err != nil {
			t.Fatal(err)
		}
		sig, err := crypto.Sign(digest, sim.FaucetKey)
		if err != nil {
			t.Fatal(err)
		}
		sig[64] += 27
		a.Signature = hexutil.Encode(sig)
		_, err = sim.RelayDeposit(ctx, settleflow.Test, customerID, a)
		return err
	}
	if err := relay("cus_budget_a"); err != nil {
		t.Fatalf("the hour's one relay: %v", err)
	}
	var be *settlement.RelayBudgetError
	if err := relay("cus_budget_b"); err == nil || !errors.As(err, &be) || be.Scope != settlement.RelayScopeOperator {
		t.Fatalf("a second relay this hour: %v; want the budget spent", err)
	}
	code, b := ready()
	if code != http.StatusOK || b.Status != "degraded" || len(b.RelayProblems) != 1 || !strings.Contains(b.RelayProblems[0], "relay budget spent") {
		t.Fatalf("a spent relay budget: %d %+v", code, b)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(h)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if !strings.HasPrefix(mf.GetName(), "settleflow_relay_budget_") {
				continue
			}
			name := mf.GetName()
			for _, l := range m.GetLabel() {
				if l.GetName() == "scope" {
					name += "/" + l.GetValue()
				}
			}
			if m.GetGauge() != nil {
				got[name] = m.GetGauge().GetValue()
			} else if m.GetCounter() != nil {
				got[name] = m.GetCounter().GetValue()
			}
		}
	}
	if got["settleflow_relay_budget_used"] != 1 || got["settleflow_relay_budget_limit"] != 1 || got["settleflow_relay_budget_spent"] != 1 ||
		got["settleflow_relay_budget_refused_total/operator"] != 1 || got["settleflow_relay_budget_refused_total/wallet"] != 0 {
		t.Fatalf("relay budget metrics %v", got)
	}
}
