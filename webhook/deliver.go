package webhook

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/stage"
	"github.com/settleflow/settleflow/storage"
	"github.com/uptrace/bun"
	"go.uber.org/zap"
)

// Start starts the deliverer: a loop that claims due deliveries under a
// lease and POSTs them, at most Config.MaxConcurrency at once and
// Config.MaxPerEndpoint per endpoint. First it takes back the deliveries
// leased to Config.Owner, left by an earlier process under the same owner
// that died; then it returns at once. ctx only bounds Start itself, as for
// [settleflow.Engine.Start]: the deliverer runs until [Service.Stop], which
// stops it gracefully, or hard once Stop's ctx ends (attempts in flight are
// then abandoned and retried after their lease). An engine given the
// Service in settleflow.Options.Services starts and stops it with its own
// stages.
func (s *Service) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		return ErrRunning
	}
	// Deliveries this owner held when its process died are due again now,
	// not when their lease runs out.
	now := storage.Micros(s.now())
	if err := s.sdb.Write(ctx, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewUpdate().Model((*deliveryRow)(nil)).
			Set("next_attempt_at = ?", now).Set("lease_owner = ''").Set("updated_at = ?", now).
			Where("lease_owner = ? AND status = ?", s.cfg.Owner, string(DeliveryPending)).Exec(ctx)
		return err
	}); err != nil {
		return fmt.Errorf("webhook: start: releasing this owner's leases: %w", err)
	}
	workCtx, cancel := context.WithCancel(context.Background())
	s.running = true
	s.cancel = cancel
	s.work = workCtx
	clear(s.backlogged) // known again from the next claim
	s.stopping = make(chan struct{})
	s.loopDone = make(chan struct{})
	s.results = make(chan *result, 2*s.cfg.MaxConcurrency)
	s.recorded = make(chan struct{})
	go s.recorder(s.results, s.recorded)
	go s.loop(workCtx, s.stopping, s.loopDone)
	s.log.Info("webhook deliverer started", zap.String("owner", s.cfg.Owner),
		zap.Int("max_concurrency", s.cfg.MaxConcurrency), zap.Int("max_per_endpoint", s.cfg.MaxPerEndpoint))
	return nil
}

// Name names the deliverer among the services an engine runs
// (settleflow.Options.Services): "webhooks".
func (s *Service) Name() string { return "webhooks" }

// Stop stops claiming deliveries and waits for the attempts in flight to
// finish and be recorded. If ctx ends first, it abandons them (they are
// retried after their lease, by this or another process) and returns
// ctx.Err(). Stopping a stopped Service does nothing.
func (s *Service) Stop(ctx context.Context) error {
	s.mu.Lock()
	if !s.running {
		s.mu.Unlock()
		return nil
	}
	s.running = false
	close(s.stopping)
	cancel, loopDone, results, recorded := s.cancel, s.loopDone, s.results, s.recorded
	s.mu.Unlock()

	<-loopDone
	// A Notify recording deliveries already claimed puts them on the queue
	// once they have committed: wait for it, so they are released with it.
	s.preclaims.Wait()
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	s.releaseQueued(rctx)
	rcancel()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		cancel()
		<-done
		err = ctx.Err()
	}
	// Every attempt has handed its result over: record the last of them.
	close(results)
	<-recorded
	cancel()
	s.log.Info("webhook deliverer stopped")
	return err
}

func (s *Service) loop(ctx context.Context, stopping <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	timer := time.NewTimer(0)
	defer timer.Stop()
	nextPrune := time.Now().Add(s.cfg.RetentionInterval)
	for {
		select {
		case <-ctx.Done():
			return
		case <-stopping:
			return
		case <-timer.C:
		case <-s.wake:
		}
		if err := s.claimAndDispatch(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("webhook claim failed", zap.Error(err))
		}
		if now := time.Now(); now.After(nextPrune) {
			nextPrune = now.Add(s.cfg.RetentionInterval)
			if n, err := s.Prune(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("webhook retention: pruning failed; retried later", zap.Error(err))
			} else if n > 0 {
				s.log.Info("webhook retention: pruned finished deliveries", zap.Int("deliveries", n))
			}
		}
		timer.Reset(s.cfg.PollInterval)
	}
}

// claimed is a delivery leased to this process with what it takes to send.
type claimed struct {
	row  deliveryRow
	url  string
	keys [][]byte
}

// The deliverer keeps a small queue of claimed deliveries ahead of the
// attempts in flight, so that one claim (a few statements) serves several
// attempts: a claim gives an endpoint at most twice its concurrency limit
// (in flight plus queued) and refills it only once it holds its limit or
// fewer. Queued deliveries are leased like those in flight; Stop releases
// them. Notify may add deliveries it recorded already claimed (see Notify),
// within the deliverer's budget and the endpoint's room, which for an
// endpoint whose receiver has answered goes beyond twice its limit to what
// its limit sends within preclaimHorizon at the latency seen (see
// preclaimRoomLocked): the slots it reserves for them count as held until
// it hands them over, and it reserves none while a claim runs. Each
// endpoint's queued deliveries are kept in line order, (fair_key, id).
//
// An attempt starts only while its lease outlasts it by leaseMargin (see
// startableLocked): a queued delivery that waited too long (its receiver
// slowed down) is released instead, with the endpoint's later ones, back
// to its place in line, where a claim takes it again under a new lease.

// preclaimHorizon bounds how long the deliveries a Notify queues beyond an
// endpoint's room should take to go out, at its receiver's latency.
const preclaimHorizon = time.Second

// preclaimRoomLocked returns how many more deliveries a Notify may record
// claimed for endpoint ep, which holds held: its room, as for a claim, or,
// once its receiver has answered, as many more as its limit sends within
// preclaimHorizon (or a quarter of what the lease leaves beyond the
// timeout, if less) at the latency seen, if that is more. The budget
// bounds both.
func (s *Service) preclaimRoomLocked(ep string, held int) int {
	limit := s.limitNowLocked(ep)
	r := room(limit, held)
	l := s.limits[ep]
	if l == nil || l.lat <= 0 {
		return r // nothing known of the receiver yet
	}
	horizon := min(preclaimHorizon, (s.cfg.Lease-s.cfg.Timeout)/4)
	rounds := int(min(horizon/l.lat, 1<<20))
	return max(r, limit*rounds-held)
}

// leaseMargin is how long a delivery's lease must outlast an attempt on it
// (Timeout) when the attempt starts, so that it is recorded before another
// process may take the delivery over.
func (s *Service) leaseMargin() time.Duration {
	return min(5*time.Second, (s.cfg.Lease-s.cfg.Timeout)/2)
}

// startableLocked reports whether an attempt on queued delivery c may start
// at now: while its lease (next_attempt_at, for a delivery this process
// holds) outlasts the attempt by leaseMargin.
func (s *Service) startableLocked(c claimed, now time.Time) bool {
	return now.Add(s.cfg.Timeout + s.leaseMargin()).Before(storage.FromMicros(c.row.NextAttemptAt))
}

// enqueueLocked adds deliveries held by this process to the queue, each
// endpoint's in line order: each before the first queued delivery of its
// endpoint that follows it in (fair_key, id) order, else at the end.
func (s *Service) enqueueLocked(cs []claimed) {
	for _, c := range cs {
		i := slices.IndexFunc(s.queue, func(q claimed) bool {
			return q.row.EndpointID == c.row.EndpointID && lineOrder(c.row, q.row) < 0
		})
		if i < 0 {
			s.queue = append(s.queue, c)
		} else {
			s.queue = slices.Insert(s.queue, i, c)
		}
	}
}

// lineOrder orders deliveries of one endpoint by their place in its line.
func lineOrder(a, b deliveryRow) int {
	return cmp.Or(cmp.Compare(a.FairKey, b.FairKey), strings.Compare(a.ID, b.ID))
}

// budgetLocked returns how many more deliveries the deliverer may hold, in
// all: 2 × MaxConcurrency less those in flight, queued and reserved.
func (s *Service) budgetLocked() int {
	return 2*s.cfg.MaxConcurrency - s.total - len(s.queue) - s.reserved
}

// heldLocked returns the deliveries each endpoint holds: in flight, queued
// and reserved.
func (s *Service) heldLocked() map[string]int {
	held := make(map[string]int, len(s.inflight))
	for k, v := range s.inflight {
		held[k] += v
	}
	for _, c := range s.queue {
		held[c.row.EndpointID]++
	}
	for k, v := range s.reservedPer {
		held[k] += v
	}
	return held
}

// room returns how many more deliveries an endpoint holding held may be
// given, limit its concurrency limit now: none while it holds more than
// its limit (still well supplied), else up to twice its limit.
func room(limit, held int) int {
	if held > limit {
		return 0
	}
	return 2*limit - held
}

// limitNowLocked returns an endpoint's concurrency limit now.
func (s *Service) limitNowLocked(ep string) int {
	if l, ok := s.limits[ep]; ok {
		return l.allowed()
	}
	return s.cfg.initialPerEndpoint()
}

// claimAndDispatch tops up the queue from the database and starts what the
// slots allow.
func (s *Service) claimAndDispatch(ctx context.Context) error {
	s.releaseStale(ctx)
	s.mu.Lock()
	budget := s.budgetLocked()
	held := s.heldLocked()
	per := make(map[string]int, len(s.limits))
	for k, l := range s.limits {
		per[k] = l.allowed()
	}
	// A Notify waits for the claim to end before it reserves slots, so the
	// two never fill the same room.
	s.claiming = budget > 0
	s.mu.Unlock()
	var err error
	if budget > 0 {
		var batch []claimed
		batch, err = s.claim(ctx, s.now(), budget, func(ep string) int {
			n, ok := per[ep]
			if !ok {
				n = s.cfg.initialPerEndpoint()
			}
			return room(n, held[ep])
		})
		s.mu.Lock()
		s.enqueueLocked(batch)
		s.claiming = false
		s.claimDone.Broadcast()
		s.mu.Unlock()
	}
	s.dispatch(ctx)
	return err
}

// dispatch starts an attempt for each queued delivery that has a free slot,
// overall and on its endpoint.
func (s *Service) dispatch(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ctx.Err() != nil || !s.running {
		return // stopping: start nothing new
	}
	now := s.now()
	var stale map[string]bool
	kept := s.queue[:0]
	for _, c := range s.queue {
		ep := c.row.EndpointID
		if s.total >= s.cfg.MaxConcurrency || s.inflight[ep] >= s.limitLocked(ep).allowed() || stale[ep] {
			kept = append(kept, c)
			continue
		}
		if !s.startableLocked(c, now) {
			// Its lease is too short for an attempt: the loop releases
			// it (releaseStale). Kept meanwhile, with its endpoint's
			// later deliveries, so that none of those goes first.
			kept = append(kept, c)
			if stale == nil {
				stale = map[string]bool{}
			}
			stale[ep] = true
			continue
		}
		s.inflight[ep]++
		s.total++
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			r := s.attempt(ctx, c)
			// The slot is free once the receiver has answered and the
			// recorder has room: the result is recorded in a batch with
			// others while the next attempt goes out. The delivery stays
			// leased until it is recorded.
			if r != nil {
				s.results <- r
			}
			s.mu.Lock()
			if s.inflight[ep]--; s.inflight[ep] == 0 {
				delete(s.inflight, ep)
			}
			s.total--
			per := s.limitLocked(ep)
			if r != nil {
				per.observe(r.o, s.cfg)
			}
			refill := s.inflight[ep] <= per.allowed()
			if refill {
				n := s.inflight[ep]
				for _, q := range s.queue {
					if q.row.EndpointID == ep {
						n++
					}
				}
				refill = n <= per.allowed()
			}
			s.mu.Unlock()
			s.dispatch(ctx)
			if refill {
				s.poke()
			}
		}()
	}
	clear(s.queue[len(kept):])
	s.queue = kept
	if stale != nil {
		s.poke()
	}
}

// releaseStale releases the queued deliveries whose lease is too short for
// an attempt to start (see startableLocked), each with its endpoint's
// deliveries queued after it, so that none of those goes ahead of it: they
// are due again at once, in their place in line, and the endpoint is
// marked backlogged, so Notify records no delivery claimed ahead of them.
// If the release cannot be written, they are left to their lease, as a
// crashed process leaves its own. It runs in the loop before each claim,
// which takes only deliveries whose lease has ended: those are stale, so a
// delivery is never queued twice.
func (s *Service) releaseStale(ctx context.Context) {
	s.mu.Lock()
	now := s.now()
	var staleEP map[string]bool // allocated only when something is stale: this runs before every claim
	var out []claimed
	kept := s.queue[:0]
	for _, c := range s.queue {
		ep := c.row.EndpointID
		if staleEP[ep] || !s.startableLocked(c, now) {
			if staleEP == nil {
				staleEP = map[string]bool{}
			}
			staleEP[ep] = true
			out = append(out, c)
			continue
		}
		kept = append(kept, c)
	}
	clear(s.queue[len(kept):])
	s.queue = kept
	if len(out) > 0 {
		for ep := range staleEP {
			s.backlogged[ep] = true
		}
		s.unleasedGen++
	}
	s.mu.Unlock()
	if len(out) > 0 {
		s.log.Warn("webhook deliveries queued too long for their lease; released to be claimed again", zap.Int("deliveries", len(out)))
		s.release(ctx, out)
	}
}

// releaseQueued gives the leases of queued, unstarted deliveries back, so
// another process need not wait for them to run out.
func (s *Service) releaseQueued(ctx context.Context) {
	s.mu.Lock()
	q := s.queue
	s.queue = nil
	s.mu.Unlock()
	s.release(ctx, q)
}

// release gives the leases of deliveries this process holds and has not
// started back: they are due at once, in their place in line.
func (s *Service) release(ctx context.Context, q []claimed) {
	if len(q) == 0 {
		return
	}
	idList := make([]string, len(q))
	for i, c := range q {
		idList[i] = c.row.ID
	}
	now := storage.Micros(s.now())
	if err := s.sdb.Write(ctx, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewUpdate().Model((*deliveryRow)(nil)).
			Set("next_attempt_at = ?", now).Set("lease_owner = ''").Set("updated_at = ?", now).
			Where("id IN (?) AND lease_owner = ? AND status = ?", bun.List(idList), s.cfg.Owner, string(DeliveryPending)).
			Exec(ctx)
		return err
	}); err != nil {
		s.log.Warn("webhook leases not released; they run out by themselves", zap.Error(err))
	}
}

type candidate struct {
	ID, EndpointID string
	FairKey        int64
	rank           int // place among its endpoint's candidates, from 0
}

// claim leases up to free due deliveries, no more per endpoint than room
// allows. The candidates are read first: for each enabled endpoint with a free
// slot, its first due deliveries in the fair queue's order, (fair_key, id)
// (index probes, so a long backlog on one endpoint costs nothing to the
// others). When they are more than free, the endpoints take turns: every
// endpoint's first candidate, then every endpoint's second, and so on. Then
// they are taken with a conditional update that claims only what is still
// pending and due, so two processes never hold the same lease; the claimed
// deliveries are returned in the order they were picked.
//
// A delivery keeps its key when an attempt fails: it waits out its retry
// delay out of line (in webhook_deliveries_retry, by due time, never read
// before it is due), then is claimed at its place in line, which is ahead of
// the deliveries recorded after it, its lane's included. Of more retries due
// at once than an endpoint has room for, the earliest due are candidates.
//
// Each endpoint probed is marked backlogged (see Notify) when its probe
// filled the room it asked for (there may be more in line) or not all it
// found was picked, and clear otherwise, unless a Notify recorded
// deliveries unleased meanwhile.
func (s *Service) claim(ctx context.Context, now time.Time, free int, room func(endpointID string) int) ([]claimed, error) {
	s.mu.Lock()
	gen := s.unleasedGen
	s.mu.Unlock()
	endpoints, err := s.enabledEndpoints(ctx)
	if err != nil {
		return nil, err
	}
	enabled := make([]string, len(endpoints))
	for i, e := range endpoints {
		enabled[i] = e.ID
	}
	var cands []candidate
	slots := make(map[string]int, len(enabled))
	const probesPerQuery = 50
	for start := 0; start < len(enabled); {
		var (
			parts []string
			args  []any
		)
		for ; start < len(enabled) && len(parts) < probesPerQuery; start++ {
			ep := enabled[start]
			n := min(room(ep), free)
			if n <= 0 {
				continue
			}
			slots[ep] = n
			parts = append(parts, probeSQL(len(parts)))
			args = append(args, ep, storage.Micros(now), n, ep, storage.Micros(now), n)
		}
		if len(parts) == 0 {
			continue
		}
		var err error
		if cands, err = s.probe(ctx, strings.Join(parts, " UNION ALL "), args, cands); err != nil {
			return nil, err
		}
	}
	found := make(map[string]int, len(slots))
	endpointOf := make(map[string]string, len(cands))
	for _, c := range cands {
		found[c.EndpointID]++
		endpointOf[c.ID] = c.EndpointID
	}
	pick := pickInTurn(cands, free, slots)
	picked := make(map[string]int, len(slots))
	for _, id := range pick {
		picked[endpointOf[id]]++
	}
	s.mu.Lock()
	for ep, n := range slots {
		switch {
		case found[ep] >= n || picked[ep] < found[ep]:
			s.backlogged[ep] = true
		case s.unleasedGen == gen:
			delete(s.backlogged, ep)
		}
	}
	s.mu.Unlock()
	if len(pick) == 0 {
		return nil, nil
	}
	var rows []deliveryRow
	err = s.sdb.Write(ctx, func(ctx context.Context, tx bun.Tx) error {
		rows = rows[:0]
		for start := 0; start < len(pick); start += insertChunk {
			chunk := pick[start:min(start+insertChunk, len(pick))]
			args := make([]any, 0, 5+len(chunk))
			args = append(args, s.cfg.Owner, storage.Micros(now.Add(s.cfg.Lease)), storage.Micros(now))
			for _, id := range chunk {
				args = append(args, id)
			}
			args = append(args, string(DeliveryPending), storage.Micros(now))
			var err error
			if rows, err = s.scanDeliveries(ctx, tx.Tx, leaseSQL(len(chunk)), args, rows); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, nil
	}
	order := make(map[string]int, len(pick))
	for i, id := range pick {
		order[id] = i
	}
	slices.SortFunc(rows, func(a, b deliveryRow) int { return cmp.Compare(order[a.ID], order[b.ID]) })
	// What to send: each endpoint's URL and the secrets valid now.
	epIDs := map[string]bool{}
	for _, r := range rows {
		epIDs[r.EndpointID] = true
	}
	idList := make([]string, 0, len(epIDs))
	for id := range epIDs {
		idList = append(idList, id)
	}
	// The URLs as read at the start of this claim: an endpoint removed
	// since has no deliveries left to lease (they go with it), and one
	// disabled since has none pending.
	urls := make(map[string]string, len(endpoints))
	for _, e := range endpoints {
		urls[e.ID] = e.URL
	}
	keys, err := s.signingKeys(ctx, idList, now)
	if err != nil {
		return nil, err
	}
	out := make([]claimed, 0, len(rows))
	for _, r := range rows {
		u, ok := urls[r.EndpointID]
		if !ok || len(keys[r.EndpointID]) == 0 {
			// Removed meanwhile, or no secret: leave it to the lease.
			continue
		}
		out = append(out, claimed{row: r, url: u, keys: keys[r.EndpointID]})
	}
	return out, nil
}

// signingKeys returns the keys of the secrets of each of endpointIDs valid
// at now, newest first.
func (s *Service) signingKeys(ctx context.Context, endpointIDs []string, now time.Time) (map[string][][]byte, error) {
	var secrets []secretRow
	for start := 0; start < len(endpointIDs); start += insertChunk {
		chunk := endpointIDs[start:min(start+insertChunk, len(endpointIDs))]
		args := make([]any, 0, len(chunk)+1)
		for _, id := range chunk {
			args = append(args, id)
		}
		args = append(args, storage.Micros(now))
		err := eachRow(ctx, s.sdb, nil, `SELECT endpoint_id, secret FROM webhook_secrets
			WHERE endpoint_id IN (`+placeholders(len(chunk))+`) AND (expires_at IS NULL OR expires_at > ?)
			ORDER BY created_at DESC, secret`, args, func(rs *sql.Rows) error {
			var sr secretRow
			if err := rs.Scan(&sr.EndpointID, &sr.Secret); err != nil {
				return err
			}
			secrets = append(secrets, sr)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	keys := map[string][][]byte{}
	for _, sr := range secrets {
		k, err := secretKey(sr.Secret)
		if err != nil {
			s.log.Error("webhook endpoint has an unusable secret", zap.String("endpoint", sr.EndpointID))
			continue
		}
		keys[sr.EndpointID] = append(keys[sr.EndpointID], k)
	}
	return keys, nil
}

// probeSQL is the i-th probe of a claim: one endpoint's first slots due
// deliveries not yet attempted, in line order, from webhook_deliveries_fair
// alone, and its first slots retries due, by due time, from
// webhook_deliveries_retry. Parameters: the endpoint, now, slots, the
// endpoint, now, slots.
func probeSQL(i int) string {
	return fmt.Sprintf(`SELECT * FROM (SELECT id, endpoint_id, fair_key FROM webhook_deliveries
			WHERE endpoint_id = ? AND status = 'pending' AND attempts = schedule_start AND next_attempt_at <= ?
			ORDER BY fair_key, id LIMIT ?) AS f%[1]d
		UNION ALL SELECT * FROM (SELECT id, endpoint_id, fair_key FROM webhook_deliveries
			WHERE endpoint_id = ? AND status = 'pending' AND attempts > schedule_start AND next_attempt_at <= ?
			ORDER BY next_attempt_at, id LIMIT ?) AS r%[1]d`, i)
}

// probe runs the probes of query, a statement prepared once per number of
// endpoints probed (so a claim is not parsed again), and appends what they
// find to cands.
func (s *Service) probe(ctx context.Context, query string, args []any, cands []candidate) ([]candidate, error) {
	err := eachRow(ctx, s.sdb, nil, query, args, func(rows *sql.Rows) error {
		var c candidate
		if err := rows.Scan(&c.ID, &c.EndpointID, &c.FairKey); err != nil {
			return err
		}
		cands = append(cands, c)
		return nil
	})
	return cands, err
}

// pickInTurn returns the ids of up to free candidates, each endpoint's first
// slots[endpoint] in its (fair_key, id) order, the endpoints taking turns:
// in (rank, fair_key, id) order, where rank is a candidate's place among its
// endpoint's.
func pickInTurn(cands []candidate, free int, slots map[string]int) []string {
	slices.SortFunc(cands, func(a, b candidate) int {
		return cmp.Or(strings.Compare(a.EndpointID, b.EndpointID), cmp.Compare(a.FairKey, b.FairKey), strings.Compare(a.ID, b.ID))
	})
	for i := 1; i < len(cands); i++ {
		if cands[i].EndpointID == cands[i-1].EndpointID {
			cands[i].rank = cands[i-1].rank + 1
		}
	}
	kept := slices.DeleteFunc(cands, func(c candidate) bool { return c.rank >= slots[c.EndpointID] })
	slices.SortFunc(kept, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.FairKey, b.FairKey), strings.Compare(a.ID, b.ID))
	})
	pick := make([]string, 0, min(free, len(kept)))
	for _, c := range kept[:min(free, len(kept))] {
		pick = append(pick, c.ID)
	}
	return pick
}

// outcome is what an attempt came to.
type outcome struct {
	status     int
	err        string
	body       string
	latency    time.Duration
	retryAfter time.Duration // 0 if none
}

func (o outcome) ok() bool { return o.err == "" && o.status >= 200 && o.status < 300 }

// maxResponseExcerpt is how much of a receiver's answer is kept.
const maxResponseExcerpt = 512

// attempt sends one delivery and returns its result to record, or nil if
// there is nothing to record.
func (s *Service) attempt(ctx context.Context, c claimed) *result {
	started := s.now()
	o := s.send(ctx, c, started)
	if ctx.Err() != nil && !o.ok() {
		// Stopped hard: the lease brings the delivery back; recording a
		// failure we caused ourselves would only spend an attempt.
		return nil
	}
	// Record even while stopping: the attempt happened.
	return &result{c: c, started: started, o: o}
}

// maxRecordBatch bounds the attempts one transaction records.
const maxRecordBatch = 256

// recorder writes finished attempts in batches, each batch one write
// through the database's writer (so on SQLite it shares its commit with
// the engine's writes of the moment), until in is closed and drained.
func (s *Service) recorder(in <-chan *result, done chan<- struct{}) {
	defer close(done)
	batch := make([]*result, 0, maxRecordBatch)
	for r := range in {
		batch = stage.Drain(in, append(batch[:0], r), maxRecordBatch)
		s.recordBatch(batch)
	}
}

// recordBatch records a batch in one transaction, or, if that fails, each
// attempt on its own, so one bad row cannot lose the others. An attempt
// that cannot be recorded is sent again after its lease: at least once.
func (s *Service) recordBatch(batch []*result) {
	if err := s.record(batch...); err == nil {
		for _, r := range batch {
			s.logResult(r)
		}
		return
	} else if len(batch) == 1 {
		s.log.Error("webhook attempt not recorded; it is sent again after its lease", zap.String("delivery", batch[0].c.row.ID), zap.Error(err))
		return
	}
	for _, r := range batch {
		s.recordBatch([]*result{r})
	}
}

func (s *Service) send(ctx context.Context, c claimed, started time.Time) outcome {
	env := settleflow.Environment(c.row.Environment)
	client, pol := s.clients[env], s.policies[env]
	if client == nil {
		return outcome{err: fmt.Sprintf("unknown environment %q", env)}
	}
	// The URL rules again, for endpoints registered before them (or under a
	// laxer setting); the address rules follow in the dialer.
	if _, err := pol.checkStatic(c.url); err != nil {
		return outcome{err: refusedPrefix + err.Error()}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader([]byte(c.row.Payload)))
	if err != nil {
		return outcome{err: "bad endpoint url: " + unwrapURLError(err)}
	}
	setDeliveryHeaders(req.Header, s.sigHeader, c.row.EventID, started.Unix(), []byte(c.row.Payload), c.keys)
	req.Header.Set("User-Agent", "settleflow-webhooks/1")
	t0 := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		o := outcome{latency: time.Since(t0)}
		var ne net.Error
		var pe *policyError
		switch {
		case errors.As(err, &pe):
			o.err = refusedPrefix + pe.Error()
		case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, context.DeadlineExceeded):
			o.err = fmt.Sprintf("timeout: no answer within %v", s.cfg.Timeout)
		default:
			o.err = unwrapURLError(err)
		}
		return o
	}
	excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseExcerpt))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	o := outcome{status: resp.StatusCode, latency: time.Since(t0), body: cleanText(excerpt)}
	if !o.ok() {
		o.err = "HTTP " + strconv.Itoa(resp.StatusCode)
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			o.err += " (redirects are not followed)"
		}
		o.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), s.now())
	}
	return o
}

// refusedPrefix starts the recorded error of an attempt the URL policy
// refused, so it reads apart from the receiver's own failures.
const refusedPrefix = "refused by the webhook URL policy: "

// result is a finished attempt on its way to the database.
type result struct {
	c       claimed
	started time.Time
	o       outcome
	// Set when recorded:
	next    DeliveryStatus // "" if the delivery no longer exists
	attempt int
}

// record writes a finished attempt and what follows from it through the
// database's writer, which on SQLite commits it together with the other
// writes of the moment (attempts finishing at once, the engine's own), so
// they share one fsync.
func (s *Service) record(rs ...*result) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return s.sdb.Write(ctx, func(ctx context.Context, tx bun.Tx) error {
		return s.recordTx(ctx, tx, rs, s.now())
	})
}

// recordTx writes the attempts of rs and moves each delivery on: succeeded,
// due again on the schedule, or failed for good; a 410 disables the
// endpoint. It takes a few statements per batch, whatever its size: one
// insert for the attempts that go to webhook_attempts, one update for the
// deliveries taken over, one update for the successes (each row given its
// own attempt from a VALUES list); only failures, each with a schedule of
// its own, take a statement each. Each delivery's row is written once.
//
// An attempt on a delivery this process still holds is written into the
// delivery's row (last_attempt and the other last_* columns), and only the
// attempt the row held before, if any, moves to a row of webhook_attempts:
// a delivery that succeeds at once costs no attempt row. An attempt on a
// delivery taken over meanwhile (by another process, or canceled) leaves
// the row to its new holder and goes to webhook_attempts.
func (s *Service) recordTx(ctx context.Context, tx bun.Tx, rs []*result, now time.Time) error {
	// A delivery with two results in one batch (the first recorded so late
	// that its lease ran out and this process claimed it again): the later
	// is recorded after the first, on the row the first left.
	var again []*result
	idList := make([]string, 0, len(rs))
	seen := make(map[string]bool, len(rs))
	first := make([]*result, 0, len(rs))
	for _, r := range rs {
		if seen[r.c.row.ID] {
			again = append(again, r)
			continue
		}
		seen[r.c.row.ID] = true
		first = append(first, r)
		idList = append(idList, r.c.row.ID)
	}
	// The rows as they are now, locked against other processes on Postgres
	// (SQLite's writes are serialized): each is then written once, by the
	// update that records its outcome, with its attempt counted there.
	lock := ""
	if s.sdb.Postgres() {
		lock = " FOR UPDATE"
	}
	var curs []deliveryRow
	for start := 0; start < len(idList); start += insertChunk {
		chunk := idList[start:min(start+insertChunk, len(idList))]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		var err error
		if curs, err = s.scanDeliveries(ctx, tx.Tx, `SELECT * FROM webhook_deliveries WHERE id IN (`+placeholders(len(chunk))+`)`+lock, args, curs); err != nil {
			return err
		}
	}
	cur := make(map[string]*deliveryRow, len(curs))
	for i := range curs {
		curs[i].Attempts++ // this attempt
		cur[curs[i].ID] = &curs[i]
	}
	var others []string // taken over meanwhile: only the attempt is counted
	attempts := make([]attemptRow, 0, len(first))
	var succeeded, rest []*result
	for _, r := range first {
		c := cur[r.c.row.ID]
		if c == nil {
			r.next = "" // the endpoint was removed meanwhile
			continue
		}
		r.attempt = c.Attempts
		switch {
		case c.LeaseOwner != s.cfg.Owner || c.Status != string(DeliveryPending):
			// Another process took it over, or the endpoint was disabled:
			// the attempt is history, the delivery is theirs.
			r.next = DeliveryStatus(c.Status)
			others = append(others, c.ID)
			attempts = append(attempts, attemptRow{
				DeliveryID:   r.c.row.ID,
				Attempt:      c.Attempts,
				StartedAt:    storage.Micros(r.started),
				LatencyUS:    r.o.latency.Microseconds(),
				StatusCode:   r.o.status,
				Error:        r.o.err,
				ResponseBody: r.o.body,
			})
			continue
		case c.LastAttempt > 0:
			// The row takes this attempt: the one it held moves out.
			attempts = append(attempts, c.heldAttempt())
		}
		if r.o.ok() {
			r.next = DeliverySucceeded
			succeeded = append(succeeded, r)
		} else {
			rest = append(rest, r)
		}
	}
	for start := 0; start < len(attempts); start += insertChunk {
		chunk := attempts[start:min(start+insertChunk, len(attempts))]
		if _, err := tx.NewInsert().Model(&chunk).Exec(ctx); err != nil {
			return err
		}
	}
	if len(others) > 0 {
		if _, err := tx.NewRaw(`UPDATE webhook_deliveries SET attempts = attempts + 1, updated_at = ? WHERE id IN (?)`,
			storage.Micros(now), bun.List(others)).Exec(ctx); err != nil {
			return err
		}
	}
	for start := 0; start < len(succeeded); start += insertChunk {
		chunk := succeeded[start:min(start+insertChunk, len(succeeded))]
		args := make([]any, 0, 2+6*len(chunk))
		args = append(args, storage.Micros(now), storage.Micros(now))
		for _, r := range chunk {
			args = append(args, r.c.row.ID, r.attempt, storage.Micros(r.started), r.o.latency.Microseconds(), r.o.status, r.o.body)
		}
		if _, err := s.sdb.Exec(ctx, tx.Tx, succeededSQL(len(chunk)), args...); err != nil {
			return err
		}
	}
	for _, r := range rest {
		if err := s.moveOnTx(ctx, tx, r, cur[r.c.row.ID], now); err != nil {
			return err
		}
	}
	if len(again) > 0 {
		return s.recordTx(ctx, tx, again, now)
	}
	return nil
}

// succeededSQL marks n deliveries succeeded, each holding its successful
// attempt. Parameters: now, now, then per delivery its id, the attempt's
// number, start, latency (µs), status code and answer. Prepared once per n
// (storage.DB.Exec); the casts type the values' columns on Postgres.
func succeededSQL(n int) string {
	const row = "(?, CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS TEXT))"
	return `UPDATE webhook_deliveries SET attempts = attempts + 1, updated_at = ?, lease_owner = '',
		status = 'succeeded', completed_at = ?,
		last_attempt = v.column2, last_started_at = v.column3, last_latency_us = v.column4,
		last_status_code = v.column5, last_error = '', last_response_body = v.column6
	FROM (VALUES ` + strings.TrimSuffix(strings.Repeat(row+", ", n), ", ") + `) AS v WHERE webhook_deliveries.id = v.column1`
}

// leaseSQL leases n deliveries still pending and due, and returns them.
// Parameters: the owner, the lease's end, now, the n ids, the pending
// status, now. Prepared once per n, up to insertChunk.
func leaseSQL(n int) string {
	return `UPDATE webhook_deliveries SET lease_owner = ?, next_attempt_at = ?, updated_at = ?
		WHERE id IN (` + placeholders(n) + `) AND status = ? AND next_attempt_at <= ?
		RETURNING *`
}

// placeholders is n comma-separated placeholders.
func placeholders(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }

// scanDeliveries runs the prepared query inside tx and appends the
// deliveries it returns to dst.
func (s *Service) scanDeliveries(ctx context.Context, tx *sql.Tx, query string, args []any, dst []deliveryRow) ([]deliveryRow, error) {
	st, err := s.sdb.Stmt(ctx, query)
	if err != nil {
		return dst, err
	}
	rs, err := tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	if err != nil {
		return dst, err
	}
	var got []deliveryRow
	if err := s.db.ScanRows(ctx, rs, &got); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return dst, err
	}
	return append(dst, got...), nil
}

// moveOnTx moves a delivery on after a failed attempt, which its row holds
// from now on: due again on the schedule, or failed for good. A 410
// disables the endpoint.
func (s *Service) moveOnTx(ctx context.Context, tx bun.Tx, r *result, cur *deliveryRow, now time.Time) error {
	o := r.o
	q := tx.NewUpdate().Model((*deliveryRow)(nil)).
		Set("attempts = attempts + 1").Set("updated_at = ?", storage.Micros(now)).
		Set("lease_owner = ''").
		Set("last_attempt = ?", cur.Attempts).
		Set("last_started_at = ?", storage.Micros(r.started)).
		Set("last_latency_us = ?", o.latency.Microseconds()).
		Set("last_status_code = ?", o.status).
		Set("last_error = ?", o.err).
		Set("last_response_body = ?", o.body).
		Where("id = ?", cur.ID)
	switch {
	case o.status == http.StatusGone, cur.Attempts-cur.ScheduleStart >= s.cfg.Retry.Attempts():
		r.next = DeliveryFailed
		q = q.Set("status = ?", string(r.next)).Set("completed_at = ?", storage.Micros(now))
	default:
		r.next = DeliveryPending
		d := s.delay(cur.Attempts - cur.ScheduleStart)
		// A receiver's Retry-After postpones, never hastens, the retry.
		d = max(d, min(o.retryAfter, s.cfg.MaxRetryAfter))
		q = q.Set("next_attempt_at = ?", storage.Micros(now.Add(d)))
	}
	if _, err := q.Exec(ctx); err != nil {
		return err
	}
	if o.status == http.StatusGone {
		return disableTx(ctx, tx, cur.EndpointID, "endpoint answered 410 Gone", storage.Micros(now))
	}
	return nil
}

// logResult logs a recorded attempt.
func (s *Service) logResult(r *result) {
	o := r.o
	fields := []zap.Field{zap.String("delivery", r.c.row.ID), zap.String("event", r.c.row.EventID),
		zap.String("endpoint", r.c.row.EndpointID), zap.Int("attempt", r.attempt), zap.Int("status", o.status),
		zap.Duration("latency", o.latency), zap.String("outcome", string(r.next))}
	switch {
	case o.ok():
		s.log.Debug("webhook delivered", fields...)
	case o.status == http.StatusGone:
		s.log.Warn("webhook endpoint answered 410 Gone and was disabled", fields...)
	default:
		s.log.Warn("webhook attempt failed", append(fields, zap.String("error", o.err))...)
	}
}

// delay returns the wait before attempt n+1 (n attempts made), with jitter.
func (s *Service) delay(n int) time.Duration { return s.cfg.Retry.Backoff(n) }

// parseRetryAfter reads a Retry-After value: delay-seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		if n > int64(100*365*24*time.Hour/time.Second) {
			n = int64(100 * 365 * 24 * time.Hour / time.Second)
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// unwrapURLError drops the URL, which may carry credentials, from a client
// error.
func unwrapURLError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Op + ": " + ue.Err.Error()
	}
	return err.Error()
}

// cleanText makes b storable as text in any database: valid UTF-8, no NUL.
func cleanText(b []byte) string {
	s := string(b)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return strings.ReplaceAll(s, "\x00", "")
}

// pruneBatch bounds the deliveries one retention transaction deletes.
const pruneBatch = 1000

// Prune deletes, in batches, the finished deliveries (succeeded, failed or
// canceled) that last changed more than Config.Retention ago, with their
// attempts, and returns how many it deleted. Pending deliveries are never
// deleted. A running deliverer calls it every RetentionInterval.
func (s *Service) Prune(ctx context.Context) (int, error) {
	if s.cfg.Retention < 0 {
		return 0, nil
	}
	before := storage.Micros(s.now().Add(-s.cfg.Retention))
	finished := bun.List([]string{string(DeliverySucceeded), string(DeliveryFailed), string(DeliveryCanceled)})
	total := 0
	for {
		var n int64
		err := s.sdb.Write(ctx, func(ctx context.Context, tx bun.Tx) error {
			pick := tx.NewSelect().Model((*deliveryRow)(nil)).Column("id").
				Where("status IN (?) AND updated_at < ?", finished, before).OrderExpr("updated_at").Limit(pruneBatch)
			if _, err := tx.NewDelete().Model((*attemptRow)(nil)).Where("delivery_id IN (?)", pick).Exec(ctx); err != nil {
				return err
			}
			res, err := tx.NewDelete().Model((*deliveryRow)(nil)).Where("id IN (?)", pick).Exec(ctx)
			if err == nil {
				n, err = res.RowsAffected()
			}
			return err
		})
		total += int(n)
		if err != nil {
			return total, fmt.Errorf("webhook: prune: %w", err)
		}
		if n < pruneBatch || ctx.Err() != nil {
			return total, ctx.Err()
		}
	}
}
