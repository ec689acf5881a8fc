package orchestrator

import (
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
)

// A crashed unit the agent reports restarting is churn in a transitional
// phase and a failure in phase ready; a crash loop and any other failed
// item degrade every phase.
func TestPhaseOfACrashedUnit(t *testing.T) {
	healthy := []api.Condition{
		{Type: CondAPIReady, Status: StatusTrue}, {Type: CondEtcdHealthy, Status: StatusTrue},
		{Type: CondNodesHeartbeating, Status: StatusTrue},
	}
	crash := func(restarts int) api.ItemStatus {
		return api.ItemStatus{Kind: itemKindUnit, Name: "kcore-kube-scheduler", State: api.ItemFailed,
			Message: "exited with status 1, restarting", Restarts: restarts, Restarting: true}
	}
	stays := crash(1)
	stays.Restarting = false
	task := api.ItemStatus{Kind: "task", Name: "kcore-kubernetes-provisioner", State: api.ItemFailed, Message: "exit status 1"}
	t0 := time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		cur   string
		item  api.ItemStatus
		after time.Duration // since the crash was first reported
		want  string
	}{
		{"ready + crash degrades", api.PhaseReady, crash(1), 0, api.PhaseDegraded},
		{"scaling + crash restarting stays scaling", api.PhaseScaling, crash(1), 0, api.PhaseScaling},
		{"updating + crash restarting stays updating", api.PhaseUpdating, crash(2), 0, api.PhaseUpdating},
		{"bootstrapping + crash restarting stays bootstrapping", api.PhaseBootstrapping, crash(1), 0, api.PhaseBootstrapping},
		{"scaling + crash loop degrades", api.PhaseScaling, crash(3), 0, api.PhaseDegraded},
		{"scaling + crash down too long degrades", api.PhaseScaling, crash(1), crashLoopAfter, api.PhaseDegraded},
		{"scaling + crash not restarted degrades", api.PhaseScaling, stays, 0, api.PhaseDegraded},
		{"scaling + task failed degrades", api.PhaseScaling, task, 0, api.PhaseDegraded},
		{"degraded + crash restarting stays degraded", api.PhaseDegraded, crash(1), 0, api.PhaseDegraded},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := &Orchestrator{}
			c := &api.KubernetesCluster{Spec: api.ClusterSpec{ControlPlaneNodes: []api.ClusterNode{{NodeID: "node-105"}}}}
			c.Metadata.Name = "lab"
			gens := map[string]int64{"node-105": 4}
			reports := map[string]*reportObj{"node-105": {r: api.NodeReport{NodeID: "node-105", ObservedGeneration: 4, Items: []api.ItemStatus{
				{Kind: "file", Name: "/etc/kcore/x", State: api.ItemOK}, tc.item,
			}}}}
			o.observe(c, gens, reports, t0)
			ob := o.observe(c, gens, reports, t0.Add(tc.after))
			if ob.allApplied {
				t.Errorf("a failed item counts as applied")
			}
			if got := nextPhase(tc.cur, healthy, ob, false, false, false); got != tc.want {
				t.Errorf("nextPhase(%q) = %q, want %q (failed %q, churn %q)", tc.cur, got, tc.want, ob.failed, ob.churn)
			}
			cond := appliedCondition(ob)
			if cond.Status != StatusFalse || !strings.Contains(cond.Message, "node-105: "+tc.item.Kind+" "+tc.item.Name) {
				t.Errorf("NodesApplied = %+v, want False naming node-105 and %s", cond, tc.item.Name)
			}
		})
	}
}

// A unit that recovered is forgotten: its next crash starts the clock again.
func TestChurnClockRestartsAfterRecovery(t *testing.T) {
	var tr churnTracker
	it := api.ItemStatus{Kind: itemKindUnit, Name: "u", State: api.ItemFailed, Restarts: 1, Restarting: true}
	t0 := time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC)
	tr.begin()
	if !tr.restarting("lab", "n", it, t0) {
		t.Fatal("a fresh crash is not churn")
	}
	tr.end("lab")
	tr.begin()
	tr.end("lab")
	tr.begin()
	if !tr.restarting("lab", "n", it, t0.Add(2*crashLoopAfter)) {
		t.Error("a crash after a recovery counts the earlier crash's time")
	}
	tr.end("lab")
}
