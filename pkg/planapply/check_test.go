package planapply

import (
	"errors"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/plan"
	"kcore.dev/kcore/pkg/render"
	"kcore.dev/kcore/pkg/store"
)

// withVolume is c with a 10 GiB LVM volume on node-201.
func withVolume(c api.KubernetesCluster) api.KubernetesCluster {
	c.Spec.LocalProvisioner = api.LocalProvisionerSpec{Enabled: true, Volumes: []api.VolumeSpec{
		{Name: "data", NodeID: "node-201", StorageClass: api.StorageClassLVM, SizeBytes: 10 << 30},
	}}
	return c
}

// TestCheck: the plan reviewed at index 20 is recomputed against the state
// at apply and refused for each reason with the words that say why, or
// passed when nothing it depends on changed.
func TestCheck(t *testing.T) {
	n201 := object(t, api.KindNode, "node-201", node("node-201", "192.168.41.201"), 5)
	// node-201 written again with the same facts (a label, a heartbeat).
	n201Same := object(t, api.KindNode, "node-201", node("node-201", "192.168.41.201"), 25)
	// node-201 now reports its volume group as vg1: a volume would be
	// created elsewhere than the plan showed.
	moved := node("node-201", "192.168.41.201")
	moved.Facts.Storage[0].Name = "vg1"
	n201Moved := object(t, api.KindNode, "node-201", moved, 25)
	lab := object(t, api.KindKubernetesCluster, "lab", ready("lab", "10.97.0.10"), 10)
	// lab with only observations written after the plan: a health check's
	// time and a condition's message, as the controller writes every
	// health interval.
	observed := ready("lab", "10.97.0.10")
	observed.Status.LastHealthCheck, observed.Status.HealthInterval = "2026-01-01T00:10:00Z", "10s"
	observed.Status.Conditions = append(observed.Status.Conditions, api.Condition{Type: "Addons", Status: "False", Reason: "Unavailable", Message: "1/2 available"})
	labObserved := object(t, api.KindKubernetesCluster, "lab", observed, 25)
	// lab written by another apply after the plan: the same spec, its
	// generation moved on.
	rewritten := ready("lab", "10.97.0.10")
	rewritten.Metadata.Generation++
	labRewritten := object(t, api.KindKubernetesCluster, "lab", rewritten, 25)
	// lab turned degraded after the plan.
	degraded := ready("lab", "10.97.0.10")
	degraded.Status.Phase = api.PhaseDegraded
	labDegraded := object(t, api.KindKubernetesCluster, "lab", degraded, 25)
	u1 := object(t, api.KindClusterUpdate, "u1", withStatus(update("u1", "0.5.0"), "pending"), 12)
	u1Touched := object(t, api.KindClusterUpdate, "u1", withStatus(update("u1", "0.5.0"), "pending"), 25)
	at20 := objects{index: 20, clusters: []store.Object{lab}, updates: []store.Object{u1}, nodes: []store.Object{n201}}

	change := apiv1.PlanRequest{Clusters: []api.KubernetesCluster{edge("lab", "10.97.0.53")}}
	tests := []struct {
		name string
		// req is planned against at20 and sent back by edit against now.
		req  apiv1.PlanRequest
		edit func(*apiv1.ApplyRequest)
		now  objects
		// stale is the StaleError's reason; "" when the check passes.
		stale string
	}{
		{
			name: "fresh", req: change, now: at20,
		},
		{
			name: "a node written since that renders the same", req: change,
			now: objects{index: 25, clusters: []store.Object{lab}, updates: []store.Object{u1}, nodes: []store.Object{n201Same}},
		},
		{
			name: "index ahead of the controller's", req: change, now: at20,
			edit:  func(r *apiv1.ApplyRequest) { r.Index = 21 },
			stale: "the plan's index 21 is ahead of the controller's 20",
		},
		{
			name: "hash not the reviewed one", req: change, now: at20,
			edit:  func(r *apiv1.ApplyRequest) { r.Hash = "0000" },
			stale: "what would be applied now differs from the reviewed plan (index 20): its steps, the files, units, tasks and volumes they render, its issues or its options changed",
		},
		{
			name: "delete options not the reviewed ones", req: apiv1.PlanRequest{Delete: []string{"lab"}}, now: at20,
			edit:  func(r *apiv1.ApplyRequest) { r.Request.PurgeVolumes = true },
			stale: "what would be applied now differs from the reviewed plan (index 20): its steps, the files, units, tasks and volumes they render, its issues or its options changed",
		},
		{
			name: "cluster status observed since", req: change,
			now: objects{index: 25, clusters: []store.Object{labObserved}, updates: []store.Object{u1}, nodes: []store.Object{n201}},
		},
		{
			name: "cluster written by another apply since", req: change,
			now:   objects{index: 25, clusters: []store.Object{labRewritten}, updates: []store.Object{u1}, nodes: []store.Object{n201}},
			stale: "KubernetesCluster/lab changed since this plan was made (index 20)",
		},
		{
			name: "cluster phase moved since", req: apiv1.PlanRequest{Delete: []string{"lab"}},
			now:   objects{index: 25, clusters: []store.Object{labDegraded}, updates: []store.Object{u1}, nodes: []store.Object{n201}},
			stale: "KubernetesCluster/lab changed since this plan was made (index 20)",
		},
		{
			name: "ClusterUpdate written since", req: apiv1.PlanRequest{Updates: []api.ClusterUpdate{update("u1", "0.5.1")}},
			now:   objects{index: 25, clusters: []store.Object{lab}, updates: []store.Object{u1Touched}, nodes: []store.Object{n201}},
			stale: "ClusterUpdate/u1 changed since this plan was made (index 20)",
		},
		{
			name: "both written since", req: apiv1.PlanRequest{Clusters: change.Clusters, Updates: []api.ClusterUpdate{update("u1", "0.5.1")}},
			now:   objects{index: 25, clusters: []store.Object{labRewritten}, updates: []store.Object{u1Touched}, nodes: []store.Object{n201}},
			stale: "KubernetesCluster/lab, ClusterUpdate/u1 changed since this plan was made (index 20)",
		},
		{
			name: "a member reported new facts", req: apiv1.PlanRequest{Clusters: []api.KubernetesCluster{withVolume(edge("lab", "10.97.0.10"))}},
			now:   objects{index: 25, clusters: []store.Object{lab}, updates: []store.Object{u1}, nodes: []store.Object{n201Moved}},
			stale: "what would be rendered now differs from the reviewed plan: node-201 reported new facts since index 20",
		},
		{
			name: "a member reported new facts, the cluster's status observed", req: apiv1.PlanRequest{Clusters: []api.KubernetesCluster{withVolume(edge("lab", "10.97.0.10"))}},
			now:   objects{index: 25, clusters: []store.Object{labObserved}, updates: []store.Object{u1}, nodes: []store.Object{n201Moved}},
			stale: "what would be rendered now differs from the reviewed plan: node-201 reported new facts since index 20",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := reviewed(t, at20.view(t), tt.req)
			if tt.edit != nil {
				tt.edit(&req)
			}
			resp, err := Check(tt.now.view(t), req, render.Options{})
			if tt.stale == "" {
				if err != nil || resp == nil || resp.Hash != req.Hash {
					t.Fatalf("check = %v, %v; want the reviewed plan", resp, err)
				}
				return
			}
			var se *StaleError
			if !errors.As(err, &se) || se.Reason != tt.stale || se.Error() != tt.stale || se.Index != req.Index {
				t.Fatalf("check = %v, want stale: %s", err, tt.stale)
			}
			if _, _, err := Commit(tt.now.view(t), req, render.Options{}, commitTime()); !errors.As(err, &se) {
				t.Fatalf("commit of a stale plan = %v, want stale", err)
			}
		})
	}
}

// A plan with blocking issues is refused with them, and a replace is
// refused before anything is computed.
func TestCheckRefuses(t *testing.T) {
	v := objects{index: 20, nodes: []store.Object{object(t, api.KindNode, "node-201", node("node-201", "192.168.41.201"), 5)}}.view(t)

	req := reviewed(t, v, apiv1.PlanRequest{Delete: []string{"gone"}})
	_, _, err := Commit(v, req, render.Options{}, commitTime())
	var be *BlockedError
	if !errors.As(err, &be) || len(be.Issues) != 1 || be.Issues[0].Code != plan.CodeClusterNotFound {
		t.Fatalf("commit of a blocked plan = %v, want blocked by cluster-not-found", err)
	}
	if want := "the plan is blocked by 1 issue(s): cluster-not-found"; be.Error() != want {
		t.Fatalf("blocked error = %q, want %q", be.Error(), want)
	}

	// Even with a hash that no plan has: replace is refused first.
	_, _, err = Commit(v, apiv1.ApplyRequest{Request: apiv1.PlanRequest{Recreate: []string{"lab", "edge"}}, Index: 99, Hash: "x"}, render.Options{}, commitTime())
	var re *ReplaceError
	if !errors.As(err, &re) || re.Cluster != "lab" {
		t.Fatalf("commit of a replace = %v, want a replace error naming lab", err)
	}
}
