package server

import (
	"container/list"
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
)

// Defaults of AnonymousConfig's limiter.
const (
	// DefaultAnonymousRate is how many anonymous requests per second one
	// source may send once its burst is spent.
	DefaultAnonymousRate = 1.0
	// DefaultAnonymousBurst is how many anonymous requests one source may
	// send at once: enough for a rack of nodes joining from behind one
	// address.
	DefaultAnonymousBurst = 20
	// DefaultAnonymousSources bounds the sources the limiter tracks.
	DefaultAnonymousSources = 4096
)

// sourceUnknown is the source of a request whose remote address does not
// parse (never the case for TCP).
const sourceUnknown = "unknown"

// sourceOf is the rate-limit and summary key of a request: its IPv4
// address, or the /64 of its IPv6 address (one host controls a whole /64).
func sourceOf(r *http.Request) string {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return sourceUnknown
	}
	a := ap.Addr().Unmap()
	if a.Is4() {
		return a.String()
	}
	p, err := a.Prefix(64)
	if err != nil {
		return sourceUnknown
	}
	return p.String()
}

// bucket is one source's token bucket.
type bucket struct {
	source string
	tokens float64
	last   time.Time
}

// sourceLimiter is a token bucket per source, for requests without a
// client certificate. It tracks at most max sources: a new source takes
// the place of the one seen least recently, so no number of sources can
// grow it (a forgotten source starts again with a full burst).
type sourceLimiter struct {
	rate  float64
	burst float64
	max   int
	// evicted is called when a source is forgotten to make room.
	evicted func()

	mu    sync.Mutex
	order *list.List // of *bucket, most recently seen first
	bySrc map[string]*list.Element
}

func newSourceLimiter(rate float64, burst, max int, evicted func()) *sourceLimiter {
	return &sourceLimiter{
		rate: rate, burst: float64(burst), max: max, evicted: evicted,
		order: list.New(), bySrc: map[string]*list.Element{},
	}
}

// take spends one of source's tokens at now. When it has none, ok is
// false and wait says how long until it has one.
func (l *sourceLimiter) take(source string, now time.Time) (wait time.Duration, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b *bucket
	if el, found := l.bySrc[source]; found {
		b = el.Value.(*bucket)
		l.order.MoveToFront(el)
		if d := now.Sub(b.last); d > 0 {
			b.tokens = math.Min(l.burst, b.tokens+d.Seconds()*l.rate)
			b.last = now
		}
	} else {
		if l.order.Len() >= l.max {
			oldest := l.order.Back()
			l.order.Remove(oldest)
			delete(l.bySrc, oldest.Value.(*bucket).source)
			if l.evicted != nil {
				l.evicted()
			}
		}
		b = &bucket{source: source, tokens: l.burst, last: now}
		l.bySrc[source] = l.order.PushFront(b)
	}
	if b.tokens >= 1 {
		b.tokens--
		return 0, true
	}
	return time.Duration((1 - b.tokens) / l.rate * float64(time.Second)), false
}

// tracked is how many sources the limiter holds.
func (l *sourceLimiter) tracked() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.order.Len()
}

// retryAfter is the Retry-After value for wait: whole seconds, at least 1.
func retryAfter(wait time.Duration) string {
	secs := int64(math.Ceil(wait.Seconds()))
	if secs < 1 {
		secs = 1
	}
	return strconv.FormatInt(secs, 10)
}

// admitAnonymous applies the per-source limit to a request without a
// client certificate that a client sent to this replica. Over the limit it
// answers 429 with Retry-After, counts the failure and returns false.
func (s *Server) admitAnonymous(w http.ResponseWriter, r *http.Request, rt *route) bool {
	src := sourceOf(r)
	wait, ok := s.limiter.take(src, s.now())
	if ok {
		return true
	}
	w.Header().Set("Retry-After", retryAfter(wait))
	writeError(w, newError(apiv1.CodeRateLimited, "too many requests without a client certificate from %s: retry in %s", src, retryAfter(wait)+"s"))
	s.anonymousFailed(src, rt, http.StatusTooManyRequests)
	return false
}
