package server

import (
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/settlement"
)

type fakeSettlerHealth struct {
	mu sync.Mutex
	h  []settlement.ChainHealth
}

func (f *fakeSettlerHealth) Health() []settlement.ChainHealth {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.h
}

type heldLease bool

func (l heldLease) Held() bool { return bool(l) }

// /readyz fails while the settler cannot settle (its node unreachable, its
// operator out of gas money) and /healthz still answers 200; the metrics
// say the same. (The end-to-end test on geth --dev shows it with a node
// that stops answering.)
func TestReadinessFollowsTheSettler(t *testing.T) {
	fs := &fakeSettlerHealth{h: []settlement.ChainHealth{{Environment: settleflow.Test}}}
	h := &health{log: zap.NewNop(), lease: heldLease(true), settler: fs, now: time.Now, maxLag: time.Minute}
	// A fresh reading of an empty backlog: the engine is not asked.
	h.readAt, h.at = time.Now().Add(time.Hour), time.Now()
	srv := withHealth(h, http.NotFoundHandler())
	get := func(path string) (int, healthBody) {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		var b healthBody
		if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
			t.Fatalf("%s: %v: %s", path, err, rec.Body)
		}
		return rec.Code, b
	}
	if code, b := get("/readyz"); code != 200 || b.Status != "ok" {
		t.Fatalf("healthy: %d %+v", code, b)
	}
	op := common.HexToAddress("0x1234")
	fs.mu.Lock()
	fs.h = []settlement.ChainHealth{{Environment: settleflow.Test, GasShort: true, Operator: op, GasNeeded: big.NewInt(3e15), RefundsAwaitingPayee: 2}}
	fs.mu.Unlock()
	code, b := get("/readyz")
	if code != http.StatusServiceUnavailable || b.Status != "degraded" || len(b.SettlementProblems) != 1 ||
		!strings.Contains(b.SettlementProblems[0], op.Hex()) || !strings.Contains(b.SettlementProblems[0], "0.003 ETH") {
		t.Errorf("operator out of gas: /readyz %d %+v", code, b)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Errorf("operator out of gas: /healthz %d, want 200 (alive, not ready)", code)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(h)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if m.GetGauge() != nil {
				got[mf.GetName()] = m.GetGauge().GetValue()
			}
		}
	}
	for name, want := range map[string]float64{"settleflow_settlement_gas_short": 1, "settleflow_settlement_refunds_awaiting_payee": 2,
		"settleflow_settlement_gas_needed_wei": 3e15, "settleflow_settlement_unreachable": 0} {
		if got[name] != want {
			t.Errorf("%s = %v, want %v", name, got[name], want)
		}
	}
	fs.mu.Lock()
	fs.h = []settlement.ChainHealth{{Environment: settleflow.Test, Unreachable: true, FailingSince: time.Now(), LastError: "dial tcp: connection refused"}}
	fs.mu.Unlock()
	if code, b := get("/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(b.Error, "unreachable") {
		t.Errorf("node unreachable: /readyz %d %+v", code, b)
	}
	// The operator's key was rotated: settling pauses, readiness fails
	// naming the operator the contract names, and the gauge says so.
	rotated := common.HexToAddress("0x5678")
	fs.mu.Lock()
	fs.h = []settlement.ChainHealth{{Environment: settleflow.Test, NotOperator: true, Operator: op, ContractOperator: rotated, NotOperatorSince: time.Now()}}
	fs.mu.Unlock()
	if code, b := get("/readyz"); code != http.StatusServiceUnavailable || len(b.SettlementProblems) != 1 ||
		!strings.Contains(b.SettlementProblems[0], rotated.Hex()) || !strings.Contains(b.SettlementProblems[0], "paused") {
		t.Errorf("operator key rotated: /readyz %d %+v", code, b)
	}
	if mfs, err = reg.Gather(); err != nil {
		t.Fatal(err)
	}
	notOp := -1.0
	for _, mf := range mfs {
		if mf.GetName() == "settleflow_settlement_not_operator" {
			notOp = mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	if notOp != 1 {
		t.Errorf("settleflow_settlement_not_operator = %v, want 1", notOp)
	}
	fs.mu.Lock()
	fs.h = []settlement.ChainHealth{{Environment: settleflow.Test, RefundsAwaitingPayee: 3}}
	fs.mu.Unlock()
	if code, b := get("/readyz"); code != 200 || b.Status != "ok" {
		t.Errorf("refunds waiting for the payee only: /readyz %d %+v", code, b)
	}
}
