package settleflow

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/settleflow/settleflow/wire"
)

// The engine's side of balance owners (contract version 3): a customer's
// balance is owned, on chain, by the address the operator sets with that
// address's own signed OwnerGrant. CreateOwnerGrant prepares a grant for
// the customer's wallet to sign; SetOwner sends a signed one and records
// it, so that `chain reconcile` tells the owners the engine set from any
// other.

// DefaultOwnerGrantOrigin is the origin of a grant created without one.
const DefaultOwnerGrantOrigin = "settleflow"

// DefaultOwnerGrantTTL is how long a grant created without a deadline
// stays valid: 15 minutes.
const DefaultOwnerGrantTTL = 15 * time.Minute

// MaxOwnerGrantTTL bounds a created grant's deadline: 24 hours ahead.
const MaxOwnerGrantTTL = 24 * time.Hour

// maxOwnerOrigin bounds an origin, in bytes (the contract hashes it).
const maxOwnerOrigin = 256

// ErrOwnersNotSupported: owners cannot be set in an environment whose
// charges are not paid from customer balances, or whose settler or Store
// does not set or record them. It wraps ErrRefundsNotSupported (over HTTP,
// 409 refunds_not_supported: no customer balance in that environment).
var ErrOwnersNotSupported = fmt.Errorf("%w (no balance owners in this environment)", ErrRefundsNotSupported)

// OwnerGrantParams ask for an unsigned owner grant.
type OwnerGrantParams struct {
	Environment Environment
	CustomerID  string
	// Address is the address that will own the balance, 0x-hex.
	Address string
	// Origin, optional, is shown by the wallet that signs (a customer
	// portal's origin, or the application's name): 1 to 256 bytes of
	// printable UTF-8. Default DefaultOwnerGrantOrigin.
	Origin string
	// Deadline, optional: when the grant expires, in whole seconds, after
	// now and at most MaxOwnerGrantTTL ahead. Default now +
	// DefaultOwnerGrantTTL.
	Deadline time.Time
}

// SetOwnerParams send a customer's signed owner grant.
type SetOwnerParams struct {
	Environment Environment
	CustomerID  string
	Grant       OwnerGrant
	// IdempotencyKey, optional: the same key with the same parameters
	// within 24 h answers the first owner change instead of sending again.
	IdempotencyKey string
}

// owners returns env's settler as an OwnerSetter and the Store's record of
// grants, or ErrOwnersNotSupported.
func (e *Engine) owners(env Environment) (OwnerSetter, OwnerGrantStore, error) {
	if _, ok := e.funds(env); !ok {
		return nil, nil, ErrOwnersNotSupported
	}
	os, ok := e.settler.(OwnerSetter)
	if !ok {
		return nil, nil, fmt.Errorf("%w: the settler does not set owners", ErrOwnersNotSupported)
	}
	gs, ok := e.store.(OwnerGrantStore)
	if !ok {
		return nil, nil, fmt.Errorf("%w: the Store does not record owner grants", ErrOwnersNotSupported)
	}
	return os, gs, nil
}

// checkOrigin refuses an origin a wallet could not show plainly.
func checkOrigin(origin string) error {
	ok := origin != "" && len(origin) <= maxOwnerOrigin && utf8.ValidString(origin)
	for _, r := range origin {
		if !ok {
			break
		}
		ok = unicode.IsPrint(r)
	}
	if !ok {
		return &InvalidError{Code: CodeParameterInvalid, Param: "origin", Message: "origin must be 1 to 256 bytes of printable UTF-8 (for example https://app.example.com)"}
	}
	return nil
}

// CreateOwnerGrant returns an unsigned grant of p.Address as the owner of
// the customer's balance in p.Environment, with a fresh random nonce, and
// the EIP-712 typed data the address's wallet signs (eth_signTypedData_v4).
// It records and sends nothing: SetOwner sends the signed grant.
//
// Errors: an *InvalidError naming customerId, address, origin or deadline;
// ErrOwnersNotSupported.
func (e *Engine) CreateOwnerGrant(ctx context.Context, p OwnerGrantParams) (*OwnerGrantRequest, error) {
	if !p.Environment.Valid() {
		return nil, fmt.Errorf("settleflow: environment %q is neither test nor live", p.Environment)
	}
	if err := checkCustomerID(p.CustomerID); err != nil {
		return nil, err
	}
	os, _, err := e.owners(p.Environment)
	if err != nil {
		return nil, err
	}
	if p.Origin == "" {
		p.Origin = DefaultOwnerGrantOrigin
	}
	if err := checkOrigin(p.Origin); err != nil {
		return nil, err
	}
	now := e.now()
	switch {
	case p.Deadline.IsZero():
		p.Deadline = now.Add(DefaultOwnerGrantTTL).Truncate(time.Second)
	case p.Deadline.Nanosecond() != 0 || !p.Deadline.After(now) || p.Deadline.After(now.Add(MaxOwnerGrantTTL)):
		return nil, &InvalidError{Code: CodeParameterInvalid, Param: "deadline",
			Message: "deadline must be a time in Unix seconds after now and at most 24 hours ahead (default: 15 minutes ahead)"}
	}
	var nonce [32]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, err
	}
	g := OwnerGrant{Owner: p.Address, Nonce: "0x" + hex.EncodeToString(nonce[:]), Origin: p.Origin, Deadline: p.Deadline.UTC()}
	td, err := os.OwnerGrantTypedData(p.Environment, p.CustomerID, g)
	if err != nil {
		return nil, err
	}
	return &OwnerGrantRequest{Object: "owner_grant", Livemode: p.Environment.Livemode(), CustomerID: p.CustomerID,
		Address: ownerAddress(p.Address), Nonce: g.Nonce, Origin: g.Origin, Deadline: g.Deadline.Unix(), TypedData: td}, nil
}

// ownerAddress is an address as the engine names it: 0x and lowercase
// hex (the settler checked its form).
func ownerAddress(a string) string {
	return "0x" + strings.ToLower(strings.TrimPrefix(a, "0x"))
}

// SetOwner sends the customer's signed grant to env's contract through
// the operator (the settler checks it first, off chain and against the
// contract as it is), records it, and returns the owner change with its
// transaction, Effective "now" if the customer had no owner, else
// "after_notice" (as the contract had it when the grant was sent). It
// returns whether the answer is a replay of an earlier call with the same
// idempotency key.
//
// Errors: an *InvalidError naming customerId, address, nonce, origin,
// deadline or signature (expired, nonce used, a signature of another
// customer, chain, contract, origin or key, an address that owns the
// balance already: nothing is sent), ErrIdempotencyKeyReused,
// ErrOwnersNotSupported.
func (e *Engine) SetOwner(ctx context.Context, p SetOwnerParams) (*OwnerChange, bool, error) {
	if !p.Environment.Valid() {
		return nil, false, fmt.Errorf("settleflow: environment %q is neither test nor live", p.Environment)
	}
	if err := checkCustomerID(p.CustomerID); err != nil {
		return nil, false, err
	}
	if p.IdempotencyKey != "" {
		if err := CheckIdempotencyKey(p.IdempotencyKey); err != nil {
			return nil, false, err
		}
	}
	if err := checkOrigin(p.Grant.Origin); err != nil {
		return nil, false, err
	}
	os, gs, err := e.owners(p.Environment)
	if err != nil {
		return nil, false, err
	}
	hash := ownerRequestHash(p)
	if p.IdempotencyKey != "" {
		rec, err := gs.OwnerGrantByKey(ctx, p.Environment, p.IdempotencyKey, e.now().Add(-IdempotencyTTL))
		switch {
		case err == nil && rec.RequestHash != hash:
			return nil, false, ErrIdempotencyKeyReused
		case err == nil:
			return ownerChange(rec), true, nil
		case !errors.Is(err, ErrNotFound):
			return nil, false, err
		}
	}
	f, _ := e.funds(p.Environment)
	ref, err := f.CustomerRef(p.Environment, p.CustomerID)
	if err != nil {
		return nil, false, fmt.Errorf("settleflow: customer reference: %w", err)
	}
	current, err := os.Owner(ctx, p.Environment, p.CustomerID)
	if err != nil {
		return nil, false, err
	}
	effective := wire.OwnerEffectiveNow
	if current != "" {
		effective = wire.OwnerEffectiveAfterNotice
	}
	tx, err := os.SetOwner(ctx, p.Environment, p.CustomerID, p.Grant)
	if err != nil {
		return nil, false, err
	}
	rec := OwnerGrantRecord{Environment: p.Environment, CustomerID: p.CustomerID, Ref: ref, Owner: ownerAddress(p.Grant.Owner),
		Nonce: strings.ToLower(p.Grant.Nonce), Origin: p.Grant.Origin, Deadline: p.Grant.Deadline.UTC(), TxHash: tx, Effective: effective,
		IdempotencyKey: p.IdempotencyKey, RequestHash: hash, CreatedAt: e.now()}
	if p.IdempotencyKey == "" {
		rec.RequestHash = ""
	}
	// The transaction is sent: record it even if the caller went away.
	stored, existed, err := gs.InsertOwnerGrant(context.WithoutCancel(ctx), rec)
	if err != nil {
		return nil, false, fmt.Errorf("settleflow: recording the owner grant sent in %s: %w", tx, err)
	}
	if existed {
		// The same grant sent before (the settler answered its first
		// transaction): answer as then.
		rec = *stored
	}
	e.log.Info("owner grant sent", zap.String("env", string(p.Environment)), zap.String("customer", p.CustomerID),
		zap.String("owner", rec.Owner), zap.String("tx", rec.TxHash), zap.String("effective", rec.Effective))
	return ownerChange(&rec), false, nil
}

func ownerChange(r *OwnerGrantRecord) *OwnerChange {
	return &OwnerChange{Object: "owner_change", Livemode: r.Environment.Livemode(), CustomerID: r.CustomerID, Address: r.Owner,
		Status: "sent", TxHash: r.TxHash, Effective: r.Effective}
}

func ownerRequestHash(p SetOwnerParams) string {
	h := sha256.New()
	g := p.Grant
	for _, part := range []string{p.CustomerID, strings.ToLower(g.Owner), strings.ToLower(g.Nonce), g.Origin,
		strconv.FormatInt(g.Deadline.Unix(), 10), strings.ToLower(g.Signature)} {
		fmt.Fprintf(h, "%d:%s", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil))
}
