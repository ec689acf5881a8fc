package plan

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/render"
)

// edgeCluster is a second cluster on the lab's machines: its control plane
// on node-105 (the lab's control plane), a worker of its own on node-104,
// API port 6444 (bridge), its own CIDRs.
func edgeCluster() *api.KubernetesCluster {
	return &api.KubernetesCluster{
		Kind:     "KubernetesCluster",
		Metadata: api.ObjectMeta{Name: "edge"},
		Spec: api.ClusterSpec{
			ClusterCIDR:            "10.245.0.0/16",
			ServiceCIDR:            "10.112.0.0/12",
			ClusterDNS:             "10.112.0.10",
			APIServerEndpoint:      "192.168.40.105:6444",
			ControlPlaneNodes:      []api.ClusterNode{{NodeID: "node-105", AdvertiseAddress: "192.168.40.105"}},
			WorkerNodes:            []api.ClusterNode{{NodeID: "node-104", AdvertiseAddress: "192.168.40.104"}},
			ScheduleOnControlPlane: true,
		},
	}
}

// storedLab is the lab cluster stored ready, in the primary slot.
func storedLab() *api.KubernetesCluster { return stored(labCluster(), api.PhaseReady) }

func issueCodes(is []Issue) []string {
	var out []string
	for _, i := range is {
		out = append(out, i.Code)
	}
	return out
}

func planText(t *testing.T, p *Plan) string {
	t.Helper()
	var w strings.Builder
	if err := WriteText(&w, p, false); err != nil {
		t.Fatal(err)
	}
	return w.String()
}

// stepItems are the names of every item the plan's steps change.
func stepItems(p *Plan) []string {
	var out []string
	for _, c := range p.Clusters {
		for _, s := range c.Steps {
			for _, it := range s.Changes {
				out = append(out, s.Node+" "+it.Name)
			}
		}
	}
	return out
}

func TestSecondClusterOnTheSameMachinesGetsItsOwnNames(t *testing.T) {
	p := Compute(Input{Desired: clusters(edgeCluster()), Stored: clusters(storedLab()), Nodes: allNodes()})
	if len(p.Blocking) > 0 {
		t.Fatalf("blocking: %+v", p.Blocking)
	}
	cp := p.Clusters[0]
	if cp.Slot != 1 || !slices.Equal(cp.Shared, []string{"node-105"}) {
		t.Fatalf("edge placed in slot %d, shared %v; want slot 1 on node-105", cp.Slot, cp.Shared)
	}
	if !slices.Contains(issueCodes(p.Warnings), CodeControlPlaneOnly) {
		t.Fatalf("no %s warning: %+v", CodeControlPlaneOnly, p.Warnings)
	}
	primary := render.PrimaryLayout()
	items := stepItems(p)
	for _, it := range items {
		name := strings.TrimPrefix(it, "node-105 ")
		if slices.Contains(primary.Units(), name) || slices.Contains(primary.Files(), name) || strings.HasPrefix(name, render.PKIDir+"/") {
			t.Errorf("edge's plan touches the lab's %s", it)
		}
	}
	for _, want := range []string{"node-105 kcore-s1-etcd", "node-105 /etc/kubernetes/clusters/edge/pki/ca.key", "node-105 /etc/kubernetes/clusters/edge/admin.conf"} {
		if !slices.Contains(items, want) {
			t.Errorf("plan lacks %s; has %v", want, items)
		}
	}
	if slices.ContainsFunc(items, func(s string) bool {
		return strings.HasPrefix(s, "node-105 ") && strings.Contains(s, "kubelet") && !strings.Contains(s, "apiserver-kubelet-client")
	}) {
		t.Errorf("edge runs a kubelet on the lab's machine: %v", items)
	}
	text := planText(t, p)
	for _, want := range []string{"kcore-s1-etcd: etcd member node-105 (slot 1, ports 2479, 2480)"} {
		if !strings.Contains(text, want) {
			t.Errorf("plan text lacks %q", want)
		}
	}
}

func TestDeletingTheSecondClusterLeavesThePrimaryAlone(t *testing.T) {
	edge := stored(edgeCluster(), api.PhaseReady)
	edge.Status.Slot, edge.Status.Shared = 1, []string{"node-105"}
	p := Compute(Input{Delete: []string{"edge"}, Stored: clusters(storedLab(), edge), Nodes: allNodes()})
	if len(p.Blocking) > 0 {
		t.Fatalf("blocking: %+v", p.Blocking)
	}
	items := stepItems(p)
	if len(items) == 0 {
		t.Fatal("the delete plan has no steps")
	}
	primary := render.PrimaryLayout()
	for _, it := range items {
		name := strings.TrimPrefix(it, "node-105 ")
		if slices.Contains(primary.Units(), name) || slices.Contains(primary.Files(), name) || strings.HasPrefix(name, render.PKIDir+"/") {
			t.Errorf("deleting edge touches the lab's %s", it)
		}
	}
	if !slices.Contains(items, "node-105 kcore-s1-etcd") {
		t.Errorf("deleting edge does not stop its etcd: %v", items)
	}
}

func TestSharingCollisionsBlock(t *testing.T) {
	tests := []struct {
		name   string
		in     func() Input
		want   string
		detail string
	}{
		{
			name: "no node of its own runs a kubelet",
			in: func() Input {
				e := with(edgeCluster(), func(c *api.KubernetesCluster) { c.Spec.WorkerNodes = nil })
				return Input{Desired: clusters(e), Stored: clusters(storedLab()), Nodes: allNodes()}
			},
			want: CodeNoPodNode, detail: "every node of edge is on a machine another cluster already uses",
		},
		{
			name: "pod CIDR overlaps the lab's",
			in: func() Input {
				e := with(edgeCluster(), func(c *api.KubernetesCluster) { c.Spec.ClusterCIDR = "10.244.128.0/17" })
				return Input{Desired: clusters(e), Stored: clusters(storedLab()), Nodes: allNodes()}
			},
			want: CodeCIDROverlap, detail: "clusterCidr 10.244.128.0/17 overlaps lab's clusterCidr 10.244.0.0/16",
		},
		{
			name: "service CIDR overlaps the lab's",
			in: func() Input {
				e := with(edgeCluster(), func(c *api.KubernetesCluster) { c.Spec.ServiceCIDR = "10.96.0.0/16"; c.Spec.ClusterDNS = "10.96.0.10" })
				return Input{Desired: clusters(e), Stored: clusters(storedLab()), Nodes: allNodes()}
			},
			want: CodeCIDROverlap, detail: "serviceCidr 10.96.0.0/16 overlaps lab's serviceCidr",
		},
		{
			name: "API port of the lab",
			in: func() Input {
				e := with(edgeCluster(), func(c *api.KubernetesCluster) {
					c.Spec.APIServerEndpoint = "192.168.40.105:6443"
					c.Spec.CNI = api.CNIBridge
				})
				return Input{Desired: clusters(e), Stored: clusters(storedLab()), Nodes: allNodes()}
			},
			want: CodePortInUse, detail: "port 6443 on node-105 is used by cluster lab too",
		},
		{
			name: "API port on the lab's etcd port",
			in: func() Input {
				e := with(edgeCluster(), func(c *api.KubernetesCluster) { c.Spec.APIServerEndpoint = "192.168.40.105:2379" })
				return Input{Desired: clusters(e), Stored: clusters(storedLab()), Nodes: allNodes()}
			},
			want: CodePortInUse, detail: "port 2379 on node-105",
		},
		{
			name: "worker on the lab's machine",
			in: func() Input {
				e := with(edgeCluster(), func(c *api.KubernetesCluster) {
					c.Spec.WorkerNodes = []api.ClusterNode{{NodeID: "node-103", AdvertiseAddress: "192.168.40.103"}}
				})
				return Input{Desired: clusters(e), Stored: clusters(storedLab()), Nodes: allNodes()}
			},
			want: CodeWorkerOnSharedMachine, detail: "worker node-103",
		},
		{
			name: "mount path of the lab's volume",
			in: func() Input {
				e := with(edgeCluster(), func(c *api.KubernetesCluster) {
					c.Spec.LocalProvisioner = api.LocalProvisionerSpec{Enabled: true, Volumes: []api.VolumeSpec{{
						Name: "data", NodeID: "node-105", StorageClass: "lvm", SizeBytes: gib, MountPath: "/mnt/kcore/lab/kcore-kdata",
					}}}
				})
				return Input{Desired: clusters(e), Stored: clusters(storedLab()), Nodes: allNodes()}
			},
			want: CodePathInUse, detail: "mount /mnt/kcore/lab/kcore-kdata on node-105 belongs to cluster lab too",
		},
		{
			name: "two stored clusters in the same slot",
			in: func() Input {
				// Stored before slots existed: both in slot 0 on node-105.
				e := stored(edgeCluster(), api.PhaseReady)
				next := with(edgeCluster(), func(c *api.KubernetesCluster) { c.Spec.ClusterDNS = "10.112.0.11" })
				return Input{Desired: clusters(next), Stored: clusters(storedLab(), e), Nodes: allNodes()}
			},
			want: CodeSlotInUse, detail: "cluster lab holds slot 0 on node-105 too",
		},
		{
			name: "two HA clusters stored in one slot share a router id",
			in: func() Input {
				e := stored(with(edgeCluster(), func(c *api.KubernetesCluster) {
					c.Spec.HighAvailability = api.HASpec{Enabled: true, VIPAddress: "192.168.40.210", VIPInterface: "enp6s0"}
					c.Spec.APIServerEndpoint = "192.168.40.210:6444"
				}), api.PhaseReady)
				next := with(edgeCluster(), func(c *api.KubernetesCluster) {
					c.Spec.HighAvailability = api.HASpec{Enabled: true, VIPAddress: "192.168.40.210", VIPInterface: "enp6s0"}
					c.Spec.APIServerEndpoint = "192.168.40.210:6444"
					c.Spec.ClusterDNS = "10.112.0.11"
				})
				return Input{Desired: clusters(next), Stored: clusters(storedLab(), e), Nodes: allNodes()}
			},
			want: CodeRouterIDInUse, detail: "keepalived of cluster lab uses virtual_router_id 40 on node-105 too",
		},
		{
			name: "every slot taken",
			in: func() Input {
				var st []*api.KubernetesCluster
				for i := 0; i < render.MaxSlots; i++ {
					c := with(edgeCluster(), func(c *api.KubernetesCluster) {
						c.Metadata.Name = fmt.Sprintf("c%d", i)
						c.Spec.APIServerEndpoint = fmt.Sprintf("192.168.40.105:%d", 7000+i)
						c.Spec.ClusterCIDR = fmt.Sprintf("10.%d.0.0/16", 50+i)
						c.Spec.ServiceCIDR = fmt.Sprintf("10.%d.0.0/16", 150+i)
						c.Spec.ClusterDNS = fmt.Sprintf("10.%d.0.10", 150+i)
					})
					c = stored(c, api.PhaseReady)
					c.Status.Slot = i
					st = append(st, c)
				}
				return Input{Desired: clusters(edgeCluster()), Stored: st, Nodes: allNodes()}
			},
			want: CodeNoSlot, detail: "8 clusters already share its machines",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Compute(tt.in())
			var found bool
			for _, i := range p.Blocking {
				if i.Code == tt.want && strings.Contains(i.Message, tt.detail) {
					found = i.Fix != ""
				}
			}
			if !found {
				t.Fatalf("no %s issue with a fix saying %q: %+v", tt.want, tt.detail, p.Blocking)
			}
		})
	}
}

// TestUpdatingTheSecondClusterKeepsItsSlot re-applies the second cluster
// with a changed field: it stays in slot 1 with its shared member, and its
// restarts are of its own units.
func TestUpdatingTheSecondClusterKeepsItsSlot(t *testing.T) {
	edge := stored(edgeCluster(), api.PhaseReady)
	edge.Status.Slot, edge.Status.Shared = 1, []string{"node-105"}
	next := with(edgeCluster(), func(c *api.KubernetesCluster) {
		c.Spec.APIServer.ExtraArgs = map[string]string{"v": "2"}
	})
	p := Compute(Input{Desired: clusters(next), Stored: clusters(storedLab(), edge), Nodes: allNodes()})
	if len(p.Blocking) > 0 {
		t.Fatalf("blocking: %+v", p.Blocking)
	}
	cp := p.Clusters[0]
	if cp.Action != ActionUpdate || cp.Slot != 1 || !slices.Equal(cp.Shared, []string{"node-105"}) {
		t.Fatalf("edge update: action %s, slot %d, shared %v; want update in slot 1 on node-105", cp.Action, cp.Slot, cp.Shared)
	}
	items := stepItems(p)
	if !slices.Contains(items, "node-105 kcore-s1-kube-apiserver") || slices.Contains(items, "node-105 kcore-kube-apiserver") {
		t.Fatalf("edge's update restarts %v", items)
	}
}
