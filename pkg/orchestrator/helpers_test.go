package orchestrator

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/raftnode"
	"kcore.dev/kcore/pkg/secrets"
	"kcore.dev/kcore/pkg/store"
	"kcore.dev/kcore/tests/harness"
)

const waitFor = 30 * time.Second

// testKeyring is a keyring under a fixed key.
func testKeyring(t *testing.T) *secrets.Keyring {
	t.Helper()
	k, err := secrets.New([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// cpAddrs are the lab cluster's control planes; workerAddr its worker.
var testCPs = []string{"127.0.0.11", "127.0.0.12", "127.0.0.13"}

const (
	testWorker = "127.0.0.14"
	testVIP    = "127.0.0.100"
)

// labCluster is an HA three-control-plane cluster with one worker on
// loopback addresses; its API endpoint is the VIP on apiPort.
func labCluster(t *testing.T, name string, apiPort int) *api.KubernetesCluster {
	t.Helper()
	c := &api.KubernetesCluster{
		APIVersion: api.APIVersion, Kind: api.KindKubernetesCluster,
		Metadata: api.ObjectMeta{Name: name, Generation: 1},
		Spec: api.ClusterSpec{
			ClusterCIDR: "10.244.0.0/16", ServiceCIDR: "10.96.0.0/12",
			APIServerEndpoint: net.JoinHostPort(testVIP, strconv.Itoa(apiPort)),
			HighAvailability:  api.HASpec{Enabled: true, VIPAddress: testVIP, VIPInterface: "lo"},
			WorkerNodes:       []api.ClusterNode{{NodeID: "node-14", AdvertiseAddress: testWorker, Iface: "lo"}},
		},
	}
	for i, a := range testCPs {
		c.Spec.ControlPlaneNodes = append(c.Spec.ControlPlaneNodes, api.ClusterNode{NodeID: fmt.Sprintf("node-%d", 11+i), AdvertiseAddress: a, Iface: "lo"})
	}
	c.Default()
	if errs := c.Validate().Errors(); len(errs) > 0 {
		t.Fatalf("lab cluster invalid: %v", errs)
	}
	return c
}

// env is one test's controller: a raft cluster, the fake health endpoints and
// an orchestrator config.
type env struct {
	t       *testing.T
	rc      *harness.Cluster
	keyring *secrets.Keyring
	apiLn   net.Listener
	health  *fakeHealth
	cfg     Config
}

func newEnv(t *testing.T, replicas int) *env {
	t.Helper()
	return newEnvWith(t, harness.Options{Replicas: replicas})
}

// newEnvWith is newEnv with the harness options given.
func newEnvWith(t *testing.T, opts harness.Options) *env {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(testVIP, "0"))
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, rc: harness.New(t, opts), keyring: testKeyring(t), apiLn: ln}
	e.health = &fakeHealth{t: t, etcd: map[string]string{}, gw: newFakeGateway(), kube: newFakeKube()}
	e.cfg = Config{
		Keyring:        e.keyring,
		HealthInterval: time.Hour,
		RetryInterval:  20 * time.Millisecond,
		LastSeen:       func(string) (time.Time, bool) { return time.Now(), true },
		Checker:        &HTTPChecker{EtcdEndpoint: e.health.etcdURL},
		Etcd:           &HTTPEtcd{EtcdEndpoint: e.health.etcdURL},
		Logger:         harnessLogger(t),
	}
	return e
}

func (e *env) apiPort() int { return e.apiLn.Addr().(*net.TCPAddr).Port }

// leader is the current leader's node.
func (e *env) leader() *raftnode.Node { return e.rc.WaitLeader().Node() }

// state is the leader's store.
func (e *env) state() *store.State { return e.leader().State() }

// apply commits ops through whichever replica leads.
func (e *env) apply(ops ...store.Op) uint64 {
	e.t.Helper()
	cmd, err := store.Batch{Ops: ops}.Command()
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	res, err := e.rc.ApplyRetry(ctx, cmd)
	if err != nil {
		e.t.Fatal(err)
	}
	return res.Index
}

// putCluster stores c with phase as the server's apply route does: an
// existing cluster keeps its status and gets the next generation.
func (e *env) putCluster(c *api.KubernetesCluster, phase string) {
	e.t.Helper()
	if cur, ok := e.cluster(c.Metadata.Name); ok {
		c.Status = cur.Status
		c.Metadata.Generation = cur.Metadata.Generation + 1
	}
	c.Status.Phase = phase
	data, err := json.Marshal(c)
	if err != nil {
		e.t.Fatal(err)
	}
	e.apply(store.Op{Put: &store.Put{Kind: api.KindKubernetesCluster, Name: c.Metadata.Name, Data: data}})
}

// registerNodes stores a Node object for every member, as agents do when
// they report their facts, and registers it with the fake Kubernetes API
// as its kubelet would.
func (e *env) registerNodes(c *api.KubernetesCluster) {
	e.t.Helper()
	for _, m := range c.Spec.Members() {
		data, err := json.Marshal(api.Node{APIVersion: api.APIVersion, Kind: api.KindNode, Metadata: api.ObjectMeta{Name: m.NodeID},
			Facts: api.NodeFacts{Hostname: m.NodeID, Addresses: []string{m.AdvertiseAddress}}})
		if err != nil {
			e.t.Fatal(err)
		}
		e.apply(store.Op{Put: &store.Put{Kind: api.KindNode, Name: m.NodeID, Data: data}})
		e.health.kube.addNode(m.NodeID)
	}
}

// cluster reads the stored cluster.
func (e *env) cluster(name string) (*api.KubernetesCluster, bool) {
	obj, ok := e.state().Get(api.KindKubernetesCluster, name)
	if !ok {
		return nil, false
	}
	var c api.KubernetesCluster
	if err := json.Unmarshal(obj.Data, &c); err != nil {
		e.t.Fatal(err)
	}
	return &c, true
}

// runOrchestrator runs RunOnLeader on every replica until the test ends.
func (e *env) runOrchestrator() {
	for _, r := range e.rc.Replicas() {
		e.runOn(r.Node())
	}
}

func (e *env) runOn(n *raftnode.Node) {
	cfg := e.cfg
	cfg.Node = n
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		RunOnLeader(ctx, n.LeaderCh(), cfg)
	}()
	e.t.Cleanup(func() { cancel(); <-done })
}

// waitPhase waits until the cluster is in phase.
func (e *env) waitPhase(name, phase string) *api.KubernetesCluster {
	e.t.Helper()
	var c *api.KubernetesCluster
	if err := harness.Poll(waitFor, func() error {
		var ok bool
		c, ok = e.cluster(name)
		if !ok {
			return fmt.Errorf("cluster %s not stored", name)
		}
		if c.Status.Phase != phase {
			return fmt.Errorf("phase %q, want %q; conditions %+v", c.Status.Phase, phase, c.Status.Conditions)
		}
		return nil
	}); err != nil {
		e.t.Fatal(err)
	}
	return c
}

// states returns the stored NodeStates of cluster by node, secrets sealed.
func (e *env) states(cluster string) map[string]api.NodeState {
	out := map[string]api.NodeState{}
	for _, o := range e.state().ListPrefix(api.KindNodeState, cluster+"/") {
		var ns api.NodeState
		if err := json.Unmarshal(o.Data, &ns); err != nil {
			e.t.Fatal(err)
		}
		out[ns.NodeID] = ns
	}
	return out
}

// waitStates waits until every member of c has a NodeState.
func (e *env) waitStates(c *api.KubernetesCluster) map[string]api.NodeState {
	e.t.Helper()
	var out map[string]api.NodeState
	if err := harness.Poll(waitFor, func() error {
		out = e.states(c.Metadata.Name)
		for _, m := range c.Spec.Members() {
			if _, ok := out[m.NodeID]; !ok {
				return fmt.Errorf("no node state for %s", m.NodeID)
			}
		}
		return nil
	}); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// report stores what an agent would report after applying ns: every item
// ok, except the ones named in failed ("kind name").
func (e *env) report(ns api.NodeState, failed ...string) {
	e.t.Helper()
	bad := map[string]bool{}
	for _, f := range failed {
		bad[f] = true
	}
	rep := api.NodeReport{NodeID: ns.NodeID, Cluster: ns.Cluster, ObservedGeneration: ns.Generation}
	add := func(kind, name string) {
		it := api.ItemStatus{Kind: kind, Name: name, State: api.ItemOK}
		if bad[kind+" "+name] {
			it.State, it.Message = api.ItemFailed, "exit status 1"
		}
		rep.Items = append(rep.Items, it)
	}
	for _, f := range ns.Files {
		add("file", f.Path)
	}
	for _, u := range ns.Units {
		add("unit", u.Name)
	}
	data, err := json.Marshal(rep)
	if err != nil {
		e.t.Fatal(err)
	}
	e.apply(store.Op{Put: &store.Put{Kind: apiv1.KindNodeReport, Name: apiv1.NodeStateName(ns.Cluster, ns.NodeID), Data: data}})
}

// reportAll reports every stored state of the cluster as applied.
func (e *env) reportAll(cluster string) {
	for _, ns := range e.states(cluster) {
		e.report(ns)
	}
}

// secretsOf opens the stored cluster PKI.
func (e *env) secretsOf(cluster string) *pki.ClusterSecrets {
	e.t.Helper()
	o := &Orchestrator{cfg: Config{Node: e.leader(), Keyring: e.keyring}}
	var s *pki.ClusterSecrets
	if err := harness.Poll(waitFor, func() error {
		var err error
		s, _, err = o.loadSecrets(cluster)
		if err == nil && s == nil {
			err = fmt.Errorf("no secrets for %s", cluster)
		}
		return err
	}); err != nil {
		e.t.Fatal(err)
	}
	return s
}

// fakeHealth serves /readyz (and the fake Kubernetes API) on the VIP and
// /health on every control plane
// over real TLS with certificates of the cluster PKI, standing in for
// kube-apiserver and etcd (the lab runs the real ones).
type fakeHealth struct {
	t       *testing.T
	mu      sync.Mutex
	etcd    map[string]string
	apiFail atomic.Bool
	etcdBad atomic.Int32
	gw      *fakeGateway
	kube    *fakeKube
	// live, when set, gives the secrets every handshake serves and
	// trusts, as components restarted on the current render would.
	live func() *pki.ClusterSecrets
}

// follow makes every endpoint serve and trust what secrets returns at
// each handshake instead of the secrets it started with.
func (f *fakeHealth) follow(secrets func() *pki.ClusterSecrets) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.live = secrets
}

// current is the secrets to serve: the followed ones, or s.
func (f *fakeHealth) current(s *pki.ClusterSecrets) *pki.ClusterSecrets {
	f.mu.Lock()
	live := f.live
	f.mu.Unlock()
	if live != nil {
		return live()
	}
	return s
}

func (f *fakeHealth) etcdURL(address string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if u, ok := f.etcd[address]; ok {
		return u
	}
	return "https://" + net.JoinHostPort(address, "1")
}

// start serves the fake endpoints for c with its secrets s.
func (f *fakeHealth) start(c *api.KubernetesCluster, s *pki.ClusterSecrets, apiLn net.Listener) {
	f.t.Helper()
	firstID := c.Spec.ControlPlaneNodes[0].NodeID
	serve(f.t, apiLn, func() (pki.KeyPair, []byte) {
		cur := f.current(s)
		return cur.ControlPlanes[firstID].APIServer, cur.ClusterTrust()
	}, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/") || strings.HasPrefix(r.URL.Path, "/apis/") {
			f.kube.ServeHTTP(w, r)
			return
		}
		if r.URL.Path != "/readyz" || f.apiFail.Load() {
			http.Error(w, "[-]etcd failed", http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, "ok")
	})
	for i, n := range c.Spec.ControlPlaneNodes {
		ln, err := net.Listen("tcp", net.JoinHostPort(n.AdvertiseAddress, "0"))
		if err != nil {
			f.t.Fatal(err)
		}
		f.mu.Lock()
		f.etcd[n.AdvertiseAddress] = "https://" + ln.Addr().String()
		f.mu.Unlock()
		idx := int32(i)
		id := n.NodeID
		serve(f.t, ln, func() (pki.KeyPair, []byte) {
			cur := f.current(s)
			return cur.ControlPlanes[id].EtcdServer, cur.EtcdTrust()
		}, func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/v3/") && f.gw != nil {
				f.gw.ServeHTTP(w, r)
				return
			}
			if r.URL.Path != "/health" {
				http.NotFound(w, r)
				return
			}
			if idx < f.etcdBad.Load() {
				fmt.Fprint(w, `{"health":"false","reason":"RAFT NO LEADER"}`)
				return
			}
			fmt.Fprint(w, `{"health":"true","reason":""}`)
		})
	}
}

// serve runs a TLS server on ln with the certificate creds gives at each
// handshake, requiring client certificates signed by the CA bundle it
// gives with it.
func serve(t *testing.T, ln net.Listener, creds func() (pki.KeyPair, []byte), h http.HandlerFunc) {
	t.Helper()
	config := func() (*tls.Config, error) {
		cert, caPEM := creds()
		pair, err := tls.X509KeyPair(cert.CertPEM, cert.KeyPEM)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caPEM) {
			return nil, errors.New("no CA certificate")
		}
		return &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}, nil
	}
	if _, err := config(); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = ln
	srv.TLS = &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) { return config() }}
	srv.StartTLS()
	t.Cleanup(srv.Close)
}

// staticCreds is serve's creds for one certificate and CA bundle.
func staticCreds(cert pki.KeyPair, caPEM []byte) func() (pki.KeyPair, []byte) {
	return func() (pki.KeyPair, []byte) { return cert, caPEM }
}

// harnessLogger logs through t.Log until the test ends.
func harnessLogger(t *testing.T) *slog.Logger {
	var closed atomic.Bool
	t.Cleanup(func() { closed.Store(true) })
	return slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		if !closed.Load() {
			t.Log(strings.TrimSpace(string(p)))
		}
		return len(p), nil
	}), &slog.HandlerOptions{Level: slog.LevelInfo}))
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
