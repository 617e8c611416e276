// Package metrics is the read side that folds the event stream into
// Prometheus metrics: provider attempts, fallback decisions and steps,
// turn outcomes (counters), profiles in cooldown and disabled at the
// current time (gauges, from the same [policy.EvolveProfile] the deciders
// use), the fold's own lag behind the stream, and the append latency of
// whoever appends (a histogram fed through [Metrics.ObserveAppend]).
//
// Labels are bounded by the config (agent, provider, model, auth profile,
// failover reason, decision, outcome): profiles are few, and no turn or
// session id is ever a label. Metric names, labels and units are listed in
// docs/exporters.md; [Names] lists them for tests of dashboards and alert
// rules.
package metrics

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// Namespace prefixes every metric name.
const Namespace = "fledger"

// MetricsProjection is the `projection` label value of the lag metrics for
// the fold this package does itself.
const MetricsProjection = "metrics"

// AppendBuckets are the append latency histogram's upper bounds, seconds:
// 50 µs to 1 s, dense around the design's 1 ms p99 budget.
var AppendBuckets = []float64{0.00005, 0.0001, 0.00025, 0.0005, 0.00075, 0.001, 0.0015, 0.0025, 0.005, 0.01, 0.025, 0.1, 1}

// ProviderCallBuckets are the provider-call latency histogram's upper
// bounds, seconds: 50 ms to 10 min (model calls stream for minutes).
var ProviderCallBuckets = []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600}

// Version is the fledger_build_info version label; the CLI sets it from
// its -ldflags version. Empty means the module version of the build (or
// "dev").
var Version = ""

// Metrics folds events into a Prometheus registry. Build it with [New];
// feed it with [Metrics.Apply] (or [Metrics.CatchUp] / [Metrics.Follow]
// on a store) and serve [Metrics.Handler]. Safe for concurrent use: one
// goroutine folds while scrapes read.
type Metrics struct {
	reg *prometheus.Registry
	now func() time.Time
	st  events.Store

	attempts      *prometheus.CounterVec
	decisions     *prometheus.CounterVec
	steps         *prometheus.CounterVec
	turns         *prometheus.CounterVec
	decodeErrors  prometheus.Counter
	appendLatency prometheus.Histogram
	callLatency   *prometheus.HistogramVec
	collectors    []prometheus.Collector // the fold's own (not process) collectors

	mu          sync.Mutex
	profiles    map[profileKey]policy.ProfileState
	applied     uint64    // stream sequence of the last event folded
	appliedAt   time.Time // its decision time
	projections map[string]func(context.Context) (uint64, error)
	// stalls tracks, per projection, the checkpoint seen at the last
	// scrape and when it last moved (for fledger_projection_stalled_seconds).
	stalls map[string]stall
	// profileFold folds the profile events into profiles.
	profileFold profileFold
}

type profileKey struct{ agent, id string }

// stall is a projection's checkpoint at the last scrape and the time it
// was first seen at that value.
type stall struct {
	seq   uint64
	since time.Time
}

// profileFold folds the profile events of every agent into the metrics'
// profile states through the policy's one dispatch (policy.FoldEvent);
// agent is that of the event being folded.
type profileFold struct {
	policy.Ignore
	agent  string
	states map[profileKey]policy.ProfileState
}

// FoldProfile folds a profile event with policy.EvolveProfile.
func (f *profileFold) FoldProfile(key string, p events.Payload) {
	k := profileKey{f.agent, key}
	f.states[k] = policy.EvolveProfile(f.states[k], p)
}

// Option configures [New].
type Option func(*Metrics)

// WithClock sets the clock the profile gauges and the lag in seconds are
// evaluated at (default time.Now). Tests and replays of virtual-time
// scenarios pass the scenario's time.
func WithClock(now func() time.Time) Option { return func(m *Metrics) { m.now = now } }

// WithStore names the store whose last sequence the lag metrics compare
// against. Without it the lag metrics are not exported.
func WithStore(st events.Store) Option { return func(m *Metrics) { m.st = st } }

// WithProjection adds a projection (e.g. the SQLite projections of `fledger
// serve`) whose checkpoint — its last folded stream sequence — is read at
// each scrape and exported as fledger_projection_lag_events{projection=
// name}. Needs [WithStore].
func WithProjection(name string, checkpoint func(context.Context) (uint64, error)) Option {
	return func(m *Metrics) { m.projections[name] = checkpoint }
}

// WithProcessMetrics adds the Go runtime and process collectors
// (go_*, process_*) to the registry.
func WithProcessMetrics() Option {
	return func(m *Metrics) {
		m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
}

// New returns an empty fold with its metrics registered on a fresh
// registry.
func New(opts ...Option) *Metrics {
	m := &Metrics{
		reg:         prometheus.NewRegistry(),
		now:         time.Now,
		profiles:    map[profileKey]policy.ProfileState{},
		projections: map[string]func(context.Context) (uint64, error){},
		stalls:      map[string]stall{},
	}
	m.profileFold.states = m.profiles
	m.attempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "attempts_total",
		Help: "Provider calls by agent, provider, model, auth profile (empty when the caller named none) and outcome (succeeded | failed); reason is the failover reason of a failed call, empty for a success.",
	}, []string{"agent", "provider", "model", "profile", "outcome", "reason"})
	m.decisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "fallback_decisions_total",
		Help: "model_fallback_decision records by agent, decision (candidate_failed | skip_candidate | probe_cooldown_candidate | candidate_succeeded), candidate provider and failover reason (empty when none).",
	}, []string{"agent", "decision", "provider", "reason"})
	m.steps = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "fallback_steps_total",
		Help: "Fallback steps (decisions with fallbackStep* fields) by agent and fallbackStepFinalOutcome (succeeded | next_fallback | chain_exhausted | continue | switched).",
	}, []string{"agent", "outcome"})
	m.turns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "turns_total",
		Help: "Closed turns by agent and outcome (succeeded | exhausted | stopped); reason is the failover reason of an exhausted or stopped turn, empty for a success.",
	}, []string{"agent", "outcome", "reason"})
	m.decodeErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Name: "decode_errors_total",
		Help: "Stored messages the metrics fold could not decode (skipped by the fold, never by exporters).",
	})
	m.appendLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "append_duration_seconds",
		Help:    "Time to decide and durably append one commit, seconds (fed by the process that appends; empty in `fledger export`).",
		Buckets: AppendBuckets,
	})
	m.callLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "provider_call_duration_seconds",
		Help:    "Provider-call latency reported with each outcome (latency_ms of AttemptSucceeded and AttemptFailed; calls reported without one are not observed), seconds, by agent, provider, model and outcome (succeeded | failed).",
		Buckets: ProviderCallBuckets,
	}, []string{"agent", "provider", "model", "outcome"})
	for _, o := range opts {
		o(m)
	}
	m.collectors = append(m.collectors, m.attempts, m.decisions, m.steps, m.turns, m.decodeErrors, m.appendLatency, m.callLatency, NewBuildInfoCollector(), stateCollector{m})
	m.reg.MustRegister(m.collectors...)
	return m
}

// Names returns the names of the metric families the fold exports
// (sorted; a histogram by its family name, without _bucket/_sum/_count),
// whether or not a series has been seen yet: what a dashboard or an alert
// rule may name.
func (m *Metrics) Names() []string { return FamilyNames(m.collectors...) }

// Registry returns the registry holding every metric, for a server that
// serves it alongside others.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus text (or OpenMetrics,
// when asked) exposition format, for mounting at /metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, EnableOpenMetrics: true})
}

// ObserveAppend records one append's latency (decide + durable append of
// one commit). The engine or `fledger serve` calls it; the fold does not.
func (m *Metrics) ObserveAppend(d time.Duration) { m.appendLatency.Observe(d.Seconds()) }

// Applied returns the stream sequence of the last event folded.
func (m *Metrics) Applied() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.applied
}

// Apply folds one event. Events must come in stream order, each once; an
// event of a commit older than the last one folded is ignored.
func (m *Metrics) Apply(ev events.Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ev.Seq != 0 && ev.Seq < m.applied {
		return
	}
	switch d := ev.Data.(type) {
	case events.AttemptFailed:
		m.attempts.WithLabelValues(ev.Agent, d.Provider, d.Model, d.ProfileID, "failed", d.Reason).Inc()
		m.observeCall(ev.Agent, d.Provider, d.Model, "failed", d.LatencyMs)
	case events.AttemptSucceeded:
		m.attempts.WithLabelValues(ev.Agent, d.Provider, d.Model, d.ProfileID, "succeeded", "").Inc()
		m.observeCall(ev.Agent, d.Provider, d.Model, "succeeded", d.LatencyMs)
	case events.FallbackStepped:
		m.decisions.WithLabelValues(ev.Agent, d.Decision, d.CandidateProvider, d.Reason).Inc()
		if d.FallbackStepFinalOutcome != "" {
			m.steps.WithLabelValues(ev.Agent, d.FallbackStepFinalOutcome).Inc()
		}
	case events.TurnSucceeded:
		m.turns.WithLabelValues(ev.Agent, "succeeded", "").Inc()
	case events.TurnExhausted:
		m.turns.WithLabelValues(ev.Agent, "exhausted", d.Reason).Inc()
	case events.TurnStopped:
		m.turns.WithLabelValues(ev.Agent, "stopped", d.Reason).Inc()
	case events.TurnSwitched:
		m.turns.WithLabelValues(ev.Agent, "switched", "").Inc()
	}
	m.profileFold.agent = ev.Agent
	policy.FoldEvent(&m.profileFold, &ev)
	if ev.Seq > m.applied {
		m.applied = ev.Seq
		m.appliedAt = ev.At
	}
}

// observeCall records a reported provider-call latency (0 = not reported).
func (m *Metrics) observeCall(agent, provider, model, outcome string, ms int64) {
	if ms > 0 {
		m.callLatency.WithLabelValues(agent, provider, model, outcome).Observe(float64(ms) / 1000)
	}
}

// CatchUp folds the stream from the event after the last folded one up to
// the stream's current end. A message that cannot be decoded is counted
// in fledger_decode_errors_total and skipped.
func (m *Metrics) CatchUp(ctx context.Context, st events.Store) error {
	return m.fold(st.Read(ctx, m.Applied()+1))
}

// Follow is CatchUp that goes on folding new commits as they are appended,
// until ctx is done (then it returns nil).
func (m *Metrics) Follow(ctx context.Context, st events.Store) error {
	err := m.fold(st.Watch(ctx, m.Applied()+1))
	if ctx.Err() != nil {
		return nil
	}
	return err
}

func (m *Metrics) fold(seq iter.Seq2[events.Event, error]) error {
	for ev, err := range seq {
		var de *events.DecodeError
		if errors.As(err, &de) {
			m.decodeErrors.Inc()
			continue
		}
		if err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
		m.Apply(ev)
	}
	return nil
}

// stalled returns how long the projection name has been behind without
// advancing, as seen by the scrapes: the clock restarts whenever a scrape
// finds it caught up or at a new checkpoint.
func (m *Metrics) stalled(name string, applied uint64, behind bool, now time.Time) float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	st, ok := m.stalls[name]
	if !ok || !behind || st.seq != applied {
		m.stalls[name] = stall{seq: applied, since: now}
		return 0
	}
	return max(now.Sub(st.since).Seconds(), 0)
}

// stateCollector exports the gauges computed at scrape time: profile
// health at m.now() and the lag behind the stream.
type stateCollector struct{ m *Metrics }

var (
	descCooldown = prometheus.NewDesc(Namespace+"_profiles_in_cooldown",
		"Auth profiles whose cooldown window is open now, by provider and cooldown reason.",
		[]string{"provider", "reason"}, nil)
	descDisabled = prometheus.NewDesc(Namespace+"_profiles_disabled",
		"Auth profiles disabled now, by provider and disable reason (billing | auth_permanent).",
		[]string{"provider", "reason"}, nil)
	descCooldownLeft = prometheus.NewDesc(Namespace+"_profile_cooldown_remaining_seconds",
		"Seconds until a profile's open cooldown window ends (only profiles in cooldown); model is the model the cooldown is scoped to, empty for all models.",
		[]string{"agent", "profile", "provider", "reason", "model"}, nil)
	descDisabledLeft = prometheus.NewDesc(Namespace+"_profile_disabled_remaining_seconds",
		"Seconds until a disabled profile is usable again (only disabled profiles).",
		[]string{"agent", "profile", "provider", "reason"}, nil)
	descProfiles = prometheus.NewDesc(Namespace+"_profiles",
		"Auth profiles with any recorded state, by provider.",
		[]string{"provider"}, nil)
	descLagEvents = prometheus.NewDesc(Namespace+"_projection_lag_events",
		"Stream messages (commits) appended but not yet folded by the projection: stream last sequence minus the projection's checkpoint.",
		[]string{"projection"}, nil)
	descLagSeconds = prometheus.NewDesc(Namespace+"_projection_lag_seconds",
		"When the projection is behind, seconds from the decision time of the newest event it folded to now; 0 when caught up.",
		[]string{"projection"}, nil)
	descApplied = prometheus.NewDesc(Namespace+"_projection_applied_sequence",
		"Stream sequence of the last message the projection folded.",
		[]string{"projection"}, nil)
	descStalled = prometheus.NewDesc(Namespace+"_projection_stalled_seconds",
		"Seconds the projection has been behind the stream without advancing (its checkpoint unchanged since a scrape at which it was caught up or had just moved); 0 when caught up or advancing. Needs no traffic: one unfolded commit is enough.",
		[]string{"projection"}, nil)
	descStreamLast = prometheus.NewDesc(Namespace+"_stream_last_sequence",
		"Last sequence of the event stream (what the projections' applied sequence is compared with).",
		nil, nil)
)

// Describe implements prometheus.Collector.
func (c stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descCooldown, descDisabled, descCooldownLeft, descDisabledLeft, descProfiles, descLagEvents, descLagSeconds, descApplied, descStalled, descStreamLast} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c stateCollector) Collect(ch chan<- prometheus.Metric) {
	m := c.m
	now := m.now()
	nowMs := now.UnixMilli()
	type pr struct{ provider, reason string }
	cooling, disabled, known := map[pr]int{}, map[pr]int{}, map[string]int{}

	m.mu.Lock()
	keys := make([]profileKey, 0, len(m.profiles))
	for k := range m.profiles {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].agent != keys[j].agent {
			return keys[i].agent < keys[j].agent
		}
		return keys[i].id < keys[j].id
	})
	for _, k := range keys {
		s := m.profiles[k]
		known[s.Provider]++
		if s.CooldownUntil > nowMs {
			cooling[pr{s.Provider, s.CooldownReason}]++
			ch <- prometheus.MustNewConstMetric(descCooldownLeft, prometheus.GaugeValue,
				float64(s.CooldownUntil-nowMs)/1000, k.agent, k.id, s.Provider, s.CooldownReason, s.CooldownModel)
		}
		if s.DisabledUntil > nowMs {
			disabled[pr{s.Provider, s.DisabledReason}]++
			ch <- prometheus.MustNewConstMetric(descDisabledLeft, prometheus.GaugeValue,
				float64(s.DisabledUntil-nowMs)/1000, k.agent, k.id, s.Provider, s.DisabledReason)
		}
	}
	applied, appliedAt := m.applied, m.appliedAt
	m.mu.Unlock()

	for k, n := range cooling {
		ch <- prometheus.MustNewConstMetric(descCooldown, prometheus.GaugeValue, float64(n), k.provider, k.reason)
	}
	for k, n := range disabled {
		ch <- prometheus.MustNewConstMetric(descDisabled, prometheus.GaugeValue, float64(n), k.provider, k.reason)
	}
	for p, n := range known {
		ch <- prometheus.MustNewConstMetric(descProfiles, prometheus.GaugeValue, float64(n), p)
	}

	if m.st == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	last, err := m.st.LastSeq(ctx, "")
	if err != nil {
		ch <- prometheus.NewInvalidMetric(descLagEvents, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(descStreamLast, prometheus.GaugeValue, float64(last))
	lag := func(name string, applied uint64) {
		ch <- prometheus.MustNewConstMetric(descApplied, prometheus.GaugeValue, float64(applied), name)
		behind := uint64(0)
		if last > applied {
			behind = last - applied
		}
		ch <- prometheus.MustNewConstMetric(descLagEvents, prometheus.GaugeValue, float64(behind), name)
		ch <- prometheus.MustNewConstMetric(descStalled, prometheus.GaugeValue, m.stalled(name, applied, behind > 0, now), name)
	}
	lag(MetricsProjection, applied)
	secs := 0.0
	if last > applied && !appliedAt.IsZero() {
		secs = max(now.Sub(appliedAt).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(descLagSeconds, prometheus.GaugeValue, secs, MetricsProjection)
	for name, checkpoint := range m.projections {
		seq, err := checkpoint(ctx)
		if err != nil {
			ch <- prometheus.NewInvalidMetric(descLagEvents, fmt.Errorf("projection %s: %w", name, err))
			continue
		}
		lag(name, seq)
	}
}
