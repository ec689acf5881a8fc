package security

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/controller"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/server"
	"kcore.dev/kcore/tests/apiserve"
	"kcore.dev/kcore/tests/harness"
)

// Attack shape of the flood test: connections come from attackSources
// loopback addresses, at most maxAttack of them, and each listener keeps
// perSource of them from each source.
const (
	maxAttack     = 2000
	attackSources = 3
	perSource     = 16
	// fdReserve is what the rest of the test process may need besides
	// the attack's own connections.
	fdReserve = 512
)

// attackBudget is how many attacking connections this process can open
// without running out of file descriptors itself: the test adapts to the
// ulimit instead of needing a high one.
func attackBudget(t *testing.T, held int) int {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	// Each attacking connection costs one descriptor here; the ones the
	// servers hold cost a second.
	n := min(maxAttack, int(lim.Cur)-fdReserve-held)
	if n < 2*held {
		t.Skipf("file descriptor limit %d too low for a flood past the caps", lim.Cur)
	}
	return n
}

// attacker holds idle and half-done TLS connections and counts the ones
// the server closed.
type attacker struct {
	t      *testing.T
	conns  []net.Conn
	closed atomic.Int64
}

// open dials addr from src; half sends the first bytes of a TLS record and
// stalls, as a half-done handshake does.
func (a *attacker) open(src, addr string, half bool) {
	a.t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 10 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		// A listener past its cap may reset before the dial returns.
		a.closed.Add(1)
		return
	}
	a.conns = append(a.conns, c)
	if half {
		_, _ = c.Write([]byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01})
	}
	go func() {
		_, _ = io.Copy(io.Discard, c)
		a.closed.Add(1)
	}()
}

func (a *attacker) close() {
	for _, c := range a.conns {
		c.Close()
	}
}

// waitClosed polls until the servers closed want connections.
func (a *attacker) waitClosed(want int64) {
	a.t.Helper()
	if err := harness.Poll(harness.DefaultTimeout, func() error {
		if got := a.closed.Load(); got != want {
			return fmt.Errorf("server closed %d attacking connections, want %d", got, want)
		}
		return nil
	}); err != nil {
		a.t.Fatal(err)
	}
}

// targets are every replica's raft and API addresses.
func (e *env) targets() []string {
	var out []string
	for _, r := range e.c.Running() {
		out = append(out, r.Addr, apiserve.Of(r).Addr)
	}
	return out
}

// writeThrough polls until a fresh admin client (new connections) writes a
// cluster through replica r's API.
func (e *env) writeThrough(r *harness.Replica, name string) {
	e.t.Helper()
	admin := e.client(apiv1.RoleClusterAdmin, "alice")
	url := "https://" + apiserve.Of(r).Addr + apiv1.ObjectPath(probeKind, name)
	e.c.Eventually(harness.DefaultTimeout, func() error {
		resp, err := do(admin, http.MethodPut, url, probeJSON(name))
		if err != nil {
			return err
		}
		if resp.status != http.StatusOK {
			return fmt.Errorf("write through %s: status %d %s", r.ID, resp.status, resp.body)
		}
		return nil
	})
}

// TestConnectionFloodKeepsClusterServing floods every replica's raft port
// and API with idle and half-done TLS connections: each listener keeps
// perSource per source and closes the rest at once, and writes through
// every replica still complete, over the peers' existing raft connections
// and fresh API connections.
func TestConnectionFloodKeepsClusterServing(t *testing.T) {
	long := 10 * time.Minute // the held connections stay held while the test runs
	e := newEnvWith(t, 3, envOptions{
		limits: server.Limits{MaxConns: 64, MaxConnsPerSource: perSource, ReadHeaderTimeout: long},
		raftTLS: &controller.RaftLimits{
			HandshakeTimeout: long, IdleTimeout: long, MaxConns: 64, MaxConnsPerSource: perSource,
		},
	})
	for _, r := range e.c.Running() {
		e.writeThrough(r, "before-"+r.ID)
	}
	targets := e.targets()
	held := len(targets) * attackSources * perSource
	budget := attackBudget(t, held)
	// Every target gets more than perSource connections from each source,
	// so exactly the ones past the caps are closed.
	if budget/len(targets)/attackSources <= perSource {
		t.Skipf("attack budget %d does not pass the caps", budget)
	}
	a := &attacker{t: t}
	t.Cleanup(a.close)
	for i := range budget {
		src := fmt.Sprintf("127.0.1.%d", 1+i%attackSources)
		a.open(src, targets[(i/attackSources)%len(targets)], i%2 == 0)
	}
	a.waitClosed(int64(budget - held))
	for _, r := range e.c.Running() {
		e.writeThrough(r, "during-"+r.ID)
	}
	if got := a.closed.Load(); got != int64(budget-held) {
		t.Fatalf("%d attacking connections closed, want %d: held ones were dropped", got, budget-held)
	}
}

// TestHandshakeAndIdleDeadlines shows the raft port closes connections
// that do not finish their TLS handshake, or finish it and send no RPC,
// and the API closes ones that send no request, within their deadlines.
func TestHandshakeAndIdleDeadlines(t *testing.T) {
	short := 300 * time.Millisecond
	e := newEnvWith(t, 3, envOptions{
		limits:  server.Limits{ReadHeaderTimeout: short},
		raftTLS: &controller.RaftLimits{HandshakeTimeout: short, IdleTimeout: short},
	})
	a := &attacker{t: t}
	t.Cleanup(a.close)
	opened := 0
	for _, addr := range e.targets() {
		a.open("127.0.0.1", addr, false)
		a.open("127.0.0.1", addr, true)
		opened += 2
	}
	// A peer with a valid controller certificate that never sends an RPC.
	for _, r := range e.c.Running() {
		c, err := tls.Dial("tcp", r.Addr, &tls.Config{
			RootCAs: e.ca.Pool(), Certificates: []tls.Certificate{e.tlsCert}, MinVersion: tls.VersionTLS13,
		})
		if err != nil {
			t.Fatal(err)
		}
		a.conns = append(a.conns, c)
		opened++
		go func() {
			_, _ = io.Copy(io.Discard, c)
			a.closed.Add(1)
		}()
	}
	a.waitClosed(int64(opened))
	for _, r := range e.c.Running() {
		e.writeThrough(r, "after-"+r.ID)
	}
}

// rawRequest opens a TLS connection to addr presenting certs and sends the
// request line, headers and the first part of a body of length total.
func rawRequest(t *testing.T, e *env, addr string, certs []tls.Certificate, method, path string, total int, first string) *tls.Conn {
	t.Helper()
	c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: e.ca.Pool(), Certificates: certs, MinVersion: tls.VersionTLS13})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	head := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: kcore\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		method, path, total, first)
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSlowAnonymousBodyCutOff sends two slow bodies at once: the anonymous
// one is cut off at the anonymous body deadline, the authenticated one
// goes on past it and is served.
func TestSlowAnonymousBodyCutOff(t *testing.T) {
	e := newEnvWith(t, 1, envOptions{limits: server.Limits{AnonymousBodyTimeout: 300 * time.Millisecond}})
	addr := e.leader().Addr
	anon := rawRequest(t, e, addr, nil, http.MethodPost, apiv1.PathJoin, 1000, `{"token":"`)
	kp := e.issue(apiv1.RoleClusterAdmin, "alice")
	body := probeJSON("slow")
	authed := rawRequest(t, e, addr, []tls.Certificate{kp}, http.MethodPut,
		apiv1.ObjectPath(probeKind, "slow"), len(body), body[:10])

	// The anonymous body never completes: the server must stop waiting for
	// it well before this test's own deadline.
	_ = anon.SetReadDeadline(time.Now().Add(harness.DefaultTimeout))
	_, err := io.Copy(io.Discard, anon)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("anonymous slow body still held after %s", harness.DefaultTimeout)
	}
	// The authenticated caller is past the anonymous deadline now, and is
	// still served.
	if _, err := io.WriteString(authed, body[10:]); err != nil {
		t.Fatal(err)
	}
	_ = authed.SetReadDeadline(time.Now().Add(harness.DefaultTimeout))
	resp, err := http.ReadResponse(bufio.NewReader(authed), nil)
	if err != nil {
		t.Fatalf("authenticated slow body: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("authenticated slow body: status %d", resp.StatusCode)
	}
}

// issue returns a TLS certificate for role and name from the env's CA.
func (e *env) issue(role, name string) tls.Certificate {
	e.t.Helper()
	kp, err := e.ca.Issue(pki.CertRequest{CommonName: name, Organization: []string{role}, Usage: pki.UsageClient, Validity: time.Hour}, time.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	c, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM)
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}
