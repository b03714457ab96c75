package signature

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
)

// SecretPrefix starts every endpoint secret.
const SecretPrefix = "whsec_"

// secretBytes is the number of random bytes in a secret.
const secretBytes = 32

// NewSecret returns a fresh endpoint secret: "whsec_" followed by the standard
// base64 encoding of 32 bytes from crypto/rand.
func NewSecret() (string, error) {
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

var errBadSecret = errors.New("webhook: secret is not whsec_ followed by base64")

// Key returns the HMAC key of an endpoint secret: the base64-decoded part
// after "whsec_". Like the Standard Webhooks libraries it also accepts the
// bare base64 part. It fails if secret is neither.
func Key(secret string) ([]byte, error) {
	s := strings.TrimPrefix(secret, SecretPrefix)
	key, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(key) == 0 {
		return nil, errBadSecret
	}
	return key, nil
}
