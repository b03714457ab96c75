package dashboard

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/fundstest"
	"github.com/settleflow/settleflow/internal/pgtest"
	"github.com/settleflow/settleflow/portal"
	"github.com/settleflow/settleflow/storage"
	"github.com/settleflow/settleflow/storage/postgres"
	"github.com/settleflow/settleflow/storage/sqlite"
)

// PortalOf reads a customer's portal activity from the portal's tables on
// SQLite and Postgres: the sessions the customer opened (a link not used,
// a preview and another customer's not counted), the connects accepted
// (an unused nonce not counted), and the relayed deposits, newest first,
// with their sum; each environment apart.
func TestPortalActivityOnSQLiteAndPostgres(t *testing.T) {
	run := func(t *testing.T, store settleflow.Store, db *storage.DB) {
		ctx := context.Background()
		e, err := settleflow.New(settleflow.Options{Store: store, Settler: fundstest.New(), Products: settleflow.NewProducts(),
			Notifier: settleflow.NotifierFunc(func(context.Context, []settleflow.Event) error { return nil })})
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		srv := httptest.NewUnstartedServer(mux)
		p, err := portal.New(ctx, portal.Options{Engine: e, DB: db, BaseURL: func() string { return srv.URL }})
		if err != nil {
			t.Fatal(err)
		}
		mux.Handle("/portal/", p)
		srv.StartTLS()
		t.Cleanup(srv.Close)
		hc := srv.Client()
		hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		open := func(customer string, preview bool) {
			t.Helper()
			ps, err := p.CreateSession(ctx, portal.SessionParams{Environment: settleflow.Test, CustomerID: customer, Preview: preview})
			if err != nil {
				t.Fatal(err)
			}
			link, _ := url.Parse(ps.URL)
			resp, err := hc.PostForm(srv.URL+link.Path, url.Values{"token": {link.Query().Get("token")}})
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("sign-in: %s", resp.Status)
			}
		}
		open("cus_a", false)
		open("cus_a", false)
		open("cus_a", true)
		open("cus_b", false)
		if _, err := p.CreateSession(ctx, portal.SessionParams{Environment: settleflow.Test, CustomerID: "cus_a"}); err != nil {
			t.Fatal(err) // a link never used
		}
		// Connects and relays as the portal records them.
		at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
		for i, row := range []struct {
			env, customer, nonce string
			used                 bool
		}{{"test", "cus_a", "01", true}, {"test", "cus_a", "02", false}, {"live", "cus_a", "03", true}, {"test", "cus_b", "04", true}} {
			var used any
			if row.used {
				used = storage.Micros(at.Add(time.Duration(i) * time.Minute))
			}
			if _, err := db.Bun().NewRaw("INSERT INTO portal_nonces (nonce, session, environment, customer_id, address, deadline, used_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
				"0x"+strings.Repeat(row.nonce, 32), strings.Repeat("s", 64), row.env, row.customer, "0x"+strings.Repeat("a", 40), at.Unix(), used).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		for i, row := range []struct {
			env, customer string
			amount        int64
		}{{"test", "cus_a", 2500}, {"test", "cus_a", 1000}, {"live", "cus_a", 7}, {"test", "cus_b", 9}} {
			if _, err := db.Bun().NewRaw("INSERT INTO portal_relays (tx_hash, environment, customer_id, from_address, amount, created_at, status, gas_used) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
				"0x"+strings.Repeat(string(rune('a'+i)), 64), row.env, row.customer, "0x"+strings.Repeat("b", 40), row.amount,
				storage.Micros(at.Add(time.Duration(i)*time.Minute)), "confirmed", 90_000+i).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		a, err := PortalOf(p, db).Activity(ctx, settleflow.Test, "cus_a")
		if err != nil {
			t.Fatal(err)
		}
		if a.Sessions != 2 || a.LastSession.IsZero() || a.Connects != 1 || !a.LastConnect.Equal(at) || a.RelayCount != 2 || a.RelayAmount != 3500 {
			t.Fatalf("activity %+v; want 2 sessions, 1 connect at %s, 2 relays of 3500 in all", a, at)
		}
		if len(a.Relays) != 2 || a.Relays[0].Amount != 1000 || a.Relays[1].Amount != 2500 || a.Relays[0].TxHash != "0x"+strings.Repeat("b", 64) ||
			a.Relays[0].GasUsed != 90_001 || a.Relays[0].Status != "confirmed" || !a.Relays[0].CreatedAt.Equal(at.Add(time.Minute)) {
			t.Fatalf("relays %+v; want the 1000 then the 2500, newest first", a.Relays)
		}
		none, err := PortalOf(p, db).Activity(ctx, settleflow.Live, "cus_never")
		if err != nil || none.Sessions != 0 || none.Connects != 0 || none.RelayCount != 0 || len(none.Relays) != 0 {
			t.Fatalf("a customer without activity: %+v, %v", none, err)
		}
	}
	t.Run("SQLite", func(t *testing.T) {
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "p.db"), sqlite.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		run(t, s, s.DB())
	})
	t.Run("Postgres", func(t *testing.T) {
		db := pgtest.Connect(t).Schema(t, "sf_dashportal")
		s, err := postgres.OpenDB(context.Background(), db())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		run(t, s, s.DB())
	})
}

// Preview portal refuses, with a page saying why and no link: a server
// without the portal (404) and a customer id that is none (400).
func TestPreviewPortalRefusals(t *testing.T) {
	f, _ := newFundedFixture(t)
	csrf := f.signIn()
	r := f.do("POST", "/dashboard/customers/cus_a/preview", url.Values{"csrf": {csrf}})
	if r.status != http.StatusNotFound || !strings.Contains(r.body, "does not serve the customer portal") || strings.Contains(r.body, "open-preview") {
		t.Fatalf("no portal: %d %s", r.status, r.body)
	}
	if r := f.do("GET", "/dashboard/customers/cus_a", nil); r.status != 200 || strings.Contains(r.body, "preview-portal") {
		t.Fatalf("a customer page without the portal offers a preview: %d", r.status)
	}
	ctx := context.Background()
	p, err := portal.New(ctx, portal.Options{Engine: f.engine, DB: f.h.opts.DB, BaseURL: func() string { return f.srv.URL }})
	if err != nil {
		t.Fatal(err)
	}
	f.h.opts.Portal = PortalOf(p, f.h.opts.DB)
	r = f.do("POST", "/dashboard/customers/bad%20id/preview", url.Values{"csrf": {csrf}})
	if r.status != http.StatusBadRequest || !strings.Contains(r.body, "No such customer id") || strings.Contains(r.body, "open-preview") {
		t.Fatalf("a bad id: %d %s", r.status, r.body)
	}
	// Without the form's CSRF token nothing is issued.
	if r := f.do("POST", "/dashboard/customers/cus_a/preview", url.Values{}); r.status != http.StatusForbidden {
		t.Fatalf("no CSRF token: %d", r.status)
	}
	var n int
	if err := f.h.opts.DB.Bun().NewRaw("SELECT COUNT(*) FROM portal_links").Scan(ctx, &n); err != nil || n != 0 {
		t.Fatalf("%d portal links issued by refused previews (%v)", n, err)
	}
}
