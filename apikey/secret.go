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

// Prefixes of the secrets of each environment: ordinary keys (sk_) and
// worker keys (rk_, restricted to the task endpoints).
const (
	LivePrefix       = "sk_live_"
	TestPrefix       = "sk_test_"
	WorkerLivePrefix = "rk_live_"
	WorkerTestPrefix = "rk_test_"
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

// prefixFor returns the secret prefix of env's keys of kind k.
func prefixFor(env settleflow.Environment, k Kind) string {
	switch {
	case k == Worker && env == settleflow.Live:
		return WorkerLivePrefix
	case k == Worker:
		return WorkerTestPrefix
	case env == settleflow.Live:
		return LivePrefix
	}
	return TestPrefix
}

// newSecret returns env's prefix followed by SecretChars base62 characters
// read from r by rejection sampling: a byte is used only if it is below 248
// (4 × 62), so every character is equally likely.
func newSecret(env settleflow.Environment, k Kind, r io.Reader) (string, error) {
	out := make([]byte, 0, len(TestPrefix)+SecretChars)
	out = append(out, prefixFor(env, k)...)
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
func generateSecret(env settleflow.Environment, k Kind) (string, error) {
	return newSecret(env, k, rand.Reader)
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
// returns it with its environment (and, through parseKey, its kind).
func parseAuthorization(header string) (string, settleflow.Environment, error) {
	token, env, _, err := parseKey(header)
	return token, env, err
}

// parseKey is parseAuthorization with the key's kind.
func parseKey(header string) (string, settleflow.Environment, Kind, error) {
	if len(header) > maxHeader {
		return "", "", "", ErrMalformed
	}
	h := strings.Trim(header, " \t")
	if h == "" {
		return "", "", "", ErrMissing
	}
	sp := strings.IndexAny(h, " \t")
	if sp < 0 || !strings.EqualFold(h[:sp], "Bearer") {
		return "", "", "", ErrMalformed
	}
	token := strings.TrimLeft(h[sp:], " \t")
	var (
		env  settleflow.Environment
		kind = Secret
	)
	switch {
	case strings.HasPrefix(token, TestPrefix):
		env = settleflow.Test
	case strings.HasPrefix(token, LivePrefix):
		env = settleflow.Live
	case strings.HasPrefix(token, WorkerTestPrefix):
		env, kind = settleflow.Test, Worker
	case strings.HasPrefix(token, WorkerLivePrefix):
		env, kind = settleflow.Live, Worker
	default:
		return "", "", "", ErrMalformed
	}
	rest := token[len(TestPrefix):]
	if len(rest) < MinSecretChars || len(rest) > MaxSecretChars {
		return "", "", "", ErrMalformed
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return "", "", "", ErrMalformed
		}
	}
	return token, env, kind, nil
}
