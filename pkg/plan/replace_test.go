package plan

import (
	"slices"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
)

// node111 is the fresh machine that replaces a dead control plane.
func node111() api.ClusterNode {
	return api.ClusterNode{NodeID: "node-111", AdvertiseAddress: "192.168.40.111", Iface: "enp6s0"}
}

// deadNodes are every lab node plus node-111, with the named ones not ready.
func deadNodes(dead ...string) []*api.Node {
	nodes := append(allNodes(), node("node-111", "192.168.40.111"))
	for _, id := range dead {
		find(nodes, id).Status.Ready = false
	}
	return nodes
}

// replaceInput replaces control planes of the stored three-control-plane
// lab cluster (degraded: a member is down).
func replaceInput(nodes []*api.Node, rs ...Replacement) Input {
	return Input{
		Stored: []*api.KubernetesCluster{stored(threeCPCluster(), api.PhaseDegraded)}, Nodes: nodes, Index: 42,
		Scale: &ScaleRequest{Cluster: "lab", Replace: rs},
	}
}

// fiveCPCluster is the lab cluster with five control planes.
func fiveCPCluster() *api.KubernetesCluster {
	c := threeCPCluster()
	c.Spec.ControlPlaneNodes = append(c.Spec.ControlPlaneNodes,
		api.ClusterNode{NodeID: "node-104", AdvertiseAddress: "192.168.40.104", Iface: "enp6s0"},
		api.ClusterNode{NodeID: "node-113", AdvertiseAddress: "192.168.40.113", Iface: "enp6s0"})
	return c
}

// membershipSteps lists a plan's etcd membership steps and Node removals as
// "node action quorumAfter", in order.
func membershipSteps(p *Plan) []string {
	var out []string
	for _, s := range p.Clusters[0].Steps {
		if s.Disruption == DisruptionEtcdMembership || s.Component == ComponentMembership ||
			(s.Component == ComponentKeepalived && (s.Action == StepRestart || s.Action == StepReload)) {
			out = append(out, s.Node+" "+s.Component+" "+s.Action+" "+s.QuorumAfter)
		}
	}
	return out
}

func TestReplaceControlPlane(t *testing.T) {
	five := func(nodes []*api.Node, rs ...Replacement) Input {
		in := replaceInput(nodes, rs...)
		in.Stored = []*api.KubernetesCluster{stored(fiveCPCluster(), api.PhaseDegraded)}
		return in
	}
	fiveNodes := func(dead ...string) []*api.Node {
		nodes := append(deadNodes(), node("node-113", "192.168.40.113"))
		for _, id := range dead {
			find(nodes, id).Status.Ready = false
		}
		return nodes
	}
	for _, tc := range []struct {
		name    string
		in      Input
		blocked []string
		steps   []string
		warned  string
	}{
		{
			name: "3 with 1 dead: remove, learner, promote, keepalived, Node",
			in:   replaceInput(deadNodes("node-107"), Replacement{Node: "node-107", With: node111()}),
			steps: []string{
				"node-107 etcd remove-member 2/2 healthy, quorum 2",
				"node-111 etcd add-member 2/2 healthy, quorum 2",
				"node-111 etcd promote-member 3/3 healthy, quorum 2",
				"node-105 keepalived reload 3/3 healthy, quorum 2",
				"node-109 keepalived reload 3/3 healthy, quorum 2",
				"node-107 membership remove 3/3 healthy, quorum 2",
			},
		},
		{
			name: "3 with 2 dead: no quorum to change membership",
			in:   replaceInput(deadNodes("node-107", "node-109"), Replacement{Node: "node-107", With: node111()}),
			// no quorum now, and the removal would leave 1 of 2
			blocked: []string{CodeQuorumLoss, CodeQuorumLoss},
		},
		{
			name: "3 with 1 dead, the healthy one replaced: quorum lost",
			in:   replaceInput(deadNodes("node-109"), Replacement{Node: "node-107", With: node111()}),
			// removing node-107 leaves node-105 and the dead node-109
			blocked: []string{CodeQuorumLoss},
		},
		{
			name: "2 of 3 at once: the second removal loses quorum",
			in: replaceInput(deadNodes("node-107"), Replacement{Node: "node-107", With: node111()},
				Replacement{Node: "node-109", With: api.ClusterNode{NodeID: "node-104", AdvertiseAddress: "192.168.40.104", Iface: "enp6s0"}}),
			blocked: []string{CodeQuorumLoss},
		},
		{
			name: "5 with 1 dead",
			in:   five(fiveNodes("node-113"), Replacement{Node: "node-113", With: node111()}),
			steps: []string{
				"node-113 etcd remove-member 4/4 healthy, quorum 3",
				"node-111 etcd add-member 4/4 healthy, quorum 3",
				"node-111 etcd promote-member 5/5 healthy, quorum 3",
				"node-105 keepalived reload 5/5 healthy, quorum 3",
				"node-107 keepalived reload 5/5 healthy, quorum 3",
				"node-109 keepalived reload 5/5 healthy, quorum 3",
				"node-104 keepalived reload 5/5 healthy, quorum 3",
				"node-113 membership remove 5/5 healthy, quorum 3",
			},
		},
		{
			name: "a stale member is removed first and counted until then",
			in: func() Input {
				in := replaceInput(deadNodes(), Replacement{Node: "node-107", With: node111()})
				in.Stored[0].Status.EtcdStaleMembers = []api.StaleEtcdMember{{Reason: api.StaleNotInManifest, Name: "node-9", PeerURLs: []string{"https://192.168.40.9:2380"}}}
				return in
			}(),
			steps: []string{
				"node-9 etcd remove-member 3/3 healthy, quorum 2",
				"node-107 etcd remove-member 2/2 healthy, quorum 2",
				"node-111 etcd add-member 2/2 healthy, quorum 2",
				"node-111 etcd promote-member 3/3 healthy, quorum 2",
				"node-105 keepalived reload 3/3 healthy, quorum 2",
				"node-109 keepalived reload 3/3 healthy, quorum 2",
				"node-107 membership remove 3/3 healthy, quorum 2",
			},
			warned: CodeEtcdStaleMember,
		},
		{
			name: "a stale member and a dead one: no quorum of four",
			in: func() Input {
				in := replaceInput(deadNodes("node-107"), Replacement{Node: "node-107", With: node111()})
				in.Stored[0].Status.EtcdStaleMembers = []api.StaleEtcdMember{{Reason: api.StaleNotInManifest, Name: "node-9"}}
				return in
			}(),
			blocked: []string{CodeQuorumLoss},
		},
		{
			name:    "a worker is not replaced",
			in:      replaceInput(deadNodes(), Replacement{Node: "node-103", With: node111()}),
			blocked: []string{CodeNotAMember},
		},
		{
			name:    "the new machine is not ready",
			in:      replaceInput(deadNodes("node-107", "node-111"), Replacement{Node: "node-107", With: node111()}),
			blocked: []string{CodeControlPlaneNotReady},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Compute(tc.in)
			if got := codes(p.Blocking); !slices.Equal(got, tc.blocked) {
				t.Fatalf("blocking = %v, want %v: %+v", got, tc.blocked, p.Blocking)
			}
			if tc.warned != "" && !slices.Contains(codes(p.Warnings), tc.warned) {
				t.Errorf("warnings = %v, want %s", codes(p.Warnings), tc.warned)
			}
			if tc.blocked != nil {
				return
			}
			if got := membershipSteps(p); !slices.Equal(got, tc.steps) {
				t.Errorf("steps:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.steps, "\n"))
			}
		})
	}
}

// A manifest that swaps one control plane's id and address for another's
// is planned as the same replacement as the command.
func TestReplaceByManifestEdit(t *testing.T) {
	desired := with(threeCPCluster(), func(c *api.KubernetesCluster) {
		c.Spec.ControlPlaneNodes[1] = node111()
		c.Spec.LocalProvisioner.Volumes = slices.DeleteFunc(c.Spec.LocalProvisioner.Volumes, func(v api.VolumeSpec) bool { return v.NodeID == "node-107" })
	})
	edit := Compute(Input{Desired: []*api.KubernetesCluster{desired}, Stored: []*api.KubernetesCluster{stored(threeCPCluster(), api.PhaseDegraded)}, Nodes: deadNodes("node-107"), Index: 42})
	cmd := Compute(replaceInput(deadNodes("node-107"), Replacement{Node: "node-107", With: node111()}))
	if edit.Blocked() {
		t.Fatalf("manifest edit blocked: %+v", edit.Blocking)
	}
	if edit.Hash != cmd.Hash {
		t.Errorf("manifest edit plans %v, the command %v", membershipSteps(edit), membershipSteps(cmd))
	}

	// Anything else in the same edit is a plain membership change.
	desired.Spec.ClusterDNS = "10.96.0.53"
	mixed := Compute(Input{Desired: []*api.KubernetesCluster{desired}, Stored: []*api.KubernetesCluster{stored(threeCPCluster(), api.PhaseDegraded)}, Nodes: deadNodes("node-107"), Index: 42})
	if !slices.Contains(codes(mixed.Blocking), CodeMembershipChange) {
		t.Errorf("a replacement mixed with another change: blocking = %v, want %s", codes(mixed.Blocking), CodeMembershipChange)
	}
}

// TestScaleByManifestEdit: a manifest that only adds a worker, or only
// removes one, plans exactly what kctl kubernetes scale plans (the same
// hash), so a git source or an apply of the edited file scales the cluster.
func TestScaleByManifestEdit(t *testing.T) {
	w := api.ClusterNode{NodeID: "node-104", AdvertiseAddress: "192.168.40.104"}
	base := labCluster()
	with4 := with(labCluster(), func(c *api.KubernetesCluster) { c.Spec.WorkerNodes = append(c.Spec.WorkerNodes, w) })
	for _, tt := range []struct {
		name            string
		stored, desired *api.KubernetesCluster
		req             ScaleRequest
	}{
		{"add a worker", base, with4, ScaleRequest{Cluster: "lab", AddWorkers: []api.ClusterNode{w}}},
		{"remove a worker", with4, base, ScaleRequest{Cluster: "lab", Remove: []string{"node-104"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			edit := Compute(Input{Desired: clusters(tt.desired), Stored: clusters(stored(tt.stored, api.PhaseReady)), Nodes: allNodes(), Index: 42})
			cmd := Compute(Input{Stored: clusters(stored(tt.stored, api.PhaseReady)), Nodes: allNodes(), Index: 42, Scale: &tt.req})
			if edit.Blocked() || cmd.Blocked() {
				t.Fatalf("blocked: edit %+v, command %+v", edit.Blocking, cmd.Blocking)
			}
			if edit.Hash != cmd.Hash {
				t.Errorf("manifest edit plans %v, the command %v", membershipSteps(edit), membershipSteps(cmd))
			}
		})
	}
}
