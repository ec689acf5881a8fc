package server

import (
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"kcore.dev/kcore/pkg/apiv1"
)

// metrics are the server's Prometheus collectors.
type metrics struct {
	requests      *prometheus.CounterVec
	latency       *prometheus.HistogramVec
	applyDuration prometheus.Histogram
	// anonymousFailures counts failed requests without a client
	// certificate by reason; anonymousEvictions the sources the limiter
	// forgot to make room.
	anonymousFailures  *prometheus.CounterVec
	anonymousEvictions prometheus.Counter
}

// raftStateCollector reports the replica's raft role as one gauge per state.
type raftStateCollector struct {
	s    *Server
	desc *prometheus.Desc
}

func (c *raftStateCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *raftStateCollector) Collect(ch chan<- prometheus.Metric) {
	cur := c.s.backend.RaftState()
	for _, st := range []string{apiv1.StateLeader, apiv1.StateFollower, apiv1.StateCandidate, apiv1.StateShutdown} {
		v := 0.0
		if st == cur {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, v, st)
	}
}

func newMetrics(reg *prometheus.Registry, s *Server) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kcore_http_requests_total",
			Help: "API requests by route and HTTP status code.",
		}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "kcore_http_request_duration_seconds",
			Help:    "API request latency by route and HTTP status code (blocking queries include their wait).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 12),
		}, []string{"route", "code"}),
		applyDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "kcore_raft_apply_duration_seconds",
			Help:    "Time from submitting a command to raft until it is applied on this replica.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}),
		anonymousFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kcore_anonymous_failures_total",
			Help: "Failed requests without a client certificate answered by this replica, by reason (never written through raft; summarised into the audit log).",
		}, []string{"reason"}),
		anonymousEvictions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kcore_anonymous_limiter_evictions_total",
			Help: "Sources the anonymous rate limiter forgot to make room for new ones.",
		}),
	}
	collectors := []prometheus.Collector{
		m.requests, m.latency, m.applyDuration, m.anonymousFailures, m.anonymousEvictions,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "kcore_anonymous_limiter_sources", Help: "Sources the anonymous rate limiter tracks.",
		}, func() float64 { return float64(s.limiter.tracked()) }),
		&raftStateCollector{s: s, desc: prometheus.NewDesc("kcore_raft_state",
			"1 for the replica's current raft state, 0 for the others.", []string{"state"}, nil)},
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "kcore_raft_last_index", Help: "Last index in this replica's raft log.",
		}, func() float64 { return float64(s.backend.LastIndex()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "kcore_raft_applied_index", Help: "Last index applied to this replica's state.",
		}, func() float64 { return float64(s.backend.State().LastIndex()) }),
	}
	for _, c := range collectors {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register metrics: %w", err)
		}
	}
	return m, nil
}

func (m *metrics) observe(route string, status int, d time.Duration) {
	code := strconv.Itoa(status)
	m.requests.WithLabelValues(route, code).Inc()
	m.latency.WithLabelValues(route, code).Observe(d.Seconds())
}
