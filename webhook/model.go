package webhook

import (
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/storage"
	"github.com/uptrace/bun"
)

// Endpoint is a registered webhook endpoint. It never carries a secret:
// secrets are shown once, by [Service.CreateEndpoint] and
// [Service.RotateSecret].
type Endpoint struct {
	ID          string
	Environment settleflow.Environment
	URL         string
	Description string
	CreatedAt   time.Time
	// DisabledAt is when the endpoint was disabled, by
	// [Service.DisableEndpoint] or because it answered 410 Gone; nil while
	// it is enabled. A disabled endpoint receives nothing.
	DisabledAt     *time.Time
	DisabledReason string
	// RotationEndsAt is set while an old secret still signs alongside the
	// current one after a rotation: the time the old one stops.
	RotationEndsAt *time.Time
}

// Enabled reports whether the endpoint receives deliveries.
func (e *Endpoint) Enabled() bool { return e.DisabledAt == nil }

// DeliveryStatus is where a delivery stands.
type DeliveryStatus string

// The delivery statuses.
const (
	// DeliveryPending: not yet delivered; an attempt is due at NextAttemptAt
	// or in flight.
	DeliveryPending DeliveryStatus = "pending"
	// DeliverySucceeded: the endpoint answered 2xx.
	DeliverySucceeded DeliveryStatus = "succeeded"
	// DeliveryFailed: every attempt of the schedule failed, or the endpoint
	// answered 410 Gone.
	DeliveryFailed DeliveryStatus = "failed"
	// DeliveryCanceled: the endpoint was disabled before the delivery
	// succeeded.
	DeliveryCanceled DeliveryStatus = "canceled"
)

// Delivery is one event on its way to one endpoint.
type Delivery struct {
	ID          string
	EventID     string
	EventType   settleflow.EventType
	EndpointID  string
	Environment settleflow.Environment
	// Lane is the customer the event belongs to, "" for an event that names
	// none (see [Service.Notify]): each endpoint takes its deliveries from
	// the lanes in turn.
	Lane string
	// Payload is the exact body sent on every attempt: the event marshalled
	// once, when the delivery was recorded.
	Payload []byte
	Status  DeliveryStatus
	// Attempts is the number of attempts made so far.
	Attempts int
	// NextAttemptAt is when the next attempt is due (while one is in flight,
	// when its lease runs out); zero unless the delivery is pending.
	NextAttemptAt  time.Time
	LastStatusCode int
	LastError      string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	// CompletedAt is when the delivery succeeded, failed for good or was
	// canceled.
	CompletedAt *time.Time
}

// Attempt is one HTTP request of a delivery.
type Attempt struct {
	DeliveryID string
	// Number counts the delivery's attempts from 1.
	Number    int
	StartedAt time.Time
	Latency   time.Duration
	// StatusCode is the HTTP status answered, 0 if none (connection refused,
	// timeout, ...).
	StatusCode int
	// Error describes a failed attempt; empty on success.
	Error string
	// ResponseBody is the start of the receiver's answer, for debugging.
	ResponseBody string
}

// Rows as stored. Times are Unix microseconds, UTC (storage.Micros).

type endpointRow struct {
	bun.BaseModel `bun:"table:webhook_endpoints"`

	ID             string `bun:"id,pk"`
	Environment    string `bun:"environment"`
	URL            string `bun:"url"`
	Description    string `bun:"description"`
	CreatedAt      int64  `bun:"created_at"`
	DisabledAt     *int64 `bun:"disabled_at"`
	DisabledReason string `bun:"disabled_reason"`
}

type secretRow struct {
	bun.BaseModel `bun:"table:webhook_secrets"`

	EndpointID string `bun:"endpoint_id,pk"`
	Secret     string `bun:"secret,pk"`
	CreatedAt  int64  `bun:"created_at"`
	ExpiresAt  *int64 `bun:"expires_at"`
}

type deliveryRow struct {
	bun.BaseModel `bun:"table:webhook_deliveries"`

	ID             string `bun:"id,pk"`
	EventID        string `bun:"event_id"`
	EventType      string `bun:"event_type"`
	EndpointID     string `bun:"endpoint_id"`
	Environment    string `bun:"environment"`
	Lane           string `bun:"lane"`
	FairKey        int64  `bun:"fair_key"`
	Payload        string `bun:"payload"`
	Status         string `bun:"status"`
	Attempts       int    `bun:"attempts"`
	ScheduleStart  int    `bun:"schedule_start"`
	NextAttemptAt  int64  `bun:"next_attempt_at"`
	LeaseOwner     string `bun:"lease_owner"`
	LastStatusCode int    `bun:"last_status_code"`
	LastError      string `bun:"last_error"`
	CreatedAt      int64  `bun:"created_at"`
	UpdatedAt      int64  `bun:"updated_at"`
	CompletedAt    *int64 `bun:"completed_at"`
	// The delivery's latest attempt, held on its row (migration
	// 20261127000001): its number (0 if none is held here: every attempt
	// is in webhook_attempts), start, latency and answer; its status code
	// and error are LastStatusCode and LastError.
	LastAttempt      int    `bun:"last_attempt"`
	LastStartedAt    *int64 `bun:"last_started_at"`
	LastLatencyUS    int64  `bun:"last_latency_us"`
	LastResponseBody string `bun:"last_response_body"`
}

// heldAttempt returns the attempt held on the row (LastAttempt > 0) as a
// webhook_attempts row.
func (r *deliveryRow) heldAttempt() attemptRow {
	a := attemptRow{
		DeliveryID:   r.ID,
		Attempt:      r.LastAttempt,
		LatencyUS:    r.LastLatencyUS,
		StatusCode:   r.LastStatusCode,
		Error:        r.LastError,
		ResponseBody: r.LastResponseBody,
	}
	if r.LastStartedAt != nil {
		a.StartedAt = *r.LastStartedAt
	}
	return a
}

// laneRow is a lane's last key on an endpoint (see fairKeys).
type laneRow struct {
	bun.BaseModel `bun:"table:webhook_lanes"`

	EndpointID string `bun:"endpoint_id,pk"`
	Lane       string `bun:"lane,pk"`
	LastKey    int64  `bun:"last_key"`
}

// attemptRow is an attempt in webhook_attempts: every attempt of a
// delivery but the one held on its row (deliveryRow.LastAttempt).
type attemptRow struct {
	bun.BaseModel `bun:"table:webhook_attempts"`

	DeliveryID   string `bun:"delivery_id,pk"`
	Attempt      int    `bun:"attempt,pk"`
	StartedAt    int64  `bun:"started_at"`
	LatencyUS    int64  `bun:"latency_us"`
	StatusCode   int    `bun:"status_code"`
	Error        string `bun:"error"`
	ResponseBody string `bun:"response_body"`
}

func fromMSPtr(v *int64) *time.Time {
	if v == nil {
		return nil
	}
	t := storage.FromMicros(*v)
	return &t
}

func (r *endpointRow) endpoint(rotationEndsAt *int64) *Endpoint {
	return &Endpoint{
		ID:             r.ID,
		Environment:    settleflow.Environment(r.Environment),
		URL:            r.URL,
		Description:    r.Description,
		CreatedAt:      storage.FromMicros(r.CreatedAt),
		DisabledAt:     fromMSPtr(r.DisabledAt),
		DisabledReason: r.DisabledReason,
		RotationEndsAt: fromMSPtr(rotationEndsAt),
	}
}

func (r *deliveryRow) delivery() *Delivery {
	d := &Delivery{
		ID:             r.ID,
		EventID:        r.EventID,
		EventType:      settleflow.EventType(r.EventType),
		EndpointID:     r.EndpointID,
		Environment:    settleflow.Environment(r.Environment),
		Lane:           r.Lane,
		Payload:        []byte(r.Payload),
		Status:         DeliveryStatus(r.Status),
		Attempts:       r.Attempts,
		LastStatusCode: r.LastStatusCode,
		LastError:      r.LastError,
		CreatedAt:      storage.FromMicros(r.CreatedAt),
		UpdatedAt:      storage.FromMicros(r.UpdatedAt),
		CompletedAt:    fromMSPtr(r.CompletedAt),
	}
	if d.Status == DeliveryPending {
		d.NextAttemptAt = storage.FromMicros(r.NextAttemptAt)
	}
	return d
}

func (r *attemptRow) attempt() *Attempt {
	return &Attempt{
		DeliveryID:   r.DeliveryID,
		Number:       r.Attempt,
		StartedAt:    storage.FromMicros(r.StartedAt),
		Latency:      time.Duration(r.LatencyUS) * time.Microsecond,
		StatusCode:   r.StatusCode,
		Error:        r.Error,
		ResponseBody: r.ResponseBody,
	}
}
