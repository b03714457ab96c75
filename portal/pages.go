package portal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/uptrace/bun"
	"go.uber.org/zap"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/ratelimit"
	"github.com/settleflow/settleflow/settlement"
)

// page is what every template gets.
type page struct {
	Prefix   string
	Operator string
	// Logo is Options.OperatorLogo, checked by New (a path on this server
	// or a data:image/ URL), so a URL the template may write as is.
	Logo       template.URL
	Title      string
	Nav        string
	Env        settleflow.Environment
	CSRF       string
	CustomerID string
	Preview    bool
	Error      string
	Notice     string
	Data       any
}

var funcs = template.FuncMap{
	"usd": formatUSD,
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04 UTC")
	},
	"kindName": kindName,
	"unix":     func(sec int64) time.Time { return time.Unix(sec, 0).UTC() },
	"notice":   noticeText,
	"dict": func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	},
}

// formatUSD is cents as a person reads them: "$1,234.50", "−$3.58".
func formatUSD(c int64) string {
	sign := ""
	u := uint64(c)
	if c < 0 {
		sign, u = "−", uint64(-c)
	}
	whole := strconv.FormatUint(u/100, 10)
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return fmt.Sprintf("%s$%s.%02d", sign, b.String(), u%100)
}

// noticeText is a withdrawal notice as a sentence says it: "24 hours",
// "1 hour", "90 minutes".
func noticeText(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		if d == time.Hour {
			return "1 hour"
		}
		return fmt.Sprintf("%d hours", d/time.Hour)
	case d >= time.Minute && d%time.Minute == 0:
		return fmt.Sprintf("%d minutes", d/time.Minute)
	}
	return fmt.Sprintf("%d seconds", d/time.Second)
}

func kindName(k string) string {
	switch k {
	case LineCharge:
		return "Charge"
	case LineRefund:
		return "Refund"
	case LineDeposit:
		return "Deposit"
	case LineWithdrawn:
		return "Withdrawal"
	case LineWithdrawalRequested:
		return "Withdrawal requested"
	case LineWithdrawalCanceled:
		return "Withdrawal canceled"
	case LineOwnerSet:
		return "Wallet connected"
	}
	return k
}

func parsePages() (map[string]*template.Template, error) {
	layout, err := fs.ReadFile(assets, "assets/layout.tmpl")
	if err != nil {
		return nil, err
	}
	lines, err := fs.ReadFile(assets, "assets/lines.tmpl")
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(assets, "assets/*.page.tmpl")
	if err != nil {
		return nil, err
	}
	out := map[string]*template.Template{}
	for _, n := range names {
		body, err := fs.ReadFile(assets, n)
		if err != nil {
			return nil, err
		}
		t, err := template.New("layout").Funcs(funcs).Parse(string(layout))
		if err == nil {
			_, err = t.Parse(string(lines))
		}
		if err == nil {
			_, err = t.Parse(string(body))
		}
		if err != nil {
			return nil, fmt.Errorf("portal: template %s: %w", n, err)
		}
		out[strings.TrimSuffix(strings.TrimPrefix(n, "assets/"), ".page.tmpl")] = t
	}
	return out, nil
}

func (h *Handler) routes() {
	m := http.NewServeMux()
	p := h.opts.Prefix
	static, _ := fs.Sub(assets, "assets/static")
	m.Handle("GET "+p+"static/", http.StripPrefix(p+"static/", http.FileServerFS(static)))
	m.HandleFunc("GET "+p+"signin", h.signinPage)
	m.HandleFunc("POST "+p+"signin", h.signin)
	m.HandleFunc("POST "+p+"signout", h.authed(h.signout, false))
	m.HandleFunc("GET "+p+"signedout", h.signedOut)
	m.HandleFunc("GET "+p+"{$}", h.authed(h.limited(h.accountPage), false))
	m.HandleFunc("GET "+p+"statement", h.authed(h.statementPage, false))
	m.HandleFunc("GET "+p+"statement.csv", h.authed(h.statementCSV, false))
	m.HandleFunc("GET "+p+"status", h.authed(h.limited(h.status), false))
	m.HandleFunc("POST "+p+"connect/grant", h.authed(h.connectGrant, true))
	m.HandleFunc("POST "+p+"connect", h.authed(h.limited(h.connect), true))
	m.HandleFunc("POST "+p+"deposit/prepare", h.authed(h.limited(h.prepareDeposit), true))
	m.HandleFunc("POST "+p+"deposit", h.authed(h.limited(h.relayDeposit), true))
	m.HandleFunc("POST "+p+"withdrawal/call", h.authed(h.limited(h.withdrawalCall), true))
	m.HandleFunc("POST "+p+"owner/cancel", h.authed(h.limited(h.ownerChangeCall), true))
	m.HandleFunc("GET "+p+"address", h.authed(h.checksum, false))
	h.mux = m
}

// limited runs next within the customer's NodeCallsPerMinute: the
// requests that reach the chain's node, which a page (or a script with the
// session's cookie) could otherwise make without end.
func (h *Handler) limited(next func(http.ResponseWriter, *http.Request, *session)) func(http.ResponseWriter, *http.Request, *session) {
	return func(w http.ResponseWriter, r *http.Request, s *session) {
		d, err := h.opts.Limiter.Allow(r.Context(), "portal\x00"+string(s.env)+"\x00"+s.customerID,
			[]ratelimit.Window{ratelimit.Minute(h.opts.NodeCallsPerMinute)}, h.now())
		if err != nil {
			h.fail(w, r, s, err)
			return
		}
		if !d.Allowed {
			h.metrics.refused.WithLabelValues(string(s.env), "node_limit").Inc()
			w.Header().Set("Retry-After", strconv.Itoa(d.RetryAfter))
			if wantsJSON(r) || r.Method == http.MethodPost {
				jsonError(w, http.StatusTooManyRequests, "", fmt.Sprintf("Too many requests from your pages (at most %d a minute): nothing was done. Wait %d seconds.", h.opts.NodeCallsPerMinute, d.RetryAfter))
				return
			}
			h.render(w, r, s, http.StatusTooManyRequests, "message", page{Title: "Slow down",
				Error: fmt.Sprintf("Too many requests from your pages (at most %d a minute). Wait %d seconds and reload.", h.opts.NodeCallsPerMinute, d.RetryAfter)})
			return
		}
		next(w, r, s)
	}
}

// checksum answers GET address?a=0x…: the address in its EIP-55
// checksummed form, as the page shows every address (the wallet may share
// it in lowercase).
func (h *Handler) checksum(w http.ResponseWriter, r *http.Request, _ *session) {
	a := r.URL.Query().Get("a")
	if !common.IsHexAddress(a) || !strings.HasPrefix(a, "0x") {
		jsonError(w, http.StatusBadRequest, "a", "Not a 0x address.")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"address": common.HexToAddress(a).Hex()})
}

// authed runs next with the request's session; a POST must carry the
// session's CSRF token (and, when the browser sends one, the portal's
// Origin). A write (connect, deposit, withdrawal) is refused in a
// read-only preview.
func (h *Handler) authed(next func(http.ResponseWriter, *http.Request, *session), write bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, err := h.session(r)
		if err != nil {
			if wantsJSON(r) {
				jsonError(w, http.StatusUnauthorized, "", "Your portal session ended or was never opened: ask for a new link.")
				return
			}
			h.render(w, r, nil, http.StatusUnauthorized, "message", page{Title: "Session ended",
				Error: "Your portal session has ended, or this browser never opened one. Ask the service you use for a new link to your account."})
			return
		}
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
			if h.crossSite(r) {
				h.refuseCrossSite(w, r, s)
				return
			}
			if !h.checkCSRF(r, s) {
				if wantsJSON(r) {
					jsonError(w, http.StatusForbidden, "", "This request does not carry this page's token (it is from an older page, or not from this portal); nothing was changed. Reload the page.")
					return
				}
				h.render(w, r, s, http.StatusForbidden, "message", page{Title: "Refused",
					Error: "This form does not carry this page's token (it is from an older page, or not from this portal); nothing was changed. Reload the page and try again."})
				return
			}
			if write && s.preview {
				jsonError(w, http.StatusForbidden, "", "This is a read-only preview of the customer's portal: nothing can be changed from it.")
				return
			}
		}
		next(w, r, s)
	}
}

func wantsJSON(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "application/json") || strings.HasPrefix(r.Header.Get("Content-Type"), "application/json")
}

func (h *Handler) render(w http.ResponseWriter, r *http.Request, s *session, status int, name string, p page) {
	p.Prefix = h.opts.Prefix
	p.Operator, p.Logo = h.opts.OperatorName, template.URL(h.opts.OperatorLogo)
	if p.Env == "" {
		p.Env = settleflow.Test
	}
	if s != nil {
		p.CSRF, p.Env, p.CustomerID, p.Preview = s.csrf, s.env, s.customerID, s.preview
	}
	t := h.pages[name]
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if err := t.ExecuteTemplate(w, "layout", p); err != nil {
		h.log.Error("portal: rendering failed", zap.String("page", name), zap.Error(err))
	}
}

func (h *Handler) fail(w http.ResponseWriter, r *http.Request, s *session, err error) {
	h.log.Error("portal: request failed", zap.String("path", r.URL.Path), zap.Error(err))
	if wantsJSON(r) {
		jsonError(w, http.StatusInternalServerError, "", "Something went wrong on the server; nothing may have changed. Try again in a moment.")
		return
	}
	h.render(w, r, s, http.StatusInternalServerError, "message", page{Title: "Error", Error: "Something went wrong on the server; nothing may have changed. Try again in a moment."})
}

// Sign-in: the link's GET shows a button, whose POST uses the link, so a
// link previewer (a chat app, a mail scanner) that fetches the URL cannot
// spend it.
func (h *Handler) signinPage(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, nil, http.StatusOK, "signin", page{Title: "Open your account", Data: r.URL.Query().Get("token")})
}

// refuseCrossSite answers a POST another site's page made (see
// crossSite): nothing is read or changed, and it is counted.
func (h *Handler) refuseCrossSite(w http.ResponseWriter, r *http.Request, s *session) {
	env := ""
	if s != nil {
		env = string(s.env)
	}
	h.metrics.refused.WithLabelValues(env, "cross_site").Inc()
	h.log.Warn("portal: a cross-site request refused", zap.String("path", r.URL.Path), zap.String("origin", r.Header.Get("Origin")),
		zap.String("secFetchSite", r.Header.Get("Sec-Fetch-Site")))
	if wantsJSON(r) {
		jsonError(w, http.StatusForbidden, "", "This request came from another site's page; nothing was changed.")
		return
	}
	h.render(w, r, nil, http.StatusForbidden, "message", page{Title: "Refused",
		Error: "This request came from another site's page, not from this portal: nothing was changed. Open your account from the link you were given."})
}

// signin uses the link: a POST from this portal's own sign-in page only,
// so that a hostile page cannot sign the visitor's browser into another
// customer's account (login CSRF: the visitor's next deposit would credit
// that customer).
func (h *Handler) signin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	if h.crossSite(r) {
		h.refuseCrossSite(w, r, nil)
		return
	}
	id, err := h.consumeLink(r.Context(), r.PostFormValue("token"))
	if errors.Is(err, errBadLink) {
		h.metrics.refused.WithLabelValues("", "link").Inc()
		h.render(w, r, nil, http.StatusBadRequest, "message", page{Title: "This link no longer works",
			Error: "This link has expired or was used already: each link opens your account once, for a short time. Nothing was changed. Ask the service you use for a new link."})
		return
	}
	if err != nil {
		h.fail(w, r, nil, err)
		return
	}
	h.setCookie(w, id, int(SessionTTL/time.Second))
	http.Redirect(w, r, h.opts.Prefix, http.StatusSeeOther)
}

func (h *Handler) signout(w http.ResponseWriter, r *http.Request, s *session) {
	if err := h.endSession(r.Context(), s); err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.setCookie(w, "", -1)
	// Post/redirect/get: a reload of the answer posts nothing again.
	http.Redirect(w, r, h.opts.Prefix+"signedout", http.StatusSeeOther)
}

func (h *Handler) signedOut(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, nil, http.StatusOK, "message", page{Title: "Signed out", Notice: "You are signed out. Open a new link to come back."})
}

// accountData is the account page's.
type accountData struct {
	Balance     settleflow.Balance
	Owner       string
	OwnerChange *ownerChangeView
	ChainID     int64
	// Network is the chain in plain words ("Test network", "Base").
	Network     string
	Contract    string
	Token       string
	Withdrawal  settlement.Withdrawal
	MinDeposit  int64
	RelayLimit  int
	CanTransact bool
	Lines       []Line
	Explorer    string
}

func (h *Handler) accountPage(w http.ResponseWriter, r *http.Request, s *session) {
	c, err := h.opts.Engine.Customer(r.Context(), s.env, s.customerID)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	d := accountData{Balance: c.Balance, MinDeposit: h.opts.MinDeposit, RelayLimit: h.opts.RelaysPerHour,
		CanTransact: h.opts.Chain != nil && !s.preview, Explorer: h.opts.Explorers[s.env]}
	if c.Owner != nil {
		d.Owner = common.HexToAddress(*c.Owner).Hex()
	}
	if h.opts.Chain != nil {
		if ci, ok := h.opts.Chain.Chain(s.env); ok {
			d.ChainID, d.Network, d.Contract, d.Token = ci.ChainID, networkName(s.env, ci.Network, ci.ChainID), ci.Contract.Hex(), ci.Token.Hex()
		}
		if d.OwnerChange, err = h.ownerChange(r.Context(), s); err != nil {
			h.fail(w, r, s, err)
			return
		}
		if d.Withdrawal, err = h.opts.Chain.Withdrawal(r.Context(), s.env, s.customerID); err != nil {
			h.fail(w, r, s, err)
			return
		}
	}
	if c.Deposit != nil {
		if d.Lines, _, err = h.statement(r.Context(), s.env, s.customerID, c.Deposit.CustomerRef, "", time.Time{}, time.Time{}, AccountLines); err != nil {
			h.fail(w, r, s, err)
			return
		}
	}
	h.render(w, r, s, http.StatusOK, "account", page{Title: "Your balance", Nav: "account", Data: d})
}

// networkName is a chain as a customer reads it: a known network's name,
// "Test network" for any other in test mode, else the configured name.
func networkName(env settleflow.Environment, network string, chainID int64) string {
	switch chainID {
	case 1:
		return "Ethereum"
	case 8453:
		return "Base"
	case 10:
		return "Optimism"
	case 42161:
		return "Arbitrum One"
	case 137:
		return "Polygon"
	case 11155111:
		return "Sepolia (test network)"
	case 84532:
		return "Base Sepolia (test network)"
	}
	if env == settleflow.Test || network == "" {
		return "Test network"
	}
	return network
}

var errBadCursor = errors.New("portal: bad cursor")

// AccountLines is how many lines the account page's recent activity shows.
const AccountLines = 5

// StatementPageSize is how many lines a statement page shows.
const StatementPageSize = 25

type statementData struct {
	Lines    []Line
	Next     string
	First    bool
	Explorer string
	From, To string
}

func (h *Handler) statementPage(w http.ResponseWriter, r *http.Request, s *session) {
	c, err := h.opts.Engine.Customer(r.Context(), s.env, s.customerID)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	before := r.URL.Query().Get("before")
	d := statementData{First: before == "", Explorer: h.opts.Explorers[s.env],
		From: h.now().AddDate(0, -1, 0).Format(time.DateOnly), To: h.now().Format(time.DateOnly)}
	if c.Deposit != nil {
		d.Lines, d.Next, err = h.statement(r.Context(), s.env, s.customerID, c.Deposit.CustomerRef, before, time.Time{}, time.Time{}, StatementPageSize)
		if errors.Is(err, errBadCursor) {
			h.render(w, r, s, http.StatusBadRequest, "message", page{Title: "Statement", Error: "This statement page's position is not one this portal made; start from the newest page."})
			return
		}
		if err != nil {
			h.fail(w, r, s, err)
			return
		}
	}
	h.render(w, r, s, http.StatusOK, "statement", page{Title: "Statement", Nav: "statement", Data: d})
}

// newHex is n random bytes, 0x-hex.
func newHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return "0x" + hex.EncodeToString(b)
}

func jsonError(w http.ResponseWriter, status int, param, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]string{"message": msg, "param": param}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// readJSON decodes a small JSON body strictly (no unknown names).
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		jsonError(w, http.StatusBadRequest, "", "The request is not the JSON this page sends: "+err.Error())
		return false
	}
	return true
}

// invalid answers an *settleflow.InvalidError as 400 with its message;
// any other error as the server's.
func (h *Handler) invalidOr(w http.ResponseWriter, r *http.Request, s *session, err error) {
	var ie *settleflow.InvalidError
	if errors.As(err, &ie) {
		jsonError(w, http.StatusBadRequest, ie.Param, ie.Message)
		return
	}
	h.fail(w, r, s, err)
}

var amountRE = regexp.MustCompile(`^(\d{1,9})(?:\.(\d{1,2}))?$`)

// parseAmount reads dollars and cents ("25", "25.5", "25.00") as cents.
func parseAmount(s string) (int64, error) {
	s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "$"))
	s = strings.ReplaceAll(s, ",", "")
	m := amountRE.FindStringSubmatch(s)
	if m == nil {
		return 0, errors.New("enter an amount in dollars and cents, like 25.00 (at most two digits after the point)")
	}
	whole, _ := strconv.ParseInt(m[1], 10, 64)
	frac := int64(0)
	if m[2] != "" {
		frac, _ = strconv.ParseInt(m[2], 10, 64)
		if len(m[2]) == 1 {
			frac *= 10
		}
	}
	return whole*100 + frac, nil
}

// takeRelaySlot counts one relay against the customer's hourly limit: false
// when the limit is reached.
func (h *Handler) takeRelaySlot(ctx context.Context, s *session, hour int64) (bool, error) {
	return h.takeSlot(ctx, relayWindows, s, hour, h.opts.RelaysPerHour)
}

// giveRelaySlot returns a slot taken for a relay that sent nothing.
func (h *Handler) giveRelaySlot(ctx context.Context, s *session, hour int64) error {
	return h.giveSlot(ctx, relayWindows, s, hour)
}

// window is a table of per-customer counts by period (portal_relay_windows
// by clock hour, portal_owner_windows by UTC day): a name and its period
// column, constants of this file, never input.
type window struct{ table, period string }

var (
	relayWindows = window{"portal_relay_windows", "hour"}
	ownerWindows = window{"portal_owner_windows", "day"}
)

// takeSlot counts one against the customer's limit in period, in one
// statement (an upsert that adds only below the limit): false when the
// limit is reached. Counts of periods a day past are forgotten.
func (h *Handler) takeSlot(ctx context.Context, wd window, s *session, period int64, limit int) (bool, error) {
	ok := false
	keep := int64(24)
	if wd.period == "day" {
		keep = 2
	}
	err := h.opts.DB.Write(ctx, func(ctx context.Context, tx bun.Tx) error {
		var n int
		err := tx.NewRaw(`INSERT INTO `+wd.table+` (environment, customer_id, `+wd.period+`, count) VALUES (?, ?, ?, 1)
			ON CONFLICT (environment, customer_id, `+wd.period+`) DO UPDATE SET count = `+wd.table+`.count + 1
			WHERE `+wd.table+`.count < ? RETURNING count`, string(s.env), s.customerID, period, limit).Scan(ctx, &n)
		if err != nil {
			if isNoRows(err) {
				return nil
			}
			return err
		}
		ok = true
		_, err = tx.NewRaw("DELETE FROM "+wd.table+" WHERE "+wd.period+" < ?", period-keep).Exec(ctx)
		return err
	})
	return ok, err
}

// giveSlot returns a slot taken for something that sent nothing.
func (h *Handler) giveSlot(ctx context.Context, wd window, s *session, period int64) error {
	return h.opts.DB.Write(ctx, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewRaw("UPDATE "+wd.table+" SET count = count - 1 WHERE environment = ? AND customer_id = ? AND "+wd.period+" = ? AND count > 0",
			string(s.env), s.customerID, period).Exec(ctx)
		return err
	})
}

// slotsUsed is how many the customer took in period.
func (h *Handler) slotsUsed(ctx context.Context, wd window, s *session, period int64) (int, error) {
	var n int
	err := h.opts.DB.Bun().NewRaw("SELECT COALESCE(SUM(count), 0) FROM "+wd.table+" WHERE environment = ? AND customer_id = ? AND "+wd.period+" = ?",
		string(s.env), s.customerID, period).Scan(ctx, &n)
	return n, err
}

func (h *Handler) relaysUsed(ctx context.Context, s *session, hour int64) (int, error) {
	return h.slotsUsed(ctx, relayWindows, s, hour)
}

func (h *Handler) hour() int64 { return h.now().Unix() / 3600 }

// day is the UTC day number of now, the owner changes' window.
func (h *Handler) day() int64 { return h.now().Unix() / 86400 }
