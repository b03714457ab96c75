// Package ids is the one id generator of settleflow: a prefix plus a
// 26-character ULID, so ids sort by creation time.
package ids

import (
	"crypto/rand"
	"io"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

// Prefixes of every kind of id.
const (
	Workflow = "wf_"
	Event    = "evt_"
	Key      = "key_"
	Endpoint = "we_"
	Request  = "req_"
	Delivery = "whd_"
)

var (
	mu      sync.Mutex
	entropy io.Reader = ulid.Monotonic(rand.Reader, 0)
)

// New returns prefix followed by a new ULID for time t. Within one process,
// ids made later never sort before ids made earlier, even within the same
// millisecond.
func New(prefix string, t time.Time) string {
	ms := ulid.Timestamp(t)
	mu.Lock()
	id, err := ulid.New(ms, entropy)
	if err != nil {
		// The monotonic reader overflows only after 2^80 ids in one
		// millisecond, or if the clock steps back: start a fresh sequence.
		entropy = ulid.Monotonic(rand.Reader, 0)
		id = ulid.MustNew(ms, entropy)
	}
	mu.Unlock()
	return prefix + id.String()
}

// Valid reports whether s is prefix followed by a well-formed ULID.
func Valid(prefix, s string) bool {
	if len(s) != len(prefix)+ulid.EncodedSize || s[:len(prefix)] != prefix {
		return false
	}
	_, err := ulid.ParseStrict(s[len(prefix):])
	return err == nil
}
