package apikey

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strings"

	"github.com/settleflow/settleflow"
)

// Prefixes of the secrets of each environment.
const (
	LivePrefix = "sk_live_"
	TestPrefix = "sk_test_"
)

// SecretChars is the number of random base62 characters of a new secret
// (about 238 bits). Authenticate accepts from MinSecretChars to
// MaxSecretChars so that the length can grow without breaking old keys.
const (
	SecretChars    = 40
	MinSecretChars = 32
	MaxSecretChars = 128
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// maxHeader bounds the Authorization header parsed.
const maxHeader = 512

// prefixFor returns env's secret prefix.
func prefixFor(env settleflow.Environment) string {
	if env == settleflow.Live {
		return LivePrefix
	}
	return TestPrefix
}

// newSecret returns env's prefix followed by SecretChars base62 characters
// read from r by rejection sampling: a byte is used only if it is below 248
// (4 × 62), so every character is equally likely.
func newSecret(env settleflow.Environment, r io.Reader) (string, error) {
	out := make([]byte, 0, len(TestPrefix)+SecretChars)
	out = append(out, prefixFor(env)...)
	var buf [64]byte
	for len(out) < cap(out) {
		if _, err := io.ReadFull(r, buf[:]); err != nil {
			return "", fmt.Errorf("apikey: random: %w", err)
		}
		for _, b := range buf {
			if b >= 248 {
				continue
			}
			out = append(out, base62[b%62])
			if len(out) == cap(out) {
				break
			}
		}
	}
	return string(out), nil
}

// generateSecret returns a new secret from crypto/rand.
func generateSecret(env settleflow.Environment) (string, error) {
	return newSecret(env, rand.Reader)
}

// display returns the display form of secret: prefix, "…", last 4.
func display(secret string) string {
	return secret[:len(TestPrefix)] + "…" + secret[len(secret)-4:]
}

// hashSecret returns the lowercase hex SHA-256 of secret, as stored.
func hashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// parseAuthorization extracts the secret from an Authorization header value
// "Bearer <secret>" (the scheme is case-insensitive, as in RFC 9110) and
// returns it with its environment.
func parseAuthorization(header string) (string, settleflow.Environment, error) {
	if len(header) > maxHeader {
		return "", "", ErrMalformed
	}
	h := strings.Trim(header, " \t")
	if h == "" {
		return "", "", ErrMissing
	}
	sp := strings.IndexAny(h, " \t")
	if sp < 0 || !strings.EqualFold(h[:sp], "Bearer") {
		return "", "", ErrMalformed
	}
	token := strings.TrimLeft(h[sp:], " \t")
	var env settleflow.Environment
	switch {
	case strings.HasPrefix(token, TestPrefix):
		env = settleflow.Test
	case strings.HasPrefix(token, LivePrefix):
		env = settleflow.Live
	default:
		return "", "", ErrMalformed
	}
	rest := token[len(TestPrefix):]
	if len(rest) < MinSecretChars || len(rest) > MaxSecretChars {
		return "", "", ErrMalformed
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return "", "", ErrMalformed
		}
	}
	return token, env, nil
}
