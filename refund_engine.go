package settleflow

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/internal/stage"
	"go.uber.org/zap"
)

// RefundParams asks for a refund of a Settled workflow's charge.
type RefundParams struct {
	Environment Environment
	WorkflowID  string
	// Amount in minor units; 0 refunds all that is left to refund (the
	// charge less its refunds that are not Failed).
	Amount int64
	// Reason, optional, at most 500 characters.
	Reason string
	// IdempotencyKey, optional: the same key with the same parameters
	// within IdempotencyTTL (24 h) of the first returns the first refund
	// instead of a new one, also from another engine sharing the Store at
	// the same moment; after that the key is free again.
	IdempotencyKey string
}

// RefundListParams select a page of refunds; see RefundQuery.
type RefundListParams = RefundQuery

// RefundPage is one page of refunds, newest first.
type RefundPage struct {
	Data    []*Refund
	HasMore bool
}

// maxRefundReason bounds a refund's reason, in characters.
const maxRefundReason = 500

// Refund records a refund of part or all of a Settled workflow's charge and
// returns it Pending; the engine settles it on chain in the background
// (refund.succeeded or refund.failed follows). It returns whether the
// refund is a replay of an earlier call with the same idempotency key.
//
// Errors: ErrNotFound (no such workflow in the environment), a *StateError
// with Op "refund" (the workflow is not Settled; over HTTP 409
// workflow_not_settled), a *RefundableError (the amount is more than is left
// to refund), an *InvalidError (amount below 0, reason too long, bad
// idempotency key), ErrIdempotencyKeyReused, ErrRefundsNotSupported (the
// environment's charges are not paid from customer balances).
func (e *Engine) Refund(ctx context.Context, p RefundParams) (*Refund, bool, error) {
	if !p.Environment.Valid() {
		return nil, false, fmt.Errorf("settleflow: environment %q is neither test nor live", p.Environment)
	}
	switch {
	case p.Amount < 0:
		return nil, false, &InvalidError{Code: CodeParameterInvalid, Param: "amount", Message: "amount must be an integer of at least 1 (minor units)"}
	case !utf8.ValidString(p.Reason) || utf8.RuneCountInString(p.Reason) > maxRefundReason:
		return nil, false, &InvalidError{Code: CodeParameterInvalid, Param: "reason", Message: "reason must be valid UTF-8 of at most 500 characters"}
	}
	if p.IdempotencyKey != "" {
		if err := CheckIdempotencyKey(p.IdempotencyKey); err != nil {
			return nil, false, err
		}
	}
	if !ids.Valid(ids.Workflow, p.WorkflowID) {
		return nil, false, ErrNotFound
	}
	if _, ok := e.funds(p.Environment); !ok {
		return nil, false, ErrRefundsNotSupported
	}
	now := e.now()
	r := &Refund{ID: ids.New(ids.Refund, now), Object: "refund", Livemode: p.Environment.Livemode(), WorkflowID: p.WorkflowID,
		Amount: p.Amount, Currency: Currency, Reason: p.Reason, Status: RefundPending, CreatedAt: now, UpdatedAt: now}
	in := RefundInsert{Refund: r}
	if p.IdempotencyKey != "" {
		in.IdempotencyKey = p.IdempotencyKey
		in.RequestHash = refundHash(p)
	}
	res, err := e.store.InsertRefund(ctx, in)
	if err != nil {
		return nil, false, err
	}
	if res.Existing {
		if res.ExistingHash != in.RequestHash {
			return nil, false, ErrIdempotencyKeyReused
		}
		return res.Refund, true, nil
	}
	e.log.Info("refund recorded", zap.String("refund", res.Refund.ID), zap.String("workflow", p.WorkflowID), zap.Int64("amount", res.Refund.Amount))
	stage.Signal(e.refundsWake)
	return res.Refund, false, nil
}

func refundHash(p RefundParams) string {
	h := sha256.New()
	for _, part := range []string{p.WorkflowID, strconv.FormatInt(p.Amount, 10), p.Reason} {
		fmt.Fprintf(h, "%d:%s", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// FetchRefund returns the refund with id in env, or ErrNotFound.
func (e *Engine) FetchRefund(ctx context.Context, env Environment, id string) (*Refund, error) {
	if !env.Valid() {
		return nil, fmt.Errorf("settleflow: environment %q is neither test nor live", env)
	}
	if !ids.Valid(ids.Refund, id) {
		return nil, ErrNotFound
	}
	return e.store.GetRefund(ctx, env, id)
}

// ListRefunds returns one page of refunds, newest first. Errors are
// *InvalidError naming the parameter as on the wire (workflowId, status,
// limit, startingAfter, endingBefore).
func (e *Engine) ListRefunds(ctx context.Context, p RefundListParams) (*RefundPage, error) {
	if err := checkPage(p.Environment, &p.Limit, p.StartingAfter, p.EndingBefore, ids.Refund, "a refund"); err != nil {
		return nil, err
	}
	if p.Status != "" && !p.Status.Valid() {
		return nil, &InvalidError{Code: CodeParameterInvalid, Param: "status", Message: "status must be one of Pending, Succeeded, Failed"}
	}
	if p.WorkflowID != "" && !ids.Valid(ids.Workflow, p.WorkflowID) {
		return nil, &InvalidError{Code: CodeParameterInvalid, Param: "workflowId", Message: "workflowId must be a workflow id (wf_…)"}
	}
	rs, more, err := e.store.ListRefunds(ctx, p)
	if err != nil {
		return nil, err
	}
	return &RefundPage{Data: rs, HasMore: more}, nil
}

// The refund stage: Pending refunds are claimed, submitted to the settler
// and checked until the chain confirms or refuses them, in batches, like
// charges. Its one rule is the settle stage's: a refund is Failed (nothing
// was given back) only when the settler has said so for that very refund.
