package plan

import (
	"flag"
	"os"
	"testing"

	"kcore.dev/kcore/pkg/api"
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

const gib = int64(1) << 30

func ptrTo[T any](v T) *T { return &v }

// labCluster is the reference's lab manifest, as written (not defaulted).
func labCluster() *api.KubernetesCluster {
	return &api.KubernetesCluster{
		Kind:     "KubernetesCluster",
		Metadata: api.ObjectMeta{Name: "lab"},
		Spec: api.ClusterSpec{
			ClusterCIDR:       "10.244.0.0/16",
			ServiceCIDR:       "10.96.0.0/12",
			ClusterDNS:        "10.96.0.10",
			APIServerEndpoint: "192.168.40.200:6443",
			CNI:               "cilium",
			Cilium: api.CiliumSpec{
				Mode: "native-routing", MTU: 1500, Tunnel: "disabled",
				AutoDirectNodeRoutes: ptrTo(true),
				LoadBalancerIPPools:  []string{"192.168.40.220/29"},
			},
			ControlPlaneNodes: []api.ClusterNode{
				{NodeID: "node-105", AdvertiseAddress: "192.168.40.105", Iface: "enp6s0"},
				{NodeID: "node-107", AdvertiseAddress: "192.168.40.107", Iface: "enp6s0"},
			},
			WorkerNodes: []api.ClusterNode{
				{NodeID: "node-103", AdvertiseAddress: "192.168.40.103", Iface: "enp6s0"},
			},
			HighAvailability:       api.HASpec{Enabled: true, VIPAddress: "192.168.40.200", VIPInterface: "enp6s0"},
			ScheduleOnControlPlane: true,
			LocalProvisioner: api.LocalProvisionerSpec{
				Enabled: true, StorageClassName: "local-path", Mode: "shared",
				Volumes: []api.VolumeSpec{
					{Name: "kcore-kdata", NodeID: "node-105", StorageClass: "lvm", SizeBytes: 53687091200, FSType: "ext4", Role: "filesystem"},
					{Name: "kcore-kdata", NodeID: "node-107", StorageClass: "lvm", SizeBytes: 53687091200, FSType: "ext4"},
					{Name: "kcore-kdata", NodeID: "node-103", StorageClass: "lvm", SizeBytes: 53687091200, FSType: "ext4"},
				},
			},
		},
	}
}

// threeCPCluster is the lab cluster with node-109 as a third control plane.
func threeCPCluster() *api.KubernetesCluster {
	c := labCluster()
	c.Spec.ControlPlaneNodes = append(c.Spec.ControlPlaneNodes, api.ClusterNode{NodeID: "node-109", AdvertiseAddress: "192.168.40.109", Iface: "enp6s0"})
	return c
}

// stored is c as the controller holds it: defaulted, with server-set
// metadata and a status the plan must ignore.
func stored(c *api.KubernetesCluster, phase string) *api.KubernetesCluster {
	c.Default()
	c.Metadata.Generation = 3
	c.Metadata.CreateIndex = 10
	c.Metadata.ModifyIndex = 42
	c.Metadata.CreatedAt = "2026-11-01T10:00:00Z"
	c.Status = api.ClusterStatus{Phase: phase, ObservedGeneration: 3, LastHealthCheck: "2026-11-29T21:00:00Z"}
	return c
}

// node is a registered, ready node whose enp6s0 holds addr/24 and which has
// an LVM volume group vg0 of 500 GiB with 400 GiB free.
func node(id, addr string) *api.Node {
	return &api.Node{
		Kind:     "Node",
		Metadata: api.ObjectMeta{Name: id},
		Facts: api.NodeFacts{
			Hostname:  id,
			Addresses: []string{"127.0.0.1", addr},
			Interfaces: []api.Interface{
				{Name: "lo", Up: true, Addresses: []string{"127.0.0.1/8"}},
				{Name: "enp6s0", MAC: "52:54:00:00:00:01", Up: true, Addresses: []string{addr + "/24"}},
			},
			Storage: []api.StorageBackend{{Class: "lvm", Name: "vg0", SizeBytes: 500 * gib, FreeBytes: 400 * gib}},
			Fsync:   &api.FsyncLatency{P50Millis: 0.8, P99Millis: 3.1},
		},
		Status: api.NodeHealth{Ready: true, LastHeartbeat: "2026-11-29T21:29:55Z"},
	}
}

// labNodes are node-105, node-107 and node-103, registered and ready.
func labNodes() []*api.Node {
	return []*api.Node{node("node-105", "192.168.40.105"), node("node-107", "192.168.40.107"), node("node-103", "192.168.40.103")}
}

// allNodes adds node-109 and node-104 to the lab nodes.
func allNodes() []*api.Node {
	return append(labNodes(), node("node-109", "192.168.40.109"), node("node-104", "192.168.40.104"))
}

func without(nodes []*api.Node, id string) []*api.Node {
	var out []*api.Node
	for _, n := range nodes {
		if n.Metadata.Name != id {
			out = append(out, n)
		}
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

// with applies edits to c and returns it.
func with(c *api.KubernetesCluster, edits ...func(*api.KubernetesCluster)) *api.KubernetesCluster {
	for _, e := range edits {
		e(c)
	}
	return c
}
