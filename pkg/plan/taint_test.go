package plan

import (
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
)

// TestScheduleOnControlPlaneNamesTheNodeTaint: turning
// scheduleOnControlPlane off or on plans, on every control plane, the
// kubelet restart and the Node object whose taint the orchestrator adds or
// removes; a worker's kubelet step names no taint.
func TestScheduleOnControlPlaneNamesTheNodeTaint(t *testing.T) {
	for _, tc := range []struct {
		name     string
		from, to bool
		want     string
	}{
		{"off adds the taint", true, false, "added"},
		{"on removes the taint", false, true, "removed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := stored(with(labCluster(), func(c *api.KubernetesCluster) { c.Spec.ScheduleOnControlPlane = tc.from }), api.PhaseReady)
			next := with(labCluster(), func(c *api.KubernetesCluster) { c.Spec.ScheduleOnControlPlane = tc.to })
			p := Compute(Input{Desired: clusters(next), Stored: clusters(st), Nodes: labNodes()})
			if p.Blocked() || len(p.Clusters) != 1 {
				t.Fatalf("plan: %+v", p)
			}
			seen := map[string]bool{}
			for _, s := range p.Clusters[0].Steps {
				if s.Component != ComponentKubelet {
					continue
				}
				want := "Node " + s.Node + ": taint node-role.kubernetes.io/control-plane:NoSchedule " + tc.want
				if !strings.Contains(s.Detail, want) {
					t.Errorf("%s's kubelet step detail %q, want %q", s.Node, s.Detail, want)
				}
				seen[s.Node] = true
			}
			if !seen["node-105"] || !seen["node-107"] || seen["node-103"] {
				t.Errorf("kubelet steps on %v, want the control planes node-105 and node-107 only", seen)
			}
		})
	}
}
