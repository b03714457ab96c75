package httpapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/apikey"
	"github.com/settleflow/settleflow/httpapi"
	"github.com/settleflow/settleflow/storage/bunstore"
)

// testKeys manages real API keys in the test's database; it maps secrets
// back to key ids for the tests' convenience.
type testKeys struct {
	m   *apikey.Manager
	ids map[string]string // secret → key id
}

func newTestKeys(t *testing.T, store *bunstore.Store) *testKeys {
	t.Helper()
	m, err := apikey.New(store.DB(), apikey.Options{CacheTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return &testKeys{m: m, ids: map[string]string{}}
}

func (k *testKeys) authenticator() httpapi.Authenticator { return httpapi.APIKeys(k.m) }

func (k *testKeys) create(t *testing.T, env settleflow.Environment, plan string) string {
	t.Helper()
	key, secret, err := k.m.Create(context.Background(), apikey.CreateParams{Environment: env, Name: "test", Plan: apikey.Plan(plan)})
	if err != nil {
		t.Fatal(err)
	}
	k.ids[secret] = key.ID
	return secret
}

func (k *testKeys) createLimits(t *testing.T, env settleflow.Environment, perMinute, perDay int) string {
	t.Helper()
	key, secret, err := k.m.Create(context.Background(), apikey.CreateParams{Environment: env, Name: "test",
		Plan: apikey.Enterprise, PerMinute: perMinute, PerDay: perDay})
	if err != nil {
		t.Fatal(err)
	}
	k.ids[secret] = key.ID
	return secret
}

func (k *testKeys) rotate(t *testing.T, secret string, expireIn time.Duration) string {
	t.Helper()
	key, next, err := k.m.Rotate(context.Background(), k.ids[secret], expireIn)
	if err != nil {
		t.Fatal(err)
	}
	k.ids[next] = key.ID
	return next
}

func (k *testKeys) revoke(t *testing.T, secret string) {
	t.Helper()
	if err := k.m.Revoke(context.Background(), k.ids[secret]); err != nil {
		t.Fatal(err)
	}
}

// createWorker makes a worker key of env, limited to products if any.
func (k *testKeys) createWorker(t *testing.T, env settleflow.Environment, products ...string) string {
	t.Helper()
	key, secret, err := k.m.Create(context.Background(), apikey.CreateParams{Environment: env, Name: "worker",
		Kind: apikey.Worker, Products: products})
	if err != nil {
		t.Fatal(err)
	}
	k.ids[secret] = key.ID
	return secret
}
