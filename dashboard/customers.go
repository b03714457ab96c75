package dashboard

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/settleflow/settleflow"
)

// Customers and refunds. A customer's funds are read with Engine.Customer
// (a customer never seen has a zero balance); refunds are created with
// Engine.Refund in two steps, a review that creates nothing and a
// confirmation that carries an idempotency key made with the form, so a
// confirmation sent twice creates one refund.

// recentWorkflows is how many of the newest workflows the customers page
// reads to list recent customers; recentCustomers bounds the list.
const (
	recentWorkflows = 100
	recentCustomers = 25
)

type customerRow struct {
	ID        string
	Balance   settleflow.Balance
	Workflows int
	Last      time.Time
}

type customersData struct {
	Query   string
	Recent  []customerRow
	Scanned int
	Funded  bool
}

// customersPage looks a customer up by id (?id=, then to its page) and
// lists the customers of the environment's newest workflows with their
// balances. The Store keeps no list of accounts to page through, so the
// list is of customers seen lately, not of every customer.
func (h *Handler) customersPage(w http.ResponseWriter, r *http.Request, s *session) {
	q := strings.TrimSpace(r.URL.Query().Get("id"))
	if q == "" {
		h.customersPageWith(w, r, s, q, http.StatusOK, page{})
		return
	}
	_, err := h.opts.Engine.Customer(r.Context(), s.env, q)
	var inv *settleflow.InvalidError
	switch {
	case errors.As(err, &inv):
		h.customersPageWith(w, r, s, q, http.StatusBadRequest, page{Error: "No such customer id: " + inv.Message + "."})
	case err != nil:
		h.fail(w, r, err)
	default:
		h.redirect(w, r, "customers/"+url.PathEscape(q))
	}
}

func (h *Handler) customersPageWith(w http.ResponseWriter, r *http.Request, s *session, q string, status int, p page) {
	d := customersData{Query: q}
	pg, err := h.opts.Engine.List(r.Context(), settleflow.ListParams{Environment: s.env, Limit: recentWorkflows})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d.Scanned = len(pg.Data)
	at := map[string]int{}
	for _, wf := range pg.Data {
		if i, ok := at[wf.CustomerID]; ok {
			d.Recent[i].Workflows++
			continue
		}
		if len(d.Recent) == recentCustomers {
			continue
		}
		at[wf.CustomerID] = len(d.Recent)
		d.Recent = append(d.Recent, customerRow{ID: wf.CustomerID, Workflows: 1, Last: wf.CreatedAt})
	}
	for i := range d.Recent {
		c, err := h.opts.Engine.Customer(r.Context(), s.env, d.Recent[i].ID)
		if err != nil {
			// A customer id older than today's check of them: listed
			// without a balance rather than failing the page.
			var inv *settleflow.InvalidError
			if errors.As(err, &inv) {
				continue
			}
			h.fail(w, r, err)
			return
		}
		d.Recent[i].Balance = c.Balance
		d.Funded = d.Funded || c.Deposit != nil
	}
	p.Title, p.Nav, p.Data = "Customers", "customers", d
	h.render(w, r, status, "customers", p)
}

type customerData struct {
	C         *settleflow.Customer
	Owner     ownerView
	Workflows []*settleflow.Workflow
	HasMore   bool
	Filter    string // the workflows page's query for all of the customer's workflows
}

// customerPage shows one customer's balance, owner, withdrawal, events,
// portal activity, deposit instructions and latest workflows.
func (h *Handler) customerPage(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	c, err := h.opts.Engine.Customer(r.Context(), s.env, id)
	var inv *settleflow.InvalidError
	switch {
	case errors.As(err, &inv):
		h.customersPageWith(w, r, s, id, http.StatusBadRequest, page{Error: "No such customer id: " + inv.Message + "."})
		return
	case err != nil:
		h.fail(w, r, err)
		return
	}
	pg, err := h.opts.Engine.List(r.Context(), settleflow.ListParams{Environment: s.env, CustomerID: id, Limit: 10})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	ov, err := h.ownerViewOf(r.Context(), s.env, c)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d := customerData{C: c, Owner: ov, Workflows: pg.Data, HasMore: pg.HasMore, Filter: url.Values{"customer": {id}}.Encode()}
	h.render(w, r, http.StatusOK, "customer", page{Title: id, Nav: "customers", Data: d})
}

// Refunds.

// refundForm is what the refund form holds: the amount as the operator
// typed it, the reason, and the idempotency key the form was made with.
type refundForm struct {
	Amount string
	Reason string
	Key    string
}

// refundView is a workflow's refund state for its page.
type refundView struct {
	Refunds []*settleflow.Refund
	// Taken is the sum of the refunds that are not Failed (Pending ones
	// included, as the Store counts them); Left = charge − Taken (the
	// charge: Charged, else the quote of a workflow Settled before charges
	// were decided apart).
	Taken, Left int64
	// Funded: the environment's charges are paid from customer balances,
	// so refunds are possible there.
	Funded   bool
	Customer *settleflow.Customer
	Form     refundForm
}

// refundsOf reads every refund of the workflow, newest first.
func (h *Handler) refundsOf(ctx context.Context, env settleflow.Environment, wfID string) ([]*settleflow.Refund, error) {
	var out []*settleflow.Refund
	after := ""
	for {
		pg, err := h.opts.Engine.ListRefunds(ctx, settleflow.RefundListParams{Environment: env, WorkflowID: wfID, StartingAfter: after, Limit: 100})
		if err != nil {
			return nil, err
		}
		out = append(out, pg.Data...)
		if !pg.HasMore || len(pg.Data) == 0 {
			return out, nil
		}
		after = pg.Data[len(pg.Data)-1].ID
	}
}

// refundViewOf gathers wf's refunds, what is left to refund, and whether
// its environment takes refunds (Engine.Customer gives deposit
// instructions exactly where charges are paid from customer balances).
func (h *Handler) refundViewOf(ctx context.Context, env settleflow.Environment, wf *settleflow.Workflow) (refundView, error) {
	var v refundView
	rs, err := h.refundsOf(ctx, env, wf.ID)
	if err != nil {
		return v, err
	}
	v.Refunds = rs
	for _, rf := range rs {
		if rf.Status != settleflow.RefundFailed {
			v.Taken += rf.Amount
		}
	}
	v.Left = max(wf.ChargeAmount()-v.Taken, 0)
	c, err := h.opts.Engine.Customer(ctx, env, wf.CustomerID)
	var inv *settleflow.InvalidError
	switch {
	case errors.As(err, &inv):
		// A customer id from before ids were checked: no balance to show.
	case err != nil:
		return v, err
	default:
		v.Customer, v.Funded = c, c.Deposit != nil
	}
	return v, nil
}

// newRefundForm is the refund form of a workflow page: all that is left,
// no reason, and a fresh idempotency key.
func newRefundForm(left int64) (refundForm, error) {
	t, _, err := token()
	if err != nil {
		return refundForm{}, err
	}
	return refundForm{Amount: formatCents(left), Key: "dashboard_" + t}, nil
}

// refundRequest is a refund form read and checked against the workflow.
type refundRequest struct {
	wf     *settleflow.Workflow
	view   refundView
	form   refundForm
	amount int64
}

type refundConfirmData struct {
	W      *settleflow.Workflow
	Amount int64
	Form   refundForm
	Left   int64
}

// readRefund reads the refund form posted for the workflow of the path and
// checks it; on a bad form it answers with the workflow page and the error,
// and returns false. Nothing is created either way. amountCents says
// whether the amount comes as minor units (the confirmation's hidden
// field) or as the operator typed it.
func (h *Handler) readRefund(w http.ResponseWriter, r *http.Request, s *session, amountCents bool) (*refundRequest, bool) {
	wf, err := h.opts.Engine.Fetch(r.Context(), s.env, r.PathValue("id"))
	if err != nil {
		h.render(w, r, http.StatusNotFound, "message", page{Title: "Not found", Nav: "workflows", Error: "There is no such workflow in " + string(s.env) + " mode; no refund was made."})
		return nil, false
	}
	v, err := h.refundViewOf(r.Context(), s.env, wf)
	if err != nil {
		h.fail(w, r, err)
		return nil, false
	}
	rq := &refundRequest{wf: wf, view: v, form: refundForm{Amount: strings.TrimSpace(r.PostFormValue("amount")),
		Reason: strings.TrimSpace(r.PostFormValue("reason")), Key: r.PostFormValue("key")}}
	bad := func(status int, msg string) (*refundRequest, bool) {
		h.workflowPageWith(w, r, s, wf, v, rq.form, status, page{Error: msg})
		return nil, false
	}
	switch {
	case !v.Funded:
		return bad(http.StatusConflict, refundsNotSupported(s.env))
	case wf.Status != settleflow.Settled:
		return bad(http.StatusConflict, notSettled(wf))
	case rq.form.Key == "" || len(rq.form.Key) > 255:
		return bad(http.StatusBadRequest, "This refund form is incomplete (its idempotency key is missing); nothing was refunded. Reload the page and try again.")
	case !utf8.ValidString(rq.form.Reason) || utf8.RuneCountInString(rq.form.Reason) > 500:
		return bad(http.StatusBadRequest, "The reason must be at most 500 characters. Nothing was refunded.")
	}
	if amountCents {
		rq.amount, err = parseMinor(rq.form.Amount)
	} else {
		rq.amount, err = parseCents(rq.form.Amount)
	}
	if err != nil {
		return bad(http.StatusBadRequest, "The amount is not valid: "+err.Error()+". Nothing was refunded.")
	}
	if rq.amount > v.Left {
		return bad(http.StatusBadRequest, tooMuch(wf, rq.amount, v.Left))
	}
	return rq, true
}

// parseMinor reads a positive integer count of minor units, at most
// settleflow.MaxAmount.
func parseMinor(s string) (int64, error) {
	if s == "" || len(s) > 15 || !digits(s) {
		return 0, errAmount
	}
	c, err := strconv.ParseInt(s, 10, 64)
	if err != nil || c < 1 || c > settleflow.MaxAmount {
		return 0, errAmount
	}
	return c, nil
}

func refundsNotSupported(env settleflow.Environment) string {
	return "Refunds are not available in " + string(env) + " mode: its charges are not paid from customer balances, so there is no balance to give money back to. Nothing was refunded."
}

func notSettled(wf *settleflow.Workflow) string {
	return wf.ID + " is " + string(wf.Status) + ", not Settled: only a Settled workflow's charge can be refunded. Nothing was refunded."
}

func tooMuch(wf *settleflow.Workflow, asked, left int64) string {
	return "A refund of " + formatPrice(asked, wf.Quoted.Currency) + " is more than is left to refund of " + wf.ID +
		" (" + formatPrice(left, wf.Quoted.Currency) + " of its " + formatPrice(wf.ChargeAmount(), wf.Quoted.Currency) +
		" charge, pending refunds counted). Nothing was refunded."
}

// reviewRefund is the refund form's first step: it checks the form and
// shows what the refund will be, with a button to confirm it. It creates
// nothing.
func (h *Handler) reviewRefund(w http.ResponseWriter, r *http.Request, s *session) {
	rq, ok := h.readRefund(w, r, s, false)
	if !ok {
		return
	}
	h.render(w, r, http.StatusOK, "refund", page{Title: "Confirm the refund", Nav: "workflows",
		Data: refundConfirmData{W: rq.wf, Amount: rq.amount, Form: rq.form, Left: rq.view.Left}})
}

// confirmRefund creates the refund the review showed, under the form's
// idempotency key: the same confirmation sent again finds the refund it
// made instead of making another.
func (h *Handler) confirmRefund(w http.ResponseWriter, r *http.Request, s *session) {
	rq, ok := h.readRefund(w, r, s, true)
	if !ok {
		return
	}
	rf, replayed, err := h.opts.Engine.Refund(r.Context(), settleflow.RefundParams{Environment: s.env, WorkflowID: rq.wf.ID,
		Amount: rq.amount, Reason: rq.form.Reason, IdempotencyKey: rq.form.Key})
	if err != nil {
		var (
			se  *settleflow.StateError
			re  *settleflow.RefundableError
			inv *settleflow.InvalidError
		)
		msg, status := "", http.StatusBadRequest
		switch {
		case errors.Is(err, settleflow.ErrNotFound):
			h.render(w, r, http.StatusNotFound, "message", page{Title: "Not found", Nav: "workflows", Error: "There is no such workflow in " + string(s.env) + " mode; no refund was made."})
			return
		case errors.As(err, &se):
			rq.wf.Status = se.Status
			msg, status = notSettled(rq.wf), http.StatusConflict
		case errors.As(err, &re):
			msg = tooMuch(rq.wf, re.Asked, re.Refundable)
		case errors.Is(err, settleflow.ErrRefundsNotSupported):
			msg, status = refundsNotSupported(s.env), http.StatusConflict
		case errors.Is(err, settleflow.ErrIdempotencyKeyReused):
			msg, status = "This refund form was used already for a different refund; nothing more was refunded. Start again from this page.", http.StatusConflict
		case errors.As(err, &inv):
			msg = inv.Message + ". Nothing was refunded."
		default:
			h.fail(w, r, err)
			return
		}
		// Show the workflow as it is now, with a fresh form.
		v, verr := h.refundViewOf(r.Context(), s.env, rq.wf)
		if verr != nil {
			h.fail(w, r, verr)
			return
		}
		form, ferr := newRefundForm(v.Left)
		if ferr != nil {
			h.fail(w, r, ferr)
			return
		}
		h.workflowPageWith(w, r, s, rq.wf, v, form, status, page{Error: msg})
		return
	}
	q := url.Values{"refund": {rf.ID}}
	if replayed {
		q.Set("replayed", "1")
	}
	h.redirect(w, r, "workflows/"+url.PathEscape(rq.wf.ID)+"?"+q.Encode())
}

// refundNotice is the notice of the workflow page a refund's confirmation
// leads to.
func (h *Handler) refundNotice(ctx context.Context, env settleflow.Environment, wf *settleflow.Workflow, q url.Values) string {
	id := q.Get("refund")
	if id == "" {
		return ""
	}
	rf, err := h.opts.Engine.FetchRefund(ctx, env, id)
	if err != nil || rf.WorkflowID != wf.ID {
		return ""
	}
	msg := "Refund " + rf.ID + " of " + formatPrice(rf.Amount, rf.Currency) + " to " + wf.CustomerID + " recorded: " +
		string(rf.Status) + ". It is given back to the customer's balance on chain in the background."
	if q.Get("replayed") != "" {
		msg = "This refund form was sent twice: the second time found " + rf.ID + " (" + formatPrice(rf.Amount, rf.Currency) +
			", " + string(rf.Status) + ") and created nothing more."
	}
	return msg
}
