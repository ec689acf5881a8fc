package server

import (
	"maps"
	"net/http"
	"sort"
	"sync"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
)

// Bounds of the anonymous failure summary.
const (
	// DefaultSummaryInterval is how often a replica summarises its failed
	// anonymous requests into one audit entry.
	DefaultSummaryInterval = 10 * time.Minute
	// MaxSummarySources bounds the sources counted one by one in an
	// interval; failures from further sources are counted together.
	MaxSummarySources = 1024
	// SummaryTopSources is how many sources a summary names.
	SummaryTopSources = 10
)

// failureReason names why an anonymous request to rt failed with status.
func failureReason(rt *route, status int) string {
	switch status {
	case http.StatusBadRequest:
		return apiv1.ReasonBadRequest
	case http.StatusUnauthorized:
		if rt != nil && rt.anonymous {
			return apiv1.ReasonJoinRefused
		}
		return apiv1.ReasonUnauthenticated
	case http.StatusRequestEntityTooLarge:
		return apiv1.ReasonTooLarge
	case http.StatusTooManyRequests:
		return apiv1.ReasonRateLimited
	}
	return apiv1.ReasonOther
}

// anonCounts are the failed anonymous requests of one interval.
type anonCounts struct {
	since   time.Time
	total   uint64
	reasons map[string]uint64
	sources map[string]uint64
	// other counts failures from sources past MaxSummarySources.
	other uint64
}

func (c *anonCounts) add(reason, source string, n uint64) {
	c.total += n
	c.reasons[reason] += n
	c.addSource(source, n)
}

// addSource attributes n failures to source, or to other past the bound.
func (c *anonCounts) addSource(source string, n uint64) {
	if _, ok := c.sources[source]; ok || len(c.sources) < MaxSummarySources {
		c.sources[source] += n
		return
	}
	c.other += n
}

// summary is the counts as an audit summary of replica's, until now.
func (c *anonCounts) summary(replica string, now time.Time) apiv1.AnonymousSummary {
	top := make([]apiv1.SourceCount, 0, len(c.sources))
	for src, n := range c.sources {
		top = append(top, apiv1.SourceCount{Source: src, Count: n})
	}
	sort.Slice(top, func(i, j int) bool {
		if top[i].Count != top[j].Count {
			return top[i].Count > top[j].Count
		}
		return top[i].Source < top[j].Source
	})
	if len(top) > SummaryTopSources {
		top = top[:SummaryTopSources]
	}
	return apiv1.AnonymousSummary{
		Replica: replica,
		Since:   c.since.UTC().Format(time.RFC3339),
		Until:   now.UTC().Format(time.RFC3339),
		Total:   c.total, Reasons: maps.Clone(c.reasons),
		TopSources: top, Sources: len(c.sources), OtherSources: c.other,
	}
}

// anonTracker collects the failed anonymous requests this replica answered
// since the last summary was committed.
type anonTracker struct {
	mu  sync.Mutex
	cur *anonCounts
}

func newAnonCounts(since time.Time) *anonCounts {
	return &anonCounts{since: since, reasons: map[string]uint64{}, sources: map[string]uint64{}}
}

// add counts one failure.
func (a *anonTracker) add(reason, source string, now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cur == nil {
		a.cur = newAnonCounts(now)
	}
	a.cur.add(reason, source, 1)
}

// take returns the counts so far and starts afresh; ok is false when there
// were none.
func (a *anonTracker) take() (*anonCounts, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.cur
	a.cur = nil
	return c, c != nil
}

// putBack returns counts whose summary could not be committed, to go into
// the next one.
func (a *anonTracker) putBack(c *anonCounts) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cur == nil {
		a.cur = c
		return
	}
	merged := newAnonCounts(c.since)
	if a.cur.since.Before(merged.since) {
		merged.since = a.cur.since
	}
	for _, from := range []*anonCounts{c, a.cur} {
		merged.total += from.total
		merged.other += from.other
		for reason, n := range from.reasons {
			merged.reasons[reason] += n
		}
		for src, n := range from.sources {
			merged.addSource(src, n)
		}
	}
	a.cur = merged
}

// anonymousFailed counts a failed request without a client certificate
// that a client sent to this replica. It is never written through raft:
// the counts reach the audit log as one summary per interval.
func (s *Server) anonymousFailed(source string, rt *route, status int) {
	reason := failureReason(rt, status)
	s.metrics.anonymousFailures.WithLabelValues(reason).Inc()
	s.anon.add(reason, source, s.now())
}
