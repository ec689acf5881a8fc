package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"
	"kcore.dev/kcore/pkg/controller"
	"kcore.dev/kcore/pkg/store"
)

// applyEnv is a real single-replica controller (TLS, raft) with the lab
// nodes registered and ready, and a kctl context of its cluster-admin.
type applyEnv struct {
	*kctlEnv
	ctl   *controller.Controller
	admin *client.Client
	// seeded is the index of the last write setStatus made through raft,
	// which has no audit entry.
	seeded uint64
}

func newApplyEnv(t *testing.T) *applyEnv {
	t.Helper()
	e := newKctlEnv(t)
	pkiDir := filepath.Join(e.dir, "pki")
	e.must("controller", "init", "--name", "lab", "--controller", "127.0.0.1:7443", "--out", pkiDir)
	ctl := startBareController(t, e, filepath.Join(pkiDir, "controller-0"))
	x, err := e.load().Current()
	if err != nil {
		t.Fatal(err)
	}
	admin, err := clientFor(x)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(admin.Close)
	a := &applyEnv{kctlEnv: e, ctl: ctl, admin: admin}
	for _, n := range [][2]string{{"node-105", "192.168.40.105"}, {"node-107", "192.168.40.107"}, {"node-103", "192.168.40.103"}, {"node-201", "192.168.41.201"}} {
		a.putNode(n[0], n[1], true)
	}
	return a
}

// startBareController is startController without the orchestrator: these
// tests stand in for it and write cluster status themselves.
func startBareController(t *testing.T, e *kctlEnv, pkiDir string) *controller.Controller {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c, err := controller.Start(ctx, controller.Config{
		DataDir:        filepath.Join(e.dir, "data"),
		Listen:         "127.0.0.1:0",
		Bootstrap:      true,
		PKIDir:         pkiDir,
		FastTimeouts:   true,
		NoOrchestrator: true,
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := c.Close(); err != nil {
			t.Errorf("close controller: %v", err)
		}
	})
	setControllers(t, e, c.HTTPAddr())
	return c
}

// putNode registers a node with enp6s0 holding addr/24 and an LVM volume
// group with room for the lab's volumes.
func (a *applyEnv) putNode(id, addr string, ready bool) {
	a.t.Helper()
	n := api.Node{
		Kind: api.KindNode, Metadata: api.ObjectMeta{Name: id},
		Facts: api.NodeFacts{
			Hostname:   id,
			Addresses:  []string{addr},
			Interfaces: []api.Interface{{Name: "enp6s0", Up: true, Addresses: []string{addr + "/24"}}},
			Storage:    []api.StorageBackend{{Class: "lvm", Name: "vg0", SizeBytes: 500 << 30, FreeBytes: 400 << 30}},
			Fsync:      &api.FsyncLatency{P50Millis: 0.8, P99Millis: 3.1},
			Labels:     map[string]string{api.FailureDomainLabel: id},
		},
		Status: api.NodeHealth{Ready: ready},
	}
	if _, err := a.admin.Put(a.t.Context(), api.KindNode, id, n, nil); err != nil {
		a.t.Fatal(err)
	}
}

// index is the controller's last applied raft index, read once the audit
// entry of the last apply is committed (the server answers before it
// audits). A write setStatus made through raft has no audit entry to wait
// for.
func (a *applyEnv) index() uint64 {
	a.t.Helper()
	st := a.ctl.Node().State()
	lastWrite := func() uint64 {
		return max(st.KindIndex(api.KindKubernetesCluster), st.KindIndex(api.KindClusterUpdate))
	}
	deadline := time.Now().Add(20 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for w := lastWrite(); st.KindIndex(apiv1.KindAudit) < w && w != a.seeded; w = lastWrite() {
		if time.Now().After(deadline) {
			a.t.Fatal("the last apply's audit entry never committed")
		}
		<-tick.C
	}
	return st.LastIndex()
}

// cluster reads a stored cluster.
func (a *applyEnv) cluster(name string) (*api.KubernetesCluster, bool) {
	a.t.Helper()
	o, ok := a.ctl.Node().State().Get(api.KindKubernetesCluster, name)
	if !ok {
		return nil, false
	}
	var kc api.KubernetesCluster
	if err := json.Unmarshal(o.Data, &kc); err != nil {
		a.t.Fatal(err)
	}
	return &kc, true
}

// setStatus writes a cluster's status the way the orchestrator does:
// through raft inside the controller, not through the API (so without an
// audit entry; index knows).
func (a *applyEnv) setStatus(name string, st api.ClusterStatus) {
	a.t.Helper()
	a.index() // the audit entry of the apply before lands first
	kc, ok := a.cluster(name)
	if !ok {
		a.t.Fatalf("cluster %s not stored", name)
	}
	kc.Status = st
	a.seeded = storeThroughRaft(a.t, a.ctl, api.KindKubernetesCluster, name, kc)
}

// storeThroughRaft commits a put of v as (kind, name) to the controller's
// raft log directly, as the orchestrator writes status: the tests' stand-in
// for the orchestrator, and for objects no API route writes as they are
// (clusters and updates change over HTTP only through plan and apply).
// It returns the index the put was applied at.
func storeThroughRaft(t testing.TB, ctl *controller.Controller, kind, name string, v any) uint64 {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return commitThroughRaft(t, ctl, store.Put{Kind: kind, Name: name, Data: data})
}

// commitThroughRaft commits one store command (a Put or a Delete) to the
// one-replica controller's raft log directly, as the orchestrator does,
// once the replica leads, and returns the index it was applied at.
func commitThroughRaft(t testing.TB, ctl *controller.Controller, p interface {
	Command() (store.Command, error)
}) uint64 {
	t.Helper()
	cmd, err := p.Command()
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !ctl.Node().IsLeader() {
		if time.Now().After(deadline) {
			t.Fatal("the controller never became leader")
		}
		<-tick.C
	}
	res, err := ctl.Node().Apply(context.Background(), cmd)
	if err == nil {
		err = res.Err
	}
	if err != nil {
		t.Fatalf("commit %s through raft: %v", cmd.Type, err)
	}
	return res.Index
}

// runIn runs kctl with in as standard input.
func (a *applyEnv) runIn(in io.Reader, args ...string) (string, string, error) {
	a.t.Helper()
	var out, errOut bytes.Buffer
	root := NewKctl(Streams{In: in, Out: &out, Err: &errOut})
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), errOut.String(), err
}

// write writes a file under the env's directory and returns its path.
func (a *applyEnv) write(name, content string) string {
	a.t.Helper()
	p := filepath.Join(a.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		a.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		a.t.Fatal(err)
	}
	return p
}

// ttyIn is a standard input that says it is a terminal; before runs once,
// at the first read (after the plan was printed, before the answer).
type ttyIn struct {
	r      io.Reader
	once   sync.Once
	before func()
}

func (t *ttyIn) IsTerminal() bool { return true }

func (t *ttyIn) Read(p []byte) (int, error) {
	t.once.Do(func() {
		if t.before != nil {
			t.before()
		}
	})
	return t.r.Read(p)
}

func answer(s string) *ttyIn { return &ttyIn{r: strings.NewReader(s)} }

func labManifest(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "manifest", "testdata", "reference", "cluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// edgeManifest is a one-node cluster on node-201.
const edgeManifest = `kind: KubernetesCluster
metadata:
  name: edge
spec:
  clusterCidr: 10.245.0.0/16
  serviceCidr: 10.97.0.0/16
  clusterDns: 10.97.0.10
  apiServerEndpoint: 192.168.41.201:6443
  scheduleOnControlPlane: true
  controlPlaneNodes:
    - nodeId: node-201
      advertiseAddress: 192.168.41.201
`

var indexRE = regexp.MustCompile(`index \d+`)

func TestApplyCreateConversation(t *testing.T) {
	a := newApplyEnv(t)
	lab := a.write("lab.yaml", labManifest(t))
	out, errOut, err := a.runIn(answer("y\n"), "kubernetes", "apply", "-f", lab)
	if err != nil {
		t.Fatalf("apply: %v\n%s\n%s", err, out, errOut)
	}
	golden(t, "apply/create-lab.golden", []byte(indexRE.ReplaceAllString(out, "index N")))
	kc, ok := a.cluster("lab")
	if !ok || kc.Status.Phase != api.PhaseBootstrapping || kc.Metadata.Generation != 1 {
		t.Fatalf("stored cluster = %+v, want phase bootstrapping, generation 1", kc)
	}

	// An unchanged re-apply is a no-op: nothing is asked and nothing written.
	before := a.index()
	out, _, err = a.runIn(strings.NewReader(""), "kubernetes", "apply", "-f", lab)
	if err != nil || !strings.Contains(out, "No changes.") {
		t.Fatalf("re-apply = %v\n%s", err, out)
	}
	if a.index() != before {
		t.Fatalf("re-apply moved the index %d → %d", before, a.index())
	}
}

func TestApplyRefusals(t *testing.T) {
	a := newApplyEnv(t)
	lab := a.write("lab.yaml", labManifest(t))
	tests := []struct {
		name    string
		in      io.Reader
		wantOut string
		wantErr error
	}{
		{"no", answer("n\n"), "Apply cancelled.", nil},
		{"anything else", answer("sure\n"), "Apply cancelled.", nil},
		{"end of input", answer(""), "Apply cancelled.", nil},
		{"no terminal", strings.NewReader("y\n"), "+ create", ErrNoConfirmation},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := a.index()
			out, _, err := a.runIn(tt.in, "kubernetes", "apply", "-f", lab)
			if ExitCode(err) != 1 {
				t.Fatalf("exit code %d (%v), want 1", ExitCode(err), err)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if !strings.Contains(out, tt.wantOut) {
				t.Fatalf("output lacks %q:\n%s", tt.wantOut, out)
			}
			if a.index() != before {
				t.Fatalf("index moved %d → %d", before, a.index())
			}
			if _, ok := a.cluster("lab"); ok {
				t.Fatal("cluster stored")
			}
		})
	}
}

func TestApplyStalePlanRefused(t *testing.T) {
	a := newApplyEnv(t)
	lab := a.write("lab.yaml", labManifest(t))
	in := answer("y\n")
	// Between the printed plan and the answer, a node stops being ready:
	// the plan the user saw is no longer the plan the controller would run.
	in.before = func() { a.putNode("node-103", "192.168.40.103", false) }
	out, _, err := a.runIn(in, "kubernetes", "apply", "-f", lab)
	if !errors.Is(err, ErrStalePlan) {
		t.Fatalf("err = %v, want ErrStalePlan\n%s", err, out)
	}
	if _, ok := a.cluster("lab"); ok {
		t.Fatal("stale plan stored the cluster")
	}
	audit, err := a.admin.Audit(t.Context(), client.AuditQuery{Object: "KubernetesCluster/lab"})
	if err != nil {
		t.Fatal(err)
	}
	if len(audit) == 0 || audit[len(audit)-1].Code != "stale-plan" || audit[len(audit)-1].Result != 409 || audit[len(audit)-1].PlanHash == "" {
		t.Fatalf("audit = %+v, want the refused apply with its plan hash", audit)
	}
}

// TestApplyRefusedBeforePlanForRole: a viewer and an operator learn that
// they may not apply a cluster change before any plan is printed, and
// nothing is written.
func TestApplyRefusedBeforePlanForRole(t *testing.T) {
	a := newApplyEnv(t)
	manifest := a.write("lab.yaml", labManifest(t))
	for _, role := range []string{"viewer", "operator"} {
		a.must("cert", "issue", "--role", role, "--name", role+"-user")
		before := a.index()
		out, _, err := a.runIn(strings.NewReader("y\n"), "--context", role+"-user@lab", "kubernetes", "apply", "-f", manifest, "--yes")
		if !errors.Is(err, ErrForbiddenApply) || !errors.Is(err, client.ErrForbidden) {
			t.Fatalf("%s apply = %v, want ErrForbiddenApply and client.ErrForbidden", role, err)
		}
		if strings.Contains(out, "create") || strings.Contains(out, "Plan:") {
			t.Errorf("%s saw a plan it may not apply:\n%s", role, out)
		}
		if a.index() != before {
			t.Errorf("%s's refused apply moved the index %d → %d", role, before, a.index())
		}
	}
	// The plan itself is still theirs to read.
	if out := a.must("--context", "viewer-user@lab", "kubernetes", "plan", "-f", manifest); !strings.Contains(out, `+ create cluster "lab"`) {
		t.Fatalf("viewer plan:\n%s", out)
	}
	if _, ok := a.cluster("lab"); ok {
		t.Fatal("a refused apply stored the cluster")
	}
}
