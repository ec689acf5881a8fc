package planapply

import (
	"encoding/json"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/render"
	"kcore.dev/kcore/pkg/store"
)

// commitTime is the time the tests commit at, in a zone other than UTC.
func commitTime() time.Time {
	return time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("CET", 3600))
}

// atText is commitTime as a delete condition records it.
const atText = "2026-03-04T04:06:07Z"

// object stores v as an object of kind with the given modify index.
func object(t *testing.T, kind, name string, v any, modify uint64) store.Object {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return store.Object{Kind: kind, Name: name, CreateIndex: 1, ModifyIndex: modify, Data: b}
}

// node is a ready registered node whose enp6s0 holds addr/24, with a vg0
// volume group.
func node(id, addr string) api.Node {
	return api.Node{
		Kind: api.KindNode, Metadata: api.ObjectMeta{Name: id},
		Facts: api.NodeFacts{
			Addresses:  []string{addr},
			Interfaces: []api.Interface{{Name: "enp6s0", Up: true, Addresses: []string{addr + "/24"}}},
			Storage:    []api.StorageBackend{{Class: "lvm", Name: "vg0", SizeBytes: 500 << 30, FreeBytes: 400 << 30}},
		},
		Status: api.NodeHealth{Ready: true},
	}
}

// edge is a one-node cluster on node-201 as a manifest declares it.
func edge(name, dns string) api.KubernetesCluster {
	return edgeOn(name, "node-201", "192.168.41.201", dns)
}

// edgeOn is a one-node cluster on the node id at addr.
func edgeOn(name, id, addr, dns string) api.KubernetesCluster {
	return api.KubernetesCluster{
		Kind: api.KindKubernetesCluster, Metadata: api.ObjectMeta{Name: name},
		Spec: api.ClusterSpec{
			ClusterCIDR: "10.245.0.0/16", ServiceCIDR: "10.97.0.0/16", ClusterDNS: dns,
			APIServerEndpoint: addr + ":6443", ScheduleOnControlPlane: true,
			ControlPlaneNodes: []api.ClusterNode{{NodeID: id, AdvertiseAddress: addr}},
		},
	}
}

// ready is edge as the controller stores it once bootstrapped.
func ready(name, dns string) api.KubernetesCluster {
	return stored(edge(name, dns))
}

// stored is c as the controller stores it once bootstrapped: defaulted,
// generation 3, ready, with a health condition.
func stored(c api.KubernetesCluster) api.KubernetesCluster {
	c.APIVersion = api.APIVersion
	c.Default()
	c.Metadata.Generation = 3
	c.Metadata.CreatedAt = "2026-01-01T00:00:00Z"
	c.Status = api.ClusterStatus{Phase: api.PhaseReady, ObservedGeneration: 3, Conditions: []api.Condition{{Type: "APIReady", Status: "True"}}}
	return c
}

// update is a ClusterUpdate of every node to version.
func update(name, version string) api.ClusterUpdate {
	return api.ClusterUpdate{
		APIVersion: api.APIVersion, Kind: api.KindClusterUpdate, Metadata: api.ObjectMeta{Name: name},
		Spec: api.UpdateSpec{Version: version, AllNodes: true},
	}
}

// objects are what a view is read from.
type objects struct {
	index    uint64
	clusters []store.Object
	updates  []store.Object
	nodes    []store.Object
}

// view decodes s into a View.
func (s objects) view(t *testing.T) *View {
	t.Helper()
	v, err := NewView(s.index, s.clusters, s.updates, s.nodes)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// reviewed plans req against v as a caller reviews it: the apply request
// that sends it back.
func reviewed(t *testing.T, v *View, req apiv1.PlanRequest) apiv1.ApplyRequest {
	t.Helper()
	resp, err := Plan(v, req, render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return apiv1.ApplyRequest{Request: req, Index: resp.Plan.Index, Hash: resp.Hash}
}
