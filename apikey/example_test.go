package apikey_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/apikey"
	"github.com/settleflow/settleflow/ratelimit"
	"github.com/settleflow/settleflow/storage/sqlite"
)

// open returns a Manager on a fresh SQLite file and a function that removes it.
func open() (*apikey.Manager, func()) {
	dir, err := os.MkdirTemp("", "apikey-example")
	if err != nil {
		panic(err)
	}
	db, err := sqlite.OpenDB(filepath.Join(dir, "settleflow.db"), sqlite.OpenOptions{})
	if err != nil {
		panic(err)
	}
	m, err := apikey.New(db, apikey.Options{})
	if err != nil {
		panic(err)
	}
	if err := m.Migrate(context.Background()); err != nil {
		panic(err)
	}
	return m, func() { m.Close(); db.Close(); os.RemoveAll(dir) }
}

func ExampleManager_Create() {
	m, done := open()
	defer done()
	ctx := context.Background()

	key, secret, err := m.Create(ctx, apikey.CreateParams{Environment: settleflow.Test, Name: "ci"})
	if err != nil {
		panic(err)
	}
	// Show the secret to its owner once; it cannot be recovered.
	fmt.Println(strings.HasPrefix(secret, "sk_test_"), len(secret))
	fmt.Println(key.Display == "sk_test_…"+secret[len(secret)-4:])
	fmt.Println(key.Plan, key.PerMinute, key.PerDay, key.Livemode())

	_, _, err = m.Create(ctx, apikey.CreateParams{Environment: settleflow.Live, Name: "big", Plan: apikey.Enterprise})
	fmt.Println(errors.Is(err, apikey.ErrInvalidLimits))
	// Output:
	// true 48
	// true
	// starter 300 50000 false
	// true
}

// A request handler authenticates the key, then counts the request against
// the key's limits.
func ExampleManager_Authenticate() {
	m, done := open()
	defer done()
	ctx := context.Background()
	_, secret, _ := m.Create(ctx, apikey.CreateParams{Environment: settleflow.Test, Name: "ci"})
	limiter := ratelimit.NewMemory()

	handle := func(authorization string) {
		key, err := m.Authenticate(ctx, authorization)
		var ae *apikey.AuthError
		if errors.As(err, &ae) {
			fmt.Println(http.StatusUnauthorized, ae.Code)
			return
		}
		if err != nil {
			fmt.Println(http.StatusInternalServerError)
			return
		}
		d, err := limiter.Allow(ctx, key.RateLimitKey(), key.Windows(), time.Now())
		if err != nil {
			panic(err)
		}
		h := http.Header{}
		d.WriteHeaders(h)
		fmt.Println(d.Allowed, key.Environment, h.Get("X-RateLimit-Limit"), h.Get("X-RateLimit-Remaining"))
	}
	handle("Bearer " + secret)
	handle("")
	handle("Bearer sk_test_nope")
	// Output:
	// true test 300 299
	// 401 api_key_missing
	// 401 api_key_malformed
}
