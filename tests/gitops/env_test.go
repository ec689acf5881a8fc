package gitops

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"
	"kcore.dev/kcore/pkg/gitops"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/secrets"
	"kcore.dev/kcore/pkg/server"
	"kcore.dev/kcore/pkg/store"
	"kcore.dev/kcore/pkg/version"
	"kcore.dev/kcore/tests/apiserve"
	"kcore.dev/kcore/tests/harness"
)

// tick is how often the test loops look for due sources.
const tick = 100 * time.Millisecond

// env is three replicas, each with an HTTPS API and the git loop.
type env struct {
	t    *testing.T
	c    *harness.Cluster
	ca   *pki.CA
	kr   *secrets.Keyring
	cert tls.Certificate

	mu    sync.Mutex
	loops map[string]context.CancelFunc
	done  map[string]chan struct{}
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ca, err := pki.NewCA("kcore-test", time.Now(), 24*time.Hour)
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
		IPs:   []net.IP{net.ParseIP("127.0.0.1")},
		Usage: pki.UsageServer | pki.UsageClient, Validity: time.Hour,
	}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ca: ca, kr: kr, cert: cert, loops: map[string]context.CancelFunc{}, done: map[string]chan struct{}{}}
	e.c = harness.New(t, harness.Options{Replicas: 3, Hooks: harness.Hooks{Started: e.start, Stopping: e.stop}})
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
	return e
}

// start serves r's API and runs the git loop on it while it leads.
func (e *env) start(r *harness.Replica) error {
	if err := apiserve.Start(r, server.Config{CA: e.ca, Keyring: e.kr, ForwardTLS: server.ClientTLS(e.cert, e.ca.Pool())}, e.cert, e.ca); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	cache := filepath.Join(e.t.TempDir(), "gitops")
	go func() {
		defer close(done)
		gitops.RunOnLeader(ctx, r.Node().LeaderCh(), gitops.Config{
			State: r.Node().State(), Planner: apiserve.Of(r).Server,
			Fetcher: &gitops.GitFetcher{Dir: cache, Timeout: 10 * time.Second}, Tick: tick,
		})
	}()
	e.mu.Lock()
	e.loops[r.ID], e.done[r.ID] = cancel, done
	e.mu.Unlock()
	return nil
}

func (e *env) stop(r *harness.Replica) {
	e.mu.Lock()
	cancel, done := e.loops[r.ID], e.done[r.ID]
	e.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	apiserve.Stop(r)
}

// client returns a pkg/client for role that talks to the leader.
func (e *env) client(role string) *client.Client {
	e.t.Helper()
	kp, err := e.ca.Issue(pki.CertRequest{CommonName: role + "-user", Organization: []string{role}, Usage: pki.UsageClient, Validity: time.Hour}, time.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	var addrs []string
	for _, r := range e.c.Running() {
		addrs = append(addrs, apiserve.Of(r).Addr)
	}
	c, err := client.New(client.Config{Addresses: addrs, CA: e.ca.CertPEM, Cert: kp.CertPEM, Key: kp.KeyPEM})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(c.Close)
	return c
}

// putNode registers a ready node whose enp6s0 holds addr/24.
func (e *env) putNode(c *client.Client, id, addr string) {
	e.t.Helper()
	n := api.Node{
		Kind: api.KindNode, Metadata: api.ObjectMeta{Name: id},
		Facts: api.NodeFacts{
			Addresses:  []string{addr},
			Interfaces: []api.Interface{{Name: "enp6s0", Up: true, Addresses: []string{addr + "/24"}}},
			Storage:    []api.StorageBackend{{Class: "lvm", Name: "vg0", SizeBytes: 500 << 30, FreeBytes: 400 << 30}},
		},
		Status: api.NodeHealth{Ready: true},
	}
	if _, err := c.Put(e.t.Context(), api.KindNode, id, n, nil); err != nil {
		e.t.Fatal(err)
	}
}

// cluster decodes a stored cluster from the leader.
func (e *env) cluster(name string) (*api.KubernetesCluster, bool) {
	o, ok := e.c.WaitLeader().Node().State().Get(api.KindKubernetesCluster, name)
	if !ok {
		return nil, false
	}
	var kc api.KubernetesCluster
	if err := json.Unmarshal(o.Data, &kc); err != nil {
		e.t.Fatal(err)
	}
	return &kc, true
}

// ready sets a stored cluster's phase to ready, as the orchestrator would
// once it bootstrapped or updated it (no orchestrator runs here).
func (e *env) ready(name string) {
	e.t.Helper()
	kc, ok := e.cluster(name)
	if !ok {
		e.t.Fatalf("cluster %s not stored", name)
	}
	kc.Status.Phase = api.PhaseReady
	data, err := json.Marshal(kc)
	if err != nil {
		e.t.Fatal(err)
	}
	cmd, err := store.Batch{Ops: []store.Op{{Put: &store.Put{Kind: api.KindKubernetesCluster, Name: name, Data: data}}}}.Command()
	if err != nil {
		e.t.Fatal(err)
	}
	cmd.Time = time.Now().UTC().Format(time.RFC3339Nano)
	if _, err := e.c.ApplyRetry(e.t.Context(), cmd); err != nil {
		e.t.Fatal(err)
	}
}

// source reads a GitSource's view through the API.
func (e *env) source(c *client.Client, name string) apiv1.GitSourceView {
	e.t.Helper()
	v, err := c.GitSource(e.t.Context(), name)
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

// waitSource polls name until cond holds.
func (e *env) waitSource(c *client.Client, name string, cond func(apiv1.GitSourceView) error) apiv1.GitSourceView {
	e.t.Helper()
	var v apiv1.GitSourceView
	err := harness.Poll(harness.DefaultTimeout, func() error {
		var err error
		if v, err = c.GitSource(e.t.Context(), name); err != nil {
			return err
		}
		return cond(v)
	})
	if err != nil {
		e.t.Fatalf("source %s: %v (status %+v)", name, err, v.Source.Status)
	}
	return v
}

// repo is a real git repository the tests commit to with the git binary.
type repo struct {
	t   *testing.T
	dir string
}

func newRepo(t *testing.T) *repo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("SKIP: these tests need the git binary (Debian package git)")
	}
	r := &repo{t: t, dir: t.TempDir()}
	r.git("init", "-q", "-b", "main")
	return r
}

// git runs git in the repository with a fixed identity and no user config.
func (r *repo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// write writes a file in the work tree.
func (r *repo) write(name, content string) {
	r.t.Helper()
	p := filepath.Join(r.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// commit commits everything and returns the commit id.
func (r *repo) commit(msg string) string {
	r.t.Helper()
	r.git("add", "-A")
	r.git("commit", "-q", "--allow-empty", "-m", msg)
	out := r.git("rev-parse", "HEAD")
	return out[:40]
}

// clusterYAML is a one-node cluster on node-N (192.168.41.N) with the
// given DNS address.
func clusterYAML(name, dns, cidr string, nn int) string {
	return fmt.Sprintf(`apiVersion: kcore.dev/v1
kind: KubernetesCluster
metadata:
  name: %s
spec:
  clusterCidr: %s
  serviceCidr: 10.97.0.0/16
  clusterDns: %s
  apiServerEndpoint: 192.168.41.%[4]d:6443
  scheduleOnControlPlane: true
  controlPlaneNodes:
    - nodeId: node-%[4]d
      advertiseAddress: 192.168.41.%[4]d
`, name, cidr, dns, nn)
}
