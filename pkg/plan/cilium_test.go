package plan

import (
	"slices"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/render"
)

// TestCiliumChangePlansTheUpgradeTheNodeRuns: on a cluster that was ready
// once, a Cilium setting change plans `cilium upgrade`, and the unit the
// orchestrator renders from the same stored status runs cilium upgrade.
func TestCiliumChangePlansTheUpgradeTheNodeRuns(t *testing.T) {
	st := stored(labCluster(), api.PhaseReady)
	st.Status.Conditions = []api.Condition{{Type: api.ConditionBootstrapped, Status: "True"}}
	next := with(labCluster(), func(c *api.KubernetesCluster) { c.Spec.Cilium.MTU = 9000 })
	p := Compute(Input{Desired: clusters(next), Stored: clusters(st), Nodes: labNodes()})
	if p.Blocked() || len(p.Clusters) != 1 {
		t.Fatalf("plan: %+v", p)
	}
	var reason string
	for _, s := range p.Clusters[0].Steps {
		for _, it := range s.Changes {
			if it.Kind == "unit" && it.Name == render.UnitCilium {
				reason = it.Reason
			}
		}
	}
	if !strings.Contains(reason, "`cilium upgrade`") {
		t.Fatalf("the plan's cilium unit: %q, want cilium upgrade", reason)
	}
	rc := *next
	rc.Default()
	rc.Status = st.Status
	sec, err := pki.Placeholder(&rc)
	if err != nil {
		t.Fatal(err)
	}
	states, err := render.Render(&rc, sec, nodeMap(labNodes()), render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(states["node-105"].Units, func(u api.Unit) bool { return u.Name == render.UnitCilium })
	if i < 0 || states["node-105"].Units[i].Argv[1] != render.CiliumUpgrade {
		t.Fatalf("the orchestrator's render of the same status runs %v, want cilium upgrade", states["node-105"].Units)
	}
}

func nodeMap(nodes []*api.Node) map[string]*api.Node {
	out := map[string]*api.Node{}
	for _, n := range nodes {
		out[n.Metadata.Name] = n
	}
	return out
}
