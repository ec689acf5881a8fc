package security

import (
	"net/http"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/pki"
)

func TestJoinToken(t *testing.T) {
	e := newEnv(t, 1)
	l := e.leader()
	admin := e.client(apiv1.RoleClusterAdmin, "alice")
	anon := e.clientFor(pki.KeyPair{})
	newToken := func(ttl, node string) apiv1.TokenResponse {
		t.Helper()
		r := e.call(admin, l, http.MethodPost, apiv1.PathTokens, apiv1.TokenRequest{TTL: ttl, NodeID: node})
		want(t, r, http.StatusOK, "")
		var tr apiv1.TokenResponse
		r.decode(t, &tr)
		return tr
	}

	tok := newToken("1h", "n1")
	if want := e.clock.Now().Add(time.Hour).UTC().Format(time.RFC3339); tok.Expires != want {
		t.Fatalf("expires %s, want %s", tok.Expires, want)
	}
	// Tokens are stored hashed and never listed with data.
	r := e.call(admin, l, http.MethodGet, apiv1.ObjectPath(apiv1.KindJoinToken, ""), nil)
	want(t, r, http.StatusOK, "")
	var list apiv1.List
	r.decode(t, &list)
	if len(list.Items) != 1 || list.Items[0].Data != nil || list.Items[0].Name == tok.Token {
		t.Fatalf("token list %+v: want one hashed entry without data", list.Items)
	}

	r = e.call(anon, l, http.MethodPost, apiv1.PathJoin, apiv1.JoinRequest{Token: tok.Token, NodeID: "n1"})
	want(t, r, http.StatusOK, "")
	var jr apiv1.JoinResponse
	r.decode(t, &jr)
	cert, err := pki.ParseCert([]byte(jr.Cert))
	if err != nil {
		t.Fatal(err)
	}
	if cert.Subject.CommonName != "n1" || cert.Subject.Organization[0] != apiv1.RoleNode {
		t.Fatalf("issued %s/%v, want CN n1, O node", cert.Subject.CommonName, cert.Subject.Organization)
	}
	// The issued certificate works for n1's own routes and nothing else.
	n1 := e.clientFor(pki.KeyPair{CertPEM: []byte(jr.Cert), KeyPEM: []byte(jr.Key)})
	want(t, e.call(n1, l, http.MethodPut, apiv1.NodePath("n1", "facts"), api.NodeFacts{Hostname: "n1"}), http.StatusOK, "")
	want(t, e.call(n1, l, http.MethodGet, apiv1.NodePath("n2", "state"), nil), http.StatusForbidden, apiv1.CodeForbidden)

	tests := []struct {
		name  string
		token func() string
	}{
		{"used twice", func() string { return tok.Token }},
		{"expired", func() string {
			tr := newToken("10m", "n2")
			e.clock.Advance(11 * time.Minute)
			return tr.Token
		}},
		{"unknown", func() string { return "not-a-token" }},
		{"empty", func() string { return "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.call(anon, l, http.MethodPost, apiv1.PathJoin, apiv1.JoinRequest{Token: tt.token(), NodeID: "n2"})
			want(t, r, http.StatusUnauthorized, apiv1.CodeUnauthenticated)
		})
	}
	if n := e.c.WaitLeader().Node().State().Count(apiv1.KindJoinToken); n != 0 {
		t.Fatalf("%d tokens left, want 0 (used and expired tokens are consumed)", n)
	}
	e.findAudit(func(a apiv1.AuditEntry) bool {
		return a.Route == "POST /v1/join" && a.Object == "Node/n1" && a.Result == http.StatusOK
	})
	// Refused joins are anonymous failures: counted and summarised, never
	// audited one by one.
	for _, a := range e.audit() {
		if a.Route == "POST /v1/join" && a.Result != http.StatusOK {
			t.Fatalf("refused join audited one by one: %+v", a)
		}
	}
}

func TestIssueCertificate(t *testing.T) {
	e := newEnv(t, 1)
	l := e.leader()
	admin := e.client(apiv1.RoleClusterAdmin, "alice")
	r := e.call(admin, l, http.MethodPost, apiv1.PathCerts, apiv1.CertRequest{Role: apiv1.RoleViewer, Name: "bob"})
	want(t, r, http.StatusOK, "")
	var cr apiv1.CertResponse
	r.decode(t, &cr)
	bob := e.clientFor(pki.KeyPair{CertPEM: []byte(cr.Cert), KeyPEM: []byte(cr.Key)})
	want(t, e.call(bob, l, http.MethodGet, apiv1.ObjectPath(probeKind, ""), nil), http.StatusOK, "")
	want(t, e.call(bob, l, http.MethodPut, apiv1.ObjectPath(probeKind, "c1"), probeJSON("c1")), http.StatusForbidden, apiv1.CodeForbidden)
	want(t, e.call(admin, l, http.MethodPost, apiv1.PathCerts, apiv1.CertRequest{Role: apiv1.RoleNode, Name: "n9"}), http.StatusBadRequest, apiv1.CodeBadRequest)
	want(t, e.call(admin, l, http.MethodPost, apiv1.PathCerts, apiv1.CertRequest{Role: apiv1.RoleController, Name: "evil"}), http.StatusBadRequest, apiv1.CodeBadRequest)
}
