package orchestrator

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/render"
	"kcore.dev/kcore/pkg/rollout"
	"kcore.dev/kcore/pkg/store"
	"kcore.dev/kcore/tests/harness"
)

// watchFlag starts recording which nodes' units carry arg.
func (a *agents) watchFlag(arg string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.flag, a.flagSeen = arg, map[string][][]string{}
}

// recordFlags appends, per unit, the nodes whose unit carries a.flag in
// the states of st when that set changed.
func (a *agents) recordFlags(st *store.State) {
	if a.flag == "" {
		return
	}
	have := map[string][]string{}
	for _, o := range st.ListPrefix(api.KindNodeState, a.cluster+"/") {
		var ns api.NodeState
		if json.Unmarshal(o.Data, &ns) != nil {
			continue
		}
		for _, u := range ns.Units {
			if slices.Contains(u.Argv, a.flag) {
				have[u.Name] = append(have[u.Name], ns.NodeID)
			}
		}
	}
	for unit, nodes := range have {
		slices.Sort(nodes)
		seen := a.flagSeen[unit]
		if len(seen) == 0 || !slices.Equal(seen[len(seen)-1], nodes) {
			a.flagSeen[unit] = append(seen, nodes)
		}
	}
}

// applySpec stores the lab cluster with its spec changed by mutate, as
// `kctl kubernetes apply` does (a new generation, phase updating).
func (e *env) applySpec(mutate func(*api.ClusterSpec)) {
	e.t.Helper()
	c, _ := e.cluster("lab")
	mutate(&c.Spec)
	e.putCluster(c, api.PhaseUpdating)
}

// waitSpecRollout waits until the lab cluster's spec rollout satisfies ok
// and returns the cluster.
func (e *env) waitSpecRollout(ok func(*api.SpecRollout) error) *api.KubernetesCluster {
	e.t.Helper()
	var c *api.KubernetesCluster
	if err := harness.Poll(waitFor, func() error {
		c, _ = e.cluster("lab")
		return ok(c.Status.SpecRollout)
	}); err != nil {
		e.t.Fatal(err)
	}
	return c
}

func specDone(gen int64) func(*api.SpecRollout) error {
	return func(ro *api.SpecRollout) error {
		if ro == nil || ro.Generation != gen || ro.Phase != api.SpecRolloutDone {
			return fmt.Errorf("spec rollout %+v, want generation %d done", ro, gen)
		}
		return nil
	}
}

func stepOrder(ro *api.SpecRollout) []string {
	var out []string
	for _, s := range ro.Steps {
		out = append(out, s.Scope+":"+strings.Join(s.Nodes, ","))
	}
	return out
}

// TestSpecChangeRollsOneControlPlaneAtATime: an extraArgs change of
// kube-apiserver on three control planes reaches one control plane at a
// time, in the plan's order, each after it handed the VIP over, and the
// next only once the previous passed its gates.
func TestSpecChangeRollsOneControlPlaneAtATime(t *testing.T) {
	e, a := readyCluster(t, 1)
	const flag = "--audit-log-maxage=30"
	a.watchFlag(flag)
	// The gate on node-11's etcd member holds the second step back.
	e.health.gw.lag.Store(10 * etcdLagLimit)
	e.applySpec(func(s *api.ClusterSpec) { s.APIServer.ExtraArgs = map[string]string{"audit-log-maxage": "30"} })

	c := e.waitSpecRollout(func(ro *api.SpecRollout) error {
		if ro == nil || len(ro.Steps) == 0 || !strings.Contains(ro.Steps[0].Message, "waiting: etcd member node-11 applied index 95000") {
			return fmt.Errorf("spec rollout %+v", ro)
		}
		return nil
	})
	want := []string{"control-plane:node-11", "control-plane:node-12", "control-plane:node-13"}
	if got := stepOrder(c.Status.SpecRollout); !slices.Equal(got, want) {
		t.Errorf("steps %v, want %v", got, want)
	}
	if s := c.Status.SpecRollout.Steps[1]; s.State != rollout.StepPending {
		t.Errorf("step 2 is %s while step 1 waits for its gate", s.State)
	}
	for id, ns := range e.states("lab") {
		has := slices.Contains(unitArgv(ns, render.UnitAPIServer), flag)
		if has != (id == "node-11") {
			t.Errorf("%s kube-apiserver has the new flag = %v while step 1 waits", id, has)
		}
	}
	e.health.gw.lag.Store(0)
	c = e.waitSpecRollout(specDone(c.Metadata.Generation))
	for i, s := range c.Status.SpecRollout.Steps {
		if s.State != rollout.StepDone || (i > 0 && s.StartedAt < c.Status.SpecRollout.Steps[i-1].FinishedAt) {
			t.Errorf("step %d %+v", i+1, s)
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.vipHeld) > 0 {
		t.Errorf("kube-apiserver restarted with keepalived still running on %v", a.vipHeld)
	}
	wantSeen := [][]string{{"node-11"}, {"node-11", "node-12"}, {"node-11", "node-12", "node-13"}}
	if got := a.flagSeen[render.UnitAPIServer]; !slices.EqualFunc(got, wantSeen, slices.Equal) {
		t.Errorf("kube-apiservers with the new flag over time: %v, want one more at a time %v", got, wantSeen)
	}
	if got := e.waitPhase("lab", api.PhaseReady); len(got.Status.Pins) != 0 {
		t.Errorf("pins left after the rollout: %+v", got.Status.Pins)
	}
	for id, ns := range e.states("lab") {
		if c.Spec.IsControlPlane(id) && !hasUnit(&storedState{ns: ns}, render.UnitKeepalived) {
			t.Errorf("%s runs no keepalived after the rollout", id)
		}
	}
}

// TestKubeletOnlySpecChangeGoesInBatches: a change that restarts only
// kubelets reaches the members DefaultSpecKubeletBatch at a time, with no
// VIP hand-over.
func TestKubeletOnlySpecChangeGoesInBatches(t *testing.T) {
	e, a := readyCluster(t, 1)
	const flag = "--node-labels=tier=edge"
	a.watchFlag(flag)
	e.applySpec(func(s *api.ClusterSpec) { s.Kubelet.ExtraArgs = map[string]string{"node-labels": "tier=edge"} })
	c := e.waitSpecRollout(specDone(2))
	want := []string{"kubelet:node-11,node-12", "kubelet:node-13,node-14"}
	if got := stepOrder(c.Status.SpecRollout); !slices.Equal(got, want) {
		t.Errorf("steps %v, want batches of %d %v", got, DefaultSpecKubeletBatch, want)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	wantSeen := [][]string{{"node-11", "node-12"}, {"node-11", "node-12", "node-13", "node-14"}}
	if got := a.flagSeen[render.UnitKubelet]; !slices.EqualFunc(got, wantSeen, slices.Equal) {
		t.Errorf("kubelets with the new flag over time: %v, want %v", got, wantSeen)
	}
	if len(a.vipHeld) > 0 || len(a.flagSeen[render.UnitAPIServer]) > 0 {
		t.Errorf("a kubelet change touched kube-apiserver: %v %v", a.vipHeld, a.flagSeen)
	}
}

// TestNewLeaderResumesSpecRollout: the controller leader stops after the
// first control plane moved; the new leader goes on from the step it
// finds, without running the done one again.
func TestNewLeaderResumesSpecRollout(t *testing.T) {
	e, a := readyCluster(t, 3)
	a.watchFlag("--event-ttl=2h")
	e.applySpec(func(s *api.ClusterSpec) { s.APIServer.ExtraArgs = map[string]string{"event-ttl": "2h"} })
	before := e.waitSpecRollout(func(ro *api.SpecRollout) error {
		if ro == nil || len(ro.Steps) < 2 || ro.Steps[0].State != rollout.StepDone {
			return fmt.Errorf("step 1 not done: %+v", ro)
		}
		return nil
	}).Status.SpecRollout
	lead := e.rc.WaitLeader()
	for i, r := range e.rc.Replicas() {
		if r == lead {
			e.rc.Stop(i)
		}
	}
	after := e.waitSpecRollout(specDone(before.Generation)).Status.SpecRollout
	if s, b := after.Steps[0], before.Steps[0]; s.StartedAt != b.StartedAt || s.FinishedAt != b.FinishedAt {
		t.Errorf("step 1 ran again after the leader change: %+v then %+v", b, s)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	wantSeen := [][]string{{"node-11"}, {"node-11", "node-12"}, {"node-11", "node-12", "node-13"}}
	if got := a.flagSeen[render.UnitAPIServer]; !slices.EqualFunc(got, wantSeen, slices.Equal) {
		t.Errorf("kube-apiservers with the new flag over time: %v, want %v", got, wantSeen)
	}
}

func unitArgv(ns api.NodeState, name string) []string {
	for _, u := range ns.Units {
		if u.Name == name {
			return u.Argv
		}
	}
	return nil
}

// TestFailedSpecStepPausesUntilACorrectedSpec: new flags that crash
// kube-apiserver fail the first step; the rollout pauses there, the other
// control planes keep their API servers and the cluster is degraded naming
// the node. A corrected spec replaces the rollout and reaches every node.
func TestFailedSpecStepPausesUntilACorrectedSpec(t *testing.T) {
	e, a := readyCluster(t, 1)
	a.mu.Lock()
	a.brokenArg = "--event-ttl=bad"
	a.mu.Unlock()
	e.applySpec(func(s *api.ClusterSpec) { s.APIServer.ExtraArgs = map[string]string{"event-ttl": "bad"} })
	e.waitSpecRollout(func(ro *api.SpecRollout) error {
		if ro == nil || ro.Phase != rollout.PhasePaused || ro.Steps[0].State != rollout.StepFailed || !strings.Contains(ro.Steps[0].Message, "node-11") {
			return fmt.Errorf("spec rollout %+v, want paused on node-11", ro)
		}
		return nil
	})
	c := e.waitPhase("lab", api.PhaseDegraded)
	if cond := findCondition(c.Status.Conditions, CondRollout); cond == nil || !strings.Contains(cond.Message, "node-11") || !strings.Contains(cond.Message, "apply a corrected spec") {
		t.Errorf("Rollout condition %+v, want it naming node-11 and the way on", cond)
	}
	for id, ns := range e.states("lab") {
		if id != "node-11" && slices.Contains(unitArgv(ns, render.UnitAPIServer), "--event-ttl=bad") {
			t.Errorf("%s got the breaking flag after step 1 failed", id)
		}
	}

	e.applySpec(func(s *api.ClusterSpec) { s.APIServer.ExtraArgs = map[string]string{"event-ttl": "2h"} })
	c = e.waitSpecRollout(specDone(3))
	// node-11 was not ready: it got the corrected state at once.
	if got, want := stepOrder(c.Status.SpecRollout), []string{"control-plane:node-12", "control-plane:node-13"}; !slices.Equal(got, want) {
		t.Errorf("steps %v, want %v", got, want)
	}
	c = e.waitPhase("lab", api.PhaseReady)
	if findCondition(c.Status.Conditions, CondRollout) != nil || len(c.Status.Pins) != 0 {
		t.Errorf("after the corrected spec: conditions %+v pins %+v", c.Status.Conditions, c.Status.Pins)
	}
	for id, ns := range e.states("lab") {
		if c.Spec.IsControlPlane(id) && !slices.Contains(unitArgv(ns, render.UnitAPIServer), "--event-ttl=2h") {
			t.Errorf("%s kube-apiserver runs without the corrected flag", id)
		}
	}
}
