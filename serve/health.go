package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/projections"
)

// HealthBudget bounds how long a health check waits for the stream: GET
// /healthz and /readyz answer within about it whatever the store does (a
// stream without a leader does not answer at all), saying what they could
// not learn, and well within 1 s.
const HealthBudget = 600 * time.Millisecond

// slowGrace: a stream that does not answer a health check within the
// budget but answered one less than slowGrace ago is reported slow
// (degraded, 200), not leaderless: a busy machine's blip. Past it, the
// stream is taken to have no leader (an election takes 4–7 s).
const slowGrace = 2 * time.Second

// healthMemo remembers, across health checks, when the stream last
// answered and the last status logged.
type healthMemo struct {
	mu       sync.Mutex
	lastOK   time.Time
	reported string
	// lastOutage is when a check last found the store not connected or
	// the stream without a leader (writeVerdict).
	lastOutage time.Time
}

// maxHealthSeqs bounds the quarantined sequences GET /healthz names.
const maxHealthSeqs = 20

// Health reports each part the service depends on (GET /healthz): the
// NATS connection and the stream (leader, replicas), and the projections
// (lag, a catch-up that keeps failing, quarantined messages). Status is ok;
// degraded (200) naming the impaired parts in Degraded; or unavailable
// (503) when the store cannot take writes (not connected, the stream has
// no leader, or appends keep failing: writeVerdict). It answers within
// [HealthBudget].
func (s *Service) Health(ctx context.Context) (*Health, int) {
	ctx, cancel := context.WithTimeout(ctx, HealthBudget)
	defer cancel()
	h := &Health{Status: "ok", Agents: s.Agents()}
	st := events.Status(ctx, s.cfg.Store)
	h.Store = &StoreHealth{Connected: st.Connected, Server: st.Server, Leader: st.Leader,
		Replicas: st.Replicas, Current: st.Current, Lagging: st.Lagging}
	s.health.mu.Lock()
	if st.Err == nil && st.Leader != "" {
		s.health.lastOK = time.Now()
	}
	answered := s.health.lastOK
	s.health.mu.Unlock()
	code := http.StatusOK
	switch {
	case !st.Connected:
		h.Status, h.Error = "unavailable", "event store unreachable"
		h.Degraded = append(h.Degraded, "store: not connected to NATS")
		code = http.StatusServiceUnavailable
	case errors.Is(st.Err, events.ErrStreamGone):
		// Deleted or replaced under this process: its engines are bound
		// to the stream it opened, and every turn would be refused until
		// a restart, so a load balancer must take it out.
		h.Status, h.Error = "unavailable", "the stream this process serves is gone: restart fledger on the current stream"
		h.Degraded = append(h.Degraded, "stream: "+strings.TrimPrefix(st.Err.Error(), "events: "))
		code = http.StatusServiceUnavailable
	case errors.Is(st.Err, context.DeadlineExceeded) && time.Since(answered) < slowGrace:
		h.Degraded = append(h.Degraded, fmt.Sprintf("stream: slow (stream info not answered within %v; last answered %v ago)",
			HealthBudget, time.Since(answered).Round(time.Millisecond)))
	case st.Err != nil || st.Leader == "":
		h.Status, h.Error = "unavailable", "the stream has no leader"
		what := "stream: no leader"
		if errors.Is(st.Err, context.DeadlineExceeded) {
			what += fmt.Sprintf(" (stream info not answered within %v: an election, or the stream's servers are down)", HealthBudget)
		} else if st.Err != nil {
			what += " (" + st.Err.Error() + ")"
		}
		h.Degraded = append(h.Degraded, what)
		code = http.StatusServiceUnavailable
	default:
		h.LastSeq = st.LastSeq
		if len(st.Lagging) > 0 {
			h.Degraded = append(h.Degraded, fmt.Sprintf("stream: %d of %d replicas current (%s)", st.Current, st.Replicas, strings.Join(st.Lagging, ", ")))
		}
	}
	if code != http.StatusOK {
		s.health.mu.Lock()
		s.health.lastOutage = time.Now()
		s.health.mu.Unlock()
	} else {
		code = s.writeHealth(h, time.Now())
	}
	if s.proj != nil {
		s.projectionHealth(ctx, h)
	}
	if code == http.StatusOK && len(h.Degraded) > 0 {
		h.Status = "degraded"
	}
	s.logHealth(h)
	return h, code
}

// writeFailRecent is how long the appends that were not stored count
// against the store's health: past it, without a failure since, the
// instance is ready again, so that one taken out of a load balancer
// (which then sends it nothing to learn from) is tried again.
const writeFailRecent = time.Minute

// writeFailSpan is how long appends must have kept failing (the first to
// the last not stored) before the store counts as not storing: the
// appends in flight during one outage all fail at once, after the store's
// retry time; a server that stopped storing fails the requests that come
// after them too.
const writeFailSpan = 10 * time.Second

// outageCovers is how far before the first failure an outage health saw
// (no connection, no leader) still explains it: an append fails after
// the store's retry time, which an election or a reconnect uses up.
const outageCovers = 30 * time.Second

// writeHealth adds to h what the store's own appends say (the stream may
// answer stream info while its server stores nothing: a full disk), with
// writeVerdict. It returns the status code.
func (s *Service) writeHealth(h *Health, now time.Time) int {
	s.health.mu.Lock()
	outage := s.health.lastOutage
	s.health.mu.Unlock()
	code, what := writeVerdict(events.WriteHealth(s.cfg.Store), outage, now)
	if what == "" {
		return code
	}
	h.Degraded = append(h.Degraded, what)
	if code != http.StatusOK {
		h.Status, h.Error = "unavailable", "the event store is not storing appends"
	}
	return code
}

// writeVerdict is what the store's appends say at now, outage being when
// health last saw the store not connected or the stream without a leader:
// nothing once the last failure is writeFailRecent old; degraded (200)
// while failures are recent; unavailable (503: /readyz takes the
// instance out of rotation) when they have gone on for writeFailSpan and
// no outage explains them. The text names the operation and the cause,
// never the subject (/healthz needs no token).
func writeVerdict(ws events.WriteStatus, outage, now time.Time) (int, string) {
	if ws.Failures == 0 || now.Sub(ws.LastFailure) >= writeFailRecent {
		return http.StatusOK, ""
	}
	ago := now.Sub(ws.LastFailure).Round(time.Second)
	if ws.Failures == 1 {
		return http.StatusOK, fmt.Sprintf("store: the last append was not stored (%v ago: %s)", ago, writeCause(ws.LastErr))
	}
	span := ws.LastFailure.Sub(ws.FailingSince)
	what := fmt.Sprintf("store: the last %d appends were not stored, over %v (last %v ago: %s)", ws.Failures, span.Round(time.Second), ago, writeCause(ws.LastErr))
	explained := !outage.IsZero() && outage.After(ws.FailingSince.Add(-outageCovers))
	if span < writeFailSpan || explained {
		return http.StatusOK, what
	}
	return http.StatusServiceUnavailable, what + "; a server that stopped storing (its disk full, say) does so until it restarts: see its log"
}

// writeCause is why an append was not stored, without its subject.
func writeCause(err error) string {
	var ue *events.UnavailableError
	if errors.As(err, &ue) && ue.Err != nil {
		err = ue.Err
	}
	if err == nil {
		return "no answer"
	}
	return userDetail(err)
}

// logHealth logs the health status when it changes (not on every poll),
// starting from ok: a first ok is not news.
func (s *Service) logHealth(h *Health) {
	s.health.mu.Lock()
	prev := s.health.reported
	if prev == "" {
		prev = "ok" // nothing is logged while the first status is ok
	}
	changed := h.Status != prev
	s.health.reported = h.Status
	s.health.mu.Unlock()
	switch {
	case !changed:
	case h.Status == "ok":
		s.cfg.Log.Info("health: ok again")
	default:
		s.cfg.Log.Warn("health: "+h.Status, "degraded", strings.Join(h.Degraded, "; "))
	}
}

// projectionHealth adds the projections' part to h.
func (s *Service) projectionHealth(ctx context.Context, h *Health) {
	h.Checkpoint = s.proj.checkpoint(ctx)
	if h.LastSeq > h.Checkpoint {
		h.Lag = h.LastSeq - h.Checkpoint
	}
	if err, since := s.proj.failing(); err != nil {
		h.Degraded = append(h.Degraded, fmt.Sprintf("projections: catch-up failing for %v (%s)", since.Round(time.Second), userDetail(err)))
	} else if h.Lag > 0 && s.proj.stalled(h.Lag) {
		h.Degraded = append(h.Degraded, fmt.Sprintf("projections: behind by %d messages and not advancing", h.Lag))
	}
	q, err := s.proj.db.Quarantined(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.cfg.Log.Warn("healthz: quarantined", "err", err)
		}
		return
	}
	if len(q) == 0 {
		return
	}
	h.Quarantined = len(q)
	var msgs, gaps []string
	for i, r := range q {
		if i < maxHealthSeqs {
			h.QuarantinedSeqs = append(h.QuarantinedSeqs, r.Seq)
		}
		switch {
		case r.Kind == projections.QuarantineMissing:
			gaps = append(gaps, events.GapText(r.Seq, r.LastSeq))
		case len(msgs) < maxHealthSeqs:
			msgs = append(msgs, fmt.Sprintf("seq %d (%s, %d bytes)", r.Seq, r.Subject, r.Size))
		}
	}
	var parts []string
	if n := len(q) - len(gaps); n > 0 {
		what := "stored messages are not fledger commits"
		if n == 1 {
			what = "stored message is not a fledger commit"
		}
		parts = append(parts, fmt.Sprintf("%d %s, quarantined: %s", n, what, strings.Join(msgs, ", ")))
	}
	if len(gaps) > 0 {
		parts = append(parts, "missing from the stream: "+strings.Join(gaps, "; "))
	}
	h.Detail = strings.Join(parts, "; ") + " (see `fledger events`)"
	if ack := s.cfg.QuarantineAckThrough; ack > 0 {
		h.QuarantineAckThrough = ack
		if !quarantinedAfter(q, ack) {
			h.Detail += fmt.Sprintf("; acknowledged through seq %d", ack)
			return
		}
	}
	h.Degraded = append(h.Degraded, "projections: "+h.Detail)
}

// quarantinedAfter reports whether a quarantined message, or a run of
// missing sequences, lies after seq (so it is not acknowledged).
func quarantinedAfter(q []projections.Quarantined, seq uint64) bool {
	for _, r := range q {
		if max(r.Seq, r.LastSeq) > seq {
			return true
		}
	}
	return false
}
