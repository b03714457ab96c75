package webhook

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/storage"
	"github.com/uptrace/bun"
	"go.uber.org/zap"
)

// DefaultSchedule is the retry schedule of docs/api.md §9: the first attempt is
// immediate, each later one follows the failure of the one before by the
// next delay. Ten attempts spread over about three and a half days.
var DefaultSchedule = []time.Duration{
	0,
	5 * time.Second,
	5 * time.Minute,
	30 * time.Minute,
	2 * time.Hour,
	5 * time.Hour,
	10 * time.Hour,
	14 * time.Hour,
	20 * time.Hour,
	24 * time.Hour,
}

// Defaults of [Config].
const (
	DefaultTimeout        = 10 * time.Second
	DefaultMaxConcurrency = 64
	DefaultMaxPerEndpoint = 32
	DefaultPollInterval   = time.Second
	DefaultJitter         = 0.1
	DefaultMaxRetryAfter  = 24 * time.Hour
	// DefaultRetention is how long finished deliveries are kept.
	DefaultRetention = 30 * 24 * time.Hour
)

// RetryPolicy is the one retry policy of settleflow; the deliverer uses its
// Schedule (Schedule[0] the delay of the first attempt after the event is
// recorded, Schedule[i] the delay of attempt i+1 after attempt i failed) and
// Jitter, and a delivery fails for good after Attempts() failed attempts.
type RetryPolicy = settleflow.RetryPolicy

// Config configures a [Service]. The zero value is the production setting
// (with a no-op logger).
type Config struct {
	// Logger receives the service's logs; nil discards them. Secrets are
	// never logged.
	Logger *zap.Logger
	// ShortName is the service's short name: the signature header is
	// ShortName + "-signature". Default "service".
	ShortName string
	// Retry is the retry policy. A nil Schedule means DefaultSchedule with
	// DefaultJitter.
	Retry RetryPolicy
	// Timeout bounds each attempt: the receiver must answer within it.
	// Default 10 s.
	Timeout time.Duration
	// MaxConcurrency bounds the attempts in flight at once. Default 64.
	MaxConcurrency int
	// MaxPerEndpoint bounds the attempts in flight to one endpoint, so a slow
	// endpoint cannot take every slot. Within it each endpoint's limit adapts
	// to the receiver: it starts at 4 (or MaxPerEndpoint if lower), grows
	// while the receiver answers fast and is halved when it fails, down to
	// one attempt at a time (see Service.EndpointConcurrency). Default 32.
	MaxPerEndpoint int
	// PollInterval is how often the deliverer looks for due deliveries
	// recorded by other processes or coming due; deliveries recorded by this
	// Service's Notify start at once. Default 1 s.
	PollInterval time.Duration
	// Lease is how long a claimed delivery stays with this process before
	// another may take it over. Default Timeout + 30 s. It must exceed
	// Timeout.
	Lease time.Duration
	// MaxRetryAfter caps how long a receiver's Retry-After can postpone the
	// next attempt. Default 24 h.
	MaxRetryAfter time.Duration
	// Transport sends the requests; nil means a clone of
	// http.DefaultTransport. Redirects are never followed. An
	// *http.Transport is cloned and its dialing replaced by the URL policy's
	// checked dialer (see [Config.StrictTestURLs]), with proxies off, since
	// through a proxy the address reached cannot be checked; any other
	// RoundTripper is used as is and must do the dial-time address check
	// itself.
	Transport http.RoundTripper
	// StrictTestURLs applies the live URL rules to test endpoints too: https
	// only, and only hosts that resolve to public addresses, at registration
	// and at every connection. It is off by default so that a newcomer's
	// receiver on localhost or the LAN works in test mode; turn it on
	// wherever parties you do not trust can register test endpoints. Live
	// endpoints always follow the live rules; see README, Webhooks.
	StrictTestURLs bool
	// LookupIPAddr resolves endpoint host names for the URL policy, at
	// registration and before every connection; nil means
	// net.DefaultResolver.LookupIPAddr. Set it to use another resolver (or,
	// in tests, to simulate DNS): the deliverer connects only to the
	// addresses it returns, after checking each.
	LookupIPAddr func(ctx context.Context, host string) ([]net.IPAddr, error)
	// liveAsTest makes live endpoints follow the test rules; set by this
	// package's tests only, so they can run live receivers on loopback.
	liveAsTest bool
	// Clock tells the time; nil means settleflow.SystemClock. Times are
	// stored in UTC.
	Clock settleflow.Clock
	// Retention is how long a finished delivery (succeeded, failed or
	// canceled) and its attempts are kept after they last changed; a
	// running deliverer deletes older ones in batches every
	// RetentionInterval. Default 30 days; negative keeps them forever.
	Retention time.Duration
	// RetentionInterval is how often the deliverer prunes. Default 1 min.
	RetentionInterval time.Duration
	// Owner names this process in delivery leases; default a fresh worker
	// id (host, process id and a random part). A process that keeps its
	// Owner across restarts (the reference server keeps it in its data
	// directory) takes back, at Start, the deliveries it held when it died
	// instead of waiting out their lease; two running processes must never
	// share one.
	Owner string
}

// Service keeps webhook endpoints and delivers events to them. It implements
// [settleflow.Notifier]. All methods are safe for concurrent use; the
// endpoint and inspection methods work without [Service.Start], for example
// from a command-line tool sharing the database with a running server.
type Service struct {
	sdb       *storage.DB // writes
	db        *bun.DB     // reads: sdb.Bun()
	log       *zap.Logger
	cfg       Config
	sigHeader string
	// One policy and client per environment: separate transports keep a
	// connection that the test rules allowed out of the live pool.
	policies map[settleflow.Environment]*urlPolicy
	clients  map[settleflow.Environment]*http.Client

	wake chan struct{}

	mu       sync.Mutex
	running  bool
	stopping chan struct{} // closed by Stop
	loopDone chan struct{} // closed when the claim loop returns
	cancel   context.CancelFunc
	inflight map[string]int            // endpoint id → attempts in flight
	limits   map[string]*endpointLimit // endpoint id → adaptive limit
	results  chan *result              // finished attempts, to the recorder
	recorded chan struct{}             // closed when the recorder returns
	queue    []claimed                 // claimed, not yet started
	total    int
	wg       sync.WaitGroup
	work     context.Context // the deliverer's, while it runs: attempts run under it

	// Deliveries Notify records already claimed (see Notify): the slots
	// its calls have reserved and not yet filled, in all and per endpoint;
	// the calls holding a reservation, which Stop waits for; whether a
	// claim is running, which a reservation waits for; the endpoints
	// whose line is known to hold due deliveries (they get no pre-claimed
	// ones); and a count of the Notify calls that recorded deliveries
	// unleased, so that a claim that read its probes before such a call
	// does not declare the line clear.
	reserved    int
	reservedPer map[string]int
	preclaims   sync.WaitGroup
	claiming    bool       // a claim runs: Notify reserves nothing meanwhile
	claimDone   *sync.Cond // on mu, when claiming ends
	backlogged  map[string]bool
	unleasedGen uint64
}

// Errors of the endpoint API.
var (
	// ErrEndpointNotFound: no endpoint has that id.
	ErrEndpointNotFound = errors.New("webhook: endpoint not found")
	// ErrDeliveryNotFound: no delivery has that id.
	ErrDeliveryNotFound = errors.New("webhook: delivery not found")
	// ErrRunning: Start was called on a Service that is running.
	ErrRunning = errors.New("webhook: deliverer already running")
)

// New returns a Service on db, the database's handle (from storage/sqlite,
// storage/postgres, or the workflow Store's DB()), through which it does all
// its writes, after creating or upgrading its tables (see [Migrate]).
func New(ctx context.Context, db *storage.DB, cfg Config) (*Service, error) {
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.ShortName == "" {
		cfg.ShortName = DefaultShortName
	}
	if cfg.Retry.Schedule == nil && cfg.Retry.Base == 0 {
		cfg.Retry = RetryPolicy{Schedule: DefaultSchedule, Jitter: DefaultJitter}
	}
	if cfg.Retry.Attempts() < 1 {
		return nil, errors.New("webhook: the retry policy allows no attempt (an empty Schedule, or MaxAttempts < 1)")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxConcurrency <= 0 {
		cfg.MaxConcurrency = DefaultMaxConcurrency
	}
	if cfg.MaxPerEndpoint <= 0 {
		cfg.MaxPerEndpoint = DefaultMaxPerEndpoint
	}
	if cfg.MaxPerEndpoint > cfg.MaxConcurrency {
		cfg.MaxPerEndpoint = cfg.MaxConcurrency
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.Lease <= 0 {
		cfg.Lease = cfg.Timeout + 30*time.Second
	}
	if cfg.Lease <= cfg.Timeout {
		return nil, fmt.Errorf("webhook: lease %v must exceed the timeout %v", cfg.Lease, cfg.Timeout)
	}
	if cfg.MaxRetryAfter <= 0 {
		cfg.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if cfg.Retention == 0 {
		cfg.Retention = DefaultRetention
	}
	if cfg.RetentionInterval <= 0 {
		cfg.RetentionInterval = time.Minute
	}
	if cfg.Clock == nil {
		cfg.Clock = settleflow.SystemClock
	}
	if cfg.Owner == "" {
		cfg.Owner = ids.NewWorker(cfg.Clock.Now())
	}
	if err := Migrate(ctx, db); err != nil {
		return nil, err
	}
	s := &Service{
		sdb:       db,
		db:        db.Bun(),
		log:       cfg.Logger,
		cfg:       cfg,
		sigHeader: SignatureHeaderName(cfg.ShortName),
		policies:  map[settleflow.Environment]*urlPolicy{},
		clients:   map[settleflow.Environment]*http.Client{},
		wake:      make(chan struct{}, 1),
		inflight:  map[string]int{},
		limits:    map[string]*endpointLimit{},

		reservedPer: map[string]int{},
		backlogged:  map[string]bool{},
	}
	s.claimDone = sync.NewCond(&s.mu)
	if _, ok := cfg.Transport.(*http.Transport); cfg.Transport != nil && !ok {
		cfg.Logger.Warn("webhook Config.Transport is not an *http.Transport: the URL policy's dial-time address check is off")
	}
	for _, env := range []settleflow.Environment{settleflow.Test, settleflow.Live} {
		p := newURLPolicy(cfg, env)
		var tr http.RoundTripper
		switch base := cfg.Transport.(type) {
		case nil:
			t := http.DefaultTransport.(*http.Transport).Clone()
			t.MaxIdleConnsPerHost = cfg.MaxPerEndpoint
			p.guard(t)
			tr = t
		case *http.Transport:
			t := base.Clone()
			p.guard(t)
			tr = t
		default:
			tr = base
		}
		s.policies[env] = p
		s.clients[env] = &http.Client{
			Transport: tr,
			Timeout:   cfg.Timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		}
	}
	return s, nil
}

func (s *Service) now() time.Time { return s.cfg.Clock.Now().UTC() }

// SignatureHeader returns the name of the signature header this Service
// sends: the short name + "-signature".
func (s *Service) SignatureHeader() string { return s.sigHeader }

// EndpointParams describe a new endpoint.
type EndpointParams struct {
	Environment settleflow.Environment
	// URL is where events are POSTed: an absolute http or https URL without
	// credentials. Live endpoints need https and a host that resolves to
	// public addresses only (the URL policy: see [Config.StrictTestURLs]).
	URL         string
	Description string
}

// CreateEndpoint registers an endpoint and returns it with its new secret.
// The secret is shown this once: keep it, the list operations never return
// it. The endpoint receives the events recorded from now on.
func (s *Service) CreateEndpoint(ctx context.Context, p EndpointParams) (*Endpoint, string, error) {
	if !p.Environment.Valid() {
		return nil, "", &settleflow.InvalidError{Code: settleflow.CodeParameterInvalid, Param: "environment",
			Message: "environment must be test or live"}
	}
	if err := s.policies[p.Environment].check(ctx, p.URL); err != nil {
		return nil, "", &settleflow.InvalidError{Code: settleflow.CodeParameterInvalid, Param: "url", Message: err.Error()}
	}
	secret, err := NewSecret()
	if err != nil {
		return nil, "", err
	}
	now := s.now()
	row := &endpointRow{
		ID:          ids.New(ids.Endpoint, now),
		Environment: string(p.Environment),
		URL:         p.URL,
		Description: p.Description,
		CreatedAt:   storage.Micros(now),
	}
	err = s.sdb.Write(ctx, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(row).Exec(ctx); err != nil {
			return err
		}
		_, err := tx.NewInsert().Model(&secretRow{EndpointID: row.ID, Secret: secret, CreatedAt: storage.Micros(now)}).Exec(ctx)
		return err
	})
	if err != nil {
		return nil, "", fmt.Errorf("webhook: create endpoint: %w", err)
	}
	s.log.Info("webhook endpoint created", zap.String("endpoint", row.ID), zap.String("env", row.Environment),
		zap.String("url", RedactURL(row.URL)))
	return row.endpoint(nil), secret, nil
}

// rotationEnds returns, per endpoint, the latest expiry of its secrets that
// are still valid at now.
func (s *Service) rotationEnds(ctx context.Context, endpointIDs []string, now time.Time) (map[string]int64, error) {
	out := map[string]int64{}
	if len(endpointIDs) == 0 {
		return out, nil
	}
	var rows []secretRow
	err := s.db.NewSelect().Model(&rows).Column("endpoint_id", "expires_at").
		Where("endpoint_id IN (?)", bun.List(endpointIDs)).
		Where("expires_at IS NOT NULL AND expires_at > ?", storage.Micros(now)).
		Scan(ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if *r.ExpiresAt > out[r.EndpointID] {
			out[r.EndpointID] = *r.ExpiresAt
		}
	}
	return out, nil
}

func (s *Service) endpoints(ctx context.Context, rows []endpointRow) ([]*Endpoint, error) {
	idsList := make([]string, len(rows))
	for i := range rows {
		idsList[i] = rows[i].ID
	}
	ends, err := s.rotationEnds(ctx, idsList, s.now())
	if err != nil {
		return nil, err
	}
	out := make([]*Endpoint, len(rows))
	for i := range rows {
		var end *int64
		if v, ok := ends[rows[i].ID]; ok {
			end = &v
		}
		out[i] = rows[i].endpoint(end)
	}
	return out, nil
}

// ListEndpoints returns the endpoints of env, oldest first, or of every
// environment if env is empty. It never returns secrets.
func (s *Service) ListEndpoints(ctx context.Context, env settleflow.Environment) ([]*Endpoint, error) {
	var rows []endpointRow
	q := s.db.NewSelect().Model(&rows).Order("id")
	if env != "" {
		q = q.Where("environment = ?", string(env))
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("webhook: list endpoints: %w", err)
	}
	return s.endpoints(ctx, rows)
}

// GetEndpoint returns the endpoint with id, or [ErrEndpointNotFound].
func (s *Service) GetEndpoint(ctx context.Context, id string) (*Endpoint, error) {
	var row endpointRow
	err := s.db.NewSelect().Model(&row).Where("id = ?", id).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrEndpointNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("webhook: get endpoint: %w", err)
	}
	eps, err := s.endpoints(ctx, []endpointRow{row})
	if err != nil {
		return nil, err
	}
	return eps[0], nil
}

// DisableEndpoint stops deliveries to the endpoint: it receives no new
// events, and its pending deliveries are canceled. Disabling a disabled
// endpoint does nothing.
func (s *Service) DisableEndpoint(ctx context.Context, id string) error {
	return s.disable(ctx, id, "disabled through the API")
}

func (s *Service) disable(ctx context.Context, id, reason string) error {
	now := storage.Micros(s.now())
	err := s.sdb.Write(ctx, func(ctx context.Context, tx bun.Tx) error {
		if err := endpointExists(ctx, tx, id); err != nil {
			return err
		}
		return disableTx(ctx, tx, id, reason, now)
	})
	if err != nil {
		return wrapNotFound("disable endpoint", err)
	}
	s.log.Info("webhook endpoint disabled", zap.String("endpoint", id), zap.String("reason", reason))
	return nil
}

// disableTx disables an endpoint and cancels its pending deliveries. Their
// last_error says why; the attempt a delivery's row held (whose error that
// was) moves to webhook_attempts first.
func disableTx(ctx context.Context, tx bun.IDB, id, reason string, now int64) error {
	if _, err := tx.NewUpdate().Model((*endpointRow)(nil)).
		Set("disabled_at = ?", now).Set("disabled_reason = ?", reason).
		Where("id = ? AND disabled_at IS NULL", id).Exec(ctx); err != nil {
		return err
	}
	if _, err := tx.NewRaw(`INSERT INTO webhook_attempts (delivery_id, attempt, started_at, latency_us, status_code, error, response_body)
		SELECT id, last_attempt, COALESCE(last_started_at, 0), last_latency_us, last_status_code, last_error, last_response_body
		FROM webhook_deliveries WHERE endpoint_id = ? AND status = ? AND last_attempt > 0`,
		id, string(DeliveryPending)).Exec(ctx); err != nil {
		return err
	}
	_, err := tx.NewUpdate().Model((*deliveryRow)(nil)).
		Set("status = ?", string(DeliveryCanceled)).
		Set("lease_owner = ''").Set("last_attempt = 0").
		Set("last_error = ?", "endpoint disabled: "+reason).
		Set("updated_at = ?", now).Set("completed_at = ?", now).
		Where("endpoint_id = ? AND status = ?", id, string(DeliveryPending)).Exec(ctx)
	return err
}

// EnableEndpoint enables a disabled endpoint again. It receives the events
// recorded from then on; deliveries canceled by the disabling stay canceled.
func (s *Service) EnableEndpoint(ctx context.Context, id string) error {
	err := s.sdb.Write(ctx, func(ctx context.Context, tx bun.Tx) error {
		if err := endpointExists(ctx, tx, id); err != nil {
			return err
		}
		_, err := tx.NewUpdate().Model((*endpointRow)(nil)).
			Set("disabled_at = NULL").Set("disabled_reason = ''").
			Where("id = ?", id).Exec(ctx)
		return err
	})
	return wrapNotFound("enable endpoint", err)
}

// RemoveEndpoint deletes the endpoint with its secrets, deliveries and
// their attempts. An attempt in flight finishes but is not retried.
func (s *Service) RemoveEndpoint(ctx context.Context, id string) error {
	err := s.sdb.Write(ctx, func(ctx context.Context, tx bun.Tx) error {
		if err := endpointExists(ctx, tx, id); err != nil {
			return err
		}
		// Children first, so this works with foreign keys off too.
		if _, err := tx.NewDelete().Model((*attemptRow)(nil)).
			Where("delivery_id IN (SELECT id FROM webhook_deliveries WHERE endpoint_id = ?)", id).Exec(ctx); err != nil {
			return err
		}
		for _, m := range []any{(*deliveryRow)(nil), (*laneRow)(nil), (*secretRow)(nil)} {
			if _, err := tx.NewDelete().Model(m).Where("endpoint_id = ?", id).Exec(ctx); err != nil {
				return err
			}
		}
		_, err := tx.NewDelete().Model((*endpointRow)(nil)).Where("id = ?", id).Exec(ctx)
		return err
	})
	if err != nil {
		return wrapNotFound("remove endpoint", err)
	}
	s.log.Info("webhook endpoint removed", zap.String("endpoint", id))
	return nil
}

// RotateSecret gives the endpoint a new secret and returns it (shown this
// once). For overlap, the secrets valid before keep signing alongside the
// new one, so receivers can switch without losing a delivery; with overlap 0
// they stop at once.
func (s *Service) RotateSecret(ctx context.Context, id string, overlap time.Duration) (string, error) {
	if overlap < 0 {
		return "", &settleflow.InvalidError{Code: settleflow.CodeParameterInvalid, Param: "overlap",
			Message: "overlap must not be negative"}
	}
	secret, err := NewSecret()
	if err != nil {
		return "", err
	}
	now := s.now()
	err = s.sdb.Write(ctx, func(ctx context.Context, tx bun.Tx) error {
		if err := endpointExists(ctx, tx, id); err != nil {
			return err
		}
		// Forget secrets that already expired.
		if _, err := tx.NewDelete().Model((*secretRow)(nil)).
			Where("endpoint_id = ? AND expires_at IS NOT NULL AND expires_at <= ?", id, storage.Micros(now)).Exec(ctx); err != nil {
			return err
		}
		end := storage.Micros(now.Add(overlap))
		if _, err := tx.NewUpdate().Model((*secretRow)(nil)).
			Set("expires_at = ?", end).
			Where("endpoint_id = ? AND (expires_at IS NULL OR expires_at > ?)", id, end).Exec(ctx); err != nil {
			return err
		}
		_, err := tx.NewInsert().Model(&secretRow{EndpointID: id, Secret: secret, CreatedAt: storage.Micros(now)}).Exec(ctx)
		return err
	})
	if err != nil {
		return "", wrapNotFound("rotate secret", err)
	}
	s.log.Info("webhook secret rotated", zap.String("endpoint", id), zap.Duration("overlap", overlap))
	return secret, nil
}

func endpointExists(ctx context.Context, db bun.IDB, id string) error {
	n, err := db.NewSelect().Model((*endpointRow)(nil)).Where("id = ?", id).Count(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrEndpointNotFound
	}
	return nil
}

func wrapNotFound(op string, err error) error {
	if err == nil || errors.Is(err, ErrEndpointNotFound) {
		return err
	}
	return fmt.Errorf("webhook: %s: %w", op, err)
}

// DeliveryQuery selects deliveries for [Service.ListDeliveries]. Empty
// fields do not filter.
type DeliveryQuery struct {
	EndpointID string
	EventID    string
	Status     DeliveryStatus
	// Limit is the most deliveries returned, newest first; default 100.
	Limit int
}

// ListDeliveries returns the deliveries matching q, newest first.
func (s *Service) ListDeliveries(ctx context.Context, q DeliveryQuery) ([]*Delivery, error) {
	if q.Limit <= 0 {
		q.Limit = 100
	}
	var rows []deliveryRow
	sq := s.db.NewSelect().Model(&rows).OrderExpr("id DESC").Limit(int64(q.Limit))
	if q.EndpointID != "" {
		sq = sq.Where("endpoint_id = ?", q.EndpointID)
	}
	if q.EventID != "" {
		sq = sq.Where("event_id = ?", q.EventID)
	}
	if q.Status != "" {
		sq = sq.Where("status = ?", string(q.Status))
	}
	if err := sq.Scan(ctx); err != nil {
		return nil, fmt.Errorf("webhook: list deliveries: %w", err)
	}
	out := make([]*Delivery, len(rows))
	for i := range rows {
		out[i] = rows[i].delivery()
	}
	return out, nil
}

// GetDelivery returns the delivery with id, or [ErrDeliveryNotFound].
func (s *Service) GetDelivery(ctx context.Context, id string) (*Delivery, error) {
	var row deliveryRow
	err := s.db.NewSelect().Model(&row).Where("id = ?", id).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrDeliveryNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("webhook: get delivery: %w", err)
	}
	return row.delivery(), nil
}

// ListAttempts returns every recorded attempt of the delivery, in order.
func (s *Service) ListAttempts(ctx context.Context, deliveryID string) ([]*Attempt, error) {
	var rows []attemptRow
	if err := s.db.NewRaw(listAttemptsSQL, deliveryID, deliveryID).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("webhook: list attempts: %w", err)
	}
	out := make([]*Attempt, len(rows))
	for i := range rows {
		out[i] = rows[i].attempt()
	}
	return out, nil
}

// listAttemptsSQL reads a delivery's attempts: its rows in webhook_attempts
// and the one held on the delivery's row, if any (see recordTx), in order.
// Parameters: the delivery, the delivery.
const listAttemptsSQL = `SELECT delivery_id, attempt, started_at, latency_us, status_code, error, response_body
		FROM webhook_attempts WHERE delivery_id = ?
	UNION ALL SELECT id, last_attempt, COALESCE(last_started_at, 0), last_latency_us, last_status_code, last_error, last_response_body
		FROM webhook_deliveries WHERE id = ? AND last_attempt > 0
	ORDER BY attempt`

// RetryDelivery makes a finished delivery (failed, canceled, or succeeded:
// resending one is how a receiver that lost an event gets it again; it
// dedupes on the event id) pending again, due now, with a fresh retry
// schedule; its attempt history is kept. It keeps its place in the
// endpoint's fair queue, given when it was first recorded, so it goes ahead
// of the deliveries recorded since. The endpoint must be enabled; a pending
// delivery is refused, since it is on its way already.
func (s *Service) RetryDelivery(ctx context.Context, id string) error {
	now := storage.Micros(s.now())
	var n int64
	err := s.sdb.Write(ctx, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewUpdate().Model((*deliveryRow)(nil)).
			Set("status = ?", string(DeliveryPending)).
			Set("schedule_start = attempts").Set("next_attempt_at = ?", now).
			Set("lease_owner = ''").Set("updated_at = ?", now).Set("completed_at = NULL").
			Where("id = ? AND status IN (?)", id, bun.List([]string{string(DeliveryFailed), string(DeliveryCanceled), string(DeliverySucceeded)})).
			Where("endpoint_id IN (SELECT id FROM webhook_endpoints WHERE disabled_at IS NULL)").
			Exec(ctx)
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("webhook: retry delivery: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("webhook: retry delivery %s: %w", id, errNotRetryable)
	}
	s.poke()
	return nil
}

var errNotRetryable = errors.New("no finished delivery with that id on an enabled endpoint (a pending one is on its way already)")

// poke wakes the deliverer without blocking.
func (s *Service) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}
