package server

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
)

// Bounds of Config.NodeCertGrace, how long after its expiry a node
// certificate may still renew itself (and do nothing else).
const (
	// DefaultNodeCertGrace covers a machine switched off for a long
	// holiday with the 24h default validity.
	DefaultNodeCertGrace = 30 * 24 * time.Hour
	// MinNodeCertGrace and MaxNodeCertGrace bound a grace that is on.
	MinNodeCertGrace = time.Hour
	MaxNodeCertGrace = 90 * 24 * time.Hour
	// NoNodeCertGrace turns the grace off: an expired node certificate is
	// refused at the handshake like every other expired certificate.
	NoNodeCertGrace time.Duration = -1
)

// ErrBadNodeCertGrace is returned for a grace outside its bounds.
var ErrBadNodeCertGrace = errors.New("node certificate grace out of bounds")

// CheckNodeCertGrace refuses a grace that is neither 0 (the default),
// NoNodeCertGrace nor within [MinNodeCertGrace, MaxNodeCertGrace].
func CheckNodeCertGrace(d time.Duration) error {
	if d == 0 || d == NoNodeCertGrace || (d >= MinNodeCertGrace && d <= MaxNodeCertGrace) {
		return nil
	}
	return fmt.Errorf("check node certificate grace %s: want %s to %s, or off: %w", d, MinNodeCertGrace, MaxNodeCertGrace, ErrBadNodeCertGrace)
}

// ServerTLS returns the API's server TLS config: TLS 1.3, this replica's
// certificate, and a client certificate requested but not required (the
// routing table refuses requests without one, except POST /v1/join).
// verifyConnection checks a given one against ca and the replicated
// revocations on every handshake, resumed ones included.
func (s *Server) ServerTLS(cert tls.Certificate, ca *x509.CertPool) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{cert},
		// The chain is verified by verifyConnection, which lets an
		// expired node certificate in within the grace; ClientCAs only
		// names the acceptable issuers to the client.
		ClientAuth: tls.RequestClientCert,
		ClientCAs:  ca,
		VerifyConnection: func(cs tls.ConnectionState) error {
			return s.verifyConnection(cs, ca)
		},
	}
}

// verifyConnection refuses a TLS handshake whose client certificate does
// not chain to ca for client use, is expired (but for a node certificate
// within the grace), or is revoked: the caller gets no HTTP answer at all.
func (s *Server) verifyConnection(cs tls.ConnectionState, ca *x509.CertPool) error {
	if len(cs.PeerCertificates) == 0 {
		return nil
	}
	if _, err := verifyClientCert(cs.PeerCertificates, ca, s.certNow(), s.nodeGrace); err != nil {
		return err
	}
	if s.Revoked(serialText(cs.PeerCertificates[0].SerialNumber)) {
		return ErrRevoked
	}
	return nil
}

// verifyClientCert verifies a client's chain (leaf first) against roots
// for client use at now, as Go's TLS stack does. A leaf that fails only
// because it expired passes, reported expired, when it is a node
// certificate (first Organization "node") that expired at most grace ago
// (grace > 0) and its chain verifies at its last valid instant with every
// certificate above it still valid at now.
func verifyClientCert(certs []*x509.Certificate, roots *x509.CertPool, now time.Time, grace time.Duration) (expired bool, err error) {
	chain, err := verifyChain(certs, roots, now)
	if err != nil {
		return false, err
	}
	return judgeChain(chain, now, grace)
}

// verifyChain verifies the signatures and usages of a client's chain
// (leaf first) against roots, at now or, for a leaf that has expired, at
// its last valid instant, and returns the verified chain: the expensive
// part of verifyClientCert, done once per connection (connChecks).
func verifyChain(certs []*x509.Certificate, roots *x509.CertPool, now time.Time) ([]*x509.Certificate, error) {
	if len(certs) == 0 || roots == nil {
		return nil, errors.New("verify client certificate: no certificate or no CA")
	}
	leaf := certs[0]
	at := now
	if at.After(leaf.NotAfter) {
		at = leaf.NotAfter
	}
	opts := x509.VerifyOptions{
		Roots:         roots,
		Intermediates: x509.NewCertPool(),
		CurrentTime:   at,
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	for _, c := range certs[1:] {
		opts.Intermediates.AddCert(c)
	}
	chains, err := leaf.Verify(opts)
	if err != nil {
		return nil, fmt.Errorf("verify client certificate: %w", err)
	}
	return chains[0], nil
}

// judgeChain judges a verified chain against the clock: every certificate
// valid at now, but for an expired node leaf within grace, reported
// expired.
func judgeChain(chain []*x509.Certificate, now time.Time, grace time.Duration) (expired bool, err error) {
	leaf := chain[0]
	if now.Before(leaf.NotBefore) {
		return false, fmt.Errorf("verify client certificate: not valid before %s", leaf.NotBefore.Format(time.RFC3339))
	}
	if now.After(leaf.NotAfter) {
		if !withinGrace(role(leaf), leaf.NotAfter, now, grace) {
			return false, fmt.Errorf("verify client certificate: %w", x509.CertificateInvalidError{Cert: leaf, Reason: x509.Expired,
				Detail: fmt.Sprintf("current time %s is after %s", now.Format(time.RFC3339), leaf.NotAfter.Format(time.RFC3339))})
		}
		expired = true
	}
	for _, c := range chain[1:] {
		if now.Before(c.NotBefore) || now.After(c.NotAfter) {
			return false, fmt.Errorf("verify client certificate: %w", x509.CertificateInvalidError{Cert: c, Reason: x509.Expired,
				Detail: fmt.Sprintf("issuer %q not valid at %s", c.Subject.CommonName, now.Format(time.RFC3339))})
		}
	}
	return expired, nil
}

// withinGrace reports whether a certificate of role that expired at
// notAfter may still renew itself at now: a node certificate expired at
// most grace ago, grace on.
func withinGrace(role string, notAfter, now time.Time, grace time.Duration) bool {
	return grace > 0 && role == apiv1.RoleNode && !notAfter.IsZero() && !now.After(notAfter.Add(grace))
}

// role is a certificate's role: its first Organization.
func role(c *x509.Certificate) string {
	if len(c.Subject.Organization) == 0 {
		return ""
	}
	return c.Subject.Organization[0]
}

// ClientTLS returns a client TLS config presenting cert and trusting only ca.
func ClientTLS(cert tls.Certificate, ca *x509.CertPool) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{cert},
		RootCAs:      ca,
	}
}

// expiredRefusal refuses, with 401, a caller whose certificate expired,
// unless the route lets an expired node in (renew), the caller is that
// node (role node, its own id) and its certificate expired at most the
// grace ago by this replica's clock. Whether the certificate is still the
// node's current one is the handler's check (renewNodeCert).
func (s *Server) expiredRefusal(c *call) error {
	id := c.id
	if id == nil || !id.Expired {
		return nil
	}
	if c.rt.expiredNode && id.Role == apiv1.RoleNode && c.r.PathValue("id") == id.Subject && withinGrace(id.Role, id.NotAfter, s.certNow(), s.nodeGrace) {
		return nil
	}
	at := "at an unknown time"
	if !id.NotAfter.IsZero() {
		at = "at " + id.NotAfter.UTC().Format(time.RFC3339)
	}
	node := "{id}"
	if id.Role == apiv1.RoleNode {
		node = id.Subject
	}
	return newError(apiv1.CodeUnauthenticated, "the client certificate expired %s; a node renews it with POST %s within %s of its expiry, and may do nothing else with it", at, apiv1.NodePath(node, "renew"), graceText(s.nodeGrace))
}

// graceText names the grace in messages.
func graceText(grace time.Duration) string {
	if grace <= 0 {
		return "a grace that is off here (--node-cert-grace 0)"
	}
	return "the grace (--node-cert-grace " + grace.String() + ")"
}
