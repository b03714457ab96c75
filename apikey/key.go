// Package apikey manages settleflow's API keys: creation, listing, rotation,
// revocation, and the authentication of every API request (docs/api.md §8).
//
// A key is "sk_live_" or "sk_test_" followed by 40 random base62 characters.
// Only its SHA-256 is stored, with a display form such as "sk_test_…a1b2"; the
// secret itself is returned once, by [Manager.Create] or [Manager.Rotate], and
// never stored, logged or returned again.
//
//	m, err := apikey.New(db, apikey.Options{})
//	err = m.Migrate(ctx)
//	key, secret, err := m.Create(ctx, apikey.CreateParams{Environment: settleflow.Test, Name: "ci"})
//	key, err = m.Authenticate(ctx, r.Header.Get("Authorization"))
package apikey

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/ratelimit"
	"github.com/settleflow/settleflow/wire"
)

// Plan is a key's rate-limit plan.
type Plan string

// The plans of docs/api.md §8.
const (
	// Starter allows 300 requests a minute and 50,000 a day. The default.
	Starter Plan = "starter"
	// Pro allows 1,000 requests a minute and 500,000 a day.
	Pro Plan = "pro"
	// Enterprise takes both limits explicitly.
	Enterprise Plan = "enterprise"
)

// Plans lists every plan.
var Plans = []Plan{Starter, Pro, Enterprise}

// Limits returns the per-minute and per-day limits of a fixed plan, and false
// for Enterprise (whose limits are per key) or an unknown plan.
func (p Plan) Limits() (perMinute, perDay int, ok bool) {
	switch p {
	case Starter:
		return 300, 50_000, true
	case Pro:
		return 1_000, 500_000, true
	}
	return 0, 0, false
}

// Valid reports whether p is one of [Plans].
func (p Plan) Valid() bool { return p == Starter || p == Pro || p == Enterprise }

// Kind is what a key may call.
type Kind string

// The kinds of key.
const (
	// Secret is an ordinary key (sk_test_…, sk_live_…): every endpoint but
	// the task endpoints. The default.
	Secret Kind = "secret"
	// Worker is a worker key (rk_test_…, rk_live_…): only the task
	// endpoints (POST /v1/tasks/…), for the products it names if it names
	// any.
	Worker Kind = "worker"
)

// Valid reports whether k is Secret or Worker.
func (k Kind) Valid() bool { return k == Secret || k == Worker }

// Key is an API key as stored: everything but its secret, which is never
// kept. Its JSON form is the "api_key" object used in listings. Times are UTC
// with millisecond precision.
type Key struct {
	// ID is "key_" followed by a ULID.
	ID string
	// Environment is settleflow.Test or settleflow.Live, fixed per key.
	Environment settleflow.Environment
	// Name is the descriptive name given at creation (1–100 characters).
	Name string
	// Plan is the key's rate-limit plan.
	Plan Plan
	// Display identifies the key without revealing it: its prefix, "…" and
	// the last 4 characters of the secret, e.g. "sk_test_…a1b2".
	Display string
	// PerMinute and PerDay are the key's rate limits.
	PerMinute int
	PerDay    int
	// CreatedAt is when the key was created.
	CreatedAt time.Time
	// LastUsedAt is when the key last authenticated a request, written at
	// most once a minute; nil if never.
	LastUsedAt *time.Time
	// RevokedAt is when the key was revoked; nil if it was not.
	RevokedAt *time.Time
	// ExpiresAt is when the key stops working, set when it was rotated; nil
	// if it does not expire.
	ExpiresAt *time.Time
	// SuccessorID is the key this one was rotated into; empty if it was not
	// rotated (or was rotated before successors were recorded).
	SuccessorID string
	// Kind is Secret or Worker (read from JSON, "" for an ordinary key).
	Kind Kind
	// Products, for a worker key, are the only remote products it may
	// serve; nil: every one.
	Products []string

	// lineage is the id of the first key of a chain of rotations.
	lineage string
}

// IsWorker reports whether k is a worker key.
func (k Key) IsWorker() bool { return k.Kind == Worker }

// Livemode reports whether the key acts on the live environment.
func (k Key) Livemode() bool { return k.Environment == settleflow.Live }

// RateLimitKey is the key under which k's requests are counted by a
// [ratelimit.Limiter]: the id of the key it was first rotated from (or its
// own), so that an old key that still works during a rotation shares its
// limits with its replacement instead of doubling them.
func (k Key) RateLimitKey() string {
	if k.lineage != "" {
		return k.lineage
	}
	return k.ID
}

// Windows returns k's rate-limit windows: {"minute", PerMinute, 60 s} and
// {"day", PerDay, 86400 s}, to pass to [ratelimit.Limiter.Allow].
func (k Key) Windows() []ratelimit.Window {
	return []ratelimit.Window{ratelimit.Minute(k.PerMinute), ratelimit.Day(k.PerDay)}
}

// keyJSON is the wire form of a Key.
type keyJSON struct {
	ID         string     `json:"id"`
	Object     string     `json:"object"`
	Livemode   bool       `json:"livemode"`
	Name       string     `json:"name"`
	Plan       Plan       `json:"plan"`
	Display    string     `json:"display"`
	PerMinute  int        `json:"perMinute"`
	PerDay     int        `json:"perDay"`
	CreatedAt  time.Time  `json:"createdAt"`
	LastUsedAt *time.Time `json:"lastUsedAt"`
	RevokedAt  *time.Time `json:"revokedAt"`
	ExpiresAt  *time.Time `json:"expiresAt"`
	// SuccessorID is omitted when empty.
	SuccessorID string `json:"successorId,omitempty"`
	// Kind and Products are given for worker keys only.
	Kind     Kind     `json:"kind,omitempty"`
	Products []string `json:"products,omitempty"`
}

// Object is the "object" value of a Key's JSON form.
const Object = "api_key"

// MarshalJSON writes k as
//
//	{"id": "key_…", "object": "api_key", "livemode": false, "name": "ci",
//	 "plan": "starter", "display": "sk_test_…a1b2", "perMinute": 300,
//	 "perDay": 50000, "createdAt": "…", "lastUsedAt": null,
//	 "revokedAt": null, "expiresAt": null}
func (k Key) MarshalJSON() ([]byte, error) {
	return json.Marshal(keyJSON{
		ID: k.ID, Object: Object, Livemode: k.Livemode(), Name: k.Name, Plan: k.Plan,
		Display: k.Display, PerMinute: k.PerMinute, PerDay: k.PerDay, CreatedAt: k.CreatedAt,
		LastUsedAt: k.LastUsedAt, RevokedAt: k.RevokedAt, ExpiresAt: k.ExpiresAt, SuccessorID: k.SuccessorID,
		Kind: workerOnly(k.Kind), Products: k.Products,
	})
}

// workerOnly is k's JSON form: worker keys name their kind, ordinary keys
// (as before kinds) do not.
func workerOnly(k Kind) Kind {
	if k == Worker {
		return k
	}
	return ""
}

// UnmarshalJSON reads the form MarshalJSON writes.
func (k *Key) UnmarshalJSON(p []byte) error {
	var j keyJSON
	if err := json.Unmarshal(p, &j); err != nil {
		return err
	}
	if j.Object != Object {
		return fmt.Errorf("apikey: object is %q, not %q", j.Object, Object)
	}
	env := settleflow.Test
	if j.Livemode {
		env = settleflow.Live
	}
	*k = Key{
		ID: j.ID, Environment: env, Name: j.Name, Plan: j.Plan, Display: j.Display,
		PerMinute: j.PerMinute, PerDay: j.PerDay, CreatedAt: j.CreatedAt,
		LastUsedAt: j.LastUsedAt, RevokedAt: j.RevokedAt, ExpiresAt: j.ExpiresAt, SuccessorID: j.SuccessorID,
		Kind: workerOnly(j.Kind), Products: j.Products,
	}
	return nil
}

// AuthError is why [Manager.Authenticate] refused a request: one of
// [ErrMissing], [ErrMalformed], [ErrUnknown], [ErrRevoked], [ErrExpired].
// Every one is an HTTP 401 authentication_error; Code and Message are safe to
// send to the client (they never contain the key).
type AuthError struct {
	// Code is a stable machine-readable code, e.g. "api_key_revoked".
	Code settleflow.ErrorCode
	// Message is a human-readable explanation for the client.
	Message string
}

// Error returns "apikey: " and the message.
func (e *AuthError) Error() string { return "apikey: " + e.Message }

// The errors of [Manager.Authenticate]. Compare with errors.Is, or use
// errors.As with an *[AuthError] to get the code and message.
var (
	// ErrMissing: no Authorization header, or an empty one.
	ErrMissing = &AuthError{wire.CodeAPIKeyMissing, "No API key provided. Send it in the header Authorization: Bearer sk_test_… (or sk_live_…)."}
	// ErrMalformed: not "Bearer <token>", or a token that is not sk_live_,
	// sk_test_, rk_live_ or rk_test_ followed by 32 to 128 base62
	// characters.
	ErrMalformed = &AuthError{wire.CodeAPIKeyMalformed, "Malformed API key. Send Authorization: Bearer sk_live_… or sk_test_…."}
	// ErrUnknown: a well-formed key that does not exist.
	ErrUnknown = &AuthError{wire.CodeAPIKeyInvalid, "Invalid API key provided."}
	// ErrRevoked: the key was revoked.
	ErrRevoked = &AuthError{wire.CodeAPIKeyRevoked, "This API key has been revoked."}
	// ErrExpired: the key was rotated and its expiry has passed.
	ErrExpired = &AuthError{wire.CodeAPIKeyExpired, "This API key has expired."}
)

// Errors of the management calls. They are returned wrapped with details;
// compare with errors.Is.
var (
	// ErrNotFound: no key has the given id.
	ErrNotFound = errors.New("apikey: no such key")
	// ErrInvalidName: a name that is empty, longer than 100 characters, not
	// UTF-8, or holds control characters.
	ErrInvalidName = errors.New("apikey: invalid name")
	// ErrInvalidEnvironment: an environment other than test or live.
	ErrInvalidEnvironment = errors.New("apikey: invalid environment")
	// ErrInvalidKind: a kind other than secret or worker, or products
	// named for a key that is not a worker key, or a product name that
	// cannot be one.
	ErrInvalidKind = errors.New("apikey: invalid kind or products")
	// ErrInvalidPlan: a plan other than starter, pro or enterprise.
	ErrInvalidPlan = errors.New("apikey: invalid plan")
	// ErrInvalidLimits: enterprise without two positive limits, or limits
	// given for another plan.
	ErrInvalidLimits = errors.New("apikey: invalid limits")
	// ErrInvalidExpiry: a rotation expiry other than 0, 1h, 24h or 7 days.
	ErrInvalidExpiry = errors.New("apikey: invalid rotation expiry")
	// ErrRotated: the key was rotated already. A key has at most one
	// successor, so that every key of a lineage is the one before or the
	// one after another; rotate the successor (the error names it) instead.
	ErrRotated = errors.New("apikey: key already rotated")
)

// opError is a management call's error in one sentence; errors.Is finds the
// sentinel it stands for (ErrRevoked, ErrRotated, ...) without its text
// being repeated.
type opError struct {
	msg string
	err error
}

func (e *opError) Error() string { return e.msg }
func (e *opError) Unwrap() error { return e.err }

// RotationExpiries are the allowed expiries of a rotated key: at once, in an
// hour, a day or a week.
var RotationExpiries = []time.Duration{0, time.Hour, 24 * time.Hour, 7 * 24 * time.Hour}

// splitProducts reads the stored products of a worker key.
func splitProducts(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
