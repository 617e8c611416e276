package serve

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics is the service's own Prometheus registry: requests by route
// and status, their latency, the engines' commits and conflicts, and the
// projection lag (the serve_ lag gauge is named fledger_serve_projection_lag
// so it never collides with the exporters' lag metrics). [Config.Metrics]
// is gathered with it.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	handler  http.Handler
}

func newMetrics(s *Service) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fledger_serve_requests_total",
		Help: "Requests answered, by route pattern and HTTP status."}, []string{"route", "code"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "fledger_serve_request_seconds",
		Help: "Request latency by route pattern.", Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1, 5}},
		[]string{"route"})
	commits := prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fledger_engine_commits_total",
		Help: "Decisions appended by this server's engines."}, func() float64 {
		var n uint64
		for _, e := range s.engines {
			n += e.Stats().Commits
		}
		return float64(n)
	})
	conflicts := prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fledger_engine_conflicts_total",
		Help: "Appends refused because another writer appended to the guarded subject first (each re-decided)."}, func() float64 {
		var n uint64
		for _, e := range s.engines {
			n += e.Stats().Conflicts
		}
		return float64(n)
	})
	lag := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fledger_serve_projection_lag",
		Help: "Stream messages not yet folded into the projections."}, func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		h, _ := s.Health(ctx)
		return float64(h.Lag)
	})
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
	m.reg.MustRegister(m.requests, m.latency, commits, conflicts, lag, quarantined)
	var g prometheus.Gatherer = m.reg
	if s.cfg.Metrics != nil {
		g = prometheus.Gatherers{s.cfg.Metrics, m.reg}
	} else {
		m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	m.handler = promhttp.HandlerFor(g, promhttp.HandlerOpts{})
	return m
}

func (m *metrics) observe(route string, code int, d time.Duration) {
	m.requests.WithLabelValues(route, strconv.Itoa(code)).Inc()
	m.latency.WithLabelValues(route).Observe(d.Seconds())
}
