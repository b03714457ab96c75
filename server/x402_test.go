package server_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/server"
)

// An X402Config New refuses is a *ConfigError of X402 saying why, before
// anything is opened.
func TestX402ConfigErrors(t *testing.T) {
	ps := products(t, open())
	key, _ := crypto.GenerateKey()
	for _, c := range []struct {
		name string
		x    server.X402Config
		want string
	}{
		{"no products", server.X402Config{}, "Products is empty"},
		{"an empty product name", server.X402Config{Products: []string{"echo", " "}}, "Products has an empty name"},
		{"an environment of neither", server.X402Config{Products: []string{"echo"}, Environment: "prod"}, `Environment "prod": want test or live`},
		{"two collector keys", server.X402Config{Products: []string{"echo"}, CollectorKey: key, CollectorKeyFile: "k"}, "set one, not both"},
		{"a negative wait", server.X402Config{Products: []string{"echo"}, Wait: -time.Second}, "want 0 or more"},
		{"a wait past the request timeout", server.X402Config{Products: []string{"echo"}, Wait: 30 * time.Second}, "want less than the request timeout (30s)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			x := c.x
			s, err := server.New(t.Context(), server.Config{Products: ps, DataDir: dir, Addr: "127.0.0.1:0", X402: &x})
			var ce *server.ConfigError
			if s != nil || !errors.As(err, &ce) || ce.Field != "X402" || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("New: %v; want a ConfigError of X402 saying %q", err, c.want)
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("New refused the Config but made the data directory: %v", err)
			}
		})
	}
}

// What is wrong only once the chain or the catalogue is open: live x402
// without live settlement, a collector that is the test faucet's account
// (New, a ConfigError), a product not in the catalogue (Start, x402.New's
// error); each leaves the data directory free for the next server. A
// collector key file that is absent is refused, not made.
func TestX402StartErrors(t *testing.T) {
	dir := t.TempDir()
	ps := products(t, open())
	cfg := func(x server.X402Config) server.Config {
		return server.Config{Products: ps, DataDir: dir, Addr: "127.0.0.1:0", X402: &x}
	}
	_, err := server.New(t.Context(), cfg(server.X402Config{Products: []string{"echo"}, Environment: settleflow.Live}))
	var ce *server.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "live settlement is not configured") {
		t.Fatalf("x402 in live without a live chain: %v", err)
	}
	// The embedded chain's faucet, as the data directory keeps it.
	b, err := os.ReadFile(filepath.Join(dir, "chain", "simulated-chain.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct{ FaucetKey string }
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	faucet, err := crypto.HexToECDSA(st.FaucetKey)
	if err != nil {
		t.Fatal(err)
	}
	_, err = server.New(t.Context(), cfg(server.X402Config{Products: []string{"echo"}, CollectorKey: faucet}))
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "is the test faucet's account: give the collector a key of its own") {
		t.Fatalf("the faucet as the collector: %v", err)
	}
	missing := filepath.Join(dir, "no-such.key")
	_, err = server.New(t.Context(), cfg(server.X402Config{Products: []string{"echo"}, CollectorKeyFile: missing}))
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "CollectorKeyFile "+missing) {
		t.Fatalf("an absent collector key file: %v", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the absent collector key file was made: %v", err)
	}
	s, err := server.New(t.Context(), cfg(server.X402Config{Products: []string{"echo", "nope"}}))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(t.Context()); err == nil || err.Error() != server.X402ProductsError+`x402: no product "nope"` {
		t.Fatalf("Start selling a product not in the catalogue: %v", err)
	}
	s.Stop(t.Context()) //nolint:errcheck // not started
	// The collector and access secret made for the embedded chain are kept.
	for _, f := range []string{"x402-collector.key", "x402-access-secret", "x402-test-wallet.key"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v, want mode 0600", f, fi, err)
		}
	}
	s, err = server.New(t.Context(), cfg(server.X402Config{Products: []string{"echo"}}))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
}
