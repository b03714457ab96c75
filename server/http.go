package server

import (
	"math"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/settleflow/settleflow/httpapi"
	"github.com/settleflow/settleflow/ratelimit"
	"github.com/settleflow/settleflow/wire"
)

// authFailureWindows is the per-address budget of failed authentications;
// a negative number (Config.AuthFailuresPerMinute) turns the limit off.
func authFailureWindows(perMinute int) []ratelimit.Window {
	if perMinute <= 0 {
		perMinute = math.MaxInt32
	}
	return []ratelimit.Window{ratelimit.Minute(perMinute)}
}

// publicHTTPS is the host:port the 308 sends clients to: Config.PublicAddr,
// else the HTTPS listener's address, an unspecified host (0.0.0.0, ::)
// becoming localhost. Never the request's Host header, which a client chooses.
func publicHTTPS(configured string, ln net.Addr) string {
	if configured != "" {
		return configured
	}
	host, port, err := net.SplitHostPort(ln.String())
	if err != nil {
		return ln.String()
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
}

// redirectToHTTPS answers every plain-HTTP request with 308 to the same path
// and query on httpsAddr, so the method and body are kept, with the API's
// error envelope as the body. It never reads the body, so it closes the
// connection rather than let net/http drain it.
func redirectToHTTPS(httpsAddr string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.EscapedPath()
		if !strings.HasPrefix(path, "/") {
			path = "/" // "OPTIONS *" and the like
		}
		target := "https://" + httpsAddr + path
		if r.URL.RawQuery != "" {
			target += "?" + r.URL.RawQuery
		}
		w.Header().Set("Location", target)
		w.Header().Set("Connection", "close")
		httpapi.WriteError(w, r, &httpapi.Error{Status: http.StatusPermanentRedirect, Type: httpapi.TypeInvalidRequest,
			Code: wire.CodeHTTPSRequired, Message: "Use HTTPS: " + target})
	})
}

// instrument counts requests and their latency for Prometheus. Every label
// takes a value from a closed set, so that no client can add series: known
// methods (others are "other"), the API's route patterns (any other path is
// "other") and the status codes the server writes.
func instrument(reg *prometheus.Registry, next http.Handler) http.Handler {
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "settleflow_http_requests_total", Help: "HTTP requests by method, route and status code.",
	}, []string{"method", "route", "code"})
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "settleflow_http_request_duration_seconds", Help: "HTTP request latency by method and route.", Buckets: prometheus.DefBuckets,
	}, []string{"method", "route"})
	reg.MustRegister(requests, latency)
	opts := []promhttp.Option{
		promhttp.WithLabelFromRequest("method", methodLabel),
		promhttp.WithLabelFromRequest("route", routeLabel),
	}
	return promhttp.InstrumentHandlerCounter(requests, promhttp.InstrumentHandlerDuration(latency, next, opts...), opts...)
}

// methodLabel is the method as sent if it is one the API could answer, else
// "other". (promhttp's own method label calls the rest "unknown" and
// lower-cases the known ones; this keeps the values the metric had.)
func methodLabel(r *http.Request) string {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return r.Method
	}
	return "other"
}

// routeLabel is the API route pattern (or the x402 handler's) the path
// matches, else "other".
func routeLabel(r *http.Request) string {
	switch p := r.URL.Path; {
	case p == "/v1/workflows", p == "/v1/quotes", p == "/v1/products", p == "/v1/events", p == "/v1/refunds", p == "/v1/margins", p == "/v1/openapi.json",
		p == "/v1/tasks/claim", p == "/x402/workflows":
		return p
	case oneSegment(p, "/x402/workflows/", ""):
		return "/x402/workflows/{id}"
	case oneSegment(p, "/v1/tasks/", "/heartbeat"):
		return "/v1/tasks/{id}/heartbeat"
	case oneSegment(p, "/v1/tasks/", "/complete"):
		return "/v1/tasks/{id}/complete"
	case oneSegment(p, "/v1/tasks/", "/fail"):
		return "/v1/tasks/{id}/fail"
	case oneSegment(p, "/v1/workflows/", "/cancel"):
		return "/v1/workflows/{id}/cancel"
	case oneSegment(p, "/v1/workflows/", "/refunds"):
		return "/v1/workflows/{id}/refunds"
	case oneSegment(p, "/v1/test_helpers/customers/", "/fund"):
		return "/v1/test_helpers/customers/{customerId}/fund"
	case oneSegment(p, "/v1/events/", ""):
		return "/v1/events/{id}"
	case oneSegment(p, "/v1/workflows/", ""):
		return "/v1/workflows/{id}"
	case oneSegment(p, "/v1/products/", ""):
		return "/v1/products/{name}"
	case oneSegment(p, "/v1/refunds/", ""):
		return "/v1/refunds/{id}"
	case oneSegment(p, "/v1/customers/", "/owner_grants"):
		return "/v1/customers/{customerId}/owner_grants"
	case oneSegment(p, "/v1/customers/", "/owner"):
		return "/v1/customers/{customerId}/owner"
	case oneSegment(p, "/v1/customers/", "/portal_sessions"):
		return "/v1/customers/{customerId}/portal_sessions"
	case oneSegment(p, "/v1/customers/", ""):
		return "/v1/customers/{customerId}"
	}
	return "other"
}

// oneSegment reports whether p is prefix, one non-empty path segment, then
// suffix.
func oneSegment(p, prefix, suffix string) bool {
	if !strings.HasPrefix(p, prefix) || !strings.HasSuffix(p, suffix) || len(p) <= len(prefix)+len(suffix) {
		return false
	}
	return !strings.Contains(p[len(prefix):len(p)-len(suffix)], "/")
}

// metricsHandler serves the registry's metrics at GET /metrics.
func metricsHandler(reg *prometheus.Registry) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	return mux
}
