package planapply

import (
	"slices"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/plan"
	"kcore.dev/kcore/pkg/render"
	"kcore.dev/kcore/pkg/store"
)

// Plans render with the render options passed in: the lab profile renders
// another kubelet configuration than the default, so the plan hash differs.
func TestPlanRendersWithTheOptions(t *testing.T) {
	v := objects{index: 7, nodes: []store.Object{object(t, api.KindNode, "node-201", node("node-201", "192.168.41.201"), 5)}}.view(t)
	req := apiv1.PlanRequest{Clusters: []api.KubernetesCluster{edge("edge", "10.97.0.10")}}
	def, err := Plan(v, req, render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lab, err := Plan(v, req, render.Options{Profile: render.ProfileLab})
	if err != nil {
		t.Fatal(err)
	}
	if def.Plan.Blocked() || def.Hash == lab.Hash {
		t.Fatalf("the render options do not reach the plan (blocked %v: %+v)", def.Plan.Blocked(), def.Plan.Blocking)
	}
	if def.Plan.Index != 7 || def.Hash != apiv1.CombinedHash(def.Plan, def.Updates, req) {
		t.Fatalf("plan at index %d with hash %s, want the view's index 7 and the combined hash", def.Plan.Index, def.Hash)
	}
}

// TestPlanUpdates: each ClusterUpdate is created, updated or left alone,
// sorted by name, with the rollout it will run; a duplicate name or an
// invalid spec blocks the plan.
func TestPlanUpdates(t *testing.T) {
	stored := withStatus(update("b", "0.5.0"), "pending")
	same := withStatus(update("c", "0.5.0"), "pending")
	v := objects{index: 20,
		clusters: []store.Object{object(t, api.KindKubernetesCluster, "lab", ready("lab", "10.97.0.10"), 10)},
		updates:  []store.Object{object(t, api.KindClusterUpdate, "b", stored, 12), object(t, api.KindClusterUpdate, "c", same, 13)},
		nodes:    []store.Object{object(t, api.KindNode, "node-201", node("node-201", "192.168.41.201"), 5)},
	}.view(t)

	resp, err := Plan(v, apiv1.PlanRequest{Updates: []api.ClusterUpdate{update("c", "0.5.0"), update("b", "0.5.1"), update("a", "0.5.0")}}, render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range resp.Updates {
		got = append(got, u.Name+":"+u.Action)
		if (u.Action == apiv1.UpdateNoOp) != (u.Rollout == nil || u.Desired == nil) {
			t.Fatalf("update %s (%s) has rollout %v, desired %v", u.Name, u.Action, u.Rollout, u.Desired)
		}
	}
	if want := []string{"a:create", "b:update", "c:no-op"}; !slices.Equal(got, want) || resp.Plan.Blocked() {
		t.Fatalf("updates = %v (blocked %v), want %v", got, resp.Plan.Blocking, want)
	}
	if d := resp.Updates[1].Diff; len(d) != 1 || d[0] != (plan.FieldChange{Path: "spec.version", Old: "0.5.0", New: "0.5.1"}) {
		t.Fatalf("diff of b = %+v", d)
	}

	resp, err = Plan(v, apiv1.PlanRequest{Updates: []api.ClusterUpdate{update("a", "0.5.0"), update("a", "0.5.1"), update("d", "")}}, render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, i := range resp.Plan.Blocking {
		codes = append(codes, i.Code)
	}
	if !slices.Contains(codes, plan.CodeConflictingRequest) || !slices.Contains(codes, plan.CodeInvalidManifest) {
		t.Fatalf("blocking = %v, want a conflicting-request and an invalid-manifest", codes)
	}
}

// A stored update that does not decode fails the plan that compares with it.
func TestPlanUndecodableUpdate(t *testing.T) {
	bad := store.Object{Kind: api.KindClusterUpdate, Name: "u1", ModifyIndex: 12, Data: []byte(`{"spec":{"version":"0.5.0","allNodes":true},"status":{"phase":7}}`)}
	v := objects{index: 20, updates: []store.Object{bad}, nodes: []store.Object{object(t, api.KindNode, "node-201", node("node-201", "192.168.41.201"), 5)}}.view(t)
	if _, err := Plan(v, apiv1.PlanRequest{Updates: []api.ClusterUpdate{update("u1", "0.5.1")}}, render.Options{}); err == nil {
		t.Fatal("a plan over an undecodable stored update succeeded")
	}
}

func TestUpdateDiff(t *testing.T) {
	base := api.ClusterUpdate{Metadata: api.ObjectMeta{Name: "u1"}, Spec: api.UpdateSpec{Version: "0.5.0", AllNodes: true}}
	base.Default()
	tests := []struct {
		name string
		edit func(*api.ClusterUpdate)
		want []plan.FieldChange
	}{
		{"same", func(*api.ClusterUpdate) {}, nil},
		{"version", func(u *api.ClusterUpdate) { u.Spec.Version = "0.5.1" }, []plan.FieldChange{{Path: "spec.version", Old: "0.5.0", New: "0.5.1"}}},
		{"nodes instead of all", func(u *api.ClusterUpdate) { u.Spec.AllNodes = false; u.Spec.Nodes = []string{"n1"} }, []plan.FieldChange{
			{Path: "spec.allNodes", Old: "true"},
			{Path: "spec.nodes[0]", New: "n1"},
		}},
		{"label", func(u *api.ClusterUpdate) { u.Metadata.Labels = map[string]string{"team": "a"} }, []plan.FieldChange{{Path: "metadata.labels.team", New: "a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cur := base
			tt.edit(&cur)
			got := updateDiff(base, cur)
			if len(got) != len(tt.want) {
				t.Fatalf("diff = %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("diff[%d] = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// TestNewView: the stored objects are decoded and indexed by name; a node
// body without a name takes its object's, with its modify index.
func TestNewView(t *testing.T) {
	unnamed := node("", "192.168.41.202")
	v := objects{index: 30,
		clusters: []store.Object{object(t, api.KindKubernetesCluster, "lab", ready("lab", "10.97.0.10"), 10)},
		updates:  []store.Object{object(t, api.KindClusterUpdate, "u1", update("u1", "0.5.0"), 12)},
		nodes:    []store.Object{object(t, api.KindNode, "node-201", node("node-201", "192.168.41.201"), 5), object(t, api.KindNode, "node-202", unnamed, 6)},
	}.view(t)
	if v.Index != 30 || v.Clusters["lab"].ModifyIndex != 10 || v.Updates["u1"].ModifyIndex != 12 {
		t.Fatalf("view = %+v", v)
	}
	if len(v.Stored) != 1 || v.Stored[0].Metadata.Name != "lab" || v.Stored[0].Status.Phase != api.PhaseReady {
		t.Fatalf("stored clusters = %+v", v.Stored)
	}
	if len(v.Nodes) != 2 || v.Nodes[1].Metadata.Name != "node-202" || v.NodeIndex["node-201"] != 5 || v.NodeIndex["node-202"] != 6 {
		t.Fatalf("nodes = %+v, indexes %v", v.Nodes, v.NodeIndex)
	}

	bad := store.Object{Name: "x", Data: []byte(`[]`)}
	if _, err := NewView(1, []store.Object{bad}, nil, nil); err == nil {
		t.Fatal("an undecodable cluster made a view")
	}
	if _, err := NewView(1, nil, nil, []store.Object{bad}); err == nil {
		t.Fatal("an undecodable node made a view")
	}
}
