package server

import (
	"net/http"

	"kcore.dev/kcore/pkg/apiv1"
)

// Headers a follower sets when it forwards a request to the leader, naming
// the original caller. The leader trusts them only from a peer whose own
// certificate has role controller.
const (
	headerForwardSubject = "X-Kcore-Forwarded-Subject"
	headerForwardRole    = "X-Kcore-Forwarded-Role"
	headerForwardSerial  = "X-Kcore-Forwarded-Serial"
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
}

// knownRole reports whether role is one the API grants anything to.
func knownRole(role string) bool {
	switch role {
	case apiv1.RoleClusterAdmin, apiv1.RoleOperator, apiv1.RoleViewer, apiv1.RoleNode, apiv1.RoleController:
		return true
	}
	return false
}

// identify returns the caller's identity from the verified client
// certificate, or nil for an anonymous request. A request forwarded by
// another replica carries the original caller in headers; forwarded is true
// then (and the identity is nil when the original caller was anonymous).
func identify(r *http.Request) (id *Identity, forwarded bool) {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || len(r.TLS.VerifiedChains[0]) == 0 {
		return nil, false
	}
	cert := r.TLS.VerifiedChains[0][0]
	peer := &Identity{Subject: cert.Subject.CommonName}
	if cert.SerialNumber != nil {
		peer.Serial = serialText(cert.SerialNumber)
	}
	if len(cert.Subject.Organization) > 0 {
		peer.Role = cert.Subject.Organization[0]
	}
	if peer.Role != apiv1.RoleController || r.Header.Get(apiv1.HeaderForwarded) == "" {
		return peer, false
	}
	role := r.Header.Get(headerForwardRole)
	if role == "" {
		return nil, true
	}
	return &Identity{Subject: r.Header.Get(headerForwardSubject), Role: role, Via: peer.Subject, Serial: r.Header.Get(headerForwardSerial)}, true
}

// stripForwardHeaders removes forwarding headers a caller may have forged.
func stripForwardHeaders(r *http.Request) {
	r.Header.Del(apiv1.HeaderForwarded)
	r.Header.Del(headerForwardSubject)
	r.Header.Del(headerForwardRole)
	r.Header.Del(headerForwardSerial)
}
