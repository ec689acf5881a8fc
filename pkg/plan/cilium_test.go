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
// once, a Cilium setting change plans the Cilium unit's re-run with the new
// value, and the unit the orchestrator renders from the same stored status
// runs that same argv (helm upgrade --install, which upgrades the release
// in place).
func TestCiliumChangePlansTheUpgradeTheNodeRuns(t *testing.T) {
	st := stored(labCluster(), api.PhaseReady)
	st.Status.Conditions = []api.Condition{{Type: api.ConditionBootstrapped, Status: "True"}}
	next := with(labCluster(), func(c *api.KubernetesCluster) { c.Spec.Cilium.MTU = 9000 })
	p := Compute(Input{Desired: clusters(next), Stored: clusters(st), Nodes: labNodes()})
	if p.Blocked() || len(p.Clusters) != 1 {
		t.Fatalf("plan: %+v", p)
	}
	var planned *ItemChange
	for _, s := range p.Clusters[0].Steps {
		for i, it := range s.Changes {
			if it.Kind == "unit" && it.Name == render.UnitCilium {
				planned = &s.Changes[i]
			}
		}
	}
	if planned == nil {
		t.Fatalf("the plan does not re-run %s: %+v", render.UnitCilium, p.Clusters[0].Steps)
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
	if i < 0 {
		t.Fatal("the orchestrator's render has no cilium unit")
	}
	u := states["node-105"].Units[i]
	if !slices.Equal(u.Argv[:3], []string{"helm", "upgrade", "--install"}) || !slices.Contains(u.Argv, "MTU=9000") {
		t.Fatalf("the orchestrator's render of the same status runs %q, want helm upgrade --install with MTU=9000", u.Argv)
	}
	if !strings.Contains(planned.Reason, "helm upgrade --install") {
		t.Errorf("the plan's reason %q does not name the command the node runs", planned.Reason)
	}
}

func nodeMap(nodes []*api.Node) map[string]*api.Node {
	out := map[string]*api.Node{}
	for _, n := range nodes {
		out[n.Metadata.Name] = n
	}
	return out
}

// The bootstrap control plane's facts decide the cilium-installer-missing
// warning: versions without helm or the chart warn, naming what is
// missing; both present, or no versions reported at all, do not.
func TestCiliumInstallerMissing(t *testing.T) {
	for _, tc := range []struct {
		name     string
		versions map[string]string
		want     []string
	}{
		{"neither", map[string]string{"containerd": "v2.4.2"}, []string{"no helm and no Cilium chart in " + render.CiliumChartDir}},
		{"no helm", map[string]string{api.VersionCiliumChart: "1.20.2"}, []string{"no helm:"}},
		{"both", map[string]string{api.VersionHelm: "v4.3.2", api.VersionCiliumChart: "1.20.2"}, nil},
		{"no versions reported", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nodes := labNodes()
			find(nodes, "node-105").Facts.Versions = tc.versions
			p := Compute(Input{Desired: clusters(labCluster()), Nodes: nodes})
			var got []Issue
			for _, w := range p.Warnings {
				if w.Code == CodeCiliumInstallerMissing {
					got = append(got, w)
				}
			}
			if len(got) != min(len(tc.want), 1) {
				t.Fatalf("warnings %+v, want %d of %s", p.Warnings, len(tc.want), CodeCiliumInstallerMissing)
			}
			for _, w := range tc.want {
				if got[0].Node != "node-105" || !strings.Contains(got[0].Message, w) {
					t.Errorf("warning %+v lacks %q", got[0], w)
				}
			}
		})
	}
}
