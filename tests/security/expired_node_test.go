package security

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/server"
	"kcore.dev/kcore/tests/apiserve"
	"kcore.dev/kcore/tests/harness"
)

// expiredNode joins node id with the controller's clock set back, so the
// certificate the controller issues and records as the node's current one
// expired ago before now: a machine that was off past its validity.
func (e *env) expiredNode(id string, ago time.Duration) pki.KeyPair {
	e.t.Helper()
	tok := e.newToken(apiv1.TokenRequest{NodeID: id})
	back := apiv1.DefaultNodeCertValidity + ago
	e.clock.Advance(-back)
	r := e.join(e.leader(), tok.Token, id)
	e.clock.Advance(back)
	want(e.t, r, http.StatusOK, "")
	var jr apiv1.JoinResponse
	r.decode(e.t, &jr)
	kp := pki.KeyPair{CertPEM: []byte(jr.Cert), KeyPEM: []byte(jr.Key)}
	if c, err := pki.ParseCert(kp.CertPEM); err != nil || !c.NotAfter.Before(time.Now()) {
		e.t.Fatalf("node %s's certificate is not expired: %v", id, err)
	}
	e.c.WaitCaughtUp()
	return kp
}

// renewed calls node id's renew route at a with kp and returns the new pair.
func (e *env) renewed(kp pki.KeyPair, a *apiserve.API, id string) pki.KeyPair {
	e.t.Helper()
	r := e.callSettled(e.clientFor(kp), a, http.MethodPost, apiv1.NodePath(id, "renew"), struct{}{})
	want(e.t, r, http.StatusOK, "")
	var cr apiv1.CertResponse
	r.decode(e.t, &cr)
	out := pki.KeyPair{CertPEM: []byte(cr.Cert), KeyPEM: []byte(cr.Key)}
	c, err := pki.ParseCert(out.CertPEM)
	if err != nil {
		e.t.Fatal(err)
	}
	if c.Subject.CommonName != id || !c.NotAfter.After(time.Now()) {
		e.t.Fatalf("renewed certificate for %s until %s", c.Subject.CommonName, c.NotAfter)
	}
	return out
}

// callSettled is call retried while the cluster has no leader (503), which
// a loaded machine's election may cause in the middle of a test.
func (e *env) callSettled(c *http.Client, a *apiserve.API, method, path string, body any) response {
	e.t.Helper()
	var r response
	e.c.Eventually(harness.DefaultTimeout, func() error {
		r = e.call(c, a, method, path, body)
		if r.status == http.StatusServiceUnavailable {
			return fmt.Errorf("%s %s: no leader: %s", method, path, r.body)
		}
		return nil
	})
	return r
}

// wantExpired checks r is the 401 an expired certificate gets.
func wantExpired(t *testing.T, r response) {
	t.Helper()
	want(t, r, http.StatusUnauthorized, apiv1.CodeUnauthenticated)
	if msg := r.errorBody(t).Message; !strings.Contains(msg, "expired") {
		t.Fatalf("message %q does not say the certificate expired", msg)
	}
}

// TestExpiredNodeCertRenewsItself runs on one and on three replicas: a
// node whose certificate expired (within the grace) while its machine was
// off renews it over real TLS, at the leader and through a follower that
// forwards the call, and then works normally with the new certificate;
// the renewal is audited, and the expired certificate, no longer the
// node's current one, cannot renew a second time.
func TestExpiredNodeCertRenewsItself(t *testing.T) {
	for _, replicas := range []int{1, 3} {
		t.Run(map[int]string{1: "one replica", 3: "three replicas"}[replicas], func(t *testing.T) {
			e := newEnv(t, replicas)
			apis := []*apiserve.API{e.leader()}
			if replicas > 1 {
				apis = append(apis, e.follower())
			}
			for i, a := range apis {
				id := []string{"n1", "n2"}[i]
				old := e.expiredNode(id, 3*24*time.Hour)
				fresh := e.renewed(old, a, id)
				e.c.WaitCaughtUp()
				for _, b := range e.apis() {
					want(t, e.callSettled(e.clientFor(fresh), b, http.MethodPost, apiv1.NodePath(id, "heartbeat"), struct{}{}), http.StatusOK, "")
					want(t, e.callSettled(e.clientFor(fresh), b, http.MethodGet, apiv1.NodePath(id, "state"), nil), http.StatusOK, "")
				}
				r := e.callSettled(e.clientFor(old), a, http.MethodPost, apiv1.NodePath(id, "renew"), struct{}{})
				want(t, r, http.StatusUnauthorized, apiv1.CodeUnauthenticated)
				if msg := r.errorBody(t).Message; !strings.Contains(msg, "current") {
					t.Fatalf("a second renewal with the expired certificate: %q", msg)
				}
				e.findAudit(func(a apiv1.AuditEntry) bool {
					return a.Route == "POST /v1/nodes/{id}/renew" && a.Subject == id && a.Role == apiv1.RoleNode && a.Result == http.StatusOK
				})
			}
		})
	}
}

// routePath fills a route pattern's path values, node ones with id.
func routePath(pattern, id string) (method, path string) {
	method, path, _ = strings.Cut(pattern, " ")
	for k, v := range map[string]string{"{id}": id, "{kind}": probeKind, "{name...}": "p1", "{name}": "c1", "{snapshot}": "s1"} {
		path = strings.ReplaceAll(path, k, v)
	}
	return method, path
}

// TestExpiredNodeCertOnlyRenews: an expired node certificate is refused
// with 401 on every route of the routing table but its own node's renew
// route, at the leader and at a follower (which forwards or answers
// itself); another node's renew route is refused too. Expired certificates
// of every other role are refused at the handshake, as before.
func TestExpiredNodeCertOnlyRenews(t *testing.T) {
	e := newEnv(t, 3)
	old := e.expiredNode("n1", time.Hour)
	routes := 0
	for _, ri := range server.RouteTable() {
		if ri.Pattern == "POST /v1/nodes/{id}/renew" {
			continue
		}
		routes++
		method, path := routePath(ri.Pattern, "n1")
		for _, a := range []*apiserve.API{e.leader(), e.follower()} {
			t.Run(ri.Pattern+" at "+a.Addr, func(t *testing.T) {
				wantExpired(t, e.callSettled(e.clientFor(old), a, method, path, `{}`))
			})
		}
	}
	if routes < 30 {
		t.Fatalf("only %d routes checked", routes)
	}
	for _, a := range []*apiserve.API{e.leader(), e.follower()} {
		wantExpired(t, e.callSettled(e.clientFor(old), a, http.MethodPost, apiv1.NodePath("n2", "renew"), struct{}{}))
	}
	if _, ok := e.c.WaitLeader().Node().State().Get(apiv1.KindNodeIdentity, "n2"); ok {
		t.Fatal("a refused renewal created n2")
	}
	for _, role := range []string{apiv1.RoleViewer, apiv1.RoleOperator, apiv1.RoleClusterAdmin, apiv1.RoleController} {
		kp, err := e.ca.Issue(pki.CertRequest{CommonName: "p-" + role, Organization: []string{role}, Usage: pki.UsageClient, Validity: time.Hour}, time.Now().Add(-2*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range e.apis() {
			if !e.handshakeRefused(kp, a) {
				t.Fatalf("%s accepts an expired %s certificate", a.Addr, role)
			}
		}
	}
	// The expired certificate still renews itself after all that.
	e.renewed(old, e.follower(), "n1")
}

// TestExpiredNodeCertMustBeCurrent: revocations of expired certificates
// are pruned, so an expired certificate renews only when it is the one the
// controller recorded as the node's current certificate: after a re-key
// (which revokes only unexpired certificates) the old expired one is
// refused; a revoked expired certificate is refused at the handshake; a
// node whose certificate is current renews.
func TestExpiredNodeCertMustBeCurrent(t *testing.T) {
	e := newEnv(t, 3)
	old := e.expiredNode("n1", time.Hour)
	rekey := e.newToken(apiv1.TokenRequest{NodeID: "n1", Rekey: true})
	fresh := e.joined(rekey.Token, "n1")
	e.c.WaitCaughtUp()
	for _, a := range e.apis() {
		r := e.callSettled(e.clientFor(old), a, http.MethodPost, apiv1.NodePath("n1", "renew"), struct{}{})
		want(t, r, http.StatusUnauthorized, apiv1.CodeUnauthenticated)
		if msg := r.errorBody(t).Message; !strings.Contains(msg, "current") {
			t.Fatalf("renewal with a re-keyed node's old certificate: %q", msg)
		}
	}
	want(t, e.callSettled(e.clientFor(fresh), e.leader(), http.MethodGet, apiv1.NodePath("n1", "state"), nil), http.StatusOK, "")

	revoked := e.expiredNode("n2", time.Hour)
	serial := serialOf(t, revoked)
	e.c.Seed(apiv1.KindRevocation, serial, map[string]string{"serial": serial, "role": apiv1.RoleNode, "name": "n2", "notAfter": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	e.c.WaitCaughtUp()
	for _, a := range e.apis() {
		if !e.handshakeRefused(revoked, a) {
			t.Fatalf("%s accepts a revoked expired certificate", a.Addr)
		}
	}

	current := e.expiredNode("n3", time.Hour)
	e.renewed(current, e.follower(), "n3")
}

// TestNodeCertGrace: a node certificate expired for less than the grace
// renews itself; one expired for longer, or any once the grace is 0, is
// refused at the handshake as before.
func TestNodeCertGrace(t *testing.T) {
	grace := func(d time.Duration) envOptions {
		return envOptions{tweak: func(c *server.Config) { c.NodeCertGrace = d }}
	}
	e := newEnvWith(t, 1, grace(server.MinNodeCertGrace))
	inside := e.expiredNode("n1", server.MinNodeCertGrace-10*time.Minute)
	outside := e.expiredNode("n2", server.MinNodeCertGrace+10*time.Minute)
	e.renewed(inside, e.leader(), "n1")
	if !e.handshakeRefused(outside, e.leader()) {
		t.Fatal("a certificate expired for longer than the grace completes a handshake")
	}

	off := newEnvWith(t, 1, grace(server.NoNodeCertGrace))
	kp := off.expiredNode("n1", time.Minute)
	if !off.handshakeRefused(kp, off.leader()) {
		t.Fatal("an expired certificate completes a handshake with the grace off")
	}
}

// forwardedAs sends a request through a controller-role peer's certificate
// carrying headers that name another caller, as a follower forwarding.
func (e *env) forwardedAs(via *http.Client, method, path string, headers map[string]string) response {
	e.t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, "https://"+e.leader().Addr+path, strings.NewReader(`{}`))
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := via.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var body strings.Builder
	if _, err := io.Copy(&body, resp.Body); err != nil {
		e.t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: []byte(body.String())}
}

// TestForwardedExpiredMark: the leader judges a forwarded caller's expiry
// itself: a follower that drops the expiry header does not make an
// expired node certificate good (the leader finds the certificate's
// record), and a caller cannot send the forwarding headers itself to hide
// that its certificate expired.
func TestForwardedExpiredMark(t *testing.T) {
	e := newEnv(t, 1)
	old := e.expiredNode("n1", time.Hour)
	serial := serialOf(t, old)
	peer := e.client(apiv1.RoleController, "r9")
	dropped := map[string]string{
		apiv1.HeaderForwarded:       "r9",
		"X-Kcore-Forwarded-Subject": "n1",
		"X-Kcore-Forwarded-Role":    apiv1.RoleNode,
		"X-Kcore-Forwarded-Serial":  serial,
	}
	wantExpired(t, e.forwardedAs(peer, http.MethodGet, apiv1.NodePath("n1", "state"), dropped))
	forged := map[string]string{
		apiv1.HeaderForwarded:         "r9",
		"X-Kcore-Forwarded-Not-After": time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
	}
	wantExpired(t, e.forwardedAs(e.clientFor(old), http.MethodGet, apiv1.NodePath("n1", "state"), forged))
	e.renewed(old, e.leader(), "n1")
}

// TestExpiredNodeConnectionEnds: one HTTP/2 client, presenting whatever
// certificate its source holds at each handshake, renews its expired
// certificate and heartbeats at once, closing nothing itself: the API
// ended the connection set up with the expired certificate, so the
// heartbeat makes a new handshake with the renewed one (else the kept-alive
// connection would be refused for good: the expired certificate is no
// longer even the node's current one).
func TestExpiredNodeConnectionEnds(t *testing.T) {
	e := newEnv(t, 3)
	for i, a := range []*apiserve.API{e.leader(), e.follower()} {
		id := []string{"n1", "n2"}[i]
		old := e.expiredNode(id, time.Hour)
		var mu sync.Mutex
		cur, err := tls.X509KeyPair(old.CertPEM, old.KeyPEM)
		if err != nil {
			t.Fatal(err)
		}
		cfg := &tls.Config{RootCAs: e.ca.Pool(), MinVersion: tls.VersionTLS13, GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			mu.Lock()
			defer mu.Unlock()
			c := cur
			return &c, nil
		}}
		tr := &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true}
		t.Cleanup(tr.CloseIdleConnections)
		hc := &http.Client{Transport: tr, Timeout: time.Minute}
		r := e.callSettled(hc, a, http.MethodPost, apiv1.NodePath(id, "renew"), struct{}{})
		want(t, r, http.StatusOK, "")
		var cr apiv1.CertResponse
		r.decode(t, &cr)
		next, err := tls.X509KeyPair([]byte(cr.Cert), []byte(cr.Key))
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		cur = next
		mu.Unlock()
		want(t, e.callSettled(hc, a, http.MethodPost, apiv1.NodePath(id, "heartbeat"), struct{}{}), http.StatusOK, "")
	}
}
