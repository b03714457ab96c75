package ratelimit_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/settleflow/settleflow/ratelimit"
	"github.com/settleflow/settleflow/ratelimit/limitertest"
)

var ctx = context.Background()

// starter is the starter plan's windows.
var starter = []ratelimit.Window{ratelimit.Minute(300), ratelimit.Day(50000)}

func allow(t *testing.T, l ratelimit.Limiter, key string, ws []ratelimit.Window, now time.Time) ratelimit.Decision {
	t.Helper()
	d, err := l.Allow(ctx, key, ws, now)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestConformance(t *testing.T) {
	limitertest.Run(t, func(*testing.T) ratelimit.Limiter { return ratelimit.NewMemory() }, limitertest.Options{})
}

func TestIdleKeysEvicted(t *testing.T) {
	l := ratelimit.NewMemory()
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	for i := 0; i < 1000; i++ {
		allow(t, l, "key_"+strconv.Itoa(i), starter, now)
	}
	if n := l.Len(); n != 1000 {
		t.Fatalf("Len = %d, want 1000", n)
	}
	l.Sweep(now.Add(time.Hour)) // the day window is still open
	if n := l.Len(); n != 1000 {
		t.Fatalf("Len after an hour = %d, want 1000", n)
	}
	// Only minute windows: gone after the minute, swept by Allow itself.
	ws := []ratelimit.Window{ratelimit.Minute(10)}
	l2 := ratelimit.NewMemory()
	for i := 0; i < 1000; i++ {
		allow(t, l2, "key_"+strconv.Itoa(i), ws, now)
	}
	later := now.Add(2 * time.Minute)
	for i := 0; i < 1000; i++ {
		allow(t, l2, "other_"+strconv.Itoa(i), ws, later)
	}
	if n := l2.Len(); n != 1000 {
		t.Fatalf("Len = %d, want the 1000 current keys only", n)
	}
	l.Sweep(now.Add(25 * time.Hour))
	if n := l.Len(); n != 0 {
		t.Fatalf("Len after a day = %d, want 0", n)
	}
}

// BenchmarkAllow measures Allow from parallel goroutines, on one hot key and
// on many keys.
func BenchmarkAllow(b *testing.B) {
	ws := []ratelimit.Window{ratelimit.Minute(1 << 30), ratelimit.Day(1 << 30)}
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	b.Run("one-key", func(b *testing.B) {
		l := ratelimit.NewMemory()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := l.Allow(ctx, "key_hot", ws, now); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	b.Run("many-keys", func(b *testing.B) {
		l := ratelimit.NewMemory()
		keys := make([]string, 1024)
		for i := range keys {
			keys[i] = "key_" + strconv.Itoa(i)
		}
		var n atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := int(n.Add(1)) * 7919
			for pb.Next() {
				i++
				if _, err := l.Allow(ctx, keys[i%len(keys)], ws, now); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}
