package server

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/secrets"
	"kcore.dev/kcore/pkg/store"
)

// fixedNow is the fixed "now" of these tests.
func fixedNow() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }

// leafOf issues a certificate for role/name from ca, valid from issued
// for validity, and parses it.
func leafOf(t *testing.T, ca *pki.CA, role, name string, issued time.Time, validity time.Duration) *x509.Certificate {
	t.Helper()
	kp, err := ca.Issue(pki.CertRequest{CommonName: name, Organization: []string{role}, Usage: pki.UsageClient, Validity: validity}, issued)
	if err != nil {
		t.Fatal(err)
	}
	c, err := pki.ParseCert(kp.CertPEM)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// oldCA is a CA made long before t0 and valid long after it.
func oldCA(t *testing.T) *pki.CA {
	t.Helper()
	t0 := fixedNow()
	ca, err := pki.NewCA("test", t0.Add(-200*24*time.Hour), 400*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// TestVerifyClientCertAtTheGraceBound: an expired node certificate passes,
// marked expired, up to exactly the grace after its expiry and not a
// nanosecond later; never with the grace off, never for another role, a
// foreign CA or a CA that has expired since.
func TestVerifyClientCertAtTheGraceBound(t *testing.T) {
	t0 := fixedNow()
	ca := oldCA(t)
	const grace = 48 * time.Hour
	node := leafOf(t, ca, apiv1.RoleNode, "n1", t0.Add(-25*time.Hour), 24*time.Hour)
	end := node.NotAfter
	for _, tt := range []struct {
		name    string
		cert    *x509.Certificate
		roots   *x509.CertPool
		now     time.Time
		grace   time.Duration
		expired bool
		ok      bool
	}{
		{"valid at its last instant", node, ca.Pool(), end, grace, false, true},
		{"expired a nanosecond ago", node, ca.Pool(), end.Add(time.Nanosecond), grace, true, true},
		{"expired exactly the grace ago", node, ca.Pool(), end.Add(grace), grace, true, true},
		{"expired a nanosecond past the grace", node, ca.Pool(), end.Add(grace + time.Nanosecond), grace, false, false},
		{"grace off", node, ca.Pool(), end.Add(time.Nanosecond), NoNodeCertGrace, false, false},
		{"grace zero", node, ca.Pool(), end.Add(time.Nanosecond), 0, false, false},
		{"operator", leafOf(t, ca, apiv1.RoleOperator, "olga", t0.Add(-25*time.Hour), 24*time.Hour), ca.Pool(), t0, grace, false, false},
		{"cluster-admin", leafOf(t, ca, apiv1.RoleClusterAdmin, "alice", t0.Add(-25*time.Hour), 24*time.Hour), ca.Pool(), t0, grace, false, false},
		{"controller", leafOf(t, ca, apiv1.RoleController, "r1", t0.Add(-25*time.Hour), 24*time.Hour), ca.Pool(), t0, grace, false, false},
		{"another CA", node, oldCA(t).Pool(), end.Add(time.Nanosecond), grace, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			expired, err := verifyClientCert([]*x509.Certificate{tt.cert}, tt.roots, tt.now, tt.grace)
			if (err == nil) != tt.ok || expired != tt.expired {
				t.Fatalf("expired %v err %v, want expired %v ok %v", expired, err, tt.expired, tt.ok)
			}
		})
	}
	// A CA that expired together with the node certificate: the chain
	// verifies at the certificate's last instant, but not now.
	short, err := pki.NewCA("short", t0.Add(-48*time.Hour), 47*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	leaf := leafOf(t, short, apiv1.RoleNode, "n1", t0.Add(-25*time.Hour), 24*time.Hour)
	if !leaf.NotAfter.Equal(short.Cert().NotAfter) {
		t.Fatalf("leaf until %s, CA until %s", leaf.NotAfter, short.Cert().NotAfter)
	}
	if _, err := verifyClientCert([]*x509.Certificate{leaf}, short.Pool(), t0, grace); err == nil {
		t.Fatal("a node certificate under an expired CA passes")
	}
}

// TestNodeCertGraceConfigBounds: the server takes the grace at its
// bounds, off and by default, and refuses it just past them.
func TestNodeCertGraceConfigBounds(t *testing.T) {
	key, _ := secrets.NewKey()
	kr, err := secrets.New(key)
	if err != nil {
		t.Fatal(err)
	}
	for grace, ok := range map[time.Duration]bool{
		0: true, NoNodeCertGrace: true, MinNodeCertGrace: true, MaxNodeCertGrace: true,
		MinNodeCertGrace - time.Nanosecond: false, MaxNodeCertGrace + time.Nanosecond: false, -time.Hour: false,
	} {
		s, err := New(Config{Backend: &localBackend{st: store.New(nil)}, CA: oldCA(t), Keyring: kr, NodeCertGrace: grace})
		if (err == nil) != ok || (err != nil && !errors.Is(err, ErrBadNodeCertGrace)) {
			t.Fatalf("grace %s: err %v, want ok=%v", grace, err, ok)
		}
		if grace == 0 && s.nodeGrace != DefaultNodeCertGrace {
			t.Fatalf("default grace %s, want %s", s.nodeGrace, DefaultNodeCertGrace)
		}
	}
}

// TestExpiredNodeCallsAtTheGraceBound serves requests whose connection
// state holds an expired node certificate (as ServerTLS lets it through):
// renew answers 200 up to exactly the grace after the expiry, other
// routes and other nodes' renew 401 naming the expiry, and every answer
// ends the connection; past the grace the caller is not even identified.
func TestExpiredNodeCallsAtTheGraceBound(t *testing.T) {
	t0 := fixedNow()
	s, be := newIdentityServer(t, t0, 0)
	ca := oldCA(t)
	s.ca, s.caPool = ca, ca.Pool()
	leaf := leafOf(t, ca, apiv1.RoleNode, "n1", t0.Add(-25*time.Hour), 24*time.Hour)
	serial := serialText(leaf.SerialNumber)
	notAfter := leaf.NotAfter.Format(time.RFC3339)
	put(t, be, apiv1.KindNodeIdentity, "n1", identityRecord{Serial: serial, NotAfter: notAfter})
	put(t, be, apiv1.KindCredential, "node/n1/"+serial, credentialRecord{Role: apiv1.RoleNode, Name: "n1", Serial: serial, NotAfter: notAfter})
	call := func(at time.Time, method, path string) *httptest.ResponseRecorder {
		s.certNow = func() time.Time { return at }
		r := httptest.NewRequest(method, path, strings.NewReader(`{}`))
		r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf}}
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, r)
		return w
	}
	bound := leaf.NotAfter.Add(DefaultNodeCertGrace)
	for _, path := range []string{apiv1.NodePath("n1", "heartbeat"), apiv1.NodePath("n2", "renew"), apiv1.PathTokens} {
		w := call(leaf.NotAfter.Add(time.Second), http.MethodPost, path)
		if w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), "expired at "+notAfter) || w.Header().Get("Connection") != "close" {
			t.Fatalf("POST %s: %d %s %v", path, w.Code, w.Body, w.Header())
		}
	}
	w := call(bound.Add(time.Nanosecond), http.MethodPost, apiv1.NodePath("n1", "renew"))
	if w.Code != http.StatusUnauthorized || strings.Contains(w.Body.String(), "expired") {
		t.Fatalf("renew past the grace: %d %s", w.Code, w.Body)
	}
	w = call(bound, http.MethodPost, apiv1.NodePath("n1", "renew"))
	if w.Code != http.StatusOK || w.Header().Get("Connection") != "close" {
		t.Fatalf("renew at the grace bound: %d %s", w.Code, w.Body)
	}
	o, _ := be.st.Get(apiv1.KindNodeIdentity, "n1")
	if strings.Contains(string(o.Data), serial) || !strings.Contains(string(o.Data), "renew-expired") {
		t.Fatalf("node identity after the renewal: %s", o.Data)
	}
	// The certificate is not n1's current one any more.
	w = call(bound, http.MethodPost, apiv1.NodePath("n1", "renew"))
	if w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), "current") {
		t.Fatalf("second renewal: %d %s", w.Code, w.Body)
	}
}

// roundTripFunc is an http.RoundTripper from a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestForwardedExpiredIdentity: a follower forwards an expired caller
// under the expired-role header instead of the role header, so a leader
// that knows the mark sees an expired identity (a later expiry date
// cannot undo it) and one that does not sees an anonymous caller; the
// headers are stripped from callers that are not controllers.
func TestForwardedExpiredIdentity(t *testing.T) {
	now := fixedNow()
	s, _ := newIdentityServer(t, now, 0)
	var sent http.Header
	s.forwarder = &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent = r.Header.Clone()
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody}, nil
	})}
	notAfter := now.Add(-time.Hour)
	c := &call{
		w: httptest.NewRecorder(), r: httptest.NewRequest(http.MethodPost, apiv1.NodePath("n1", "renew"), nil),
		id: &Identity{Subject: "n1", Role: apiv1.RoleNode, Serial: "ab", NotAfter: notAfter, Expired: true},
	}
	if err := s.forward(c, "leader:7443"); err != nil {
		t.Fatal(err)
	}
	if sent.Get(headerForwardRole) != "" || sent.Get(headerForwardExpiredRole) != apiv1.RoleNode || sent.Get(headerForwardNotAfter) != notAfter.Format(time.RFC3339) {
		t.Fatalf("forwarded headers %v", sent)
	}

	controller := &x509.Certificate{Subject: pkix.Name{CommonName: "r2", Organization: []string{apiv1.RoleController}}}
	at := func(h http.Header) (*Identity, bool) {
		r := httptest.NewRequest(http.MethodPost, apiv1.NodePath("n1", "renew"), nil)
		r.Header = h
		r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{controller}}}
		return s.identify(r)
	}
	s.certNow = func() time.Time { return now }
	id, forwarded := at(sent.Clone())
	if !forwarded || id == nil || !id.Expired || id.Role != apiv1.RoleNode || id.Subject != "n1" || id.Via != "r2" || !id.NotAfter.Equal(notAfter) {
		t.Fatalf("identity %+v forwarded %v", id, forwarded)
	}
	later := sent.Clone()
	later.Set(headerForwardNotAfter, now.Add(time.Hour).Format(time.RFC3339))
	if id, _ := at(later); id == nil || !id.Expired {
		t.Fatalf("a later expiry date undid the mark: %+v", id)
	}
	// What a leader that does not know the mark reads: no role, anonymous.
	old := sent.Clone()
	old.Del(headerForwardExpiredRole)
	if id, forwarded := at(old); id != nil || !forwarded {
		t.Fatalf("without the expired role: %+v %v", id, forwarded)
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header = sent.Clone()
	stripForwardHeaders(r)
	if len(r.Header) != 0 {
		t.Fatalf("headers left after stripping: %v", r.Header)
	}
}
