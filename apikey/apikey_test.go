package apikey

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/storage"
	"github.com/settleflow/settleflow/storage/sqlite"
)

var ctx = context.Background()

// fakeClock is an injectable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *fakeClock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func newClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 11, 21, 10, 0, 0, 123e6, time.UTC)}
}

// openDB opens a fresh database: by default a real SQLite file in a new
// temporary directory (returned as dir), on Postgres under TestPostgres. The
// returned function opens another handle on the same database, as another
// process would.
func openDB(t testing.TB) (db *storage.DB, dir string, another func() *storage.DB) {
	t.Helper()
	if pgOpen != nil {
		return pgOpen(t)
	}
	dir = t.TempDir()
	path := filepath.Join(dir, "settleflow.db")
	another = func() *storage.DB {
		db, err := sqlite.OpenDB(path, sqlite.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	return another(), dir, another
}

func newManager(t testing.TB, db *storage.DB, opts Options) *Manager {
	t.Helper()
	m, err := New(db, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func create(t testing.TB, m *Manager, p CreateParams) (Key, string) {
	t.Helper()
	k, secret, err := m.Create(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	return k, secret
}

func bearer(secret string) string { return "Bearer " + secret }

var secretRE = regexp.MustCompile(`^sk_(test|live)_[0-9A-Za-z]{40}$`)

func TestCreateListAuthenticate(t *testing.T) {
	db, _, _ := openDB(t)
	clock := newClock()
	m := newManager(t, db, Options{Clock: clock})
	tk, tsecret := create(t, m, CreateParams{Environment: settleflow.Test, Name: "ci"})
	lk, lsecret := create(t, m, CreateParams{Environment: settleflow.Live, Name: "prod", Plan: Pro})

	if !secretRE.MatchString(tsecret) || !strings.HasPrefix(tsecret, "sk_test_") || !strings.HasPrefix(lsecret, "sk_live_") {
		t.Fatalf("secrets %q %q", tsecret, lsecret)
	}
	if tk.Display != "sk_test_…"+tsecret[len(tsecret)-4:] || lk.Display != "sk_live_…"+lsecret[len(lsecret)-4:] {
		t.Fatalf("display %q %q", tk.Display, lk.Display)
	}
	if !strings.HasPrefix(tk.ID, "key_") || len(tk.ID) != 30 || tk.Environment != settleflow.Test || tk.Livemode() || !lk.Livemode() {
		t.Fatalf("test key %+v", tk)
	}
	if tk.Plan != Starter || tk.PerMinute != 300 || tk.PerDay != 50000 || lk.PerMinute != 1000 || lk.PerDay != 500000 {
		t.Fatalf("limits %+v %+v", tk, lk)
	}
	if !tk.CreatedAt.Equal(clock.Now()) || tk.CreatedAt.Location() != time.UTC || tk.LastUsedAt != nil || tk.RevokedAt != nil || tk.ExpiresAt != nil {
		t.Fatalf("times %+v", tk)
	}

	keys, err := m.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || keys[0].ID != tk.ID || keys[1].ID != lk.ID {
		t.Fatalf("List = %+v", keys)
	}
	if fmt.Sprint(keys[0]) != fmt.Sprint(tk) {
		t.Fatalf("listed %+v\ncreated %+v", keys[0], tk)
	}
	got, err := m.Get(ctx, lk.ID)
	if err != nil || got.Name != "prod" {
		t.Fatalf("Get = %+v, %v", got, err)
	}

	for _, c := range []struct {
		header string
		want   Key
	}{
		{bearer(tsecret), tk},
		{bearer(lsecret), lk},
		{"bearer " + tsecret, tk},
		{"  BEARER \t " + tsecret + "  ", tk},
	} {
		k, err := m.Authenticate(ctx, c.header)
		if err != nil {
			t.Fatalf("Authenticate(%q): %v", c.header, err)
		}
		if k.ID != c.want.ID || k.Environment != c.want.Environment || k.PerMinute != c.want.PerMinute {
			t.Fatalf("Authenticate = %+v, want %+v", k, c.want)
		}
	}
	ws := tk.Windows()
	if len(ws) != 2 || ws[0].Name != "minute" || ws[0].Limit != 300 || ws[0].Length != time.Minute ||
		ws[1].Name != "day" || ws[1].Limit != 50000 || ws[1].Length != 24*time.Hour || tk.RateLimitKey() != tk.ID {
		t.Fatalf("windows %+v, rate limit key %q", ws, tk.RateLimitKey())
	}
}

func TestAuthErrors(t *testing.T) {
	db, _, _ := openDB(t)
	clock := newClock()
	m := newManager(t, db, Options{Clock: clock})
	k, secret := create(t, m, CreateParams{Environment: settleflow.Test, Name: "a"})
	_, revokedSecret := create(t, m, CreateParams{Environment: settleflow.Test, Name: "b"})
	rk, _ := m.Authenticate(ctx, bearer(revokedSecret)) // cached, then revoked
	if err := m.Revoke(ctx, rk.ID); err != nil {
		t.Fatal(err)
	}
	_, newSecret, err := m.Rotate(ctx, k.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	rnd := strings.Repeat("a", 40)
	for _, c := range []struct {
		header string
		want   error
	}{
		{"", ErrMissing},
		{"   ", ErrMissing},
		{"\t", ErrMissing},
		{"Bearer", ErrMalformed},
		{"Bearer ", ErrMalformed},
		{secret, ErrMalformed},
		{"Basic " + secret, ErrMalformed},
		{"Bearer sk_prod_" + rnd, ErrMalformed},
		{"Bearer pk_test_" + rnd, ErrMalformed},
		{"Bearer sk_test_" + rnd[:31], ErrMalformed},
		{"Bearer sk_test_" + strings.Repeat("a", 129), ErrMalformed},
		{"Bearer sk_test_" + rnd[:39] + "-", ErrMalformed},
		{"Bearer sk_test_" + rnd[:39] + "é", ErrMalformed},
		{"Bearer " + secret + " extra", ErrMalformed},
		{"Bearer sk_test_" + rnd, ErrUnknown},
		{"Bearer sk_test_" + rnd[:32], ErrUnknown},
		{"Bearer sk_live_" + secret[len("sk_test_"):], ErrUnknown}, // right secret, wrong environment
		{bearer(secret[:len(secret)-1] + otherChar(secret[len(secret)-1])), ErrUnknown},
		{bearer(revokedSecret), ErrRevoked},
		{bearer(secret), ErrExpired},
		{bearer(newSecret), nil},
	} {
		_, err := m.Authenticate(ctx, c.header)
		if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("Authenticate(%q) = %v, want %v", c.header, err, c.want)
			continue
		}
		if err != nil {
			var ae *AuthError
			if !errors.As(err, &ae) || ae.Code == "" || strings.Contains(ae.Message, secret) {
				t.Errorf("%q: %#v is not a clean *AuthError", c.header, err)
			}
		}
	}
	codes := map[settleflow.ErrorCode]bool{}
	for _, e := range []*AuthError{ErrMissing, ErrMalformed, ErrUnknown, ErrRevoked, ErrExpired} {
		codes[e.Code] = true
	}
	if len(codes) != 5 {
		t.Errorf("auth error codes are not distinct: %v", codes)
	}
}

func TestRotate(t *testing.T) {
	db, _, _ := openDB(t)
	clock := newClock()
	m := newManager(t, db, Options{Clock: clock})
	old, oldSecret := create(t, m, CreateParams{Environment: settleflow.Live, Name: "billing", Plan: Enterprise, PerMinute: 50, PerDay: 700})

	nk, newSecret, err := m.Rotate(ctx, old.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if nk.ID == old.ID || newSecret == oldSecret || !secretRE.MatchString(newSecret) || !strings.HasPrefix(newSecret, "sk_live_") {
		t.Fatalf("rotated %+v %q", nk, newSecret)
	}
	if nk.Name != old.Name || nk.Environment != old.Environment || nk.Plan != old.Plan ||
		nk.PerMinute != 50 || nk.PerDay != 700 || nk.ExpiresAt != nil || nk.RateLimitKey() != old.ID {
		t.Fatalf("rotated key %+v does not carry over %+v", nk, old)
	}
	got, _ := m.Get(ctx, old.ID)
	if got.ExpiresAt == nil || !got.ExpiresAt.Equal(clock.Now().Add(time.Hour)) {
		t.Fatalf("old key expires at %v", got.ExpiresAt)
	}
	clock.Advance(59*time.Minute + 59*time.Second)
	if k, err := m.Authenticate(ctx, bearer(oldSecret)); err != nil || k.ID != old.ID || k.RateLimitKey() != old.ID {
		t.Fatalf("old key before expiry: %+v, %v", k, err)
	}
	clock.Advance(time.Second)
	if _, err := m.Authenticate(ctx, bearer(oldSecret)); !errors.Is(err, ErrExpired) {
		t.Fatalf("old key after expiry: %v", err)
	}
	if k, err := m.Authenticate(ctx, bearer(newSecret)); err != nil || k.ID != nk.ID || k.RateLimitKey() != old.ID {
		t.Fatalf("new key: %+v, %v", k, err)
	}
	if _, _, err := m.Rotate(ctx, old.ID, time.Hour); !errors.Is(err, ErrExpired) {
		t.Fatalf("rotating an expired key: %v", err)
	}

	// A rotated key has one successor: rotating it again is refused, names
	// the successor, and makes no key.
	k2, _, err := m.Rotate(ctx, nk.ID, 7*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := m.List(ctx)
	_, _, err = m.Rotate(ctx, nk.ID, 24*time.Hour)
	if !errors.Is(err, ErrRotated) || !strings.Contains(err.Error(), k2.ID) || strings.Count(err.Error(), "apikey:") != 1 {
		t.Fatalf("rotating a rotated key: %v; want ErrRotated naming %s, in one sentence", err, k2.ID)
	}
	if after, _ := m.List(ctx); len(after) != len(before) {
		t.Fatalf("a refused rotation made a key: %d keys, then %d", len(before), len(after))
	}
	if got, _ := m.Get(ctx, nk.ID); !got.ExpiresAt.Equal(clock.Now().Add(7 * 24 * time.Hour)) {
		t.Fatalf("a refused rotation changed the expiry: %v", got.ExpiresAt)
	}

	// Expire now.
	k3, _, err := m.Rotate(ctx, k2.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	keys, _ := m.List(ctx)
	for _, k := range keys {
		if k.ID == k2.ID && (k.ExpiresAt == nil || !k.ExpiresAt.Equal(clock.Now())) {
			t.Fatalf("rotate 0: expires at %v, want now", k.ExpiresAt)
		}
	}

	for _, d := range []time.Duration{-time.Hour, time.Minute, 2 * time.Hour, 48 * time.Hour, 8 * 24 * time.Hour} {
		if _, _, err := m.Rotate(ctx, nk.ID, d); !errors.Is(err, ErrInvalidExpiry) {
			t.Errorf("Rotate(%s) = %v, want ErrInvalidExpiry", d, err)
		}
	}
	if _, _, err := m.Rotate(ctx, "key_nope", time.Hour); !errors.Is(err, ErrNotFound) {
		t.Errorf("Rotate(unknown) = %v", err)
	}
	if err := m.Revoke(ctx, k3.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.Rotate(ctx, k3.ID, time.Hour); !errors.Is(err, ErrRevoked) || strings.Count(err.Error(), "apikey:") != 1 {
		t.Errorf("Rotate(revoked) = %v; want ErrRevoked in one sentence", err)
	}
}

func TestRevoke(t *testing.T) {
	db, _, _ := openDB(t)
	clock := newClock()
	m := newManager(t, db, Options{Clock: clock})
	k, secret := create(t, m, CreateParams{Environment: settleflow.Test, Name: "x"})
	if _, err := m.Authenticate(ctx, bearer(secret)); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if err := m.Revoke(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Authenticate(ctx, bearer(secret)); !errors.Is(err, ErrRevoked) {
		t.Fatalf("after Revoke: %v", err)
	}
	at := clock.Now()
	clock.Advance(time.Second)
	if err := m.Revoke(ctx, k.ID); err != nil {
		t.Fatalf("second Revoke: %v", err)
	}
	if got, _ := m.Get(ctx, k.ID); got.RevokedAt == nil || !got.RevokedAt.Equal(at) {
		t.Fatalf("revokedAt %v, want %v", got.RevokedAt, at)
	}
	if err := m.Revoke(ctx, "key_01JD3Q6Y6F8Q2W9T4M5N7P8R0S"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Revoke(unknown) = %v", err)
	}
	if _, err := m.Get(ctx, "key_nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get(unknown) = %v", err)
	}
}

// TestOtherProcess checks that a revocation or rotation made through another
// Manager on the same database (another process) takes effect within the
// cache TTL.
func TestOtherProcess(t *testing.T) {
	db, _, another := openDB(t)
	clock := newClock()
	admin := newManager(t, db, Options{Clock: clock})
	server := newManager(t, another(), Options{Clock: clock, CacheTTL: 2 * time.Second})

	k, secret := create(t, admin, CreateParams{Environment: settleflow.Test, Name: "x"})
	k2, secret2 := create(t, admin, CreateParams{Environment: settleflow.Test, Name: "y"})
	for _, s := range []string{secret, secret2} {
		if _, err := server.Authenticate(ctx, bearer(s)); err != nil {
			t.Fatal(err)
		}
	}
	if err := admin.Revoke(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := admin.Rotate(ctx, k2.ID, 0); err != nil {
		t.Fatal(err)
	}
	// Within the TTL the server may still use what it read...
	clock.Advance(time.Second)
	if _, err := server.Authenticate(ctx, bearer(secret)); err != nil {
		t.Fatalf("within the cache TTL: %v", err)
	}
	// ...but not after it.
	clock.Advance(time.Second)
	if _, err := server.Authenticate(ctx, bearer(secret)); !errors.Is(err, ErrRevoked) {
		t.Fatalf("revoked elsewhere: %v", err)
	}
	if _, err := server.Authenticate(ctx, bearer(secret2)); !errors.Is(err, ErrExpired) {
		t.Fatalf("rotated elsewhere: %v", err)
	}
}

func TestLastUsedAtMostOnceAMinute(t *testing.T) {
	db, _, another := openDB(t)
	clock := newClock()
	m := newManager(t, db, Options{Clock: clock})
	k, secret := create(t, m, CreateParams{Environment: settleflow.Test, Name: "busy"})
	t0 := clock.Now()

	burst := func() {
		var wg sync.WaitGroup
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 50; i++ {
					if _, err := m.Authenticate(ctx, bearer(secret)); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		m.writes.Wait()
	}
	stored := func() *time.Time {
		got, err := m.Get(ctx, k.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.LastUsedAt
	}

	burst()
	if n := m.luWritten.Load(); n != 1 {
		t.Fatalf("%d writes after the first burst, want 1", n)
	}
	if lu := stored(); lu == nil || !lu.Equal(t0) {
		t.Fatalf("last used %v, want %v", lu, t0)
	}
	clock.Advance(59 * time.Second)
	burst()
	if n := m.luWritten.Load(); n != 1 {
		t.Fatalf("%d writes within the minute, want 1", n)
	}
	clock.Advance(time.Second)
	burst()
	if n := m.luWritten.Load(); n != 2 {
		t.Fatalf("%d writes a minute later, want 2", n)
	}
	if lu := stored(); lu == nil || !lu.Equal(t0.Add(time.Minute)) {
		t.Fatalf("last used %v, want %v", lu, t0.Add(time.Minute))
	}
	k2, err := m.Authenticate(ctx, bearer(secret))
	if err != nil || k2.LastUsedAt == nil || !k2.LastUsedAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("Authenticate reports last used %v, %v", k2.LastUsedAt, err)
	}

	// Another process that just started does not write again within the
	// minute: it sees the stored time.
	m2 := newManager(t, another(), Options{Clock: clock})
	clock.Advance(30 * time.Second)
	for i := 0; i < 20; i++ {
		if _, err := m2.Authenticate(ctx, bearer(secret)); err != nil {
			t.Fatal(err)
		}
	}
	m2.writes.Wait()
	if n := m2.luWritten.Load(); n != 0 {
		t.Fatalf("second process wrote %d times within the minute", n)
	}
	keys, _ := m.List(ctx)
	if keys[0].LastUsedAt == nil || !keys[0].LastUsedAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("List shows last used %v", keys[0].LastUsedAt)
	}
}

// TestSecretsNeverStored creates and rotates keys, then scans every column of
// the table and every byte of the database files for the secrets, and the
// List output for secrets and hashes.
func TestSecretsNeverStored(t *testing.T) {
	if pgOpen != nil {
		t.Skip("scans SQLite files")
	}
	db, dir, _ := openDB(t)
	m := newManager(t, db, Options{})
	var secrets []string
	for i, env := range []settleflow.Environment{settleflow.Test, settleflow.Live, settleflow.Test} {
		k, s := create(t, m, CreateParams{Environment: env, Name: fmt.Sprint("k", i)})
		secrets = append(secrets, s)
		_, s2, err := m.Rotate(ctx, k.ID, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, s2)
		if _, err := m.Authenticate(ctx, bearer(s)); err != nil {
			t.Fatal(err)
		}
	}
	m.writes.Wait()

	rows, err := db.Bun().QueryContext(ctx, "SELECT * FROM apikey_keys")
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := rows.Columns()
	n := 0
	for rows.Next() {
		n++
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			for _, s := range secrets {
				if str := fmt.Sprint(v); strings.Contains(str, s[8:]) || strings.Contains(str, s[8:len(s)-4]) {
					t.Errorf("column %s holds a secret", cols[i])
				}
			}
		}
	}
	rows.Close()
	if n != len(secrets) {
		t.Fatalf("%d rows, want %d", n, len(secrets))
	}

	keys, err := m.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(keys)
	for _, s := range secrets {
		if bytes.Contains(out, []byte(s[8:len(s)-4])) || bytes.Contains(out, []byte(hashSecret(s))) {
			t.Errorf("List output holds a secret or its hash: %s", out)
		}
	}

	m.Close()
	db.Close()
	var files []byte
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, b...)
	}
	for _, s := range secrets {
		if bytes.Contains(files, []byte(s[8:len(s)-4])) {
			t.Errorf("the database files hold a secret")
		}
		if !bytes.Contains(files, []byte(hashSecret(s))) {
			t.Errorf("the database files do not hold the hash: is this the right file?")
		}
	}
}

func TestPlansAndValidation(t *testing.T) {
	db, _, _ := openDB(t)
	m := newManager(t, db, Options{})
	for _, c := range []struct {
		p                 CreateParams
		perMinute, perDay int
		err               error
	}{
		{CreateParams{Environment: settleflow.Test, Name: "a"}, 300, 50000, nil},
		{CreateParams{Environment: settleflow.Test, Name: "a", Plan: Starter}, 300, 50000, nil},
		{CreateParams{Environment: settleflow.Test, Name: "a", Plan: Pro}, 1000, 500000, nil},
		{CreateParams{Environment: settleflow.Live, Name: "a", Plan: Enterprise, PerMinute: 5000, PerDay: 9000000}, 5000, 9000000, nil},
		{CreateParams{Environment: settleflow.Test, Name: "a", Plan: Enterprise}, 0, 0, ErrInvalidLimits},
		{CreateParams{Environment: settleflow.Test, Name: "a", Plan: Enterprise, PerMinute: 10}, 0, 0, ErrInvalidLimits},
		{CreateParams{Environment: settleflow.Test, Name: "a", Plan: Enterprise, PerDay: 10}, 0, 0, ErrInvalidLimits},
		{CreateParams{Environment: settleflow.Test, Name: "a", Plan: Enterprise, PerMinute: -1, PerDay: 10}, 0, 0, ErrInvalidLimits},
		{CreateParams{Environment: settleflow.Test, Name: "a", Plan: Starter, PerMinute: 10, PerDay: 10}, 0, 0, ErrInvalidLimits},
		{CreateParams{Environment: settleflow.Test, Name: "a", Plan: Pro, PerDay: 10}, 0, 0, ErrInvalidLimits},
		{CreateParams{Environment: settleflow.Test, Name: "a", PerMinute: 1}, 0, 0, ErrInvalidLimits},
		{CreateParams{Environment: settleflow.Test, Name: "a", Plan: "gold"}, 0, 0, ErrInvalidPlan},
		{CreateParams{Environment: "prod", Name: "a"}, 0, 0, ErrInvalidEnvironment},
		{CreateParams{Name: "a"}, 0, 0, ErrInvalidEnvironment},
		{CreateParams{Environment: settleflow.Test, Name: ""}, 0, 0, ErrInvalidName},
		{CreateParams{Environment: settleflow.Test, Name: "   "}, 0, 0, ErrInvalidName},
		{CreateParams{Environment: settleflow.Test, Name: strings.Repeat("x", 101)}, 0, 0, ErrInvalidName},
		{CreateParams{Environment: settleflow.Test, Name: strings.Repeat("é", 100)}, 300, 50000, nil},
		{CreateParams{Environment: settleflow.Test, Name: strings.Repeat("x", 100)}, 300, 50000, nil},
		{CreateParams{Environment: settleflow.Test, Name: "a\nb"}, 0, 0, ErrInvalidName},
		{CreateParams{Environment: settleflow.Test, Name: "a\xffb"}, 0, 0, ErrInvalidName},
	} {
		k, secret, err := m.Create(ctx, c.p)
		if !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
			t.Errorf("Create(%+v) = %v, want %v", c.p, err, c.err)
			continue
		}
		if err != nil {
			if secret != "" {
				t.Errorf("Create(%+v) failed but returned a secret", c.p)
			}
			continue
		}
		if k.PerMinute != c.perMinute || k.PerDay != c.perDay {
			t.Errorf("Create(%+v): limits %d/%d, want %d/%d", c.p, k.PerMinute, k.PerDay, c.perMinute, c.perDay)
		}
		if got, err := m.Authenticate(ctx, bearer(secret)); err != nil || got.PerMinute != c.perMinute || got.PerDay != c.perDay || got.Name != c.p.Name {
			t.Errorf("Authenticate after Create(%+v) = %+v, %v", c.p, got, err)
		}
	}
}

func TestSecretCharsetUniform(t *testing.T) {
	const n = 5000
	var counts [256]int
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		s, err := generateSecret(settleflow.Test, Secret)
		if err != nil {
			t.Fatal(err)
		}
		if !secretRE.MatchString(s) || seen[s] {
			t.Fatalf("secret %q malformed or repeated", s)
		}
		seen[s] = true
		for _, c := range []byte(s[8:]) {
			counts[c]++
		}
	}
	// Chi-square over the 62 symbols (61 degrees of freedom: mean 61, sd 11);
	// 140 is a false alarm about once in ten million runs. A biased sampler
	// (b % 62 without rejection) scores above 1000 here.
	expected := float64(n*SecretChars) / 62
	chi2 := 0.0
	for _, c := range []byte(base62) {
		d := float64(counts[c]) - expected
		chi2 += d * d / expected
	}
	if chi2 > 140 {
		t.Fatalf("chi-square %.1f: secrets are not uniform", chi2)
	}

	// Rejection sampling: bytes 248–255 are skipped, not folded onto 0–7.
	in := make([]byte, 0, 128)
	for i := 0; i < 64; i++ {
		in = append(in, 248+byte(i%8))
	}
	for i := 0; i < 64; i++ {
		in = append(in, byte(i))
	}
	s, err := newSecret(settleflow.Live, Secret, bytes.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if want := "sk_live_" + base62[:40]; s != want {
		t.Fatalf("newSecret = %q, want %q", s, want)
	}
}

func TestKeyJSON(t *testing.T) {
	created := time.Date(2026, 11, 21, 10, 0, 0, 123e6, time.UTC)
	used := created.Add(time.Minute)
	k := Key{ID: "key_01JD3Q6Y6F8Q2W9T4M5N7P8R0S", Environment: settleflow.Live, Name: "ci", Plan: Pro,
		Display: "sk_live_…a1b2", PerMinute: 1000, PerDay: 500000, CreatedAt: created, LastUsedAt: &used}
	b, err := json.Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"key_01JD3Q6Y6F8Q2W9T4M5N7P8R0S","object":"api_key","livemode":true,"name":"ci","plan":"pro",` +
		`"display":"sk_live_…a1b2","perMinute":1000,"perDay":500000,"createdAt":"2026-11-21T10:00:00.123Z",` +
		`"lastUsedAt":"2026-11-21T10:01:00.123Z","revokedAt":null,"expiresAt":null}`
	if string(b) != want {
		t.Fatalf("JSON\n got %s\nwant %s", b, want)
	}
	var back Key
	if err := json.Unmarshal(b, &back); err != nil || fmt.Sprint(back) != fmt.Sprint(k) {
		t.Fatalf("round trip %+v, %v", back, err)
	}
}

func TestMigrateTwice(t *testing.T) {
	db, _, _ := openDB(t)
	m := newManager(t, db, Options{})
	if err := m.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := m.Migrate(ctx); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}

func TestConcurrentAuthenticate(t *testing.T) {
	db, _, _ := openDB(t)
	m := newManager(t, db, Options{CacheTTL: -1})
	var secrets []string
	for i := 0; i < 4; i++ {
		_, s := create(t, m, CreateParams{Environment: settleflow.Test, Name: "k"})
		secrets = append(secrets, s)
	}
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if _, err := m.Authenticate(ctx, bearer(secrets[(g+i)%len(secrets)])); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func BenchmarkAuthenticate(b *testing.B) {
	db, _, _ := openDB(b)
	for _, c := range []struct {
		name string
		ttl  time.Duration
	}{{"cached", 0}, {"uncached", -1}} {
		b.Run(c.name, func(b *testing.B) {
			m := newManager(b, db, Options{CacheTTL: c.ttl})
			_, secret := create(b, m, CreateParams{Environment: settleflow.Test, Name: "bench"})
			h := bearer(secret)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := m.Authenticate(ctx, h); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// FuzzAuthenticateHeader feeds arbitrary Authorization headers to
// Authenticate: it never panics, fails only with one of the five auth errors,
// and succeeds only for the one real key.
func FuzzAuthenticateHeader(f *testing.F) {
	db, _, _ := openDB(f)
	m := newManager(f, db, Options{})
	k, secret := create(f, m, CreateParams{Environment: settleflow.Test, Name: "fuzz"})
	for _, s := range []string{
		"", " ", "Bearer", "Bearer ", bearer(secret), "bearer " + secret, "Bearer  " + secret + " ",
		"Basic dXNlcjpwYXNz", "Bearer sk_live_" + secret[8:], "Bearer sk_test_" + strings.Repeat("0", 32),
		"Bearer sk_test_" + strings.Repeat("0", 129), "Bearer sk_test_\x00", "Bearer\t" + secret, secret,
		"Bearer " + secret + "\n", "Bearer sk_test_" + hex.EncodeToString([]byte(secret))[:40],
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		got, err := m.Authenticate(ctx, header)
		if err == nil {
			tok := strings.TrimLeft(strings.Trim(header, " \t")[len("Bearer"):], " \t")
			if got.ID != k.ID || tok != secret {
				t.Fatalf("%q authenticated as %s", header, got.ID)
			}
			return
		}
		var ae *AuthError
		if !errors.As(err, &ae) {
			t.Fatalf("%q: error %v is not an *AuthError", header, err)
		}
		if strings.Trim(header, " \t") == "" && err != ErrMissing {
			t.Fatalf("%q: %v, want ErrMissing", header, err)
		}
		if _, _, perr := parseAuthorization(header); perr != nil && perr != err {
			t.Fatalf("%q: Authenticate %v, parse %v", header, err, perr)
		}
	})
}

func TestParseExpireIn(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"0": 0, "now": 0, "1h": time.Hour, "24h": 24 * time.Hour, "1d": 24 * time.Hour,
		"7d": 7 * 24 * time.Hour, "168h": 7 * 24 * time.Hour, " 7D ": 7 * 24 * time.Hour,
	} {
		if got, err := ParseExpireIn(in); err != nil || got != want {
			t.Errorf("ParseExpireIn(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "2h", "-1h", "30d", "soon"} {
		if _, err := ParseExpireIn(in); !errors.Is(err, ErrInvalidExpiry) {
			t.Errorf("ParseExpireIn(%q) = %v, want ErrInvalidExpiry", in, err)
		}
	}
}

// otherChar is a base62 character other than c, so a secret with its last
// character changed is surely another secret (a fixed "Z" was the same one
// time in 62).
func otherChar(c byte) string {
	if c == 'Z' {
		return "Y"
	}
	return "Z"
}

// A database written when times were milliseconds reads the same times
// after the upgrade to microseconds (migration 20261123000001).
func TestUpgradeToMicros(t *testing.T) {
	db, _, _ := openDB(t)
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, storage.Migrations{Table: migrationsTable, Files: sub, Until: "20261121000001"}); err != nil {
		t.Fatal(err)
	}
	created := time.Date(2026, 11, 21, 10, 0, 0, 123e6, time.UTC)
	used := created.Add(90 * time.Minute)
	if _, err := db.Bun().ExecContext(ctx, `INSERT INTO apikey_keys (id, lineage_id, environment, name, plan, per_minute, per_day,
		secret_hash, display, created_at, last_used_at) VALUES ('key_old', 'key_old', 'test', 'old', 'starter', 300, 50000, ?, 'sk_test_…abcd', ?, ?)`,
		strings.Repeat("0", 64), created.UnixMilli(), used.UnixMilli()); err != nil {
		t.Fatal(err)
	}
	m := newManager(t, db, Options{})
	if err := m.Migrate(ctx); err != nil { // a second run converts nothing twice
		t.Fatal(err)
	}
	ks, err := m.List(ctx)
	if err != nil || len(ks) != 1 {
		t.Fatalf("List: %v %v", ks, err)
	}
	if !ks[0].CreatedAt.Equal(created) || ks[0].LastUsedAt == nil || !ks[0].LastUsedAt.Equal(used) || ks[0].RevokedAt != nil {
		t.Fatalf("after the upgrade: created %v, last used %v, revoked %v; want %v, %v, nil", ks[0].CreatedAt, ks[0].LastUsedAt, ks[0].RevokedAt, created, used)
	}
}
