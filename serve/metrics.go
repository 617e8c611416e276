package serve

import (
	"context"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/fledger/fledger/events"
	pmetrics "github.com/fledger/fledger/projections/metrics"
)

// RequestBuckets are the upper bounds, seconds, of the HTTP and micro
// request duration histograms.
var RequestBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1, 5}

// metrics is the service's own Prometheus registry: HTTP and NATS micro
// requests by route / endpoint and status, their durations, and the
// engines' commits and conflicts by agent. [Config.Metrics] (the
// projections/metrics fold in `fledger serve`, which also exports the
// projections' lag and fledger_build_info) is gathered with it. Labels
// are bounded: route patterns, micro endpoint names, status codes and the
// served agents.
type metrics struct {
	reg        *prometheus.Registry
	requests   *prometheus.CounterVec
	latency    *prometheus.HistogramVec
	micro      *prometheus.CounterVec
	microTime  *prometheus.HistogramVec
	collectors []prometheus.Collector
	handler    http.Handler
}

// engineCollector exports the engines' counters and state sizes by agent.
type engineCollector struct{ s *Service }

var (
	descCommits = prometheus.NewDesc("fledger_engine_commits_total",
		"Decisions appended by this server's engines, by agent.", []string{"agent"}, nil)
	descConflicts = prometheus.NewDesc("fledger_engine_conflicts_total",
		"Appends refused because another writer appended to the guarded subject first (each re-decided), by agent.", []string{"agent"}, nil)
)

// The engines' state, by agent: what an engine's memory grows with
// (docs/operations.md "Memory that grows with sessions").
var (
	descSessions = prometheus.NewDesc("fledger_engine_sessions",
		"Sessions this server's engine holds in memory, by agent: every session with an event or a turn, until session maintenance prunes it (serve --session-prune-after, fledger sessions cleanup), about 585 B of heap each.", []string{"agent"}, nil)
	descPruned = prometheus.NewDesc("fledger_engine_sessions_pruned_total",
		"Sessions session maintenance pruned (SessionPruned, appended by any instance), by agent: the stream's total up to the engine's position (kept in its snapshot).", []string{"agent"}, nil)
	descOpenTurns = prometheus.NewDesc("fledger_engine_open_turns",
		"Turns begun and not finished that this server's engine holds, by agent (a gateway that crashed mid-turn leaves one for good, about 2 KB each).", []string{"agent"}, nil)
	descFinishedTurns = prometheus.NewDesc("fledger_engine_finished_turns",
		"Finished turns this server's engine keeps in memory, by agent (at most --finished-turns; older ones are read back from the stream).", []string{"agent"}, nil)
	descSubjects = prometheus.NewDesc("fledger_engine_subject_sequences",
		"Stream subjects whose last sequence this server's engine holds as the guard of its next append, by agent.", []string{"agent"}, nil)
)

func (c engineCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descCommits, descConflicts, descSessions, descPruned, descOpenTurns, descFinishedTurns, descSubjects} {
		ch <- d
	}
}

func (c engineCollector) Collect(ch chan<- prometheus.Metric) {
	agents := make([]string, 0, len(c.s.engines))
	for a := range c.s.engines {
		agents = append(agents, a)
	}
	sort.Strings(agents)
	for _, a := range agents {
		st := c.s.engines[a].Stats()
		ch <- prometheus.MustNewConstMetric(descCommits, prometheus.CounterValue, float64(st.Commits), a)
		ch <- prometheus.MustNewConstMetric(descConflicts, prometheus.CounterValue, float64(st.Conflicts), a)
		h := c.s.engines[a].Held()
		ch <- prometheus.MustNewConstMetric(descSessions, prometheus.GaugeValue, float64(h.Sessions), a)
		ch <- prometheus.MustNewConstMetric(descPruned, prometheus.CounterValue, float64(h.Pruned), a)
		ch <- prometheus.MustNewConstMetric(descOpenTurns, prometheus.GaugeValue, float64(h.OpenTurns), a)
		ch <- prometheus.MustNewConstMetric(descFinishedTurns, prometheus.GaugeValue, float64(h.FinishedTurns), a)
		ch <- prometheus.MustNewConstMetric(descSubjects, prometheus.GaugeValue, float64(h.Subjects), a)
	}
}

func newMetrics(s *Service) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fledger_serve_requests_total",
		Help: "HTTP requests answered, by route pattern (\"unmatched\" for none) and HTTP status code."}, []string{"route", "code"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "fledger_serve_request_duration_seconds",
		Help: "HTTP request duration by route pattern, seconds.", Buckets: RequestBuckets},
		[]string{"route"})
	m.micro = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fledger_serve_micro_requests_total",
		Help: "NATS micro requests answered, by endpoint (e.g. turns.begin) and code (the HTTP status an error carries in Nats-Service-Error-Code; 200 for an answer)."}, []string{"endpoint", "code"})
	m.microTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "fledger_serve_micro_request_duration_seconds",
		Help: "NATS micro request duration by endpoint, seconds.", Buckets: RequestBuckets},
		[]string{"endpoint"})
	quarantined := prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fledger_serve_quarantined_messages_total",
		Help: "Stored messages the projections quarantined because they are not fledger commits, plus runs of sequences missing from the stream (GET /healthz names them)."}, func() float64 {
		if s.proj == nil {
			return 0
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		q, _ := s.proj.db.Quarantined(ctx)
		return float64(len(q))
	})
	appendFailures := prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fledger_store_append_failures_total",
		Help: "Appends that failed for the event store's whole retry time (not confirmed, or the store unavailable); conflicts, bad input and appends the caller gave up on are not counted (GET /healthz reports them while they last)."}, func() float64 {
		return float64(events.WriteHealth(s.cfg.Store).Total)
	})
	readStalls := prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fledger_store_read_stalls_total",
		Help: "Ordered reads whose consumer stopped delivering (none within 2 s, or within the store's timeout later) and that went on with direct gets; each waited that long first (a replica or the meta leader slow to answer)."}, func() float64 {
		return float64(events.ReadStalls(s.cfg.Store))
	})
	atomicBatches := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fledger_store_atomic_batches",
		Help: "1 when group commit sends concurrent appends as atomic batches, 0 when it pipelines them or does not group them (--atomic-batches; the store's log says why)."}, func() float64 {
		if events.GroupCommitStats(s.cfg.Store).AtomicBatches {
			return 1
		}
		return 0
	})
	m.collectors = []prometheus.Collector{m.requests, m.latency, m.micro, m.microTime, engineCollector{s}, quarantined, appendFailures, readStalls, atomicBatches}
	m.reg.MustRegister(m.collectors...)
	var g prometheus.Gatherer = m.reg
	if s.cfg.Metrics != nil {
		g = prometheus.Gatherers{s.cfg.Metrics, m.reg}
	} else {
		m.reg.MustRegister(pmetrics.NewBuildInfoCollector(), collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	// A collector that cannot answer (the stream unreachable in an
	// outage) leaves its series out; the others are served, instead of
	// a 500 that loses every series of the instance when they matter.
	m.handler = promhttp.HandlerFor(g, promhttp.HandlerOpts{EnableOpenMetrics: true, ErrorHandling: promhttp.ContinueOnError})
	return m
}

// MetricNames returns the names of the metric families the service itself
// exports (not those of [Config.Metrics]), whether or not a series has
// been seen yet.
func (s *Service) MetricNames() []string { return pmetrics.FamilyNames(s.metrics.collectors...) }

func (m *metrics) observe(route string, code int, d time.Duration) {
	m.requests.WithLabelValues(route, strconv.Itoa(code)).Inc()
	m.latency.WithLabelValues(route).Observe(d.Seconds())
}

func (m *metrics) observeMicro(endpoint, code string, d time.Duration) {
	m.micro.WithLabelValues(endpoint, code).Inc()
	m.microTime.WithLabelValues(endpoint).Observe(d.Seconds())
}
