package webhook

import "github.com/settleflow/settleflow/webhook/signature"

// SecretPrefix starts every endpoint secret.
const SecretPrefix = signature.SecretPrefix

// NewSecret returns a fresh endpoint secret: "whsec_" followed by the standard
// base64 encoding of 32 bytes from crypto/rand.
func NewSecret() (string, error) { return signature.NewSecret() }

// secretKey returns the HMAC key of secret (signature.Key).
func secretKey(secret string) ([]byte, error) { return signature.Key(secret) }
