package planapply

import (
	"encoding/json"
	"slices"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/render"
	"kcore.dev/kcore/pkg/store"
)

// TestCommitRecordsTheSlot creates a second cluster on the machine of a
// stored one: the stored object carries slot 1 and the shared member, so
// the orchestrator renders it with its own names; a later apply of the
// first cluster keeps it in slot 0.
func TestCommitRecordsTheSlot(t *testing.T) {
	n201 := object(t, api.KindNode, "node-201", node("node-201", "192.168.41.201"), 5)
	n202 := object(t, api.KindNode, "node-202", node("node-202", "192.168.41.202"), 6)
	lab := object(t, api.KindKubernetesCluster, "lab", ready("lab", "10.97.0.10"), 10)
	v := objects{index: 20, clusters: []store.Object{lab}, nodes: []store.Object{n201, n202}}.view(t)
	// The second cluster's control plane shares the lab's machine; its pods
	// run on a worker of its own.
	second := edge("second", "10.112.0.10")
	second.Spec.ClusterCIDR, second.Spec.ServiceCIDR = "10.246.0.0/16", "10.112.0.0/16"
	second.Spec.APIServerEndpoint = "192.168.41.201:6444"
	second.Spec.WorkerNodes = []api.ClusterNode{{NodeID: "node-202", AdvertiseAddress: "192.168.41.202"}}
	req := reviewed(t, v, apiv1.PlanRequest{Clusters: []api.KubernetesCluster{second}})
	ops, _, err := Commit(v, req, render.Options{}, commitTime())
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	if len(ops) != 1 || ops[0].Put == nil {
		t.Fatalf("ops = %+v", ops)
	}
	var got api.KubernetesCluster
	if err := json.Unmarshal(ops[0].Put.Data, &got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Slot != 1 || !slices.Equal(got.Status.Shared, []string{"node-201"}) {
		t.Fatalf("stored second cluster: slot %d, shared %v; want slot 1, shared [node-201]", got.Status.Slot, got.Status.Shared)
	}

	stored := object(t, api.KindKubernetesCluster, "second", got, 21)
	v = objects{index: 22, clusters: []store.Object{lab, stored}, nodes: []store.Object{n201, n202}}.view(t)
	req = reviewed(t, v, apiv1.PlanRequest{Clusters: []api.KubernetesCluster{edge("lab", "10.97.0.53")}})
	ops, _, err = Commit(v, req, render.Options{}, commitTime())
	if err != nil {
		t.Fatalf("commit lab: %v", err)
	}
	var labNext api.KubernetesCluster
	if err := json.Unmarshal(ops[0].Put.Data, &labNext); err != nil {
		t.Fatal(err)
	}
	if labNext.Status.Slot != render.PrimarySlot || len(labNext.Status.Shared) != 0 {
		t.Fatalf("lab after the second cluster: slot %d, shared %v; want the primary slot, nothing shared", labNext.Status.Slot, labNext.Status.Shared)
	}
}
