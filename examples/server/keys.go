package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/settleflow/settleflow/storage"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/apikey"
)

func openKeys(ctx context.Context, db *storage.DB) (*apikey.Manager, error) {
	m, err := apikey.New(db, apikey.Options{})
	if err != nil {
		return nil, err
	}
	if err := m.Migrate(ctx); err != nil {
		return nil, err
	}
	return m, nil
}

// keysGroup is the keys command: API keys on the server's database, the
// same ones the dashboard and the API see.
func keysGroup() *group {
	var (
		env, name, plan   string
		perMinute, perDay int
		expireIn          string
		asJSON            bool
		kind, products    string
	)
	manager := func(x *cmdContext) *apikey.Manager { return x.shared.(*apikey.Manager) }
	return &group{
		name:    "keys",
		summary: "Create, list, rotate and revoke API keys (docs/api.md §8).",
		open: func(ctx context.Context, c config) (*cmdContext, func(), error) {
			db, err := openDB(ctx, c)
			if err != nil {
				return nil, nil, err
			}
			keys, err := openKeys(ctx, db)
			if err != nil {
				db.Close()
				return nil, nil, err
			}
			return &cmdContext{shared: keys}, func() { keys.Close(); db.Close() }, nil
		},
		subs: []subcommand{{
			name:    "create",
			summary: "Create a key; its secret is printed once, on stdout after the key id.",
			flags: func(fs *flag.FlagSet) {
				fs.StringVar(&env, "env", "", "environment: `test` or live (required)")
				fs.StringVar(&name, "name", "", "what the key is for, 1–100 characters (required)")
				fs.StringVar(&plan, "plan", "starter", "`plan`: starter (300/min, 50,000/day), pro (1,000/min, 500,000/day) or enterprise")
				fs.IntVar(&perMinute, "per-minute", 0, "requests per minute (enterprise only, required there)")
				fs.IntVar(&perDay, "per-day", 0, "requests per day (enterprise only, required there)")
				fs.StringVar(&kind, "kind", "secret", "`kind`: secret (sk_…, the API) or worker (rk_…, the task endpoints only)")
				fs.StringVar(&products, "products", "", "worker keys only: the remote products it may serve, comma-separated `a,b` (default every one)")
			},
			run: func(ctx context.Context, x *cmdContext) error {
				if err := need(env != "" && name != "", "keys create needs --env test|live and --name NAME"); err != nil {
					return err
				}
				var only []string
				if products != "" {
					only = strings.Split(products, ",")
				}
				k, secret, err := manager(x).Create(ctx, apikey.CreateParams{Environment: settleflow.Environment(env), Name: name,
					Plan: apikey.Plan(plan), PerMinute: perMinute, PerDay: perDay, Kind: apikey.Kind(kind), Products: only})
				if err != nil {
					return err
				}
				fmt.Fprintf(x.stdout, "%s\n%s\n", k.ID, secret)
				what := "key"
				if k.IsWorker() {
					what = "worker key"
					if k.Products != nil {
						what += " for " + strings.Join(k.Products, ", ")
					}
				}
				fmt.Fprintf(x.stderr, "created %s %s %s (%s, %d/minute, %d/day); the secret above is shown once\n", k.Environment, what, k.ID, k.Plan, k.PerMinute, k.PerDay)
				return nil
			},
		}, {
			name:    "list",
			summary: "List every key: its display form (never the secret), limits, last use and state.",
			flags:   func(fs *flag.FlagSet) { fs.BoolVar(&asJSON, "json", false, "print a JSON array of api_key objects") },
			run: func(ctx context.Context, x *cmdContext) error {
				ks, err := manager(x).List(ctx)
				if err != nil {
					return err
				}
				if asJSON {
					return printJSON(x.stdout, ks)
				}
				tw := tabwriter.NewWriter(x.stdout, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tENV\tNAME\tKEY\tPLAN\tLIMITS\tCREATED\tLAST USED\tSTATE")
				now := time.Now()
				for _, k := range ks {
					state := "active"
					switch {
					case k.RevokedAt != nil:
						state = "revoked " + k.RevokedAt.Format(time.RFC3339)
					case k.ExpiresAt != nil && !k.ExpiresAt.After(now):
						state = "expired " + k.ExpiresAt.Format(time.RFC3339)
					case k.ExpiresAt != nil:
						state = "expires " + k.ExpiresAt.Format(time.RFC3339)
					}
					last := "never"
					if k.LastUsedAt != nil {
						last = k.LastUsedAt.Format(time.RFC3339)
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d/min %d/day\t%s\t%s\t%s\n", k.ID, k.Environment, k.Name, k.Display, k.Plan,
						k.PerMinute, k.PerDay, k.CreatedAt.Format(time.RFC3339), last, state)
				}
				return tw.Flush()
			},
		}, {
			name: "rotate", args: "KEY_ID", nargs: 1,
			summary: "Replace a key with a new one (same name, plan and limits); the old key works until --expire-in. A key rotated once cannot be rotated again: rotate its successor.",
			flags: func(fs *flag.FlagSet) {
				fs.StringVar(&expireIn, "expire-in", "24h", "when the old key stops working: `now`, 1h, 24h or 7d")
			},
			run: func(ctx context.Context, x *cmdContext) error {
				d, err := apikey.ParseExpireIn(expireIn)
				if err != nil {
					return usageError{err}
				}
				k, secret, err := manager(x).Rotate(ctx, x.args[0], d)
				if err != nil {
					return err
				}
				fmt.Fprintf(x.stdout, "%s\n%s\n", k.ID, secret)
				fmt.Fprintf(x.stderr, "rotated %s into %s; the old key stops working at %s; the secret above is shown once\n", x.args[0], k.ID, time.Now().Add(d).UTC().Format(time.RFC3339))
				return nil
			},
		}, {
			name: "revoke", args: "KEY_ID", nargs: 1,
			summary: "Revoke a key at once: requests with it are answered 401 api_key_revoked.",
			run: func(ctx context.Context, x *cmdContext) error {
				if err := manager(x).Revoke(ctx, x.args[0]); err != nil {
					return err
				}
				fmt.Fprintf(x.stdout, "revoked %s\n", x.args[0])
				return nil
			},
		}},
	}
}
