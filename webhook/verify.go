package webhook

import (
	"net/http"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/webhook/signature"
)

// Verification lives in package webhook/signature, which depends on nothing
// outside the standard library and package wire; the names below forward
// to it so that receivers written against this package keep compiling.

// DefaultTolerance is how far a signature's timestamp may lie from the
// receiver's clock before it is rejected (signature.DefaultTolerance).
const DefaultTolerance = signature.DefaultTolerance

// Reason says why a signature did not verify (signature.Reason).
type Reason = signature.Reason

// The reasons of a [SignatureVerificationError].
const (
	// ReasonMissingHeader: the signature header is absent or empty.
	ReasonMissingHeader = signature.ReasonMissingHeader
	// ReasonMalformedHeader: the header cannot be parsed.
	ReasonMalformedHeader = signature.ReasonMalformedHeader
	// ReasonNoSignature: the header carries no v1 signature.
	ReasonNoSignature = signature.ReasonNoSignature
	// ReasonTimestampOutsideTolerance: the signed timestamp is too old or too far ahead.
	ReasonTimestampOutsideTolerance = signature.ReasonTimestampOutsideTolerance
	// ReasonNoMatchingSignature: no signature matches the body and secret.
	ReasonNoMatchingSignature = signature.ReasonNoMatchingSignature
	// ReasonBadSecret: the secret is not "whsec_" followed by standard base64.
	ReasonBadSecret = signature.ReasonBadSecret
	// ReasonInvalidPayload: the signature is valid but the body is not an event.
	ReasonInvalidPayload = signature.ReasonInvalidPayload
)

// SignatureVerificationError is returned when a delivery does not verify
// (signature.VerificationError).
type SignatureVerificationError = signature.VerificationError

// VerifyOptions tune verification (signature.VerifyOptions).
type VerifyOptions = signature.VerifyOptions

// ConstructEvent verifies a delivery and returns its event (see
// signature.ConstructEvent).
func ConstructEvent(rawBody []byte, header string, secret string) (settleflow.Event, error) {
	return signature.ConstructEvent(rawBody, header, secret)
}

// ConstructEventWithOptions is [ConstructEvent] with a chosen tolerance and
// clock.
func ConstructEventWithOptions(rawBody []byte, header string, secret string, opts VerifyOptions) (settleflow.Event, error) {
	return signature.ConstructEventWithOptions(rawBody, header, secret, opts)
}

// VerifySignature checks the signature header of rawBody as [ConstructEvent]
// does, without parsing the body.
func VerifySignature(rawBody []byte, header string, secret string, opts VerifyOptions) error {
	return signature.VerifySignature(rawBody, header, secret, opts)
}

// VerifyStandard verifies the Standard Webhooks headers of a delivery (see
// signature.VerifyStandard).
func VerifyStandard(rawBody []byte, h http.Header, secret string) error {
	return signature.VerifyStandard(rawBody, h, secret)
}

// VerifyStandardWithOptions is [VerifyStandard] with a chosen tolerance and
// clock.
func VerifyStandardWithOptions(rawBody []byte, h http.Header, secret string, opts VerifyOptions) error {
	return signature.VerifyStandardWithOptions(rawBody, h, secret, opts)
}
