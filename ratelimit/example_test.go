package ratelimit_test

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/settleflow/settleflow/ratelimit"
)

func ExampleMemory_Allow() {
	l := ratelimit.NewMemory()
	windows := []ratelimit.Window{ratelimit.Minute(300), ratelimit.Day(50000)}
	now := time.Date(2026, 11, 21, 10, 0, 19, 0, time.UTC)

	d, err := l.Allow(context.Background(), "key_01JD3Q6Y6F8Q2W9T4M5N7P8R0S", windows, now)
	if err != nil {
		panic(err)
	}
	h := http.Header{}
	d.WriteHeaders(h)
	fmt.Println(d.Allowed)
	for _, k := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit-Policy", "RateLimit"} {
		fmt.Printf("%s: %s\n", k, h.Get(k))
	}
	// Output:
	// true
	// X-RateLimit-Limit: 300
	// X-RateLimit-Remaining: 299
	// X-RateLimit-Reset: 1795255260
	// RateLimit-Policy: "minute";q=300;w=60, "day";q=50000;w=86400
	// RateLimit: "minute";r=299;t=41
}
