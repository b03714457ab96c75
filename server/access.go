package server

import (
	"crypto/x509"
	"net/http"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/apikey"
	"github.com/settleflow/settleflow/storage"
	"github.com/settleflow/settleflow/webhook"
)

// Addr is the HTTPS listener's address (host:port: the port the system
// chose for port 0), "" before [Server.Start].
func (s *Server) Addr() string { return s.addr(func(a *addrs) string { return a.https }) }

// URL is the API's base URL: https:// and Config.PublicAddr, else the
// HTTPS listener's address with an unspecified host (0.0.0.0, ::) made
// localhost; "" before [Server.Start].
func (s *Server) URL() string {
	return s.addr(func(a *addrs) string { return "https://" + a.public })
}

// addr is what of the started Server's addresses, "" before Start.
func (s *Server) addr(what func(*addrs) string) string {
	if a := s.addrs.Load(); a != nil {
		return what(a)
	}
	return ""
}

// RedirectAddr is the plain-HTTP redirect listener's address, "" before
// [Server.Start] or without Config.RedirectAddr.
func (s *Server) RedirectAddr() string { return s.addr(func(a *addrs) string { return a.redirect }) }

// MetricsAddr is the metrics listener's address, "" before [Server.Start]
// or without Config.MetricsAddr.
func (s *Server) MetricsAddr() string { return s.addr(func(a *addrs) string { return a.metrics }) }

// Handler is what the HTTPS listener serves: the API, GET /healthz and
// /readyz, and the dashboard under /dashboard/ (for a test with
// net/http/httptest, say). Workflows it creates run once [Server.Start]
// has started the engine's stages.
func (s *Server) Handler() http.Handler { return s.handler }

// Engine is the Server's engine, to create and read workflows in process
// (what the API does over HTTPS).
func (s *Server) Engine() *settleflow.Engine { return s.engine }

// Webhooks is the Server's webhook service: endpoints and deliveries.
func (s *Server) Webhooks() *webhook.Service { return s.hooks }

// Keys is the Server's API key manager.
func (s *Server) Keys() *apikey.Manager { return s.keys }

// DB is the Server's database handle (SQLite in DataDir, or Postgres), for
// a package that keeps tables of its own beside the server's (the
// reference server's declared products, package declared/catalog). It is
// closed at Stop.
func (s *Server) DB() *storage.DB { return s.store.DB() }

// CertFile is the PEM file of the certificate served: Config.TLSCert, or
// the self-signed one in DataDir/tls.
func (s *Server) CertFile() string { return s.certFile }

// RootCAs is a pool holding the certificate the Server presents, for a
// client to trust it: the self-signed default's only way to be trusted.
func (s *Server) RootCAs() *x509.CertPool {
	pool := x509.NewCertPool()
	if s.cert.Leaf != nil {
		pool.AddCert(s.cert.Leaf)
	}
	return pool
}

// FirstStartKey is the secret of the test API key New made at the first
// start of the database (also written to Config.Output, once), "" on every
// other start. Keep it as you would any secret.
func (s *Server) FirstStartKey() string { return s.firstKey }
