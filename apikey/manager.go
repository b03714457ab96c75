package apikey

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/uptrace/bun"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/storage"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationsTable records this package's migrations, kept apart from the
// engine's own.
const migrationsTable = "apikey_migrations"

// DefaultCacheTTL is how long Authenticate trusts a key it read from the
// database: a revocation or rotation made by another process on the same
// database takes effect within this time (at once in the same process).
const DefaultCacheTTL = 2 * time.Second

// lastUsedEvery is how often, at most, a key's last-used time is written.
const lastUsedEvery = time.Minute

// maxCache bounds the number of keys Authenticate keeps in memory.
const maxCache = 10_000

// Options tune a Manager. The zero value is the recommended setting.
type Options struct {
	// Clock tells the time; default settleflow.SystemClock.
	Clock settleflow.Clock
	// CacheTTL is how long Authenticate may use a key read from the database
	// before reading it again. Default DefaultCacheTTL; negative disables
	// the cache.
	CacheTTL time.Duration
}

// Manager creates, lists, rotates, revokes and authenticates API keys stored
// in a SQL database (SQLite or Postgres, through bun). It is safe for
// concurrent use, and several processes may share one database.
type Manager struct {
	db    *storage.DB
	clock settleflow.Clock
	ttl   time.Duration

	cacheMu  sync.RWMutex
	cache    map[string]cached // by secret hash
	cacheGen uint64            // bumped by flushCache

	luMu       sync.Mutex
	lastUsed   map[string]time.Time // by key id: the last write this process made or saw
	luSweepAt  int
	closed     bool
	writes     sync.WaitGroup
	luWritten  atomic.Int64 // last-used writes that changed a row, for tests
	luFailures atomic.Int64
}

type cached struct {
	row     row
	fetched time.Time
}

// New returns a Manager on db, the database's handle (from storage/sqlite,
// storage/postgres, or a workflow Store's DB()), through which it does all
// its writes. Call [Manager.Migrate] once before use and [Manager.Close] at
// shutdown, before closing db.
func New(db *storage.DB, opts Options) (*Manager, error) {
	m := &Manager{db: db, clock: opts.Clock, ttl: opts.CacheTTL,
		cache: map[string]cached{}, lastUsed: map[string]time.Time{}, luSweepAt: 1024}
	if m.clock == nil {
		m.clock = settleflow.SystemClock
	}
	if m.ttl == 0 {
		m.ttl = DefaultCacheTTL
	}
	return m, nil
}

// Migrate creates or upgrades the apikey_ tables, through the database's
// one migration runner (storage.DB.Migrate): safe to run from several
// processes at once.
func (m *Manager) Migrate(ctx context.Context) error {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return err
	}
	if err := m.db.Migrate(ctx, storage.Migrations{Table: migrationsTable, Files: sub}); err != nil {
		return fmt.Errorf("apikey: %w", err)
	}
	return nil
}

// Close waits for the last-used writes in flight and releases the prepared
// statements. It does not close the database. Authenticate keeps working
// after Close but no longer records last-used times.
func (m *Manager) Close() error {
	m.luMu.Lock()
	m.closed = true
	m.luMu.Unlock()
	m.writes.Wait()
	return nil
}

// CreateParams describe a new key.
type CreateParams struct {
	// Environment is settleflow.Test or settleflow.Live. Required.
	Environment settleflow.Environment
	// Name describes the key: 1–100 characters, no control characters.
	Name string
	// Plan defaults to Starter.
	Plan Plan
	// PerMinute and PerDay are required, positive, for Enterprise, and must
	// be zero for the other plans (which fix them).
	PerMinute int
	PerDay    int
	// Kind defaults to Secret; Worker makes a worker key (rk_…).
	Kind Kind
	// Products, for a worker key only, limits it to those remote products
	// (1–64 names of [a-z0-9-], starting with a letter); none: every one.
	Products []string
}

// productName is the form of a product name (settleflow.Register's).
var productName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,63}$`)

// checkKind checks p's kind and products, returning them as stored.
func (p CreateParams) checkKind() (Kind, string, error) {
	kind := p.Kind
	if kind == "" {
		kind = Secret
	}
	if !kind.Valid() {
		return "", "", fmt.Errorf("%w: kind %q: want secret or worker", ErrInvalidKind, p.Kind)
	}
	if len(p.Products) > 0 && kind != Worker {
		return "", "", fmt.Errorf("%w: only a worker key is limited to products", ErrInvalidKind)
	}
	if len(p.Products) > 64 {
		return "", "", fmt.Errorf("%w: at most 64 products", ErrInvalidKind)
	}
	seen := map[string]bool{}
	for _, name := range p.Products {
		if !productName.MatchString(name) {
			return "", "", fmt.Errorf("%w: %q is not a product name (1-64 of [a-z0-9-], starting with a letter)", ErrInvalidKind, name)
		}
		if seen[name] {
			return "", "", fmt.Errorf("%w: product %q named twice", ErrInvalidKind, name)
		}
		seen[name] = true
	}
	return kind, strings.Join(p.Products, ","), nil
}

// Create makes a new key and returns it with its secret. The secret is
// returned only here: it is not stored and cannot be recovered.
func (m *Manager) Create(ctx context.Context, p CreateParams) (Key, string, error) {
	if !p.Environment.Valid() {
		return Key{}, "", fmt.Errorf("%w %q: want test or live", ErrInvalidEnvironment, p.Environment)
	}
	if err := validateName(p.Name); err != nil {
		return Key{}, "", err
	}
	if p.Plan == "" {
		p.Plan = Starter
	}
	perMinute, perDay, err := planLimits(p.Plan, p.PerMinute, p.PerDay)
	if err != nil {
		return Key{}, "", err
	}
	kind, products, err := p.checkKind()
	if err != nil {
		return Key{}, "", err
	}
	now := m.now()
	id := ids.New(ids.Key, now)
	r := row{id: id, lineage: id, env: p.Environment, name: p.Name, plan: p.Plan,
		perMinute: perMinute, perDay: perDay, createdAt: now, kind: kind, products: products}
	secret, err := m.fill(&r)
	if err != nil {
		return Key{}, "", err
	}
	if err := m.tx(ctx, func(tx *sql.Tx) error {
		_, err := m.exec(ctx, tx, insertSQL, r.args()...)
		return err
	}); err != nil {
		return Key{}, "", fmt.Errorf("apikey: create: %w", err)
	}
	return r.key(), secret, nil
}

// fill gives r a new secret's hash and display form and returns the secret.
func (m *Manager) fill(r *row) (string, error) {
	secret, err := generateSecret(r.env, r.kind)
	if err != nil {
		return "", err
	}
	r.hash = hashSecret(secret)
	r.display = display(secret)
	return secret, nil
}

// Get returns the key with the given id, or ErrNotFound.
func (m *Manager) Get(ctx context.Context, id string) (Key, error) {
	r, err := m.get(ctx, nil, id)
	if err != nil {
		return Key{}, err
	}
	return r.key(), nil
}

// List returns every key, revoked and expired ones included, oldest first.
// Neither secrets nor their hashes are part of a Key.
func (m *Manager) List(ctx context.Context) ([]Key, error) {
	st, err := m.stmt(ctx, "SELECT "+columns+" FROM apikey_keys ORDER BY id")
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("apikey: list: %w", err)
	}
	defer rows.Close()
	var keys []Key
	for rows.Next() {
		var r row
		if err := r.scan(rows); err != nil {
			return nil, fmt.Errorf("apikey: list: %w", err)
		}
		keys = append(keys, r.key())
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("apikey: list: %w", err)
	}
	return keys, nil
}

// ParseExpireIn parses a rotation expiry as the keys rotate command takes
// it: "0" or "now", "1h", "24h" or "1d", "7d" or "168h". The result is one of
// [RotationExpiries]; anything else is ErrInvalidExpiry.
func ParseExpireIn(s string) (time.Duration, error) {
	switch strings.TrimSpace(strings.ToLower(s)) {
	case "0", "now", "0s", "0h":
		return 0, nil
	case "1h", "60m":
		return time.Hour, nil
	case "24h", "1d":
		return 24 * time.Hour, nil
	case "7d", "168h", "1w":
		return 7 * 24 * time.Hour, nil
	}
	return 0, fmt.Errorf("%w %q: want now, 1h, 24h or 7d", ErrInvalidExpiry, s)
}

// Rotate replaces the key id by a new one with the same name, environment,
// plan and limits, and returns the new key with its secret (returned only
// here). The old key keeps working until now + expireIn, which must be one of
// [RotationExpiries]: 0 (it stops at once), 1h, 24h or 7 × 24h. An old key
// that already expires sooner keeps its expiry. Rotating a revoked or expired
// key fails with ErrRevoked or ErrExpired; an unknown id with ErrNotFound.
func (m *Manager) Rotate(ctx context.Context, id string, expireIn time.Duration) (Key, string, error) {
	valid := false
	for _, d := range RotationExpiries {
		valid = valid || d == expireIn
	}
	if !valid {
		return Key{}, "", fmt.Errorf("%w: %s: want 0, 1h, 24h or 168h (7 days)", ErrInvalidExpiry, expireIn)
	}
	now := m.now()
	var (
		nk     row
		secret string
	)
	err := m.tx(ctx, func(tx *sql.Tx) error {
		old, err := m.get(ctx, tx, id)
		if err != nil {
			return err
		}
		if old.revokedAt != nil {
			return &opError{fmt.Sprintf("apikey: key %s is revoked and cannot be rotated", id), ErrRevoked}
		}
		if old.expiresAt != nil && !now.Before(*old.expiresAt) {
			return &opError{fmt.Sprintf("apikey: key %s has expired and cannot be rotated", id), ErrExpired}
		}
		switch {
		case old.successor != "":
			return &opError{fmt.Sprintf("apikey: key %s was already rotated into %s; rotate %s instead", id, old.successor, old.successor), ErrRotated}
		case old.expiresAt != nil:
			// Rotated before successors were recorded.
			return &opError{fmt.Sprintf("apikey: key %s was already rotated; rotate its successor instead", id), ErrRotated}
		}
		expires := now.Add(expireIn)
		nk = row{id: ids.New(ids.Key, now), lineage: old.lineage, env: old.env, name: old.name, plan: old.plan,
			perMinute: old.perMinute, perDay: old.perDay, createdAt: now, kind: old.kind, products: old.products}
		if secret, err = m.fill(&nk); err != nil {
			return err
		}
		// The successor is recorded only if there is none yet: of two
		// rotations racing, one wins and the other makes no key.
		res, err := m.exec(ctx, tx, "UPDATE apikey_keys SET expires_at = ?, successor_id = ? WHERE id = ? AND successor_id IS NULL", storage.Micros(expires), nk.id, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return &opError{fmt.Sprintf("apikey: key %s was rotated by someone else meanwhile; rotate its successor instead", id), ErrRotated}
		}
		_, err = m.exec(ctx, tx, insertSQL, nk.args()...)
		return err
	})
	if err != nil {
		var oe *opError
		if errors.Is(err, ErrNotFound) || errors.As(err, &oe) {
			return Key{}, "", err
		}
		return Key{}, "", fmt.Errorf("apikey: rotate %s: %w", id, err)
	}
	m.flushCache()
	return nk.key(), secret, nil
}

// Revoke revokes the key id at once (in other processes sharing the
// database, within CacheTTL). Revoking a revoked key does nothing; an
// unknown id is ErrNotFound.
func (m *Manager) Revoke(ctx context.Context, id string) error {
	var n int64
	err := m.tx(ctx, func(tx *sql.Tx) error {
		res, err := m.exec(ctx, tx, "UPDATE apikey_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", storage.Micros(m.now()), id)
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("apikey: revoke %s: %w", id, err)
	}
	m.flushCache()
	if n == 1 {
		return nil
	}
	_, err = m.get(ctx, nil, id)
	return err
}

// Authenticate checks the value of a request's Authorization header,
// "Bearer sk_test_…", and returns the key it names. It fails with one of the
// *AuthError values: ErrMissing, ErrMalformed, ErrUnknown, ErrRevoked or
// ErrExpired; any other error is a database failure (an HTTP 500).
//
// It is meant to run on every request: a key read from the database is
// trusted for CacheTTL, and its last-used time is written in the background
// at most once a minute.
func (m *Manager) Authenticate(ctx context.Context, authorization string) (Key, error) {
	secret, env, kind, err := parseKey(authorization)
	if err != nil {
		return Key{}, err
	}
	hash := hashSecret(secret)
	now := m.now()
	r, found, err := m.lookup(ctx, hash, now)
	if err != nil {
		return Key{}, err
	}
	if !found || subtle.ConstantTimeCompare([]byte(r.hash), []byte(hash)) != 1 || r.env != env || r.kind != kind {
		return Key{}, ErrUnknown
	}
	if r.revokedAt != nil {
		return Key{}, ErrRevoked
	}
	if r.expiresAt != nil && !now.Before(*r.expiresAt) {
		return Key{}, ErrExpired
	}
	k := r.key()
	if t := m.touch(r, now); !t.IsZero() {
		k.LastUsedAt = &t
	}
	return k, nil
}

// lookup returns the row with the given secret hash, from the cache if it
// is fresh enough.
func (m *Manager) lookup(ctx context.Context, hash string, now time.Time) (row, bool, error) {
	if m.ttl > 0 {
		m.cacheMu.RLock()
		c, ok := m.cache[hash]
		m.cacheMu.RUnlock()
		if ok && !now.Before(c.fetched) && now.Sub(c.fetched) < m.ttl {
			return c.row, true, nil
		}
	}
	// A row read while this process revokes or rotates must not be cached
	// after the flush: remember the generation before reading.
	m.cacheMu.RLock()
	gen := m.cacheGen
	m.cacheMu.RUnlock()
	st, err := m.stmt(ctx, "SELECT "+columns+" FROM apikey_keys WHERE secret_hash = ?")
	if err != nil {
		return row{}, false, err
	}
	var r row
	if err := r.scan(st.QueryRowContext(ctx, hash)); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return row{}, false, nil
		}
		return row{}, false, fmt.Errorf("apikey: authenticate: %w", err)
	}
	if m.ttl > 0 {
		m.cacheMu.Lock()
		defer m.cacheMu.Unlock()
		if gen != m.cacheGen {
			return r, true, nil
		}
		if len(m.cache) >= maxCache {
			for h, c := range m.cache {
				if now.Before(c.fetched) || now.Sub(c.fetched) >= m.ttl {
					delete(m.cache, h)
				}
			}
			if len(m.cache) >= maxCache {
				clear(m.cache)
			}
		}
		m.cache[hash] = cached{row: r, fetched: now}
	}
	return r, true, nil
}

// flushCache forgets every cached key, after a change made by this process.
func (m *Manager) flushCache() {
	m.cacheMu.Lock()
	clear(m.cache)
	m.cacheGen++
	m.cacheMu.Unlock()
}

// touch records that r was used at now: unless its last-used time was
// written (by this process, or found in the database) less than a minute
// ago, it writes it in the background. It returns the last-used time to
// report.
func (m *Manager) touch(r row, now time.Time) time.Time {
	m.luMu.Lock()
	last, ok := m.lastUsed[r.id]
	if r.lastUsedAt != nil && (!ok || r.lastUsedAt.After(last)) {
		last, ok = *r.lastUsedAt, true
	}
	if m.closed || ok && !now.Before(last) && now.Sub(last) < lastUsedEvery {
		m.luMu.Unlock()
		return last
	}
	m.lastUsed[r.id] = now
	if len(m.lastUsed) >= m.luSweepAt {
		// Records older than a minute decide nothing: drop them.
		for id, t := range m.lastUsed {
			if now.Sub(t) >= lastUsedEvery {
				delete(m.lastUsed, id)
			}
		}
		m.luSweepAt = max(1024, 2*len(m.lastUsed))
	}
	m.writes.Add(1)
	m.luMu.Unlock()
	go m.writeLastUsed(r.id, now)
	return now
}

// writeLastUsed stores now as id's last-used time, unless another process
// wrote one less than a minute earlier.
func (m *Manager) writeLastUsed(id string, now time.Time) {
	defer m.writes.Done()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	us := storage.Micros(now)
	var n int64
	err := m.tx(ctx, func(tx *sql.Tx) error {
		res, err := m.exec(ctx, tx,
			"UPDATE apikey_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at <= ? OR last_used_at > ?)",
			us, id, us-lastUsedEvery.Microseconds(), us)
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	if err != nil {
		// Let the next request try again.
		m.luFailures.Add(1)
		m.luMu.Lock()
		if t, ok := m.lastUsed[id]; ok && t.Equal(now) {
			delete(m.lastUsed, id)
		}
		m.luMu.Unlock()
		return
	}
	if n > 0 {
		m.luWritten.Add(1)
	}
}

func (m *Manager) now() time.Time { return m.clock.Now().UTC().Truncate(time.Microsecond) }

// get reads one row by id, in tx if not nil.
func (m *Manager) get(ctx context.Context, tx *sql.Tx, id string) (row, error) {
	st, err := m.stmt(ctx, "SELECT "+columns+" FROM apikey_keys WHERE id = ?")
	if err != nil {
		return row{}, err
	}
	if tx != nil {
		st = tx.StmtContext(ctx, st)
	}
	var r row
	if err := r.scan(st.QueryRowContext(ctx, id)); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return row{}, fmt.Errorf("%w: %q", ErrNotFound, id)
		}
		return row{}, fmt.Errorf("apikey: get %s: %w", id, err)
	}
	return r, nil
}

// tx runs fn as a write through the database's writer (storage.DB.Write:
// on SQLite, in the group commit shared with every other write of the
// process).
func (m *Manager) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	return m.db.Write(ctx, func(_ context.Context, tx bun.Tx) error { return fn(tx.Tx) })
}

// exec runs a prepared statement, in tx if not nil.
func (m *Manager) exec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	return m.db.Exec(ctx, tx, query, args...)
}

// stmt returns the prepared statement for query, written with ? placeholders.
func (m *Manager) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	st, err := m.db.Stmt(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("apikey: %w", err)
	}
	return st, nil
}

func validateName(name string) error {
	n := utf8.RuneCountInString(name)
	switch {
	case !utf8.ValidString(name):
		return fmt.Errorf("%w: not UTF-8", ErrInvalidName)
	case strings.TrimSpace(name) == "":
		return fmt.Errorf("%w: a name is required", ErrInvalidName)
	case n > 100:
		return fmt.Errorf("%w: %d characters, at most 100", ErrInvalidName, n)
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return fmt.Errorf("%w: control characters", ErrInvalidName)
	}
	return nil
}

// planLimits validates a plan and its explicit limits and returns the
// limits that apply.
func planLimits(plan Plan, perMinute, perDay int) (int, int, error) {
	switch plan {
	case Starter, Pro:
		if perMinute != 0 || perDay != 0 {
			return 0, 0, fmt.Errorf("%w: the %s plan fixes its limits; give them only for enterprise", ErrInvalidLimits, plan)
		}
		pm, pd, _ := plan.Limits()
		return pm, pd, nil
	case Enterprise:
		if perMinute <= 0 || perDay <= 0 {
			return 0, 0, fmt.Errorf("%w: enterprise needs positive per-minute and per-day limits (got %d and %d)", ErrInvalidLimits, perMinute, perDay)
		}
		return perMinute, perDay, nil
	}
	return 0, 0, fmt.Errorf("%w %q: want starter, pro or enterprise", ErrInvalidPlan, plan)
}
