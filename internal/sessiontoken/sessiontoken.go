// Package sessiontoken makes the secret tokens of the dashboard's and the
// portal's sign-ins and sessions: 32 random bytes, URL-safe, stored only as
// their SHA-256.
package sessiontoken

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
)

// New returns a random token and its SHA-256 in hex (Hash).
func New() (token, hash string, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	t := base64.RawURLEncoding.EncodeToString(b)
	return t, Hash(t), nil
}

// Hash is t's SHA-256 in hex: what is stored of a token.
func Hash(t string) string {
	sum := sha256.Sum256([]byte(t))
	return hex.EncodeToString(sum[:])
}
