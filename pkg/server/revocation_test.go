package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/secrets"
	"kcore.dev/kcore/pkg/store"
)

// newIdentityServer is a server over an in-memory store whose clock is
// fixed at now.
func newIdentityServer(t *testing.T, now time.Time, maxRevocations int) (*Server, *localBackend) {
	t.Helper()
	key, _ := secrets.NewKey()
	kr, err := secrets.New(key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := pki.NewCA("test", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	be := &localBackend{st: store.New(nil)}
	s, err := New(Config{Backend: be, CA: ca, Keyring: kr, Now: func() time.Time { return now }, MaxRevocations: maxRevocations})
	if err != nil {
		t.Fatal(err)
	}
	return s, be
}

func put(t *testing.T, be *localBackend, kind, name string, v any) {
	t.Helper()
	data, _ := json.Marshal(v)
	cmd, _ := store.Put{Kind: kind, Name: name, Data: data}.Command()
	if _, err := be.Apply(context.Background(), cmd); err != nil {
		t.Fatal(err)
	}
}

func TestParseTokenTTLBounds(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", apiv1.DefaultTokenTTL, true},
		{"1m", apiv1.MinTokenTTL, true},
		{"168h", apiv1.MaxTokenTTL, true},
		{"59.999s", 0, false},
		{"168h0m0.001s", 0, false},
		{"1ns", 0, false},
		{"0", 0, false},
		{"-1h", 0, false},
		{"100000h", 0, false},
		{"1d", 0, false},
	} {
		got, err := parseTokenTTL(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseTokenTTL(%q) = %s, %v; want %s ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestNormalizeSerial(t *testing.T) {
	for in, want := range map[string]string{
		"5F3A": "5f3a", "5f:3a": "5f3a", "0x05f3a": "5f3a", " 00:5F:3A ": "5f3a",
		"": "", "0": "", "xyz": "", "-1": "", strings.Repeat("f", 65): "",
	} {
		got, ok := normalizeSerial(in)
		if got != want || ok != (want != "") {
			t.Errorf("normalizeSerial(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func TestVerifyConnectionRefusesRevoked(t *testing.T) {
	now := time.Now()
	s, be := newIdentityServer(t, now, 0)
	state := func() (tls.ConnectionState, string) {
		kp, err := s.ca.Issue(pki.CertRequest{CommonName: "n1", Organization: []string{apiv1.RoleNode}, Usage: pki.UsageClient, Validity: time.Hour}, now)
		if err != nil {
			t.Fatal(err)
		}
		c, err := pki.ParseCert(kp.CertPEM)
		if err != nil {
			t.Fatal(err)
		}
		return tls.ConnectionState{PeerCertificates: []*x509.Certificate{c}}, serialText(c.SerialNumber)
	}
	revoked, serial := state()
	put(t, be, apiv1.KindRevocation, serial, revocationRecord{Serial: serial})
	if err := s.verifyConnection(revoked, s.caPool); !errors.Is(err, ErrRevoked) {
		t.Fatalf("revoked serial: %v, want ErrRevoked", err)
	}
	other, _ := state()
	if err := s.verifyConnection(other, s.caPool); err != nil {
		t.Fatalf("other serial: %v", err)
	}
	if err := s.verifyConnection(tls.ConnectionState{}, s.caPool); err != nil {
		t.Fatalf("no client certificate: %v", err)
	}
	cfg := s.ServerTLS(tls.Certificate{}, x509.NewCertPool())
	if cfg.VerifyConnection == nil || cfg.MinVersion != tls.VersionTLS13 || cfg.ClientAuth != tls.RequestClientCert {
		t.Fatal("ServerTLS does not check client certificates itself")
	}
}

// TestRevocationListBound: at most MaxRevocations unexpired revocations
// are kept; revocations of expired certificates are dropped when one is
// added, which makes room.
func TestRevocationListBound(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	const max = 2
	s, be := newIdentityServer(t, now, max)
	live := now.Add(time.Hour).Format(time.RFC3339)
	for _, serial := range []string{"a1", "a2", "a3"} {
		put(t, be, apiv1.KindCredential, "node/n1/"+serial, credentialRecord{Role: apiv1.RoleNode, Name: "n1", Serial: serial, NotAfter: live})
	}
	put(t, be, apiv1.KindRevocation, "b0", revocationRecord{Serial: "b0", NotAfter: now.Add(-time.Second).Format(time.RFC3339)})
	e := &etcdRouteEnv{t: t, s: s, be: be}
	revoke := func(serial string) int {
		code, body := e.call(apiv1.RoleClusterAdmin, http.MethodPost, apiv1.PathRevocations, `{"serial":"`+serial+`"}`)
		if code != http.StatusOK && code != http.StatusConflict {
			t.Fatalf("revoke %s: %d %s", serial, code, body)
		}
		return code
	}
	if revoke("a1") != http.StatusOK {
		t.Fatal("first revocation refused")
	}
	if _, ok := be.st.Get(apiv1.KindRevocation, "b0"); ok {
		t.Fatal("the expired certificate's revocation was kept")
	}
	if revoke("a2") != http.StatusOK {
		t.Fatal("revocation at the bound refused")
	}
	if revoke("a3") != http.StatusConflict {
		t.Fatal("revocation past the bound accepted")
	}
	if n := be.st.Count(apiv1.KindRevocation); n != max {
		t.Fatalf("%d revocations kept, want %d", n, max)
	}
	if revoke("a1") != http.StatusOK {
		t.Fatal("revoking a revoked certificate again is not a no-op")
	}
}

func TestRegistered(t *testing.T) {
	s, be := newIdentityServer(t, time.Now(), 0)
	put(t, be, apiv1.KindNodeIdentity, "by-identity", identityRecord{})
	put(t, be, api.KindNode, "by-facts", api.Node{})
	put(t, be, apiv1.KindCredential, "node/by-cert/ab", credentialRecord{})
	put(t, be, apiv1.KindCredential, "viewer/by-person/ab", credentialRecord{})
	for id, want := range map[string]bool{"by-identity": true, "by-facts": true, "by-cert": true, "by-person": false, "by": false, "new": false} {
		if got := s.registered(id); got != want {
			t.Errorf("registered(%q) = %v, want %v", id, got, want)
		}
	}
}

// TestRenewBound: a node renews until it holds MaxLiveNodeCerts unexpired
// certificates; the next renewal is refused.
func TestRenewBound(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	s, be := newIdentityServer(t, now, 0)
	live := now.Add(time.Hour).Format(time.RFC3339)
	for i := 0; i < MaxLiveNodeCerts-1; i++ {
		serial := big.NewInt(int64(0xa0 + i)).Text(16)
		put(t, be, apiv1.KindCredential, "node/n1/"+serial, credentialRecord{Role: apiv1.RoleNode, Name: "n1", Serial: serial, NotAfter: live})
	}
	put(t, be, apiv1.KindCredential, "node/n1/ff", credentialRecord{Role: apiv1.RoleNode, Name: "n1", Serial: "ff", NotAfter: now.Format(time.RFC3339)})
	renew := func() int {
		r := httptest.NewRequest(http.MethodPost, apiv1.NodePath("n1", "renew"), strings.NewReader(`{}`))
		cert := &x509.Certificate{SerialNumber: big.NewInt(0xa0), Subject: pkix.Name{CommonName: "n1", Organization: []string{apiv1.RoleNode}}}
		r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{cert}}}
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, r)
		return w.Code
	}
	if code := renew(); code != http.StatusOK {
		t.Fatalf("renewal below the bound: %d", code)
	}
	if _, ok := be.st.Get(apiv1.KindCredential, "node/n1/ff"); ok {
		t.Fatal("the expired certificate's record was kept")
	}
	if code := renew(); code != http.StatusConflict {
		t.Fatalf("renewal at the bound: %d, want 409", code)
	}
}
