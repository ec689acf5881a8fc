package planapply

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/plan"
	"kcore.dev/kcore/pkg/render"
	"kcore.dev/kcore/pkg/rollout"
	"kcore.dev/kcore/pkg/store"
)

// put is what a commit op writes, decoded: the CAS index it expects and the
// fields apply sets.
type put struct {
	kind, name string
	// expect is the ModifyIndex the put requires; 0: the object must not exist.
	expect uint64
	phase  string
	gen    int64
	// created is a cluster's metadata.createdAt.
	created string
	// dns is a cluster's spec.clusterDns, version an update's spec.version.
	dns, version string
	// conditions are a cluster's conditions as Type, or Type@Since when set.
	conditions []string
}

// decodePut decodes one op of a commit.
func decodePut(t *testing.T, op store.Op) put {
	t.Helper()
	p := op.Put
	if p == nil || p.ExpectModifyIndex == nil {
		t.Fatalf("op %+v is not a CAS put", op)
	}
	got := put{kind: p.Kind, name: p.Name, expect: *p.ExpectModifyIndex}
	switch p.Kind {
	case api.KindKubernetesCluster:
		var c api.KubernetesCluster
		if err := json.Unmarshal(p.Data, &c); err != nil {
			t.Fatal(err)
		}
		if c.Kind != api.KindKubernetesCluster || c.APIVersion != api.APIVersion || c.Metadata.Name != p.Name {
			t.Fatalf("cluster %s is stored as %s %s %q", p.Name, c.APIVersion, c.Kind, c.Metadata.Name)
		}
		got.phase, got.gen, got.created, got.dns = c.Status.Phase, c.Metadata.Generation, c.Metadata.CreatedAt, c.Spec.ClusterDNS
		for _, cond := range c.Status.Conditions {
			s := cond.Type
			if cond.Since != "" {
				s += "@" + cond.Since
			}
			got.conditions = append(got.conditions, s)
		}
	case api.KindClusterUpdate:
		var u api.ClusterUpdate
		if err := json.Unmarshal(p.Data, &u); err != nil {
			t.Fatal(err)
		}
		got.phase, got.gen, got.version = u.Status.Phase, u.Metadata.Generation, u.Spec.Version
	}
	return got
}

// withConditions is c with its conditions replaced.
func withConditions(c api.KubernetesCluster, conds ...api.Condition) api.KubernetesCluster {
	c.Status.Conditions = conds
	return c
}

// withStatus is u as stored at generation 2 with its rollout in phase.
func withStatus(u api.ClusterUpdate, phase string) api.ClusterUpdate {
	u.Default()
	u.Metadata.Generation = 2
	u.Status = api.UpdateStatus{Phase: phase}
	return u
}

// TestCommitOps: the ops a commit writes for each kind of change, each a
// CAS put on the index the plan read, and the answer naming what it wrote.
func TestCommitOps(t *testing.T) {
	n201 := object(t, api.KindNode, "node-201", node("node-201", "192.168.41.201"), 5)
	n202 := object(t, api.KindNode, "node-202", node("node-202", "192.168.41.202"), 6)
	lab := object(t, api.KindKubernetesCluster, "lab", ready("lab", "10.97.0.10"), 10)
	old := object(t, api.KindKubernetesCluster, "old", stored(edgeOn("old", "node-202", "192.168.41.202", "10.97.0.10")), 11)
	// A cluster a delete with --force was asked for before, then not applied.
	forced := object(t, api.KindKubernetesCluster, "lab", withConditions(ready("lab", "10.97.0.10"),
		api.Condition{Type: "APIReady", Status: "True"},
		api.Condition{Type: api.ConditionForceDelete, Status: "True", Since: "2026-01-02T00:00:00Z"}), 10)
	// A cluster being deleted with --purge-volumes, not forced.
	deleting := withConditions(ready("lab", "10.97.0.10"), api.Condition{Type: api.ConditionPurgeVolumes, Status: "True", Since: "2026-01-02T00:00:00Z"})
	deleting.Status.Phase = api.PhaseDeleting
	stuck := object(t, api.KindKubernetesCluster, "lab", deleting, 10)
	pending := object(t, api.KindClusterUpdate, "u1", withStatus(update("u1", "0.5.0"), rollout.PhasePending), 12)
	rolling := object(t, api.KindClusterUpdate, "u1", withStatus(update("u1", "0.5.0"), rollout.PhaseRolling), 12)
	labOnly := objects{index: 20, clusters: []store.Object{lab}, nodes: []store.Object{n201, n202}}

	tests := []struct {
		name     string
		stored   objects
		req      apiv1.PlanRequest
		want     []put
		clusters map[string]string
		updates  []string
	}{
		{
			name:     "create",
			stored:   objects{index: 20, nodes: []store.Object{n201}},
			req:      apiv1.PlanRequest{Clusters: []api.KubernetesCluster{edge("lab", "10.97.0.10")}},
			want:     []put{{kind: api.KindKubernetesCluster, name: "lab", expect: 0, phase: api.PhaseBootstrapping, gen: 1, dns: "10.97.0.10"}},
			clusters: map[string]string{"lab": api.PhaseBootstrapping},
		},
		{
			name:   "change keeps the status and creation time",
			stored: labOnly,
			req:    apiv1.PlanRequest{Clusters: []api.KubernetesCluster{edge("lab", "10.97.0.53")}},
			want: []put{{kind: api.KindKubernetesCluster, name: "lab", expect: 10, phase: api.PhaseUpdating, gen: 4,
				created: "2026-01-01T00:00:00Z", dns: "10.97.0.53", conditions: []string{"APIReady"}}},
			clusters: map[string]string{"lab": api.PhaseUpdating},
		},
		{
			name:   "scale",
			stored: labOnly,
			req: apiv1.PlanRequest{Scale: &plan.ScaleRequest{Cluster: "lab", AddWorkers: []api.ClusterNode{
				{NodeID: "node-202", AdvertiseAddress: "192.168.41.202"}}}},
			want: []put{{kind: api.KindKubernetesCluster, name: "lab", expect: 10, phase: api.PhaseScaling, gen: 4,
				created: "2026-01-01T00:00:00Z", dns: "10.97.0.10", conditions: []string{"APIReady"}}},
			clusters: map[string]string{"lab": api.PhaseScaling},
		},
		{
			name:   "delete keeps volumes",
			stored: labOnly,
			req:    apiv1.PlanRequest{Delete: []string{"lab"}},
			want: []put{{kind: api.KindKubernetesCluster, name: "lab", expect: 10, phase: api.PhaseDeleting, gen: 3,
				created: "2026-01-01T00:00:00Z", dns: "10.97.0.10", conditions: []string{"APIReady"}}},
			clusters: map[string]string{"lab": api.PhaseDeleting},
		},
		{
			name:   "delete with force and purge",
			stored: labOnly,
			req:    apiv1.PlanRequest{Delete: []string{"lab"}, Force: true, PurgeVolumes: true},
			want: []put{{kind: api.KindKubernetesCluster, name: "lab", expect: 10, phase: api.PhaseDeleting, gen: 3,
				created: "2026-01-01T00:00:00Z", dns: "10.97.0.10",
				conditions: []string{"APIReady", api.ConditionForceDelete + "@" + atText, api.ConditionPurgeVolumes + "@" + atText}}},
			clusters: map[string]string{"lab": api.PhaseDeleting},
		},
		{
			name:   "delete replaces the options asked for before",
			stored: objects{index: 20, clusters: []store.Object{forced}, nodes: []store.Object{n201}},
			req:    apiv1.PlanRequest{Delete: []string{"lab"}, PurgeVolumes: true},
			want: []put{{kind: api.KindKubernetesCluster, name: "lab", expect: 10, phase: api.PhaseDeleting, gen: 3,
				created: "2026-01-01T00:00:00Z", dns: "10.97.0.10",
				conditions: []string{"APIReady", api.ConditionPurgeVolumes + "@" + atText}}},
			clusters: map[string]string{"lab": api.PhaseDeleting},
		},
		{
			name:   "delete --force escalates a delete in progress and keeps its options",
			stored: objects{index: 20, clusters: []store.Object{stuck}, nodes: []store.Object{n201}},
			req:    apiv1.PlanRequest{Delete: []string{"lab"}, Force: true},
			want: []put{{kind: api.KindKubernetesCluster, name: "lab", expect: 10, phase: api.PhaseDeleting, gen: 3,
				created: "2026-01-01T00:00:00Z", dns: "10.97.0.10",
				conditions: []string{api.ConditionPurgeVolumes + "@2026-01-02T00:00:00Z", api.ConditionForceDelete + "@" + atText}}},
			clusters: map[string]string{"lab": api.PhaseDeleting},
		},
		{
			name:   "prune deletes what no manifest names and leaves the rest unwritten",
			stored: objects{index: 20, clusters: []store.Object{lab, old}, nodes: []store.Object{n201, n202}},
			req:    apiv1.PlanRequest{Clusters: []api.KubernetesCluster{edge("lab", "10.97.0.10")}, Prune: true},
			want: []put{{kind: api.KindKubernetesCluster, name: "old", expect: 11, phase: api.PhaseDeleting, gen: 3,
				created: "2026-01-01T00:00:00Z", dns: "10.97.0.10", conditions: []string{"APIReady"}}},
			clusters: map[string]string{"old": api.PhaseDeleting},
		},
		{
			name:     "ClusterUpdate create",
			stored:   labOnly,
			req:      apiv1.PlanRequest{Updates: []api.ClusterUpdate{update("u1", "0.5.0")}},
			want:     []put{{kind: api.KindClusterUpdate, name: "u1", expect: 0, phase: rollout.PhasePending, gen: 1, version: "0.5.0"}},
			clusters: map[string]string{},
			updates:  []string{"u1"},
		},
		{
			name:     "ClusterUpdate change before its rollout started starts over",
			stored:   objects{index: 20, clusters: []store.Object{lab}, updates: []store.Object{pending}, nodes: []store.Object{n201}},
			req:      apiv1.PlanRequest{Updates: []api.ClusterUpdate{update("u1", "0.5.1")}},
			want:     []put{{kind: api.KindClusterUpdate, name: "u1", expect: 12, phase: rollout.PhasePending, gen: 3, version: "0.5.1"}},
			clusters: map[string]string{},
			updates:  []string{"u1"},
		},
		{
			name:     "ClusterUpdate change while rolling keeps its status",
			stored:   objects{index: 20, clusters: []store.Object{lab}, updates: []store.Object{rolling}, nodes: []store.Object{n201}},
			req:      apiv1.PlanRequest{Updates: []api.ClusterUpdate{update("u1", "0.5.1")}},
			want:     []put{{kind: api.KindClusterUpdate, name: "u1", expect: 12, phase: rollout.PhaseRolling, gen: 3, version: "0.5.1"}},
			clusters: map[string]string{},
			updates:  []string{"u1"},
		},
		{
			name:     "cluster and ClusterUpdate in one batch, clusters first",
			stored:   objects{index: 20, clusters: []store.Object{lab}, updates: []store.Object{pending}, nodes: []store.Object{n201}},
			req:      apiv1.PlanRequest{Clusters: []api.KubernetesCluster{edge("lab", "10.97.0.53")}, Updates: []api.ClusterUpdate{update("u1", "0.5.1")}},
			clusters: map[string]string{"lab": api.PhaseUpdating},
			updates:  []string{"u1"},
			want: []put{
				{kind: api.KindKubernetesCluster, name: "lab", expect: 10, phase: api.PhaseUpdating, gen: 4,
					created: "2026-01-01T00:00:00Z", dns: "10.97.0.53", conditions: []string{"APIReady"}},
				{kind: api.KindClusterUpdate, name: "u1", expect: 12, phase: rollout.PhasePending, gen: 3, version: "0.5.1"},
			},
		},
		{
			name:     "unchanged manifests write nothing",
			stored:   objects{index: 20, clusters: []store.Object{lab}, updates: []store.Object{pending}, nodes: []store.Object{n201}},
			req:      apiv1.PlanRequest{Clusters: []api.KubernetesCluster{edge("lab", "10.97.0.10")}, Updates: []api.ClusterUpdate{update("u1", "0.5.0")}},
			clusters: map[string]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := tt.stored.view(t)
			req := reviewed(t, v, tt.req)
			ops, out, err := Commit(v, req, render.Options{}, commitTime())
			if err != nil {
				t.Fatalf("commit: %v", err)
			}
			var got []put
			for _, op := range ops {
				got = append(got, decodePut(t, op))
			}
			if len(got) != len(tt.want) {
				t.Fatalf("ops = %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if g, w := got[i], tt.want[i]; g.kind != w.kind || g.name != w.name || g.expect != w.expect || g.phase != w.phase ||
					g.gen != w.gen || g.created != w.created || g.dns != w.dns || g.version != w.version || !slices.Equal(g.conditions, w.conditions) {
					t.Fatalf("op %d = %+v, want %+v", i, g, w)
				}
			}
			if out.Hash != req.Hash || out.Index != 0 || !maps.Equal(out.Clusters, tt.clusters) || !slices.Equal(out.Updates, tt.updates) {
				t.Fatalf("answer = %+v, want hash %s, clusters %v, updates %v", out, req.Hash, tt.clusters, tt.updates)
			}
		})
	}
}

// TestCommitReplaceByManifest: a manifest that swaps a dead control plane
// for a new machine is stored as a scale (phase scaling), since only a
// scaling cluster's etcd membership is changed by the orchestrator.
func TestCommitReplaceByManifest(t *testing.T) {
	cps := []api.ClusterNode{
		{NodeID: "node-201", AdvertiseAddress: "192.168.41.201"},
		{NodeID: "node-202", AdvertiseAddress: "192.168.41.202"},
		{NodeID: "node-203", AdvertiseAddress: "192.168.41.203"},
	}
	three := edge("lab", "10.97.0.10")
	three.Spec.ControlPlaneNodes = cps
	lab := object(t, api.KindKubernetesCluster, "lab", stored(three), 10)
	var nodes []store.Object
	for i, id := range []string{"node-201", "node-202", "node-203", "node-204"} {
		n := node(id, fmt.Sprintf("192.168.41.%d", 201+i))
		n.Status.Ready = id != "node-202"
		nodes = append(nodes, object(t, api.KindNode, id, n, uint64(5+i)))
	}
	v := objects{index: 20, clusters: []store.Object{lab}, nodes: nodes}.view(t)
	desired := edge("lab", "10.97.0.10")
	desired.Spec.ControlPlaneNodes = slices.Clone(cps)
	desired.Spec.ControlPlaneNodes[1] = api.ClusterNode{NodeID: "node-204", AdvertiseAddress: "192.168.41.204"}
	ops, out, err := Commit(v, reviewed(t, v, apiv1.PlanRequest{Clusters: []api.KubernetesCluster{desired}}), render.Options{}, commitTime())
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 1 || out.Clusters["lab"] != api.PhaseScaling {
		t.Fatalf("commit wrote %d ops, clusters %v; want one put in phase %s", len(ops), out.Clusters, api.PhaseScaling)
	}
	if got := decodePut(t, ops[0]); got.phase != api.PhaseScaling {
		t.Errorf("stored phase %s, want %s", got.phase, api.PhaseScaling)
	}
}
