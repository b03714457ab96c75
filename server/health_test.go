package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap/zaptest"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/fundstest"
	"github.com/settleflow/settleflow/storage/sqlite"
	"github.com/settleflow/settleflow/webhook"
)

type movingClock struct{ at atomic.Int64 }

func (c *movingClock) Now() time.Time { return time.Unix(0, c.at.Load()).UTC() }

// Readiness reports the funds follower (issue 37, findings 2 and 8): a
// quarantined event is "degraded" (200, with the count), a view of funds
// older than FundsMaxAge is "behind" (503 on /readyz), and the gauges
// carry both.
func TestReadinessReportsTheFundsFollower(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "settleflow.db"), sqlite.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	hooks, err := webhook.New(ctx, store.DB(), webhook.Config{Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	clock := &movingClock{}
	clock.at.Store(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC).UnixNano())
	fs := fundstest.New()
	fs.Deposit(settleflow.Test, "cus_a", 1000)
	e, err := settleflow.New(settleflow.Options{Store: store, Settler: fs, Products: settleflow.NewProducts(), Notifier: hooks,
		Clock: clock, FundsMaxAge: time.Minute, TestFaucet: -1, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.SyncFunds(ctx, settleflow.Test); err != nil {
		t.Fatal(err)
	}
	h := &health{engine: e, hooks: hooks, maxLag: 30 * time.Second, log: zaptest.NewLogger(t), lease: heldLease(true), now: clock.Now}
	ready := func() (int, healthBody) {
		t.Helper()
		h.mu.Lock()
		h.readAt = time.Time{} // no cached reading
		h.mu.Unlock()
		rec := httptest.NewRecorder()
		h.handler(true).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		var b healthBody
		if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
			t.Fatal(err)
		}
		return rec.Code, b
	}
	if code, b := ready(); code != http.StatusOK || b.Status != "ok" || len(b.Funds) != 1 || b.Funds[0].Stale || b.Funds[0].Quarantined != 0 {
		t.Fatalf("a current follower: %d %+v", code, b)
	}
	// An event that cannot be applied: degraded, still ready.
	from, err := store.FundsCursor(ctx, settleflow.Test)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := store.ApplyFunds(ctx, settleflow.FundsBatch{Environment: settleflow.Test, From: from,
		To: settleflow.FundsCursor{Block: from.Block + 1, Hash: "0xnext"}, UpdatedAt: clock.Now(),
		Events: []settleflow.FundsEvent{{Kind: settleflow.FundsWithdrawalRequested, Ref: "0xbad", TxHash: "0xbad", Invalid: "too large"}}}); err != nil || len(res.Quarantined) != 1 {
		t.Fatalf("quarantine: %+v %v", res, err)
	}
	code, b := ready()
	if code != http.StatusOK || b.Status != "degraded" || b.Funds[0].Quarantined != 1 || !strings.Contains(b.Error, "1 test funds event(s) quarantined") {
		t.Fatalf("a quarantined event: %d %+v", code, b)
	}
	// The follower stops; two minutes pass: behind, not ready.
	clock.at.Add(int64(2 * time.Minute))
	code, b = ready()
	if code != http.StatusServiceUnavailable || b.Status != "behind" || !b.Funds[0].Stale || !strings.Contains(b.Error, "test funds") {
		t.Fatalf("a stale follower: %d %+v", code, b)
	}
	// The gauges.
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(h)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if m.GetGauge() != nil && strings.HasPrefix(mf.GetName(), "settleflow_funds_") {
				got[mf.GetName()] = m.GetGauge().GetValue()
			}
		}
	}
	if got["settleflow_funds_quarantined_events"] != 1 || got["settleflow_funds_stale"] != 1 || got["settleflow_funds_age_seconds"] < 120 {
		t.Fatalf("funds gauges %v", got)
	}
}
