package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/wire"
)

// Customer funds and refunds (docs/api.md §4, "Customers, refunds and test
// helpers"): GET /v1/customers/{customerId}, POST /v1/workflows/{id}/refunds,
// GET /v1/refunds and /v1/refunds/{id}, and the test helper POST
// /v1/test_helpers/customers/{customerId}/fund.

// fetchCustomer answers GET /v1/customers/{customerId}: the customer's
// balance and deposit instructions in the key's environment. A customer the
// engine never saw has a zero balance (200, not 404): it may be funded
// before its first workflow.
func (h *handler) fetchCustomer(w http.ResponseWriter, r *http.Request, id string) {
	if refuseQuery(w, r) {
		return
	}
	c, err := h.opts.Engine.Customer(r.Context(), principalFrom(r.Context()).Environment, id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

// refundBody is the optional body of POST /v1/workflows/{id}/refunds. The
// amount is kept raw to tell an absent amount (refund all that is left)
// from a null or 0 one (refused).
type refundBody struct {
	Amount json.RawMessage `json:"amount"`
	Reason string          `json:"reason"`
}

// amountBody is the body of POST /v1/test_helpers/customers/{id}/fund.
type amountBody struct {
	Amount json.RawMessage `json:"amount"`
}

// positiveAmount reads a required or optional "amount": an integer of at
// least 1 and at most settleflow.MaxAmount. raw nil means absent.
func positiveAmount(raw json.RawMessage, required bool) (int64, *Error) {
	if raw == nil {
		if required {
			return 0, invalid(settleflow.CodeParameterMissing, "amount", "amount is required: an integer of at least 1 (minor units)")
		}
		return 0, nil
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n < 1 || n > settleflow.MaxAmount {
		msg := "amount must be an integer between 1 and " + strconv.FormatInt(settleflow.MaxAmount, 10) + " (minor units)"
		if !required {
			msg += "; leave it out to refund all that is left"
		}
		return 0, invalid(settleflow.CodeParameterInvalid, "amount", msg)
	}
	return n, nil
}

// readOptionalJSON reads a body that may be left out: no body at all (no
// Content-Length or 0, whatever the Content-Type) is nil; any body must be
// application/json, as every other body.
func (h *handler) readOptionalJSON(w http.ResponseWriter, r *http.Request) ([]byte, *Error) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return nil, nil
	}
	return h.readJSON(w, r)
}

// idempotencyKey returns the request's Idempotency-Key header, "" if none,
// refusing several of them and a key the engine would not store.
func (h *handler) idempotencyKey(r *http.Request) (string, error) {
	vals := r.Header.Values("Idempotency-Key")
	switch len(vals) {
	case 0:
		return "", nil
	case 1:
	default:
		return "", invalid(settleflow.CodeParameterInvalid, "Idempotency-Key", "send one Idempotency-Key header, not several")
	}
	// An empty header is not "no key": it is refused.
	if err := settleflow.CheckIdempotencyKey(vals[0]); err != nil {
		return "", err
	}
	return vals[0], nil
}

// createRefund answers POST /v1/workflows/{id}/refunds: 201 with the refund,
// Pending, and Location /v1/refunds/{id}. A replay (the same Idempotency-Key
// and body) answers the refund first created, 201 with Idempotent-Replayed.
func (h *handler) createRefund(w http.ResponseWriter, r *http.Request, workflowID string) {
	if refuseQuery(w, r) {
		return
	}
	body, apiErr := h.readOptionalJSON(w, r)
	if apiErr != nil {
		writeError(w, r, apiErr)
		return
	}
	var in refundBody
	if len(body) > 0 {
		if apiErr := decodeBody(body, &in); apiErr != nil {
			writeError(w, r, apiErr)
			return
		}
	}
	amount, apiErr := positiveAmount(in.Amount, false)
	if apiErr != nil {
		writeError(w, r, apiErr)
		return
	}
	key, err := h.idempotencyKey(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	rf, replayed, err := h.opts.Engine.Refund(r.Context(), settleflow.RefundParams{
		Environment:    principalFrom(r.Context()).Environment,
		WorkflowID:     workflowID,
		Amount:         amount,
		Reason:         in.Reason,
		IdempotencyKey: key,
	})
	if errors.Is(err, settleflow.ErrNotFound) {
		writeError(w, r, notFoundError("No such workflow."))
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	w.Header().Set("Location", "/v1/refunds/"+rf.ID)
	writeJSON(w, http.StatusCreated, rf)
}

// fetchRefund answers GET /v1/refunds/{id}.
func (h *handler) fetchRefund(w http.ResponseWriter, r *http.Request, id string) {
	if refuseQuery(w, r) {
		return
	}
	rf, err := h.opts.Engine.FetchRefund(r.Context(), principalFrom(r.Context()).Environment, id)
	if errors.Is(err, settleflow.ErrNotFound) {
		writeError(w, r, notFoundError("No such refund."))
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, rf)
}

var refundListParams = map[string]bool{"workflowId": true, "status": true, "limit": true, "startingAfter": true, "endingBefore": true}

// listRefunds answers GET /v1/refunds: the environment's refunds, newest
// first, with the parameters and checks of GET /v1/workflows.
func (h *handler) listRefunds(w http.ResponseWriter, r *http.Request) {
	q, apiErr := listQuery(r, refundListParams)
	if apiErr != nil {
		writeError(w, r, apiErr)
		return
	}
	p := settleflow.RefundListParams{
		Environment:   principalFrom(r.Context()).Environment,
		WorkflowID:    q.Get("workflowId"),
		StartingAfter: q.Get("startingAfter"),
		EndingBefore:  q.Get("endingBefore"),
	}
	if v, ok := q["status"]; ok {
		st, err := settleflow.ParseRefundStatus(v[0])
		if err != nil {
			writeError(w, r, invalid(settleflow.CodeParameterInvalid, "status", "status must be one of Pending, Succeeded, Failed"))
			return
		}
		p.Status = st
	}
	if p.Limit, apiErr = pageLimit(q); apiErr != nil {
		writeError(w, r, apiErr)
		return
	}
	page, err := h.opts.Engine.ListRefunds(r.Context(), p)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := list[*settleflow.Refund]{Object: "list", URL: "/v1/refunds", Data: page.Data, HasMore: page.HasMore}
	if out.Data == nil {
		out.Data = []*settleflow.Refund{}
	}
	writeJSON(w, http.StatusOK, out)
}

// pageLimit is a list's limit parameter: 0 when absent (the default),
// else an integer from 1 to 100.
func pageLimit(q url.Values) (int, *Error) {
	v := q.Get("limit")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 100 {
		return 0, invalid(settleflow.CodeParameterInvalid, "limit", "limit must be an integer between 1 and 100")
	}
	return n, nil
}

// listQuery parses the query string of every endpoint that takes
// parameters (the lists and the margins report), the one parser they share:
// only the names in known (else 400 parameter_unknown), each at most once
// and never empty (else 400 parameter_invalid naming it: `limit=` is not
// the default, it is a mistake), as docs/api.md §5 says.
func listQuery(r *http.Request, known map[string]bool) (url.Values, *Error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, invalid(settleflow.CodeParameterInvalid, "", "The query string is malformed.")
	}
	for name, vs := range q {
		switch {
		case !known[name]:
			return nil, invalid(settleflow.CodeParameterUnknown, name, "Received unknown parameter: "+name)
		case len(vs) > 1:
			return nil, invalid(settleflow.CodeParameterInvalid, name, name+" may be given once")
		case vs[0] == "":
			return nil, invalid(settleflow.CodeParameterInvalid, name, name+" must not be empty")
		}
	}
	return q, nil
}

// fundTestCustomer answers POST /v1/test_helpers/customers/{customerId}/fund
// {"amount": N}: a deposit of N from the test faucet, as if the customer had
// deposited on chain, answered once it is confirmed and applied with the
// customer (200). Test keys only: a live key is 403 test_mode_only (live
// customers deposit on chain). The Idempotency-Key header clients send with
// every POST is accepted and not stored: each call deposits again.
func (h *handler) fundTestCustomer(w http.ResponseWriter, r *http.Request, customerID string) {
	if refuseQuery(w, r) {
		return
	}
	if principalFrom(r.Context()).Environment != settleflow.Test {
		writeError(w, r, &Error{Status: http.StatusForbidden, Type: TypePermission, Code: wire.CodeTestModeOnly,
			Message: "Test helpers work with test keys only (sk_test_…). A live customer is funded by a deposit on chain: see deposit in GET /v1/customers/{customerId}."})
		return
	}
	var in amountBody
	if !h.readBody(w, r, &in) {
		return
	}
	amount, apiErr := positiveAmount(in.Amount, true)
	if apiErr != nil {
		writeError(w, r, apiErr)
		return
	}
	c, err := h.opts.Engine.FundTestCustomer(r.Context(), customerID, amount)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

func notFoundError(msg string) *Error {
	return &Error{Status: http.StatusNotFound, Type: TypeInvalidRequest, Code: wire.CodeResourceMissing, Message: msg}
}
