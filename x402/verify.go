package x402

import (
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// ValidBeforeMargin is how long an authorization must stay valid after it
// is verified: the time to submit it and have it mined (the official
// facilitator asks 6 s). An authorization expiring sooner is refused as
// expired before anything is sent.
const ValidBeforeMargin = 6 * time.Second

// MaxValidity bounds how long an authorization (exact) or permit (upto)
// may stay valid: one valid longer is refused. The engine remembers which
// workflow an authorization paid for 24 hours (its idempotency key); an
// authorization that expires well before cannot be replayed after.
const MaxValidity = 12 * time.Hour

// Offer is what the server asks of one request: the requirements it lists
// in accepts, the resource, and the token's EIP-712 domain.
type Offer struct {
	Resource     ResourceInfo
	Requirements PaymentRequirements
	Domain       Domain
}

// Network is the CAIP-2 id of an EVM chain.
func Network(chainID *big.Int) string { return "eip155:" + chainID.String() }

// PaymentRequired is the offer as a PAYMENT-REQUIRED object, with reason
// as its error.
func (o *Offer) PaymentRequired(reason string) *PaymentRequired {
	return &PaymentRequired{X402Version: Version, Error: reason, Resource: o.Resource, Accepts: []PaymentRequirements{o.Requirements}}
}

// Verify checks a payment against the offer at now, all that needs no
// chain, in the order the exact scheme's verification lists: the version,
// the accepted requirements against the offer (scheme, network, asset,
// amount, payee, resource, then the rest), the resource, the payload's
// form, the authorization's recipient and value, its validity window
// (valid now, and still for ValidBeforeMargin) and the payer's signature.
// Errors are [*Error]s: 400 for what is malformed, 402 for a payment that
// does not pay this offer. The nonce, the payer's funds and the token's own
// checks are the chain's ([Facilitator]).
func (o *Offer) Verify(p *PaymentPayload, now time.Time) (*ExactAuthorization, error) {
	if err := o.checkAccepted(p); err != nil {
		return nil, err
	}
	return o.verifyExact(p, now)
}

// VerifyUpto is Verify for an upto offer: the accepted requirements
// against the offer, then the permit (its spender, recipient,
// facilitator, token, maximum, window and signature). The nonce, the
// payer's allowance and funds are the chain's ([Facilitator.CheckUpto]).
func (o *Offer) VerifyUpto(p *PaymentPayload, now time.Time) (*UptoAuthorization, error) {
	if err := o.checkAccepted(p); err != nil {
		return nil, err
	}
	return o.verifyUpto(p.Payload, now)
}

// checkAccepted checks the payment's version, accepted requirements and
// resource against the offer.
func (o *Offer) checkAccepted(p *PaymentPayload) error {
	want, got := o.Requirements, p.Accepted
	if p.X402Version != Version {
		return &Error{Status: 400, Code: CodeVersion, Message: "x402Version must be 2"}
	}
	if got == nil {
		return malformed("the payment names no accepted requirements (accepted is required)")
	}
	switch {
	case got.Scheme != want.Scheme:
		return refused(CodeScheme, "the payment uses scheme %q; this resource accepts %q", got.Scheme, want.Scheme)
	case got.Network != want.Network:
		return refused(CodeNetwork, "the payment is for network %q; this resource is paid on %q", got.Network, want.Network)
	case !strings.EqualFold(got.Asset, want.Asset):
		return refused(CodeAsset, "the payment is in asset %s; this resource is paid in %s", got.Asset, want.Asset)
	case got.Amount != want.Amount:
		return refused(CodeAmount, "the payment is for amount %s; this resource costs %s", got.Amount, want.Amount)
	case !strings.EqualFold(got.PayTo, want.PayTo):
		return refused(CodeRecipient, "the payment is to %s; this resource is paid to %s", got.PayTo, want.PayTo)
	case got.Extra["product"] != want.Extra["product"]:
		return refused(CodeResource, "the payment is for product %q; this request is for %q", got.Extra["product"], want.Extra["product"])
	case got.MaxTimeoutSeconds != want.MaxTimeoutSeconds || !sameExtra(got.Extra, want.Extra):
		return refused(CodeRequirements, "the accepted requirements differ from the ones offered (maxTimeoutSeconds or extra)")
	}
	if p.Resource != nil && p.Resource.URL != o.Resource.URL {
		return refused(CodeResource, "the payment is for resource %q; this request is %q", p.Resource.URL, o.Resource.URL)
	}
	return nil
}

// verifyExact checks an exact payload against the offer at now.
func (o *Offer) verifyExact(p *PaymentPayload, now time.Time) (*ExactAuthorization, error) {
	want := o.Requirements
	a, err := ParseExact(p.Payload)
	if err != nil {
		return nil, err
	}
	payTo := common.HexToAddress(want.PayTo)
	value, _ := new(big.Int).SetString(want.Amount, 10)
	if a.To != payTo {
		return nil, refused(CodeRecipient, "the authorization pays %s; this resource is paid to %s", a.To.Hex(), payTo.Hex())
	}
	if a.Value.Cmp(value) != 0 {
		return nil, refused(CodeAmount, "the authorization is for %s; this resource costs %s", a.Value, value)
	}
	unix := now.Unix()
	if a.ValidBefore.Cmp(big.NewInt(unix+int64(ValidBeforeMargin/time.Second))) < 0 {
		return nil, refused(CodeValidBefore, "the authorization expires at %s (unix), before %d: now plus the %s it takes to settle", a.ValidBefore, unix+int64(ValidBeforeMargin/time.Second), ValidBeforeMargin)
	}
	if a.ValidBefore.Cmp(big.NewInt(unix+int64(MaxValidity/time.Second))) > 0 {
		return nil, refused(CodeValidBefore, "the authorization is valid until %s (unix), more than %s from now: an authorization is answered by its workflow for 24 hours, so it may not outlive that", a.ValidBefore, MaxValidity)
	}
	if a.ValidAfter.Cmp(big.NewInt(unix)) >= 0 {
		return nil, refused(CodeValidAfter, "the authorization is valid only after %s (unix); it is %d", a.ValidAfter, unix)
	}
	signer, serr := a.Signer(o.Domain)
	if serr != nil {
		return nil, refused(CodeSignature, "the signature is %v", serr)
	}
	if signer != a.From {
		return nil, refused(CodeSignature, "the signature is not %s's over this authorization for token %s on chain %s (it recovers %s)", a.From.Hex(), o.Domain.Contract.Hex(), o.Domain.ChainID, signer.Hex())
	}
	return a, nil
}

// sameExtra compares the extra maps, absent and empty alike.
func sameExtra(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
