// Package portal is settleflow's customer portal: server-rendered pages
// (html/template, assets embedded, a strict Content-Security-Policy, no
// third-party script and one first-party script that talks to the
// customer's wallet through EIP-1193 window.ethereum) where a customer of
// the operator sees its balance and statement, exports it as CSV, proves
// control of a wallet address that then owns its balance on chain
// (connect), deposits with one signature that the server relays (the
// operator pays the gas) and requests, cancels and completes withdrawals
// from its own wallet.
//
// The operator's application asks for a one-time link for one customer
// (POST /v1/customers/{customerId}/portal_sessions, or
// [Handler.CreateSession]); the link works once, before it expires (15
// minutes by default), and opens a session of [SessionTTL] scoped to that
// customer and environment, held in a cookie that is HttpOnly, Secure and
// SameSite=Strict. Links and sessions are stored as SHA-256 hashes only and
// compared in constant time. The reference server serves the portal under
// /portal/ on its HTTPS listener; an embedding application mounts New(...)
// the same way (docs/portal.md).
package portal

import (
	"context"
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"go.uber.org/zap"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/internal/sessiontoken"
	"github.com/settleflow/settleflow/ratelimit"
	"github.com/settleflow/settleflow/storage"
	"github.com/settleflow/settleflow/wire"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

//go:embed assets
var assets embed.FS

// Lifetimes of links and sessions.
const (
	// DefaultLinkTTL is how long a link works when its creator names no
	// expiry.
	DefaultLinkTTL = 15 * time.Minute
	// MinLinkTTL and MaxLinkTTL bound a link's lifetime.
	MinLinkTTL = time.Minute
	MaxLinkTTL = 24 * time.Hour
	// SessionTTL is how long the session a link opens lasts.
	SessionTTL = time.Hour
)

// CookieName is the portal session cookie's name.
const CookieName = "settleflow_portal"

// Defaults of the relay's limits.
const (
	// DefaultMinDeposit is the smallest deposit the portal relays: 1.00.
	DefaultMinDeposit int64 = 100
	// DefaultRelaysPerHour is how many deposits the portal relays for one
	// customer in one clock hour.
	DefaultRelaysPerHour = 5
	// DefaultNodeCallsPerMinute is how many requests that reach the chain
	// one customer's pages may make in a minute: the page polls its status
	// every 1.5 s (40 a minute), with room for two tabs and the actions.
	DefaultNodeCallsPerMinute = 120
)

// Options configure the portal. Engine, DB and BaseURL are required.
type Options struct {
	Engine *settleflow.Engine
	// DB is the database's handle (the Store's DB()): links, sessions,
	// connect nonces and relayed deposits live there, in tables prefixed
	// portal_.
	DB *storage.DB
	// Chain relays deposits and builds the wallet's calls; nil leaves the
	// portal read-only (balance and statement).
	Chain Chain
	// BaseURL returns the server's public https://host[:port]: links are
	// made under it and its origin is the one a connect signature must
	// name.
	BaseURL func() string
	// Prefix is where the portal is mounted, with slashes at both ends;
	// default "/portal/".
	Prefix string
	// Explorers are block explorer URL prefixes per environment, to which a
	// transaction hash is appended ("https://sepolia.etherscan.io/tx/").
	Explorers map[settleflow.Environment]string
	// MinDeposit is the smallest deposit relayed, in cents (default
	// DefaultMinDeposit); RelaysPerHour how many one customer may have
	// relayed per clock hour (default DefaultRelaysPerHour).
	MinDeposit    int64
	RelaysPerHour int
	// OwnerChangesPerDay is how many owner changes (a connect that sends
	// the operator's setOwner) the portal sends for one customer in one
	// UTC day (default DefaultOwnerChangesPerDay); besides, a connect
	// while a change is in flight or proposed sends nothing.
	OwnerChangesPerDay int
	// NodeCallsPerMinute bounds the requests of one customer that read or
	// write the chain (the account page, status polls, deposit prepare and
	// relay, connect, withdrawal and owner calls), per minute (default
	// DefaultNodeCallsPerMinute), counted by Limiter (default an
	// in-process ratelimit.Memory).
	NodeCallsPerMinute int
	Limiter            ratelimit.Limiter
	// OperatorName is what the page's header names: the operator's
	// service (default "Your account"). OperatorLogo, optional, is the
	// logo shown beside it: a path on this server ("/static/logo.svg") or
	// a data:image/ URL (the page's Content-Security-Policy allows only
	// these).
	OperatorName string
	OperatorLogo string
	Clock        settleflow.Clock
	Logger       *zap.Logger
}

// Handler serves the portal.
type Handler struct {
	opts    Options
	mux     *http.ServeMux
	pages   map[string]*template.Template
	log     *zap.Logger
	metrics *metrics
}

// New returns the portal after creating or upgrading its tables.
func New(ctx context.Context, opts Options) (*Handler, error) {
	if opts.Engine == nil || opts.DB == nil || opts.BaseURL == nil {
		return nil, errors.New("portal: Options.Engine, DB and BaseURL are required")
	}
	if opts.Prefix == "" {
		opts.Prefix = "/portal/"
	}
	if !strings.HasPrefix(opts.Prefix, "/") || !strings.HasSuffix(opts.Prefix, "/") {
		return nil, fmt.Errorf("portal: Prefix %q must start and end with a slash", opts.Prefix)
	}
	if opts.Clock == nil {
		opts.Clock = settleflow.SystemClock
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.MinDeposit == 0 {
		opts.MinDeposit = DefaultMinDeposit
	}
	if opts.RelaysPerHour == 0 {
		opts.RelaysPerHour = DefaultRelaysPerHour
	}
	if opts.OwnerChangesPerDay == 0 {
		opts.OwnerChangesPerDay = DefaultOwnerChangesPerDay
	}
	if opts.NodeCallsPerMinute == 0 {
		opts.NodeCallsPerMinute = DefaultNodeCallsPerMinute
	}
	if opts.Limiter == nil {
		opts.Limiter = ratelimit.NewMemory()
	}
	if opts.OperatorName == "" {
		opts.OperatorName = "Your account"
	}
	if l := opts.OperatorLogo; l != "" && !(strings.HasPrefix(l, "/") && !strings.HasPrefix(l, "//")) && !strings.HasPrefix(l, "data:image/") {
		return nil, fmt.Errorf("portal: OperatorLogo %q must be a path on this server or a data:image/ URL", l)
	}
	if opts.MinDeposit < 1 || opts.RelaysPerHour < 0 || opts.OwnerChangesPerDay < 0 || opts.NodeCallsPerMinute < 0 {
		return nil, errors.New("portal: MinDeposit must be at least 1 cent, and RelaysPerHour, OwnerChangesPerDay and NodeCallsPerMinute not negative")
	}
	if err := migrate(ctx, opts.DB); err != nil {
		return nil, err
	}
	h := &Handler{opts: opts, log: opts.Logger, metrics: newMetrics()}
	var err error
	if h.pages, err = parsePages(); err != nil {
		return nil, err
	}
	h.routes()
	return h, nil
}

func migrate(ctx context.Context, db *storage.DB) error {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return err
	}
	if err := db.Migrate(ctx, storage.Migrations{Table: "portal_migrations", Files: sub}); err != nil {
		return fmt.Errorf("portal: %w", err)
	}
	return nil
}

func (h *Handler) now() time.Time { return h.opts.Clock.Now().UTC() }

// origin is the portal's origin (scheme://host[:port]), as a browser sends
// it in an Origin header and as a connect signature must name it.
func (h *Handler) origin() string {
	u, err := url.Parse(h.opts.BaseURL())
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// ServeHTTP implements http.Handler: every answer carries the security
// headers. The one script is first-party; connect-src 'self' keeps it from
// talking to anything but this server (the wallet is reached through
// window.ethereum, inside the browser).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-store")
	if r.TLS != nil {
		// Served over TLS: the browser keeps to https for a year. (Behind
		// a proxy that ends TLS, the proxy sets it.)
		hd.Set("Strict-Transport-Security", "max-age=31536000")
	}
	h.mux.ServeHTTP(w, r)
}

// token returns a random token and its SHA-256 in hex.
func token() (string, string, error) { return sessiontoken.New() }

// hashOf is what is stored of a token.
func hashOf(t string) string { return sessiontoken.Hash(t) }

// SessionParams ask for a portal link.
type SessionParams struct {
	Environment settleflow.Environment
	CustomerID  string
	// TTL is how long the link works; 0 is DefaultLinkTTL.
	TTL time.Duration
	// Preview opens a read-only session: the operator looking at what its
	// customer sees (no connect, deposit or withdrawal).
	Preview bool
}

// ErrBadTTL: a link lifetime outside [MinLinkTTL, MaxLinkTTL].
var ErrBadTTL = fmt.Errorf("portal: a link's lifetime must be %s to %s", MinLinkTTL, MaxLinkTTL)

// CreateSession issues a one-time link that opens a portal session for the
// customer: the answer of POST /v1/customers/{customerId}/portal_sessions.
// The link is in the answer only; the server keeps its hash.
//
// Errors: an *settleflow.InvalidError naming customerId; ErrBadTTL;
// settleflow.ErrRefundsNotSupported where the environment's charges are
// not paid from customer balances.
func (h *Handler) CreateSession(ctx context.Context, p SessionParams) (*wire.PortalSession, error) {
	if !p.Environment.Valid() {
		return nil, fmt.Errorf("portal: environment %q is neither test nor live", p.Environment)
	}
	if p.TTL == 0 {
		p.TTL = DefaultLinkTTL
	}
	if p.TTL < MinLinkTTL || p.TTL > MaxLinkTTL {
		return nil, ErrBadTTL
	}
	// The customer id's form and whether the environment has customer
	// balances, as GET /v1/customers checks them.
	c, err := h.opts.Engine.Customer(ctx, p.Environment, p.CustomerID)
	if err != nil {
		return nil, err
	}
	if c.Deposit == nil {
		return nil, fmt.Errorf("%w: the customer portal shows customer balances, which %s mode does not have", settleflow.ErrRefundsNotSupported, p.Environment)
	}
	t, hash, err := token()
	if err != nil {
		return nil, err
	}
	now := h.now()
	id := ids.New(ids.Portal, now)
	expires := now.Add(p.TTL).Truncate(time.Microsecond)
	if err := h.opts.DB.Write(ctx, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewRaw("INSERT INTO portal_links (token_hash, id, environment, customer_id, preview, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
			hash, id, string(p.Environment), p.CustomerID, boolInt(p.Preview), storage.Micros(now), storage.Micros(expires)).Exec(ctx)
		return err
	}); err != nil {
		return nil, fmt.Errorf("portal: link: %w", err)
	}
	h.log.Info("portal link issued", zap.String("id", id), zap.String("env", string(p.Environment)),
		zap.String("customer", p.CustomerID), zap.Bool("preview", p.Preview))
	return &wire.PortalSession{Object: "portal_session", ID: id, CustomerID: p.CustomerID, Livemode: p.Environment.Livemode(),
		URL: strings.TrimSuffix(h.opts.BaseURL(), "/") + h.opts.Prefix + "signin?token=" + t, ExpiresAt: expires}, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// session is a signed-in customer's session. Its CSRF token is derived
// from the session id, which only the cookie holds.
type session struct {
	idHash     string
	csrf       string
	env        settleflow.Environment
	customerID string
	preview    bool
}

func csrfOf(id string) string { return hashOf("csrf\x00" + id) }

var errNoSession = errors.New("portal: no session")

// session reads the request's session. The cookie's hash is the key of
// the lookup: nothing compares the secret itself outside the database's
// index, and what is compared is a hash of it.
func (h *Handler) session(r *http.Request) (*session, error) {
	c, err := r.Cookie(CookieName)
	if err != nil || c.Value == "" || len(c.Value) > 64 {
		return nil, errNoSession
	}
	var row struct {
		Environment string `bun:"environment"`
		CustomerID  string `bun:"customer_id"`
		Preview     int    `bun:"preview"`
	}
	idHash := hashOf(c.Value)
	err = h.opts.DB.Bun().NewRaw("SELECT environment, customer_id, preview FROM portal_sessions WHERE id_hash = ? AND expires_at > ?",
		idHash, storage.Micros(h.now())).Scan(r.Context(), &row)
	if err != nil {
		return nil, errNoSession
	}
	return &session{idHash: idHash, csrf: csrfOf(c.Value), env: settleflow.Environment(row.Environment),
		customerID: row.CustomerID, preview: row.Preview == 1}, nil
}

var errBadLink = errors.New("portal: this link has expired or was used already")

// consumeLink marks the link of tok used and opens a session for its
// customer, in one transaction: a link opens at most one session.
func (h *Handler) consumeLink(ctx context.Context, tok string) (cookie string, err error) {
	if tok == "" || len(tok) > 64 {
		return "", errBadLink
	}
	id, idHash, err := token()
	if err != nil {
		return "", err
	}
	now := h.now()
	err = h.opts.DB.Write(ctx, func(ctx context.Context, tx bun.Tx) error {
		var link struct {
			ID          string `bun:"id"`
			Environment string `bun:"environment"`
			CustomerID  string `bun:"customer_id"`
			Preview     int    `bun:"preview"`
		}
		if err := tx.NewRaw("SELECT id, environment, customer_id, preview FROM portal_links WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?",
			hashOf(tok), storage.Micros(now)).Scan(ctx, &link); err != nil {
			return errBadLink
		}
		res, err := tx.NewRaw("UPDATE portal_links SET used_at = ? WHERE token_hash = ? AND used_at IS NULL",
			storage.Micros(now), hashOf(tok)).Exec(ctx)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return errBadLink
		}
		if _, err = tx.NewRaw("INSERT INTO portal_sessions (id_hash, link_id, environment, customer_id, preview, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
			idHash, link.ID, link.Environment, link.CustomerID, link.Preview, storage.Micros(now), storage.Micros(now.Add(SessionTTL))).Exec(ctx); err != nil {
			return err
		}
		// What has ended is forgotten: expired links and ended sessions.
		if _, err := tx.NewRaw("DELETE FROM portal_links WHERE expires_at <= ?", storage.Micros(now)).Exec(ctx); err != nil {
			return err
		}
		_, err = tx.NewRaw("DELETE FROM portal_sessions WHERE expires_at <= ?", storage.Micros(now)).Exec(ctx)
		return err
	})
	return id, err
}

func (h *Handler) endSession(ctx context.Context, s *session) error {
	return h.opts.DB.Write(ctx, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewRaw("DELETE FROM portal_sessions WHERE id_hash = ?", s.idHash).Exec(ctx)
		return err
	})
}

// crossSite reports whether a POST came from a page of another site, by
// what the browser says of it: Sec-Fetch-Site other than same-origin, or
// an Origin other than the portal's. The portal's own forms send
// "Origin: null" (its Referrer-Policy is no-referrer) with Sec-Fetch-Site:
// same-origin; a null Origin without Sec-Fetch-Site cannot be told from a
// sandboxed frame of another site and is refused too. A request with
// neither header is no browser's (every current browser sends Origin on a
// POST): it has no cookie a hostile page could borrow, and passes.
func (h *Handler) crossSite(r *http.Request) bool {
	site := r.Header.Get("Sec-Fetch-Site")
	if site != "" && site != "same-origin" {
		return true
	}
	switch o := r.Header.Get("Origin"); o {
	case "":
		return false
	case "null":
		return site == ""
	default:
		return o != h.origin()
	}
}

// checkCSRF compares the request's token (form field or header) with the
// session's, in constant time.
func (h *Handler) checkCSRF(r *http.Request, s *session) bool {
	got := r.Header.Get("X-CSRF-Token")
	if got == "" {
		got = r.PostFormValue("csrf")
	}
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.csrf)) == 1
}

func (h *Handler) setCookie(w http.ResponseWriter, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: value, Path: h.opts.Prefix, MaxAge: maxAge,
		HttpOnly: true, Secure: true, SameSite: http.SameSiteStrictMode})
}

// CreatePortalSession is CreateSession for the API
// (httpapi.Options.PortalSessions): a customer's link, working for ttl (0:
// DefaultLinkTTL).
func (h *Handler) CreatePortalSession(ctx context.Context, env settleflow.Environment, customerID string, ttl time.Duration) (*wire.PortalSession, error) {
	return h.CreateSession(ctx, SessionParams{Environment: env, CustomerID: customerID, TTL: ttl})
}
