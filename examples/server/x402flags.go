package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/settleflow/settleflow"
	sfserver "github.com/settleflow/settleflow/server"
)

// x402Flags sell products to agents over x402 (docs/agents.md, "Selling to
// agents"): sfserver.X402Config.
type x402Flags struct {
	products, env, collectorKeyFile, accessSecretFile string
	wait                                              time.Duration
}

func (f *x402Flags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.products, "x402-products", "", "`products` (comma-separated) sold to agents over x402 at /x402/workflows, paid per workflow with no API key (docs/agents.md, \"Selling to agents\"); off by default")
	fs.StringVar(&f.env, "x402-env", "test", "`environment` x402 sells in: test, or live (only when asked for, with -live-rpc and the rest)")
	fs.StringVar(&f.collectorKeyFile, "x402-collector-key-file", "", "the x402 collector's hex private key `file`: the account payments go to, which submits them and pays their gas; never the operator's, payee's or faucet's key. Required on a chain over RPC; on the embedded test chain made in DATA/x402-collector.key and given gas")
	fs.StringVar(&f.accessSecretFile, "x402-access-secret-file", "", "`file` holding the secret (hex) the x402 access tokens are keyed with; made if absent (default DATA/x402-access-secret)")
	fs.DurationVar(&f.wait, "x402-wait", 0, "how long a paid x402 create waits for the workflow's outcome before it answers (0: answer once created); less than -request-timeout")
}

// config is the X402Config the flags ask for, nil without -x402-products.
func (f x402Flags) config() (*sfserver.X402Config, error) {
	if f.products == "" {
		if f.env != "test" || f.collectorKeyFile != "" || f.accessSecretFile != "" || f.wait != 0 {
			return nil, usageError{errors.New("the -x402-* flags need -x402-products: name the products to sell over x402")}
		}
		return nil, nil
	}
	env := settleflow.Environment(f.env)
	if !env.Valid() {
		return nil, usageError{fmt.Errorf("-x402-env %q: want test or live", f.env)}
	}
	if f.wait < 0 {
		return nil, usageError{fmt.Errorf("-x402-wait %v: want 0 or more", f.wait)}
	}
	var products []string
	for _, p := range strings.Split(f.products, ",") {
		if p = strings.TrimSpace(p); p == "" {
			return nil, usageError{fmt.Errorf("-x402-products %q: an empty product name", f.products)}
		}
		products = append(products, p)
	}
	return &sfserver.X402Config{Products: products, Environment: env, CollectorKeyFile: f.collectorKeyFile,
		AccessSecretFile: f.accessSecretFile, Wait: f.wait}, nil
}
