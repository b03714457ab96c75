// Package limitertest is the conformance suite of ratelimit.Limiter: every
// implementation (the in-memory one, the database one) must pass it.
package limitertest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/settleflow/settleflow/ratelimit"
)

var ctx = context.Background()

// starter is the starter plan's windows.
var starter = []ratelimit.Window{ratelimit.Minute(300), ratelimit.Day(50000)}

// Options size the suite.
type Options struct {
	// Goroutines and PerGoroutine size the concurrency test (default 64 and
	// 250: 16,000 requests); a limiter that writes each request durably
	// takes fewer.
	Goroutines, PerGoroutine int
}

// Run runs the suite; newLimiter returns an empty limiter.
func Run(t *testing.T, newLimiter func(*testing.T) ratelimit.Limiter, o Options) {
	if o.Goroutines <= 0 {
		o.Goroutines = 64
	}
	if o.PerGoroutine <= 0 {
		o.PerGoroutine = 250
	}
	for _, c := range []struct {
		name string
		fn   func(*testing.T, func(*testing.T) ratelimit.Limiter, Options)
	}{
		{"ConcurrentOneKey", testConcurrentOneKey},
		{"HeadersExact", testHeadersExact},
		{"RolloverAndRetryAfter", testRolloverAndRetryAfter},
		{"DayWindowBinds", testDayWindowBinds},
		{"KeysAreIndependent", testKeysAreIndependent},
		{"InvalidWindows", testInvalidWindows},
	} {
		t.Run(c.name, func(t *testing.T) { c.fn(t, newLimiter, o) })
	}
}

func allow(t *testing.T, l ratelimit.Limiter, key string, ws []ratelimit.Window, now time.Time) ratelimit.Decision {
	t.Helper()
	d, err := l.Allow(ctx, key, ws, now)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// testConcurrentOneKey hammers one key from many goroutines whose clock runs
// across several minute windows, and checks that no window ever admitted more
// than its limit, that every admitted request saw a distinct remaining count
// (the check-and-consume is atomic), and that headers match decisions.
func testConcurrentOneKey(t *testing.T, newLimiter func(*testing.T) ratelimit.Limiter, o Options) {
	const (
		minuteCap = 100
		dayCap    = 450
	)
	goroutines, perG := o.Goroutines, o.PerGoroutine
	// The clock crosses six minute windows whatever the number of requests
	// (at least 300 a minute, so each window fills up).
	step := 320 * time.Second / time.Duration(goroutines*perG)
	l := newLimiter(t)
	ws := []ratelimit.Window{ratelimit.Minute(minuteCap), ratelimit.Day(dayCap)}
	base := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	var seq atomic.Int64 // the shared clock: every request is 20 ms after the previous one

	type windowKey struct {
		name  string
		reset int64
	}
	var (
		mu        sync.Mutex
		admitted  = map[windowKey]int{}
		remaining = map[windowKey]map[int]bool{}
		refused   int
	)
	var wg sync.WaitGroup
	errc := make(chan error, goroutines*perG*3) // room for every error: a sender never blocks
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perG; i++ {
				now := base.Add(time.Duration(seq.Add(1)) * step)
				d, err := l.Allow(ctx, "key_hot", ws, now)
				if err != nil {
					errc <- err
					return
				}
				if err := checkHeaders(d); err != nil {
					errc <- err
					return
				}
				mu.Lock()
				if !d.Allowed {
					refused++
				}
				for _, w := range d.Windows {
					if w.Remaining < 0 || w.Remaining > w.Limit {
						errc <- fmt.Errorf("window %s: remaining %d out of [0, %d]", w.Name, w.Remaining, w.Limit)
					}
					if !d.Allowed {
						continue
					}
					k := windowKey{w.Name, w.Reset.Unix()}
					admitted[k]++
					if remaining[k] == nil {
						remaining[k] = map[int]bool{}
					}
					if remaining[k][w.Remaining] {
						errc <- fmt.Errorf("window %v: remaining %d seen twice", k, w.Remaining)
					}
					remaining[k][w.Remaining] = true
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	total := 0
	for k, n := range admitted {
		limit := minuteCap
		if k.name == "day" {
			limit = dayCap
			total = n
		}
		if n > limit {
			t.Errorf("window %v admitted %d > limit %d", k, n, limit)
		}
	}
	// Six minute windows (the first five fill up, 500 > 450), so the day
	// window is the one that runs out.
	if total != dayCap {
		t.Errorf("day admitted %d, want exactly %d", total, dayCap)
	}
	if refused != goroutines*perG-dayCap {
		t.Errorf("refused %d, want %d", refused, goroutines*perG-dayCap)
	}
}

// checkHeaders verifies that d's headers describe d.
func checkHeaders(d ratelimit.Decision) error {
	h := http.Header{}
	d.WriteHeaders(h)
	b := d.Binding
	for _, w := range d.Windows {
		if w.Remaining < b.Remaining || w.Remaining == b.Remaining && w.Reset.After(b.Reset) {
			return fmt.Errorf("binding %s (r=%d) but %s has r=%d", b.Name, b.Remaining, w.Name, w.Remaining)
		}
	}
	t := int((b.Reset.Sub(d.Now) + time.Second - 1) / time.Second)
	want := map[string]string{
		"X-RateLimit-Limit":     strconv.Itoa(b.Limit),
		"X-RateLimit-Remaining": strconv.Itoa(b.Remaining),
		"X-RateLimit-Reset":     strconv.FormatInt(b.Reset.Unix(), 10),
		"RateLimit":             fmt.Sprintf(`"%s";r=%d;t=%d`, b.Name, b.Remaining, t),
	}
	if !d.Allowed {
		want["Retry-After"] = strconv.Itoa(t)
		if b.Remaining != 0 {
			return fmt.Errorf("refused but binding window %s has %d remaining", b.Name, b.Remaining)
		}
	} else if h.Get("Retry-After") != "" {
		return errors.New("Retry-After on an admitted request")
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			return fmt.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	return nil
}

func testHeadersExact(t *testing.T, newLimiter func(*testing.T) ratelimit.Limiter, o Options) {
	l := newLimiter(t)
	now := time.Date(2026, 11, 21, 10, 0, 19, 250e6, time.UTC)
	d := allow(t, l, "key_a", starter, now)
	h := http.Header{}
	d.WriteHeaders(h)
	want := http.Header{
		"X-Ratelimit-Limit":     {"300"},
		"X-Ratelimit-Remaining": {"299"},
		"X-Ratelimit-Reset":     {strconv.FormatInt(time.Date(2026, 11, 21, 10, 1, 0, 0, time.UTC).Unix(), 10)},
		"Ratelimit-Policy":      {`"minute";q=300;w=60, "day";q=50000;w=86400`},
		"Ratelimit":             {`"minute";r=299;t=41`},
	}
	if fmt.Sprint(h) != fmt.Sprint(want) {
		t.Errorf("headers\n got %v\nwant %v", h, want)
	}
	if !d.Allowed || d.RetryAfter != 0 {
		t.Errorf("decision %+v", d)
	}
}

func testRolloverAndRetryAfter(t *testing.T, newLimiter func(*testing.T) ratelimit.Limiter, o Options) {
	l := newLimiter(t)
	ws := []ratelimit.Window{ratelimit.Minute(2), ratelimit.Day(100)}
	t0 := time.Date(2026, 11, 21, 10, 0, 5, 0, time.UTC)
	for i, want := range []int{1, 0} {
		d := allow(t, l, "k", ws, t0.Add(time.Duration(i)*time.Second))
		if !d.Allowed || d.Binding.Name != "minute" || d.Binding.Remaining != want {
			t.Fatalf("request %d: %+v", i, d)
		}
	}
	d := allow(t, l, "k", ws, t0.Add(10*time.Second)) // 10:00:15
	if d.Allowed || d.RetryAfter != 45 || d.Binding.Name != "minute" || d.Windows[1].Remaining != 98 {
		t.Fatalf("third request: %+v", d)
	}
	h := http.Header{}
	d.WriteHeaders(h)
	if h.Get("Retry-After") != "45" || h.Get("RateLimit") != `"minute";r=0;t=45` || h.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("refused headers %v", h)
	}
	// Half a second before the boundary: still refused, Retry-After rounds up to 1.
	d = allow(t, l, "k", ws, time.Date(2026, 11, 21, 10, 0, 59, 500e6, time.UTC))
	if d.Allowed || d.RetryAfter != 1 {
		t.Fatalf("at 10:00:59.5: %+v", d)
	}
	// The next minute starts afresh; the day keeps counting.
	d = allow(t, l, "k", ws, time.Date(2026, 11, 21, 10, 1, 0, 0, time.UTC))
	if !d.Allowed || d.Windows[0].Remaining != 1 || d.Windows[1].Remaining != 97 {
		t.Fatalf("after rollover: %+v", d)
	}
	if want := time.Date(2026, 11, 21, 10, 2, 0, 0, time.UTC); !d.Windows[0].Reset.Equal(want) {
		t.Errorf("minute reset %v, want %v", d.Windows[0].Reset, want)
	}
	if want := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC); !d.Windows[1].Reset.Equal(want) {
		t.Errorf("day reset %v, want %v", d.Windows[1].Reset, want)
	}
	// A clock that steps back into the previous minute keeps counting in
	// the window already open instead of starting another.
	d = allow(t, l, "k", ws, time.Date(2026, 11, 21, 10, 0, 58, 0, time.UTC))
	if !d.Allowed || d.Windows[0].Remaining != 0 {
		t.Fatalf("clock stepped back: %+v", d)
	}
	if d := allow(t, l, "k", ws, time.Date(2026, 11, 21, 10, 0, 58, 0, time.UTC)); d.Allowed {
		t.Fatalf("clock stepped back: admitted over the limit: %+v", d)
	}
}

func testDayWindowBinds(t *testing.T, newLimiter func(*testing.T) ratelimit.Limiter, o Options) {
	l := newLimiter(t)
	ws := []ratelimit.Window{ratelimit.Minute(300), ratelimit.Day(5)}
	now := time.Date(2026, 11, 21, 23, 59, 0, 0, time.UTC)
	var d ratelimit.Decision
	for i := 0; i < 3; i++ {
		d = allow(t, l, "k", ws, now)
	}
	if d.Binding.Name != "day" || d.Binding.Remaining != 2 {
		t.Fatalf("binding %+v", d.Binding)
	}
	h := http.Header{}
	d.WriteHeaders(h)
	midnight := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	if h.Get("X-RateLimit-Limit") != "5" || h.Get("X-RateLimit-Remaining") != "2" ||
		h.Get("X-RateLimit-Reset") != strconv.FormatInt(midnight.Unix(), 10) ||
		h.Get("RateLimit") != `"day";r=2;t=60` ||
		h.Get("RateLimit-Policy") != `"minute";q=300;w=60, "day";q=5;w=86400` {
		t.Fatalf("headers %v", h)
	}
	allow(t, l, "k", ws, now)
	allow(t, l, "k", ws, now)
	d = allow(t, l, "k", ws, now.Add(30*time.Second))
	if d.Allowed || d.Binding.Name != "day" || d.RetryAfter != 30 || d.Windows[0].Remaining != 295 {
		t.Fatalf("day exhausted: %+v", d)
	}
	// Both windows with the same remaining: the one that resets later binds.
	d = allow(t, l, "other", []ratelimit.Window{ratelimit.Minute(5), ratelimit.Day(5)}, now)
	if d.Binding.Name != "day" {
		t.Fatalf("tie: binding %s, want day", d.Binding.Name)
	}
	// Both exhausted: Retry-After waits for the later reset, when both have room.
	ws2 := []ratelimit.Window{ratelimit.Minute(1), ratelimit.Day(1)}
	allow(t, l, "both", ws2, now)
	d = allow(t, l, "both", ws2, now)
	if d.Allowed || d.Binding.Name != "day" || d.RetryAfter != 60 {
		t.Fatalf("both exhausted: %+v", d)
	}
}

func testKeysAreIndependent(t *testing.T, newLimiter func(*testing.T) ratelimit.Limiter, o Options) {
	l := newLimiter(t)
	ws := []ratelimit.Window{ratelimit.Minute(1)}
	now := time.Unix(1_800_000_000, 0)
	if !allow(t, l, "a", ws, now).Allowed || allow(t, l, "a", ws, now).Allowed {
		t.Fatal("a: want one admitted, then refused")
	}
	if !allow(t, l, "b", ws, now).Allowed {
		t.Fatal("b refused because of a")
	}
	// A zero limit refuses everything.
	if d := allow(t, l, "c", []ratelimit.Window{ratelimit.Minute(0)}, now); d.Allowed || d.RetryAfter != 60 {
		t.Fatalf("zero limit: %+v", d)
	}
}

func testInvalidWindows(t *testing.T, newLimiter func(*testing.T) ratelimit.Limiter, o Options) {
	l := newLimiter(t)
	now := time.Now()
	for _, ws := range [][]ratelimit.Window{
		nil,
		{{Name: "", Limit: 1, Length: time.Minute}},
		{{Name: `a"b`, Limit: 1, Length: time.Minute}},
		{{Name: "m", Limit: -1, Length: time.Minute}},
		{{Name: "m", Limit: 1, Length: 0}},
		{{Name: "m", Limit: 1, Length: 1500 * time.Millisecond}},
	} {
		if _, err := l.Allow(ctx, "k", ws, now); !errors.Is(err, ratelimit.ErrInvalidWindow) {
			t.Errorf("%v: err = %v, want ErrInvalidWindow", ws, err)
		}
	}
}
