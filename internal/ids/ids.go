// Package ids is the one id generator of settleflow: a prefix plus a
// 26-character ULID, so ids sort by creation time.
package ids

import (
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"strings"
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
	Refund   = "re_"
	Task     = "task_"
	Portal   = "ps_"
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

// Valid reports whether s is prefix followed by a ULID in the one form New
// makes: 26 characters of upper-case Crockford base32. ulid.ParseStrict
// alone would also take lower case, but stores compare ids byte by byte, so a
// second spelling of an id would find nothing (a 404 for a workflow that
// exists) or, as a list cursor, sort among other ids and answer the wrong
// page. Every other spelling is invalid instead.
func Valid(prefix, s string) bool {
	if len(s) != len(prefix)+ulid.EncodedSize || s[:len(prefix)] != prefix {
		return false
	}
	enc := s[len(prefix):]
	for i := 0; i < len(enc); i++ {
		if !isCrockford(enc[i]) {
			return false
		}
	}
	// ParseStrict refuses what the alphabet check cannot: a first
	// character above 7, whose ULID would overflow 128 bits.
	_, err := ulid.ParseStrict(enc)
	return err == nil
}

// isCrockford reports whether c is a digit of upper-case Crockford base32,
// the alphabet ulid.ULID.String writes: 0-9 and A-Z without I, L, O and U.
func isCrockford(c byte) bool {
	switch {
	case '0' <= c && c <= '9':
		return true
	case 'A' <= c && c <= 'Z':
		return c != 'I' && c != 'L' && c != 'O' && c != 'U'
	default:
		return false
	}
}

// NewWorker returns a lease owner id for this process: "worker_", the host
// name (at most 40 characters of it), the process id and a fresh ULID, for
// example worker_web-1_4242_01JD3Q6Y6F8Q2W9T4M5N7P8R0S. The engine, the
// webhook deliverer and the reference server take their lease owners from
// here, so a lease in the database says which process holds it. now is the
// time in its ULID, on the caller's clock.
func NewWorker(now time.Time) string {
	host, _ := os.Hostname()
	host = strings.Map(func(r rune) rune {
		if r < 0x21 || r > 0x7e || r == '_' {
			return '-'
		}
		return r
	}, host)
	if len(host) > 40 {
		host = host[:40]
	}
	if host == "" {
		host = "host"
	}
	return fmt.Sprintf("worker_%s_%d_%s", host, os.Getpid(), New("", now))
}
