package main

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/settleflow/settleflow/dashboard"
)

var signInLine = regexp.MustCompile(`dashboard: sign in at (https://\S+/dashboard/signin\?token=\S+)`)

// signInWith spends a sign-in link against the server: 303 and a session
// cookie when the link was good.
func signInWith(t *testing.T, s *server, link string) (int, bool) {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.client.PostForm("https://"+s.https+"/dashboard/signin", url.Values{"token": {u.Query().Get("token")}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == dashboard.CookieName && c.Secure && c.HttpOnly && c.SameSite == http.SameSiteStrictMode {
			return resp.StatusCode, true
		}
	}
	return resp.StatusCode, false
}

// The first start prints a sign-in link for the server's HTTPS address,
// good once; `dashboard link` prints fresh ones, for -https or
// -public-https; a restart prints none; the dashboard is on the HTTPS
// listener with its security headers.
func TestDashboardSignInLinks(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	m := signInLine.FindStringSubmatch(s.stdoutBuf.String())
	if m == nil || !strings.HasPrefix(m[1], "https://"+s.https+"/dashboard/signin?token=") {
		t.Fatalf("the first start printed no sign-in link for its HTTPS address: %s", s.stdoutBuf.String())
	}
	if status, ok := signInWith(t, s, m[1]); status != http.StatusSeeOther || !ok {
		t.Fatalf("first-start link: %d, cookie %v", status, ok)
	}
	if status, ok := signInWith(t, s, m[1]); status != http.StatusBadRequest || ok {
		t.Fatalf("the first-start link worked twice: %d", status)
	}
	link := strings.TrimSpace(cli(t, dir, "-https", s.https, "dashboard", "link"))
	if !strings.HasPrefix(link, "https://"+s.https+"/dashboard/signin?token=") {
		t.Fatalf("dashboard link printed %q", link)
	}
	if status, ok := signInWith(t, s, link); status != http.StatusSeeOther || !ok {
		t.Fatalf("dashboard link: %d, cookie %v", status, ok)
	}
	pub := strings.TrimSpace(cli(t, dir, "-public-https", "payments.example.com:443", "dashboard", "link"))
	if !strings.HasPrefix(pub, "https://payments.example.com:443/dashboard/signin?token=") {
		t.Fatalf("dashboard link with -public-https printed %q", pub)
	}
	if err := s.shutdown(); err != nil {
		t.Fatal(err)
	}
	s2 := startServer(t, dir)
	if signInLine.MatchString(s2.stdoutBuf.String()) {
		t.Fatalf("a restart printed a sign-in link: %s", s2.stdoutBuf.String())
	}
	resp, err := s2.client.Get("https://" + s2.https + "/dashboard/keys")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("X-Frame-Options") != "DENY" || resp.Header.Get("Content-Security-Policy") == "" {
		t.Fatalf("/dashboard/keys signed out: %d, headers %v", resp.StatusCode, resp.Header)
	}
}
