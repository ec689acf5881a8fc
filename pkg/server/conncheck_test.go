package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http/httptest"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
)

// TestConnCheckVerifiesOncePerConnection: on a connection HTTPServer set
// up, the client chain's signatures are verified on its first request
// only (a later request passes even against a CA pool that no longer
// holds its issuer), while expiry and the node grace are judged against
// the clock on every request; a request without the connection's check
// verifies everything each time.
func TestConnCheckVerifiesOncePerConnection(t *testing.T) {
	t0 := fixedNow()
	s, _ := newIdentityServer(t, t0, 0)
	ca := oldCA(t)
	s.caPool = ca.Pool()
	leaf := leafOf(t, ca, apiv1.RoleNode, "n1", t0.Add(-time.Hour), 24*time.Hour)
	conn := connContext(context.Background(), nil)
	req := func(ctx context.Context, at time.Time) (bool, error) {
		s.certNow = func() time.Time { return at }
		r := httptest.NewRequest("GET", "/v1/health", nil).WithContext(ctx)
		r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf}}
		return s.checkPeer(r)
	}
	if expired, err := req(conn, t0); err != nil || expired {
		t.Fatalf("first request: expired %v, err %v", expired, err)
	}
	s.caPool = x509.NewCertPool()
	if expired, err := req(conn, t0.Add(time.Minute)); err != nil || expired {
		t.Fatalf("second request on the connection: expired %v, err %v; want the chain verified once", expired, err)
	}
	if _, err := req(context.Background(), t0); err == nil {
		t.Fatal("a request without a connection check passed against a pool without its CA")
	}
	if expired, err := req(conn, leaf.NotAfter.Add(time.Second)); err != nil || !expired {
		t.Fatalf("request after the leaf expired: expired %v, err %v; want expired within the grace", expired, err)
	}
	if _, err := req(conn, leaf.NotAfter.Add(DefaultNodeCertGrace+time.Nanosecond)); err == nil {
		t.Fatal("request past the grace passed on a connection verified earlier")
	}
}
