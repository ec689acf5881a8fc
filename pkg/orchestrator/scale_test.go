package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/tests/harness"
)

// cpNodes maps the cluster's control planes to their addresses.
func cpNodes(c *api.KubernetesCluster) map[string]string {
	out := map[string]string{}
	for _, n := range c.Spec.ControlPlaneNodes {
		out[n.NodeID] = n.AdvertiseAddress
	}
	return out
}

func TestHTTPEtcdTalksToTheJSONGateway(t *testing.T) {
	ln, err := net.Listen("tcp", net.JoinHostPort(testVIP, "0"))
	if err != nil {
		t.Fatal(err)
	}
	c := labCluster(t, "lab", ln.Addr().(*net.TCPAddr).Port)
	s, err := pki.IssueClusterSecrets(c, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	gw := newFakeGateway()
	gw.seed(cpNodes(c))
	fh := &fakeHealth{t: t, etcd: map[string]string{}, gw: gw}
	fh.start(c, s, ln)
	// The first control plane does not answer: every call goes on to the next.
	fh.etcd[testCPs[0]] = "https://127.0.0.1:1"
	e := &HTTPEtcd{EtcdEndpoint: fh.etcdURL}
	ctx := context.Background()

	ms, err := e.Members(ctx, c, s)
	if err != nil || len(ms) != 3 {
		t.Fatalf("Members = %+v, %v; want the 3 control planes", ms, err)
	}
	l, err := e.AddLearner(ctx, c, s, "https://127.0.0.15:2380")
	if err != nil || !l.IsLearner || l.ID == 0 {
		t.Fatalf("AddLearner = %+v, %v", l, err)
	}
	gw.refuse.Store(true)
	err = e.Promote(ctx, c, s, l.ID)
	if err == nil || errors.Is(err, ErrNoEtcd) || !strings.Contains(err.Error(), "in sync") {
		t.Fatalf("Promote of a lagging learner = %v, want etcd's refusal", err)
	}
	gw.refuse.Store(false)
	if err := e.Promote(ctx, c, s, l.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.Remove(ctx, c, s, ms[0].ID); err != nil {
		t.Fatal(err)
	}
	want := []string{"add https://127.0.0.15:2380 learner=true", "promote https://127.0.0.15:2380", "remove " + ms[0].Name}
	if got := gw.log(); !slices.Equal(got, want) {
		t.Errorf("calls = %q, want %q", got, want)
	}

	for i := range testCPs {
		fh.etcd[testCPs[i]] = "https://127.0.0.1:1"
	}
	if _, err := e.Members(ctx, c, s); !errors.Is(err, ErrNoEtcd) {
		t.Errorf("Members with no etcd up = %v, want ErrNoEtcd", err)
	}
}

func TestScaleChangesEtcdMembershipFirst(t *testing.T) {
	e := newEnv(t, 1)
	c := labCluster(t, "lab", e.apiPort())
	e.registerNodes(c)
	e.putCluster(c, api.PhaseBootstrapping)
	e.runOrchestrator()
	e.waitStates(c)
	e.health.gw.seed(cpNodes(c))
	e.health.start(c, e.secretsOf("lab"), e.apiLn)
	e.reportAll("lab")
	e.waitPhase("lab", api.PhaseReady)

	// Scale out by one control plane: it joins etcd as a learner before
	// its state is published, and is promoted once it applied it.
	bigger := labCluster(t, "lab", e.apiPort())
	bigger.Spec.ControlPlaneNodes = append(bigger.Spec.ControlPlaneNodes, api.ClusterNode{NodeID: "node-15", AdvertiseAddress: "127.0.0.15", Iface: "lo"})
	e.registerNodes(bigger)
	e.health.gw.refuse.Store(true)
	e.putCluster(bigger, api.PhaseScaling)
	var joined api.NodeState
	if err := harness.Poll(waitFor, func() error {
		var ok bool
		if joined, ok = e.states("lab")["node-15"]; !ok {
			return fmt.Errorf("node-15 not published; etcd calls %q", e.health.gw.log())
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := e.health.gw.log(); !slices.Equal(got, []string{"add https://127.0.0.15:2380 learner=true"}) {
		t.Errorf("calls before the new state = %q, want one learner add", got)
	}
	if !etcdArg(joined, "--initial-cluster-state=existing") {
		t.Error("the new control plane's etcd does not join the existing cluster")
	}
	e.reportAll("lab")
	got := e.waitPhase("lab", api.PhaseScaling)
	if cond := findCondition(got.Status.Conditions, CondEtcdMembership); cond == nil || cond.Status != StatusFalse {
		t.Errorf("EtcdMembership = %+v while the learner lags, want False", cond)
	}
	e.health.gw.refuse.Store(false)
	e.waitPhase("lab", api.PhaseReady)
	if got := e.health.gw.log(); !slices.Equal(got[1:], []string{"promote https://127.0.0.15:2380"}) {
		t.Errorf("calls = %q, want the learner promoted", got)
	}

	// Scale in by one control plane: etcd member removed first, the node
	// cordoned and drained, then its units are torn down, its state deleted
	// and its Node object deleted from the Kubernetes API.
	guarded := &fakePod{namespace: "default", name: "web", owner: "ReplicaSet", tooMany: 1 << 20}
	e.health.kube.addPod("node-13", guarded)
	e.health.kube.addPod("node-13", &fakePod{namespace: "kube-system", name: "proxy", owner: "DaemonSet"})
	e.health.kube.takeCalls()
	smaller := labCluster(t, "lab", e.apiPort())
	smaller.Spec.ControlPlaneNodes = append(smaller.Spec.ControlPlaneNodes[:2], api.ClusterNode{NodeID: "node-15", AdvertiseAddress: "127.0.0.15", Iface: "lo"})
	e.putCluster(smaller, api.PhaseScaling)
	// While a disruption budget refuses the eviction, node-13 stays in etcd.
	if err := harness.Poll(waitFor, func() error {
		c, _ := e.cluster("lab")
		drain := findCondition(c.Status.Conditions, CondDrainedPrefix+"node-13")
		mem := findCondition(c.Status.Conditions, CondEtcdMembership)
		if drain == nil || drain.Reason != ReasonDraining || mem == nil || !strings.Contains(mem.Message, "node-13 drained") {
			return fmt.Errorf("drain %+v, membership %+v", drain, mem)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := e.health.gw.log(); slices.Contains(got, "remove node-13") {
		t.Errorf("node-13 left etcd before it was drained: %q", got)
	}
	if len(e.states("lab")["node-13"].Units) == 0 {
		t.Error("node-13 torn down before it was drained")
	}
	e.health.kube.mu.Lock()
	guarded.tooMany = 0
	e.health.kube.mu.Unlock()
	var gone api.NodeState
	if err := harness.Poll(waitFor, func() error {
		gone = e.states("lab")["node-13"]
		if len(gone.Units) != 0 {
			return fmt.Errorf("node-13 still has %d units", len(gone.Units))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := e.health.gw.log(); !slices.Contains(got, "remove node-13") {
		t.Errorf("calls = %q, want node-13 removed from etcd", got)
	}
	torn, _ := e.cluster("lab")
	if torn.Status.Phase != api.PhaseScaling {
		t.Errorf("phase %q while node-13 tears down, want scaling", torn.Status.Phase)
	}
	if cond := findCondition(torn.Status.Conditions, CondDrainedPrefix+"node-13"); cond == nil || cond.Reason != ReasonDrained {
		t.Errorf("node-13 torn down with drain condition %+v, want %s", cond, ReasonDrained)
	}
	if n, _ := e.health.kube.node("node-13"); !n.Spec.Unschedulable {
		t.Error("node-13 not cordoned")
	}
	e.reportAll("lab")
	if err := harness.Poll(waitFor, func() error {
		if _, ok := e.states("lab")["node-13"]; ok {
			return fmt.Errorf("node-13's state is still stored")
		}
		if _, ok := e.health.kube.node("node-13"); ok {
			return fmt.Errorf("node-13 still registered with the Kubernetes API")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	calls := e.health.kube.takeCalls()
	for _, want := range []string{"POST /api/v1/namespaces/default/pods/web/eviction", "DELETE /api/v1/nodes/node-13"} {
		if !slices.Contains(calls, want) {
			t.Errorf("kubernetes calls %q lack %q", calls, want)
		}
	}
	if slices.Contains(calls, "POST /api/v1/namespaces/kube-system/pods/proxy/eviction") {
		t.Error("the DaemonSet pod was evicted")
	}
	e.reportAll("lab")
	e.waitPhase("lab", api.PhaseReady)
}

func etcdArg(ns api.NodeState, arg string) bool {
	for _, u := range ns.Units {
		if u.Name == "kcore-etcd" {
			return slices.Contains(u.Argv, arg)
		}
	}
	return false
}
