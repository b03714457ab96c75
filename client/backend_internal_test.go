package client

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestRetryWaitIsFullJitter(t *testing.T) {
	b := &backend{initialBackoff: 100 * time.Millisecond, maxBackoff: time.Second, maxRetryWait: time.Minute}
	for attempt, ceiling := range []time.Duration{100, 200, 400, 800, 1000, 1000, 1000} {
		ceiling *= time.Millisecond
		var lo, hi time.Duration = ceiling, 0
		for range 2000 {
			d, ok := b.retryWait(attempt, nil)
			if !ok || d < 0 || d >= ceiling {
				t.Fatalf("attempt %d: wait %v, want [0, %v)", attempt, d, ceiling)
			}
			lo, hi = min(lo, d), max(hi, d)
		}
		// Spread over the whole range, not a fixed step with a little noise.
		if lo > ceiling/10 || hi < ceiling*9/10 {
			t.Fatalf("attempt %d: waits in [%v, %v] of [0, %v)", attempt, lo, hi, ceiling)
		}
	}
	if d, ok := b.retryWait(200, nil); !ok || d >= time.Second {
		t.Fatalf("attempt 200: %v", d)
	}
}

func TestRetryWaitHonoursTheServer(t *testing.T) {
	b := &backend{initialBackoff: 100 * time.Millisecond, maxBackoff: time.Second, maxRetryWait: time.Minute}
	now := time.Now()
	resp := func(status int, kv ...string) *http.Response {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return &http.Response{StatusCode: status, Header: h}
	}
	for _, tc := range []struct {
		name     string
		resp     *http.Response
		min, max time.Duration
		ok       bool
	}{
		{"Retry-After seconds", resp(429, "Retry-After", "3"), 3 * time.Second, 3100 * time.Millisecond, true},
		{"Retry-After 0", resp(503, "Retry-After", "0"), 0, 100 * time.Millisecond, true},
		{"Retry-After date", resp(503, "Retry-After", now.Add(10*time.Second).UTC().Format(http.TimeFormat)), 8 * time.Second, 10100 * time.Millisecond, true},
		{"Retry-After wins over reset", resp(429, "Retry-After", "2", "X-RateLimit-Reset", strconv.FormatInt(now.Unix()+30, 10)), 2 * time.Second, 2100 * time.Millisecond, true},
		{"reset on a 429", resp(429, "X-RateLimit-Reset", strconv.FormatInt(now.Unix()+5, 10)), 3900 * time.Millisecond, 5100 * time.Millisecond, true},
		{"reset passed", resp(429, "X-RateLimit-Reset", strconv.FormatInt(now.Unix()-5, 10)), 0, 100 * time.Millisecond, true},
		{"reset ignored on a 503", resp(503, "X-RateLimit-Reset", strconv.FormatInt(now.Unix()+30, 10)), 0, 100 * time.Millisecond, true},
		{"garbage", resp(429, "Retry-After", "soon"), 0, 100 * time.Millisecond, true},
		{"too long", resp(429, "Retry-After", "61"), 0, 0, false},
		{"reset too far", resp(429, "X-RateLimit-Reset", strconv.FormatInt(now.Unix()+3600, 10)), 0, 0, false},
	} {
		d, ok := b.retryWait(0, tc.resp)
		if ok != tc.ok || (ok && (d < tc.min || d > tc.max)) {
			t.Errorf("%s: %v %v, want [%v, %v] %v", tc.name, d, ok, tc.min, tc.max, tc.ok)
		}
	}
}

func TestRetryable(t *testing.T) {
	for status, want := range map[int]bool{200: false, 400: false, 401: false, 403: false, 404: false, 408: true, 409: false,
		429: true, 500: true, 501: false, 502: true, 503: true, 504: true} {
		if retryableStatus(status) != want {
			t.Errorf("status %d: retryable %v", status, !want)
		}
	}
}

func TestBaseURL(t *testing.T) {
	for raw, want := range map[string]string{
		"https://api.example.com":      "https://api.example.com",
		"https://api.example.com/":     "https://api.example.com",
		"https://example.com/settle/":  "https://example.com/settle",
		"http://127.0.0.1:8080":        "http://127.0.0.1:8080",
		"http://localhost:3000":        "http://localhost:3000",
		"http://[::1]:3000":            "http://[::1]:3000",
		"http://api.example.com":       "",
		"http://10.0.0.1":              "",
		"ftp://example.com":            "",
		"https://user:pw@example.com":  "",
		"https://example.com/?x=1":     "",
		"example.com":                  "",
		"https://example.com/%zz":      "",
		"https://api.example.com#frag": "",
	} {
		u, err := parseBaseURL(raw)
		switch {
		case want == "" && err == nil:
			t.Errorf("%s: accepted as %s", raw, u)
		case want != "" && (err != nil || u.String() != want):
			t.Errorf("%s: %v %v, want %s", raw, u, err, want)
		}
	}
	// A bad option shows in every call, not as a panic.
	c := New("sk_test_x", WithBaseURL("http://api.example.com"))
	if _, err := c.Products.List(t.Context()); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("error %v", err)
	}
}

func TestRedact(t *testing.T) {
	key := "sk_live_" + strings.Repeat("a1B2", 8) + "wxyz"
	for in, want := range map[string]string{
		key:                "sk_live_…wxyz",
		"sk_test_short":    "(redacted)",
		"something-else-1": "(redacted)",
		"":                 "(none)",
	} {
		if got := redact(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
	s := newSecret(key)
	if got := s.scrub("echo " + key + " and " + key); strings.Contains(got, key) || !strings.Contains(got, "sk_live_…wxyz") {
		t.Fatalf("scrub: %q", got)
	}
}

func TestCheckKey(t *testing.T) {
	for key, ok := range map[string]bool{"sk_test_abc": true, "": false, "sk_test_abc\n": false, " sk_test_abc": false, "sk_test_é": false} {
		err := checkKey(key)
		if (err == nil) != ok {
			t.Errorf("checkKey(%q): %v", key, err)
		}
		if err != nil && key != "" && strings.Contains(err.Error(), strings.TrimSpace(key)) {
			t.Errorf("the error quotes the key: %v", err)
		}
	}
}

// TestSecretPrintsRedacted prints the client's internals directly, as a
// future field or a debugging Printf might: the key's holder shows only its
// display form.
func TestSecretPrintsRedacted(t *testing.T) {
	key := "sk_test_" + strings.Repeat("Ab3", 12)
	c := New(key)
	b := *c.b
	var logs strings.Builder
	slog.New(slog.NewTextHandler(&logs, nil)).Info("x", "key", c.b.key, "backend", b)
	j, _ := json.Marshal(struct{ K secret }{c.b.key})
	out := []string{logs.String(), string(j)}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"} {
		out = append(out, fmt.Sprintf(verb, c.b.key), fmt.Sprintf(verb, b), fmt.Sprintf(verb, c.b))
	}
	for _, s := range out {
		if strings.Contains(s, key[8:20]) || strings.Contains(s, fmt.Sprintf("%x", key[8:20])) {
			t.Fatalf("the key shows in %q", s)
		}
	}
	if got := fmt.Sprint(c.b.key); got != "sk_test_…"+key[len(key)-4:] {
		t.Fatalf("the key prints as %q", got)
	}
}
