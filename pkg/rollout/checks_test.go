package rollout

import (
	"slices"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/plan"
)

// labInput is the reference update against the lab, every check passing
// but the two warnings the lab always has.
func labInput() Input {
	return Input{Update: referenceUpdate(), Clusters: []*api.KubernetesCluster{labCluster()}, Nodes: labNodes(), Controllers: replicas(56, 57, 59)}
}

func TestBlockingRules(t *testing.T) {
	setK8s := func(in *Input, k8s, etcd string) {
		for _, n := range in.Nodes {
			for k := range n.Facts.Versions {
				if k == VersionEtcd {
					n.Facts.Versions[k] = etcd
				} else {
					n.Facts.Versions[k] = "v" + k8s
				}
			}
		}
	}
	target := func(v string) func(*Input) {
		return func(in *Input) { in.Update.Spec.TestedOSPins.KubernetesVersion = v }
	}
	tests := []struct {
		name  string
		edit  func(*Input)
		codes []string
		nodes []string // the Node of each blocking issue
		text  string   // a phrase the first message contains
	}{
		{"reference passes", func(*Input) {}, nil, nil, ""},
		{"selected node registered", func(in *Input) {
			in.Update.Spec.AllNodes, in.Update.Spec.Nodes = false, []string{"node-103"}
		}, nil, nil, ""},
		{"selected node unknown", func(in *Input) {
			in.Update.Spec.AllNodes, in.Update.Spec.Nodes = false, []string{"node-103", "node-999"}
		}, []string{CodeNodeUnknown}, []string{"node-999"}, "not registered"},
		{"cluster member unknown with allNodes", func(in *Input) {
			in.Nodes = in.Nodes[:2]
		}, []string{CodeNodeUnknown}, []string{"node-107"}, "member of cluster lab"},
		{"node not ready", func(in *Input) {
			find(in.Nodes, "node-103").Status.Ready = false
		}, []string{CodeNodeNotReady}, []string{"node-103"}, "not ready"},
		{"cluster degraded", func(in *Input) {
			in.Clusters[0].Status.Phase = api.PhaseDegraded
			in.Clusters[0].Status.Conditions = []api.Condition{{Type: "EtcdQuorum", Status: "False", Message: "etcd on node-107 does not answer"}}
		}, []string{CodeClusterNotReady}, []string{"node-103"}, "phase degraded, not ready; its node node-103 is a target: etcd on node-107 does not answer"},
		{"cluster updating", func(in *Input) { in.Clusters[0].Status.Phase = api.PhaseUpdating }, []string{CodeClusterNotReady}, []string{"node-103"}, "phase updating"},
		{"cluster of an untargeted node is not checked", func(in *Input) {
			in.Update.Spec.AllNodes, in.Update.Spec.Nodes = false, []string{"node-120"}
			in.Nodes = append(in.Nodes, node("node-120", "192.168.40.120", "1.37.2", ""))
			in.Clusters[0].Status.Phase = api.PhaseDegraded
		}, nil, nil, ""},
		{"one minor up", func(in *Input) { setK8s(in, "1.36.4", "3.6.5"); target("1.37.2")(in) }, nil, nil, ""},
		{"skips a minor", func(in *Input) { setK8s(in, "1.35.3", "3.6.5"); target("1.37.0")(in) },
			[]string{CodeKubernetesVersionSkew, CodeKubernetesVersionSkew, CodeKubernetesVersionSkew}, []string{"node-103", "node-105", "node-107"}, "skips a minor version: node node-103 runs 1.35.3"},
		{"minor downgrade", func(in *Input) { target("1.36.9")(in) },
			[]string{CodeKubernetesVersionSkew, CodeKubernetesVersionSkew, CodeKubernetesVersionSkew, CodeEtcdUpgradePath, CodeEtcdUpgradePath}, []string{"node-103", "node-105", "node-107", "node-105", "node-107"}, "downgrades node node-103 from 1.37.2 by a minor version"},
		{"patch downgrade only warns", func(in *Input) { target("1.37.1")(in) }, nil, nil, ""},
		{"workers alone cannot move a minor ahead of the API servers", func(in *Input) {
			setK8s(in, "1.36.4", "3.6.5")
			target("1.37.2")(in)
			in.Update.Spec.AllNodes, in.Update.Spec.Nodes = false, []string{"node-103"}
		}, []string{CodeKubernetesVersionSkew}, []string{"node-103"}, "after step 1 (node-103) the kubelet on node-103 would be 1.37.2, newer than the API server on node-105 (1.36.4)"},
		{"one control plane alone leaves its kubelet ahead of the other API server", func(in *Input) {
			setK8s(in, "1.36.4", "3.6.5")
			target("1.37.2")(in)
			in.Update.Spec.AllNodes, in.Update.Spec.Nodes = false, []string{"node-107"}
		}, []string{CodeKubernetesVersionSkew}, []string{"node-107"}, "after step 2 (node-107) the kubelet on node-107 would be 1.37.2, newer than the API server on node-105 (1.36.4)"},
		{"control planes alone on a minor upgrade are fine", func(in *Input) {
			setK8s(in, "1.36.4", "3.6.5")
			target("1.37.2")(in)
			in.Update.Spec.AllNodes, in.Update.Spec.Nodes = false, []string{"node-105", "node-107"}
		}, nil, nil, ""},
		{"kubelet more than three minors behind", func(in *Input) {
			setK8s(in, "1.36.4", "3.6.5")
			find(in.Nodes, "node-103").Facts.Versions[VersionKubelet] = "v1.33.0"
			target("1.37.2")(in)
			in.Update.Spec.AllNodes, in.Update.Spec.Nodes = false, []string{"node-105", "node-107"}
		}, []string{CodeKubernetesVersionSkew}, []string{"node-103"}, "the kubelet on node-103 would be 1.33.0, more than three minor versions older than the API server on node-107 (1.37.2)"},
		{"etcd 3.6 to 3.7", func(in *Input) { setK8s(in, "1.36.4", "3.6.5"); target("1.37.2")(in) }, nil, nil, ""},
		{"etcd 3.5 to 3.7", func(in *Input) { setK8s(in, "1.36.4", "3.5.21"); target("1.37.2")(in) },
			[]string{CodeEtcdUpgradePath, CodeEtcdUpgradePath}, []string{"node-105", "node-107"}, "etcd upgrades one minor version at a time (3.5 → 3.6)"},
		{"etcd 3.7 to 3.6", func(in *Input) { setK8s(in, "1.36.4", "3.7.3"); target("1.36.5")(in) },
			[]string{CodeEtcdUpgradePath, CodeEtcdUpgradePath}, []string{"node-105", "node-107"}, "kcore does not downgrade etcd"},
		{"schema gates met", func(in *Input) { in.Controllers = replicas(56, 57, 59) }, nil, nil, ""},
		{"schema gates: a replica on 55", func(in *Input) { in.Controllers = replicas(56, 57, 55) },
			[]string{CodeSchemaGate, CodeSchemaGate}, []string{"", ""}, "controller replica controller-c runs schema 55; release 0.5.0 upgrades from schema 56"},
		{"schema gates: a replica already newer", func(in *Input) { in.Controllers = replicas(56, 60, 59) },
			[]string{CodeSchemaGate}, []string{""}, "controller replica controller-b already runs schema 60"},
		{"schema gates: a replica that recorded no schema", func(in *Input) { in.Controllers = replicas(56, 0, 59) },
			[]string{CodeSchemaGate}, []string{""}, "controller replica controller-b recorded no schema"},
		{"update kind kubernetes needs a version", func(in *Input) {
			in.Update.Spec.UpdateKind = api.UpdateKindK8s
			target("")(in)
		}, []string{CodeInvalidUpdate}, []string{""}, "update_kind kubernetes needs"},
		{"update kind os needs a flake pin", func(in *Input) {
			in.Update.Spec.UpdateKind = api.UpdateKindOS
			in.Update.Spec.FlakeRev = ""
		}, []string{CodeOSPinMissing}, []string{""}, "update_kind os has no flake_rev"},
		{"update kind os with a flake pin", func(in *Input) { in.Update.Spec.UpdateKind = api.UpdateKindOS }, nil, nil, ""},
		{"invalid manifest", func(in *Input) { in.Update.Spec.BatchSize = 3 }, []string{CodeInvalidUpdate}, []string{""}, "must be 1 with strategy one-at-a-time"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := labInput()
			tc.edit(&in)
			p := Plan(in)
			got := codes(p.Blocking)
			if !slices.Equal(got, tc.codes) {
				t.Fatalf("blocking = %v, want %v\n%v", got, tc.codes, p.Blocking)
			}
			for i, is := range p.Blocking {
				if is.Node != tc.nodes[i] {
					t.Errorf("issue %d (%s) names node %q, want %q", i, is.Code, is.Node, tc.nodes[i])
				}
				if is.Fix == "" {
					t.Errorf("issue %d (%s) has no fix", i, is.Code)
				}
			}
			if tc.text != "" && !strings.Contains(p.Blocking[0].Message, tc.text) {
				t.Errorf("message %q does not say %q", p.Blocking[0].Message, tc.text)
			}
		})
	}
}

func TestSchemaGatesReference(t *testing.T) {
	// The reference's 59/56/56 against replicas at 56, 57 and 55: only the
	// replica at 55 fails, once per gate.
	p := Plan(Input{Update: referenceUpdate(), Clusters: []*api.KubernetesCluster{labCluster()}, Nodes: labNodes(), Controllers: replicas(56, 57, 55)})
	var paths []string
	for _, is := range p.Blocking {
		if !strings.Contains(is.Message, "controller-c") || strings.Contains(is.Message, "controller-a") || strings.Contains(is.Message, "controller-b") {
			t.Errorf("issue names the wrong replica: %s", is.Message)
		}
		paths = append(paths, is.Path)
	}
	if want := []string{"spec.previousSchemaVersion", "spec.minCompatibleReader"}; !slices.Equal(paths, want) {
		t.Errorf("paths = %v, want %v", paths, want)
	}
}

func TestApproval(t *testing.T) {
	tests := []struct {
		approval string
		approve  bool
		waits    bool
	}{
		{api.ApprovalManual, false, true},
		{api.ApprovalManual, true, false},
		{api.ApprovalAuto, false, false},
	}
	for _, tc := range tests {
		in := labInput()
		in.Update.Spec.Approval, in.Update.Spec.Approve = tc.approval, tc.approve
		if got := Plan(in).WaitsForApproval; got != tc.waits {
			t.Errorf("approval %s approve %t: waits = %t, want %t", tc.approval, tc.approve, got, tc.waits)
		}
	}
}

// TestRuntimeBlocksUpgrade: an update to Kubernetes 1.36 or later blocks
// each target member whose facts report containerd 1.x, by the same table
// cluster plans use; 1.35 and containerd 2 pass, and so does a node that
// reports no containerd.
func TestRuntimeBlocksUpgrade(t *testing.T) {
	tests := []struct {
		from, to, containerd string
		blocked              bool
	}{
		{"1.35.4", "1.36.0", "1.7.27", true},
		{"1.35.4", "1.36.0", "v2.0.0", false},
		{"1.34.2", "1.35.4", "1.7.27", false},
		{"1.35.4", "1.36.0", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.to+"/"+tt.containerd, func(t *testing.T) {
			in := labInput()
			in.Update.Spec.TestedOSPins.KubernetesVersion = tt.to
			for _, n := range in.Nodes {
				for k := range n.Facts.Versions {
					if k != VersionEtcd {
						n.Facts.Versions[k] = "v" + tt.from
					}
				}
			}
			if tt.containerd != "" {
				find(in.Nodes, "node-103").Facts.Versions[plan.ContainerdFact] = tt.containerd
			}
			var got []plan.Issue
			for _, i := range Plan(in).Blocking {
				if i.Code == plan.CodeContainerdUnsupported {
					got = append(got, i)
				}
			}
			if (len(got) > 0) != tt.blocked {
				t.Fatalf("blocking %+v, want blocked %v", got, tt.blocked)
			}
			if tt.blocked && (len(got) != 1 || got[0].Node != "node-103" || !strings.Contains(got[0].Message, "needs containerd 2.0 or later on node-103, which has "+tt.containerd)) {
				t.Errorf("issues %+v", got)
			}
		})
	}
}
