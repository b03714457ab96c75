package ids

import (
	"strings"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
)

func TestValidOnlyCanonical(t *testing.T) {
	id := New(Workflow, time.Now())
	enc := strings.TrimPrefix(id, Workflow)
	if !Valid(Workflow, id) {
		t.Fatalf("New made %s, which Valid refuses", id)
	}
	// Every id New makes round-trips through ulid unchanged: the canonical
	// form is exactly its String.
	if u := ulid.MustParseStrict(enc); u.String() != enc {
		t.Fatalf("%s parses to %s", enc, u)
	}
	// One letter lowered: the first and the last letter of the id.
	first := strings.IndexAny(enc, "ABCDEFGHJKMNPQRSTVWXYZ")
	last := strings.LastIndexAny(enc, "ABCDEFGHJKMNPQRSTVWXYZ")
	if first < 0 || first == last {
		t.Fatalf("%s has fewer than two letters", enc)
	}
	for _, bad := range []string{
		Workflow + strings.ToLower(enc), // lower case: ParseStrict accepts it
		Workflow + enc[:first] + strings.ToLower(enc[first:first+1]) + enc[first+1:],
		Workflow + enc[:last] + strings.ToLower(enc[last:last+1]) + enc[last+1:],
		Workflow + "8" + enc[1:],             // overflows 128 bits
		Workflow + enc[:10] + "I" + enc[11:], // not in the alphabet
		Workflow + enc[:10] + "U" + enc[11:], // not in the alphabet
		Workflow + enc[:25],                  // short
		Workflow + enc + "0",                 // long
		"WF_" + enc,                          // prefix case
		Event + enc,                          // other prefix
		Workflow + enc[:25] + "\u00e9"[:1],   // a byte of a multi-byte rune
		"",
	} {
		if Valid(Workflow, bad) {
			t.Errorf("Valid(%q) = true", bad)
		}
	}
	if !Valid(Workflow, Workflow+"7ZZZZZZZZZZZZZZZZZZZZZZZZZ") || !Valid(Workflow, Workflow+"00000000000000000000000000") {
		t.Fatal("bounds refused")
	}
}

func TestNewWorker(t *testing.T) {
	a, b := NewWorker(time.Now()), NewWorker(time.Now())
	if a == b || !strings.HasPrefix(a, "worker_") || len(a) > 128 || strings.ContainsAny(a, " \t\n") {
		t.Fatalf("worker ids %q, %q: want distinct, prefixed, printable, at most 128 bytes", a, b)
	}
}
