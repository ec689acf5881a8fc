package server

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"net"
	"net/http"
	"sync"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
)

// Headers a follower sets when it forwards a request to the leader, naming
// the original caller. The leader trusts them only from a peer whose own
// certificate has role controller.
const (
	headerForwardSubject = "X-Kcore-Forwarded-Subject"
	headerForwardRole    = "X-Kcore-Forwarded-Role"
	headerForwardSerial  = "X-Kcore-Forwarded-Serial"
	// headerForwardNotAfter is the caller's certificate's expiry (RFC
	// 3339): the leader judges by its own clock whether it expired.
	headerForwardNotAfter = "X-Kcore-Forwarded-Not-After"
	// headerForwardExpiredRole replaces headerForwardRole for a caller
	// whose certificate expired: a leader that does not know it sees an
	// anonymous caller, and one that does an expired identity, so the
	// mark cannot be dropped, or ignored by an older leader, to gain
	// access.
	headerForwardExpiredRole = "X-Kcore-Forwarded-Expired-Role"
)

// Identity is who made a request.
type Identity struct {
	// Subject is the certificate's CommonName.
	Subject string
	// Role is the certificate's first Organization.
	Role string
	// Via is the controller replica that forwarded the request, if any.
	Via string
	// Serial is the certificate's serial (lowercase hex), checked against
	// the revocations on every request.
	Serial string
	// NotAfter is when the certificate expires; zero when unknown.
	NotAfter time.Time
	// Expired is set when the certificate had expired when the request
	// came: a node certificate within the grace, which may only renew
	// itself (see authorize).
	Expired bool
}

// knownRole reports whether role is one the API grants anything to.
func knownRole(role string) bool {
	switch role {
	case apiv1.RoleClusterAdmin, apiv1.RoleOperator, apiv1.RoleViewer, apiv1.RoleNode, apiv1.RoleController:
		return true
	}
	return false
}

// identify returns the caller's identity from its client certificate, or
// nil for an anonymous request. A request forwarded by another replica
// carries the original caller in headers; forwarded is true then (and the
// identity is nil when the original caller was anonymous).
//
// The certificate is the one Go's TLS stack verified, or else the one
// ServerTLS's verifyConnection let through, verified again here against
// the CA (a handler served behind a config that verifies nothing sees
// only anonymous callers) and marked expired when it expired.
func (s *Server) identify(r *http.Request) (id *Identity, forwarded bool) {
	if known, ok := r.Context().Value(identityKey{}).(identified); ok {
		return known.id, known.forwarded
	}
	if r.TLS == nil {
		return nil, false
	}
	var (
		cert    *x509.Certificate
		expired bool
	)
	switch {
	case len(r.TLS.VerifiedChains) > 0 && len(r.TLS.VerifiedChains[0]) > 0:
		cert = r.TLS.VerifiedChains[0][0]
	case len(r.TLS.PeerCertificates) > 0:
		var err error
		if expired, err = s.checkPeer(r); err != nil {
			return nil, false
		}
		cert = r.TLS.PeerCertificates[0]
	default:
		return nil, false
	}
	peer := &Identity{Subject: cert.Subject.CommonName, Role: role(cert), NotAfter: cert.NotAfter, Expired: expired}
	if cert.SerialNumber != nil {
		peer.Serial = serialText(cert.SerialNumber)
	}
	if peer.Role != apiv1.RoleController || peer.Expired || r.Header.Get(apiv1.HeaderForwarded) == "" {
		return peer, false
	}
	fwdRole, expiredRole := r.Header.Get(headerForwardRole), r.Header.Get(headerForwardExpiredRole)
	if fwdRole == "" && expiredRole == "" {
		return nil, true
	}
	id = &Identity{Subject: r.Header.Get(headerForwardSubject), Role: fwdRole, Via: peer.Subject, Serial: r.Header.Get(headerForwardSerial)}
	if fwdRole == "" {
		id.Role = expiredRole
	}
	s.forwardedExpiry(r, id)
	if fwdRole == "" {
		// The follower found it expired: a later date cannot undo that.
		id.Expired = true
	}
	return id, true
}

// forwardedExpiry sets a forwarded caller's NotAfter and Expired by this
// replica's clock: from the follower's header, or, when the follower sent
// none (a release before the header, which refused every expired
// certificate), from the record of the certificate the controller issued.
// An unreadable header counts as expired at an unknown time, which
// nothing accepts.
func (s *Server) forwardedExpiry(r *http.Request, id *Identity) {
	if h := r.Header.Get(headerForwardNotAfter); h != "" {
		t, err := time.Parse(time.RFC3339, h)
		if err != nil {
			id.Expired = true
			return
		}
		id.NotAfter = t
	} else if o, ok := s.backend.State().Get(apiv1.KindCredential, credentialPrefix(id.Role, id.Subject)+id.Serial); ok {
		var rec credentialRecord
		if json.Unmarshal(o.Data, &rec) == nil {
			id.NotAfter, _ = time.Parse(time.RFC3339, rec.NotAfter)
		}
	}
	id.Expired = !id.NotAfter.IsZero() && s.certNow().After(id.NotAfter)
}

// identityKey is the request context key of the identity identify found.
type identityKey struct{}

// identified is what identify returned for a request.
type identified struct {
	id        *Identity
	forwarded bool
}

// withIdentity returns r with its identity found once, so the handlers it
// passes through do not verify the certificate again.
func (s *Server) withIdentity(r *http.Request) *http.Request {
	id, forwarded := s.identify(r)
	return r.WithContext(context.WithValue(r.Context(), identityKey{}, identified{id: id, forwarded: forwarded}))
}

// stripForwardHeaders removes forwarding headers a caller may have forged.
func stripForwardHeaders(r *http.Request) {
	r.Header.Del(apiv1.HeaderForwarded)
	r.Header.Del(headerForwardSubject)
	r.Header.Del(headerForwardRole)
	r.Header.Del(headerForwardSerial)
	r.Header.Del(headerForwardNotAfter)
	r.Header.Del(headerForwardExpiredRole)
}

// connCheck is one connection's verified client chain: the signatures do
// not change for the life of a TLS 1.3 connection, so they are verified on
// its first request and each request only judges the chain against the
// clock (expiry, the node grace).
type connCheck struct {
	once  sync.Once
	chain []*x509.Certificate
	err   error
}

// connCheckKey is the connection context key of a connection's connCheck.
type connCheckKey struct{}

// connContext gives each connection HTTPServer accepts its connCheck.
func connContext(ctx context.Context, _ net.Conn) context.Context {
	return context.WithValue(ctx, connCheckKey{}, &connCheck{})
}

// checkPeer verifies the request's client certificate (r.TLS has one) as
// verifyClientCert does, with the chain's signatures verified once per
// connection when the server set one up with connContext, and on every
// request otherwise.
func (s *Server) checkPeer(r *http.Request) (expired bool, err error) {
	now := s.certNow()
	cc, ok := r.Context().Value(connCheckKey{}).(*connCheck)
	if !ok {
		return verifyClientCert(r.TLS.PeerCertificates, s.caPool, now, s.nodeGrace)
	}
	cc.once.Do(func() { cc.chain, cc.err = verifyChain(r.TLS.PeerCertificates, s.caPool, now) })
	if cc.err != nil {
		return false, cc.err
	}
	return judgeChain(cc.chain, now, s.nodeGrace)
}
