package plan

import (
	"slices"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
)

func codes(list []Issue) []string {
	var out []string
	for _, i := range list {
		out = append(out, i.Code)
	}
	return out
}

func clusters(cs ...*api.KubernetesCluster) []*api.KubernetesCluster { return cs }

func TestIssues(t *testing.T) {
	ready := func(c *api.KubernetesCluster) []*api.KubernetesCluster { return clusters(stored(c, api.PhaseReady)) }
	tests := []struct {
		name         string
		in           func() Input
		wantBlocking []string // every code must appear; nil means no blocking issue at all
		wantWarnings []string // every code must appear
		wantAction   string   // the first cluster's action, when set
		wantText     []string // substrings of the blocking messages
	}{
		{
			name: "storage class the node does not have",
			in: func() Input {
				nodes := labNodes()
				find(nodes, "node-103").Facts.Storage = []api.StorageBackend{{Class: "zfs", Name: "tank", SizeBytes: 100 * gib, FreeBytes: 100 * gib}}
				return Input{Desired: clusters(labCluster()), Nodes: nodes}
			},
			wantBlocking: []string{CodeStorageClassMismatch},
			wantText:     []string{"node-103 has no lvm storage backend (it has zfs tank)"},
		},
		{
			name: "named volume group missing",
			in: func() Input {
				c := with(labCluster(), func(c *api.KubernetesCluster) { c.Spec.LocalProvisioner.Volumes[0].VolumeGroup = "vg_data" })
				return Input{Desired: clusters(c), Nodes: labNodes()}
			},
			wantBlocking: []string{CodeVolumeGroupMissing},
		},
		{
			name: "not enough free space",
			in: func() Input {
				nodes := labNodes()
				find(nodes, "node-105").Facts.Storage[0].FreeBytes = 20 * gib
				return Input{Desired: clusters(labCluster()), Nodes: nodes}
			},
			wantBlocking: []string{CodeStorageInsufficient},
			wantText:     []string{"lvm vg0 on node-105 has 20 GiB free of 500 GiB; creating kcore-kdata (50 GiB) needs 50 GiB"},
		},
		{
			name: "volumes on one backend add up",
			in: func() Input {
				c := with(labCluster(), func(c *api.KubernetesCluster) {
					c.Spec.LocalProvisioner.Volumes[0].SizeBytes = 250 * gib
					c.Spec.LocalProvisioner.Volumes = append(c.Spec.LocalProvisioner.Volumes,
						api.VolumeSpec{Name: "scratch", NodeID: "node-105", StorageClass: "lvm", SizeBytes: 250 * gib})
				})
				return Input{Desired: clusters(c), Nodes: labNodes()}
			},
			wantBlocking: []string{CodeStorageInsufficient},
			wantText:     []string{"has left, after the other volumes in this plan, 150 GiB free"},
		},
		{
			name: "grow beyond free space",
			in: func() Input {
				c := with(labCluster(), func(c *api.KubernetesCluster) { c.Spec.LocalProvisioner.Volumes[0].SizeBytes = 500 * gib })
				return Input{Desired: clusters(c), Stored: ready(labCluster()), Nodes: labNodes()}
			},
			wantBlocking: []string{CodeStorageInsufficient},
			wantText:     []string{"growing kcore-kdata from 50 GiB to 500 GiB needs 450 GiB more"},
		},
		{
			name: "cilium already running on a host",
			in: func() Input {
				nodes := labNodes()
				find(nodes, "node-103").Facts.CiliumRunning = true
				return Input{Desired: clusters(labCluster()), Nodes: nodes}
			},
			wantBlocking: []string{CodeCiliumAlreadyRunning},
		},
		{
			name: "cilium of another stored cluster on a shared host",
			in: func() Input {
				other := with(labCluster(), func(c *api.KubernetesCluster) {
					c.Metadata.Name = "other"
					c.Spec.HighAvailability = api.HASpec{}
					c.Spec.APIServerEndpoint = "192.168.40.105:6443"
					c.Spec.Cilium.LoadBalancerIPPools = nil
				})
				return Input{Desired: clusters(labCluster()), Stored: clusters(stored(other, api.PhaseReady)), Nodes: labNodes()}
			},
			wantBlocking: []string{CodeCiliumAlreadyRunning},
			wantText:     []string{`already runs Cilium for cluster "other"`},
		},
		{
			name: "own cilium is not a conflict on update",
			in: func() Input {
				nodes := labNodes()
				for _, n := range nodes {
					n.Facts.CiliumRunning = true
				}
				c := with(labCluster(), func(c *api.KubernetesCluster) { c.Spec.ClusterDNS = "10.96.0.11" })
				return Input{Desired: clusters(c), Stored: ready(labCluster()), Nodes: nodes}
			},
			wantAction: ActionUpdate,
		},
		{
			name: "iface not on the node",
			in: func() Input {
				c := with(labCluster(), func(c *api.KubernetesCluster) { c.Spec.ControlPlaneNodes[1].Iface = "eth9" })
				return Input{Desired: clusters(c), Nodes: labNodes()}
			},
			wantBlocking: []string{CodeInterfaceMissing},
			wantText:     []string{"interface eth9 is not on node-107 (it has lo, enp6s0)"},
		},
		{
			name: "vipInterface not on a control plane",
			in: func() Input {
				c := with(labCluster(), func(c *api.KubernetesCluster) { c.Spec.HighAvailability.VIPInterface = "bond0" })
				return Input{Desired: clusters(c), Nodes: labNodes()}
			},
			wantBlocking: []string{CodeInterfaceMissing},
		},
		{
			name: "advertise address not on the node",
			in: func() Input {
				c := with(labCluster(), func(c *api.KubernetesCluster) { c.Spec.WorkerNodes[0].AdvertiseAddress = "192.168.40.113" })
				return Input{Desired: clusters(c), Nodes: labNodes()}
			},
			wantBlocking: []string{CodeAddressNotOnNode},
		},
		{
			name: "VIP used by another stored cluster",
			in: func() Input {
				other := with(labCluster(), func(c *api.KubernetesCluster) {
					c.Metadata.Name = "other"
					c.Spec.CNI = "bridge"
					c.Spec.ControlPlaneNodes = c.Spec.ControlPlaneNodes[:1]
					c.Spec.WorkerNodes = nil
					c.Spec.LocalProvisioner = api.LocalProvisionerSpec{}
				})
				return Input{Desired: clusters(labCluster()), Stored: clusters(stored(other, api.PhaseReady)), Nodes: labNodes()}
			},
			wantBlocking: []string{CodeAddressInUse},
			wantText:     []string{`VIP 192.168.40.200 is in use by cluster "other" (its VIP)`},
		},
		{
			name: "membership change mixed with another change",
			in: func() Input {
				c := with(labCluster(), func(c *api.KubernetesCluster) {
					c.Spec.WorkerNodes = append(c.Spec.WorkerNodes, api.ClusterNode{NodeID: "node-104", AdvertiseAddress: "192.168.40.104"})
					c.Spec.ClusterDNS = "10.96.0.11"
				})
				return Input{Desired: clusters(c), Stored: ready(labCluster()), Nodes: allNodes()}
			},
			wantBlocking: []string{CodeMembershipChange},
			wantText:     []string{"adds worker node-104"},
		},
		{
			name: "change while updating",
			in: func() Input {
				c := with(labCluster(), func(c *api.KubernetesCluster) { c.Spec.ClusterDNS = "10.96.0.11" })
				return Input{Desired: clusters(c), Stored: clusters(stored(labCluster(), api.PhaseUpdating)), Nodes: labNodes()}
			},
			wantBlocking: []string{CodeClusterBusy},
		},
		{
			name: "unchanged while updating is a no-op",
			in: func() Input {
				return Input{Desired: clusters(labCluster()), Stored: clusters(stored(labCluster(), api.PhaseUpdating)), Nodes: labNodes()}
			},
			wantAction: ActionNoOp,
		},
		{
			name: "delete while bootstrapping is allowed",
			in: func() Input {
				return Input{Stored: clusters(stored(labCluster(), api.PhaseBootstrapping)), Nodes: labNodes(), Delete: []string{"lab"}}
			},
			wantAction: ActionDelete,
		},
		{
			name: "delete while deleting is blocked",
			in: func() Input {
				return Input{Stored: clusters(stored(labCluster(), api.PhaseDeleting)), Nodes: labNodes(), Delete: []string{"lab"}}
			},
			wantBlocking: []string{CodeClusterBusy},
			wantText:     []string{"add --force"},
		},
		{
			name: "delete --force escalates a delete in progress",
			in: func() Input {
				return Input{Stored: clusters(stored(labCluster(), api.PhaseDeleting)), Nodes: labNodes(), Delete: []string{"lab"}, Force: true}
			},
			wantAction: ActionDelete,
		},
		{
			name: "delete --force of a delete already forced is blocked",
			in: func() Input {
				c := stored(labCluster(), api.PhaseDeleting)
				c.Status.Conditions = []api.Condition{{Type: api.ConditionForceDelete, Status: "True"}}
				return Input{Stored: clusters(c), Nodes: labNodes(), Delete: []string{"lab"}, Force: true}
			},
			wantBlocking: []string{CodeClusterBusy},
			wantText:     []string{"already being deleted with --force"},
		},
		{
			name: "scale removes a node that is not a member",
			in: func() Input {
				return Input{Stored: ready(labCluster()), Nodes: labNodes(), Scale: &ScaleRequest{Cluster: "lab", Remove: []string{"node-999"}}}
			},
			wantBlocking: []string{CodeNotAMember},
		},
		{
			name:         "delete of an unknown cluster",
			in:           func() Input { return Input{Nodes: labNodes(), Delete: []string{"nope"}} },
			wantBlocking: []string{CodeClusterNotFound},
		},
		{
			name:         "scale of an unknown cluster",
			in:           func() Input { return Input{Nodes: labNodes(), Scale: &ScaleRequest{Cluster: "nope"}} },
			wantBlocking: []string{CodeClusterNotFound},
		},
		{
			name:         "two manifests with one name",
			in:           func() Input { return Input{Desired: clusters(labCluster(), labCluster()), Nodes: labNodes()} },
			wantBlocking: []string{CodeConflictingRequest},
		},
		{
			name: "apply and delete of one cluster",
			in: func() Input {
				return Input{Desired: clusters(labCluster()), Stored: ready(labCluster()), Nodes: labNodes(), Delete: []string{"lab"}}
			},
			wantBlocking: []string{CodeConflictingRequest},
		},
		{
			name: "API port change flips cni to bridge",
			in: func() Input {
				c := with(labCluster(), func(c *api.KubernetesCluster) { c.Spec.APIServerEndpoint = "192.168.40.200:7443" })
				return Input{Desired: clusters(c), Stored: ready(labCluster()), Nodes: labNodes()}
			},
			wantBlocking: []string{CodeImmutableField},
			wantText:     []string{`cni cannot change on a running cluster ("cilium" → "bridge")`},
		},
		{
			name: "volume filesystem change",
			in: func() Input {
				c := with(labCluster(), func(c *api.KubernetesCluster) { c.Spec.LocalProvisioner.Volumes[2].FSType = "xfs" })
				return Input{Desired: clusters(c), Stored: ready(labCluster()), Nodes: labNodes()}
			},
			wantBlocking: []string{CodeVolumeImmutable},
		},
		{
			name: "removing a control plane while another is not ready",
			in: func() Input {
				nodes := allNodes()
				find(nodes, "node-109").Status.Ready = false
				return Input{Stored: ready(threeCPCluster()), Nodes: nodes, Scale: &ScaleRequest{Cluster: "lab", Remove: []string{"node-107"}}}
			},
			wantBlocking: []string{CodeQuorumLoss},
			wantText:     []string{"(not ready: node-109)"},
		},
		{
			name: "removing the not-ready control plane keeps quorum",
			in: func() Input {
				nodes := allNodes()
				find(nodes, "node-109").Status.Ready = false
				return Input{Stored: ready(threeCPCluster()), Nodes: nodes, Scale: &ScaleRequest{Cluster: "lab", Remove: []string{"node-109"}}}
			},
			wantAction:   ActionUpdate,
			wantWarnings: []string{CodeEvenControlPlanes},
		},
		{
			name: "adding a control plane to a cluster without quorum",
			in: func() Input {
				nodes := allNodes()
				find(nodes, "node-107").Status.Ready = false
				return Input{Stored: ready(labCluster()), Nodes: nodes, Scale: &ScaleRequest{Cluster: "lab",
					AddControlPlanes: []api.ClusterNode{{NodeID: "node-109", AdvertiseAddress: "192.168.40.109"}}}}
			},
			wantBlocking: []string{CodeQuorumLoss},
		},
		{
			name: "control plane not ready",
			in: func() Input {
				nodes := labNodes()
				find(nodes, "node-105").Status.Ready = false
				return Input{Desired: clusters(labCluster()), Nodes: nodes}
			},
			wantBlocking: []string{CodeControlPlaneNotReady},
		},
		{
			name: "worker not ready",
			in: func() Input {
				nodes := labNodes()
				find(nodes, "node-103").Status.Ready = false
				return Input{Desired: clusters(labCluster()), Nodes: nodes}
			},
			wantWarnings: []string{CodeWorkerNotReady},
			wantAction:   ActionCreate,
		},
		{
			name: "invalid manifest",
			in: func() Input {
				c := with(labCluster(), func(c *api.KubernetesCluster) { c.Spec.ServiceCIDR = "" })
				return Input{Desired: clusters(c), Nodes: labNodes()}
			},
			wantBlocking: []string{CodeInvalidManifest},
		},
		{
			name: "initialCluster is ignored",
			in: func() Input {
				c := with(labCluster(), func(c *api.KubernetesCluster) { c.Spec.InitialCluster = "node-105=https://192.168.40.105:2380" })
				return Input{Desired: clusters(c), Nodes: labNodes()}
			},
			wantWarnings: []string{CodeInitialClusterIgnored},
			wantAction:   ActionCreate,
		},
		{
			name: "prune deletes stored clusters absent from the manifests",
			in: func() Input {
				return Input{Stored: ready(labCluster()), Nodes: labNodes(), Prune: true}
			},
			wantAction: ActionDelete,
		},
		{
			name: "prune passes over a cluster already being deleted",
			in: func() Input {
				gone := with(labCluster(), func(c *api.KubernetesCluster) {
					c.Metadata.Name = "gone"
					c.Spec.APIServerEndpoint = "192.168.41.200:6443"
					c.Spec.HighAvailability.VIPAddress = "192.168.41.200"
					c.Spec.ControlPlaneNodes = []api.ClusterNode{{NodeID: "node-201", AdvertiseAddress: "192.168.41.201"}}
					c.Spec.WorkerNodes = nil
					c.Spec.Cilium.LoadBalancerIPPools = nil
					c.Spec.LocalProvisioner.Volumes = nil
				})
				return Input{Desired: clusters(labCluster()), Stored: []*api.KubernetesCluster{stored(gone, api.PhaseDeleting)}, Nodes: labNodes(), Prune: true}
			},
			wantAction: ActionCreate,
		},
		{
			name: "without prune a missing manifest changes nothing",
			in: func() Input {
				return Input{Stored: ready(labCluster()), Nodes: labNodes()}
			},
		},
		{
			name: "recreate allows an immutable change",
			in: func() Input {
				c := with(labCluster(), func(c *api.KubernetesCluster) { c.Spec.ClusterCIDR = "10.245.0.0/16" })
				return Input{Desired: clusters(c), Stored: ready(labCluster()), Nodes: labNodes(), Recreate: []string{"lab"}}
			},
			wantAction: ActionReplace,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Compute(tc.in())
			got := codes(p.Blocking)
			if tc.wantBlocking == nil && len(got) > 0 {
				t.Errorf("blocking = %v, want none: %+v", got, p.Blocking)
			}
			for _, w := range tc.wantBlocking {
				if !slices.Contains(got, w) {
					t.Errorf("blocking = %v, want %s", got, w)
				}
			}
			for _, w := range tc.wantWarnings {
				if !slices.Contains(codes(p.Warnings), w) {
					t.Errorf("warnings = %v, want %s", codes(p.Warnings), w)
				}
			}
			if tc.wantAction != "" && (len(p.Clusters) == 0 || p.Clusters[0].Action != tc.wantAction) {
				t.Errorf("clusters = %+v, want action %s", p.Clusters, tc.wantAction)
			}
			var msgs []string
			for _, i := range p.Blocking {
				msgs = append(msgs, i.Message)
				if i.Fix == "" {
					t.Errorf("blocking issue %s has no fix", i.Code)
				}
			}
			for _, w := range tc.wantText {
				if !strings.Contains(strings.Join(msgs, "\n"), w) {
					t.Errorf("blocking messages do not contain %q:\n%s", w, strings.Join(msgs, "\n"))
				}
			}
		})
	}
}
