package server

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/etcdsnap"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/secrets"
)

// Config configures a Server.
type Config struct {
	// Backend is the replicated state. Required.
	Backend Backend
	// CA is the controller CA: it signs node certificates at join and
	// people's certificates. Required.
	CA *pki.CA
	// Keyring seals Secret objects and opens secret NodeState files. Required.
	Keyring *secrets.Keyring
	// ForwardTLS is the client TLS config used to forward requests to the
	// leader: this replica's own certificate (role controller) and the CA.
	// Nil disables forwarding: followers answer 503 no-leader instead.
	ForwardTLS *tls.Config
	// Logger receives request errors; nil discards.
	Logger *slog.Logger
	// Now is the clock for token expiry, audit stamps and command stamps;
	// nil means time.Now.
	Now func() time.Time
	// MaxBody is the request body limit; 0 means DefaultMaxBody.
	MaxBody int64
	// Registry receives the server's metrics and is what /metrics serves;
	// nil means a new registry of the server's own.
	Registry *prometheus.Registry
	// Limits bound the API's connections and request reads; zero fields
	// take the defaults.
	Limits Limits
	// CertValidity is how long certificates issued for people are valid;
	// 0 means one year.
	CertValidity time.Duration
	// NodeCertValidity is how long node certificates (join, re-key, renew)
	// are valid; 0 means apiv1.DefaultNodeCertValidity. Agents renew at two
	// thirds of it.
	NodeCertValidity time.Duration
	// NodeCertGrace is how long after its expiry a node certificate may
	// still renew itself through POST /v1/nodes/{id}/renew, and do nothing
	// else: an agent whose machine was off past the validity recovers
	// without a join token. 0 means DefaultNodeCertGrace; NoNodeCertGrace
	// turns it off; otherwise MinNodeCertGrace to MaxNodeCertGrace.
	NodeCertGrace time.Duration
	// MaxRevocations bounds the revocation list; 0 means DefaultMaxRevocations.
	MaxRevocations int
	// Anonymous limits and summarises requests without a client certificate.
	Anonymous AnonymousConfig
	// AuditRetention bounds the audit log by age, entries and bytes.
	AuditRetention AuditRetention
	// EtcdSnapshots keeps the etcd snapshots this replica takes or imports
	// as sealed files outside raft; nil keeps them inside raft.
	EtcdSnapshots *etcdsnap.Files
}

// Server is the controller's HTTP API.
type Server struct {
	backend  Backend
	ca       *pki.CA
	keyring  *secrets.Keyring
	log      *slog.Logger
	now      func() time.Time
	maxBody  int64
	validity time.Duration
	// nodeValidity is the lifetime of node certificates.
	nodeValidity time.Duration
	// nodeGrace is how long an expired node certificate may renew itself
	// (0 or less: not at all).
	nodeGrace time.Duration
	// caPool is the CA the client certificates are checked against.
	caPool *x509.CertPool
	// certNow is the clock client certificates are checked with: the
	// system's, as Go's TLS stack uses, not Now.
	certNow func() time.Time
	// maxRevocations bounds the unexpired revocations kept.
	maxRevocations int
	forwarder      *http.Client
	metrics        *metrics
	mux            *http.ServeMux
	limits         Limits

	// limiter, anon and the summary fields deal with requests without a
	// client certificate; retention is the audit retention as stored.
	limiter         *sourceLimiter
	anon            anonTracker
	summaryInterval time.Duration
	summaryTicks    <-chan time.Time
	retention       []byte

	seenMu   sync.Mutex
	lastSeen map[string]time.Time

	// snapFiles are this replica's etcd snapshot files (nil: in raft).
	snapFiles *etcdsnap.Files
}

// New returns a Server for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Backend == nil || cfg.CA == nil || cfg.Keyring == nil {
		return nil, errors.New("new server: backend, ca and keyring are required")
	}
	s := &Server{
		backend:   cfg.Backend,
		ca:        cfg.CA,
		keyring:   cfg.Keyring,
		snapFiles: cfg.EtcdSnapshots,
		log:       cfg.Logger,
		now:       cfg.Now,
		maxBody:   cfg.MaxBody,
		validity:  cfg.CertValidity,
		limits:    cfg.Limits.withDefaults(),
		lastSeen:  map[string]time.Time{},

		nodeValidity:   cfg.NodeCertValidity,
		nodeGrace:      cfg.NodeCertGrace,
		caPool:         cfg.CA.Pool(),
		certNow:        time.Now,
		maxRevocations: cfg.MaxRevocations,
	}
	if err := CheckNodeCertGrace(s.nodeGrace); err != nil {
		return nil, fmt.Errorf("new server: %w", err)
	}
	if s.nodeGrace == 0 {
		s.nodeGrace = DefaultNodeCertGrace
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.maxBody == 0 {
		s.maxBody = DefaultMaxBody
	}
	if s.validity == 0 {
		s.validity = 365 * 24 * time.Hour
	}
	if s.nodeValidity == 0 {
		s.nodeValidity = apiv1.DefaultNodeCertValidity
	}
	if s.maxRevocations == 0 {
		s.maxRevocations = DefaultMaxRevocations
	}
	anon, err := cfg.Anonymous.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("new server: %w", err)
	}
	s.summaryInterval, s.summaryTicks = anon.SummaryInterval, anon.SummaryTicks
	if s.retention, err = cfg.AuditRetention.policy(); err != nil {
		return nil, fmt.Errorf("new server: %w", err)
	}
	if cfg.ForwardTLS != nil {
		s.forwarder = &http.Client{Transport: &http.Transport{
			TLSClientConfig:     cfg.ForwardTLS,
			TLSHandshakeTimeout: 10 * time.Second,
			IdleConnTimeout:     90 * time.Second,
			ForceAttemptHTTP2:   true,
		}}
	}
	reg := cfg.Registry
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	m, err := newMetrics(reg, s)
	if err != nil {
		return nil, fmt.Errorf("new server: %w", err)
	}
	s.metrics = m
	s.limiter = newSourceLimiter(anon.Rate, anon.Burst, anon.MaxSources, m.anonymousEvictions.Inc)
	s.mux = s.buildMux(reg)
	return s, nil
}

// Handler returns the API's HTTP handler.
func (s *Server) Handler() http.Handler { return s.mux }

// HTTPServer returns an http.Server for the handler with the API's limits:
// header and idle timeouts, and a body read deadline set per request (short
// for anonymous callers). The write timeout leaves room for the longest
// blocking query. Serve it on Listener's bounded listener.
func (s *Server) HTTPServer(tlsConfig *tls.Config) *http.Server {
	return &http.Server{
		Handler:           s.withBodyDeadline(s.mux),
		TLSConfig:         tlsConfig,
		ConnContext:       connContext,
		ReadHeaderTimeout: s.limits.ReadHeaderTimeout,
		ReadTimeout:       s.limits.BodyTimeout,
		WriteTimeout:      apiv1.MaxWait + time.Minute,
		IdleTimeout:       s.limits.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
}

// LastSeen returns when node id last sent a heartbeat to this replica
// (meaningful on the leader, where followers forward heartbeats).
func (s *Server) LastSeen(id string) (time.Time, bool) {
	s.seenMu.Lock()
	defer s.seenMu.Unlock()
	t, ok := s.lastSeen[id]
	return t, ok
}
