package client

import (
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/pki"
)

// testPKI is a controller CA with a server certificate for 127.0.0.1 and an
// admin client certificate.
type testPKI struct {
	ca     *pki.CA
	server pki.KeyPair
	admin  pki.KeyPair
}

func newTestPKI(t *testing.T) testPKI {
	t.Helper()
	now := time.Now()
	ca, err := pki.NewCA("kcore controller ca", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	server, err := ca.Issue(pki.CertRequest{CommonName: "controller-0", Organization: []string{"controller"}, DNSNames: []string{"localhost"}, IPs: []net.IP{net.IPv4(127, 0, 0, 1)}, Usage: pki.UsageServer | pki.UsageClient, Validity: time.Hour}, now)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := ca.Issue(pki.CertRequest{CommonName: "admin", Organization: []string{apiv1.RoleClusterAdmin}, Usage: pki.UsageClient, Validity: time.Hour}, now)
	if err != nil {
		t.Fatal(err)
	}
	return testPKI{ca: ca, server: server, admin: admin}
}

// serve starts a TLS server with p's server certificate that asks for (but
// does not require) a client certificate from p's CA.
func (p testPKI) serve(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	pair, err := tls.X509KeyPair(p.server.CertPEM, p.server.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: p.ca.Pool(), ClientAuth: tls.VerifyClientCertIfGiven, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func (p testPKI) client(t *testing.T, addrs ...string) *Client {
	t.Helper()
	c, err := New(Config{Addresses: addrs, CA: p.ca.CertPEM, Cert: p.admin.CertPEM, Key: p.admin.KeyPEM, Timeout: 10 * time.Second, ElectionWait: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func addrOf(srv *httptest.Server) string {
	return srv.Listener.Addr().String()
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", apiv1.ContentTypeJSON)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code, msg string, details map[string]string) {
	writeJSON(w, apiv1.StatusFor(code), apiv1.ErrorBody{Code: code, Message: msg, Details: details})
}
