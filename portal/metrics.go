package portal

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the portal's Prometheus series: what relaying costs the
// operator, and what it refused.
type metrics struct {
	relays   *prometheus.CounterVec
	gasUsed  *prometheus.CounterVec
	feeWei   *prometheus.CounterVec
	refused  *prometheus.CounterVec
	sessions *prometheus.CounterVec
}

func newMetrics() *metrics {
	return &metrics{
		relays: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "settleflow_portal_relays_total",
			Help: "Deposits the portal relayed (the operator sent depositWithAuthorization), by environment."}, []string{"env"}),
		gasUsed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "settleflow_portal_relay_gas_used_total",
			Help: "Gas used by the deposits the portal relayed, once mined, by environment."}, []string{"env"}),
		feeWei: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "settleflow_portal_relay_fee_wei_total",
			Help: "What the operator paid for the deposits the portal relayed (gas used × effective gas price), in wei, by environment."}, []string{"env"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "settleflow_portal_refused_total",
			Help: "Portal requests refused, by environment and reason (relay_limit, relay_budget, below_minimum, signature, link)."}, []string{"env", "reason"}),
		sessions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "settleflow_portal_sessions_total",
			Help: "Portal sessions opened from a link, by environment."}, []string{"env"}),
	}
}

// Collectors are the portal's Prometheus collectors, for the server's
// registry.
func (h *Handler) Collectors() []prometheus.Collector {
	m := h.metrics
	return []prometheus.Collector{m.relays, m.gasUsed, m.feeWei, m.refused, m.sessions}
}
