package webhook

import (
	"net/http"
	"time"

	"github.com/settleflow/settleflow/webhook/signature"
)

// DefaultShortName is the service's short name used when none is configured;
// the signature header is the short name followed by "-signature".
const DefaultShortName = signature.DefaultShortName

// DefaultSignatureHeader is the name of the signature header with the
// default short name: the header [ConstructEvent] verifies.
const DefaultSignatureHeader = signature.DefaultHeader

// The Standard Webhooks headers sent with every delivery.
const (
	// HeaderWebhookID carries the event id.
	HeaderWebhookID = signature.HeaderWebhookID
	// HeaderWebhookTimestamp carries the signing time in Unix seconds.
	HeaderWebhookTimestamp = signature.HeaderWebhookTimestamp
	// HeaderWebhookSignature carries the Standard Webhooks signatures.
	HeaderWebhookSignature = signature.HeaderWebhookSignature
)

// SignatureHeaderName returns the signature header name for a service short
// name (signature.HeaderName).
func SignatureHeaderName(shortName string) string { return signature.HeaderName(shortName) }

// Sign returns the value of the signature header for body sent at t, one v1
// per secret (signature.Sign).
func Sign(t time.Time, body []byte, secrets ...string) (string, error) {
	return signature.Sign(t, body, secrets...)
}

// SignStandard returns the value of the Standard Webhooks webhook-signature
// header (signature.SignStandard).
func SignStandard(id string, t time.Time, body []byte, secrets ...string) (string, error) {
	return signature.SignStandard(id, t, body, secrets...)
}

// setDeliveryHeaders sets every header of a delivery of body, the event id,
// signed at t (Unix seconds) with keys.
func setDeliveryHeaders(h http.Header, sigHeader, id string, t int64, body []byte, keys [][]byte) {
	h.Set("Content-Type", "application/json")
	signature.SetHeaders(h, sigHeader, id, time.Unix(t, 0), body, keys...)
}
