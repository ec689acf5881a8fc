package server

import (
	"errors"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/plan"
	"kcore.dev/kcore/pkg/render"
	"kcore.dev/kcore/pkg/store"
)

func TestMayApply(t *testing.T) {
	cluster := apiv1.PlanRequest{Clusters: []api.KubernetesCluster{{Metadata: api.ObjectMeta{Name: "lab"}}}}
	scale := apiv1.PlanRequest{Scale: &plan.ScaleRequest{Cluster: "lab", Remove: []string{"n1"}}}
	updates := apiv1.PlanRequest{Updates: []api.ClusterUpdate{{Metadata: api.ObjectMeta{Name: "u1"}}}}
	tests := []struct {
		name string
		role string
		req  apiv1.PlanRequest
		ok   bool
	}{
		{"admin applies clusters", apiv1.RoleClusterAdmin, cluster, true},
		{"operator scales", apiv1.RoleOperator, scale, true},
		{"operator applies updates", apiv1.RoleOperator, updates, true},
		{"operator applies a cluster", apiv1.RoleOperator, cluster, false},
		{"operator deletes", apiv1.RoleOperator, apiv1.PlanRequest{Delete: []string{"lab"}}, false},
		{"operator prunes", apiv1.RoleOperator, apiv1.PlanRequest{Prune: true}, false},
		{"viewer applies updates", apiv1.RoleViewer, updates, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := mayApply(tt.role, tt.req)
			var ae *apiError
			if tt.ok != (err == nil) || (err != nil && (!errors.As(err, &ae) || ae.body.Code != apiv1.CodeForbidden)) {
				t.Fatalf("mayApply = %v, want ok=%v", err, tt.ok)
			}
		})
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

func TestApplyObject(t *testing.T) {
	tests := []struct {
		req  apiv1.PlanRequest
		want string
	}{
		{apiv1.PlanRequest{Delete: []string{"lab"}}, "KubernetesCluster/lab"},
		{apiv1.PlanRequest{Updates: []api.ClusterUpdate{{Metadata: api.ObjectMeta{Name: "u1"}}}}, "ClusterUpdate/u1"},
		{apiv1.PlanRequest{Prune: true, Clusters: []api.KubernetesCluster{{Metadata: api.ObjectMeta{Name: "a"}}}}, "KubernetesCluster/a,prune"},
		{apiv1.PlanRequest{Prune: true, Clusters: []api.KubernetesCluster{{Metadata: api.ObjectMeta{Name: "a"}}, {Metadata: api.ObjectMeta{Name: "b"}}}}, "KubernetesCluster/a,KubernetesCluster/b,prune"},
	}
	for _, tt := range tests {
		if got := applyObject(tt.req); got != tt.want {
			t.Errorf("applyObject = %q, want %q", got, tt.want)
		}
	}
}

// Plans render with the orchestrator's render options: a controller with the
// lab profile plans the lab profile's kubelet configuration, so its plan
// hash differs from the default profile's.
func TestComputeRendersWithTheOrchestratorsOptions(t *testing.T) {
	n := &api.Node{Metadata: api.ObjectMeta{Name: "node-201"}, Status: api.NodeHealth{Ready: true}, Facts: api.NodeFacts{
		Addresses: []string{"192.168.41.201"}, Interfaces: []api.Interface{{Name: "enp6s0", Up: true, Addresses: []string{"192.168.41.201/24"}}},
	}}
	v := &view{index: 7, clusters: map[string]store.Object{}, updates: map[string]store.Object{}, nodes: []*api.Node{n}, nodeIndex: map[string]uint64{}}
	req := apiv1.PlanRequest{Clusters: []api.KubernetesCluster{{
		Kind: api.KindKubernetesCluster, Metadata: api.ObjectMeta{Name: "edge"},
		Spec: api.ClusterSpec{
			ClusterCIDR: "10.245.0.0/16", ServiceCIDR: "10.97.0.0/16", ClusterDNS: "10.97.0.10",
			APIServerEndpoint: "192.168.41.201:6443", ScheduleOnControlPlane: true,
			ControlPlaneNodes: []api.ClusterNode{{NodeID: "node-201", AdvertiseAddress: "192.168.41.201"}},
		},
	}}}
	def, err := compute(v, req, 7, render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lab, err := compute(v, req, 7, render.Options{Profile: render.ProfileLab})
	if err != nil {
		t.Fatal(err)
	}
	if def.Plan.Blocked() || def.Hash == lab.Hash {
		t.Fatalf("the render options do not reach the plan (blocked %v: %+v)", def.Plan.Blocked(), def.Plan.Blocking)
	}
	s := &Server{backend: optionsBackend{opts: render.Options{Profile: render.ProfileLab}}}
	if s.renderOptions().Profile != render.ProfileLab {
		t.Fatal("the server does not take the render options from its backend")
	}
}

// optionsBackend is a Backend that only knows render options.
type optionsBackend struct {
	Backend
	opts render.Options
}

func (b optionsBackend) RenderOptions() render.Options { return b.opts }
