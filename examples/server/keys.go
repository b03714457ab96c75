package main

import (
	"context"
	"flag"
	"fmt"
	"io"
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

// firstStartKey creates a test key on the first start (no key exists yet)
// and prints it: the only time the secret is shown.
func firstStartKey(ctx context.Context, keys *apikey.Manager, stdout io.Writer) error {
	existing, err := keys.List(ctx)
	if err != nil || len(existing) > 0 {
		return err
	}
	k, secret, err := keys.Create(ctx, apikey.CreateParams{Environment: settleflow.Test, Name: "first start", Plan: apikey.Starter})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "created test API key %s (shown once, store it now):\n\n    %s\n\n", k.ID, secret)
	return nil
}

func keysCommand(ctx context.Context, c config, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{fmt.Errorf("keys: want create, list, rotate or revoke")}
	}
	db, err := openDB(ctx, c)
	if err != nil {
		return err
	}
	defer db.Close()
	keys, err := openKeys(ctx, db)
	if err != nil {
		return err
	}
	defer keys.Close()
	switch args[0] {
	case "create":
		fs := flag.NewFlagSet("keys create", flag.ContinueOnError)
		fs.SetOutput(stderr)
		env := fs.String("env", "", "environment: test or live")
		name := fs.String("name", "", "what the key is for")
		plan := fs.String("plan", "starter", "starter, pro or enterprise")
		perMinute := fs.Int("per-minute", 0, "requests per minute (enterprise only)")
		perDay := fs.Int("per-day", 0, "requests per day (enterprise only)")
		if err := fs.Parse(args[1:]); err != nil {
			return usageError{err}
		}
		if fs.NArg() != 0 || *env == "" || *name == "" {
			return usageError{fmt.Errorf("keys create needs --env test|live and --name NAME")}
		}
		k, secret, err := keys.Create(ctx, apikey.CreateParams{Environment: settleflow.Environment(*env), Name: *name,
			Plan: apikey.Plan(*plan), PerMinute: *perMinute, PerDay: *perDay})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\n%s\n", k.ID, secret)
		fmt.Fprintf(stderr, "created %s key %s (%s, %d/minute, %d/day); the secret above is shown once\n", k.Environment, k.ID, k.Plan, k.PerMinute, k.PerDay)
		return nil
	case "list":
		if len(args) != 1 {
			return usageError{fmt.Errorf("keys list takes no arguments")}
		}
		ks, err := keys.List(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
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
	case "rotate":
		fs := flag.NewFlagSet("keys rotate", flag.ContinueOnError)
		fs.SetOutput(stderr)
		expire := fs.String("expire-in", "24h", "when the old key stops working: now, 1h, 24h or 7d")
		id, rest := splitID(args[1:])
		if err := fs.Parse(rest); err != nil {
			return usageError{err}
		}
		if id == "" && fs.NArg() == 1 {
			id = fs.Arg(0)
		} else if id == "" || fs.NArg() != 0 {
			return usageError{fmt.Errorf("keys rotate takes one key id")}
		}
		d, err := apikey.ParseExpireIn(*expire)
		if err != nil {
			return usageError{err}
		}
		k, secret, err := keys.Rotate(ctx, id, d)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\n%s\n", k.ID, secret)
		fmt.Fprintf(stderr, "rotated %s into %s; the old key stops working at %s; the secret above is shown once\n", id, k.ID, time.Now().Add(d).UTC().Format(time.RFC3339))
		return nil
	case "revoke":
		if len(args) != 2 {
			return usageError{fmt.Errorf("keys revoke takes one key id")}
		}
		if err := keys.Revoke(ctx, args[1]); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "revoked %s\n", args[1])
		return nil
	default:
		return usageError{fmt.Errorf("keys: unknown command %q (want create, list, rotate or revoke)", args[0])}
	}
}

// splitID takes a leading positional id so flags may follow it
// (keys rotate key_… --expire-in 1h).
func splitID(args []string) (string, []string) {
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		return args[0], args[1:]
	}
	return "", args
}
