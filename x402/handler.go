package x402

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"go.uber.org/zap"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/wire"
)

// Config configures [New].
type Config struct {
	// Engine runs the workflows; Facilitator takes the payments, on the
	// chain of Environment's settlement contract.
	Engine      *settleflow.Engine
	Facilitator *Facilitator
	// Environment is where the workflows sold run and are charged.
	Environment settleflow.Environment
	// Products are the products for sale over x402. A fixed-price product
	// is paid by the exact scheme (one amount, known before the work, paid
	// before the workflow is created); an outcome-priced one (capped,
	// success fee, hybrid) by the upto scheme: the buyer signs a Permit2
	// permit of at most the quote, and the workflow's charge, once known,
	// is all that is taken (nothing when it is 0). Upto needs Funding.
	Products []string
	// Funding is the engine's settler, which takes the upto permits when
	// their workflows' charges settle (required when a product is sold by
	// upto; its engine must be Engine: FundingSettler.Attach).
	Funding *FundingSettler
	// UptoTimeout is the maxTimeoutSeconds of an upto offer: how long a
	// permit signed for it stays valid, time for the workflow to run and its
	// charge to settle (default 30 minutes, at most 12 hours). It should
	// exceed the products' execution timeout by the settling time.
	UptoTimeout time.Duration
	// BaseURL is the public URL the handler is mounted at
	// ("https://api.example.com/x402"): resources are named after it.
	BaseURL string
	// AccessSecret (at least 32 bytes) keys the access tokens with which a
	// paying wallet fetches its workflow; rotating it revokes them all.
	AccessSecret []byte
	// MaxTimeout is the maxTimeoutSeconds offered: how long an
	// authorization signed for the offer stays valid (default 5 minutes).
	MaxTimeout time.Duration
	// FundsWait bounds how long a paid create waits for the deposit to be
	// confirmed and applied to the wallet's balance (default 2 minutes).
	FundsWait time.Duration
	// Wait bounds how long a paid create waits for the workflow's outcome
	// before answering (default 0: answer once created).
	Wait time.Duration
	// MaxBodyBytes caps request bodies (default 1 MiB).
	MaxBodyBytes int64
	// Now is the clock validity windows are checked against (default
	// time.Now).
	Now func() time.Time
	// Logger, default none.
	Logger *zap.Logger
}

// Handler serves x402 creates and access-token reads:
//
//	POST /workflows       {"product": ..., "payload": {...}}: 402 with
//	                      PAYMENT-REQUIRED, or with PAYMENT-SIGNATURE a paid
//	                      create (201, PAYMENT-RESPONSE)
//	GET  /workflows/{id}  Authorization: Bearer <accessToken>
//
// Mount it under its BaseURL's path with http.StripPrefix.
type Handler struct {
	cfg      Config
	log      *zap.Logger
	products map[string]string // product → the scheme it is sold by
	mux      *http.ServeMux
	locks    keyedMutex[common.Address]
}

// New checks cfg: every product registered and priced fixed, the
// environment settled with customer funds.
func New(cfg Config) (*Handler, error) {
	switch {
	case cfg.Engine == nil || cfg.Facilitator == nil:
		return nil, errors.New("x402: Config.Engine and Facilitator are required")
	case len(cfg.AccessSecret) < 32:
		return nil, errors.New("x402: Config.AccessSecret must be at least 32 bytes")
	case cfg.BaseURL == "":
		return nil, errors.New("x402: Config.BaseURL is required")
	case !cfg.Engine.Settles(cfg.Environment):
		return nil, fmt.Errorf("x402: the engine does not settle %s", cfg.Environment)
	}
	h := &Handler{cfg: cfg, log: cfg.Logger, products: map[string]string{}}
	upto := false
	for _, name := range cfg.Products {
		p, ok := cfg.Engine.Product(name)
		if !ok {
			return nil, fmt.Errorf("x402: no product %q", name)
		}
		h.products[name] = SchemeExact
		if p.Pricing.Model != "" && p.Pricing.Model != wire.PricingFixed {
			h.products[name], upto = SchemeUpto, true
		}
	}
	if h.cfg.UptoTimeout <= 0 {
		h.cfg.UptoTimeout = 30 * time.Minute
	}
	if h.cfg.UptoTimeout > 12*time.Hour {
		return nil, fmt.Errorf("x402: Config.UptoTimeout %s is more than 12 hours", h.cfg.UptoTimeout)
	}
	if upto {
		switch {
		case cfg.Funding == nil:
			return nil, errors.New("x402: an outcome-priced product is sold by the upto scheme, which needs Config.Funding (the engine's FundingSettler)")
		case cfg.Funding.engine.Load() != cfg.Engine:
			return nil, errors.New("x402: Config.Funding is not the settler of Config.Engine (build the engine with it, then Attach the engine)")
		case cfg.Funding.fac != cfg.Facilitator:
			return nil, errors.New("x402: Config.Funding takes payments with another Facilitator than Config.Facilitator")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := cfg.Facilitator.UptoReady(ctx); err != nil {
			return nil, err
		}
	}
	if h.cfg.MaxTimeout <= 0 {
		h.cfg.MaxTimeout = 5 * time.Minute
	}
	if h.cfg.FundsWait <= 0 {
		h.cfg.FundsWait = 2 * time.Minute
	}
	if h.cfg.MaxBodyBytes <= 0 {
		h.cfg.MaxBodyBytes = 1 << 20
	}
	if h.cfg.Now == nil {
		h.cfg.Now = time.Now
	}
	if h.log == nil {
		h.log = zap.NewNop()
	}
	h.cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	h.mux = http.NewServeMux()
	h.mux.HandleFunc("POST /workflows", h.create)
	h.mux.HandleFunc("GET /workflows/{id}", h.fetch)
	return h, nil
}

// ServeHTTP routes the request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// CustomerID is the customer a wallet's workflows belong to.
func CustomerID(wallet common.Address) string { return "cus_x402_" + strings.ToLower(wallet.Hex()) }

// createBody is a keyless create: the product and its payload.
type createBody struct {
	Product string          `json:"product"`
	Payload json.RawMessage `json:"payload"`
}

// Purchase is the body of a paid create's answer.
type Purchase struct {
	Object   string               `json:"object"`
	Workflow *settleflow.Workflow `json:"workflow"`
	// AccessToken reads the workflow later (GET /workflows/{id}, as a
	// bearer token), with no API key.
	AccessToken string `json:"accessToken"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

func writeErr(w http.ResponseWriter, status int, typ wire.ErrorType, code, param, msg string) {
	writeJSON(w, status, wire.ErrorEnvelope{Error: &wire.Error{Type: typ, Code: wire.ErrorCode(code), Param: param, Message: msg}})
}

// paymentRequired answers 402 with the offer and why.
func (h *Handler) paymentRequired(w http.ResponseWriter, o *Offer, code, reason string) {
	pr := o.PaymentRequired(reason)
	hdr, err := EncodeHeader(pr)
	if err != nil {
		writeErr(w, 500, wire.ErrorTypeAPI, "api_error", "", "the payment requirements could not be encoded")
		return
	}
	w.Header().Set(HeaderPaymentRequired, hdr)
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusPaymentRequired, struct {
		*PaymentRequired
		Code string `json:"code,omitempty"`
	}{pr, code})
}

func (h *Handler) create(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	in, apiErr := h.readCreate(w, r)
	if apiErr != nil {
		writeErr(w, apiErr.Status, wire.ErrorTypeInvalidRequest, apiErr.Code, "", apiErr.Message)
		return
	}
	env := h.cfg.Environment
	// The quote checks the product and the payload before anything is
	// signed: a payload the product refuses is a 400, never a 402.
	quote, err := h.cfg.Engine.Quote(ctx, settleflow.CreateParams{Environment: env, Product: in.Product, CustomerID: "cus_x402_quote", Payload: in.Payload})
	if err != nil {
		h.engineError(w, err)
		return
	}
	offer, err := h.offer(in.Product, h.products[in.Product], quote.Quoted.Amount)
	if err != nil {
		h.log.Error("x402 offer", zap.Error(err))
		writeErr(w, 500, wire.ErrorTypeAPI, "api_error", "", "the payment requirements could not be made")
		return
	}
	header := r.Header.Values(HeaderPaymentSignature)
	if len(header) == 0 {
		h.paymentRequired(w, offer, "", "PAYMENT-SIGNATURE header is required")
		return
	}
	if len(header) > 1 {
		writeErr(w, 400, wire.ErrorTypeInvalidRequest, CodeMalformed, HeaderPaymentSignature, "send one PAYMENT-SIGNATURE header, not several")
		return
	}
	payment, err := DecodePaymentPayload(header[0])
	if err != nil {
		h.refuse(w, offer, err)
		return
	}
	if offer.Requirements.Scheme == SchemeUpto {
		permit, err := offer.VerifyUpto(payment, h.cfg.Now())
		if err != nil {
			if !h.replay(ctx, w, offer, in, payment) {
				h.refuse(w, offer, err)
			}
			return
		}
		h.payUpto(ctx, w, offer, in, permit)
		return
	}
	auth, err := offer.Verify(payment, h.cfg.Now())
	if err != nil {
		if !h.replay(ctx, w, offer, in, payment) {
			h.refuse(w, offer, err)
		}
		return
	}
	h.pay(ctx, w, offer, in, auth)
}

// replay answers a payment that today's offer refuses (its window since
// closed, the quote since changed) with the workflow it paid for earlier
// with this request, and reports whether it did: a client that lost its
// answer and sends the same request and payment again gets its workflow,
// not a 402 inviting it to pay a second time. Only a genuine payment is
// answered (signed by its payer on this chain, for the exact scheme this
// token); its agreement with today's offer is not asked again.
func (h *Handler) replay(ctx context.Context, w http.ResponseWriter, offer *Offer, in *createBody, p *PaymentPayload) bool {
	var from common.Address
	var key common.Hash
	var answer func(wf *settleflow.Workflow)
	if offer.Requirements.Scheme == SchemeUpto {
		a, err := ParseUpto(p.Payload)
		if err != nil {
			return false
		}
		if signer, err := a.Signer(offer.Domain.ChainID); err != nil || signer != a.From {
			return false
		}
		from, key = a.From, a.Key()
		answer = func(wf *settleflow.Workflow) { h.uptoAnswer(w, offer, a, h.await(ctx, wf), true) }
	} else {
		a, err := ParseExact(p.Payload)
		if err != nil {
			return false
		}
		if signer, err := a.Signer(offer.Domain); err != nil || signer != a.From {
			return false
		}
		from, key = a.From, a.Key()
		answer = func(wf *settleflow.Workflow) { h.answerExact(w, offer, a, wf, true, "") }
	}
	wf, err := h.cfg.Engine.Replay(ctx, settleflow.CreateParams{Environment: h.cfg.Environment, Product: in.Product,
		CustomerID: CustomerID(from), Payload: in.Payload, IdempotencyKey: idempotencyKey(key)})
	if err != nil || wf == nil {
		return false
	}
	answer(wf)
	return true
}

// idempotencyKey is the engine's idempotency key of the workflow a
// payment (its key: payer and nonce) creates.
func idempotencyKey(payment common.Hash) string { return "x402_" + payment.Hex()[2:] }

// payUpto creates the workflow an upto permit pays for, once per permit:
// the permit is checked on chain for its whole maximum (nonce, Permit2
// allowance, funds, a simulated settle) and kept with the workflow; its
// charge is taken when it settles (FundingSettler), nothing before.
func (h *Handler) payUpto(ctx context.Context, w http.ResponseWriter, offer *Offer, in *createBody, a *UptoAuthorization) {
	env := h.cfg.Environment
	unlock := h.locks.lock(a.From)
	defer unlock()
	params := settleflow.CreateParams{Environment: env, Product: in.Product, CustomerID: CustomerID(a.From), Payload: in.Payload,
		IdempotencyKey: idempotencyKey(a.Key())}
	if err := h.cfg.Facilitator.CheckUpto(ctx, a); err != nil {
		// A permit that made a workflow answers it, whatever the chain
		// says now: its charge taken (the nonce used), or 0 (the permit
		// never used, the wallet since spent below the maximum). A valid
		// permit's replay is Create's, below: the lookup is made here
		// only for a refusal.
		wf, rerr := h.cfg.Engine.Replay(ctx, params)
		switch {
		case errors.Is(rerr, settleflow.ErrIdempotencyKeyReused):
			h.paymentRequired(w, offer, CodeNonceUsed, "this permit has paid for another workflow (another product or payload); sign a new one")
		case rerr != nil:
			h.engineError(w, rerr)
		case wf != nil:
			h.uptoAnswer(w, offer, a, h.await(ctx, wf), true)
		case errors.Is(err, ErrUsed):
			// Only this server's collector settles its permits, and only
			// for the workflow created with one: a used permit that made
			// none was spent elsewhere.
			h.log.Error("x402 upto permit used on chain with no workflow of this server", zap.String("payer", a.From.Hex()))
			h.paymentRequired(w, offer, CodeNonceUsed, "this permit was used already, and no workflow of this request was paid with it; sign a new one")
		default:
			h.refuse(w, offer, err)
		}
		return
	}
	// The permit as parsed, re-encoded: canonical and small, whatever
	// spacing the header carried.
	payload, err := json.Marshal(a.Wire())
	if err != nil {
		writeErr(w, 500, wire.ErrorTypeAPI, "api_error", "", "the permit could not be kept")
		return
	}
	stored, err := json.Marshal(storedAuthorization{Scheme: SchemeUpto, Network: offer.Requirements.Network, Payload: payload})
	if err != nil {
		writeErr(w, 500, wire.ErrorTypeAPI, "api_error", "", "the permit could not be kept")
		return
	}
	params.Authorization = stored
	wf, replayed, err := h.cfg.Engine.Create(ctx, params)
	switch {
	case errors.Is(err, settleflow.ErrIdempotencyKeyReused):
		h.paymentRequired(w, offer, CodeNonceUsed, "this permit has paid for another workflow (another product or payload); sign a new one")
		return
	case err != nil:
		h.engineError(w, err)
		return
	}
	h.uptoAnswer(w, offer, a, h.await(ctx, wf), replayed)
}

// uptoAnswer answers a create paid by an upto permit: 201, and
// PAYMENT-RESPONSE once the outcome is known.
func (h *Handler) uptoAnswer(w http.ResponseWriter, offer *Offer, a *UptoAuthorization, wf *settleflow.Workflow, replayed bool) {
	// The outcome, when the wait saw it: Settled is the charge taken (0:
	// nothing), Failed nothing taken and why.
	resp := SettlementResponse{Network: offer.Requirements.Network, Payer: a.From.Hex(), Amount: "0"}
	switch wf.Status {
	case settleflow.Settled:
		resp.Success = true
		if wf.Charged != nil {
			if units, err := settlement.BaseUnits(wf.Charged.Amount, 6); err == nil {
				resp.Amount = units.String()
			}
		}
		if wf.Settlement != nil {
			resp.Transaction = wf.Settlement.TxHash
		}
	case settleflow.Failed:
		resp.ErrorReason = "workflow_failed"
		if wf.Failure != nil {
			resp.ErrorReason = string(wf.Failure.Code)
		}
	}
	if wf.Status.Terminal() && wf.Status != settleflow.Canceled {
		if hdr, err := EncodeHeader(resp); err == nil {
			w.Header().Set(HeaderPaymentResponse, hdr)
		}
	}
	h.created(w, wf, replayed)
}

// created answers a paid create: 201 with the workflow and its access
// token.
func (h *Handler) created(w http.ResponseWriter, wf *settleflow.Workflow, replayed bool) {
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	w.Header().Set("Location", h.cfg.BaseURL+"/workflows/"+wf.ID)
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, Purchase{Object: "x402_purchase", Workflow: wf, AccessToken: h.accessToken(h.cfg.Environment, wf.ID)})
}

// pay settles a verified authorization and creates its workflow, one
// payer at a time, so that a second use of one authorization finds the
// first's workflow.
func (h *Handler) pay(ctx context.Context, w http.ResponseWriter, offer *Offer, in *createBody, auth *ExactAuthorization) {
	env := h.cfg.Environment
	customer := CustomerID(auth.From)
	unlock := h.locks.lock(auth.From)
	defer unlock()
	ref, owner, err := accountOf(ctx, h.cfg.Engine, env, customer)
	if err != nil {
		h.log.Error("x402 customer", zap.String("customer", customer), zap.Error(err))
		writeErr(w, 503, wire.ErrorTypeAPI, "funds_unavailable", "", "the wallet's customer balance cannot be read now; nothing was charged, retry")
		return
	}
	key := idempotencyKey(auth.Key())
	params := settleflow.CreateParams{Environment: env, Product: in.Product, CustomerID: customer, Payload: in.Payload, IdempotencyKey: key}
	paid, err := h.cfg.Facilitator.Pay(ctx, auth, ref, owner)
	used := errors.Is(err, ErrUsed)
	wait := err == nil
	if used {
		// Used before: by this server (the same request again finds its
		// workflow), by a front-runner who submitted it to the token, or
		// cut off by a crash before its deposit. If it paid the collector,
		// its deposit is made now unless it was (once per authorization).
		var dep common.Hash
		wait, dep, err = h.cfg.Facilitator.Recover(ctx, auth, ref, owner)
		if dep != (common.Hash{}) {
			h.log.Warn("x402 payment recovered: its deposit was made on its retry", zap.String("customer", customer), zap.String("deposit", dep.Hex()))
		}
	}
	var depErr *DepositError
	var sendErr *SendError
	switch {
	case used && err == nil && !wait:
		// Spent, and not on paying this collector (the wallet used the
		// nonce elsewhere), or paid and credited before: only the
		// workflow this authorization created answers it.
		wf, rerr := h.cfg.Engine.Replay(ctx, params)
		switch {
		case rerr != nil && !errors.Is(rerr, settleflow.ErrIdempotencyKeyReused):
			h.engineError(w, rerr)
		case wf == nil:
			h.paymentRequired(w, offer, CodeNonceUsed, "this authorization was used already, and no workflow of this request was paid with it; sign a new one")
		default:
			h.answerExact(w, offer, auth, wf, true, "")
		}
		return
	case used && err == nil:
		// Paid the collector and credited now (a front-run, or a crash
		// before the deposit): the workflow is created from it.
	case errors.As(err, &depErr):
		h.log.Error("x402 payment received, deposit failed", zap.String("customer", customer), zap.String("transfer", depErr.Transfer.Hex()), zap.Error(err))
		writeErr(w, 500, wire.ErrorTypeAPI, "deposit_failed", "", fmt.Sprintf("the payment %s was received but could not be credited to the wallet's balance yet; send the same request with the same PAYMENT-SIGNATURE again (it is credited once), the operator has been told", depErr.Transfer.Hex()))
		return
	case errors.As(err, &sendErr):
		h.log.Error("x402 transfer not confirmed", zap.String("customer", customer), zap.Error(err))
		writeErr(w, 502, wire.ErrorTypeAPI, "transfer_unconfirmed", "", "the payment's transfer was sent but not confirmed; retry with the same PAYMENT-SIGNATURE: it is charged at most once")
		return
	case used:
		h.log.Error("x402 recovering a used authorization", zap.String("customer", customer), zap.Error(err))
		writeErr(w, 503, wire.ErrorTypeAPI, "chain_unavailable", "", "the payment's use could not be read on chain now; nothing was charged twice, retry")
		return
	case err != nil:
		h.refuse(w, offer, err)
		return
	}
	wf, replayed, err := h.createPaid(ctx, params, wait, paid.Block)
	if err != nil {
		var ife *settleflow.InsufficientFundsError
		switch {
		case errors.Is(err, settleflow.ErrIdempotencyKeyReused):
			h.paymentRequired(w, offer, CodeNonceUsed, "this authorization has paid for another workflow (another product or payload); sign a new one")
		case used && errors.As(err, &ife):
			h.paymentRequired(w, offer, CodeNonceUsed, "this authorization was used already, and no workflow of this request was paid with it; sign a new one")
		case errors.As(err, &ife):
			// Paid and deposited, not yet applied within FundsWait: the same
			// payment again creates the workflow once it is.
			writeErr(w, 503, wire.ErrorTypeAPI, "payment_pending", "", fmt.Sprintf("the payment %s is deposited in the wallet's balance but not yet confirmed; send the same request with the same PAYMENT-SIGNATURE again to create the workflow (it is not charged twice)", paid.Transfer.Hex()))
		default:
			h.engineError(w, err)
		}
		return
	}
	tx := ""
	if !used {
		tx = paid.Transfer.Hex()
	}
	h.answerExact(w, offer, auth, h.await(ctx, wf), replayed, tx)
}

// answerExact answers a create paid by an exact authorization: 201,
// PAYMENT-RESPONSE naming the transfer (tx, "" when this request sent
// none).
func (h *Handler) answerExact(w http.ResponseWriter, offer *Offer, auth *ExactAuthorization, wf *settleflow.Workflow, replayed bool, tx string) {
	resp := SettlementResponse{Success: true, Network: offer.Requirements.Network, Payer: auth.From.Hex(), Amount: auth.Value.String(), Transaction: tx}
	if hdr, err := EncodeHeader(resp); err == nil {
		w.Header().Set(HeaderPaymentResponse, hdr)
	}
	h.created(w, wf, replayed)
}

// createPaid creates the workflow; when the payment was just deposited it
// waits, at most FundsWait, for the deposit to be confirmed and applied.
func (h *Handler) createPaid(ctx context.Context, p settleflow.CreateParams, wait bool, block uint64) (*settleflow.Workflow, bool, error) {
	deadline := time.Now().Add(h.cfg.FundsWait)
	if block > 0 {
		// The deposit just made: follow the chain until the engine's view
		// of funds has it, then create once.
		if err := awaitFunds(ctx, h.cfg.Engine, p.Environment, block, h.cfg.FundsWait, h.cfg.Facilitator.mine, h.log); err != nil {
			h.log.Warn("x402 deposit not yet followed", zap.Error(err))
		}
	}
	for {
		wf, replayed, err := h.cfg.Engine.Create(ctx, p)
		var ife *settleflow.InsufficientFundsError
		if err == nil || !wait || !errors.As(err, &ife) || time.Now().After(deadline) {
			return wf, replayed, err
		}
		if mine := h.cfg.Facilitator.mine; mine != nil {
			mine() // the deposit's confirmations, on a chain that mines on demand
		}
		if serr := h.cfg.Engine.SyncFunds(ctx, p.Environment); serr != nil {
			h.log.Warn("x402 funds sync", zap.Error(serr))
		}
		select {
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// awaitFunds follows env's chain (mining on a chain that mines on demand)
// until the engine's view of funds has passed block, for at most wait.
func awaitFunds(ctx context.Context, e *settleflow.Engine, env settleflow.Environment, block uint64, wait time.Duration, mine func(), log *zap.Logger) error {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		if mine != nil {
			mine()
		}
		if err := e.SyncFunds(ctx, env); err != nil && ctx.Err() == nil {
			log.Warn("x402 funds sync", zap.Error(err))
		}
		at, err := e.FundsBlock(ctx, env)
		if err == nil && at >= block {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("x402: the deposit in block %d was not followed within %s", block, wait)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// await polls the workflow until it ends or Config.Wait passes.
func (h *Handler) await(ctx context.Context, wf *settleflow.Workflow) *settleflow.Workflow {
	deadline := time.Now().Add(h.cfg.Wait)
	for !wf.Status.Terminal() && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return wf
		case <-time.After(100 * time.Millisecond):
		}
		next, err := h.cfg.Engine.Fetch(ctx, h.cfg.Environment, wf.ID)
		if err != nil {
			return wf
		}
		wf = next
	}
	return wf
}

// offer is what this request pays: the product's quote in the token's
// base units to the collector, exactly (exact) or at most (upto).
func (h *Handler) offer(product, scheme string, cents int64) (*Offer, error) {
	f := h.cfg.Facilitator
	amount, err := settlement.BaseUnits(cents, 6)
	if err != nil {
		return nil, err
	}
	d := f.Domain()
	if scheme == SchemeUpto {
		return &Offer{
			Resource: ResourceInfo{URL: h.cfg.BaseURL + "/workflows", Description: "a workflow of " + product + ", charged by its outcome, at most this", MimeType: "application/json"},
			Requirements: PaymentRequirements{
				Scheme: SchemeUpto, Network: f.Network(), Amount: amount.String(), Asset: d.Contract.Hex(),
				PayTo: f.Collector().Hex(), MaxTimeoutSeconds: int64(h.cfg.UptoTimeout / time.Second),
				Extra: map[string]string{"name": d.Name, "version": d.Version, "facilitatorAddress": f.Collector().Hex(), "product": product},
			},
			Domain: d,
		}, nil
	}
	return &Offer{
		Resource: ResourceInfo{URL: h.cfg.BaseURL + "/workflows", Description: "a workflow of " + product, MimeType: "application/json"},
		Requirements: PaymentRequirements{
			Scheme: SchemeExact, Network: f.Network(), Amount: amount.String(), Asset: d.Contract.Hex(),
			PayTo: f.Collector().Hex(), MaxTimeoutSeconds: int64(h.cfg.MaxTimeout / time.Second),
			Extra: map[string]string{"name": d.Name, "version": d.Version, "product": product},
		},
		Domain: d,
	}, nil
}

// refuse answers a payment error: 400 for what is malformed, otherwise 402
// with the offer and the reason.
func (h *Handler) refuse(w http.ResponseWriter, o *Offer, err error) {
	var e *Error
	if !errors.As(err, &e) {
		h.log.Error("x402 payment", zap.Error(err))
		writeErr(w, 503, wire.ErrorTypeAPI, "chain_unavailable", "", "the payment could not be checked on chain now; nothing was charged, retry")
		return
	}
	if e.Status == http.StatusPaymentRequired {
		h.paymentRequired(w, o, e.Code, e.Message)
		return
	}
	writeErr(w, e.Status, wire.ErrorTypeInvalidRequest, e.Code, HeaderPaymentSignature, e.Message)
}

// engineError answers an engine error: the request's fault as 400 (404
// for an unknown product), anything else 500.
func (h *Handler) engineError(w http.ResponseWriter, err error) {
	var inv *settleflow.InvalidError
	switch {
	case errors.As(err, &inv):
		status := 400
		if inv.Code == wire.CodeProductNotFound {
			status = 404
		}
		writeErr(w, status, wire.ErrorTypeInvalidRequest, string(inv.Code), inv.Param, inv.Message)
	default:
		h.log.Error("x402 create", zap.Error(err))
		writeErr(w, 500, wire.ErrorTypeAPI, "api_error", "", "the workflow could not be created")
	}
}

// readCreate reads {product, payload}: JSON, at most MaxBodyBytes, no
// other fields, a product for sale over x402.
func (h *Handler) readCreate(w http.ResponseWriter, r *http.Request) (*createBody, *Error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return nil, &Error{Status: 415, Code: string(wire.CodeUnsupportedMediaType), Message: "send the body as JSON with Content-Type: application/json"}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes))
	if err != nil {
		return nil, &Error{Status: 413, Code: string(wire.CodeBodyTooLarge), Message: fmt.Sprintf("the body could not be read within %d bytes", h.cfg.MaxBodyBytes)}
	}
	var in createBody
	if err := strictJSON(body, &in); err != nil {
		return nil, &Error{Status: 400, Code: string(wire.CodeParameterInvalid), Message: "the body must be {\"product\": ..., \"payload\": {...}}: " + err.Error()}
	}
	if h.products[in.Product] == "" {
		return nil, &Error{Status: 404, Code: string(wire.CodeProductNotFound), Message: fmt.Sprintf("product %q is not for sale over x402", in.Product)}
	}
	if len(bytes.TrimSpace(in.Payload)) == 0 {
		return nil, &Error{Status: 400, Code: string(wire.CodeParameterMissing), Message: "payload is required"}
	}
	return &in, nil
}

// accessToken is the bearer token that reads workflow id of env: an HMAC
// of both under AccessSecret, so nothing is stored and only the answer to
// the paid create holds it.
func (h *Handler) accessToken(env settleflow.Environment, id string) string {
	m := hmac.New(sha256.New, h.cfg.AccessSecret)
	fmt.Fprintf(m, "settleflow x402 access v1\x00%s\x00%s", env, id)
	return "x4at_" + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (h *Handler) fetch(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="settleflow-x402"`)
		writeErr(w, 401, wire.ErrorTypeAuthentication, "access_token_required", "", "send the purchase's accessToken as Authorization: Bearer <token>")
		return
	}
	env := h.cfg.Environment
	if !hmac.Equal([]byte(token), []byte(h.accessToken(env, id))) {
		writeErr(w, 404, wire.ErrorTypeInvalidRequest, "resource_missing", "", "no workflow "+id+" for this access token")
		return
	}
	wf, err := h.cfg.Engine.Fetch(r.Context(), env, id)
	if err != nil {
		writeErr(w, 404, wire.ErrorTypeInvalidRequest, "resource_missing", "", "no workflow "+id+" for this access token")
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, 200, wf)
}

// accountOf is a customer's balance in the settlement contract: its
// reference and the owner the contract records (zero for none).
func accountOf(ctx context.Context, e *settleflow.Engine, env settleflow.Environment, customer string) ([32]byte, common.Address, error) {
	c, err := e.Customer(ctx, env, customer)
	if err != nil {
		return [32]byte{}, common.Address{}, err
	}
	if c.Deposit == nil {
		return [32]byte{}, common.Address{}, fmt.Errorf("x402: %s does not charge customer balances", env)
	}
	ref, err := hexutil.Decode(c.Deposit.CustomerRef)
	if err != nil || len(ref) != 32 {
		return [32]byte{}, common.Address{}, fmt.Errorf("x402: customer %s: unreadable reference %q", customer, c.Deposit.CustomerRef)
	}
	var owner common.Address
	if c.Owner != nil {
		owner = common.HexToAddress(*c.Owner)
	}
	return [32]byte(ref), owner, nil
}

// Sweep credits the exact payments to the collector since block from whose
// deposit was never made to their wallets' balances, once each
// ([Facilitator.Sweep]). The reference server runs it at start and every
// few minutes.
func (h *Handler) Sweep(ctx context.Context, from uint64) ([]Swept, error) {
	return h.cfg.Facilitator.Sweep(ctx, from, func(ctx context.Context, payer common.Address) ([32]byte, common.Address, error) {
		return accountOf(ctx, h.cfg.Engine, h.cfg.Environment, CustomerID(payer))
	})
}

// keyedMutex serializes per key (a wallet, an authorization).
type keyedMutex[K comparable] struct {
	mu sync.Mutex
	m  map[K]*keyedEntry
}

type keyedEntry struct {
	mu   sync.Mutex
	refs int
}

func (k *keyedMutex[K]) lock(a K) func() {
	k.mu.Lock()
	if k.m == nil {
		k.m = map[K]*keyedEntry{}
	}
	e := k.m[a]
	if e == nil {
		e = &keyedEntry{}
		k.m[a] = e
	}
	e.refs++
	k.mu.Unlock()
	e.mu.Lock()
	return func() {
		e.mu.Unlock()
		k.mu.Lock()
		if e.refs--; e.refs == 0 {
			delete(k.m, a)
		}
		k.mu.Unlock()
	}
}
