package main

import (
	"context"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/client"
)

// The customers and refunds commands need the chain and the engine, which
// the running server holds: they call its HTTP API with the Go client,
// authenticated by an API key (-key, default $SETTLEFLOW_API_KEY), at
// -api-url (default: the server's own address, from the global -https and
// -public-https flags), trusting -ca (default: the server's certificate,
// -tls-cert or DATA/tls/cert.pem).

// apiKeyEnv names the environment variable -key defaults to.
const apiKeyEnv = "SETTLEFLOW_API_KEY"

// apiFlags are the flags every API command takes.
type apiFlags struct {
	url, key, ca string
	asJSON       bool
}

func (f *apiFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.url, "api-url", "", "the running server's `URL` (default https:// and the server's -public-https, else -https, address)")
	fs.StringVar(&f.key, "key", "", "API `key` sk_test_… or sk_live_…; its environment is the one acted on (default $"+apiKeyEnv+", which keeps it out of the process list)")
	fs.StringVar(&f.ca, "ca", "", "PEM `file` of the certificate to trust (default the server's: -tls-cert, else DATA/tls/cert.pem; none: the system's roots)")
	fs.BoolVar(&f.asJSON, "json", false, "print JSON (the API's objects) instead of text")
}

// publicAddr is the host:port clients reach the server at: -public-https,
// else -https with an unspecified host made localhost.
func publicAddr(c config) string {
	if c.publicHTTPS != "" {
		return c.publicHTTPS
	}
	addr := c.httpsAddr
	if host, port, err := net.SplitHostPort(addr); err == nil && (host == "" || host == "0.0.0.0" || host == "::") {
		addr = net.JoinHostPort("localhost", port)
	}
	return addr
}

// apiClient builds the client of an API command from its flags.
func (f *apiFlags) apiClient(c config) (*client.Client, string, error) {
	key := f.key
	if key == "" {
		key = os.Getenv(apiKeyEnv)
	}
	if key == "" {
		return nil, "", usageError{fmt.Errorf("no API key: pass -key sk_test_… or set $%s", apiKeyEnv)}
	}
	base := f.url
	if base == "" {
		base = "https://" + publicAddr(c)
	}
	opts := []client.Option{client.WithBaseURL(base), client.WithTimeout(time.Minute)}
	ca := f.ca
	if ca == "" {
		ca = c.tlsCert
		if ca == "" {
			if p := filepath.Join(c.dataDir, "tls", "cert.pem"); fileExists(p) {
				ca = p
			}
		}
	}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, "", fmt.Errorf("reading the certificate to trust: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, "", fmt.Errorf("%s holds no PEM certificate", ca)
		}
		opts = append(opts, client.WithRootCAs(pool))
	}
	return client.New(key, opts...), base, nil
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// apiError words a failed call as one sentence, pointing at the server when
// none answered.
func apiError(err error, base string) error {
	var ce *client.ConnectionError
	if errors.As(err, &ce) {
		return fmt.Errorf("%w (is the server running at %s? -api-url says where)", err, base)
	}
	return err
}

// money writes minor units as a decimal amount: 123456 usd is "1234.56 usd".
func money(amount int64, currency string) string {
	sign := ""
	if amount < 0 {
		sign, amount = "-", -amount
	}
	return fmt.Sprintf("%s%d.%02d %s", sign, amount/100, amount%100, currency)
}

// apiContext is what the API groups' open returns: the client and its URL.
type apiContext struct {
	c    *client.Client
	base string
}

func openAPI(f *apiFlags) func(ctx context.Context, c config) (*cmdContext, func(), error) {
	return func(ctx context.Context, c config) (*cmdContext, func(), error) {
		cl, base, err := f.apiClient(c)
		if err != nil {
			return nil, nil, err
		}
		return &cmdContext{shared: &apiContext{c: cl, base: base}}, func() {}, nil
	}
}

// customersGroup is the customers command: customers' funds, through the
// running server's API.
func customersGroup() *group {
	var (
		api    apiFlags
		amount int64
	)
	ac := func(x *cmdContext) *apiContext { return x.shared.(*apiContext) }
	return &group{
		name:    "customers",
		summary: "Show customers' funds and fund test customers, through the running server's API (docs/api.md §12).",
		detail: "In test mode a customer's first workflow is funded by the test faucet (-test-faucet), except the test customer " +
			settleflow.TestCustomerInsufficientFunds + ", which is never funded in test mode: its workflows are refused with 402 insufficient_funds " +
			"until something deposits for it (customers fund does). These commands call the running server at -api-url with -key (default $" + apiKeyEnv + ").",
		open: openAPI(&api),
		subs: []subcommand{{
			name: "show", args: "CUSTOMER_ID", nargs: 1,
			summary: "Show a customer's balance (on chain, reserved, under withdrawal notice, available) and where to deposit, in the key's environment.",
			flags:   api.register,
			run: func(ctx context.Context, x *cmdContext) error {
				cus, err := ac(x).c.Customers.Fetch(ctx, x.args[0])
				if err != nil {
					return apiError(err, ac(x).base)
				}
				if api.asJSON {
					return printJSON(x.stdout, cus)
				}
				return printCustomer(x.stdout, cus)
			},
		}, {
			name: "fund", args: "CUSTOMER_ID", nargs: 1,
			summary: "Deposit -amount from the test faucet for a test customer (test keys only) and show the customer once the deposit is applied. " +
				"The faucet holds what its deployment minted (10,000,000.00 on the embedded chain); more than it holds is refused (400 parameter_invalid, naming what it holds): " +
				"refill it by minting test tokens to the faucet's address with the key that deployed the token, or start a new test chain.",
			flags: func(fs *flag.FlagSet) {
				fs.Int64Var(&amount, "amount", 0, "the deposit in minor `units` (5000 is 50.00), at least 1 (required)")
				api.register(fs)
			},
			run: func(ctx context.Context, x *cmdContext) error {
				if err := need(amount >= 1 && amount <= settleflow.MaxAmount, "customers fund needs -amount N, an integer from 1 to %d (minor units)", settleflow.MaxAmount); err != nil {
					return err
				}
				cus, err := ac(x).c.TestHelpers.FundCustomer(ctx, x.args[0], amount)
				if err != nil {
					return apiError(err, ac(x).base)
				}
				if api.asJSON {
					return printJSON(x.stdout, cus)
				}
				fmt.Fprintf(x.stdout, "deposited %s for %s from the test faucet\n", money(amount, cus.Balance.Currency), cus.ID)
				return printCustomer(x.stdout, cus)
			},
		}},
	}
}

func printCustomer(w io.Writer, c *settleflow.Customer) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	env := "test"
	if c.Livemode {
		env = "live"
	}
	b := c.Balance
	fmt.Fprintf(tw, "customer\t%s (%s)\n", c.ID, env)
	fmt.Fprintf(tw, "on chain\t%s\n", money(b.OnChain, b.Currency))
	fmt.Fprintf(tw, "reserved\t%s\n", money(b.Reserved, b.Currency))
	fmt.Fprintf(tw, "pending withdrawal\t%s\n", money(b.PendingWithdrawal, b.Currency))
	fmt.Fprintf(tw, "available\t%s\n", money(b.Available, b.Currency))
	if d := c.Deposit; d != nil {
		fmt.Fprintf(tw, "deposit to\tcontract %s on chain %d (%s)\n", d.Contract, d.ChainID, d.Network)
		fmt.Fprintf(tw, "token\t%s\n", d.Token)
		fmt.Fprintf(tw, "customer ref\t%s\n", d.CustomerRef)
	} else {
		fmt.Fprintf(tw, "deposit to\t(none: this environment's charges are not paid from customer balances)\n")
	}
	return tw.Flush()
}

// refundsGroup is the refunds command: refunds of settled charges, through
// the running server's API.
func refundsGroup() *group {
	var (
		api              apiFlags
		amount           int64
		reason, key      string
		workflow, status string
		limit            int
	)
	ac := func(x *cmdContext) *apiContext { return x.shared.(*apiContext) }
	return &group{
		name:    "refunds",
		summary: "Refund settled charges and list refunds, through the running server's API (docs/api.md §13).",
		detail:  "These commands call the running server at -api-url with -key (default $" + apiKeyEnv + "); the key's environment is the one acted on.",
		open:    openAPI(&api),
		subs: []subcommand{{
			name: "create", args: "WORKFLOW_ID", nargs: 1,
			summary: "Refund part (-amount) or all that is left of a Settled workflow's charge to its customer's balance; the refund settles on chain in the background.",
			flags: func(fs *flag.FlagSet) {
				fs.Int64Var(&amount, "amount", 0, "the refund in minor `units` (100 is 1.00); 0 or none: all that is left")
				fs.StringVar(&reason, "reason", "", "why, at most 500 characters")
				fs.StringVar(&key, "idempotency-key", "", "the same key and flags within 24 h answer the first refund instead of making another (default: a fresh one)")
				api.register(fs)
			},
			run: func(ctx context.Context, x *cmdContext) error {
				if err := need(amount >= 0, "refunds create -amount %d: want a positive amount, or none for all that is left", amount); err != nil {
					return err
				}
				rf, err := ac(x).c.Refunds.Create(ctx, x.args[0], &client.RefundCreateParams{Amount: amount, Reason: reason, IdempotencyKey: key})
				if err != nil {
					return apiError(err, ac(x).base)
				}
				if api.asJSON {
					return printJSON(x.stdout, rf)
				}
				fmt.Fprintf(x.stdout, "refund %s of %s: %s, %s\n", rf.ID, rf.WorkflowID, money(rf.Amount, rf.Currency), rf.Status)
				return nil
			},
		}, {
			name:    "list",
			summary: "List refunds, newest first: workflow, amount, status, reason.",
			flags: func(fs *flag.FlagSet) {
				fs.StringVar(&workflow, "workflow", "", "only the refunds of this workflow `id`")
				fs.StringVar(&status, "status", "", "only these: Pending, Succeeded or Failed")
				fs.IntVar(&limit, "limit", 20, "at most this many, 1–1000")
				api.register(fs)
			},
			run: func(ctx context.Context, x *cmdContext) error {
				if status != "" {
					if _, err := settleflow.ParseRefundStatus(status); err != nil {
						return usageError{fmt.Errorf("refunds list --status %q: want Pending, Succeeded or Failed", status)}
					}
				}
				if err := need(limit >= 1 && limit <= 1000, "refunds list --limit %d: want 1 to 1000", limit); err != nil {
					return err
				}
				p := &client.RefundListParams{WorkflowID: workflow, Status: settleflow.RefundStatus(status), Limit: min(limit, 100)}
				var rs []*settleflow.Refund
				for rf, err := range ac(x).c.Refunds.ListAutoPaging(ctx, p) {
					if err != nil {
						return apiError(err, ac(x).base)
					}
					rs = append(rs, rf)
					if len(rs) == limit {
						break
					}
				}
				if api.asJSON {
					if rs == nil {
						rs = []*settleflow.Refund{}
					}
					return printJSON(x.stdout, rs)
				}
				tw := tabwriter.NewWriter(x.stdout, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tWORKFLOW\tAMOUNT\tSTATUS\tCREATED\tREASON")
				for _, rf := range rs {
					st := string(rf.Status)
					if rf.Failure != nil {
						st += ": " + string(rf.Failure.Code)
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", rf.ID, rf.WorkflowID, money(rf.Amount, rf.Currency), st,
						rf.CreatedAt.Format(time.RFC3339), oneLine(rf.Reason))
				}
				return tw.Flush()
			},
		}},
	}
}

// oneLine keeps a table row on one line: line breaks and tabs become
// spaces, and a long text is cut at 60 characters.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 60 {
		s = string(r[:59]) + "…"
	}
	return s
}
