package server

import (
	"net"
	"net/http"
	"time"

	"kcore.dev/kcore/pkg/netlimit"
)

// Defaults of Limits.
const (
	// DefaultMaxConns bounds the API connections held at once.
	DefaultMaxConns = 1024
	// DefaultMaxConnsPerSource bounds the API connections held at once from
	// one source IP (a NAT may put many kctl users and agents behind one).
	DefaultMaxConnsPerSource = 128
	// DefaultReadHeaderTimeout bounds the TLS handshake and reading a
	// request's headers.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultIdleTimeout closes a keep-alive connection idle this long.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultBodyTimeout bounds reading a request body from a caller with a
	// verified client certificate (a snapshot restore is the largest).
	DefaultBodyTimeout = 5 * time.Minute
	// DefaultAnonymousBodyTimeout bounds reading a request body from a
	// caller without one: a join request is a few hundred bytes.
	DefaultAnonymousBodyTimeout = 10 * time.Second
)

// Limits bound the API's connections and request reads. Zero fields take
// the Default values.
type Limits struct {
	// MaxConns and MaxConnsPerSource bound the connections held at once, in
	// total and per source IP; past them a new connection is closed as soon
	// as it is accepted (see Server.Listener).
	MaxConns          int
	MaxConnsPerSource int
	// ReadHeaderTimeout bounds the TLS handshake and the request headers.
	ReadHeaderTimeout time.Duration
	// IdleTimeout closes idle keep-alive connections.
	IdleTimeout time.Duration
	// BodyTimeout bounds reading the body of an authenticated request,
	// counted from when its handler starts.
	BodyTimeout time.Duration
	// AnonymousBodyTimeout bounds reading the body of a request without a
	// verified client certificate.
	AnonymousBodyTimeout time.Duration
}

func (l Limits) withDefaults() Limits {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	if l.MaxConns <= 0 {
		l.MaxConns = DefaultMaxConns
	}
	if l.MaxConnsPerSource <= 0 {
		l.MaxConnsPerSource = DefaultMaxConnsPerSource
	}
	def(&l.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	def(&l.IdleTimeout, DefaultIdleTimeout)
	def(&l.BodyTimeout, DefaultBodyTimeout)
	def(&l.AnonymousBodyTimeout, DefaultAnonymousBodyTimeout)
	return l
}

// Limits returns the server's limits, defaults filled in.
func (s *Server) Limits() Limits { return s.limits }

// Listener bounds ln by the connection caps of the server's Limits; serve
// the API on what it returns.
func (s *Server) Listener(ln net.Listener) net.Listener {
	return netlimit.Wrap(ln, netlimit.Limits{MaxConns: s.limits.MaxConns, MaxConnsPerSource: s.limits.MaxConnsPerSource},
		s.log.With("listener", "api"))
}

// withBodyDeadline sets each request's read deadline before its handler
// reads the body: short for anonymous callers, so a slow body from someone
// without a certificate cannot hold a connection for long.
func (s *Server) withBodyDeadline(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := s.limits.BodyTimeout
		if r.TLS == nil || (len(r.TLS.VerifiedChains) == 0 && len(r.TLS.PeerCertificates) == 0) {
			d = s.limits.AnonymousBodyTimeout
		}
		if err := http.NewResponseController(w).SetReadDeadline(time.Now().Add(d)); err != nil {
			s.log.Debug("set request read deadline", "err", err)
		}
		h.ServeHTTP(w, r)
	})
}
