package orchestrator

import (
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/render"
	"kcore.dev/kcore/pkg/rollout"
)

// TestSecondClusterIsReconciledByItsOwnNames reads a cluster outside the
// primary slot by its layout: its etcd unit and ports, and the keepalived
// a held node drops is its own, never the primary cluster's.
func TestSecondClusterIsReconciledByItsOwnNames(t *testing.T) {
	c := &api.KubernetesCluster{
		Metadata: api.ObjectMeta{Name: "edge"},
		Spec:     api.ClusterSpec{ControlPlaneNodes: []api.ClusterNode{{NodeID: "node-105", AdvertiseAddress: "192.168.40.105"}}},
		Status:   api.ClusterStatus{Slot: 1},
	}
	l := render.ClusterLayout(c)
	states := map[string]*storedState{"node-105": {ns: api.NodeState{Cluster: "edge", NodeID: "node-105", Units: []api.Unit{
		{Name: l.UnitEtcd, Argv: []string{"etcd", "--initial-cluster-state=existing"}},
		{Name: l.UnitKeepalived},
	}}}}
	if controlPlanesChange(c, states) {
		t.Error("edge's etcd unit kcore-s1-etcd is published, yet a membership change is seen")
	}
	if !etcdExists(c, states) {
		t.Error("edge's etcd joined an existing cluster, yet etcdExists is false")
	}
	if got, want := etcdURL(nil, c, "192.168.40.105"), "https://192.168.40.105:2479"; got != want {
		t.Errorf("etcd URL %s, want %s", got, want)
	}
	if got, want := peerURL(c, "192.168.40.105"), "https://192.168.40.105:2480"; got != want {
		t.Errorf("peer URL %s, want %s", got, want)
	}
	held := heldState(states["node-105"], l, true)
	if len(held.Units) != 1 || held.Units[0].Name != l.UnitEtcd {
		t.Errorf("held state keeps %v, want edge's etcd only", held.Units)
	}
	if v := versionUnit(c, "node-105", rollout.ScopeControlPlane); v != l.UnitAPIServer {
		t.Errorf("version unit %s, want %s", v, l.UnitAPIServer)
	}
}
