package client

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// secret holds the API key out of reach of printing: the key itself lives
// only in a closure, which neither fmt nor reflection-based printers (a
// debugger's dump, a test library's diff) can look into, and the fields that
// are visible hold the redacted display form.
type secret struct {
	reveal  func() string
	display string
}

func newSecret(key string) secret {
	return secret{reveal: func() string { return key }, display: redact(key)}
}

// redact returns the display form of key: its prefix and last four
// characters when it looks like an API key (sk_test_…a1b2, as the server
// lists keys), otherwise a fixed placeholder.
func redact(key string) string {
	for _, prefix := range []string{"sk_test_", "sk_live_"} {
		if strings.HasPrefix(key, prefix) && len(key) >= len(prefix)+32 {
			return prefix + "…" + key[len(key)-4:]
		}
	}
	if key == "" {
		return "(none)"
	}
	return "(redacted)"
}

// scrub removes the key from s, in case a message ever echoes it.
func (s secret) scrub(msg string) string {
	if k := s.reveal(); len(k) >= 8 {
		return strings.ReplaceAll(msg, k, s.display)
	}
	return msg
}

// The printing methods all show the display form.
func (s secret) String() string               { return s.display }
func (s secret) GoString() string             { return s.display }
func (s secret) Format(f fmt.State, _ rune)   { io.WriteString(f, s.display) }
func (s secret) LogValue() slog.Value         { return slog.StringValue(s.display) }
func (s secret) MarshalText() ([]byte, error) { return []byte(s.display), nil }
