package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/portal"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/webhook"
)

// Health and backpressure (docs/operating.md, "Health and backpressure"): GET /healthz
// and GET /readyz report each pipeline stage's queue — workflows waiting to
// execute and to settle, events waiting for the notifier, webhook
// deliveries waiting to be sent — with the wait of its oldest due item.
// /healthz answers 200 while the database answers; /readyz answers 503 also
// when a stage is behind (its oldest due item older than Config.ReadyMaxLag), so
// a load balancer sends new work elsewhere until it has caught up. With
// customer funds, they also report the funds follower: "behind" (503 on
// /readyz) while the view of funds is older than the engine's FundsMaxAge,
// "degraded" (200) while balance changes on chain are quarantined. The same
// figures are Prometheus gauges. One reading serves every caller for a
// second, so probes cannot load the database.

// healthTTL is how long one reading of the backlog is served.
const healthTTL = time.Second

type health struct {
	engine *settleflow.Engine
	hooks  *webhook.Service
	maxLag time.Duration
	log    *zap.Logger
	// lease is the settlement lease: whether this instance is the one
	// settling for every instance on the database.
	lease interface{ Held() bool }
	// settler, if the chain reports its condition, degrades readiness
	// while it cannot settle (node unreachable, operator out of gas money).
	settler settlementHealth
	// now is the server's clock, of CheckedAt.
	now func() time.Time

	mu sync.Mutex
	// readAt is when the stages were read, on the monotonic clock (their
	// time to live); at is the same moment on the server's clock.
	readAt time.Time
	at     time.Time
	stages []settleflow.StageBacklog
	funds  []settleflow.FundsHealth
	err    error
}

// settlementHealth is a settler that reports its chains' condition
// (*settlement.Settler does).
type settlementHealth interface {
	Health() []settlement.ChainHealth
}

// relayBudgets is a settler that reports its relay budgets
// (*settlement.Settler does).
type relayBudgets interface {
	RelayBudgets() []settlement.RelayBudgetStatus
}

// healthBody is the JSON of /healthz and /readyz.
type healthBody struct {
	// Status is "ok", "degraded" (balance changes on chain are
	// quarantined: their customers' creates are refused, the others
	// served; or the settler cannot settle now: its node is unreachable
	// or its operator cannot pay for gas, see settlementProblems),
	// "behind" (a stage's oldest due item waited longer than
	// maxLagSeconds, or the view of customer funds is older than its
	// bound) or "unavailable" (the database did not answer).
	Status        string                    `json:"status"`
	CheckedAt     time.Time                 `json:"checkedAt"`
	MaxLagSeconds float64                   `json:"maxLagSeconds"`
	Stages        []settleflow.StageBacklog `json:"stages"`
	// Funds is, per environment paid from customer balances, how current
	// the view of funds is and how many events are quarantined.
	Funds []settleflow.FundsHealth `json:"funds,omitempty"`
	// SettlementSender tells whether this instance holds the settlement
	// lease: of the instances sharing a database, it alone sends charges.
	SettlementSender bool `json:"settlementSender"`
	// SettlementProblems says why the settler cannot settle now, one
	// sentence per problem; charges wait meanwhile, none fails for it.
	SettlementProblems []string `json:"settlementProblems,omitempty"`
	// RelayProblems says, one sentence each, which environment's relay
	// budget across customers is spent this hour: "degraded" (200), the
	// portal's deposits are refused until the next hour, all else works.
	RelayProblems []string `json:"relayProblems,omitempty"`
	Error         string   `json:"error,omitempty"`
}

// reading returns the stages and the funds, read at most once per
// healthTTL.
func (h *health) reading(ctx context.Context) ([]settleflow.StageBacklog, []settleflow.FundsHealth, time.Time, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.readAt.IsZero() && time.Since(h.readAt) < healthTTL {
		return h.stages, h.funds, h.at, h.err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	stages, err := h.engine.Backlog(ctx)
	if err == nil {
		var wh settleflow.StageBacklog
		if wh, err = h.hooks.Backlog(ctx); err == nil {
			stages = append(stages, wh)
		}
	}
	var funds []settleflow.FundsHealth
	if err == nil {
		funds, err = h.engine.FundsHealth(ctx)
	}
	if err != nil {
		h.log.Warn("health: reading the backlog failed", zap.Error(err))
		stages, funds, err = nil, nil, errors.New("the database did not answer")
	}
	h.stages, h.funds, h.err, h.readAt, h.at = stages, funds, err, time.Now(), h.now().UTC()
	return h.stages, h.funds, h.at, h.err
}

func (h *health) read(ctx context.Context) healthBody {
	stages, funds, at, err := h.reading(ctx)
	b := healthBody{Status: "ok", CheckedAt: at, MaxLagSeconds: h.maxLag.Seconds(), Stages: stages, Funds: funds, SettlementSender: h.lease.Held()}
	if err != nil {
		b.Status, b.Error = "unavailable", err.Error()
		return b
	}
	var behind []string
	for _, s := range stages {
		if s.OldestDue > h.maxLag {
			behind = append(behind, fmt.Sprintf("%s (oldest due item waiting %.0f s)", s.Stage, s.OldestDueSeconds))
		}
	}
	var quarantined []string
	for _, f := range funds {
		if f.Stale {
			age := "never current"
			if f.CurrentAt != nil {
				age = fmt.Sprintf("current %.0f s ago", f.AgeSeconds)
			}
			behind = append(behind, fmt.Sprintf("%s funds (%s, more than %.0f s: creates that need funds are refused)", f.Environment, age, f.MaxAgeSeconds))
		}
		if f.Quarantined > 0 {
			quarantined = append(quarantined, fmt.Sprintf("%d %s funds event(s) quarantined (their customers' creates are refused)", f.Quarantined, f.Environment))
		}
	}
	switch {
	case len(behind) > 0:
		b.Status, b.Error = "behind", "behind: "+strings.Join(behind, ", ")
	case len(quarantined) > 0:
		b.Status, b.Error = "degraded", "degraded: "+strings.Join(quarantined, ", ")
	}
	if h.settler != nil {
		for _, ch := range h.settler.Health() {
			if ch.Degraded() {
				b.SettlementProblems = append(b.SettlementProblems, ch.Problem())
			}
		}
		if len(b.SettlementProblems) > 0 && b.Status == "ok" {
			b.Status, b.Error = "degraded", "settlement degraded: "+strings.Join(b.SettlementProblems, "; ")
		}
		if rb, ok := h.settler.(relayBudgets); ok {
			for _, st := range rb.RelayBudgets() {
				if p := st.Problem(); p != "" {
					b.RelayProblems = append(b.RelayProblems, p)
				}
			}
			if len(b.RelayProblems) > 0 && b.Status == "ok" {
				b.Status, b.Error = "degraded", "relays degraded: "+strings.Join(b.RelayProblems, "; ")
			}
		}
	}
	return b
}

// handler serves /healthz (ready false) or /readyz (ready true).
func (h *health) handler(ready bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := h.read(r.Context())
		code := http.StatusOK
		if b.Status == "unavailable" || (ready && (b.Status == "behind" || len(b.SettlementProblems) > 0)) {
			code = http.StatusServiceUnavailable
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(b) //nolint:errcheck // the client went away
	})
}

// withHealth serves GET (and HEAD) /healthz and /readyz, and passes every
// other request to api untouched but for X-Content-Type-Options: nosniff,
// which every answer carries (no mux in front of the API: its own routing
// answers every other path, unclean ones included).
func withHealth(h *health, api http.Handler) http.Handler {
	live, ready := h.handler(false), h.handler(true)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Every answer of the HTTPS listener declares its type for good.
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			switch r.URL.Path {
			case "/healthz":
				live.ServeHTTP(w, r)
				return
			case "/readyz":
				ready.ServeHTTP(w, r)
				return
			}
		}
		api.ServeHTTP(w, r)
	})
}

// withDashboard serves the dashboard under /dashboard/ (and sends
// /dashboard there) and passes every other request to api.
func withDashboard(dash http.Handler, api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case p == "/dashboard":
			http.Redirect(w, r, "/dashboard/", http.StatusMovedPermanently)
		case strings.HasPrefix(p, "/dashboard/"):
			dash.ServeHTTP(w, r)
		default:
			api.ServeHTTP(w, r)
		}
	})
}

// withPortal serves the customer portal under /portal/ (and sends /portal
// there) and passes every other request to next.
func withPortal(p http.Handler, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch path := r.URL.Path; {
		case path == "/portal":
			http.Redirect(w, r, "/portal/", http.StatusMovedPermanently)
		case strings.HasPrefix(path, "/portal/"):
			p.ServeHTTP(w, r)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// portalChain is the chain the portal relays and reads through: the
// settler when it is the shipped one, else none (the portal is then
// read-only).
func portalChain(c settler) portal.Chain {
	if pc, ok := c.(portal.Chain); ok {
		return pc
	}
	return nil
}

// Prometheus: settleflow_stage_depth, settleflow_stage_due and
// settleflow_stage_oldest_due_seconds, labelled by stage.
var (
	stageDepthDesc = prometheus.NewDesc("settleflow_stage_depth",
		"Items in a pipeline stage: waiting, in progress, or waiting to be checked again.", []string{"stage"}, nil)
	stageDueDesc = prometheus.NewDesc("settleflow_stage_due",
		"Items of a pipeline stage whose time has come and that nobody holds: the queue.", []string{"stage"}, nil)
	stageLagDesc = prometheus.NewDesc("settleflow_stage_oldest_due_seconds",
		"How long the oldest due item of a pipeline stage has waited since its time came.", []string{"stage"}, nil)
	leaseDesc = prometheus.NewDesc("settleflow_settlement_lease_held",
		"1 while this instance holds the settlement lease (it sends every instance's charges), else 0.", nil, nil)
	fundsQuarantinedDesc = prometheus.NewDesc("settleflow_funds_quarantined_events",
		"Balance changes on chain the funds follower could not apply and set aside; their customers' creates are refused.", []string{"environment"}, nil)
	fundsAgeDesc = prometheus.NewDesc("settleflow_funds_age_seconds",
		"How long ago the funds follower was last current with the chain (-1: never).", []string{"environment"}, nil)
	fundsStaleDesc = prometheus.NewDesc("settleflow_funds_stale",
		"1 while the view of customer funds is older than its bound (creates that need funds are refused), else 0.", []string{"environment"}, nil)
	unreachableDesc = prometheus.NewDesc("settleflow_settlement_unreachable",
		"1 while the node has not answered the settler's reading of the chain head for longer than a few polls (retried with backoff), else 0.", []string{"environment"}, nil)
	gasShortDesc = prometheus.NewDesc("settleflow_settlement_gas_short",
		"1 while the operator cannot pay for the gas of its next settlement transaction (its charges wait), else 0.", []string{"environment"}, nil)
	gasNeededDesc = prometheus.NewDesc("settleflow_settlement_gas_needed_wei",
		"While the operator cannot pay for gas: the pending batch's gas times its fee cap, in wei; else 0.", []string{"environment"}, nil)
	notOperatorDesc = prometheus.NewDesc("settleflow_settlement_not_operator",
		"1 while the contract names another operator than the settler's key (the key was rotated): settling is paused, nothing fails; else 0.", []string{"environment"}, nil)
	relayUsedDesc = prometheus.NewDesc("settleflow_relay_budget_used",
		"Deposits relayed this clock hour, all customers together (the operator pays their gas).", []string{"environment"}, nil)
	relayLimitDesc = prometheus.NewDesc("settleflow_relay_budget_limit",
		"The relay budget across customers per clock hour (-1: none).", []string{"environment"}, nil)
	relaySpentDesc = prometheus.NewDesc("settleflow_relay_budget_spent",
		"1 while this hour's relay budget across customers is spent (relays are refused until the next hour), else 0.", []string{"environment"}, nil)
	relayWalletsSpentDesc = prometheus.NewDesc("settleflow_relay_budget_wallets_spent",
		"Wallets that used their own relay budget this hour.", []string{"environment"}, nil)
	relayRefusedDesc = prometheus.NewDesc("settleflow_relay_budget_refused_total",
		"Relays refused over the budget since start, by scope (operator: across customers; wallet: one signing wallet's).", []string{"environment", "scope"}, nil)
	payeeWaitDesc = prometheus.NewDesc("settleflow_settlement_refunds_awaiting_payee",
		"Refunds the contract rejected for now because the payee is owed less than they need; they go through once the payee is funded.", []string{"environment"}, nil)
)

// Describe implements prometheus.Collector.
func (h *health) Describe(ch chan<- *prometheus.Desc) {
	ch <- stageDepthDesc
	ch <- stageDueDesc
	ch <- stageLagDesc
	ch <- leaseDesc
	ch <- fundsQuarantinedDesc
	ch <- fundsAgeDesc
	ch <- fundsStaleDesc
	ch <- unreachableDesc
	ch <- gasShortDesc
	ch <- gasNeededDesc
	ch <- notOperatorDesc
	ch <- payeeWaitDesc
	ch <- relayUsedDesc
	ch <- relayLimitDesc
	ch <- relaySpentDesc
	ch <- relayWalletsSpentDesc
	ch <- relayRefusedDesc
}

// Collect implements prometheus.Collector; a failed reading reports nothing.
func (h *health) Collect(ch chan<- prometheus.Metric) {
	held := 0.0
	if h.lease.Held() {
		held = 1
	}
	ch <- prometheus.MustNewConstMetric(leaseDesc, prometheus.GaugeValue, held)
	if h.settler != nil {
		for _, c := range h.settler.Health() {
			env := string(c.Environment)
			ch <- prometheus.MustNewConstMetric(unreachableDesc, prometheus.GaugeValue, b2f(c.Unreachable), env)
			ch <- prometheus.MustNewConstMetric(gasShortDesc, prometheus.GaugeValue, b2f(c.GasShort), env)
			need := 0.0
			if c.GasNeeded != nil {
				need, _ = new(big.Float).SetInt(c.GasNeeded).Float64()
			}
			ch <- prometheus.MustNewConstMetric(gasNeededDesc, prometheus.GaugeValue, need, env)
			ch <- prometheus.MustNewConstMetric(notOperatorDesc, prometheus.GaugeValue, b2f(c.NotOperator), env)
			ch <- prometheus.MustNewConstMetric(payeeWaitDesc, prometheus.GaugeValue, float64(c.RefundsAwaitingPayee), env)
		}
		if rb, ok := h.settler.(relayBudgets); ok {
			for _, st := range rb.RelayBudgets() {
				env := string(st.Environment)
				ch <- prometheus.MustNewConstMetric(relayUsedDesc, prometheus.GaugeValue, float64(st.Used), env)
				ch <- prometheus.MustNewConstMetric(relayLimitDesc, prometheus.GaugeValue, float64(st.Limit), env)
				ch <- prometheus.MustNewConstMetric(relaySpentDesc, prometheus.GaugeValue, b2f(st.Spent), env)
				ch <- prometheus.MustNewConstMetric(relayWalletsSpentDesc, prometheus.GaugeValue, float64(st.WalletsSpent), env)
				for _, scope := range []string{settlement.RelayScopeOperator, settlement.RelayScopeWallet} {
					ch <- prometheus.MustNewConstMetric(relayRefusedDesc, prometheus.CounterValue, float64(st.Refused[scope]), env, scope)
				}
			}
		}
	}
	stages, funds, _, err := h.reading(context.Background())
	if err != nil {
		return
	}
	for _, f := range funds {
		stale := 0.0
		if f.Stale {
			stale = 1
		}
		env := string(f.Environment)
		ch <- prometheus.MustNewConstMetric(fundsQuarantinedDesc, prometheus.GaugeValue, float64(f.Quarantined), env)
		ch <- prometheus.MustNewConstMetric(fundsAgeDesc, prometheus.GaugeValue, f.AgeSeconds, env)
		ch <- prometheus.MustNewConstMetric(fundsStaleDesc, prometheus.GaugeValue, stale, env)
	}
	for _, s := range stages {
		ch <- prometheus.MustNewConstMetric(stageDepthDesc, prometheus.GaugeValue, float64(s.Depth), s.Stage)
		ch <- prometheus.MustNewConstMetric(stageDueDesc, prometheus.GaugeValue, float64(s.Due), s.Stage)
		ch <- prometheus.MustNewConstMetric(stageLagDesc, prometheus.GaugeValue, s.OldestDueSeconds, s.Stage)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
