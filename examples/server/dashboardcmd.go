package main

import (
	"context"
	"fmt"

	"github.com/settleflow/settleflow/dashboard"
	"github.com/settleflow/settleflow/storage"
)

// dashboardGroup is the dashboard command: sign-in links for the dashboard
// the server serves under https://HOST:PORT/dashboard/.
func dashboardGroup() *group {
	return &group{
		name:    "dashboard",
		summary: "Sign in to the dashboard the server serves under /dashboard/.",
		open: func(ctx context.Context, c config) (*cmdContext, func(), error) {
			db, err := openDB(ctx, c)
			if err != nil {
				return nil, nil, err
			}
			return &cmdContext{shared: db}, func() { db.Close() }, nil
		},
		subs: []subcommand{{
			name:    "link",
			summary: "Print a one-time sign-in link (one use, within 15 minutes) for the server's -public-https, else -https, address.",
			run: func(ctx context.Context, x *cmdContext) error {
				link, err := dashboard.SignInLink(ctx, x.shared.(*storage.DB), "https://"+publicAddr(x.c), "")
				if err != nil {
					return err
				}
				fmt.Fprintln(x.stdout, link)
				return nil
			},
		}},
	}
}
