package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/render"
	"kcore.dev/kcore/pkg/rollout"
	"kcore.dev/kcore/pkg/store"
	"kcore.dev/kcore/tests/harness"
)

const (
	oldRelease = "v1.36.3"
	newRelease = "v1.37.2"
)

// agents stands in for the node agents and kubelets of a cluster: it
// reports every published NodeState as applied and makes each fake
// Kubernetes Node report the kubelet release its state pins. A node in
// broken reports kube-apiserver failed (crash-looping) while it is pinned
// to newRelease, as a node with a broken new binary does. It records the
// control planes whose API server ran newRelease at each report, so a test
// can check that no two ever moved at once.
type agents struct {
	e       *env
	cluster string
	mu      sync.Mutex
	broken  map[string]bool
	// seen is every set of control planes whose API server ran newRelease.
	seen [][]string
	// api is the release each node's API server ran in its last state.
	api map[string]string
	// vipHeld names the nodes whose API server changed (release or input
	// hash) while keepalived was in their state (it must have released the
	// VIP first).
	vipHeld []string
	// apiKey is the release and input hash of each node's API server in
	// its last state.
	apiKey map[string]string
	// flag, when set, is an argument whose arrival on a unit's argv the
	// agents record: flagSeen[unit] is every set of nodes that had it.
	flag     string
	flagSeen map[string][][]string
	// brokenArg, when set, makes kube-apiserver fail (crash-loop) on
	// every node whose argv carries it.
	brokenArg string
}

func (e *env) runAgents(cluster string) *agents {
	a := &agents{e: e, cluster: cluster, broken: map[string]bool{}, api: map[string]string{}, apiKey: map[string]string{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		var idx uint64
		for ctx.Err() == nil {
			st := e.state()
			a.sync(st)
			wctx, wcancel := context.WithTimeout(ctx, time.Second)
			idx, _ = st.Wait(wctx, api.KindNodeState, "", idx)
			wcancel()
		}
	}()
	e.t.Cleanup(func() { cancel(); <-done })
	return a
}

func (a *agents) setBroken(id string, broken bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.broken[id] = broken
}

// sync reports every state whose generation has no report yet.
func (a *agents) sync(st *store.State) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var moved []string
	a.recordFlags(st)
	for _, o := range st.ListPrefix(api.KindNodeState, a.cluster+"/") {
		var ns api.NodeState
		if json.Unmarshal(o.Data, &ns) != nil {
			continue
		}
		var failed []string
		for _, u := range ns.Units {
			if key := u.Version + "/" + u.InputHash; u.Name == render.UnitAPIServer && a.apiKey[ns.NodeID] != key {
				if a.apiKey[ns.NodeID] != "" && hasUnit(&storedState{ns: ns}, render.UnitKeepalived) {
					a.vipHeld = append(a.vipHeld, ns.NodeID)
				}
				a.api[ns.NodeID], a.apiKey[ns.NodeID] = u.Version, key
			}
			if u.Name == render.UnitAPIServer && u.Version == newRelease {
				moved = append(moved, ns.NodeID)
				if a.broken[ns.NodeID] {
					failed = append(failed, "unit "+u.Name)
				}
			}
			if u.Name == render.UnitAPIServer && a.brokenArg != "" && slices.Contains(u.Argv, a.brokenArg) {
				failed = append(failed, "unit "+u.Name)
			}
			if u.Name == render.UnitKubelet {
				a.e.health.kube.setKubelet(ns.NodeID, true, u.Version)
			}
		}
		if r, ok := st.Get(apiv1.KindNodeReport, o.Name); ok {
			var rep api.NodeReport
			if json.Unmarshal(r.Data, &rep) == nil && rep.ObservedGeneration == ns.Generation && len(failed) == 0 {
				continue
			}
		}
		a.report(ns, failed)
	}
	slices.Sort(moved)
	if len(a.seen) == 0 || !slices.Equal(a.seen[len(a.seen)-1], moved) {
		a.seen = append(a.seen, moved)
	}
}

// report stores a report of ns; failed units crash-loop.
func (a *agents) report(ns api.NodeState, failed []string) {
	rep := api.NodeReport{NodeID: ns.NodeID, Cluster: ns.Cluster, ObservedGeneration: ns.Generation}
	for _, u := range ns.Units {
		it := api.ItemStatus{Kind: "unit", Name: u.Name, State: api.ItemOK}
		if slices.Contains(failed, "unit "+u.Name) {
			it.State, it.Message, it.Restarts, it.Restarting = api.ItemFailed, "exit status 1", 5, false
		}
		rep.Items = append(rep.Items, it)
	}
	data, err := json.Marshal(rep)
	if err != nil {
		a.e.t.Error(err)
		return
	}
	cmd, err := store.Batch{Ops: []store.Op{{Put: &store.Put{Kind: apiv1.KindNodeReport, Name: apiv1.NodeStateName(ns.Cluster, ns.NodeID), Data: data}}}}.Command()
	if err != nil {
		a.e.t.Error(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if _, err := a.e.rc.ApplyRetry(ctx, cmd); err != nil {
		a.e.t.Log("report:", err)
	}
}

// snapshotServer serves etcd's snapshot stream (one real, empty bbolt
// database) over TLS with the cluster's etcd certificates, as the v3 JSON
// gateway of a control plane does.
func snapshotServer(t *testing.T, e *env, url *atomic.Value) {
	path := filepath.Join(t.TempDir(), "etcd.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("key")); return err }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	blob, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := e.secretsOf("lab")
	serve(t, ln, staticCreds(s.ControlPlanes["node-11"].EtcdServer, s.EtcdCA.CertPEM), func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v3/maintenance/snapshot" {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"result": map[string]any{"blob": blob, "remainingBytes": "0"}})
	})
	url.Store("https://" + ln.Addr().String())
}

// readyCluster brings the lab cluster to ready on oldRelease with agents
// and kubelets simulated; configure adjusts the orchestrator config first.
func readyCluster(t *testing.T, replicas int, configure ...func(*Config)) (*env, *agents) {
	e := newEnv(t, replicas)
	e.cfg.RenderOptions.KubernetesVersion = oldRelease
	for _, f := range configure {
		f(&e.cfg)
	}
	var snapURL atomic.Value
	snapURL.Store("https://127.0.0.1:1")
	e.cfg.Etcd = &HTTPEtcd{EtcdEndpoint: func(string) string { return snapURL.Load().(string) }}
	c := labCluster(t, "lab", e.apiPort())
	e.registerNodes(c)
	e.putCluster(c, api.PhaseBootstrapping)
	e.runOrchestrator()
	e.waitStates(c)
	e.health.start(c, e.secretsOf("lab"), e.apiLn)
	snapshotServer(t, e, &snapURL)
	a := e.runAgents("lab")
	got := e.waitPhase("lab", api.PhaseReady)
	if got.Status.KubernetesVersion != oldRelease {
		t.Fatalf("cluster release %q, want the controller's %s recorded at creation", got.Status.KubernetesVersion, oldRelease)
	}
	return e, a
}

// putUpdate stores a Kubernetes update of every node to newRelease with
// approval manual, as `kctl apply` does.
func (e *env) putUpdate(name string) {
	u := api.ClusterUpdate{APIVersion: api.APIVersion, Kind: api.KindClusterUpdate, Metadata: api.ObjectMeta{Name: name},
		Spec: api.UpdateSpec{Version: "1.37.2", AllNodes: true, UpdateKind: api.UpdateKindK8s, Approval: api.ApprovalManual,
			TestedOSPins: api.OSPins{KubernetesVersion: strings.TrimPrefix(newRelease, "v")}}}
	u.Default()
	data, err := json.Marshal(u)
	if err != nil {
		e.t.Fatal(err)
	}
	e.apply(store.Op{Put: &store.Put{Kind: api.KindClusterUpdate, Name: name, Data: data}})
}

func (e *env) update(name string) (api.ClusterUpdate, uint64) {
	obj, ok := e.state().Get(api.KindClusterUpdate, name)
	if !ok {
		e.t.Fatalf("update %s not stored", name)
	}
	var u api.ClusterUpdate
	if err := json.Unmarshal(obj.Data, &u); err != nil {
		e.t.Fatal(err)
	}
	return u, obj.ModifyIndex
}

// steer applies one kctl update transition (approve, rollback …).
func (e *env) steer(name string, f func(api.UpdateStatus) (api.UpdateStatus, error)) {
	e.t.Helper()
	err := harness.Poll(waitFor, func() error {
		u, idx := e.update(name)
		next, err := f(u.Status)
		if err != nil {
			return err
		}
		u.Status = next
		data, _ := json.Marshal(u)
		cmd, err := store.Batch{Ops: []store.Op{{Put: &store.Put{Kind: api.KindClusterUpdate, Name: name, Data: data, ExpectModifyIndex: store.Expect(idx)}}}}.Command()
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		res, err := e.rc.ApplyRetry(ctx, cmd)
		if err == nil {
			err = res.Err
		}
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) waitUpdate(name, phase string) api.ClusterUpdate {
	e.t.Helper()
	var u api.ClusterUpdate
	if err := harness.Poll(waitFor, func() error {
		u, _ = e.update(name)
		if u.Status.Phase != phase {
			return fmt.Errorf("update phase %q, want %q: %s %+v", u.Status.Phase, phase, u.Status.Message, u.Status.Steps)
		}
		return nil
	}); err != nil {
		e.t.Fatal(err)
	}
	return u
}

func TestRollingUpdateMovesOneControlPlaneAtATime(t *testing.T) {
	e, a := readyCluster(t, 1)
	e.putUpdate("k8s-1-37")
	u := e.waitUpdate("k8s-1-37", rollout.PhasePending)
	if !strings.Contains(u.Status.Message, "approve") || len(u.Status.Steps) == 0 {
		t.Fatalf("a manual update must wait for approval with its steps listed: %q %+v", u.Status.Message, u.Status.Steps)
	}
	if c, _ := e.cluster("lab"); len(c.Status.Pins) > 0 {
		t.Fatalf("pins set before approval: %+v", c.Status.Pins)
	}

	e.steer("k8s-1-37", rollout.Approve)
	u = e.waitUpdate("k8s-1-37", rollout.PhaseDone)

	// Control-plane components one node at a time, the bootstrap node
	// last, then the kubelets; a snapshot before the first control plane.
	var order []string
	for i, s := range u.Status.Steps {
		order = append(order, s.Scope+":"+strings.Join(s.Nodes, ","))
		if s.State != rollout.StepDone {
			t.Errorf("step %d is %s", i+1, s.State)
		}
		if i > 0 && s.StartedAt < u.Status.Steps[i-1].FinishedAt {
			t.Errorf("step %d started at %s before step %d finished at %s", i+1, s.StartedAt, i, u.Status.Steps[i-1].FinishedAt)
		}
	}
	want := []string{"control-plane:node-12", "control-plane:node-13", "control-plane:node-11",
		"kubelet:node-12", "kubelet:node-13", "kubelet:node-11", "node:node-14"}
	if !slices.Equal(order, want) {
		t.Errorf("steps %v, want %v", order, want)
	}
	if snaps := u.Status.Steps[0].Snapshots; len(snaps) != 1 {
		t.Errorf("no etcd snapshot recorded before the first control plane: %+v", u.Status.Steps[0])
	} else if _, ok := e.state().Get(apiv1.KindEtcdSnapshot, snaps[0]); !ok {
		t.Errorf("snapshot %s is not stored", snaps[0])
	}
	// The API servers moved one by one, each after its node released the VIP.
	a.mu.Lock()
	if len(a.vipHeld) > 0 {
		t.Errorf("kube-apiserver changed release with keepalived still running on %v", a.vipHeld)
	}
	for _, moved := range a.seen {
		ok := slices.ContainsFunc([][]string{nil, {"node-12"}, {"node-12", "node-13"}, {"node-11", "node-12", "node-13"}}, func(w []string) bool { return slices.Equal(w, moved) })
		if !ok {
			t.Errorf("API servers on %s moved together; the order allows one more at a time", moved)
		}
	}
	a.mu.Unlock()

	c := e.waitPhase("lab", api.PhaseReady)
	if c.Status.KubernetesVersion != newRelease || len(c.Status.Pins) != 0 {
		t.Errorf("cluster release %q pins %+v, want %s and no pins", c.Status.KubernetesVersion, c.Status.Pins, newRelease)
	}
	for id, ns := range e.states("lab") {
		for _, un := range ns.Units {
			if un.Version != "" && un.Version != newRelease {
				t.Errorf("%s %s runs %s", id, un.Name, un.Version)
			}
		}
	}
	// Kubelet steps cordon and uncordon their node.
	for _, id := range []string{"node-12", "node-14"} {
		n, _ := e.health.kube.node(id)
		if n.Spec.Unschedulable {
			t.Errorf("%s left cordoned", id)
		}
	}
}

func TestFailedGatePausesDegradesAndRollsBack(t *testing.T) {
	e, a := readyCluster(t, 1)
	a.setBroken("node-12", true)
	e.putUpdate("k8s-1-37")
	e.steer("k8s-1-37", rollout.Approve)

	u := e.waitUpdate("k8s-1-37", rollout.PhasePaused)
	if s := u.Status.Steps[0]; s.State != rollout.StepFailed || !strings.Contains(s.Message, "node-12") {
		t.Fatalf("step 1 = %+v, want failed naming node-12", s)
	}
	if u.Status.Steps[1].State != rollout.StepPending {
		t.Errorf("step 2 started after step 1 failed: %+v", u.Status.Steps[1])
	}
	c := e.waitPhase("lab", api.PhaseDegraded)
	if cond := findCondition(c.Status.Conditions, CondRollout); cond == nil || cond.Status != StatusFalse || !strings.Contains(cond.Message, "node-12") {
		t.Errorf("Rollout condition %+v, want False naming node-12", cond)
	}

	e.steer("k8s-1-37", func(st api.UpdateStatus) (api.UpdateStatus, error) { return rollout.StartRollback(st, "test") })
	u = e.waitUpdate("k8s-1-37", rollout.PhaseFailed)
	if s := u.Status.Steps[0]; s.State != rollout.StepRolledBack {
		t.Errorf("step 1 = %+v, want rolled-back", s)
	}
	if !strings.Contains(u.Status.Message, "rolled back") {
		t.Errorf("message %q", u.Status.Message)
	}
	c = e.waitPhase("lab", api.PhaseReady)
	if c.Status.KubernetesVersion != oldRelease || len(c.Status.Pins) != 0 || findCondition(c.Status.Conditions, CondRollout) != nil {
		t.Errorf("after rollback: release %q pins %+v conditions %+v", c.Status.KubernetesVersion, c.Status.Pins, c.Status.Conditions)
	}
	if v := unitVersion(&storedState{ns: e.states("lab")["node-12"]}, render.UnitAPIServer); v != oldRelease {
		t.Errorf("node-12 kube-apiserver runs %s after the rollback, want %s", v, oldRelease)
	}
}

func TestNewLeaderResumesRolloutAtItsStep(t *testing.T) {
	e, _ := readyCluster(t, 3)
	e.putUpdate("k8s-1-37")
	e.steer("k8s-1-37", rollout.Approve)
	if err := harness.Poll(waitFor, func() error {
		u, _ := e.update("k8s-1-37")
		if len(u.Status.Steps) < 2 || u.Status.Steps[1].State != rollout.StepDone {
			return fmt.Errorf("step 2 not done yet: %+v", u.Status.Steps)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	before, _ := e.update("k8s-1-37")
	lead := e.rc.WaitLeader()
	for i, r := range e.rc.Replicas() {
		if r == lead {
			e.rc.Stop(i)
		}
	}
	u := e.waitUpdate("k8s-1-37", rollout.PhaseDone)
	for i := range 2 {
		if u.Status.Steps[i].StartedAt != before.Status.Steps[i].StartedAt {
			t.Errorf("step %d ran again after the leader change: %+v then %+v", i+1, before.Status.Steps[i], u.Status.Steps[i])
		}
	}
}

// TestSilentNodeHoldsRolloutBack: heartbeats live in the leader's memory;
// a target whose heartbeat stopped blocks the start with the plan's code,
// and the rollout starts once it heartbeats again.
func TestSilentNodeHoldsRolloutBack(t *testing.T) {
	var silent atomic.Bool
	e, _ := readyCluster(t, 1, func(cfg *Config) {
		cfg.HealthInterval = 100 * time.Millisecond
		cfg.LastSeen = func(id string) (time.Time, bool) {
			if id == "node-13" && silent.Load() {
				return time.Now().Add(-time.Hour), true
			}
			return time.Now(), true
		}
	})

	silent.Store(true)
	e.putUpdate("k8s-1-37")
	e.steer("k8s-1-37", rollout.Approve)
	if err := harness.Poll(waitFor, func() error {
		u, _ := e.update("k8s-1-37")
		if !strings.Contains(u.Status.Message, "update-node-not-ready") || !strings.Contains(u.Status.Message, "node-13") {
			return fmt.Errorf("message %q", u.Status.Message)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if u, _ := e.update("k8s-1-37"); started(u.Status) {
		t.Fatalf("a step started with node-13 silent: %+v", u.Status.Steps)
	}
	silent.Store(false)
	e.waitUpdate("k8s-1-37", rollout.PhaseDone)
}

// TestStepWaitsForReadyCluster: a step starts only while its cluster is
// ready; a cluster degraded between two steps holds the rollout, which goes
// on by itself once the cluster is ready again.
func TestStepWaitsForReadyCluster(t *testing.T) {
	e, _ := readyCluster(t, 1, func(cfg *Config) { cfg.HealthInterval = 100 * time.Millisecond })
	e.putUpdate("k8s-1-37")
	e.steer("k8s-1-37", rollout.Approve)
	if err := harness.Poll(waitFor, func() error {
		if u, _ := e.update("k8s-1-37"); len(u.Status.Steps) == 0 || u.Status.Steps[0].State != rollout.StepDone {
			return fmt.Errorf("step 1 not done: %+v", u.Status.Steps)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Pause after whatever step runs now, then degrade the cluster.
	e.steer("k8s-1-37", func(st api.UpdateStatus) (api.UpdateStatus, error) { return rollout.Pause(st, "test") })
	u := e.waitUpdate("k8s-1-37", rollout.PhasePaused)
	next := slices.IndexFunc(u.Status.Steps, func(s api.UpdateStep) bool { return s.State == rollout.StepPending })
	if next < 0 {
		t.Fatalf("no pending step left: %+v", u.Status.Steps)
	}
	e.health.apiFail.Store(true)
	e.waitPhase("lab", api.PhaseDegraded)
	e.steer("k8s-1-37", rollout.Resume)
	want := fmt.Sprintf("step %d waits for cluster lab to be ready (phase degraded)", next+1)
	if err := harness.Poll(waitFor, func() error {
		u, _ := e.update("k8s-1-37")
		if u.Status.Message != want {
			return fmt.Errorf("message %q, want %q", u.Status.Message, want)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if u, _ := e.update("k8s-1-37"); u.Status.Steps[next].State != rollout.StepPending {
		t.Fatalf("step %d started while the cluster was degraded: %+v", next+1, u.Status.Steps[next])
	}
	e.health.apiFail.Store(false)
	e.waitUpdate("k8s-1-37", rollout.PhaseDone)
}

// TestControlPlaneStepWaitsForEtcdCatchUp: a control-plane step is done only
// once the node's etcd member applied close to the newest raft index; while
// it waits, the step says for what.
func TestControlPlaneStepWaitsForEtcdCatchUp(t *testing.T) {
	e, _ := readyCluster(t, 1)
	e.health.gw.lag.Store(10 * etcdLagLimit)
	e.putUpdate("k8s-1-37")
	e.steer("k8s-1-37", rollout.Approve)
	if err := harness.Poll(waitFor, func() error {
		u, _ := e.update("k8s-1-37")
		if len(u.Status.Steps) == 0 || !strings.Contains(u.Status.Steps[0].Message, "etcd member node-12 applied index 95000, 5000 behind the newest 100000") {
			return fmt.Errorf("steps %+v", u.Status.Steps)
		}
		if s := u.Status.Steps[0]; s.State != rollout.StepRunning {
			return fmt.Errorf("step 1 is %s", s.State)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	e.health.gw.lag.Store(0)
	u := e.waitUpdate("k8s-1-37", rollout.PhaseDone)
	if m := u.Status.Steps[0].Message; m != "" {
		t.Errorf("a done step keeps the message %q", m)
	}
}

// TestSettleReleaseKeepsPartialUpdates: once a rollout is done, a cluster
// whose every member moved takes the release and needs no pins; after a
// partial update the moved node keeps its pin (dropping it would move the
// node back), and only pin fields naming the cluster's release go.
func TestSettleReleaseKeepsPartialUpdates(t *testing.T) {
	tests := []struct {
		name     string
		pins     map[string]api.NodePin
		release  string
		wantPins map[string]api.NodePin
		changed  bool
	}{
		{"every member moved", map[string]api.NodePin{
			"node-11": {ControlPlane: newRelease, Kubelet: newRelease}, "node-12": {ControlPlane: newRelease, Kubelet: newRelease},
			"node-13": {ControlPlane: newRelease, Kubelet: newRelease}, "node-14": {Kubelet: newRelease},
		}, newRelease, nil, true},
		{"only the worker moved", map[string]api.NodePin{"node-14": {Kubelet: newRelease}}, oldRelease,
			map[string]api.NodePin{"node-14": {Kubelet: newRelease}}, false},
		{"a pin naming the cluster's release", map[string]api.NodePin{"node-14": {Kubelet: oldRelease}, "node-12": {ControlPlane: newRelease, VIPReleased: true}}, oldRelease,
			map[string]api.NodePin{"node-12": {ControlPlane: newRelease, VIPReleased: true}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := labCluster(t, "lab", 6443)
			c.Status.KubernetesVersion, c.Status.Pins = oldRelease, tt.pins
			if got := settleRelease(c, newRelease); got != tt.changed {
				t.Errorf("changed = %v, want %v", got, tt.changed)
			}
			if c.Status.KubernetesVersion != tt.release || !maps.Equal(c.Status.Pins, tt.wantPins) {
				t.Errorf("release %s pins %+v, want %s %+v", c.Status.KubernetesVersion, c.Status.Pins, tt.release, tt.wantPins)
			}
		})
	}
}
