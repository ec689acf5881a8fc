package agent

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// probeServer is a TLS server on loopback that counts requests and new
// connections; /readyz answers 200 while healthy, anything else 503.
type probeServer struct {
	*httptest.Server
	requests, conns atomic.Int32
	healthy         atomic.Bool
}

func newProbeServer(t *testing.T) *probeServer {
	s := &probeServer{}
	s.healthy.Store(true)
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		if r.URL.Path != "/readyz" || !s.healthy.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		w.Write([]byte("ok"))
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestProberAnswers: 2xx is healthy, anything else is not; the loopback
// server's self-signed certificate is accepted.
func TestProberAnswers(t *testing.T) {
	srv := newProbeServer(t)
	var p Prober
	ctx := context.Background()
	if err := p.Probe(ctx, srv.URL+"/readyz"); err != nil {
		t.Fatalf("healthy loopback server: %v", err)
	}
	if err := p.Probe(ctx, srv.URL+"/livez"); err == nil {
		t.Fatal("503 accepted")
	}
	if err := p.Probe(ctx, "https://127.0.0.1:1/readyz"); err == nil {
		t.Fatal("nothing listening, accepted")
	}
}

// TestProberReusesAnswersAndConnections: probes of one URL within
// ProbeInterval get the last answer without a request; later ones ask
// again over the same connection, and see a change of health.
func TestProberReusesAnswersAndConnections(t *testing.T) {
	srv := newProbeServer(t)
	clk := &fakeClock{t: time.Unix(1000, 0)}
	p := Prober{now: clk.now}
	ctx := context.Background()
	url := srv.URL + "/readyz"
	for i := range 50 {
		if err := p.Probe(ctx, url); err != nil {
			t.Fatalf("probe %d: %v", i, err)
		}
		clk.add(ProbeInterval / 10)
	}
	// 50 probes over 5 intervals: 5 requests.
	if got := srv.requests.Load(); got != 5 {
		t.Fatalf("50 probes over 5 intervals made %d requests, want 5", got)
	}
	if got := srv.conns.Load(); got != 1 {
		t.Fatalf("5 requests used %d connections, want 1", got)
	}
	if err := p.Probe(ctx, url); err != nil {
		t.Fatal(err)
	}
	srv.healthy.Store(false)
	if err := p.Probe(ctx, url); err != nil {
		t.Fatalf("within the interval the last answer is reused, got %v", err)
	}
	clk.add(ProbeInterval)
	if err := p.Probe(ctx, url); err == nil {
		t.Fatal("unhealthy server accepted after the interval")
	}
}

// TestProberDropsCancelledAnswers: a probe cut short by its caller's
// context is not the unit's answer and is not reused.
func TestProberDropsCancelledAnswers(t *testing.T) {
	srv := newProbeServer(t)
	var p Prober
	url := srv.URL + "/readyz"
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Probe(ctx, url); err == nil {
		t.Fatal("cancelled probe succeeded")
	}
	if err := p.Probe(context.Background(), url); err != nil {
		t.Fatalf("the cancelled probe's failure was reused: %v", err)
	}
}

// TestProberTimeout: a server that never answers fails the probe after
// ProbeTimeout, not never. The handler ignores the request's context: one
// that returned when the probe gave up answered 200 at that instant, and
// once that answer won the race with the probe's own timeout.
func TestProberTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		<-release
	}))
	defer srv.Close()
	defer close(release)
	var p Prober
	ctx, cancel := context.WithTimeout(context.Background(), 4*ProbeTimeout)
	defer cancel()
	if err := p.Probe(ctx, srv.URL+"/readyz"); err == nil || ctx.Err() != nil {
		t.Fatalf("hanging server: err %v, caller's context %v (want the probe's own timeout)", err, ctx.Err())
	}
}

// TestProberKeepsOnlyRecentAnswers: answers too old to reuse are dropped
// when another is stored, so URLs no longer probed (a unit removed, a port
// changed) do not accumulate.
func TestProberKeepsOnlyRecentAnswers(t *testing.T) {
	srv := newProbeServer(t)
	clk := &fakeClock{t: time.Unix(1000, 0)}
	p := Prober{now: clk.now}
	ctx := context.Background()
	p.Probe(ctx, srv.URL+"/readyz")
	p.Probe(ctx, srv.URL+"/livez")
	clk.add(ProbeInterval)
	p.Probe(ctx, srv.URL+"/healthz")
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.last) != 1 {
		t.Fatalf("kept answers for %d URLs after the interval, want 1: %v", len(p.last), p.last)
	}
}
