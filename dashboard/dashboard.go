// Package dashboard is settleflow's operator dashboard: server-rendered
// pages (html/template, assets embedded with go:embed, one small script) to
// manage API keys and webhook endpoints, follow workflows (their pricing,
// charge against the quote, cost by category and success criteria's trace)
// and their deliveries, look up customers' balances and deposit instructions, refund
// Settled workflows (reviewed, then confirmed under an idempotency key), and
// see an overview of charges and margins, one environment (test or live) at
// a time. The reference server serves it under
// /dashboard/ on its HTTPS listener; an embedding application mounts
// New(...) the same way.
//
// Sign-in is by one-time link: [Handler.SignInLink] issues one (the
// reference server prints one at its first start, and `server dashboard
// link` prints a fresh one); it works once, within 15 minutes, and opens a
// server-side session of 12 hours. Links and sessions are stored as SHA-256
// hashes only. The session cookie is HttpOnly, Secure and SameSite=Strict;
// every state-changing request carries the session's CSRF token, compared in
// constant time; every page is sent with a strict Content-Security-Policy
// (no inline script or style), X-Frame-Options: DENY and no caching. A
// secret (a new API key, a webhook signing secret) is shown in the one
// answer that created it and never again.
//
// The overview scans the workflows of the last 14 days of one environment
// on each visit (Engine.All): cheap for thousands, slow for millions.
package dashboard

import (
	"context"
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"go.uber.org/zap"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/apikey"
	"github.com/settleflow/settleflow/internal/sessiontoken"
	"github.com/settleflow/settleflow/storage"
	"github.com/settleflow/settleflow/webhook"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

//go:embed assets
var assets embed.FS

// Lifetimes of sign-in links and sessions.
const (
	LinkTTL    = 15 * time.Minute
	SessionTTL = 12 * time.Hour
)

// CookieName is the session cookie's name.
const CookieName = "settleflow_session"

// Options configure the dashboard. Engine, Keys, Webhooks and DB are
// required.
type Options struct {
	Engine   *settleflow.Engine
	Keys     *apikey.Manager
	Webhooks *webhook.Service
	// DB is the database's handle (the Store's DB()): the sign-in links
	// and sessions live there, in tables prefixed dashboard_.
	DB *storage.DB
	// Prefix is where the dashboard is mounted, with slashes at both ends;
	// default "/dashboard/".
	Prefix string
	// Explorers are block explorer URL prefixes per environment, to which a
	// transaction hash is appended ("https://sepolia.etherscan.io/tx/").
	Explorers map[settleflow.Environment]string
	Clock     settleflow.Clock
	Logger    *zap.Logger
	// CustomerChain, optional, reads what the settlement contract holds for
	// a customer now (the withdrawal under notice, an owner change
	// proposed) for the customer's page.
	CustomerChain func(ctx context.Context, env settleflow.Environment, customerID string) (*CustomerOnChain, error)
	// Portal, optional, is the customer portal: the customer's page shows
	// its activity and a button that opens a read-only preview of it.
	Portal Portal
}

// Handler serves the dashboard.
type Handler struct {
	opts  Options
	mux   *http.ServeMux
	pages map[string]*template.Template
	log   *zap.Logger
}

// New returns the dashboard after creating or upgrading its tables.
func New(ctx context.Context, opts Options) (*Handler, error) {
	switch {
	case opts.Engine == nil, opts.Keys == nil, opts.Webhooks == nil, opts.DB == nil:
		return nil, errors.New("dashboard: Options.Engine, Keys, Webhooks and DB are required")
	}
	if opts.Prefix == "" {
		opts.Prefix = "/dashboard/"
	}
	if !strings.HasPrefix(opts.Prefix, "/") || !strings.HasSuffix(opts.Prefix, "/") {
		return nil, fmt.Errorf("dashboard: Prefix %q must start and end with a slash", opts.Prefix)
	}
	if opts.Clock == nil {
		opts.Clock = settleflow.SystemClock
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if err := migrate(ctx, opts.DB); err != nil {
		return nil, err
	}
	h := &Handler{opts: opts, log: opts.Logger}
	var err error
	if h.pages, err = parsePages(); err != nil {
		return nil, err
	}
	h.routes()
	return h, nil
}

func (h *Handler) now() time.Time { return h.opts.Clock.Now().UTC() }

// ServeHTTP implements http.Handler: every answer carries the security
// headers.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; "+
		"form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-store")
	h.mux.ServeHTTP(w, r)
}

// token returns a random token and its SHA-256 in hex.
func token() (string, string, error) { return sessiontoken.New() }

// hashOf is what is stored of a token.
func hashOf(t string) string { return sessiontoken.Hash(t) }

// SignInLink issues a one-time sign-in link under baseURL (the server's
// public https://host:port): it works once, within LinkTTL.
func (h *Handler) SignInLink(ctx context.Context, baseURL string) (string, error) {
	return issueLink(ctx, h.opts.DB, h.now(), baseURL, h.opts.Prefix)
}

// SignInLink issues a one-time sign-in link for a dashboard mounted at
// prefix ("" for "/dashboard/") on the database db, without a running
// dashboard: what `server dashboard link` does beside a running server.
func SignInLink(ctx context.Context, db *storage.DB, baseURL, prefix string) (string, error) {
	if prefix == "" {
		prefix = "/dashboard/"
	}
	if err := migrate(ctx, db); err != nil {
		return "", err
	}
	return issueLink(ctx, db, time.Now().UTC(), baseURL, prefix)
}

func migrate(ctx context.Context, db *storage.DB) error {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return err
	}
	if err := db.Migrate(ctx, storage.Migrations{Table: "dashboard_migrations", Files: sub}); err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	return nil
}

func issueLink(ctx context.Context, db *storage.DB, now time.Time, baseURL, prefix string) (string, error) {
	t, hash, err := token()
	if err != nil {
		return "", err
	}
	if err := db.Write(ctx, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewRaw("INSERT INTO dashboard_links (token_hash, created_at, expires_at) VALUES (?, ?, ?)",
			hash, storage.Micros(now), storage.Micros(now.Add(LinkTTL))).Exec(ctx)
		return err
	}); err != nil {
		return "", fmt.Errorf("dashboard: sign-in link: %w", err)
	}
	return strings.TrimSuffix(baseURL, "/") + prefix + "signin?token=" + t, nil
}

// session is a signed-in operator's session. Its CSRF token is derived
// from the session id (which only the cookie holds), so nothing about it is
// stored.
type session struct {
	idHash string
	csrf   string
	env    settleflow.Environment
}

// csrfOf is the CSRF token of the session whose cookie holds id.
func csrfOf(id string) string { return hashOf("csrf\x00" + id) }

var errNoSession = errors.New("dashboard: not signed in")

// session reads the request's session, nil if there is none valid.
func (h *Handler) session(r *http.Request) (*session, error) {
	c, err := r.Cookie(CookieName)
	if err != nil || c.Value == "" {
		return nil, errNoSession
	}
	var env string
	idHash := hashOf(c.Value)
	err = h.opts.DB.Bun().NewRaw("SELECT environment FROM dashboard_sessions WHERE id_hash = ? AND expires_at > ?",
		idHash, storage.Micros(h.now())).Scan(r.Context(), &env)
	if err != nil {
		return nil, errNoSession
	}
	return &session{idHash: idHash, csrf: csrfOf(c.Value), env: settleflow.Environment(env)}, nil
}

// consumeLink marks the link of token used and opens a session, in one
// transaction: a link opens at most one session.
func (h *Handler) consumeLink(ctx context.Context, tok string) (cookie string, err error) {
	id, idHash, err := token()
	if err != nil {
		return "", err
	}
	now := h.now()
	err = h.opts.DB.Write(ctx, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewRaw("UPDATE dashboard_links SET used_at = ? WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?",
			storage.Micros(now), hashOf(tok), storage.Micros(now)).Exec(ctx)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return errBadLink
		}
		if _, err = tx.NewRaw("INSERT INTO dashboard_sessions (id_hash, environment, created_at, expires_at) VALUES (?, ?, ?, ?)",
			idHash, string(settleflow.Test), storage.Micros(now), storage.Micros(now.Add(SessionTTL))).Exec(ctx); err != nil {
			return err
		}
		// What has ended is forgotten: expired links, used ones past their
		// expiry, and ended sessions.
		if _, err := tx.NewRaw("DELETE FROM dashboard_links WHERE expires_at <= ?", storage.Micros(now)).Exec(ctx); err != nil {
			return err
		}
		_, err = tx.NewRaw("DELETE FROM dashboard_sessions WHERE expires_at <= ?", storage.Micros(now)).Exec(ctx)
		return err
	})
	return id, err
}

var errBadLink = errors.New("dashboard: this sign-in link has expired or was used already")

// setEnv switches the session to env.
func (h *Handler) setEnv(ctx context.Context, s *session, env settleflow.Environment) error {
	return h.opts.DB.Write(ctx, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewRaw("UPDATE dashboard_sessions SET environment = ? WHERE id_hash = ?", string(env), s.idHash).Exec(ctx)
		return err
	})
}

func (h *Handler) endSession(ctx context.Context, s *session) error {
	return h.opts.DB.Write(ctx, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewRaw("DELETE FROM dashboard_sessions WHERE id_hash = ?", s.idHash).Exec(ctx)
		return err
	})
}

// checkCSRF compares the form's token with the session's, in constant time.
func (s *session) checkCSRF(r *http.Request) bool {
	got := r.PostFormValue("csrf")
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.csrf)) == 1
}

func (h *Handler) setCookie(w http.ResponseWriter, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: value, Path: h.opts.Prefix, MaxAge: maxAge,
		HttpOnly: true, Secure: true, SameSite: http.SameSiteStrictMode})
}
