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
	// ownerChanges counts the setOwner transactions the portal sent (the
	// operator pays them); ownerGas and ownerFee what they cost once mined.
	ownerChanges *prometheus.CounterVec
	ownerGas     *prometheus.CounterVec
	ownerFee     *prometheus.CounterVec
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
			Help: "Portal requests refused, by environment and reason (relay_limit, relay_budget, below_minimum, signature, link, owner_change_pending, owner_change_limit, cross_site, node_limit)."}, []string{"env", "reason"}),
		sessions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "settleflow_portal_sessions_total",
			Help: "Portal sessions opened from a link, by environment."}, []string{"env"}),
		ownerChanges: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "settleflow_portal_owner_changes_total",
			Help: "Owner changes the portal sent (the operator sent setOwner for a connect), by environment and effect (now, after_notice)."}, []string{"env", "effective"}),
		ownerGas: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "settleflow_portal_owner_change_gas_used_total",
			Help: "Gas used by the owner changes the portal sent, once mined, by environment."}, []string{"env"}),
		ownerFee: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "settleflow_portal_owner_change_fee_wei_total",
			Help: "What the operator paid for the owner changes the portal sent, in wei, by environment."}, []string{"env"}),
	}
}

// Collectors are the portal's Prometheus collectors, for the server's
// registry.
func (h *Handler) Collectors() []prometheus.Collector {
	m := h.metrics
	return []prometheus.Collector{m.relays, m.gasUsed, m.feeWei, m.refused, m.sessions, m.ownerChanges, m.ownerGas, m.ownerFee}
}
