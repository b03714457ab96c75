// Package ratelimit enforces per-key request limits over several fixed
// windows at once (settleflow's API uses a minute and a day window per API
// key) and writes the rate-limit response headers of docs/api.md §8.
//
// A [Limiter] is the small interface the HTTP layer calls; [NewMemory] is the
// in-process implementation. A limiter shared by several instances (Redis,
// Postgres) can replace it without touching callers.
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Window is one limit: at most Limit requests in each fixed window of the
// given Length. Windows are aligned to Unix time multiples of Length, so a
// minute window resets at every whole minute and a day window at 00:00 UTC.
type Window struct {
	// Name identifies the window in the IETF RateLimit headers, e.g. "minute".
	// It must be a valid structured-field token-like string: letters, digits
	// and "_-.:".
	Name string
	// Limit is the number of requests admitted per window; 0 refuses every
	// request.
	Limit int
	// Length is the duration of the window, at least one second and a whole
	// number of seconds.
	Length time.Duration
}

// Minute returns the window {"minute", limit, 60 s}.
func Minute(limit int) Window { return Window{Name: "minute", Limit: limit, Length: time.Minute} }

// Day returns the window {"day", limit, 86400 s}.
func Day(limit int) Window { return Window{Name: "day", Limit: limit, Length: 24 * time.Hour} }

// ErrInvalidWindow is returned by Allow for an empty window list or a window
// with a negative limit, an empty or invalid name, or a length that is not a
// positive whole number of seconds.
var ErrInvalidWindow = errors.New("ratelimit: invalid window")

// ValidateWindows checks windows as Allow does.
func ValidateWindows(windows []Window) error {
	if len(windows) == 0 {
		return fmt.Errorf("%w: no windows", ErrInvalidWindow)
	}
	for _, w := range windows {
		switch {
		case !validName(w.Name):
			return fmt.Errorf("%w: name %q", ErrInvalidWindow, w.Name)
		case w.Limit < 0:
			return fmt.Errorf("%w: %s: negative limit %d", ErrInvalidWindow, w.Name, w.Limit)
		case w.Length < time.Second || w.Length%time.Second != 0:
			return fmt.Errorf("%w: %s: length %s is not a positive whole number of seconds", ErrInvalidWindow, w.Name, w.Length)
		}
	}
	return nil
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.' || c == ':') {
			return false
		}
	}
	return true
}

// Limiter decides whether a request is admitted.
//
// Allow admits the request only if every window has room, and then consumes
// one unit in every window, atomically: however many callers race on the same
// key, no window ever admits more than its limit. A refused request consumes
// nothing. now is the time of the request; implementations align windows on
// it, so callers pass their clock's time (tests pass any time they like).
type Limiter interface {
	Allow(ctx context.Context, key string, windows []Window, now time.Time) (Decision, error)
}

// WindowState is the state of one window after a decision.
type WindowState struct {
	Window
	// Remaining is how many more requests the window admits before Reset
	// (after this request, when it was admitted). Never negative.
	Remaining int
	// Reset is when the current window ends and its count starts again.
	Reset time.Time
}

// ResetSeconds returns the whole seconds from now until the window resets,
// rounded up, at least 1.
func (w WindowState) ResetSeconds(now time.Time) int {
	d := w.Reset.Sub(now)
	s := int((d + time.Second - 1) / time.Second)
	if s < 1 {
		s = 1
	}
	return s
}

// Decision is the outcome of [Limiter.Allow].
type Decision struct {
	// Allowed reports whether the request was admitted.
	Allowed bool
	// Windows holds every window's state, in the order they were passed.
	Windows []WindowState
	// Binding is the window that constrains the caller most: the one with the
	// least remaining; on a tie, the one that resets later (then the longer
	// one). The X-RateLimit-* and RateLimit headers describe it.
	Binding WindowState
	// RetryAfter is, when the request was refused, the whole seconds (≥ 1)
	// until the binding window resets and the request could be admitted; 0
	// when it was admitted.
	RetryAfter int
	// Now is the time the decision was made for.
	Now time.Time
}

// NewDecision returns the decision for windows in the order they were
// passed, with Binding and RetryAfter filled in: what a [Limiter] other
// than [Memory] returns from Allow.
func NewDecision(allowed bool, windows []WindowState, now time.Time) Decision {
	d := Decision{Allowed: allowed, Windows: windows, Now: now}
	d.decide()
	return d
}

// decide fills in Binding and RetryAfter from Windows.
func (d *Decision) decide() {
	b := 0
	for i := 1; i < len(d.Windows); i++ {
		w, best := d.Windows[i], d.Windows[b]
		switch {
		case w.Remaining < best.Remaining:
			b = i
		case w.Remaining > best.Remaining:
		case w.Reset.After(best.Reset):
			b = i
		case w.Reset.Equal(best.Reset) && w.Length > best.Length:
			b = i
		}
	}
	d.Binding = d.Windows[b]
	d.RetryAfter = 0
	if !d.Allowed {
		d.RetryAfter = d.Binding.ResetSeconds(d.Now)
	}
}

// Header names written by [Decision.WriteHeaders].
const (
	HeaderLimit      = "X-RateLimit-Limit"
	HeaderRemaining  = "X-RateLimit-Remaining"
	HeaderReset      = "X-RateLimit-Reset"
	HeaderPolicy     = "RateLimit-Policy"
	HeaderRateLimit  = "RateLimit"
	HeaderRetryAfter = "Retry-After"
)

// WriteHeaders sets the rate-limit headers of docs/api.md §8 on h:
//
//	X-RateLimit-Limit: 300           (the binding window's limit)
//	X-RateLimit-Remaining: 299
//	X-RateLimit-Reset: 1795261260    (Unix seconds at which the binding window resets)
//	RateLimit-Policy: "minute";q=300;w=60, "day";q=50000;w=86400
//	RateLimit: "minute";r=299;t=41
//	Retry-After: 41                  (only when refused)
//
// When the request was admitted any Retry-After already in h is removed.
func (d Decision) WriteHeaders(h http.Header) {
	if len(d.Windows) == 0 {
		return
	}
	b := d.Binding
	t := b.ResetSeconds(d.Now)
	h.Set(HeaderLimit, strconv.Itoa(b.Limit))
	h.Set(HeaderRemaining, strconv.Itoa(b.Remaining))
	h.Set(HeaderReset, strconv.FormatInt(b.Reset.Unix(), 10))
	h.Set(HeaderPolicy, d.Policy())
	h.Set(HeaderRateLimit, `"`+b.Name+`";r=`+strconv.Itoa(b.Remaining)+";t="+strconv.Itoa(t))
	if d.Allowed {
		h.Del(HeaderRetryAfter)
	} else {
		h.Set(HeaderRetryAfter, strconv.Itoa(d.RetryAfter))
	}
}

// Policy returns the RateLimit-Policy field value for the decision's
// windows, e.g. `"minute";q=300;w=60, "day";q=50000;w=86400`.
func (d Decision) Policy() string {
	var sb strings.Builder
	for i, w := range d.Windows {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteByte('"')
		sb.WriteString(w.Name)
		sb.WriteString(`";q=`)
		sb.WriteString(strconv.Itoa(w.Limit))
		sb.WriteString(";w=")
		sb.WriteString(strconv.FormatInt(int64(w.Length/time.Second), 10))
	}
	return sb.String()
}
