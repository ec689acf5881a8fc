package orchestrator

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/render"
	"kcore.dev/kcore/pkg/secrets"
	"kcore.dev/kcore/pkg/store"
	"kcore.dev/kcore/tests/harness"
)

func TestCreatePublishesSealedStatesAndReachesReady(t *testing.T) {
	e := newEnv(t, 1)
	e.cfg.HealthInterval = 50 * time.Millisecond
	c := labCluster(t, "lab", e.apiPort())
	e.registerNodes(c)
	e.putCluster(c, api.PhaseBootstrapping)
	e.runOrchestrator()

	states := e.waitStates(c)
	for id, ns := range states {
		if ns.Generation != 1 {
			t.Errorf("%s: generation %d, want 1", id, ns.Generation)
		}
		admin := false
		for _, f := range ns.Files {
			if f.Secret != secrets.IsSealedString(f.Content) {
				t.Errorf("%s: %s secret=%v but sealed=%v", id, f.Path, f.Secret, secrets.IsSealedString(f.Content))
			}
			admin = admin || f.Path == render.AdminKubeconfigPath
		}
		if want := id != "node-14"; admin != want {
			t.Errorf("%s: admin.conf present=%v, want %v", id, admin, want)
		}
	}
	for _, kind := range []string{api.KindNodeState, store.KindSecret, api.KindKubernetesCluster} {
		for _, o := range e.state().List(kind) {
			if bytes.Contains(o.Data, []byte("PRIVATE KEY")) {
				t.Errorf("%s/%s holds a plaintext private key", kind, o.Name)
			}
		}
	}
	if got := e.waitPhase("lab", api.PhaseBootstrapping); isTrue(got.Status.Conditions, CondNodesApplied) {
		t.Errorf("NodesApplied true before any report: %+v", got.Status.Conditions)
	}

	e.health.start(c, e.secretsOf("lab"), e.apiLn)
	e.reportAll("lab")
	got := e.waitPhase("lab", api.PhaseReady)
	for _, typ := range []string{CondNodesApplied, CondNodesHeartbeating, CondEtcdHealthy, CondAPIReady, CondBootstrapped} {
		if !isTrue(got.Status.Conditions, typ) {
			t.Errorf("condition %s not True: %+v", typ, got.Status.Conditions)
		}
	}
	if len(got.Status.Nodes) != 4 || !got.Status.Nodes[0].Ready || got.Status.Nodes[0].Role != api.RoleControlPlane {
		t.Errorf("status nodes = %+v", got.Status.Nodes)
	}

	// Once ready, the control planes are labeled and tainted through the
	// Kubernetes API; the worker is left alone.
	e.waitFinalized(ReasonTainted)
	worker, _ := e.health.kube.node("node-14")
	if _, labeled := worker.Metadata.Labels[LabelControlPlane]; labeled || len(worker.Spec.Taints) > 0 {
		t.Errorf("worker node-14 labeled or tainted: %+v", worker)
	}

	// A failed item degrades the cluster and the condition names node and
	// item, also when an agent reports a crashed unit between applies (a
	// fresh report of the same generation); the next all-ok report makes
	// it ready again.
	for _, f := range []struct{ node, unit string }{{"node-14", render.UnitKubelet}, {"node-11", render.UnitAPIServer}} {
		e.report(states[f.node], "unit "+f.unit)
		got = e.waitPhase("lab", api.PhaseDegraded)
		cond := findCondition(got.Status.Conditions, CondNodesApplied)
		if cond == nil || cond.Status != StatusFalse || !strings.Contains(cond.Message, f.node) || !strings.Contains(cond.Message, f.unit) {
			t.Errorf("NodesApplied = %+v, want False naming %s and %s", cond, f.node, f.unit)
		}
		e.report(states[f.node])
		e.waitPhase("lab", api.PhaseReady)
	}

	tests := []struct {
		name    string
		breakIt func()
		fix     func()
		cond    string
		words   []string
	}{
		{"api not ready", func() { e.health.apiFail.Store(true) }, func() { e.health.apiFail.Store(false) }, CondAPIReady, []string{"/readyz", "500"}},
		{"etcd quorum lost", func() { e.health.etcdBad.Store(2) }, func() { e.health.etcdBad.Store(1) }, CondEtcdHealthy, []string{"1 of 3", "node-11", "node-12"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.breakIt()
			got := e.waitPhase("lab", api.PhaseDegraded)
			cond := findCondition(got.Status.Conditions, tc.cond)
			if cond == nil || cond.Status != StatusFalse {
				t.Fatalf("%s = %+v, want False", tc.cond, cond)
			}
			for _, w := range tc.words {
				if !strings.Contains(cond.Message, w) {
					t.Errorf("%s message %q lacks %q", tc.cond, cond.Message, w)
				}
			}
			tc.fix()
			got = e.waitPhase("lab", api.PhaseReady)
			if !isTrue(got.Status.Conditions, tc.cond) {
				t.Errorf("%s not True after recovery: %+v", tc.cond, got.Status.Conditions)
			}
		})
	}

	// Re-applying with scheduleOnControlPlane removes the taint.
	c.Spec.ScheduleOnControlPlane = true
	e.putCluster(c, api.PhaseUpdating)
	if err := harness.Poll(waitFor, func() error {
		if ns := e.states("lab")["node-11"]; ns.Generation < 2 {
			return fmt.Errorf("node-11 at generation %d", ns.Generation)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	e.reportAll("lab")
	e.waitPhase("lab", api.PhaseReady)
	e.waitFinalized(ReasonSchedulable)
}

// waitFinalized waits until every control plane of the fake Kubernetes
// API is labeled and tainted as reason says, and its condition says so.
func (e *env) waitFinalized(reason string) {
	e.t.Helper()
	if err := harness.Poll(waitFor, func() error {
		c, _ := e.cluster("lab")
		for _, id := range []string{"node-11", "node-12", "node-13"} {
			n, _ := e.health.kube.node(id)
			if _, ok := n.Metadata.Labels[LabelControlPlane]; !ok {
				return fmt.Errorf("%s not labeled", id)
			}
			if tainted := slices.Contains(n.Spec.Taints, controlPlaneTaint()); tainted != (reason == ReasonTainted) {
				return fmt.Errorf("%s taints %+v, want %s", id, n.Spec.Taints, reason)
			}
			if cond := findCondition(c.Status.Conditions, CondFinalizedPrefix+id); cond == nil || cond.Reason != reason {
				return fmt.Errorf("%s condition %+v, want %s", id, cond, reason)
			}
		}
		return nil
	}); err != nil {
		e.t.Fatal(err)
	}
}

// reconcileOnce runs one pass of a fresh orchestrator on the leader.
func (e *env) reconcileOnce(o *Orchestrator, checkHealth bool) {
	e.t.Helper()
	if _, err := o.reconcile(context.Background(), "lab", checkHealth); err != nil {
		e.t.Fatal(err)
	}
}

func TestUnchangedPassWritesNothing(t *testing.T) {
	e := newEnv(t, 1)
	c := labCluster(t, "lab", e.apiPort())
	e.registerNodes(c)
	e.putCluster(c, api.PhaseBootstrapping)
	// The orchestrator's own clock, an hour behind: every time it writes
	// must come from it.
	clock := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	cfg := e.cfg
	cfg.Node = e.leader()
	cfg.Now = func() time.Time { return clock }
	o, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	o.started = time.Now()
	st := e.state()

	e.reconcileOnce(o, false)
	stamp := clock.Format(time.RFC3339Nano)
	for _, kind := range []string{api.KindNodeState, store.KindSecret, api.KindKubernetesCluster} {
		for _, obj := range st.List(kind) {
			if obj.ModifyTime != stamp {
				t.Errorf("%s/%s stamped %s, want the orchestrator's clock %s", kind, obj.Name, obj.ModifyTime, stamp)
			}
		}
	}
	if got, _ := e.cluster("lab"); got.Status.Conditions[0].Since != clock.Format(time.RFC3339) {
		t.Errorf("condition since %s, want %s", got.Status.Conditions[0].Since, clock.Format(time.RFC3339))
	}
	idx := st.LastIndex()
	e.reconcileOnce(o, false)
	if st.LastIndex() != idx {
		t.Fatalf("a pass with nothing new wrote: index %d -> %d", idx, st.LastIndex())
	}

	e.health.start(c, e.secretsOf("lab"), e.apiLn)
	e.reportAll("lab")
	e.reconcileOnce(o, true)
	if got, _ := e.cluster("lab"); got.Status.Phase != api.PhaseReady {
		t.Fatalf("phase %q, want ready: %+v", got.Status.Phase, got.Status.Conditions)
	}
	idx = st.LastIndex()
	e.reconcileOnce(o, true)
	e.reconcileOnce(o, false)
	if st.LastIndex() != idx {
		t.Fatalf("a pass on a ready cluster wrote: index %d -> %d", idx, st.LastIndex())
	}

	// A later health pass writes its time and nothing else; a pass the
	// store woke (no health check) still writes nothing.
	before, _ := e.cluster("lab")
	clock = clock.Add(DefaultHealthInterval)
	e.reconcileOnce(o, true)
	if st.LastIndex() != idx+1 {
		t.Fatalf("a health pass wrote index %d -> %d, want one write", idx, st.LastIndex())
	}
	after, _ := e.cluster("lab")
	if want := clock.Format(time.RFC3339); after.Status.LastHealthCheck != want {
		t.Errorf("lastHealthCheck %s, want %s", after.Status.LastHealthCheck, want)
	}
	if !sameStatus(before.Status, after.Status, false) {
		t.Errorf("a health pass changed more than lastHealthCheck:\n%+v\n%+v", before.Status, after.Status)
	}
	idx = st.LastIndex()
	clock = clock.Add(time.Second)
	e.reconcileOnce(o, false)
	if st.LastIndex() != idx {
		t.Fatalf("a pass without health check wrote: index %d -> %d", idx, st.LastIndex())
	}

	// Re-applying the same manifest (the server marks it updating) bumps
	// no generation and rewrites no NodeState.
	statesBefore := st.List(api.KindNodeState)
	e.putCluster(c, api.PhaseUpdating)
	e.reconcileOnce(o, false)
	if got, _ := e.cluster("lab"); got.Status.Phase != api.PhaseReady {
		t.Fatalf("re-apply: phase %q, want ready", got.Status.Phase)
	}
	statesAfter := st.List(api.KindNodeState)
	for i := range statesBefore {
		if statesBefore[i].ModifyIndex != statesAfter[i].ModifyIndex {
			t.Errorf("re-apply rewrote %s", statesBefore[i].Name)
		}
	}
}

func TestChangeBumpsOnlyAffectedNodes(t *testing.T) {
	e := newEnv(t, 1)
	c := labCluster(t, "lab", e.apiPort())
	e.registerNodes(c)
	e.putCluster(c, api.PhaseBootstrapping)
	e.runOrchestrator()
	before := e.waitStates(c)
	e.health.start(c, e.secretsOf("lab"), e.apiLn)
	e.reportAll("lab")
	e.waitPhase("lab", api.PhaseReady)

	// A new volume on the worker restarts no unit: its state is published
	// at once (a restart goes step by step, TestSpecChangeRollsOneControlPlaneAtATime).
	changed := *c
	changed.Spec.LocalProvisioner = api.LocalProvisionerSpec{Enabled: true, Mode: api.ProvisionerModeLVM, Volumes: []api.VolumeSpec{
		{Name: "data", NodeID: "node-14", StorageClass: api.StorageClassLVM, VolumeGroup: "vg0", SizeBytes: 1 << 30},
	}}
	changed.Default()
	changed.Metadata.Generation = 2
	want := renderedChanges(t, e.secretsOf("lab"), c, &changed)
	if len(want) == 0 || len(want) == len(before) {
		t.Fatalf("the change should affect some nodes, not %d of %d", len(want), len(before))
	}
	e.putCluster(&changed, api.PhaseUpdating)
	var after map[string]api.NodeState
	if err := harness.Poll(waitFor, func() error {
		after = e.states("lab")
		for id := range want {
			if after[id].Generation != before[id].Generation+1 {
				return fmt.Errorf("%s still at generation %d", id, after[id].Generation)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for id, ns := range after {
		if !want[id] && ns.Generation != before[id].Generation {
			t.Errorf("%s: generation %d -> %d though its content did not change", id, before[id].Generation, ns.Generation)
		}
	}
	if got, _ := e.cluster("lab"); got.Status.Phase != api.PhaseUpdating {
		t.Errorf("phase %q while nodes apply, want updating", got.Status.Phase)
	}
	e.reportAll("lab")
	e.waitPhase("lab", api.PhaseReady)
}

// renderedChanges is the set of nodes whose rendered content differs
// between two versions of a cluster.
func renderedChanges(t *testing.T, s *pki.ClusterSecrets, a, b *api.KubernetesCluster) map[string]bool {
	t.Helper()
	ra, err := render.Render(a, s, nil, render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rb, err := render.Render(b, s, nil, render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for id := range rb {
		if render.Hash(ra[id]) != render.Hash(rb[id]) {
			out[id] = true
		}
	}
	return out
}

func TestNewLeaderFinishesBootstrap(t *testing.T) {
	e := newEnv(t, 3)
	c := labCluster(t, "lab", e.apiPort())
	e.registerNodes(c)
	e.putCluster(c, api.PhaseBootstrapping)
	e.runOrchestrator()
	before := e.waitStates(c)
	sec := e.secretsOf("lab")

	old := e.rc.WaitLeader()
	e.rc.Stop(old.Index)
	if l := e.rc.WaitLeader(); l.ID == old.ID {
		t.Fatal("leadership did not move")
	}
	e.health.start(c, sec, e.apiLn)
	// The new leader may not have applied the states yet: report the
	// generations read before the change, as the agents saw them.
	for _, ns := range before {
		e.report(ns)
	}
	e.waitPhase("lab", api.PhaseReady)
	for id, ns := range e.states("lab") {
		if ns.Generation != before[id].Generation {
			t.Errorf("%s: generation %d -> %d across the leader change", id, before[id].Generation, ns.Generation)
		}
	}
	if !bytes.Equal(e.secretsOf("lab").CA.CertPEM, sec.CA.CertPEM) {
		t.Error("the new leader issued a new cluster CA")
	}
}

func TestDeleteTearsDownThenRemovesEverything(t *testing.T) {
	e := newEnv(t, 1)
	c := labCluster(t, "lab", e.apiPort())
	e.registerNodes(c)
	e.putCluster(c, api.PhaseBootstrapping)
	e.runOrchestrator()
	before := e.waitStates(c)
	e.health.start(c, e.secretsOf("lab"), e.apiLn)
	e.reportAll("lab")
	e.waitPhase("lab", api.PhaseReady)

	e.health.kube.takeCalls()
	e.putCluster(c, api.PhaseDeleting)
	var empty map[string]api.NodeState
	if err := harness.Poll(waitFor, func() error {
		empty = e.states("lab")
		for id, ns := range empty {
			if ns.Generation != before[id].Generation+1 || len(ns.Files)+len(ns.Units)+len(ns.Volumes)+len(ns.Tasks) != 0 {
				return fmt.Errorf("%s: generation %d with %d files", id, ns.Generation, len(ns.Files))
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.cluster("lab"); !ok {
		t.Fatal("cluster removed before the nodes tore down")
	}
	for _, ns := range empty {
		e.report(ns)
	}
	if err := harness.Poll(waitFor, func() error {
		st := e.state()
		for _, kind := range []string{api.KindKubernetesCluster, api.KindNodeState, apiv1.KindNodeReport, store.KindSecret} {
			if n := len(st.List(kind)); n != 0 {
				return fmt.Errorf("%d %s objects left", n, kind)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// The whole API goes away: no node is drained or deleted through it.
	if calls := e.health.kube.takeCalls(); len(calls) > 0 {
		t.Errorf("a cluster delete called the Kubernetes API: %q", calls)
	}
}
