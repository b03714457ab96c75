package signature

import (
	"crypto/hmac"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/settleflow/settleflow/wire"
)

// DefaultTolerance is how far a signature's timestamp may lie from the
// receiver's clock, in the past or the future, before it is rejected.
const DefaultTolerance = 5 * time.Minute

// Limits of what the parsers look at, so a hostile header costs little.
const (
	maxHeaderLen  = 8 << 10
	maxSignatures = 32
)

// Reason says why a signature did not verify.
type Reason string

// The reasons of a [VerificationError].
const (
	// ReasonMissingHeader: the signature header (or a Standard Webhooks
	// header) is absent or empty.
	ReasonMissingHeader Reason = "missing_header"
	// ReasonMalformedHeader: the header cannot be parsed, for example it has
	// no t= timestamp or the timestamp is not an integer.
	ReasonMalformedHeader Reason = "malformed_header"
	// ReasonNoSignature: the header carries no v1 signature.
	ReasonNoSignature Reason = "no_v1_signature"
	// ReasonTimestampOutsideTolerance: the signed timestamp is older, or
	// further in the future, than the tolerance allows.
	ReasonTimestampOutsideTolerance Reason = "timestamp_outside_tolerance"
	// ReasonNoMatchingSignature: no signature matches the body and secret.
	ReasonNoMatchingSignature Reason = "no_matching_signature"
	// ReasonBadSecret: the secret given to the verifier is not "whsec_"
	// followed by standard base64.
	ReasonBadSecret Reason = "bad_secret"
	// ReasonInvalidPayload: the signature is valid but the body is not a
	// settleflow event.
	ReasonInvalidPayload Reason = "invalid_payload"
)

// VerificationError is returned when a delivery does not verify.
// Reason tells why; a receiver answers 400 whatever it is.
type VerificationError struct {
	Reason Reason
	// Detail adds context for logs; it never contains the secret.
	Detail string
}

func (e *VerificationError) Error() string {
	if e.Detail == "" {
		return "webhook: signature verification failed: " + string(e.Reason)
	}
	return "webhook: signature verification failed: " + string(e.Reason) + ": " + e.Detail
}

func verifyErr(r Reason, format string, args ...any) error {
	return &VerificationError{Reason: r, Detail: fmt.Sprintf(format, args...)}
}

// VerifyOptions tune verification. The zero value verifies with
// [DefaultTolerance] against the system clock.
type VerifyOptions struct {
	// Tolerance is the largest accepted distance between the signed
	// timestamp and now, either way. Zero means DefaultTolerance.
	Tolerance time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (o VerifyOptions) window() (now, tol int64) {
	n := time.Now
	if o.Now != nil {
		n = o.Now
	}
	t := o.Tolerance
	if t <= 0 {
		t = DefaultTolerance
	}
	return n().Unix(), int64(t / time.Second)
}

// ConstructEvent verifies a delivery and returns its event. rawBody is the
// request body exactly as received, header the value of the signature header
// (service-signature by default) and secret the endpoint's whsec_ secret.
// The header must carry a timestamp within [DefaultTolerance] of now and at
// least one v1 signature that matches; signatures are compared in constant
// time. A failure is a *[VerificationError].
//
// The verified body must be a JSON object with a non-empty id and type
// (else [ReasonInvalidPayload]); a missing createdAt is tolerated (the
// event's CreatedAt is then the zero time), a createdAt that is not an RFC
// 3339 timestamp is not. The Node.js and Python clients decide alike (the
// shared vectors in testdata/webhooks.json check it).
func ConstructEvent(rawBody []byte, header string, secret string) (wire.Event, error) {
	return ConstructEventWithOptions(rawBody, header, secret, VerifyOptions{})
}

// ConstructEventWithOptions is [ConstructEvent] with a chosen tolerance and
// clock.
func ConstructEventWithOptions(rawBody []byte, header string, secret string, opts VerifyOptions) (wire.Event, error) {
	if err := VerifySignature(rawBody, header, secret, opts); err != nil {
		return wire.Event{}, err
	}
	var ev wire.Event
	if err := json.Unmarshal(rawBody, &ev); err != nil {
		return wire.Event{}, verifyErr(ReasonInvalidPayload, "%v", err)
	}
	if ev.ID == "" || ev.Type == "" {
		return wire.Event{}, verifyErr(ReasonInvalidPayload, "event without id or type")
	}
	return ev, nil
}

// VerifySignature checks the signature header of rawBody as [ConstructEvent]
// does, without parsing the body.
func VerifySignature(rawBody []byte, header string, secret string, opts VerifyOptions) error {
	if header == "" {
		return verifyErr(ReasonMissingHeader, "")
	}
	t, sigs, err := parseSignatureHeader(header)
	if err != nil {
		return err
	}
	key, err := Key(secret)
	if err != nil {
		return verifyErr(ReasonBadSecret, "")
	}
	if err := checkTimestamp(t, opts); err != nil {
		return err
	}
	want := macService(key, strconv.FormatInt(t, 10), rawBody)
	for _, s := range sigs {
		if hmac.Equal(s, want) {
			return nil
		}
	}
	return verifyErr(ReasonNoMatchingSignature, "")
}

func checkTimestamp(t int64, opts VerifyOptions) error {
	now, tol := opts.window()
	if t < now-tol || t > now+tol {
		return verifyErr(ReasonTimestampOutsideTolerance, "timestamp %d, now %d", t, now)
	}
	return nil
}

// parseSignatureHeader parses "t=<int>,v1=<hex>[,v1=<hex>...]". Parts are
// comma-separated key=value pairs; unknown keys and v1 values that are not
// hex-encoded SHA-256 MACs are ignored (so newer schemes can be added), t
// must appear exactly once.
func parseSignatureHeader(header string) (t int64, sigs [][]byte, err error) {
	if len(header) > maxHeaderLen {
		return 0, nil, verifyErr(ReasonMalformedHeader, "header longer than %d bytes", maxHeaderLen)
	}
	haveT := false
	for part := range strings.SplitSeq(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		switch k {
		case "t":
			if haveT {
				return 0, nil, verifyErr(ReasonMalformedHeader, "more than one timestamp")
			}
			n, perr := strconv.ParseInt(v, 10, 64)
			if perr != nil {
				return 0, nil, verifyErr(ReasonMalformedHeader, "timestamp is not an integer")
			}
			t, haveT = n, true
		case "v1":
			if len(sigs) == maxSignatures {
				continue
			}
			b, herr := hex.DecodeString(v)
			if herr != nil || len(b) != 32 {
				continue
			}
			sigs = append(sigs, b)
		}
	}
	if !haveT {
		return 0, nil, verifyErr(ReasonMalformedHeader, "no timestamp")
	}
	if len(sigs) == 0 {
		return 0, nil, verifyErr(ReasonNoSignature, "")
	}
	return t, sigs, nil
}

// VerifyStandard verifies the Standard Webhooks headers of a delivery
// (webhook-id, webhook-timestamp, webhook-signature) against rawBody and the
// endpoint's whsec_ secret, with [DefaultTolerance]. A failure is a
// *[VerificationError].
func VerifyStandard(rawBody []byte, h http.Header, secret string) error {
	return VerifyStandardWithOptions(rawBody, h, secret, VerifyOptions{})
}

// VerifyStandardWithOptions is [VerifyStandard] with a chosen tolerance and
// clock.
func VerifyStandardWithOptions(rawBody []byte, h http.Header, secret string, opts VerifyOptions) error {
	id := h.Get(HeaderWebhookID)
	ts := h.Get(HeaderWebhookTimestamp)
	sigHeader := h.Get(HeaderWebhookSignature)
	if id == "" || ts == "" || sigHeader == "" {
		return verifyErr(ReasonMissingHeader, "webhook-id, webhook-timestamp and webhook-signature are required")
	}
	if len(sigHeader) > maxHeaderLen || len(id) > maxHeaderLen {
		return verifyErr(ReasonMalformedHeader, "header too long")
	}
	t, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return verifyErr(ReasonMalformedHeader, "webhook-timestamp is not an integer")
	}
	key, err := Key(secret)
	if err != nil {
		return verifyErr(ReasonBadSecret, "")
	}
	if err := checkTimestamp(t, opts); err != nil {
		return err
	}
	var sigs [][]byte
	for _, f := range strings.Fields(sigHeader) {
		if len(sigs) == maxSignatures {
			break
		}
		version, sig, ok := strings.Cut(f, ",")
		if !ok || version != "v1" {
			continue
		}
		b, err := base64.StdEncoding.DecodeString(sig)
		if err != nil {
			continue
		}
		sigs = append(sigs, b)
	}
	if len(sigs) == 0 {
		return verifyErr(ReasonNoSignature, "")
	}
	want := macStandard(key, id, ts, rawBody)
	for _, s := range sigs {
		if hmac.Equal(s, want) {
			return nil
		}
	}
	return verifyErr(ReasonNoMatchingSignature, "")
}
