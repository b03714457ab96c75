package main

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/apikey"
	"github.com/settleflow/settleflow/webhook"
)

// endpointJSON, deliveryJSON and attemptJSON are the --json forms, in the
// API's camelCase (docs/api.md §9). URLs are redacted, secrets never shown.
type endpointJSON struct {
	ID             string     `json:"id"`
	Environment    string     `json:"environment"`
	URL            string     `json:"url"`
	Description    string     `json:"description,omitempty"`
	Enabled        bool       `json:"enabled"`
	DisabledReason string     `json:"disabledReason,omitempty"`
	CreatedAt      time.Time  `json:"createdAt"`
	DisabledAt     *time.Time `json:"disabledAt,omitempty"`
}

type deliveryJSON struct {
	ID             string     `json:"id"`
	EventID        string     `json:"eventId"`
	EventType      string     `json:"eventType"`
	EndpointID     string     `json:"endpointId"`
	Environment    string     `json:"environment"`
	Status         string     `json:"status"`
	Attempts       int        `json:"attempts"`
	NextAttemptAt  *time.Time `json:"nextAttemptAt,omitempty"`
	LastStatusCode int        `json:"lastStatusCode,omitempty"`
	LastError      string     `json:"lastError,omitempty"`
	CreatedAt      time.Time  `json:"createdAt"`
	CompletedAt    *time.Time `json:"completedAt,omitempty"`
}

type attemptJSON struct {
	Number       int       `json:"number"`
	StartedAt    time.Time `json:"startedAt"`
	LatencyMs    float64   `json:"latencyMs"`
	StatusCode   int       `json:"statusCode,omitempty"`
	Error        string    `json:"error,omitempty"`
	ResponseBody string    `json:"responseBody,omitempty"`
}

// webhooksGroup is the webhooks command: endpoints and their deliveries on
// the server's database; a running server picks changes up within seconds.
func webhooksGroup() *group {
	var (
		env, url, desc, endpoint, status, overlap string
		limit                                     int
		asJSON                                    bool
	)
	jsonFlag := func(fs *flag.FlagSet) { fs.BoolVar(&asJSON, "json", false, "print JSON instead of a table") }
	svc := func(x *cmdContext) *webhook.Service { return x.shared.(*webhook.Service) }
	done := func(x *cmdContext, format string, args ...any) error {
		fmt.Fprintf(x.stdout, format+"\n", args...)
		return nil
	}
	return &group{
		name:    "webhooks",
		summary: "Manage webhook endpoints and inspect, resend and follow their deliveries (docs/api.md §9).",
		open: func(ctx context.Context, c config) (*cmdContext, func(), error) {
			db, err := openDB(ctx, c)
			if err != nil {
				return nil, nil, err
			}
			s, err := webhook.New(ctx, db, webhook.Config{ShortName: c.shortName, StrictTestURLs: c.strictTestURLs})
			if err != nil {
				db.Close()
				return nil, nil, err
			}
			return &cmdContext{shared: s}, func() { db.Close() }, nil
		},
		subs: []subcommand{{
			name:    "add",
			summary: "Register an endpoint; its signing secret (whsec_…) is printed once.",
			flags: func(fs *flag.FlagSet) {
				fs.StringVar(&env, "env", "", "environment: `test` or live (required)")
				fs.StringVar(&url, "url", "", "endpoint `URL`: https (test endpoints may use http), without credentials (required)")
				fs.StringVar(&desc, "description", "", "what the endpoint is for")
			},
			run: func(ctx context.Context, x *cmdContext) error {
				e := settleflow.Environment(env)
				if err := need(e.Valid() && url != "", "webhooks add needs --env test|live and --url URL"); err != nil {
					return err
				}
				ep, secret, err := svc(x).CreateEndpoint(ctx, webhook.EndpointParams{Environment: e, URL: url, Description: desc})
				if err != nil {
					return err
				}
				// URLs are shown redacted everywhere: query values often carry tokens.
				return done(x, "endpoint %s (%s) %s\nsigning secret (shown once, store it now): %s", ep.ID, ep.Environment, webhook.RedactURL(ep.URL), secret)
			},
		}, {
			name:    "list",
			summary: "List the endpoints of both environments.",
			flags:   jsonFlag,
			run: func(ctx context.Context, x *cmdContext) error {
				eps, err := svc(x).ListEndpoints(ctx, "")
				if err != nil {
					return err
				}
				if asJSON {
					out := make([]endpointJSON, 0, len(eps))
					for _, ep := range eps {
						out = append(out, endpointJSON{ID: ep.ID, Environment: string(ep.Environment), URL: webhook.RedactURL(ep.URL),
							Description: ep.Description, Enabled: ep.Enabled(), DisabledReason: ep.DisabledReason,
							CreatedAt: ep.CreatedAt, DisabledAt: ep.DisabledAt})
					}
					return printJSON(x.stdout, out)
				}
				tw := tabwriter.NewWriter(x.stdout, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tENV\tURL\tSTATUS\tCREATED")
				for _, ep := range eps {
					st := "enabled"
					if !ep.Enabled() {
						st = "disabled: " + ep.DisabledReason
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", ep.ID, ep.Environment, webhook.RedactURL(ep.URL), st, ep.CreatedAt.Format(time.RFC3339))
				}
				return tw.Flush()
			},
		}, {
			name: "remove", args: "ENDPOINT_ID", nargs: 1,
			summary: "Remove an endpoint and its deliveries.",
			run: func(ctx context.Context, x *cmdContext) error {
				if err := svc(x).RemoveEndpoint(ctx, x.args[0]); err != nil {
					return err
				}
				return done(x, "removed %s", x.args[0])
			},
		}, {
			name: "disable", args: "ENDPOINT_ID", nargs: 1,
			summary: "Stop sending to an endpoint; events recorded meanwhile are not delivered to it.",
			run: func(ctx context.Context, x *cmdContext) error {
				if err := svc(x).DisableEndpoint(ctx, x.args[0]); err != nil {
					return err
				}
				return done(x, "disabled %s", x.args[0])
			},
		}, {
			name: "enable", args: "ENDPOINT_ID", nargs: 1,
			summary: "Send to a disabled endpoint again (an endpoint that answered 410 Gone, say).",
			run: func(ctx context.Context, x *cmdContext) error {
				if err := svc(x).EnableEndpoint(ctx, x.args[0]); err != nil {
					return err
				}
				return done(x, "enabled %s", x.args[0])
			},
		}, {
			name: "rotate-secret", args: "ENDPOINT_ID", nargs: 1,
			summary: "Give an endpoint a new signing secret, printed once; the old one keeps signing beside it until --overlap ends.",
			flags: func(fs *flag.FlagSet) {
				fs.StringVar(&overlap, "overlap", "24h", "how long the old secret signs too: `now`, 1h, 24h or 7d")
			},
			run: func(ctx context.Context, x *cmdContext) error {
				d, err := apikey.ParseExpireIn(overlap)
				if err != nil {
					return usageError{err}
				}
				secret, err := svc(x).RotateSecret(ctx, x.args[0], d)
				if err != nil {
					return err
				}
				return done(x, "new signing secret of %s (shown once, store it now): %s", x.args[0], secret)
			},
		}, {
			name:    "deliveries",
			summary: "List deliveries, newest first: status, attempts, the last answer.",
			flags: func(fs *flag.FlagSet) {
				fs.StringVar(&endpoint, "endpoint", "", "only this endpoint's (`ENDPOINT_ID`)")
				fs.StringVar(&status, "status", "", "only these: pending, succeeded, failed or canceled")
				fs.IntVar(&limit, "limit", 20, "at most this many, 1–1000")
				jsonFlag(fs)
			},
			run: func(ctx context.Context, x *cmdContext) error {
				switch webhook.DeliveryStatus(status) {
				case "", webhook.DeliveryPending, webhook.DeliverySucceeded, webhook.DeliveryFailed, webhook.DeliveryCanceled:
				default:
					return usageError{fmt.Errorf("--status %q: want pending, succeeded, failed or canceled", status)}
				}
				if err := need(limit >= 1 && limit <= 1000, "--limit %d: want 1 to 1000", limit); err != nil {
					return err
				}
				ds, err := svc(x).ListDeliveries(ctx, webhook.DeliveryQuery{EndpointID: endpoint, Status: webhook.DeliveryStatus(status), Limit: limit})
				if err != nil {
					return err
				}
				if asJSON {
					out := make([]deliveryJSON, 0, len(ds))
					for _, d := range ds {
						out = append(out, deliveryOut(d))
					}
					return printJSON(x.stdout, out)
				}
				tw := tabwriter.NewWriter(x.stdout, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tEVENT\tTYPE\tENDPOINT\tSTATUS\tATTEMPTS\tLAST\tCREATED")
				for _, d := range ds {
					last := d.LastError
					if last == "" && d.LastStatusCode != 0 {
						last = fmt.Sprint("HTTP ", d.LastStatusCode)
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", d.ID, d.EventID, d.EventType, d.EndpointID, d.Status,
						d.Attempts, last, d.CreatedAt.Format(time.RFC3339))
				}
				return tw.Flush()
			},
		}, {
			name: "attempts", args: "DELIVERY_ID", nargs: 1,
			summary: "List a delivery's attempts: when, status code, latency, error and the start of the answer.",
			flags:   jsonFlag,
			run: func(ctx context.Context, x *cmdContext) error {
				as, err := svc(x).ListAttempts(ctx, x.args[0])
				if err != nil {
					return err
				}
				if asJSON {
					out := make([]attemptJSON, 0, len(as))
					for _, a := range as {
						out = append(out, attemptJSON{Number: a.Number, StartedAt: a.StartedAt, LatencyMs: float64(a.Latency.Microseconds()) / 1000,
							StatusCode: a.StatusCode, Error: a.Error, ResponseBody: a.ResponseBody})
					}
					return printJSON(x.stdout, out)
				}
				tw := tabwriter.NewWriter(x.stdout, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "#\tSTARTED\tSTATUS\tLATENCY\tERROR")
				for _, a := range as {
					fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\n", a.Number, a.StartedAt.Format(time.RFC3339Nano), a.StatusCode, a.Latency.Round(time.Microsecond), a.Error)
				}
				return tw.Flush()
			},
		}, {
			name: "resend", args: "DELIVERY_ID", nargs: 1,
			summary: "Send a finished delivery (failed, canceled or succeeded) again now, with a fresh retry schedule.",
			run: func(ctx context.Context, x *cmdContext) error {
				if err := svc(x).RetryDelivery(ctx, x.args[0]); err != nil {
					return err
				}
				return done(x, "%s is due now; a running server sends it within a second", x.args[0])
			},
		}},
	}
}

func deliveryOut(d *webhook.Delivery) deliveryJSON {
	out := deliveryJSON{ID: d.ID, EventID: d.EventID, EventType: string(d.EventType), EndpointID: d.EndpointID,
		Environment: string(d.Environment), Status: string(d.Status), Attempts: d.Attempts, LastStatusCode: d.LastStatusCode,
		LastError: d.LastError, CreatedAt: d.CreatedAt, CompletedAt: d.CompletedAt}
	if !d.NextAttemptAt.IsZero() {
		t := d.NextAttemptAt
		out.NextAttemptAt = &t
	}
	return out
}
