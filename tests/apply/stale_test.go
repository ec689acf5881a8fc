package apply

import (
	"errors"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"

	"kcore.dev/kcore/tests/apiserve"
)

// TestStaleRenderedDiff: the plan's hash covers what is rendered, so a
// member whose facts change the render between plan and apply makes the
// plan stale even though no object the plan writes changed, and the
// refusal names the node.
func TestStaleRenderedDiff(t *testing.T) {
	e := newEnv(t)
	leader := apiserve.Of(e.c.WaitLeader()).Addr
	admin := e.client(apiv1.RoleClusterAdmin, leader)
	ctx := t.Context()
	e.putNode(admin, "node-201", "192.168.41.201")
	c := edge("edge", "10.97.0.10")
	c.Spec.LocalProvisioner = api.LocalProvisionerSpec{Enabled: true, Volumes: []api.VolumeSpec{
		{Name: "data", NodeID: "node-201", StorageClass: api.StorageClassLVM, SizeBytes: 10 << 30},
	}}
	req := apiv1.PlanRequest{Clusters: []api.KubernetesCluster{c}}
	resp, err := admin.Plan(ctx, req)
	if err != nil || resp.Blocked() {
		t.Fatalf("plan = %+v, %v", resp, err)
	}

	// The node now reports its volume group under another name: the
	// volume would be created in vg1, not in the vg0 the plan showed.
	n := api.Node{
		Kind: api.KindNode, Metadata: api.ObjectMeta{Name: "node-201"},
		Facts: api.NodeFacts{
			Addresses:  []string{"192.168.41.201"},
			Interfaces: []api.Interface{{Name: "enp6s0", Up: true, Addresses: []string{"192.168.41.201/24"}}},
			Storage:    []api.StorageBackend{{Class: "lvm", Name: "vg1", SizeBytes: 500 << 30, FreeBytes: 400 << 30}},
		},
		Status: api.NodeHealth{Ready: true},
	}
	if _, err := admin.Put(ctx, api.KindNode, "node-201", n, nil); err != nil {
		t.Fatal(err)
	}
	_, err = admin.Apply(ctx, req, resp.Plan.Index, resp.Hash)
	var ae *client.APIError
	if !client.IsStalePlan(err) || !errors.As(err, &ae) || ae.Status != 409 {
		t.Fatalf("apply after the render changed = %v, want a 409 stale-plan", err)
	}
	if !strings.Contains(ae.Error(), "node-201 reported new facts") {
		t.Fatalf("stale refusal does not say why: %v", ae)
	}
	if _, _, stored := e.cluster(0, "edge"); stored {
		t.Fatal("a stale plan stored the cluster")
	}
}
