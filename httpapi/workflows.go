package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/wire"
)

// createBody is the body of POST /v1/workflows and POST /v1/quotes. Raw
// fields tell a missing field from an empty one.
type createBody struct {
	Product    string          `json:"product"`
	CustomerID string          `json:"customerId"`
	Payload    json.RawMessage `json:"payload"`
	// SuccessCriteria, optional, is a criteria tree, passed to the engine
	// as sent (it checks it and names the node at fault).
	SuccessCriteria json.RawMessage `json:"successCriteria"`
	// MarginFloor, optional, is a ratio with at most four decimals (0.25);
	// null is the same as leaving it out.
	MarginFloor json.RawMessage `json:"marginFloor"`

	// floor is MarginFloor in basis points, 0 when not given.
	floor settleflow.BasisPoints
}

// readCreate reads and checks the body that POST /v1/workflows and POST
// /v1/quotes share, so a quote is refused exactly when a create would be.
func (h *handler) readCreate(w http.ResponseWriter, r *http.Request) (*createBody, *Error) {
	body, apiErr := h.readJSON(w, r)
	if apiErr != nil {
		return nil, apiErr
	}
	var in createBody
	if apiErr := decodeBody(body, &in); apiErr != nil {
		return nil, apiErr
	}
	// What the fields hold is the engine's to check (CreateParams.validate),
	// so both roads to a create answer alike; only marginFloor's number is
	// read here, since the engine takes it in basis points.
	floor, ok := parseRatio(in.MarginFloor)
	if !ok {
		return nil, invalid(settleflow.CodeParameterInvalid, "marginFloor",
			"marginFloor must be a number at least 0 and below 1 with at most four decimals (0.25 is a floor of 25 %), or null for none")
	}
	in.floor = floor
	return &in, nil
}

// parseRatio reads marginFloor: a JSON number from 0 to below 1 with at
// most four decimals (settleflow.ParseBasisPoints, exact); absent and null
// are 0.
func parseRatio(raw json.RawMessage) (settleflow.BasisPoints, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return 0, true
	}
	v, err := settleflow.ParseBasisPoints(string(raw))
	return v, err == nil && v >= 0 && v < 10000
}

func (h *handler) createWorkflow(w http.ResponseWriter, r *http.Request) {
	in, apiErr := h.readCreate(w, r)
	if apiErr != nil {
		writeError(w, r, apiErr)
		return
	}
	var key string
	if vals := r.Header.Values("Idempotency-Key"); len(vals) > 0 {
		if len(vals) > 1 {
			writeError(w, r, invalid(settleflow.CodeParameterInvalid, "Idempotency-Key", "send one Idempotency-Key header, not several"))
			return
		}
		key = vals[0]
		if err := settleflow.CheckIdempotencyKey(key); err != nil { // an empty header is not "no key"
			h.fail(w, r, err)
			return
		}
	}
	p := principalFrom(r.Context())
	wf, replayed, err := h.opts.Engine.Create(r.Context(), settleflow.CreateParams{
		Environment:     p.Environment,
		Product:         in.Product,
		CustomerID:      in.CustomerID,
		Payload:         in.Payload,
		SuccessCriteria: in.SuccessCriteria,
		MarginFloor:     in.floor,
		IdempotencyKey:  key,
	})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	w.Header().Set("Location", "/v1/workflows/"+wf.ID)
	writeJSON(w, http.StatusCreated, wf)
}

// fail answers an engine error, logging the unexpected ones.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	if e, ok := h.timedOut(r, err); ok {
		writeError(w, r, e)
		return
	}
	e := toError(err)
	if e.Status >= 500 {
		h.log.Sugar().Errorw("request failed", "request_id", requestIDFrom(r.Context()), "error", err)
	}
	writeError(w, r, e)
}

// readJSON checks the content type and reads at most MaxBodyBytes.
func (h *handler) readJSON(w http.ResponseWriter, r *http.Request) ([]byte, *Error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return nil, &Error{Status: http.StatusUnsupportedMediaType, Type: TypeInvalidRequest, Code: wire.CodeUnsupportedMediaType,
			Message: "Send the body as JSON with Content-Type: application/json."}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, &Error{Status: http.StatusRequestEntityTooLarge, Type: TypeInvalidRequest, Code: wire.CodeBodyTooLarge,
				Message: fmt.Sprintf("The request body exceeds %d bytes.", h.opts.MaxBodyBytes)}
		}
		if isReadTimeout(err) {
			return nil, h.bodyTimeout()
		}
		return nil, invalid(wire.CodeBodyUnreadable, "", "The request body could not be read.")
	}
	return body, nil
}

func (h *handler) fetchWorkflow(w http.ResponseWriter, r *http.Request, id string) {
	if refuseQuery(w, r) {
		return
	}
	wf, err := h.opts.Engine.Fetch(r.Context(), principalFrom(r.Context()).Environment, id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wf)
}

// refuseQuery answers 400 parameter_unknown, and reports true, when a request
// to an endpoint that takes no query parameters carries some.
func refuseQuery(w http.ResponseWriter, r *http.Request) bool {
	if r.URL.RawQuery == "" {
		return false
	}
	writeError(w, r, invalid(settleflow.CodeParameterUnknown, firstParam(r.URL.Query()), "This endpoint takes no query parameters."))
	return true
}

func firstParam(q url.Values) string {
	for k := range q {
		return k
	}
	return ""
}

// list is the page object of every list endpoint.
type list[T any] struct {
	Object  string `json:"object"`
	URL     string `json:"url"`
	Data    []T    `json:"data"`
	HasMore bool   `json:"hasMore"`
}

var listParams = map[string]bool{"status": true, "limit": true, "startingAfter": true, "endingBefore": true, "customerId": true, "product": true}

func (h *handler) listWorkflows(w http.ResponseWriter, r *http.Request) {
	q, apiErr := listQuery(r, listParams)
	if apiErr != nil {
		writeError(w, r, apiErr)
		return
	}
	p := settleflow.ListParams{
		Environment:   principalFrom(r.Context()).Environment,
		CustomerID:    q.Get("customerId"),
		Product:       q.Get("product"),
		StartingAfter: q.Get("startingAfter"),
		EndingBefore:  q.Get("endingBefore"),
	}
	if v, ok := q["status"]; ok {
		st, err := settleflow.ParseStatus(v[0])
		if err != nil {
			writeError(w, r, invalid(settleflow.CodeParameterInvalid, "status", "status must be one of Pending, Running, Settling, Settled, Failed, Canceled"))
			return
		}
		p.Status = st
	}
	if p.Limit, apiErr = pageLimit(q); apiErr != nil {
		writeError(w, r, apiErr)
		return
	}
	page, err := h.opts.Engine.List(r.Context(), p)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := list[*settleflow.Workflow]{Object: "list", URL: "/v1/workflows", Data: page.Data, HasMore: page.HasMore}
	if out.Data == nil {
		out.Data = []*settleflow.Workflow{}
	}
	writeJSON(w, http.StatusOK, out)
}

// product is a catalogue entry on the wire.
type product struct {
	Object string `json:"object"`
	settleflow.ProductInfo
}

func (h *handler) listProducts(w http.ResponseWriter, r *http.Request) {
	if refuseQuery(w, r) {
		return
	}
	infos := h.opts.Engine.Products()
	out := list[product]{Object: "list", URL: "/v1/products", Data: make([]product, len(infos))}
	for i, p := range infos {
		out.Data[i] = product{Object: "product", ProductInfo: p}
	}
	writeJSON(w, http.StatusOK, out)
}

// quote is the answer of POST /v1/quotes: what POST /v1/workflows would
// quote for the same body at this moment, and the inputs it priced.
type quote struct {
	Object     string           `json:"object"`
	Livemode   bool             `json:"livemode"`
	Product    string           `json:"product"`
	CustomerID string           `json:"customerId"`
	Payload    json.RawMessage  `json:"payload"`
	Quoted     settleflow.Money `json:"quoted"`
	Margin     quoteMargin      `json:"margin"`
	// Pricing is the product's pricing model; SuccessCriteria the tree the
	// outcome would be judged by (the request's, else the product's), or
	// null.
	Pricing         settleflow.Pricing `json:"pricing"`
	SuccessCriteria json.RawMessage    `json:"successCriteria"`
	// MarginFloor is the floor in force, or null for none; Budget is then
	// the most the execution may spend and keep it, null without a floor.
	MarginFloor *settleflow.BasisPoints `json:"marginFloor"`
	Budget      *settleflow.Money       `json:"budget"`
}

type quoteMargin struct {
	Target settleflow.BasisPoints `json:"target"`
}

// createQuote prices a would-be workflow and stores nothing. An
// Idempotency-Key header (clients send one with every POST) is accepted and
// ignored: a quote changes nothing, so repeating it is always safe.
func (h *handler) createQuote(w http.ResponseWriter, r *http.Request) {
	in, apiErr := h.readCreate(w, r)
	if apiErr != nil {
		writeError(w, r, apiErr)
		return
	}
	var payload bytes.Buffer
	if len(in.Payload) > 0 { // absent: the engine says it is required
		if err := json.Compact(&payload, in.Payload); err != nil {
			writeError(w, r, invalid(settleflow.CodeParameterInvalid, "payload", "payload is not valid JSON"))
			return
		}
	}
	env := principalFrom(r.Context()).Environment
	q, err := h.opts.Engine.Quote(r.Context(), settleflow.CreateParams{
		Environment: env, Product: in.Product, CustomerID: in.CustomerID, Payload: payload.Bytes(),
		SuccessCriteria: in.SuccessCriteria, MarginFloor: in.floor,
	})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := quote{Object: "quote", Livemode: env.Livemode(), Product: in.Product, CustomerID: in.CustomerID,
		Payload: payload.Bytes(), Quoted: q.Quoted, Margin: quoteMargin{Target: q.TargetMargin},
		Pricing: q.Pricing, SuccessCriteria: q.SuccessCriteria}
	if q.MarginFloor > 0 {
		f := q.MarginFloor
		out.MarginFloor = &f
		out.Budget = &settleflow.Money{Amount: q.Budget, Currency: q.Quoted.Currency}
	}
	writeJSON(w, http.StatusOK, out)
}

func (h *handler) fetchProduct(w http.ResponseWriter, r *http.Request, name string) {
	if refuseQuery(w, r) {
		return
	}
	info, ok := h.opts.Engine.Product(name)
	if !ok {
		writeError(w, r, &Error{Status: http.StatusNotFound, Type: TypeInvalidRequest, Code: wire.CodeResourceMissing, Message: "No such product."})
		return
	}
	writeJSON(w, http.StatusOK, product{Object: "product", ProductInfo: info})
}
