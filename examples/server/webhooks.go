package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/webhook"
)

func webhooksCommand(ctx context.Context, c config, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{fmt.Errorf("webhooks: want add, list or remove")}
	}
	db, err := openDB(ctx, c)
	if err != nil {
		return err
	}
	defer db.Close()
	svc, err := webhook.New(ctx, db, webhook.Config{ShortName: c.shortName, StrictTestURLs: c.strictTestURLs})
	if err != nil {
		return err
	}
	switch args[0] {
	case "add":
		fs := flag.NewFlagSet("webhooks add", flag.ContinueOnError)
		fs.SetOutput(stderr)
		env := fs.String("env", "", "environment: test or live")
		url := fs.String("url", "", "endpoint URL: https (test endpoints may use http), without credentials")
		desc := fs.String("description", "", "what the endpoint is for")
		if err := fs.Parse(args[1:]); err != nil {
			return usageError{err}
		}
		e := settleflow.Environment(*env)
		if !e.Valid() || *url == "" || fs.NArg() != 0 {
			return usageError{fmt.Errorf("webhooks add needs --env test|live and --url URL")}
		}
		ep, secret, err := svc.CreateEndpoint(ctx, webhook.EndpointParams{Environment: e, URL: *url, Description: *desc})
		if err != nil {
			return err
		}
		// URLs are shown redacted everywhere: query values often carry tokens.
		fmt.Fprintf(stdout, "endpoint %s (%s) %s\nsigning secret (shown once, store it now): %s\n", ep.ID, ep.Environment, webhook.RedactURL(ep.URL), secret)
		return nil
	case "list":
		if len(args) != 1 {
			return usageError{fmt.Errorf("webhooks list takes no arguments")}
		}
		eps, err := svc.ListEndpoints(ctx, "")
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tENV\tURL\tSTATUS\tCREATED")
		for _, ep := range eps {
			status := "enabled"
			if !ep.Enabled() {
				status = "disabled: " + ep.DisabledReason
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", ep.ID, ep.Environment, webhook.RedactURL(ep.URL), status, ep.CreatedAt.Format(time.RFC3339))
		}
		return tw.Flush()
	case "remove":
		if len(args) != 2 {
			return usageError{fmt.Errorf("webhooks remove takes one endpoint id")}
		}
		if err := svc.RemoveEndpoint(ctx, args[1]); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "removed %s\n", args[1])
		return nil
	default:
		return usageError{fmt.Errorf("webhooks: unknown command %q (want add, list or remove)", args[0])}
	}
}
