package rollout

import (
	"slices"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/render"
)

func TestOrder(t *testing.T) {
	lab := func() []*api.KubernetesCluster { return []*api.KubernetesCluster{labCluster()} }
	big := func() []*api.KubernetesCluster { return []*api.KubernetesCluster{bigCluster()} }
	k8s := func(v string) func(*api.UpdateSpec) {
		return func(s *api.UpdateSpec) { s.TestedOSPins.KubernetesVersion = v }
	}
	batched := func(size, maxUnavailable int) func(*api.UpdateSpec) {
		return func(s *api.UpdateSpec) {
			s.Strategy, s.BatchSize, s.MaxUnavailable = api.StrategyBatched, size, maxUnavailable
		}
	}
	workers := [][]string{{"node-11"}, {"node-12"}, {"node-13"}, {"node-14"}, {"node-15"}}
	cps := [][]string{{"node-01"}, {"node-02"}, {"node-03"}}
	cat := func(parts ...[][]string) [][]string { return slices.Concat(parts...) }
	tests := []struct {
		name     string
		update   *api.ClusterUpdate
		clusters []*api.KubernetesCluster
		nodes    []*api.Node
		order    string
		steps    [][]string
		scopes   []string
		warnings []string
	}{
		{"reference on the lab: OS update, workers first, bootstrap last", referenceUpdate(), lab(), labNodes(),
			OrderWorkersFirst, [][]string{{"node-103"}, {"node-107"}, {"node-105"}}, []string{ScopeNode, ScopeNode, ScopeNode},
			[]string{CodeKubernetesPatchDowngrade, CodeEtcdQuorumPause}},
		{"same Kubernetes version: workers first", update(k8s("1.37.2")), lab(), labNodes(),
			OrderWorkersFirst, [][]string{{"node-103"}, {"node-107"}, {"node-105"}}, nil, []string{CodeEtcdQuorumPause}},
		{"patch upgrade: control planes first", update(k8s("1.37.3")), lab(), labNodes(),
			OrderControlPlanesFirst, [][]string{{"node-107"}, {"node-105"}, {"node-103"}}, nil, []string{CodeEtcdQuorumPause}},
		{"minor upgrade: control-plane components, kubelets, workers", update(k8s("1.37.2")), big(), bigNodes("1.36.4", "3.6.5"),
			OrderControlPlaneComponentsFirst, cat(cps, cps, workers),
			[]string{ScopeControlPlane, ScopeControlPlane, ScopeControlPlane, ScopeKubelet, ScopeKubelet, ScopeKubelet, ScopeNode, ScopeNode, ScopeNode, ScopeNode, ScopeNode}, nil},
		{"update kind kubernetes orders like any minor upgrade", update(k8s("1.37.2"), func(s *api.UpdateSpec) { s.UpdateKind = api.UpdateKindK8s }), big(), bigNodes("1.36.4", "3.6.5"),
			OrderControlPlaneComponentsFirst, cat(cps, cps, workers), nil, nil},
		{"no Kubernetes version: workers first with a warning", update(k8s("")), big(), bigNodes("1.36.4", "3.6.5"),
			OrderWorkersFirst, cat(workers, cps), nil, []string{CodeKubernetesVersionUnknown}},
		{"batched 2/2", update(k8s("1.36.4"), batched(2, 2)), big(), bigNodes("1.36.4", "3.6.5"),
			OrderWorkersFirst, cat([][]string{{"node-11", "node-12"}, {"node-13", "node-14"}, {"node-15"}}, cps), nil, nil},
		{"batched 3 capped by max_unavailable 2", update(k8s("1.36.4"), batched(3, 2)), big(), bigNodes("1.36.4", "3.6.5"),
			OrderWorkersFirst, cat([][]string{{"node-11", "node-12"}, {"node-13", "node-14"}, {"node-15"}}, cps), nil, []string{CodeBatchCapped}},
		{"batched 5/5: control planes still one at a time", update(k8s("1.36.4"), batched(5, 5)), big(), bigNodes("1.36.4", "3.6.5"),
			OrderWorkersFirst, cat([][]string{{"node-11", "node-12", "node-13", "node-14", "node-15"}}, cps), nil, nil},
		{"batched minor upgrade: workers batched last", update(k8s("1.37.0"), batched(4, 4)), big(), bigNodes("1.36.4", "3.6.5"),
			OrderControlPlaneComponentsFirst, cat(cps, cps, [][]string{{"node-11", "node-12", "node-13", "node-14"}, {"node-15"}}), nil, nil},
		{"etcd leader goes last", update(k8s("1.36.4")), big(), func() []*api.Node {
			n := bigNodes("1.36.4", "3.6.5")
			find(n, "node-02").Facts.Labels = map[string]string{EtcdLeaderLabel: "true"}
			return n
		}(), OrderWorkersFirst, cat(workers, [][]string{{"node-01"}, {"node-03"}, {"node-02"}}), nil, nil},
		{"selector", update(k8s("1.36.4"), func(s *api.UpdateSpec) { s.AllNodes, s.Nodes = false, []string{"node-12", "node-01"} }), big(), bigNodes("1.36.4", "3.6.5"),
			OrderWorkersFirst, [][]string{{"node-12"}, {"node-01"}}, nil, nil},
		{"two clusters: control planes one at a time across both, each cluster's last node last",
			update(k8s("1.37.2"), batched(5, 5)), append(lab(), bigCluster()), append(labNodes(), bigNodes("1.37.2", "3.7.3")...),
			OrderWorkersFirst, [][]string{{"node-103", "node-11", "node-12", "node-13", "node-14"}, {"node-15"}, {"node-01"}, {"node-02"}, {"node-107"}, {"node-03"}, {"node-105"}},
			nil, []string{CodeEtcdQuorumPause}},
		{"allNodes includes registered nodes outside clusters", update(k8s("1.37.2")), lab(), append(labNodes(), node("node-120", "192.168.40.120", "1.37.2", "")),
			OrderWorkersFirst, [][]string{{"node-103"}, {"node-120"}, {"node-107"}, {"node-105"}}, nil, []string{CodeEtcdQuorumPause}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Plan(Input{Update: tc.update, Clusters: tc.clusters, Nodes: tc.nodes, Controllers: replicas(56, 57, 59)})
			if p.Blocked() {
				t.Fatalf("blocked: %v", p.Blocking)
			}
			if p.Order != tc.order {
				t.Errorf("order = %s, want %s", p.Order, tc.order)
			}
			var got [][]string
			var scopes []string
			for _, s := range p.Steps {
				got = append(got, s.NodeIDs())
				scopes = append(scopes, s.Scope)
			}
			if !slices.EqualFunc(got, tc.steps, slices.Equal) {
				t.Errorf("steps = %v, want %v", got, tc.steps)
			}
			if tc.scopes != nil && !slices.Equal(scopes, tc.scopes) {
				t.Errorf("scopes = %v, want %v", scopes, tc.scopes)
			}
			if w := codes(p.Warnings); !slices.Equal(w, tc.warnings) {
				t.Errorf("warnings = %v, want %v", w, tc.warnings)
			}
			for i, s := range p.Steps {
				n := 0
				for _, sn := range s.Nodes {
					if sn.Role == api.RoleControlPlane {
						n++
					}
				}
				if n > 1 {
					t.Errorf("step %d updates %d control planes at once", i+1, n)
				}
				if len(s.Nodes) > tc.update.Spec.MaxUnavailable {
					t.Errorf("step %d takes %d nodes down, max_unavailable is %d", i+1, len(s.Nodes), tc.update.Spec.MaxUnavailable)
				}
			}
		})
	}
}

func TestSnapshotBeforeFirstControlPlane(t *testing.T) {
	tests := []struct {
		name  string
		in    Input
		step  int
		count int
	}{
		{"workers first: before the first control plane", Input{Update: referenceUpdate(), Clusters: []*api.KubernetesCluster{labCluster()}, Nodes: labNodes()}, 1, 1},
		{"minor upgrade: before step 1, not before the kubelet steps",
			Input{Update: update(func(s *api.UpdateSpec) { s.TestedOSPins.KubernetesVersion = "1.37.2" }), Clusters: []*api.KubernetesCluster{bigCluster()}, Nodes: bigNodes("1.36.4", "3.6.5")}, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Plan(tc.in)
			n := 0
			for i, s := range p.Steps {
				if len(s.SnapshotBefore) == 0 {
					continue
				}
				n++
				if i != tc.step {
					t.Errorf("snapshot before step %d, want before step %d", i+1, tc.step+1)
				}
			}
			if n != tc.count {
				t.Errorf("%d snapshots, want %d", n, tc.count)
			}
		})
	}
}

func TestDisruptions(t *testing.T) {
	kinds := func(ds []Disruption, node string) []string {
		var out []string
		for _, d := range ds {
			if d.Node == node {
				out = append(out, d.Kind)
			}
		}
		return out
	}
	minor := func(s *api.UpdateSpec) { s.TestedOSPins.KubernetesVersion = "1.37.2" }
	tests := []struct {
		name  string
		u     *api.ClusterUpdate
		step  int
		node  string
		kinds []string
		units []string
	}{
		{"worker", referenceUpdate(), 0, "node-103", []string{DisruptionDrain, DisruptionRestartUnit}, []string{render.UnitKubelet, unitNodeAgent}},
		{"control plane", referenceUpdate(), 2, "node-105", []string{DisruptionDrain, DisruptionRestartUnit, DisruptionEtcdRestart, DisruptionVIPMove},
			[]string{render.UnitEtcd, render.UnitAPIServer, render.UnitControllerManager, render.UnitScheduler, render.UnitKeepalived, render.UnitKubelet, unitNodeAgent}},
		{"reboot with VMs drained", update(func(s *api.UpdateSpec) { s.Activation, s.DrainVMs = api.ActivationReboot, true }), 0, "node-103",
			[]string{DisruptionDrainVMs, DisruptionDrain, DisruptionReboot, DisruptionRestartUnit}, []string{render.UnitKubelet, unitNodeAgent}},
		{"control-plane components: no drain", update(minor), 0, "node-107", []string{DisruptionRestartUnit, DisruptionEtcdRestart, DisruptionVIPMove},
			[]string{render.UnitEtcd, render.UnitAPIServer, render.UnitControllerManager, render.UnitScheduler, render.UnitKeepalived, unitNodeAgent}},
		{"kubelet only", update(minor), 2, "node-107", []string{DisruptionDrain, DisruptionRestartUnit}, []string{render.UnitKubelet}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nodes := labNodes()
			if tc.u.Spec.TestedOSPins.KubernetesVersion == "1.37.2" {
				for _, n := range nodes {
					for k := range n.Facts.Versions {
						if k != VersionEtcd {
							n.Facts.Versions[k] = "v1.36.4"
						}
					}
				}
			}
			p := Plan(Input{Update: tc.u, Clusters: []*api.KubernetesCluster{labCluster()}, Nodes: nodes})
			s := p.Steps[tc.step]
			if got := kinds(s.Disruptions, tc.node); !slices.Equal(got, tc.kinds) {
				t.Errorf("disruptions = %v, want %v", got, tc.kinds)
			}
			for _, d := range s.Disruptions {
				if d.Kind == DisruptionRestartUnit && !slices.Equal(d.Units, tc.units) {
					t.Errorf("units = %v, want %v", d.Units, tc.units)
				}
			}
		})
	}
}

// TestSecondClusterUnitsByItsLayout restarts a second cluster's units on a
// machine it shares with the lab by the second cluster's own names, and
// restarts no kubelet of it there: it runs its control plane only.
func TestSecondClusterUnitsByItsLayout(t *testing.T) {
	edge := &api.KubernetesCluster{
		Kind:     api.KindKubernetesCluster,
		Metadata: api.ObjectMeta{Name: "edge", Generation: 1},
		Spec: api.ClusterSpec{
			ClusterCIDR: "10.245.0.0/16", ServiceCIDR: "10.112.0.0/12", ClusterDNS: "10.112.0.10",
			APIServerEndpoint: "192.168.40.105:6444", CNI: api.CNIBridge, ScheduleOnControlPlane: true,
			ControlPlaneNodes: []api.ClusterNode{{NodeID: "node-105", AdvertiseAddress: "192.168.40.105"}},
		},
		Status: api.ClusterStatus{Phase: api.PhaseReady, Slot: 1, Shared: []string{"node-105"}},
	}
	p := Plan(Input{Update: referenceUpdate(), Clusters: []*api.KubernetesCluster{labCluster(), edge}, Nodes: labNodes()})
	var units []string
	for _, s := range p.Steps {
		for _, d := range s.Disruptions {
			if d.Node == "node-105" && d.Kind == DisruptionRestartUnit {
				units = append(units, d.Units...)
			}
		}
	}
	for _, want := range []string{render.UnitEtcd, render.UnitKubelet, "kcore-s1-etcd", "kcore-s1-kube-apiserver"} {
		if !slices.Contains(units, want) {
			t.Errorf("node-105 restarts %v, want %s among them", units, want)
		}
	}
	if slices.Contains(units, "kcore-s1-kubelet") || slices.Contains(units, "kcore-s1-kube-proxy") {
		t.Errorf("node-105 restarts edge's kubelet, which it does not run: %v", units)
	}
}
