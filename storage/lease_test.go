package storage_test

import (
	"crypto/rand"
	"encoding/hex"
	"sync/atomic"
	"testing"
	"time"

	"github.com/settleflow/settleflow/internal/pgtest"
	"github.com/settleflow/settleflow/storage"
)

// A holder whose checks stall (a frozen process, a database it cannot
// reach) stops reporting the lease within the grace, before any successor
// could start; once a check succeeds again on the same session it holds
// it again, under a term.
func TestLeaseHoldingLapsesWhenChecksStall(t *testing.T) {
	db := pgtest.Connect(t).Storage(t, "sf_lease_stall")()
	b := make([]byte, 8)
	rand.Read(b)
	var stall atomic.Pointer[chan struct{}]
	storage.SetLeaseCheckHook(func() {
		if ch := stall.Load(); ch != nil {
			<-*ch
		}
	})
	defer storage.SetLeaseCheckHook(nil)
	l := db.Lease("settleflow test stall "+hex.EncodeToString(b), storage.LeaseOptions{Check: 20 * time.Millisecond})
	defer l.Close()
	until := func(what string, cond func() bool) time.Duration {
		t.Helper()
		start := time.Now()
		for !cond() {
			if time.Since(start) > 10*time.Second {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(time.Millisecond)
		}
		return time.Since(start)
	}
	until("the lease", l.Held)
	ch := make(chan struct{})
	stall.Store(&ch)
	if d := until("the stalled holding to lapse", func() bool { return !l.Held() }); d > 200*time.Millisecond {
		t.Fatalf("a stalled holding lapsed after %v; want within the grace (40 ms) and a check", d)
	}
	stall.Store(nil)
	close(ch)
	until("the holding to resume", l.Held)
	term := l.Term()

	// Stalled past the session's idle timeout (5 checks): the server ends
	// the session and frees the lock for others; the holder finds its
	// connection gone and takes the lease anew, under a new term.
	ch = make(chan struct{})
	stall.Store(&ch)
	until("the stalled holding to lapse", func() bool { return !l.Held() })
	time.Sleep(500 * time.Millisecond)
	stall.Store(nil)
	close(ch)
	until("a new holding", func() bool { return l.Held() && l.Term() != term })
}
