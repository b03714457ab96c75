package webhook

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/ids"
	"github.com/settleflow/settleflow/storage"
	"github.com/uptrace/bun"
	"go.uber.org/zap"
)

var _ settleflow.Notifier = (*Service)(nil)

// insertChunk bounds the rows of one multi-row statement: each size up to it
// is prepared once (storage.DB.Stmt), so a hot Notify is not parsed again.
const insertChunk = 64

// values returns n rows of width placeholders: "(?, ?), (?, ?)" for 2, 2.
func values(n, width int) string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", width), ", ") + ")"
	return strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
}

// insertDeliveriesSQL inserts n deliveries and returns the ids of those
// inserted (not those an earlier Notify recorded already); the columns not
// listed keep their defaults (no attempt yet).
func insertDeliveriesSQL(n int) string {
	return `INSERT INTO webhook_deliveries (id, event_id, event_type, endpoint_id, environment, lane, fair_key,
		payload, status, next_attempt_at, lease_owner, created_at, updated_at) VALUES ` + values(n, 13) + `
		ON CONFLICT (event_id, endpoint_id) DO NOTHING RETURNING id`
}

// Notify records one delivery per enabled endpoint of each event's
// environment, in one transaction, and returns nil once it has committed:
// from then on delivery survives a crash. An event handed over again (same
// id) records nothing new for an endpoint that already has it. Each event is
// marshalled once here; every attempt sends exactly those bytes.
//
// Events of an environment without enabled endpoints are dropped: an
// endpoint receives the events recorded after it was created.
//
// Each delivery gets its place in its endpoint's fair queue here (see
// eventLane and fairKeys): deliveries are taken from customers in turn.
//
// In the process whose deliverer runs (between [Service.Start] and
// [Service.Stop]), deliveries may be recorded already claimed: leased to
// this process as a claim would lease them, and put on the deliverer's
// queue once they have committed, so they go out at once and the claim's
// update is saved. Only what the deliverer could hold now (its budget, 2 ×
// MaxConcurrency less what it holds, and each endpoint's room: as for a
// claim, or, once the endpoint's receiver has answered, what its limit
// sends within preclaimHorizon at the latency seen, if that is more: see
// preclaimRoomLocked), only when the first attempt is due at once, and only for an
// endpoint whose line is clear: none known backlogged (its last claim probe
// filled the room it asked for, or left some of what it found, or this
// process recorded deliveries for it unleased since), and, read in the
// recording transaction, still enabled with none of its deliveries due and
// unleased, first attempts or retries. So a delivery recorded claimed never goes ahead of
// one waiting in line, its lane's or another customer's; the rest are
// recorded unleased and take their place in line. A delivery recorded
// claimed keeps its place (fair key) too: if the process dies before
// sending it, its lease runs out and it is claimed in its place by another.
func (s *Service) Notify(ctx context.Context, events []settleflow.Event) error {
	n, err := s.prepareNotify(ctx, events)
	if err != nil {
		return err
	}
	if n == nil {
		return nil
	}
	err = s.sdb.Write(ctx, func(ctx context.Context, tx bun.Tx) error {
		return n.Record(ctx, tx.Tx, nil)
	})
	n.Done(err == nil)
	if err != nil {
		return fmt.Errorf("webhook: notify: %w", err)
	}
	return nil
}

var _ storage.TxNotifier = (*Service)(nil)

// DB returns the database the Service keeps its endpoints and deliveries
// in (see [storage.TxNotifier]).
func (s *Service) DB() *storage.DB { return s.sdb }

// PrepareNotify implements [storage.TxNotifier]: it does what [Service.Notify]
// does before its transaction, and returns the recording that Notify would
// run in it, for a Store on the same database to run in the transaction
// that writes the events. So an event and its deliveries commit together,
// and the event is written once, already dispatched. Everything Notify
// promises holds: one delivery per enabled endpoint of the event's
// environment, each in its place in its endpoint's fair queue, recorded
// claimed by this process when the line is clear.
func (s *Service) PrepareNotify(ctx context.Context, events []settleflow.Event) (storage.Notice, error) {
	n, err := s.prepareNotify(ctx, events)
	if err != nil {
		return nil, err
	}
	if n == nil {
		return noNotice{}, nil
	}
	n.inTx = true
	return n, nil
}

// noNotice records nothing: the events go to no endpoint.
type noNotice struct{}

func (noNotice) Record(context.Context, *sql.Tx, func(string) bool) error { return nil }
func (noNotice) Done(bool)                                                {}

// notice is one batch of events' deliveries on their way to being recorded
// (see [Service.PrepareNotify]).
type notice struct {
	s        *Service
	events   int
	all      []deliveryRow // one per event and enabled endpoint
	rows     []deliveryRow // those of the last Record, kept
	due      int64
	now      time.Time
	pre      *reservation
	inserted map[string]bool
	// inTx: run in another package's write (PrepareNotify); failed: the
	// last Record's error.
	inTx   bool
	failed error
}

// prepareNotify builds the deliveries of events, or returns nil when there
// are none (no enabled endpoint for any).
func (s *Service) prepareNotify(ctx context.Context, events []settleflow.Event) (*notice, error) {
	if len(events) == 0 {
		return nil, nil
	}
	endpoints, err := s.enabledEndpoints(ctx)
	if err != nil {
		return nil, fmt.Errorf("webhook: notify: %w", err)
	}
	byEnv := map[string][]string{}
	urls := make(map[string]string, len(endpoints))
	for _, e := range endpoints {
		byEnv[e.Environment] = append(byEnv[e.Environment], e.ID)
		urls[e.ID] = e.URL
	}
	now := s.now()
	dueAt := now.Add(s.delay(0))
	n := &notice{s: s, events: len(events), due: storage.Micros(dueAt), now: now, inserted: map[string]bool{}}
	for i := range events {
		ev := &events[i]
		if ev.ID == "" {
			return nil, errors.New("webhook: notify: event without id")
		}
		env := ev.Environment()
		lane := eventLane(ev)
		if len(byEnv[string(env)]) == 0 {
			continue
		}
		body, err := json.Marshal(ev)
		if err != nil {
			return nil, fmt.Errorf("webhook: notify: marshal %s: %w", ev.ID, err)
		}
		for _, ep := range byEnv[string(env)] {
			n.all = append(n.all, deliveryRow{
				ID:            ids.New(ids.Delivery, now),
				EventID:       ev.ID,
				EventType:     string(ev.Type),
				EndpointID:    ep,
				Environment:   string(env),
				Lane:          lane,
				Payload:       string(body),
				Status:        string(DeliveryPending),
				NextAttemptAt: n.due,
				CreatedAt:     storage.Micros(now),
				UpdatedAt:     storage.Micros(now),
			})
		}
	}
	if len(n.all) == 0 {
		return nil, nil
	}
	if !dueAt.After(now) {
		n.pre = s.reserve(ctx, n.all, urls, now)
	}
	return n, nil
}

// Record implements [storage.Notice]: inside tx, it gives the deliveries of
// the events keep reports (nil: all) their places in line, decides which are
// recorded claimed and inserts them.
func (n *notice) Record(ctx context.Context, tx *sql.Tx, keep func(eventID string) bool) error {
	n.failed = n.record(ctx, tx, keep)
	return n.failed
}

func (n *notice) record(ctx context.Context, tx *sql.Tx, keep func(eventID string) bool) error {
	s := n.s
	clear(n.inserted)
	n.rows = n.rows[:0]
	for _, r := range n.all {
		if keep == nil || keep(r.EventID) {
			r.LeaseOwner, r.NextAttemptAt = "", n.due
			n.rows = append(n.rows, r)
		}
	}
	rows := n.rows
	if len(rows) == 0 {
		return nil
	}
	if err := fairKeys(ctx, s.sdb, tx, rows); err != nil {
		return err
	}
	if n.pre != nil {
		if err := s.leaseTx(ctx, tx, n.pre, rows, n.now); err != nil {
			return err
		}
	}
	for start := 0; start < len(rows); start += insertChunk {
		chunk := rows[start:min(start+insertChunk, len(rows))]
		args := make([]any, 0, 13*len(chunk))
		for _, r := range chunk {
			args = append(args, r.ID, r.EventID, r.EventType, r.EndpointID, r.Environment, r.Lane, r.FairKey,
				r.Payload, r.Status, r.NextAttemptAt, r.LeaseOwner, r.CreatedAt, r.UpdatedAt)
		}
		// An endpoint removed since the read above fails the foreign key;
		// the events are offered again (Notify) or left to the engine's
		// outbox (a Store's transaction), and then skip it.
		if err := collectIDs(ctx, s.sdb, tx, insertDeliveriesSQL(len(chunk)), args, n.inserted); err != nil {
			return err
		}
	}
	return nil
}

// Done implements [storage.Notice]: deliveries recorded claimed go on the
// deliverer's queue, and the reservation is given back.
func (n *notice) Done(committed bool) {
	s := n.s
	if !committed {
		if n.inTx && n.failed != nil {
			s.log.Warn("webhook deliveries not recorded in the writer's transaction; its events go through its outbox",
				zap.Int("events", n.events), zap.Error(n.failed))
		}
		s.handOff(n.pre, nil, nil)
		return
	}
	queued, unleased := s.handOff(n.pre, n.rows, n.inserted)
	s.log.Debug("webhook deliveries recorded", zap.Int("events", n.events), zap.Int("deliveries", len(n.inserted)),
		zap.Int("claimed", queued))
	if unleased > 0 {
		s.poke()
	}
}

// enabledEndpointsSQL reads the enabled endpoints, by id: what every Notify
// and every claim reads first, so it is prepared once.
const enabledEndpointsSQL = `SELECT id, environment, url FROM webhook_endpoints WHERE disabled_at IS NULL ORDER BY id`

// enabledEndpoints returns the enabled endpoints (id, environment and URL
// only), by id.
func (s *Service) enabledEndpoints(ctx context.Context) ([]endpointRow, error) {
	var out []endpointRow
	err := eachRow(ctx, s.sdb, nil, enabledEndpointsSQL, nil, func(rs *sql.Rows) error {
		var e endpointRow
		if err := rs.Scan(&e.ID, &e.Environment, &e.URL); err != nil {
			return err
		}
		out = append(out, e)
		return nil
	})
	return out, err
}

// eachRow runs the prepared query inside tx (nil: outside any transaction)
// and calls scan for each row it returns.
func eachRow(ctx context.Context, db *storage.DB, tx *sql.Tx, query string, args []any, scan func(*sql.Rows) error) error {
	st, err := db.Stmt(ctx, query)
	if err != nil {
		return err
	}
	if tx != nil {
		st = tx.StmtContext(ctx, st)
	}
	rs, err := st.QueryContext(ctx, args...)
	if err != nil {
		return err
	}
	defer rs.Close()
	for rs.Next() {
		if err := scan(rs); err != nil {
			return err
		}
	}
	return rs.Err()
}

// collectIDs runs the prepared query inside tx and adds the first column of
// each row it returns to set: the ids an insertDeliveriesSQL statement
// inserted, the endpoints a busyLinesSQL query finds busy.
func collectIDs(ctx context.Context, db *storage.DB, tx *sql.Tx, query string, args []any, set map[string]bool) error {
	return eachRow(ctx, db, tx, query, args, func(rs *sql.Rows) error {
		var id string
		if err := rs.Scan(&id); err != nil {
			return err
		}
		set[id] = true
		return nil
	})
}

// reservation is what one Notify call may record already claimed: up to
// free deliveries in all and slots[endpoint] per endpoint, reserved in the
// deliverer's budget until handOff, with each endpoint's URL and signing
// keys.
type reservation struct {
	free  int
	slots map[string]int
	urls  map[string]string
	keys  map[string][][]byte
	busy  map[string]bool // endpoints whose line the recording found not clear
}

// reserve reserves, in the running deliverer's budget, the slots the new
// deliveries of rows may be recorded claimed into (see Notify), or returns
// nil if there are none. A reservation must be ended by handOff.
func (s *Service) reserve(ctx context.Context, rows []deliveryRow, urls map[string]string, now time.Time) *reservation {
	want := map[string]int{}
	for i := range rows {
		want[rows[i].EndpointID]++
	}
	s.mu.Lock()
	for s.claiming {
		s.claimDone.Wait() // a claim's budget and room are its own until it ends
	}
	if !s.running || s.work.Err() != nil {
		s.mu.Unlock()
		return nil
	}
	budget := s.budgetLocked()
	held := s.heldLocked()
	r := &reservation{slots: map[string]int{}, urls: urls}
	sum := 0
	for ep, n := range want {
		if s.backlogged[ep] {
			continue
		}
		if n = min(n, s.preclaimRoomLocked(ep, held[ep])); n > 0 {
			r.slots[ep] = n
			sum += n
		}
	}
	r.free = min(budget, sum)
	if r.free <= 0 {
		s.mu.Unlock()
		return nil
	}
	s.reserved += r.free
	for ep, n := range r.slots {
		s.reservedPer[ep] += n
	}
	s.preclaims.Add(1)
	s.mu.Unlock()

	eps := make([]string, 0, len(r.slots))
	for ep := range r.slots {
		eps = append(eps, ep)
	}
	keys, err := s.signingKeys(ctx, eps, now)
	if err != nil {
		s.log.Warn("webhook notify: secrets not read; deliveries recorded unclaimed", zap.Error(err))
	}
	r.keys = keys
	return r
}

// leaseTx decides, in the recording transaction, after fairKeys, which rows
// are recorded claimed: for each endpoint of r with signing keys and a clear
// line, its first slots rows in line order, the endpoints taking turns
// within r.free, as a claim picks them; they are leased to this process.
// It may run again (a rerun write): it decides afresh.
func (s *Service) leaseTx(ctx context.Context, tx *sql.Tx, r *reservation, rows []deliveryRow, now time.Time) error {
	r.busy = map[string]bool{}
	eps := make([]string, 0, len(r.slots))
	for ep := range r.slots {
		if len(r.keys[ep]) > 0 {
			eps = append(eps, ep)
		}
	}
	if len(eps) == 0 {
		return nil
	}
	slices.Sort(eps)
	for start := 0; start < len(eps); start += insertChunk {
		chunk := eps[start:min(start+insertChunk, len(eps))]
		args := make([]any, 0, len(chunk)+2)
		for _, ep := range chunk {
			args = append(args, ep)
		}
		args = append(args, storage.Micros(now), storage.Micros(now))
		if err := collectIDs(ctx, s.sdb, tx, busyLinesSQL(len(chunk)), args, r.busy); err != nil {
			return fmt.Errorf("line check: %w", err)
		}
	}
	slots := make(map[string]int, len(eps))
	for _, ep := range eps {
		if !r.busy[ep] {
			slots[ep] = r.slots[ep]
		}
	}
	var cands []candidate
	for i := range rows {
		if slots[rows[i].EndpointID] > 0 {
			cands = append(cands, candidate{ID: rows[i].ID, EndpointID: rows[i].EndpointID, FairKey: rows[i].FairKey})
		}
	}
	pick := make(map[string]bool, r.free)
	for _, id := range pickInTurn(cands, r.free, slots) {
		pick[id] = true
	}
	lease := storage.Micros(now.Add(s.cfg.Lease))
	for i := range rows {
		if pick[rows[i].ID] {
			rows[i].LeaseOwner, rows[i].NextAttemptAt = s.cfg.Owner, lease
		}
	}
	return nil
}

// busyLinesSQL returns, of n endpoints, those with a delivery due and not
// leased: a first attempt in line (webhook_deliveries_fair, passing over
// those in flight) or a retry (the earliest due, from
// webhook_deliveries_retry); and those disabled since Notify read them,
// whose deliveries no claim takes. Parameters: the n endpoints, now, now.
func busyLinesSQL(n int) string {
	return `SELECT c.column1 FROM (VALUES ` + values(n, 1) + `) AS c
	WHERE NOT EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = c.column1 AND e.disabled_at IS NULL)
		OR EXISTS (SELECT 1 FROM webhook_deliveries f WHERE f.endpoint_id = c.column1
			AND f.status = 'pending' AND f.attempts = f.schedule_start AND f.next_attempt_at <= ?)
		OR (SELECT min(r.next_attempt_at) FROM webhook_deliveries r WHERE r.endpoint_id = c.column1
			AND r.status = 'pending' AND r.attempts > r.schedule_start) <= ?`
}

// handOff ends a Notify's recording: the deliveries of rows it inserted
// (inserted; rows nil if it did not commit) leased to this process go on
// the deliverer's queue, each in its place in its endpoint's line, and are
// started if slots allow, the endpoints that
// got deliveries unleased or whose line was not clear are marked
// backlogged, and r's reservation (if any) is given back. It returns the
// deliveries queued and those recorded unleased.
func (s *Service) handOff(r *reservation, rows []deliveryRow, inserted map[string]bool) (queued, unleased int) {
	var held []claimed
	s.mu.Lock()
	for i := range rows {
		row := &rows[i]
		if !inserted[row.ID] {
			continue
		}
		if row.LeaseOwner == s.cfg.Owner {
			held = append(held, claimed{row: *row, url: r.urls[row.EndpointID], keys: r.keys[row.EndpointID]})
			continue
		}
		unleased++
		s.backlogged[row.EndpointID] = true
	}
	s.enqueueLocked(held)
	queued = len(held)
	if unleased > 0 {
		s.unleasedGen++
	}
	work := s.work
	if r != nil {
		if rows != nil {
			for ep := range r.busy {
				s.backlogged[ep] = true
			}
		}
		s.reserved -= r.free
		for ep, n := range r.slots {
			if s.reservedPer[ep] -= n; s.reservedPer[ep] <= 0 {
				delete(s.reservedPer, ep)
			}
		}
	}
	s.mu.Unlock()
	if r != nil {
		s.preclaims.Done()
	}
	if queued > 0 {
		s.dispatch(work)
	}
	return queued, unleased
}

// eventLane returns the lane of an event's deliveries in the fair queue: the
// customer the event names (a workflow.* event's customerId, a
// customer.funded event's customer, a refund's
// customer while the refund carries it: the engine's own events do, a refund
// event read back from the outbox does not), or "" when it names none. The
// events of no customer form a lane of their own, served in turn with the
// customers' like any other. Lanes are per endpoint, and an endpoint serves
// one environment, so a customer's test and live deliveries never share one.
func eventLane(ev *settleflow.Event) string {
	switch {
	case ev.Data.CustomerID != "":
		return ev.Data.CustomerID
	case ev.Data.Refund != nil:
		return ev.Data.Refund.CustomerID
	}
	return ""
}

// line is one lane's line to one endpoint.
type line struct{ endpoint, lane string }

// fairKeys gives each of rows, new deliveries in the order they are
// recorded, its place in its endpoint's fair queue: one past its lane's last
// key on that endpoint or, when that is behind the head of the endpoint's
// line (see fairKeysSQL), one past the head; never below 1. So a lane with a
// long queue takes every later turn, not the next N, a lane that was served
// waits for no one's past, and within one lane and endpoint keys grow in the
// order deliveries are recorded. Per batch (of insertChunk lines) one read and
// one upsert of webhook_lanes, inside the recording transaction: on SQLite
// the writes are serialized, so what is read is what the insert follows;
// on Postgres two Notify calls at once may read the same last key, and equal
// keys are served in id order.
func fairKeys(ctx context.Context, db *storage.DB, tx *sql.Tx, rows []deliveryRow) error {
	last := make(map[line]int64)
	var lines []line
	for i := range rows {
		l := line{rows[i].EndpointID, rows[i].Lane}
		if _, seen := last[l]; !seen {
			last[l] = 0
			lines = append(lines, l)
		}
	}
	for start := 0; start < len(lines); start += insertChunk {
		chunk := lines[start:min(start+insertChunk, len(lines))]
		args := make([]any, 0, 2*len(chunk))
		for _, l := range chunk {
			args = append(args, l.endpoint, l.lane)
		}
		if err := readLasts(ctx, db, tx, fairKeysSQL(len(chunk)), args, last); err != nil {
			return fmt.Errorf("fair queue: %w", err)
		}
	}
	for i := range rows {
		l := line{rows[i].EndpointID, rows[i].Lane}
		last[l]++
		rows[i].FairKey = last[l]
	}
	// Rows locked in one order by every writer: two Notify calls at once on
	// Postgres wait for each other instead of deadlocking.
	slices.SortFunc(lines, func(a, b line) int {
		return cmp.Or(strings.Compare(a.endpoint, b.endpoint), strings.Compare(a.lane, b.lane))
	})
	for start := 0; start < len(lines); start += insertChunk {
		chunk := lines[start:min(start+insertChunk, len(lines))]
		args := make([]any, 0, 3*len(chunk))
		for _, l := range chunk {
			args = append(args, l.endpoint, l.lane, last[l])
		}
		if _, err := db.Exec(ctx, tx, upsertLanesSQL(len(chunk)), args...); err != nil {
			return fmt.Errorf("fair queue: %w", err)
		}
	}
	return nil
}

// readLasts runs the fairKeysSQL query and sets last of each line it
// returns to where the line's next key follows: its last key or the head,
// whichever is further, and at least 0.
func readLasts(ctx context.Context, db *storage.DB, tx *sql.Tx, query string, args []any, last map[line]int64) error {
	return eachRow(ctx, db, tx, query, args, func(rs *sql.Rows) error {
		var l line
		var lastKey, head int64
		if err := rs.Scan(&l.endpoint, &l.lane, &lastKey, &head); err != nil {
			return err
		}
		last[l] = max(lastKey, head, 0)
		return nil
	})
}

// upsertLanesSQL records the last keys of n lines; a key never moves back.
func upsertLanesSQL(n int) string {
	return `INSERT INTO webhook_lanes (endpoint_id, lane, last_key) VALUES ` + values(n, 3) + `
		ON CONFLICT (endpoint_id, lane) DO UPDATE SET last_key = CASE
			WHEN excluded.last_key > webhook_lanes.last_key THEN excluded.last_key ELSE webhook_lanes.last_key END`
}

// fairKeysSQL reads, for n (endpoint, lane) pairs, the lane's last key on
// the endpoint (0 if none) and the head of the endpoint's line: its least
// key pending and not yet attempted (retries waiting out their delay do not
// hold the head back), or with none the greatest key given there (0 if
// none). Index probes only: webhook_lanes' key, webhook_deliveries_fair.
func fairKeysSQL(n int) string {
	return `SELECT c.column1 AS endpoint_id, c.column2 AS lane,
		coalesce((SELECT l.last_key FROM webhook_lanes l
			WHERE l.endpoint_id = c.column1 AND l.lane = c.column2), 0) AS last,
		coalesce((SELECT min(h.fair_key) FROM webhook_deliveries h
			WHERE h.status = 'pending' AND h.attempts = h.schedule_start AND h.endpoint_id = c.column1),
			(SELECT max(g.last_key) FROM webhook_lanes g WHERE g.endpoint_id = c.column1), 0) AS head
	FROM (VALUES ` + values(n, 2) + `) AS c`
}
