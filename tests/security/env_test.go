package security

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/controller"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/raftnode"
	"kcore.dev/kcore/pkg/secrets"
	"kcore.dev/kcore/pkg/server"
	"kcore.dev/kcore/pkg/version"
	"kcore.dev/kcore/tests/apiserve"
	"kcore.dev/kcore/tests/harness"
)

// clock is a settable clock for token expiry.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// caAge is how long before a test starts its CA was made.
const caAge = 100 * 24 * time.Hour

// env is a cluster of replicas, each with an HTTPS API.
type env struct {
	t       *testing.T
	c       *harness.Cluster
	ca      *pki.CA
	keyring *secrets.Keyring
	clock   *clock
	tlsCert tls.Certificate
	// ticks holds each replica's summary ticker, driven by tick.
	ticksMu sync.Mutex
	ticks   map[string]chan time.Time
	opts    envOptions
}

// envOptions change how newEnvWith builds replicas.
type envOptions struct {
	// limits are every replica's API limits.
	limits server.Limits
	// raftTLS carries raft over the controller's TLS stream layer with
	// these limits instead of plain TCP.
	raftTLS *controller.RaftLimits
	// tweak adjusts every replica's server config; nil keeps the defaults.
	tweak func(*server.Config)
}

func newEnv(t *testing.T, replicas int) *env {
	t.Helper()
	return newEnvWith(t, replicas, envOptions{})
}

// newEnvWith is newEnv with opts applied to every replica.
func newEnvWith(t *testing.T, replicas int, opts envOptions) *env {
	t.Helper()
	// The settable clock starts at the real time: issued certificates are
	// checked against the real clock on every handshake.
	now := time.Now().UTC().Truncate(time.Second)
	// The CA dates from before every certificate the tests back-date, so
	// an expired node certificate still chains to a CA valid when it
	// expired, as it does in a real cluster.
	ca, err := pki.NewCA("kcore-test", time.Now().Add(-caAge), caAge+24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	key, err := secrets.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	kr, err := secrets.New(key)
	if err != nil {
		t.Fatal(err)
	}
	kp, err := ca.Issue(pki.CertRequest{
		CommonName: "controller", Organization: []string{apiv1.RoleController},
		DNSNames: []string{"localhost"}, IPs: []net.IP{net.ParseIP("127.0.0.1")},
		Usage: pki.UsageServer | pki.UsageClient, Validity: time.Hour,
	}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ca: ca, keyring: kr, clock: &clock{now: now}, tlsCert: cert, opts: opts, ticks: map[string]chan time.Time{}}
	hooks := harness.Hooks{Started: e.startAPI, Stopping: apiserve.Stop}
	if opts.raftTLS != nil {
		hooks.Configure = func(_ *harness.Replica, cfg *raftnode.Config) {
			tcp := cfg.StreamLayer.(*raftnode.TCPStreamLayer)
			cfg.StreamLayer = controller.NewTLSStreamLayer(tcp.Listener, nil, cert, ca.Pool(), *opts.raftTLS, nil)
		}
	}
	e.c = harness.New(t, harness.Options{Replicas: replicas, Hooks: hooks})
	e.recordMembers()
	return e
}

func (e *env) startAPI(r *harness.Replica) error {
	cfg := server.Config{
		CA:         e.ca,
		Keyring:    e.keyring,
		ForwardTLS: server.ClientTLS(e.tlsCert, e.ca.Pool()),
		Now:        e.clock.Now,
		Limits:     e.opts.limits,
	}
	if e.opts.tweak != nil {
		e.opts.tweak(&cfg)
	}
	cfg.Anonymous.SummaryTicks = e.ticker(r.ID)
	return apiserve.Start(r, cfg, e.tlsCert, e.ca)
}

// ticker returns replica id's summary ticker, the same across restarts.
func (e *env) ticker(id string) chan time.Time {
	e.ticksMu.Lock()
	defer e.ticksMu.Unlock()
	ch, ok := e.ticks[id]
	if !ok {
		ch = make(chan time.Time)
		e.ticks[id] = ch
	}
	return ch
}

// tick fires r's summary ticker once. The ticker is unbuffered, so when
// tick returns r has taken the tick; the tick before it is fully handled.
func (e *env) tick(r *harness.Replica) {
	e.t.Helper()
	select {
	case e.ticker(r.ID) <- e.clock.Now():
	case <-time.After(harness.DefaultTimeout):
		e.t.Fatalf("replica %s did not take its summary tick", r.ID)
	}
}

// recordMembers writes every replica's Member object through the leader,
// as kcore-controller does on bootstrap and join.
func (e *env) recordMembers() {
	e.t.Helper()
	e.c.Eventually(harness.DefaultTimeout, func() error {
		l := e.c.Leader()
		if l == nil {
			return errors.New("no leader")
		}
		for _, r := range e.c.Running() {
			if _, err := apiserve.Of(l).Server.RecordMember(context.Background(), r.ID, r.Addr, apiserve.Of(r).Addr, version.Schema); err != nil {
				return err
			}
		}
		return nil
	})
	e.c.WaitCaughtUp()
}

// leader and follower return a replica's API.
func (e *env) leader() *apiserve.API { return apiserve.Of(e.c.WaitLeader()) }

func (e *env) follower() *apiserve.API {
	l := e.c.WaitLeader()
	for _, r := range e.c.Running() {
		if r != l {
			return apiserve.Of(r)
		}
	}
	e.t.Fatal("no follower")
	return nil
}

// client returns an HTTPS client presenting a certificate for role and name
// from the cluster's CA.
func (e *env) client(role, name string) *http.Client {
	e.t.Helper()
	kp, err := e.ca.Issue(pki.CertRequest{CommonName: name, Organization: []string{role}, Usage: pki.UsageClient, Validity: time.Hour}, time.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	return e.clientFor(kp)
}

func (e *env) clientFor(kp pki.KeyPair) *http.Client {
	e.t.Helper()
	return e.clientWith(kp, false)
}

// clientWith builds a client for kp; force presents the certificate even
// when the server does not list its issuer as acceptable.
func (e *env) clientWith(kp pki.KeyPair, force bool) *http.Client {
	e.t.Helper()
	var certs []tls.Certificate
	if kp.CertPEM != nil {
		cert, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM)
		if err != nil {
			e.t.Fatal(err)
		}
		certs = append(certs, cert)
	}
	cfg := &tls.Config{RootCAs: e.ca.Pool(), Certificates: certs, MinVersion: tls.VersionTLS13}
	if force {
		cfg.Certificates = nil
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &certs[0], nil }
	}
	tr := &http.Transport{TLSClientConfig: cfg}
	e.t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: time.Minute}
}

// response is a decoded answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) errorBody(t *testing.T) apiv1.ErrorBody {
	t.Helper()
	var eb apiv1.ErrorBody
	if err := json.Unmarshal(r.body, &eb); err != nil {
		t.Fatalf("decode error body %q: %v", r.body, err)
	}
	return eb
}

func (r response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %q: %v", r.body, err)
	}
}

// do sends a request and reads the whole answer; a transport error fails
// the test unless allowed by returning it.
func do(c *http.Client, method, url string, body any) (response, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return response{}, err
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return response{}, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}, err
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// call is do that fails the test on a transport error.
func (e *env) call(c *http.Client, a *apiserve.API, method, path string, body any) response {
	e.t.Helper()
	r, err := do(c, method, "https://"+a.Addr+path, body)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

// want checks a response's status and, for errors, its code.
func want(t *testing.T, r response, status int, code string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	if code != "" {
		if eb := r.errorBody(t); eb.Code != code {
			t.Fatalf("code %q, want %q; body %s", eb.Code, code, r.body)
		}
	}
}

// audit returns the audit entries the leader lists.
func (e *env) audit() []apiv1.AuditEntry {
	e.t.Helper()
	r := e.call(e.client(apiv1.RoleClusterAdmin, "auditor"), e.leader(), http.MethodGet, apiv1.PathAudit, nil)
	want(e.t, r, http.StatusOK, "")
	var out []apiv1.AuditEntry
	r.decode(e.t, &out)
	return out
}

// findAudit polls until an audit entry matching pred is committed.
func (e *env) findAudit(pred func(apiv1.AuditEntry) bool) apiv1.AuditEntry {
	e.t.Helper()
	var found apiv1.AuditEntry
	e.c.Eventually(harness.DefaultTimeout, func() error {
		for _, a := range e.audit() {
			if pred(a) {
				found = a
				return nil
			}
		}
		return fmt.Errorf("no matching audit entry")
	})
	return found
}

// probeKind is a kind without a model of its own: cluster-admin writes it
// through /v1/objects as any JSON value, so tests use it for an ordinary,
// audited object write (clusters and updates change only through plan and
// apply).
const probeKind = "Probe"

// probeJSON is a probeKind object.
func probeJSON(name string) string {
	return `{"name":"` + name + `"}`
}

// seedCluster stores clusterJSON(name), defaulted, through raft, standing
// in for a plan and apply of it (which would check for nodes these tests do
// not register), and returns the index it was applied at.
func (e *env) seedCluster(name string) uint64 {
	e.t.Helper()
	return e.seedClusterJSON(name, clusterJSON(name))
}

// seedClusterJSON is seedCluster of a manifest given as JSON.
func (e *env) seedClusterJSON(name, manifest string) uint64 {
	e.t.Helper()
	var kc api.KubernetesCluster
	if err := json.Unmarshal([]byte(manifest), &kc); err != nil {
		e.t.Fatal(err)
	}
	kc.Default()
	return e.c.Seed(api.KindKubernetesCluster, name, kc)
}

// clusterJSON is a valid KubernetesCluster manifest as JSON.
func clusterJSON(name string) string {
	return `{"apiVersion":"kcore.dev/v1","kind":"KubernetesCluster","metadata":{"name":"` + name + `"},
	"spec":{"clusterCidr":"10.244.0.0/16","serviceCidr":"10.96.0.0/12","apiServerEndpoint":"10.0.0.10:6443",
	"scheduleOnControlPlane":true,"controlPlaneNodes":[{"nodeId":"cp1","advertiseAddress":"10.0.0.11"}]}}`
}
