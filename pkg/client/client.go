package client

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Defaults of Config's durations.
const (
	DefaultTimeout      = 30 * time.Second
	DefaultDialTimeout  = 5 * time.Second
	DefaultElectionWait = 15 * time.Second
)

// Config says how to reach an installation's controllers.
type Config struct {
	// Addresses are the controllers, as host:port or https://host:port.
	Addresses []string
	// CA is the controller CA certificate, PEM. Servers are verified against it only.
	CA []byte
	// Cert and Key are the client certificate and key, PEM. Join needs neither.
	Cert, Key []byte
	// GetClientCertificate, when set, supplies the client certificate on
	// every handshake instead of Cert and Key, so a renewed certificate is
	// used on the next connection without building a new client.
	GetClientCertificate func(*tls.CertificateRequestInfo) (*tls.Certificate, error)
	// Timeout bounds one request to one controller, not counting a blocking
	// query's wait (which is added to it). Zero means DefaultTimeout.
	Timeout time.Duration
	// DialTimeout bounds connecting to one controller. Zero means DefaultDialTimeout.
	DialTimeout time.Duration
	// ElectionWait is how long a request keeps retrying while every reachable
	// controller answers 503 no-leader. Zero means DefaultElectionWait;
	// negative means do not wait.
	ElectionWait time.Duration
	// Logger receives failover decisions at debug level; nil discards them.
	Logger *slog.Logger
}

// Client calls the controller API. It is safe for concurrent use.
type Client struct {
	addrs        []string
	http         *http.Client
	timeout      time.Duration
	electionWait time.Duration
	log          *slog.Logger

	mu        sync.Mutex
	preferred string
}

// New returns a client for cfg. It needs at least one address, the CA, and
// a client certificate and key.
func New(cfg Config) (*Client, error) {
	if (len(cfg.Cert) == 0 || len(cfg.Key) == 0) && cfg.GetClientCertificate == nil {
		return nil, errors.New("create client: a client certificate and key are required")
	}
	return newClient(cfg)
}

func newClient(cfg Config) (*Client, error) {
	addrs, err := NormalizeAddresses(cfg.Addresses)
	if err != nil {
		return nil, fmt.Errorf("create client: %w", err)
	}
	tlsCfg, err := tlsConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("create client: %w", err)
	}
	dialTimeout := orDefault(cfg.DialTimeout, DefaultDialTimeout)
	transport := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     tlsCfg,
		TLSHandshakeTimeout: dialTimeout,
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     90 * time.Second,
	}
	c := &Client{
		addrs:        addrs,
		http:         &http.Client{Transport: transport, CheckRedirect: noRedirects},
		timeout:      orDefault(cfg.Timeout, DefaultTimeout),
		electionWait: orDefault(cfg.ElectionWait, DefaultElectionWait),
		log:          cfg.Logger,
	}
	if c.electionWait < 0 {
		c.electionWait = 0
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// Addresses returns the controller addresses (host:port) the client knows.
func (c *Client) Addresses() []string {
	return append([]string(nil), c.addrs...)
}

// Close releases idle connections.
func (c *Client) Close() {
	c.http.CloseIdleConnections()
}

// CloseIdleConnections closes idle connections, so the next request
// handshakes again (with a renewed client certificate, for one).
func (c *Client) CloseIdleConnections() {
	c.http.CloseIdleConnections()
}

func tlsConfig(cfg Config) (*tls.Config, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(cfg.CA) {
		return nil, errors.New("no PEM certificate in the controller CA")
	}
	t := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if cfg.GetClientCertificate != nil {
		t.GetClientCertificate = cfg.GetClientCertificate
		return t, nil
	}
	if len(cfg.Cert) > 0 || len(cfg.Key) > 0 {
		pair, err := tls.X509KeyPair(cfg.Cert, cfg.Key)
		if err != nil {
			return nil, fmt.Errorf("load client certificate: %w", err)
		}
		t.Certificates = []tls.Certificate{pair}
	}
	return t, nil
}

// NormalizeAddresses turns https://host:port and host:port forms into
// host:port, dropping duplicates. It refuses an empty list, another scheme,
// a path or a missing port.
func NormalizeAddresses(in []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, a := range in {
		hp, err := normalizeAddress(a)
		if err != nil {
			return nil, err
		}
		if !seen[hp] {
			seen[hp] = true
			out = append(out, hp)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no controller address")
	}
	return out, nil
}

func normalizeAddress(a string) (string, error) {
	a = strings.TrimSpace(a)
	if strings.Contains(a, "://") {
		u, err := url.Parse(a)
		if err != nil {
			return "", fmt.Errorf("controller address %q: %w", a, err)
		}
		if u.Scheme != "https" {
			return "", fmt.Errorf("controller address %q: scheme must be https", a)
		}
		if u.Path != "" && u.Path != "/" || u.RawQuery != "" {
			return "", fmt.Errorf("controller address %q: must not have a path or query", a)
		}
		a = u.Host
	}
	host, port, err := net.SplitHostPort(a)
	if err != nil || port == "" || host == "" {
		return "", fmt.Errorf("controller address %q: want host:port or https://host:port", a)
	}
	return net.JoinHostPort(host, port), nil
}

func noRedirects(*http.Request, []*http.Request) error {
	return http.ErrUseLastResponse
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
