package settleflow

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/settleflow/settleflow/criteria"
	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/internal/stage"
)

var customerIDPattern = regexp.MustCompile(`^cus_[A-Za-z0-9_-]{1,255}$`)

const customerIDMessage = "customerId must be cus_ followed by 1-255 of A-Z, a-z, 0-9, _ and -"

// CreateParams asks for a workflow.
type CreateParams struct {
	Environment Environment
	Product     string
	CustomerID  string
	// Payload is the product's input: a JSON object.
	Payload json.RawMessage
	// SuccessCriteria, optional, is a criteria tree (see package criteria)
	// that replaces the product's default for this workflow.
	SuccessCriteria json.RawMessage
	// MarginFloor, optional (0: none asked), raises the product's margin
	// floor for this workflow; it may not lower it.
	MarginFloor BasisPoints
	// IdempotencyKey, optional (at most 255 characters): the same key with
	// the same parameters within 24 h returns the first workflow, as created,
	// instead of a new one; with other parameters it is an error.
	IdempotencyKey string
	// Authorization, optional, is a payment authorization that pays the
	// workflow's charge instead of its customer's balance (an x402 buyer's
	// signed permit of at most the quote; JSON, at most 4 KiB). The
	// workflow is then admitted without reserving the balance, keeps the
	// authorization with its terms, and hands it to the settler with its
	// charge (Charge.Authorization), which must take such charges (see
	// x402.FundingSettler): the caller checks the authorization covers the
	// quote before it creates. Only where the settler charges customer
	// balances.
	Authorization json.RawMessage
}

// maxAuthorization bounds CreateParams.Authorization.
const maxAuthorization = 4 << 10

// validate checks what a create (or a quote) asks for, before any product
// sees it: the one place that does, for the engine's callers and the HTTP
// API alike, so a bad request gets the same code, param and message by
// either road. Errors are *InvalidError naming the field as on the wire.
func (p CreateParams) validate() error {
	switch {
	case p.Product == "":
		return &InvalidError{Code: CodeParameterMissing, Param: "product", Message: "product is required"}
	case p.CustomerID == "":
		return &InvalidError{Code: CodeParameterMissing, Param: "customerId", Message: "customerId is required"}
	case !customerIDPattern.MatchString(p.CustomerID):
		return &InvalidError{Code: CodeParameterInvalid, Param: "customerId", Message: customerIDMessage}
	case len(p.Payload) == 0 || string(p.Payload) == "null":
		return &InvalidError{Code: CodeParameterMissing, Param: "payload", Message: "payload is required"}
	case p.Payload[0] != '{':
		return &InvalidError{Code: CodeParameterInvalid, Param: "payload", Message: "payload must be a JSON object"}
	}
	if p.MarginFloor < 0 || p.MarginFloor >= 10000 {
		return &InvalidError{Code: CodeParameterInvalid, Param: "marginFloor", Message: "marginFloor must be at least 0 and below 1"}
	}
	if len(p.Authorization) > maxAuthorization || (len(p.Authorization) > 0 && !json.Valid(p.Authorization)) {
		return &InvalidError{Code: CodeParameterInvalid, Param: "authorization", Message: fmt.Sprintf("authorization must be JSON of at most %d bytes", maxAuthorization)}
	}
	if p.IdempotencyKey != "" {
		return CheckIdempotencyKey(p.IdempotencyKey)
	}
	return nil
}

// parseCriteria checks a request's success criteria; nil when none were
// given. Errors are *InvalidError naming the node at fault
// ("successCriteria.criteria[1].pattern").
func parseCriteria(raw json.RawMessage) (*criteria.Criteria, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	c, err := criteria.Parse(raw)
	if err != nil {
		param := "successCriteria"
		var ce *criteria.Error
		if errors.As(err, &ce) {
			if ce.Param != "" {
				param += "." + ce.Param
			}
			return nil, &InvalidError{Code: CodeParameterInvalid, Param: param, Message: param + ": " + ce.Message}
		}
		return nil, &InvalidError{Code: CodeParameterInvalid, Param: param, Message: err.Error()}
	}
	return c, nil
}

// CheckIdempotencyKey reports whether key can be an idempotency key: 1 to 255
// characters, not only spaces. The error is an *InvalidError naming the
// Idempotency-Key header.
func CheckIdempotencyKey(key string) error {
	if strings.TrimSpace(key) == "" || len(key) > 255 {
		return &InvalidError{Code: CodeParameterInvalid, Param: "Idempotency-Key",
			Message: "Idempotency-Key must be 1 to 255 characters, not only spaces"}
	}
	return nil
}

// ErrIdempotencyKeyReused is returned by Create when the idempotency key was
// used in the last 24 h with other parameters.
var ErrIdempotencyKeyReused = errors.New("settleflow: idempotency key reused with different parameters")

// QuoteResult is the price of a would-be workflow.
type QuoteResult struct {
	// Quoted is the price: the most the workflow can be charged.
	Quoted        Money
	EstimatedCost int64
	TargetMargin  BasisPoints
	// Pricing is the product's pricing model.
	Pricing Pricing
	// SuccessCriteria is the criteria tree in force (the request's, else
	// the product's), or nil.
	SuccessCriteria json.RawMessage
	// MarginFloor is the floor in force, 0 if none; Budget is then the most
	// the execution may spend and keep it (floor(quoted × (1 − floor))), 0
	// without a floor.
	MarginFloor BasisPoints
	Budget      int64

	criteria *criteria.Criteria
}

// Quote validates p and prices it without creating anything. Errors are
// *InvalidError naming the parameter at fault, or ErrEnvironmentNotConfigured
// when the Settler cannot settle p.Environment.
func (e *Engine) Quote(ctx context.Context, p CreateParams) (QuoteResult, error) {
	if err := ctx.Err(); err != nil {
		return QuoteResult{}, err
	}
	if !p.Environment.Valid() {
		return QuoteResult{}, fmt.Errorf("settleflow: environment %q is neither test nor live", p.Environment)
	}
	if !e.settler.Configured(p.Environment) {
		// Refused before the product runs (and spends its cost) for a charge
		// that could never settle.
		return QuoteResult{}, fmt.Errorf("%w: %s", ErrEnvironmentNotConfigured, p.Environment)
	}
	if err := p.validate(); err != nil {
		return QuoteResult{}, err
	}
	prod, ok := e.products.get(p.Product)
	if !ok {
		return QuoteResult{}, &InvalidError{Code: CodeProductNotFound, Param: "product", Message: fmt.Sprintf("no product named %q", p.Product)}
	}
	if prod.retired {
		return QuoteResult{}, &InvalidError{Code: CodeProductRetired, Param: "product",
			Message: fmt.Sprintf("product %q is retired: it takes no new workflows (those created before finish)", p.Product)}
	}
	cost, err := prod.estimate(p.Payload)
	if err != nil {
		return QuoteResult{}, err
	}
	amount, err := prod.price.Quote(cost)
	if err != nil {
		return QuoteResult{}, &InvalidError{Code: CodeQuoteOutOfRange, Param: "payload", Message: err.Error()}
	}
	q := QuoteResult{Quoted: Money{Amount: amount, Currency: Currency}, EstimatedCost: cost, TargetMargin: prod.price.TargetMargin,
		Pricing: prod.info.Pricing, SuccessCriteria: prod.info.SuccessCriteria, MarginFloor: prod.floor, criteria: prod.criteria}
	c, err := parseCriteria(p.SuccessCriteria)
	if err != nil {
		return QuoteResult{}, err
	}
	if c != nil {
		q.criteria = c
		q.SuccessCriteria, _ = c.MarshalJSON()
	}
	if p.MarginFloor > 0 && p.MarginFloor < prod.floor {
		return QuoteResult{}, &InvalidError{Code: CodeParameterInvalid, Param: "marginFloor",
			Message: fmt.Sprintf("marginFloor %s is below the product's floor of %s: a request may raise the floor, never lower it", p.MarginFloor, prod.floor)}
	}
	q.MarginFloor = max(q.MarginFloor, p.MarginFloor)
	if q.MarginFloor > 0 {
		if m := MarginOnEstimate(amount, cost); m < q.MarginFloor {
			return QuoteResult{}, &InvalidError{Code: CodeMarginBelowFloor, Param: "marginFloor",
				Message: fmt.Sprintf("the quote of %d on an estimated cost of %d keeps a margin of %s, below the margin floor of %s", amount, cost, m, q.MarginFloor)}
		}
		q.Budget = Budget(amount, q.MarginFloor)
	}
	return q, nil
}

// Create validates and prices p, and durably records the workflow as Pending
// before it returns: a workflow Create returned survives a crash. It returns
// the workflow as created and whether it is a replay of an earlier Create
// with the same idempotency key. Concurrent Creates are committed together
// in one transaction.
func (e *Engine) Create(ctx context.Context, p CreateParams) (wf *Workflow, replayed bool, err error) {
	// The payload is stored compact so a replay compares equal bytes, and
	// it is compacted before Quote so that the bytes stored are the very
	// bytes the strict decoder validated and the product priced. (Bytes
	// Compact refuses go to Quote as they are, which refuses them with an
	// error naming the fault.)
	payload, cerr := compactJSON(p.Payload)
	if cerr == nil {
		p.Payload = payload
	}
	q, err := e.Quote(ctx, p)
	if err != nil {
		if cerr == nil && p.IdempotencyKey != "" {
			// A retry of a request that created a workflow answers that
			// workflow, though its product was retired or changed since.
			if wf, rerr := e.replayUnquotable(ctx, p); wf != nil || rerr != nil {
				return wf, wf != nil, rerr
			}
		}
		return nil, false, err
	}
	if cerr != nil {
		return nil, false, &InvalidError{Code: CodeParameterInvalid, Param: "payload", Message: "payload is not valid JSON"}
	}
	now := e.now()
	wf = &Workflow{
		ID:         ids.New(ids.Workflow, now),
		Object:     "workflow",
		Livemode:   p.Environment.Livemode(),
		Product:    p.Product,
		CustomerID: p.CustomerID,
		Payload:    payload,
		Quoted:     q.Quoted,
		Pricing:    q.Pricing,
		Margin:     Margin{Target: q.TargetMargin},
		Refunded:   Money{Currency: Currency},
		Status:     Pending,
		CreatedAt:  now,
		UpdatedAt:  now,
	}
	wf.SetTerms(Terms{Pricing: q.Pricing, SuccessCriteria: q.SuccessCriteria, MarginFloor: q.MarginFloor, Authorization: p.Authorization})
	ins := Insert{Workflow: wf}
	if p.IdempotencyKey != "" {
		ins.IdempotencyKey = p.IdempotencyKey
		ins.RequestHash = requestHash(p.Product, p.CustomerID, payload, p.SuccessCriteria, p.MarginFloor)
	}
	if err := e.reserve(ctx, &ins, p.Environment); err != nil {
		if p.IdempotencyKey != "" {
			// A retry of a request that created a workflow answers that
			// workflow, though funds cannot be checked now (a funds
			// outage): the key is looked up before the refusal stands.
			if wf, rerr := e.replayUnquotable(ctx, p); wf != nil || rerr != nil {
				return wf, wf != nil, rerr
			}
		}
		return nil, false, err
	}
	// Once queued, the insert is answered whatever ctx does: the caller
	// must learn whether the workflow exists.
	res, err := e.commits.Insert(ctx, ins)
	switch {
	case errors.Is(err, stage.ErrStopped):
		return nil, false, ErrEngineStopped
	case err != nil:
		return nil, false, err
	}
	if res.Existing != nil {
		if res.ExistingHash != ins.RequestHash {
			return nil, false, ErrIdempotencyKeyReused
		}
		return res.Existing, true, nil
	}
	if a := res.Insufficient; a != nil && a.Quarantined > 0 {
		return nil, false, &FundsUnavailableError{Environment: p.Environment, CustomerID: p.CustomerID, Quarantined: a.Quarantined, RetryAfter: quarantinedRetryAfter}
	}
	if a := res.Insufficient; a != nil {
		return nil, false, &InsufficientFundsError{Environment: p.Environment, CustomerID: p.CustomerID, Quoted: wf.Quoted, Balance: a.Balance()}
	}
	if !res.Claimed {
		e.wake.Now() // a worker claims it; one inserted claimed is running already
	}
	return wf, false, nil
}

// requestHash identifies what a create asked for. Criteria and floor are
// hashed only when given, so a key stored before they existed still
// matches its replay.
func requestHash(product, customerID string, payload, successCriteria []byte, floor BasisPoints) string {
	h := sha256.New()
	parts := [][]byte{[]byte(product), []byte(customerID), payload}
	if c, err := compactJSON(successCriteria); err == nil && len(c) > 0 && string(c) != "null" {
		parts = append(parts, []byte("successCriteria"), c)
	}
	if floor > 0 {
		parts = append(parts, []byte("marginFloor"), []byte(floor.String()))
	}
	for _, part := range parts {
		fmt.Fprintf(h, "%d:", len(part))
		h.Write(part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func compactJSON(raw []byte) (json.RawMessage, error) {
	var b bytes.Buffer
	b.Grow(len(raw))
	if err := json.Compact(&b, raw); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Replay answers a create from the record of its idempotency key alone,
// creating nothing: the workflow an earlier Create with p's key made, when
// p is the same request; ErrIdempotencyKeyReused when it was another;
// nil, nil when the key names none (or the Store keeps no readable
// record). For callers that must not create unless something else holds
// (an x402 payment whose authorization is spent).
func (e *Engine) Replay(ctx context.Context, p CreateParams) (*Workflow, error) {
	if p.IdempotencyKey == "" {
		return nil, nil
	}
	if payload, err := compactJSON(p.Payload); err == nil {
		p.Payload = payload
	}
	return e.replayUnquotable(ctx, p)
}

// replayUnquotable answers a create that could not be quoted, or not
// admitted for want of a current view of funds, from the record of its
// idempotency key: the workflow it created (the same
// request) or ErrIdempotencyKeyReused (another request). It returns nil,
// nil when the key has no live record or the Store cannot read one
// (IdempotencyReader): then the quote's error stands.
func (e *Engine) replayUnquotable(ctx context.Context, p CreateParams) (*Workflow, error) {
	r, ok := e.store.(IdempotencyReader)
	if !ok {
		return nil, nil
	}
	rec, err := r.IdempotencyRecord(ctx, p.Environment, p.IdempotencyKey, e.now())
	if err != nil || rec == nil || rec.Existing == nil {
		return nil, err
	}
	if rec.ExistingHash != requestHash(p.Product, p.CustomerID, p.Payload, p.SuccessCriteria, p.MarginFloor) {
		return nil, ErrIdempotencyKeyReused
	}
	return rec.Existing, nil
}
