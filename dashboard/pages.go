package dashboard

import (
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/apikey"
	"github.com/settleflow/settleflow/webhook"
)

// page is what every template gets.
type page struct {
	Prefix string
	Title  string
	Nav    string
	Env    settleflow.Environment
	CSRF   string
	Error  string
	Notice string
	// Secret, when set, is shown once (a new key, a signing secret).
	Secret      string
	SecretLabel string
	Data        any
}

var funcs = template.FuncMap{
	"money": func(m settleflow.Money) string { return formatMoney(m.Amount, m.Currency) },
	"cents": formatCents,
	"mon": func(a int64, currency string) settleflow.Money {
		return settleflow.Money{Amount: a, Currency: currency}
	},
	// amount is minor units of the engine's currency, with it: "USD 12.50".
	"amount": func(c int64) string { return formatMoney(c, settleflow.Currency) },
	// price is minor units as a sentence says them: "$12.50".
	"price": func(c int64, currency string) string { return formatPrice(c, currency) },
	"bps": func(b settleflow.BasisPoints) string {
		return fmt.Sprintf("%.2f%%", float64(b)/100)
	},
	"bpsp": func(b *settleflow.BasisPoints) string {
		if b == nil {
			return "—"
		}
		return fmt.Sprintf("%.2f%%", float64(*b)/100)
	},
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"whenp": func(t *time.Time) string {
		if t == nil {
			return "never"
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"raw":     func(b []byte) string { return string(b) },
	"units":   formatUnits,
	"charged": chargedText,
	"redact":  webhook.RedactURL,
}

func parsePages() (map[string]*template.Template, error) {
	layout, err := fs.ReadFile(assets, "assets/layout.tmpl")
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
			_, err = t.Parse(string(body))
		}
		if err != nil {
			return nil, fmt.Errorf("dashboard: template %s: %w", n, err)
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
	m.HandleFunc("POST "+p+"signout", h.authed(h.signout))
	m.HandleFunc("POST "+p+"env", h.authed(h.switchEnv))
	m.HandleFunc("GET "+p+"{$}", h.authed(h.overview))
	m.HandleFunc("GET "+p+"keys", h.authed(h.keysPage))
	m.HandleFunc("POST "+p+"keys", h.authed(h.createKey))
	m.HandleFunc("POST "+p+"keys/{id}/rotate", h.authed(h.rotateKey))
	m.HandleFunc("POST "+p+"keys/{id}/revoke", h.authed(h.revokeKey))
	m.HandleFunc("GET "+p+"workflows", h.authed(h.workflowsPage))
	m.HandleFunc("GET "+p+"workflows/{id}", h.authed(h.workflowPage))
	m.HandleFunc("POST "+p+"workflows/{id}/refund", h.authed(h.reviewRefund))
	m.HandleFunc("POST "+p+"workflows/{id}/refund/confirm", h.authed(h.confirmRefund))
	m.HandleFunc("GET "+p+"customers", h.authed(h.customersPage))
	m.HandleFunc("GET "+p+"customers/{id}", h.authed(h.customerPage))
	m.HandleFunc("POST "+p+"customers/{id}/preview", h.authed(h.previewPortal))
	m.HandleFunc("GET "+p+"margins", h.authed(h.marginsPage))
	m.HandleFunc("GET "+p+"workers", h.authed(h.workersPage))
	m.HandleFunc("GET "+p+"webhooks", h.authed(h.webhooksPage))
	m.HandleFunc("POST "+p+"webhooks", h.authed(h.addEndpoint))
	m.HandleFunc("POST "+p+"webhooks/{id}/{action}", h.authed(h.endpointAction))
	m.HandleFunc("GET "+p+"deliveries/{id}", h.authed(h.deliveryPage))
	m.HandleFunc("POST "+p+"deliveries/{id}/resend", h.authed(h.resend))
	m.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
		h.render(w, r, http.StatusNotFound, "message", page{Title: "Not found", Error: "There is no such page."})
	})
	h.mux = m
}

// authed runs next with the request's session; without one it sends the
// browser to a page that says how to sign in. A POST must carry the
// session's CSRF token.
func (h *Handler) authed(next func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, err := h.session(r)
		if err != nil {
			h.render(w, r, http.StatusUnauthorized, "message", page{Title: "Sign in",
				Error: "You are not signed in, or your session ended. Open a sign-in link: run `server dashboard link` on the server."})
			return
		}
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
			if !s.checkCSRF(r) {
				h.render(w, r, http.StatusForbidden, "message", page{Title: "Refused", Env: s.env,
					Error: "This form is out of date or did not come from this dashboard (CSRF token missing or wrong); nothing was changed. Reload the page and try again."})
				return
			}
		}
		next(w, r, s)
	}
}

func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	p.Prefix = h.opts.Prefix
	if p.Env == "" {
		p.Env = settleflow.Test
	}
	if s, err := h.session(r); err == nil {
		p.CSRF, p.Env = s.csrf, s.env
	}
	t := h.pages[name]
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if err := t.ExecuteTemplate(w, "layout", p); err != nil {
		h.log.Error("dashboard: rendering failed", zap.String("page", name), zap.Error(err))
	}
}

func (h *Handler) redirect(w http.ResponseWriter, r *http.Request, path string) {
	http.Redirect(w, r, h.opts.Prefix+path, http.StatusSeeOther)
}

func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	h.log.Error("dashboard: request failed", zap.String("path", r.URL.Path), zap.Error(err))
	h.render(w, r, http.StatusInternalServerError, "message", page{Title: "Error", Error: "Something went wrong on the server; nothing may have changed. Details are in the server's log."})
}

// Sign-in: the link's GET shows a button, whose POST uses the link, so a
// link previewer that fetches the URL cannot spend it.
func (h *Handler) signinPage(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, "signin", page{Title: "Sign in", Data: r.URL.Query().Get("token")})
}

func (h *Handler) signin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	id, err := h.consumeLink(r.Context(), r.PostFormValue("token"))
	if errors.Is(err, errBadLink) {
		h.render(w, r, http.StatusBadRequest, "message", page{Title: "Sign in",
			Error: "This sign-in link has expired or was used already. Run `server dashboard link` on the server for a new one."})
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.setCookie(w, id, int(SessionTTL/time.Second))
	h.redirect(w, r, "")
}

func (h *Handler) signout(w http.ResponseWriter, r *http.Request, s *session) {
	if err := h.endSession(r.Context(), s); err != nil {
		h.fail(w, r, err)
		return
	}
	h.setCookie(w, "", -1)
	h.render(w, r, http.StatusOK, "message", page{Title: "Signed out", Notice: "You are signed out. Open a new sign-in link to come back."})
}

func (h *Handler) switchEnv(w http.ResponseWriter, r *http.Request, s *session) {
	env := settleflow.Environment(r.PostFormValue("env"))
	if !env.Valid() {
		h.render(w, r, http.StatusBadRequest, "message", page{Title: "Refused", Error: "The environment must be test or live."})
		return
	}
	if err := h.setEnv(r.Context(), s, env); err != nil {
		h.fail(w, r, err)
		return
	}
	h.redirect(w, r, "")
}

// Keys.

type keysData struct {
	Keys      []apikey.Key
	Plans     []apikey.Plan
	Expiries  []string
	Form      url.Values
	ShownOnce string
}

func (h *Handler) keysOf(r *http.Request, env settleflow.Environment) ([]apikey.Key, error) {
	all, err := h.opts.Keys.List(r.Context())
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(k apikey.Key) bool { return k.Environment != env }), nil
}

func (h *Handler) keysPage(w http.ResponseWriter, r *http.Request, s *session) {
	h.keysPageWith(w, r, s, http.StatusOK, page{})
}

func (h *Handler) keysPageWith(w http.ResponseWriter, r *http.Request, s *session, status int, p page) {
	ks, err := h.keysOf(r, s.env)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p.Title, p.Nav = "API keys", "keys"
	p.Data = keysData{Keys: ks, Plans: []apikey.Plan{apikey.Starter, apikey.Pro, apikey.Enterprise},
		Expiries: []string{"now", "1h", "24h", "7d"}, Form: r.PostForm}
	h.render(w, r, status, "keys", p)
}

func (h *Handler) createKey(w http.ResponseWriter, r *http.Request, s *session) {
	var pm, pd int
	var bad string
	if v := r.PostFormValue("perMinute"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			bad = "Requests per minute must be a whole number."
		}
		pm = n
	}
	if v := r.PostFormValue("perDay"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			bad = "Requests per day must be a whole number."
		}
		pd = n
	}
	if bad != "" {
		h.keysPageWith(w, r, s, http.StatusBadRequest, page{Error: bad})
		return
	}
	k, secret, err := h.opts.Keys.Create(r.Context(), apikey.CreateParams{Environment: s.env, Name: strings.TrimSpace(r.PostFormValue("name")),
		Plan: apikey.Plan(r.PostFormValue("plan")), PerMinute: pm, PerDay: pd})
	if err != nil {
		if msg, ok := keyError(err); ok {
			h.keysPageWith(w, r, s, http.StatusBadRequest, page{Error: msg})
			return
		}
		h.fail(w, r, err)
		return
	}
	h.keysPageWith(w, r, s, http.StatusOK, page{Notice: "Created " + k.ID + ".", Secret: secret,
		SecretLabel: "The new key's secret. Copy it now: it is not shown again."})
}

// keyError is the sentence for an apikey error a form caused.
func keyError(err error) (string, bool) {
	switch {
	case errors.Is(err, apikey.ErrInvalidName):
		return "The name must be 1 to 100 characters, without control characters.", true
	case errors.Is(err, apikey.ErrInvalidPlan):
		return "The plan must be starter, pro or enterprise.", true
	case errors.Is(err, apikey.ErrInvalidLimits):
		return "Enterprise keys need both limits (positive whole numbers); the other plans take none.", true
	case errors.Is(err, apikey.ErrInvalidExpiry):
		return "The old key's expiry must be now, 1 hour, 24 hours or 7 days.", true
	case errors.Is(err, apikey.ErrRotated), errors.Is(err, apikey.ErrRevoked), errors.Is(err, apikey.ErrExpired):
		return strings.TrimPrefix(err.Error(), "apikey: "), true
	}
	return "", false
}

// keyOf returns key id if it belongs to the session's environment.
func (h *Handler) keyOf(w http.ResponseWriter, r *http.Request, s *session) (apikey.Key, bool) {
	k, err := h.opts.Keys.Get(r.Context(), r.PathValue("id"))
	if err != nil || k.Environment != s.env {
		h.keysPageWith(w, r, s, http.StatusNotFound, page{Error: "There is no such key in " + string(s.env) + " mode."})
		return k, false
	}
	return k, true
}

func (h *Handler) rotateKey(w http.ResponseWriter, r *http.Request, s *session) {
	k, ok := h.keyOf(w, r, s)
	if !ok {
		return
	}
	d, err := apikey.ParseExpireIn(r.PostFormValue("expireIn"))
	if err != nil {
		h.keysPageWith(w, r, s, http.StatusBadRequest, page{Error: "The old key's expiry must be now, 1 hour, 24 hours or 7 days."})
		return
	}
	nk, secret, err := h.opts.Keys.Rotate(r.Context(), k.ID, d)
	if err != nil {
		if msg, ok := keyError(err); ok {
			h.keysPageWith(w, r, s, http.StatusBadRequest, page{Error: msg})
			return
		}
		h.fail(w, r, err)
		return
	}
	h.keysPageWith(w, r, s, http.StatusOK, page{Notice: fmt.Sprintf("Rotated %s into %s.", k.ID, nk.ID), Secret: secret,
		SecretLabel: "The new key's secret. Copy it now: it is not shown again."})
}

func (h *Handler) revokeKey(w http.ResponseWriter, r *http.Request, s *session) {
	k, ok := h.keyOf(w, r, s)
	if !ok {
		return
	}
	if r.PostFormValue("confirm") != k.ID {
		h.keysPageWith(w, r, s, http.StatusBadRequest, page{Error: "To revoke " + k.ID + ", type its id in the confirmation box."})
		return
	}
	if err := h.opts.Keys.Revoke(r.Context(), k.ID); err != nil {
		h.fail(w, r, err)
		return
	}
	h.keysPageWith(w, r, s, http.StatusOK, page{Notice: "Revoked " + k.ID + ": requests with it are refused from now on."})
}

// Workflows.

type workflowsData struct {
	Page     *settleflow.Page
	Status   string
	Customer string
	Product  string
	Statuses []settleflow.Status
	Products []settleflow.ProductInfo
	Older    string // query for the next (older) page, "" if none
	Newer    string
}

func (h *Handler) workflowsPage(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	lq := settleflow.ListParams{Environment: s.env, Status: settleflow.Status(q.Get("status")), CustomerID: q.Get("customer"),
		Product: q.Get("product"), StartingAfter: q.Get("after"), EndingBefore: q.Get("before"), Limit: 25}
	pg, err := h.opts.Engine.List(r.Context(), lq)
	d := workflowsData{Status: q.Get("status"), Customer: q.Get("customer"), Product: q.Get("product"),
		Statuses: []settleflow.Status{settleflow.Pending, settleflow.Running, settleflow.Settling, settleflow.Settled, settleflow.Failed, settleflow.Canceled},
		Products: h.opts.Engine.Products()}
	p := page{Title: "Workflows", Nav: "workflows"}
	var inv *settleflow.InvalidError
	switch {
	case errors.As(err, &inv):
		p.Error = inv.Message
		pg = &settleflow.Page{}
	case err != nil:
		h.fail(w, r, err)
		return
	}
	d.Page = pg
	if n := len(pg.Data); n > 0 {
		base := url.Values{"status": {d.Status}, "customer": {d.Customer}, "product": {d.Product}}
		if pg.HasMore || lq.EndingBefore != "" {
			v := cloneValues(base)
			v.Set("after", pg.Data[n-1].ID)
			d.Older = v.Encode()
		}
		if lq.StartingAfter != "" || (lq.EndingBefore != "" && pg.HasMore) {
			v := cloneValues(base)
			v.Set("before", pg.Data[0].ID)
			d.Newer = v.Encode()
		}
	}
	p.Data = d
	status := http.StatusOK
	if p.Error != "" {
		status = http.StatusBadRequest
	}
	h.render(w, r, status, "workflows", p)
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		if len(vs) > 0 && vs[0] != "" {
			out[k] = slices.Clone(vs)
		}
	}
	return out
}

type deliveryView struct {
	*webhook.Delivery
	Attempts []*webhook.Attempt
}

type workflowData struct {
	W          *settleflow.Workflow
	Events     []settleflow.Event
	Deliveries map[string][]deliveryView // by event id
	Explorer   string
	// Terms, Cost and Trace are the workflow's pricing, charge and budget,
	// its cost by category (nil until executed) and its outcome's trace;
	// FloorFailure says why a workflow stopped at its margin floor failed.
	Terms        termsView
	Cost         *costView
	Trace        []traceStep
	FloorFailure string
	// Attempts are the workers' attempts of a remote product's workflow.
	Attempts []attemptView
	refundView
}

// newWorkflowData is wf's page without its deliveries or explorer link.
func newWorkflowData(wf *settleflow.Workflow, evs []settleflow.Event, v refundView) workflowData {
	d := workflowData{W: wf, Events: evs, Deliveries: map[string][]deliveryView{}, refundView: v, Terms: termsOf(wf), Trace: traceOf(wf.Outcome)}
	d.Cost = costOf(wf, d.Terms)
	d.FloorFailure = marginFloorFailure(wf, d.Terms)
	return d
}

func (h *Handler) workflowPage(w http.ResponseWriter, r *http.Request, s *session) {
	wf, err := h.opts.Engine.Fetch(r.Context(), s.env, r.PathValue("id"))
	if err != nil {
		h.render(w, r, http.StatusNotFound, "message", page{Title: "Not found", Nav: "workflows", Error: "There is no such workflow in " + string(s.env) + " mode."})
		return
	}
	v, err := h.refundViewOf(r.Context(), s.env, wf)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	form, err := newRefundForm(v.Left)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.workflowPageWith(w, r, s, wf, v, form, http.StatusOK, page{Notice: h.refundNotice(r.Context(), s.env, wf, r.URL.Query())})
}

// workflowPageWith renders wf's page with its refunds v and the refund
// form as given (an error re-renders what the operator typed).
func (h *Handler) workflowPageWith(w http.ResponseWriter, r *http.Request, s *session, wf *settleflow.Workflow, v refundView, form refundForm, status int, p page) {
	evs, err := h.opts.Engine.ListEvents(r.Context(), settleflow.EventListParams{Environment: s.env, WorkflowID: wf.ID, Limit: 100})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	v.Form = form
	d := newWorkflowData(wf, evs.Data, v)
	if d.Attempts, err = h.attemptsOf(r.Context(), r, s.env, wf); err != nil {
		h.fail(w, r, err)
		return
	}
	if x := h.opts.Explorers[s.env]; x != "" && wf.Settlement != nil {
		d.Explorer = x + wf.Settlement.TxHash
	}
	for _, ev := range evs.Data {
		ds, err := h.opts.Webhooks.ListDeliveries(r.Context(), webhook.DeliveryQuery{EventID: ev.ID, Limit: 100})
		if err != nil {
			h.fail(w, r, err)
			return
		}
		for _, dl := range ds {
			as, err := h.opts.Webhooks.ListAttempts(r.Context(), dl.ID)
			if err != nil {
				h.fail(w, r, err)
				return
			}
			d.Deliveries[ev.ID] = append(d.Deliveries[ev.ID], deliveryView{dl, as})
		}
	}
	p.Title, p.Nav, p.Data = wf.ID, "workflows", d
	h.render(w, r, status, "workflow", p)
}

// Webhooks.

type webhooksData struct {
	Endpoints  []*webhook.Endpoint
	Deliveries []*webhook.Delivery
	Form       url.Values
}

func (h *Handler) webhooksPage(w http.ResponseWriter, r *http.Request, s *session) {
	h.webhooksPageWith(w, r, s, http.StatusOK, page{})
}

func (h *Handler) webhooksPageWith(w http.ResponseWriter, r *http.Request, s *session, status int, p page) {
	eps, err := h.opts.Webhooks.ListEndpoints(r.Context(), s.env)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var ds []*webhook.Delivery
	for _, ep := range eps {
		more, err := h.opts.Webhooks.ListDeliveries(r.Context(), webhook.DeliveryQuery{EndpointID: ep.ID, Limit: 25})
		if err != nil {
			h.fail(w, r, err)
			return
		}
		ds = append(ds, more...)
	}
	slices.SortFunc(ds, func(a, b *webhook.Delivery) int { return strings.Compare(b.ID, a.ID) })
	p.Title, p.Nav = "Webhooks", "webhooks"
	p.Data = webhooksData{Endpoints: eps, Deliveries: ds, Form: r.PostForm}
	h.render(w, r, status, "webhooks", p)
}

func (h *Handler) addEndpoint(w http.ResponseWriter, r *http.Request, s *session) {
	ep, secret, err := h.opts.Webhooks.CreateEndpoint(r.Context(), webhook.EndpointParams{Environment: s.env,
		URL: strings.TrimSpace(r.PostFormValue("url")), Description: strings.TrimSpace(r.PostFormValue("description"))})
	var inv *settleflow.InvalidError
	switch {
	case errors.As(err, &inv):
		h.webhooksPageWith(w, r, s, http.StatusBadRequest, page{Error: inv.Message})
		return
	case err != nil:
		h.fail(w, r, err)
		return
	}
	h.webhooksPageWith(w, r, s, http.StatusOK, page{Notice: "Added endpoint " + ep.ID + ".", Secret: secret,
		SecretLabel: "The endpoint's signing secret. Copy it into your receiver now: it is not shown again."})
}

func (h *Handler) endpointAction(w http.ResponseWriter, r *http.Request, s *session) {
	ep, err := h.opts.Webhooks.GetEndpoint(r.Context(), r.PathValue("id"))
	if err != nil || ep.Environment != s.env {
		h.webhooksPageWith(w, r, s, http.StatusNotFound, page{Error: "There is no such endpoint in " + string(s.env) + " mode."})
		return
	}
	ctx := r.Context()
	switch r.PathValue("action") {
	case "disable":
		err = h.opts.Webhooks.DisableEndpoint(ctx, ep.ID)
	case "enable":
		err = h.opts.Webhooks.EnableEndpoint(ctx, ep.ID)
	case "remove":
		if r.PostFormValue("confirm") != ep.ID {
			h.webhooksPageWith(w, r, s, http.StatusBadRequest, page{Error: "To remove " + ep.ID + ", type its id in the confirmation box."})
			return
		}
		err = h.opts.Webhooks.RemoveEndpoint(ctx, ep.ID)
	case "rotate":
		d, perr := apikey.ParseExpireIn(r.PostFormValue("overlap"))
		if perr != nil {
			h.webhooksPageWith(w, r, s, http.StatusBadRequest, page{Error: "The old secret's overlap must be now, 1 hour, 24 hours or 7 days."})
			return
		}
		secret, err := h.opts.Webhooks.RotateSecret(ctx, ep.ID, d)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		h.webhooksPageWith(w, r, s, http.StatusOK, page{Notice: "Rotated the signing secret of " + ep.ID + ".", Secret: secret,
			SecretLabel: "The new signing secret. Copy it into your receiver now: it is not shown again."})
		return
	default:
		h.webhooksPageWith(w, r, s, http.StatusNotFound, page{Error: "Unknown action."})
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.redirect(w, r, "webhooks")
}

type deliveryData struct {
	D        *webhook.Delivery
	Attempts []*webhook.Attempt
}

func (h *Handler) deliveryOf(w http.ResponseWriter, r *http.Request, s *session) (*webhook.Delivery, bool) {
	d, err := h.opts.Webhooks.GetDelivery(r.Context(), r.PathValue("id"))
	if err != nil || d.Environment != s.env {
		h.render(w, r, http.StatusNotFound, "message", page{Title: "Not found", Nav: "webhooks", Error: "There is no such delivery in " + string(s.env) + " mode."})
		return nil, false
	}
	return d, true
}

func (h *Handler) deliveryPage(w http.ResponseWriter, r *http.Request, s *session) {
	d, ok := h.deliveryOf(w, r, s)
	if !ok {
		return
	}
	as, err := h.opts.Webhooks.ListAttempts(r.Context(), d.ID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.render(w, r, http.StatusOK, "delivery", page{Title: d.ID, Nav: "webhooks", Data: deliveryData{d, as}})
}

func (h *Handler) resend(w http.ResponseWriter, r *http.Request, s *session) {
	d, ok := h.deliveryOf(w, r, s)
	if !ok {
		return
	}
	if err := h.opts.Webhooks.RetryDelivery(r.Context(), d.ID); err != nil {
		as, _ := h.opts.Webhooks.ListAttempts(r.Context(), d.ID)
		h.render(w, r, http.StatusConflict, "delivery", page{Title: d.ID, Nav: "webhooks", Data: deliveryData{d, as},
			Error: "This delivery is " + string(d.Status) + ": it is on its way already (or its endpoint is disabled); only a finished delivery is sent again."})
		return
	}
	h.redirect(w, r, "deliveries/"+d.ID)
}
