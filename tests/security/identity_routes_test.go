package security

import (
	"net/http"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/pki"
)

// roleClients are one client per role, with node n1's certificate for the
// node role.
func (e *env) roleClients(node pki.KeyPair) map[string]*http.Client {
	return map[string]*http.Client{
		"viewer":        e.client(apiv1.RoleViewer, "victor"),
		"operator":      e.client(apiv1.RoleOperator, "olga"),
		"cluster-admin": e.client(apiv1.RoleClusterAdmin, "alice"),
		"node":          e.clientFor(node),
		"controller":    e.client(apiv1.RoleController, "r9"),
		"anonymous":     e.clientFor(pki.KeyPair{}),
	}
}

// TestRenewRouteRoles: only the node itself gets a certificate from
// POST /v1/nodes/{id}/renew, and only for its own id.
func TestRenewRouteRoles(t *testing.T) {
	e := newEnv(t, 1)
	n1 := e.joined(e.newToken(apiv1.TokenRequest{NodeID: "n1"}).Token, "n1")
	clients := e.roleClients(n1)
	tests := []struct {
		role, node string
		status     int
		code       string
	}{
		{"viewer", "n1", http.StatusForbidden, apiv1.CodeForbidden},
		{"operator", "n1", http.StatusForbidden, apiv1.CodeForbidden},
		{"cluster-admin", "n1", http.StatusForbidden, apiv1.CodeForbidden},
		{"controller", "n1", http.StatusForbidden, apiv1.CodeForbidden},
		{"anonymous", "n1", http.StatusUnauthorized, apiv1.CodeUnauthenticated},
		{"node", "n2", http.StatusForbidden, apiv1.CodeForbidden},
		{"node", "n1", http.StatusOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.role+" renews "+tt.node, func(t *testing.T) {
			r := e.call(clients[tt.role], e.leader(), http.MethodPost, apiv1.NodePath(tt.node, "renew"), struct{}{})
			want(t, r, tt.status, tt.code)
			if tt.status != http.StatusOK {
				return
			}
			var cr apiv1.CertResponse
			r.decode(t, &cr)
			c, err := pki.ParseCert([]byte(cr.Cert))
			if err != nil {
				t.Fatal(err)
			}
			if c.Subject.CommonName != "n1" || c.Subject.Organization[0] != apiv1.RoleNode {
				t.Fatalf("renewed %s/%v, want n1/node", c.Subject.CommonName, c.Subject.Organization)
			}
			if c.SerialNumber.Text(16) == serialOf(t, n1) {
				t.Fatal("renewal returned the same certificate")
			}
		})
	}
	if _, ok := e.c.WaitLeader().Node().State().Get(apiv1.KindNodeIdentity, "n2"); ok {
		t.Fatal("a refused renewal created n2")
	}
}

// TestRevokeRouteRoles: only cluster-admin revokes, and a revoked
// certificate is refused at the handshake from then on.
func TestRevokeRouteRoles(t *testing.T) {
	e := newEnv(t, 1)
	n1 := e.joined(e.newToken(apiv1.TokenRequest{NodeID: "n1"}).Token, "n1")
	serial := serialOf(t, n1)
	clients := e.roleClients(n1)
	for _, tt := range []struct {
		role   string
		status int
		code   string
	}{
		{"viewer", http.StatusForbidden, apiv1.CodeForbidden},
		{"operator", http.StatusForbidden, apiv1.CodeForbidden},
		{"node", http.StatusForbidden, apiv1.CodeForbidden},
		{"controller", http.StatusForbidden, apiv1.CodeForbidden},
		{"anonymous", http.StatusUnauthorized, apiv1.CodeUnauthenticated},
	} {
		r := e.call(clients[tt.role], e.leader(), http.MethodPost, apiv1.PathRevocations, apiv1.RevokeRequest{Serial: serial})
		want(t, r, tt.status, tt.code)
	}
	if e.handshakeRefused(n1, e.leader()) {
		t.Fatal("a refused revocation revoked")
	}
	admin := clients["cluster-admin"]
	want(t, e.call(admin, e.leader(), http.MethodPost, apiv1.PathRevocations, apiv1.RevokeRequest{Serial: "not hex"}), http.StatusBadRequest, apiv1.CodeBadRequest)
	want(t, e.call(admin, e.leader(), http.MethodPost, apiv1.PathRevocations, apiv1.RevokeRequest{Serial: "abc123"}), http.StatusNotFound, apiv1.CodeNotFound)
	// Serials are accepted as openssl prints them: upper case, colons.
	r := e.call(admin, e.leader(), http.MethodPost, apiv1.PathRevocations, apiv1.RevokeRequest{Serial: colons(serial)})
	want(t, r, http.StatusOK, "")
	var rr apiv1.RevokeResponse
	r.decode(t, &rr)
	if rr.Serial != serial || rr.Subject != "n1" || rr.Role != apiv1.RoleNode {
		t.Fatalf("revoked %+v", rr)
	}
	if !e.handshakeRefused(n1, e.leader()) {
		t.Fatal("the revoked certificate still completes a handshake")
	}
	// Revocations are the controller's own: not written or deleted through
	// /v1/objects, even by cluster-admin.
	want(t, e.call(admin, e.leader(), http.MethodDelete, apiv1.ObjectPath(apiv1.KindRevocation, serial), nil), http.StatusBadRequest, apiv1.CodeBadRequest)
	want(t, e.call(admin, e.leader(), http.MethodPut, apiv1.ObjectPath(apiv1.KindRevocation, "ab"), `{}`), http.StatusBadRequest, apiv1.CodeBadRequest)
	want(t, e.call(admin, e.leader(), http.MethodPut, apiv1.ObjectPath(apiv1.KindNodeIdentity, "n7"), `{}`), http.StatusBadRequest, apiv1.CodeBadRequest)
	e.findAudit(func(a apiv1.AuditEntry) bool {
		return a.Route == "POST /v1/revocations" && a.Subject == "alice" && a.Result == http.StatusOK
	})
}

// colons writes a hex serial as openssl does: upper case pairs.
func colons(s string) string {
	if len(s)%2 == 1 {
		s = "0" + s
	}
	out := ""
	for i := 0; i < len(s); i += 2 {
		if i > 0 {
			out += ":"
		}
		out += s[i : i+2]
	}
	return strings.ToUpper(out)
}

// TestTokenRouteRoles: only cluster-admin creates join tokens.
func TestTokenRouteRoles(t *testing.T) {
	e := newEnv(t, 1)
	n1 := e.joined(e.newToken(apiv1.TokenRequest{NodeID: "n1"}).Token, "n1")
	for role, c := range e.roleClients(n1) {
		status, code := http.StatusForbidden, apiv1.CodeForbidden
		switch role {
		case "cluster-admin":
			status, code = http.StatusOK, ""
		case "anonymous":
			status, code = http.StatusUnauthorized, apiv1.CodeUnauthenticated
		}
		r := e.call(c, e.leader(), http.MethodPost, apiv1.PathTokens, apiv1.TokenRequest{NodeID: "n2"})
		t.Run(role, func(t *testing.T) { want(t, r, status, code) })
	}
}
