package orchestrator

import (
	"bytes"
	"context"
	"fmt"
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

	// A failed item degrades the cluster and the condition names it.
	e.report(states["node-14"], "unit "+render.UnitKubelet)
	got = e.waitPhase("lab", api.PhaseDegraded)
	cond := findCondition(got.Status.Conditions, CondNodesApplied)
	if cond == nil || cond.Status != StatusFalse || !strings.Contains(cond.Message, "node-14") || !strings.Contains(cond.Message, render.UnitKubelet) {
		t.Errorf("NodesApplied = %+v, want False naming node-14 and %s", cond, render.UnitKubelet)
	}
	e.report(states["node-14"])
	e.waitPhase("lab", api.PhaseReady)

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

	// Re-applying the same manifest (the server marks it updating) bumps
	// no generation and rewrites no NodeState.
	before := st.List(api.KindNodeState)
	e.putCluster(c, api.PhaseUpdating)
	e.reconcileOnce(o, false)
	if got, _ := e.cluster("lab"); got.Status.Phase != api.PhaseReady {
		t.Fatalf("re-apply: phase %q, want ready", got.Status.Phase)
	}
	after := st.List(api.KindNodeState)
	for i := range before {
		if before[i].ModifyIndex != after[i].ModifyIndex {
			t.Errorf("re-apply rewrote %s", before[i].Name)
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

	changed := *c
	changed.Spec.ScheduleOnControlPlane = !c.Spec.ScheduleOnControlPlane
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
}
