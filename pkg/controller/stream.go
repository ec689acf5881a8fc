package controller

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
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
	client    *tls.Config
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

// NewTLSStreamLayer accepts raft connections on l and dials peers with
// cert, trusting only ca. advertise is the address peers dial (nil: l's).
func NewTLSStreamLayer(l net.Listener, advertise net.Addr, cert tls.Certificate, ca *x509.CertPool) *TLSStreamLayer {
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
	return &TLSStreamLayer{ln: tls.NewListener(l, srv), advertise: advertise, client: cli}
}

// Accept waits for the next raft connection.
func (s *TLSStreamLayer) Accept() (net.Conn, error) { return s.ln.Accept() }

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
