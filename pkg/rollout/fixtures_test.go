package rollout

import (
	"flag"
	"os"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/plan"
)

func TestMain(m *testing.M) {
	flag.Bool("update", false, "rewrite the golden files under testdata/")
	flag.Parse()
	os.Exit(m.Run())
}

// updating reports whether the test run was started with -update.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// referenceUpdate is the reference's kcore_cluster_update "os", defaulted,
// with the placeholder revisions replaced by real-looking SHAs.
func referenceUpdate() *api.ClusterUpdate {
	const rev = "0123456789abcdef0123456789abcdef01234567"
	u := &api.ClusterUpdate{
		Kind:     api.KindClusterUpdate,
		Metadata: api.ObjectMeta{Name: "release-0-5-0"},
		Spec: api.UpdateSpec{
			Version: "0.5.0", FlakeRef: "github:kcorehypervisor/kcore", FlakeRev: rev, NixpkgsRev: rev,
			AllNodes: true, Strategy: "one-at-a-time", MaxUnavailable: 1, BatchSize: 1,
			Activation: "auto", UpdateKind: "kcore",
			SchemaVersion: 59, PreviousSchemaVersion: 56, MinCompatibleReader: 56,
			Approval: "manual",
			TestedOSPins: api.OSPins{NixpkgsRev: rev, CephRev: rev,
				CephSHA256: "0000000000000000000000000000000000000000000000000000000000000000", KubernetesVersion: "1.37.0"},
		},
	}
	u.Default()
	return u
}

// update applies edits to the reference update.
func update(edits ...func(*api.UpdateSpec)) *api.ClusterUpdate {
	u := referenceUpdate()
	for _, e := range edits {
		e(&u.Spec)
	}
	u.Default()
	return u
}

// labCluster is the reference's lab cluster as stored: control planes
// node-105 (bootstrap) and node-107, worker node-103, VIP 192.168.40.200.
func labCluster() *api.KubernetesCluster {
	c := &api.KubernetesCluster{
		Kind:     api.KindKubernetesCluster,
		Metadata: api.ObjectMeta{Name: "lab", Generation: 3},
		Spec: api.ClusterSpec{
			ClusterCIDR: "10.244.0.0/16", ServiceCIDR: "10.96.0.0/12", ClusterDNS: "10.96.0.10",
			APIServerEndpoint: "192.168.40.200:6443", CNI: "cilium",
			ControlPlaneNodes: []api.ClusterNode{
				{NodeID: "node-105", AdvertiseAddress: "192.168.40.105"},
				{NodeID: "node-107", AdvertiseAddress: "192.168.40.107"},
			},
			WorkerNodes:            []api.ClusterNode{{NodeID: "node-103", AdvertiseAddress: "192.168.40.103"}},
			HighAvailability:       api.HASpec{Enabled: true, VIPAddress: "192.168.40.200", VIPInterface: "enp6s0"},
			ScheduleOnControlPlane: true,
		},
		Status: api.ClusterStatus{Phase: api.PhaseReady, ObservedGeneration: 3},
	}
	c.Default()
	return c
}

// bigCluster has three control planes (node-01 bootstraps) and five workers.
func bigCluster() *api.KubernetesCluster {
	c := &api.KubernetesCluster{
		Kind:     api.KindKubernetesCluster,
		Metadata: api.ObjectMeta{Name: "big"},
		Spec: api.ClusterSpec{
			ClusterCIDR: "10.244.0.0/16", ServiceCIDR: "10.96.0.0/12",
			APIServerEndpoint: "10.0.0.100:6443",
			ControlPlaneNodes: []api.ClusterNode{
				{NodeID: "node-03", AdvertiseAddress: "10.0.0.3"},
				{NodeID: "node-01", AdvertiseAddress: "10.0.0.1"},
				{NodeID: "node-02", AdvertiseAddress: "10.0.0.2"},
			},
			WorkerNodes: []api.ClusterNode{
				{NodeID: "node-14", AdvertiseAddress: "10.0.0.14"},
				{NodeID: "node-11", AdvertiseAddress: "10.0.0.11"},
				{NodeID: "node-12", AdvertiseAddress: "10.0.0.12"},
				{NodeID: "node-13", AdvertiseAddress: "10.0.0.13"},
				{NodeID: "node-15", AdvertiseAddress: "10.0.0.15"},
			},
			HighAvailability: api.HASpec{Enabled: true, VIPAddress: "10.0.0.100", VIPInterface: "eth0"},
		},
		Status: api.ClusterStatus{Phase: api.PhaseReady},
	}
	c.Default()
	return c
}

// node is a registered, ready node running Kubernetes k8s (API server and
// kubelet) and etcd.
func node(id, addr, k8s, etcd string) *api.Node {
	return &api.Node{
		Kind:     api.KindNode,
		Metadata: api.ObjectMeta{Name: id},
		Facts: api.NodeFacts{
			Hostname:  id,
			Addresses: []string{"127.0.0.1", addr},
			Versions:  map[string]string{VersionKubelet: "v" + k8s, VersionAPIServer: "v" + k8s, VersionEtcd: etcd},
		},
		Status: api.NodeHealth{Ready: true, LastHeartbeat: "2026-11-29T21:29:55Z"},
	}
}

// labNodes are the lab's nodes on Kubernetes 1.37.2 and etcd 3.7.3 (the lab
// binaries); node-105 holds the VIP.
func labNodes() []*api.Node {
	n := []*api.Node{
		node("node-103", "192.168.40.103", "1.37.2", ""),
		node("node-105", "192.168.40.105", "1.37.2", "3.7.3"),
		node("node-107", "192.168.40.107", "1.37.2", "3.7.3"),
	}
	delete(n[0].Facts.Versions, VersionAPIServer)
	delete(n[0].Facts.Versions, VersionEtcd)
	n[1].Facts.Addresses = append(n[1].Facts.Addresses, "192.168.40.200")
	return n
}

// bigNodes are big's nodes on Kubernetes k8s and etcd etcd.
func bigNodes(k8s, etcd string) []*api.Node {
	var out []*api.Node
	for _, id := range []string{"node-01", "node-02", "node-03"} {
		out = append(out, node(id, "10.0.0."+id[6:], k8s, etcd))
	}
	for _, id := range []string{"node-11", "node-12", "node-13", "node-14", "node-15"} {
		n := node(id, "10.0.0."+id[5:], k8s, "")
		delete(n.Facts.Versions, VersionAPIServer)
		delete(n.Facts.Versions, VersionEtcd)
		out = append(out, n)
	}
	return out
}

// replicas are three controller replicas at the given schemas.
func replicas(schemas ...int) []ControllerReplica {
	out := make([]ControllerReplica, len(schemas))
	for i, s := range schemas {
		out[i] = ControllerReplica{ID: "controller-" + string(rune('a'+i)), Schema: s}
	}
	return out
}

func find(nodes []*api.Node, id string) *api.Node {
	for _, n := range nodes {
		if n.Metadata.Name == id {
			return n
		}
	}
	return nil
}

func codes(issues []plan.Issue) []string {
	out := make([]string, len(issues))
	for i, is := range issues {
		out[i] = is.Code
	}
	return out
}
