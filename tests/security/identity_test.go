package security

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/tests/apiserve"
)

// newToken creates a token through the leader and fails the test unless
// it is issued.
func (e *env) newToken(req apiv1.TokenRequest) apiv1.TokenResponse {
	e.t.Helper()
	r := e.call(e.client(apiv1.RoleClusterAdmin, "alice"), e.leader(), http.MethodPost, apiv1.PathTokens, req)
	want(e.t, r, http.StatusOK, "")
	var tr apiv1.TokenResponse
	r.decode(e.t, &tr)
	return tr
}

// join redeems token as node id, anonymously, at a.
func (e *env) join(a *apiserve.API, token, id string) response {
	e.t.Helper()
	return e.call(e.clientFor(pki.KeyPair{}), a, http.MethodPost, apiv1.PathJoin, apiv1.JoinRequest{Token: token, NodeID: id})
}

// joined redeems token as node id and returns the issued key pair.
func (e *env) joined(token, id string) pki.KeyPair {
	e.t.Helper()
	r := e.join(e.leader(), token, id)
	want(e.t, r, http.StatusOK, "")
	var jr apiv1.JoinResponse
	r.decode(e.t, &jr)
	return pki.KeyPair{CertPEM: []byte(jr.Cert), KeyPEM: []byte(jr.Key)}
}

// tokens is how many join tokens the leader stores.
func (e *env) tokens() int {
	return e.c.WaitLeader().Node().State().Count(apiv1.KindJoinToken)
}

// serialOf is a certificate's serial as revocations name it.
func serialOf(t *testing.T, kp pki.KeyPair) string {
	t.Helper()
	c, err := pki.ParseCert(kp.CertPEM)
	if err != nil {
		t.Fatal(err)
	}
	return c.SerialNumber.Text(16)
}

// handshakeRefused reports whether a fresh connection presenting kp to a
// is refused before any HTTP answer.
func (e *env) handshakeRefused(kp pki.KeyPair, a *apiserve.API) bool {
	e.t.Helper()
	_, err := do(e.clientFor(kp), http.MethodGet, "https://"+a.Addr+apiv1.PathHealth, nil)
	return err != nil
}

// TestTokenForOneNodeRedeemedAsAnother: a token made for node A is refused
// for node B with the one generic answer, and stays usable for A.
func TestTokenForOneNodeRedeemedAsAnother(t *testing.T) {
	e := newEnv(t, 1)
	tok := e.newToken(apiv1.TokenRequest{NodeID: "node-a"})
	if tok.NodeID != "node-a" {
		t.Fatalf("token bound to %q, want node-a", tok.NodeID)
	}
	r := e.join(e.leader(), tok.Token, "node-b")
	want(t, r, http.StatusUnauthorized, apiv1.CodeUnauthenticated)
	unknown := e.join(e.leader(), "not-a-token", "node-b")
	if string(r.body) != string(unknown.body) || r.status != unknown.status {
		t.Fatalf("a mismatched node id answers %s, an unknown token %s: want one answer", r.body, unknown.body)
	}
	if n := e.tokens(); n != 1 {
		t.Fatalf("%d tokens stored, want 1: a refused redemption must not consume the token", n)
	}
	if _, ok := e.c.WaitLeader().Node().State().Get(apiv1.KindNodeIdentity, "node-b"); ok {
		t.Fatal("node-b got an identity")
	}
	kp := e.joined(tok.Token, "node-a")
	if c, _ := pki.ParseCert(kp.CertPEM); c.Subject.CommonName != "node-a" {
		t.Fatalf("issued for %q", c.Subject.CommonName)
	}
}

// TestFreshTokenForRegisteredNode: a plain token cannot take over a node
// that is registered, whether it registered by joining or only by facts
// (a node certificate from before tokens were bound).
func TestFreshTokenForRegisteredNode(t *testing.T) {
	e := newEnv(t, 1)
	l := e.leader()
	admin := e.client(apiv1.RoleClusterAdmin, "alice")
	first := e.newToken(apiv1.TokenRequest{NodeID: "cp1"})
	second := e.newToken(apiv1.TokenRequest{NodeID: "cp1"})
	legacy := e.newToken(apiv1.TokenRequest{NodeID: "cp2"})
	cp1 := e.joined(first.Token, "cp1")

	r := e.join(l, second.Token, "cp1")
	want(t, r, http.StatusUnauthorized, apiv1.CodeUnauthenticated)
	if n := e.tokens(); n != 2 {
		t.Fatalf("%d tokens stored, want 2: a refused redemption must not consume the token", n)
	}
	// cp2 registered by reporting facts with a certificate of its own.
	want(t, e.call(e.client(apiv1.RoleNode, "cp2"), l, http.MethodPut, apiv1.NodePath("cp2", "facts"), api.NodeFacts{Hostname: "cp2"}), http.StatusOK, "")
	want(t, e.join(l, legacy.Token, "cp2"), http.StatusUnauthorized, apiv1.CodeUnauthenticated)

	// New plain tokens for registered nodes are refused at creation.
	for _, id := range []string{"cp1", "cp2"} {
		r := e.call(admin, l, http.MethodPost, apiv1.PathTokens, apiv1.TokenRequest{NodeID: id})
		want(t, r, http.StatusConflict, apiv1.CodeConflict)
		if !strings.Contains(r.errorBody(t).Message, "--rekey") {
			t.Fatalf("refusal %s does not point at --rekey", r.body)
		}
	}
	// A re-key token for a node that is not registered is refused too.
	want(t, e.call(admin, l, http.MethodPost, apiv1.PathTokens, apiv1.TokenRequest{NodeID: "cp9", Rekey: true}), http.StatusConflict, apiv1.CodeConflict)
	// cp1's certificate still works: nothing was taken over.
	want(t, e.call(e.clientFor(cp1), l, http.MethodGet, apiv1.NodePath("cp1", "state"), nil), http.StatusOK, "")
}

// TestRekeyRevokesEarlierCertificates runs on one and on three replicas:
// redeeming a re-key token revokes every earlier certificate of the node,
// on every replica, on new connections (refused handshake) and on kept
// alive ones (401), and the revocation survives a snapshot and restart.
func TestRekeyRevokesEarlierCertificates(t *testing.T) {
	for _, replicas := range []int{1, 3} {
		t.Run(map[int]string{1: "one replica", 3: "three replicas"}[replicas], func(t *testing.T) {
			e := newEnv(t, replicas)
			l := e.leader()
			old := e.joined(e.newToken(apiv1.TokenRequest{NodeID: "cp1"}).Token, "cp1")
			// A renewed certificate is an earlier certificate too.
			oldClient := e.clientFor(old)
			r := e.call(oldClient, l, http.MethodPost, apiv1.NodePath("cp1", "renew"), struct{}{})
			want(t, r, http.StatusOK, "")
			var cr apiv1.CertResponse
			r.decode(t, &cr)
			renewed := pki.KeyPair{CertPEM: []byte(cr.Cert), KeyPEM: []byte(cr.Key)}
			for _, a := range e.apis() {
				if e.handshakeRefused(old, a) {
					t.Fatalf("%s refuses the old certificate before the re-key", a.Addr)
				}
			}

			rekey := e.newToken(apiv1.TokenRequest{NodeID: "cp1", Rekey: true})
			fresh := e.joined(rekey.Token, "cp1")
			e.c.WaitCaughtUp()
			for _, a := range e.apis() {
				for name, kp := range map[string]pki.KeyPair{"joined": old, "renewed": renewed} {
					if !e.handshakeRefused(kp, a) {
						t.Fatalf("%s accepts the %s certificate after the re-key", a.Addr, name)
					}
				}
				want(t, e.call(e.clientFor(fresh), a, http.MethodGet, apiv1.NodePath("cp1", "state")+"?stale=true", nil), http.StatusOK, "")
			}
			// The connection opened before the re-key is answered 401.
			r = e.call(oldClient, l, http.MethodGet, apiv1.NodePath("cp1", "state"), nil)
			want(t, r, http.StatusUnauthorized, apiv1.CodeUnauthenticated)
			for _, kp := range []pki.KeyPair{old, renewed} {
				if _, ok := e.c.WaitLeader().Node().State().Get(apiv1.KindRevocation, serialOf(t, kp)); !ok {
					t.Fatalf("no revocation of %s", serialOf(t, kp))
				}
			}
			e.findAudit(func(a apiv1.AuditEntry) bool {
				return a.Route == "POST /v1/join" && a.Object == "Node/cp1" && a.Result == http.StatusOK
			})

			// The revocation is in the snapshot a replica restarts from.
			last := len(e.c.Replicas()) - 1
			rep := e.c.Replica(last)
			if err := rep.Node().Raft().Snapshot().Error(); err != nil {
				t.Fatal(err)
			}
			e.c.Stop(last)
			e.c.Restart(last)
			e.c.WaitCaughtUp()
			if !e.handshakeRefused(old, apiserve.Of(rep)) {
				t.Fatal("a restarted replica accepts the revoked certificate")
			}
		})
	}
}

// apis returns every running replica's API.
func (e *env) apis() []*apiserve.API {
	var out []*apiserve.API
	for _, r := range e.c.Running() {
		out = append(out, apiserve.Of(r))
	}
	return out
}

// TestTokenTTLBounds: a token lifetime outside [1m, 7d] is refused with a
// message naming the bounds; the bounds themselves are accepted.
func TestTokenTTLBounds(t *testing.T) {
	e := newEnv(t, 1)
	admin := e.client(apiv1.RoleClusterAdmin, "alice")
	for _, ttl := range []string{"1ns", "0", "0s", "-1h", "59s", "168h0m1s", "100000h", "soon"} {
		r := e.call(admin, e.leader(), http.MethodPost, apiv1.PathTokens, apiv1.TokenRequest{NodeID: "n1", TTL: ttl})
		want(t, r, http.StatusBadRequest, apiv1.CodeBadRequest)
		if msg := r.errorBody(t).Message; !strings.Contains(msg, "from 1m0s to 7d (168h0m0s)") {
			t.Fatalf("ttl %s: message %q does not name the bounds", ttl, msg)
		}
	}
	for ttl, d := range map[string]time.Duration{"1m": apiv1.MinTokenTTL, "168h": apiv1.MaxTokenTTL} {
		tok := e.newToken(apiv1.TokenRequest{NodeID: "n1", TTL: ttl})
		if w := e.clock.Now().Add(d).UTC().Format(time.RFC3339); tok.Expires != w {
			t.Fatalf("ttl %s expires %s, want %s", ttl, tok.Expires, w)
		}
	}
	if n := e.tokens(); n != 2 {
		t.Fatalf("%d tokens stored, want the 2 at the bounds", n)
	}
}

// TestBadNodeIDs: ids that are not DNS labels are refused for tokens and
// joins.
func TestBadNodeIDs(t *testing.T) {
	e := newEnv(t, 1)
	admin := e.client(apiv1.RoleClusterAdmin, "alice")
	tok := e.newToken(apiv1.TokenRequest{NodeID: "n1"})
	for _, id := range []string{"", ".", "..", "-", "-a", "a-", ".a", "a.", "a..b", "a/b", "A", "a_b", strings.Repeat("a", 64)} {
		r := e.call(admin, e.leader(), http.MethodPost, apiv1.PathTokens, apiv1.TokenRequest{NodeID: id})
		want(t, r, http.StatusBadRequest, apiv1.CodeBadRequest)
		want(t, e.join(e.leader(), tok.Token, id), http.StatusBadRequest, apiv1.CodeBadRequest)
	}
	e.newToken(apiv1.TokenRequest{NodeID: strings.Repeat("a", 63)})
	if n := e.tokens(); n != 2 {
		t.Fatalf("%d tokens stored, want 2", n)
	}
}

// TestNodeCertsAreShortLived: join and renewal issue certificates valid
// for the node validity (24h by default), not a year.
func TestNodeCertsAreShortLived(t *testing.T) {
	e := newEnv(t, 1)
	kp := e.joined(e.newToken(apiv1.TokenRequest{NodeID: "n1"}).Token, "n1")
	c, err := pki.ParseCert(kp.CertPEM)
	if err != nil {
		t.Fatal(err)
	}
	if want := e.clock.Now().Add(apiv1.DefaultNodeCertValidity); !c.NotAfter.Equal(want) {
		t.Fatalf("node certificate expires %s, want %s", c.NotAfter, want)
	}
}
