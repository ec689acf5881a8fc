package orchestrator

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/tests/harness"
)

// deadSet is the nodes a test's LastSeen reports silent for twice the
// heartbeat timeout.
type deadSet struct {
	mu   sync.Mutex
	dead map[string]bool
}

func (d *deadSet) kill(id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dead[id] = true
}

func (d *deadSet) isDead(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dead[id]
}

func (d *deadSet) lastSeen(id string) (time.Time, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dead[id] {
		return time.Now().Add(-2 * DefaultHeartbeatTimeout), true
	}
	return time.Now(), true
}

// keepalivedConf is the keepalived.conf of a node's state.
func keepalivedConf(ns api.NodeState) string {
	for _, f := range ns.Files {
		if strings.HasSuffix(f.Path, "keepalived.conf") {
			return f.Content
		}
	}
	return ""
}

// TestReplaceDeadControlPlane: a control plane that died (no heartbeat,
// pods that cannot be evicted) swapped for a new machine leaves etcd first,
// without a drain; the new one is then added as a learner and promoted,
// the others' keepalived peers move to it, and the dead Node object is
// deleted.
func TestReplaceDeadControlPlane(t *testing.T) {
	e := newEnv(t, 1)
	dead := &deadSet{dead: map[string]bool{}}
	e.cfg.LastSeen = dead.lastSeen
	c := labCluster(t, "lab", e.apiPort())
	e.registerNodes(c)
	e.putCluster(c, api.PhaseBootstrapping)
	e.runOrchestrator()
	e.waitStates(c)
	e.health.gw.seed(cpNodes(c))
	e.health.start(c, e.secretsOf("lab"), e.apiLn)
	e.reportAll("lab")
	e.waitPhase("lab", api.PhaseReady)

	// node-13 dies with a pod no eviction can move.
	e.health.kube.addPod("node-13", &fakePod{namespace: "default", name: "web", owner: "ReplicaSet", tooMany: 1 << 20})
	dead.kill("node-13")
	e.health.kube.takeCalls()
	e.health.gw.refuse.Store(true)

	next := labCluster(t, "lab", e.apiPort())
	next.Spec.ControlPlaneNodes[2] = api.ClusterNode{NodeID: "node-15", AdvertiseAddress: "127.0.0.15", Iface: "lo"}
	e.registerNodes(next)
	e.putCluster(next, api.PhaseScaling)

	if err := harness.Poll(waitFor, func() error {
		if _, ok := e.states("lab")["node-15"]; !ok {
			return fmt.Errorf("node-15 not published; etcd calls %q", e.health.gw.log())
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{"remove node-13", "add https://127.0.0.15:2380 learner=true"}
	if got := e.health.gw.log(); !slices.Equal(got, want) {
		t.Errorf("etcd calls before the new state = %q, want %q", got, want)
	}
	e.health.gw.refuse.Store(false)
	e.reportAll("lab")
	if err := harness.Poll(waitFor, func() error {
		got := e.health.gw.log()
		if !slices.Equal(got, append(want, "promote https://127.0.0.15:2380")) {
			return fmt.Errorf("etcd calls %q", got)
		}
		states := e.states("lab")
		if _, ok := states["node-13"]; ok {
			// Only the living report: a report of the dead node would
			// race the orchestrator's delete of it.
			for id, ns := range states {
				if !dead.isDead(id) {
					e.report(ns)
				}
			}
			return fmt.Errorf("node-13's state is still stored")
		}
		if _, ok := e.health.kube.node("node-13"); ok {
			return fmt.Errorf("node-13 still registered with the Kubernetes API")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, call := range e.health.kube.takeCalls() {
		if strings.Contains(call, "/eviction") {
			t.Errorf("the dead node was drained: %s", call)
		}
	}
	conf := keepalivedConf(e.states("lab")["node-11"])
	if !strings.Contains(conf, "127.0.0.15") || strings.Contains(conf, "127.0.0.13") {
		t.Errorf("node-11's keepalived peers did not move to node-15:\n%s", conf)
	}
	e.reportAll("lab")
	got := e.waitPhase("lab", api.PhaseReady)
	if cond := findCondition(got.Status.Conditions, CondDrainedPrefix+"node-13"); cond == nil || cond.Reason != ReasonNotHeartbeating {
		t.Errorf("node-13's drain condition = %+v, want reason %s", cond, ReasonNotHeartbeating)
	}
}

// TestStaleEtcdMembers: a member etcd still lists that no control plane of
// the manifest has, and a control plane that never joined, are found by the
// health check and recorded with the command that removes them; a scale
// plan's membership pass then removes the stale member first.
func TestStaleEtcdMembers(t *testing.T) {
	e := newEnv(t, 1)
	c := labCluster(t, "lab", e.apiPort())
	e.registerNodes(c)
	e.putCluster(c, api.PhaseBootstrapping)
	e.runOrchestrator()
	e.waitStates(c)
	members := cpNodes(c)
	delete(members, "node-12")
	members["node-9"] = "127.0.0.9"
	e.health.gw.seed(members)
	e.health.start(c, e.secretsOf("lab"), e.apiLn)
	e.reportAll("lab")
	var got *api.KubernetesCluster
	if err := harness.Poll(waitFor, func() error {
		got, _ = e.cluster("lab")
		if len(got.Status.EtcdStaleMembers) != 2 {
			return fmt.Errorf("stale members %+v", got.Status.EtcdStaleMembers)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []api.StaleEtcdMember{
		{Reason: api.StaleNotInManifest, Name: "node-9", ID: got.Status.EtcdStaleMembers[0].ID, PeerURLs: []string{"https://127.0.0.9:2380"}},
		{Reason: api.StaleNeverJoined, Name: "node-12", PeerURLs: []string{"https://127.0.0.12:2380"}},
	}
	if fmt.Sprint(got.Status.EtcdStaleMembers) != fmt.Sprint(want) {
		t.Errorf("stale members = %+v, want %+v", got.Status.EtcdStaleMembers, want)
	}
	cond := findCondition(got.Status.Conditions, CondEtcdMembers)
	if cond == nil || cond.Status != StatusFalse || !strings.Contains(cond.Message, "kctl kubernetes replace lab --node node-12") {
		t.Errorf("%s = %+v, want False naming the replace of node-12", CondEtcdMembers, cond)
	}

	// A scale plan's membership pass removes the member no control plane
	// has before it adds the missing one.
	e.putCluster(labCluster(t, "lab", e.apiPort()), api.PhaseScaling)
	if err := harness.Poll(waitFor, func() error {
		if log := e.health.gw.log(); !slices.Equal(log, []string{"remove node-9", "add https://127.0.0.12:2380 learner=true"}) {
			return fmt.Errorf("etcd calls %q", log)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
