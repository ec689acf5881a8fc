package plan

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/render"
)

// goldenCases are the plans whose text and JSON are kept under testdata/.
func goldenCases() []struct {
	name string
	in   func() Input
} {
	lab := func() []*api.KubernetesCluster { return []*api.KubernetesCluster{stored(labCluster(), api.PhaseReady)} }
	return []struct {
		name string
		in   func() Input
	}{
		{"create-lab", func() Input {
			return Input{Desired: []*api.KubernetesCluster{labCluster()}, Nodes: labNodes(), Index: 7}
		}},
		{"noop-reapply", func() Input {
			return Input{Desired: []*api.KubernetesCluster{labCluster()}, Stored: lab(), Nodes: labNodes(), Index: 42}
		}},
		{"vip-change", func() Input {
			c := with(labCluster(), func(c *api.KubernetesCluster) {
				c.Spec.HighAvailability.VIPAddress = "192.168.40.201"
				c.Spec.APIServerEndpoint = "192.168.40.201:6443"
			})
			return Input{Desired: []*api.KubernetesCluster{c}, Stored: lab(), Nodes: labNodes(), Index: 42}
		}},
		{"ca-rotation", func() Input {
			c := with(labCluster(), func(c *api.KubernetesCluster) { c.Spec.CAGeneration = 1 })
			return Input{Desired: []*api.KubernetesCluster{c}, Stored: lab(), Nodes: labNodes(), Index: 42}
		}},
		{"ca-generation-lowered", func() Input {
			st := stored(with(labCluster(), func(c *api.KubernetesCluster) { c.Spec.CAGeneration = 2 }), api.PhaseReady)
			st.Status.CAGeneration = 2
			return Input{Desired: []*api.KubernetesCluster{labCluster()}, Stored: []*api.KubernetesCluster{st}, Nodes: labNodes(), Index: 42}
		}},
		{"cluster-dns-change", func() Input {
			c := with(labCluster(), func(c *api.KubernetesCluster) { c.Spec.ClusterDNS = "10.96.0.53" })
			return Input{Desired: []*api.KubernetesCluster{c}, Stored: lab(), Nodes: labNodes(), Index: 42}
		}},
		{"volume-grow", func() Input {
			c := with(labCluster(), func(c *api.KubernetesCluster) { c.Spec.LocalProvisioner.Volumes[0].SizeBytes = 100 * gib })
			return Input{Desired: []*api.KubernetesCluster{c}, Stored: lab(), Nodes: labNodes(), Index: 42}
		}},
		{"volume-shrink", func() Input {
			c := with(labCluster(), func(c *api.KubernetesCluster) { c.Spec.LocalProvisioner.Volumes[1].SizeBytes = 40 * gib })
			return Input{Desired: []*api.KubernetesCluster{c}, Stored: lab(), Nodes: labNodes(), Index: 42}
		}},
		{"cidr-change", func() Input {
			c := with(labCluster(), func(c *api.KubernetesCluster) { c.Spec.ClusterCIDR = "10.245.0.0/16" })
			return Input{Desired: []*api.KubernetesCluster{c}, Stored: lab(), Nodes: labNodes(), Index: 42}
		}},
		{"missing-control-plane", func() Input {
			return Input{Desired: []*api.KubernetesCluster{labCluster()}, Nodes: without(labNodes(), "node-107"), Index: 7}
		}},
		{"missing-worker", func() Input {
			return Input{Desired: []*api.KubernetesCluster{labCluster()}, Nodes: without(labNodes(), "node-103"), Index: 7}
		}},
		{"failure-domain-shared", func() Input {
			nodes := allNodes()
			for id, d := range map[string]string{"node-105": "rack-a", "node-107": "rack-a", "node-109": "rack-b"} {
				find(nodes, id).Facts.Labels = map[string]string{api.FailureDomainLabel: d}
			}
			return Input{Desired: []*api.KubernetesCluster{threeCPCluster()}, Nodes: nodes, Index: 7}
		}},
		{"scale-in-quorum-loss", func() Input {
			return Input{
				Stored: []*api.KubernetesCluster{stored(threeCPCluster(), api.PhaseReady)}, Nodes: allNodes(), Index: 42,
				Scale: &ScaleRequest{Cluster: "lab", Remove: []string{"node-107", "node-109"}},
			}
		}},
		{"scale-out", func() Input {
			return Input{
				Stored: lab(), Nodes: allNodes(), Index: 42,
				Scale: &ScaleRequest{
					Cluster:          "lab",
					AddControlPlanes: []api.ClusterNode{{NodeID: "node-109", AdvertiseAddress: "192.168.40.109"}},
					AddWorkers:       []api.ClusterNode{{NodeID: "node-104", AdvertiseAddress: "192.168.40.104"}},
				},
			}
		}},
		{"slow-fsync", func() Input {
			nodes := labNodes()
			find(nodes, "node-107").Facts.Fsync = &api.FsyncLatency{P50Millis: 4.1, P99Millis: 23.4}
			return Input{Desired: []*api.KubernetesCluster{labCluster()}, Nodes: nodes, Index: 7}
		}},
		{"address-in-use", func() Input {
			nodes := labNodes()
			find(nodes, "node-103").Facts.ARPAnswered = []string{"192.168.40.200"}
			iface := &find(nodes, "node-107").Facts.Interfaces[1]
			iface.Addresses = append(iface.Addresses, "192.168.40.221/24")
			return Input{Desired: []*api.KubernetesCluster{labCluster()}, Nodes: nodes, Index: 7}
		}},
		{"registry-mirrors", func() Input {
			c := with(labCluster(), func(c *api.KubernetesCluster) {
				c.Spec.RegistryMirrors = []api.RegistryMirror{
					{Registry: "registry.k8s.io", Endpoints: []string{"https://10.77.0.1:5000"}},
					{Registry: "docker.io", Endpoints: []string{"http://10.77.0.1:5001"}},
				}
			})
			return Input{Desired: []*api.KubernetesCluster{c}, Stored: lab(), Nodes: labNodes(), Index: 42}
		}},
		{"etcd-backup-nodes", func() Input {
			c := with(labCluster(), func(c *api.KubernetesCluster) {
				c.Spec.EtcdBackup = &api.EtcdBackupSpec{Interval: "1h", Keep: 24, MaxAge: "48h", Target: api.BackupTargetNodes}
			})
			return Input{Desired: []*api.KubernetesCluster{c}, Stored: lab(), Nodes: labNodes(), Index: 42}
		}},
		{"containerd-unsupported", func() Input {
			nodes := labNodes()
			find(nodes, "node-105").Facts.Versions = map[string]string{"containerd": "1.6.20", "kubelet": "v1.37.2", api.VersionHelm: "v4.3.2", api.VersionCiliumChart: "1.20.2"}
			find(nodes, "node-107").Facts.Versions = map[string]string{"containerd": "v2.4.2"}
			return Input{Desired: []*api.KubernetesCluster{labCluster()}, Nodes: nodes, Index: 7, Render: render.Options{KubernetesVersion: "v1.37.2"}}
		}},
		{"cilium-installer-missing", func() Input {
			nodes := labNodes()
			find(nodes, "node-105").Facts.Versions = map[string]string{"containerd": "v2.4.2", api.VersionHelm: "v4.3.2"}
			return Input{Desired: []*api.KubernetesCluster{labCluster()}, Nodes: nodes, Index: 7}
		}},
		{"disk-create", func() Input {
			return Input{Desired: []*api.KubernetesCluster{diskCluster()}, Nodes: diskNodes(nil), Index: 7}
		}},
		{"disk-foreign-data", func() Input {
			return Input{Desired: []*api.KubernetesCluster{diskCluster()}, Nodes: diskNodes(func(d *api.Disk) { d.FSType, d.Label = "ext4", "photos" }), Index: 7}
		}},
		{"delete", func() Input {
			return Input{Stored: lab(), Nodes: labNodes(), Index: 42, Delete: []string{"lab"}}
		}},
		{"replace-dead-control-plane", func() Input {
			return replaceInput(deadNodes("node-107"), Replacement{Node: "node-107", With: node111()})
		}},
		{"replace-two-dead", func() Input {
			return replaceInput(deadNodes("node-107", "node-109"), Replacement{Node: "node-107", With: node111()})
		}},
	}
}

func TestGolden(t *testing.T) {
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			p := Compute(tc.in())
			var text, js bytes.Buffer
			if err := WriteText(&text, p, false); err != nil {
				t.Fatal(err)
			}
			if err := Write(&js, p); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name+".txt", text.Bytes())
			golden(t, tc.name+".json", js.Bytes())
			back, err := Read(bytes.NewReader(js.Bytes()))
			if err != nil {
				t.Fatalf("read back the JSON plan: %v", err)
			}
			if back.Hash != p.Hash {
				t.Errorf("hash after a JSON round trip = %s, want %s", back.Hash, p.Hash)
			}
		})
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if updating() {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./pkg/plan -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./pkg/plan -update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}
