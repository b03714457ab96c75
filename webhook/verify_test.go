package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestNewSecret(t *testing.T) {
	a, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewSecret()
	if a == b {
		t.Fatal("two secrets alike")
	}
	if key := testKey(t, a); len(key) != 32 {
		t.Fatalf("secret decodes to %d bytes", len(key))
	}
}

// sigFor signs independently of the package: hex HMAC-SHA256(key, t.body).
func sigFor(t *testing.T, secret string, ts int64, body []byte) string {
	m := hmac.New(sha256.New, testKey(t, secret))
	fmt.Fprintf(m, "%d.%s", ts, body)
	return hex.EncodeToString(m.Sum(nil))
}

func TestConstructEvent(t *testing.T) {
	secret, _ := NewSecret()
	other, _ := NewSecret()
	ev := testEvent(false)
	body, _ := json.Marshal(ev)
	now := time.Unix(1_800_000_000, 0)
	opts := VerifyOptions{Now: func() time.Time { return now }}
	ts := now.Unix()
	good := sigFor(t, secret, ts, body)

	cases := []struct {
		name   string
		body   []byte
		header string
		secret string
		reason Reason // "" = success
	}{
		{"valid", body, fmt.Sprintf("t=%d,v1=%s", ts, good), secret, ""},
		{"valid with spaces and unknown scheme", body, fmt.Sprintf("t=%d, v0=abc, v1=%s", ts, good), secret, ""},
		{"second v1 matches", body, fmt.Sprintf("t=%d,v1=%s,v1=%s", ts, sigFor(t, other, ts, body), good), secret, ""},
		{"4m59s old", body, fmt.Sprintf("t=%d,v1=%s", ts-299, sigFor(t, secret, ts-299, body)), secret, ""},
		{"4m59s ahead", body, fmt.Sprintf("t=%d,v1=%s", ts+299, sigFor(t, secret, ts+299, body)), secret, ""},
		{"missing header", body, "", secret, ReasonMissingHeader},
		{"no timestamp", body, "v1=" + good, secret, ReasonMalformedHeader},
		{"bad timestamp", body, "t=abc,v1=" + good, secret, ReasonMalformedHeader},
		{"two timestamps", body, fmt.Sprintf("t=%d,t=%d,v1=%s", ts, ts, good), secret, ReasonMalformedHeader},
		{"garbage", body, "hello", secret, ReasonMalformedHeader},
		{"no v1", body, fmt.Sprintf("t=%d", ts), secret, ReasonNoSignature},
		{"v1 not hex", body, fmt.Sprintf("t=%d,v1=zz", ts), secret, ReasonNoSignature},
		{"too old", body, fmt.Sprintf("t=%d,v1=%s", ts-301, sigFor(t, secret, ts-301, body)), secret, ReasonTimestampOutsideTolerance},
		{"too far ahead", body, fmt.Sprintf("t=%d,v1=%s", ts+301, sigFor(t, secret, ts+301, body)), secret, ReasonTimestampOutsideTolerance},
		{"huge negative timestamp", body, fmt.Sprintf("t=%d,v1=%s", int64(-1<<63), good), secret, ReasonTimestampOutsideTolerance},
		{"wrong secret", body, fmt.Sprintf("t=%d,v1=%s", ts, good), other, ReasonNoMatchingSignature},
		{"body changed", append([]byte(" "), body...), fmt.Sprintf("t=%d,v1=%s", ts, good), secret, ReasonNoMatchingSignature},
		{"timestamp changed", body, fmt.Sprintf("t=%d,v1=%s", ts+1, good), secret, ReasonNoMatchingSignature},
		{"bad secret", body, fmt.Sprintf("t=%d,v1=%s", ts, good), "whsec_!!!", ReasonBadSecret},
		{"empty secret", body, fmt.Sprintf("t=%d,v1=%s", ts, good), "", ReasonBadSecret},
		{"not an event", []byte(`[1,2]`), fmt.Sprintf("t=%d,v1=%s", ts, sigFor(t, secret, ts, []byte(`[1,2]`))), secret, ReasonInvalidPayload},
		{"event without id", []byte(`{"type":"x"}`), fmt.Sprintf("t=%d,v1=%s", ts, sigFor(t, secret, ts, []byte(`{"type":"x"}`))), secret, ReasonInvalidPayload},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ConstructEventWithOptions(tc.body, tc.header, tc.secret, opts)
			if tc.reason == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got.ID != ev.ID || got.Data.WorkflowID != ev.Data.WorkflowID || got.Data.Margin.Achieved == nil {
					t.Fatalf("event = %+v", got)
				}
				return
			}
			var sve *SignatureVerificationError
			if !errors.As(err, &sve) {
				t.Fatalf("err = %v, want a SignatureVerificationError", err)
			}
			if sve.Reason != tc.reason {
				t.Fatalf("reason = %s, want %s (%v)", sve.Reason, tc.reason, err)
			}
			if strings.Contains(err.Error(), tc.secret) && tc.secret != "" {
				t.Fatal("error message contains the secret")
			}
		})
	}
}

func TestConstructEventDefaultClock(t *testing.T) {
	secret, _ := NewSecret()
	body, _ := json.Marshal(testEvent(true))
	h, err := Sign(time.Now(), body, secret)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := ConstructEvent(body, h, secret)
	if err != nil || !ev.Livemode {
		t.Fatalf("ConstructEvent = %+v, %v", ev, err)
	}
	old, _ := Sign(time.Now().Add(-6*time.Minute), body, secret)
	if _, err := ConstructEvent(body, old, secret); err == nil {
		t.Fatal("a six-minute-old signature verified")
	}
	if _, err := Sign(time.Now(), body, "whsec_???"); err == nil {
		t.Fatal("Sign accepted a bad secret")
	}
}

// TestStandardWebhooksVector checks VerifyStandard against the example of
// the Standard Webhooks specification.
func TestStandardWebhooksVector(t *testing.T) {
	const (
		secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
		id     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
		ts     = int64(1614265330)
		sig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
	)
	body := []byte(`{"test": 2432232314}`)
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	h.Set("webhook-signature", sig)
	at := func(t int64) VerifyOptions {
		return VerifyOptions{Now: func() time.Time { return time.Unix(t, 0) }}
	}
	if err := VerifyStandardWithOptions(body, h, secret, at(ts)); err != nil {
		t.Fatal(err)
	}
	// Our signer produces the same signature.
	if got, _ := SignStandard(id, time.Unix(ts, 0), body, secret); got != sig {
		t.Fatalf("SignStandard = %s, want %s", got, sig)
	}
	// Several signatures, one valid.
	h.Set("webhook-signature", "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= v2,abc "+sig)
	if err := VerifyStandardWithOptions(body, h, secret, at(ts)); err != nil {
		t.Fatal(err)
	}
	reason := func(err error) Reason {
		var sve *SignatureVerificationError
		if !errors.As(err, &sve) {
			t.Fatalf("err = %v", err)
		}
		return sve.Reason
	}
	h.Set("webhook-signature", sig)
	if r := reason(VerifyStandardWithOptions(body, h, secret, at(ts+301))); r != ReasonTimestampOutsideTolerance {
		t.Fatalf("late: %s", r)
	}
	if r := reason(VerifyStandardWithOptions(body, h, secret, at(ts-301))); r != ReasonTimestampOutsideTolerance {
		t.Fatalf("early: %s", r)
	}
	if r := reason(VerifyStandardWithOptions([]byte(`{"test": 2432232315}`), h, secret, at(ts))); r != ReasonNoMatchingSignature {
		t.Fatalf("tampered: %s", r)
	}
	h2 := h.Clone()
	h2.Set("webhook-id", "msg_other")
	if r := reason(VerifyStandardWithOptions(body, h2, secret, at(ts))); r != ReasonNoMatchingSignature {
		t.Fatalf("other id: %s", r)
	}
	h2 = h.Clone()
	h2.Del("webhook-id")
	if r := reason(VerifyStandardWithOptions(body, h2, secret, at(ts))); r != ReasonMissingHeader {
		t.Fatalf("no id: %s", r)
	}
	h2 = h.Clone()
	h2.Set("webhook-signature", "v2,abc")
	if r := reason(VerifyStandardWithOptions(body, h2, secret, at(ts))); r != ReasonNoSignature {
		t.Fatalf("no v1: %s", r)
	}
	h2 = h.Clone()
	h2.Set("webhook-timestamp", "soon")
	if r := reason(VerifyStandardWithOptions(body, h2, secret, at(ts))); r != ReasonMalformedHeader {
		t.Fatalf("bad timestamp: %s", r)
	}
	if r := reason(VerifyStandard(body, h, secret)); r != ReasonTimestampOutsideTolerance {
		t.Fatalf("2021 vector accepted today: %s", r)
	}
}
