package signature

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultShortName is the service's short name used when none is configured;
// the signature header is the short name followed by "-signature".
const DefaultShortName = "service"

// DefaultHeader is the name of the signature header with the
// default short name: the header [ConstructEvent] verifies.
const DefaultHeader = DefaultShortName + "-signature"

// The Standard Webhooks headers sent with every delivery.
const (
	HeaderWebhookID        = "webhook-id"
	HeaderWebhookTimestamp = "webhook-timestamp"
	HeaderWebhookSignature = "webhook-signature"
)

// HeaderName returns the signature header name for a service short
// name: shortName + "-signature", or [DefaultHeader] if shortName is
// empty.
func HeaderName(shortName string) string {
	if shortName == "" {
		return DefaultHeader
	}
	return shortName + "-signature"
}

// Sign returns the value of the signature header for body sent at t:
// "t=<unix seconds>,v1=<hex HMAC-SHA256(key, t.body)>" with one v1 per secret,
// in the order given. It fails only if a secret is not a valid whsec_ secret.
func Sign(t time.Time, body []byte, secrets ...string) (string, error) {
	keys, err := secretKeys(secrets)
	if err != nil {
		return "", err
	}
	return sign(t.Unix(), body, keys), nil
}

// SignStandard returns the value of the Standard Webhooks webhook-signature
// header for the message id and body sent at t: "v1,<base64 HMAC-SHA256(key,
// id.t.body)>" per secret, separated by spaces.
func SignStandard(id string, t time.Time, body []byte, secrets ...string) (string, error) {
	keys, err := secretKeys(secrets)
	if err != nil {
		return "", err
	}
	return signStandard(id, t.Unix(), body, keys), nil
}

func secretKeys(secrets []string) ([][]byte, error) {
	keys := make([][]byte, len(secrets))
	for i, s := range secrets {
		k, err := Key(s)
		if err != nil {
			return nil, err
		}
		keys[i] = k
	}
	return keys, nil
}

// sign computes the service signature header value.
func sign(t int64, body []byte, keys [][]byte) string {
	ts := strconv.FormatInt(t, 10)
	var b strings.Builder
	b.Grow(2 + len(ts) + len(keys)*(4+2*sha256.Size))
	b.WriteString("t=")
	b.WriteString(ts)
	for _, k := range keys {
		b.WriteString(",v1=")
		b.WriteString(hex.EncodeToString(macService(k, ts, body)))
	}
	return b.String()
}

// signStandard computes the webhook-signature header value.
func signStandard(id string, t int64, body []byte, keys [][]byte) string {
	ts := strconv.FormatInt(t, 10)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("v1,")
		b.WriteString(base64.StdEncoding.EncodeToString(macStandard(k, id, ts, body)))
	}
	return b.String()
}

func macService(key []byte, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

func macStandard(key []byte, id, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// SetHeaders sets on h every signature header of a delivery of body, the
// event id, sent at t and signed with each of keys (see [Key]): header (the
// service's signature header, see [HeaderName]) and the Standard Webhooks
// headers [HeaderWebhookID], [HeaderWebhookTimestamp] and
// [HeaderWebhookSignature]. A sender that signs many deliveries with the
// same secrets decodes them once with Key and calls SetHeaders.
func SetHeaders(h http.Header, header, id string, t time.Time, body []byte, keys ...[]byte) {
	ts := t.Unix()
	h.Set(header, sign(ts, body, keys))
	h.Set(HeaderWebhookID, id)
	h.Set(HeaderWebhookTimestamp, strconv.FormatInt(ts, 10))
	h.Set(HeaderWebhookSignature, signStandard(id, ts, body, keys))
}
