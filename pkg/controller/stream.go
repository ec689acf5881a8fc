package controller

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/hashicorp/raft"

	"kcore.dev/kcore/pkg/apiv1"
)

// errNotController refuses a raft peer whose certificate is not role
// controller.
var errNotController = errors.New("raft peer certificate is not role controller")

// TLSStreamLayer carries raft traffic over mutual TLS: both ends present a
// certificate from the controller CA with role (first Organization)
// controller.
type TLSStreamLayer struct {
	ln        net.Listener
	advertise net.Addr
	server    *tls.Config
	client    *tls.Config
	lim       RaftLimits
	log       *slog.Logger
}

// requireController checks the verified peer certificate's role.
func requireController(cs tls.ConnectionState) error {
	if len(cs.PeerCertificates) == 0 {
		return errNotController
	}
	org := cs.PeerCertificates[0].Subject.Organization
	if len(org) == 0 || org[0] != apiv1.RoleController {
		return fmt.Errorf("%w: %q", errNotController, cs.PeerCertificates[0].Subject.CommonName)
	}
	return nil
}

// NewTLSStreamLayer accepts raft connections on l within lim and dials
// peers with cert, trusting only ca. advertise is the address peers dial
// (nil: l's). Refused and cut connections are logged to log at debug level
// (nil discards).
func NewTLSStreamLayer(l net.Listener, advertise net.Addr, cert tls.Certificate, ca *x509.CertPool, lim RaftLimits, log *slog.Logger) *TLSStreamLayer {
	if advertise == nil {
		advertise = l.Addr()
	}
	srv := &tls.Config{
		MinVersion:       tls.VersionTLS13,
		Certificates:     []tls.Certificate{cert},
		ClientAuth:       tls.RequireAndVerifyClientCert,
		ClientCAs:        ca,
		VerifyConnection: requireController,
	}
	cli := &tls.Config{
		MinVersion:       tls.VersionTLS13,
		Certificates:     []tls.Certificate{cert},
		RootCAs:          ca,
		VerifyConnection: requireController,
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	lim = lim.withDefaults()
	return &TLSStreamLayer{
		ln: lim.listener(l, log), advertise: advertise, server: srv, client: cli, lim: lim, log: log,
	}
}

// Accept waits for the next raft connection within the limits. Its TLS
// handshake runs on first use, in the transport's goroutine for the
// connection, bounded by the handshake timeout.
func (s *TLSStreamLayer) Accept() (net.Conn, error) {
	c, err := s.ln.Accept()
	if err != nil {
		return nil, err
	}
	return &guardedConn{Conn: tls.Server(c, s.server), lim: s.lim, log: s.log}, nil
}

// Close stops accepting.
func (s *TLSStreamLayer) Close() error { return s.ln.Close() }

// Addr is the advertised raft address.
func (s *TLSStreamLayer) Addr() net.Addr { return s.advertise }

// Dial opens a TLS connection to a peer and completes the handshake, so a
// peer with the wrong certificate fails here rather than mid-RPC.
func (s *TLSStreamLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	host, _, err := net.SplitHostPort(string(address))
	if err != nil {
		return nil, fmt.Errorf("dial raft peer %s: %w", address, err)
	}
	cfg := s.client.Clone()
	cfg.ServerName = host
	d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: timeout}, Config: cfg}
	c, err := d.Dial("tcp", string(address))
	if err != nil {
		return nil, fmt.Errorf("dial raft peer %s: %w", address, err)
	}
	return c, nil
}
