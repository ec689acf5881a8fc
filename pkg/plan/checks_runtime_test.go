package plan

import (
	"slices"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/render"
)

// TestContainerdSupport plans a create with each node's containerd at and
// around the table's bounds: kubelet 1.36 and later need containerd 2.0,
// 1.26 to 1.35 need 1.6; a node that reports no containerd is not checked.
func TestContainerdSupport(t *testing.T) {
	tests := []struct {
		kubelet, containerd string
		blocked             bool
	}{
		{"v1.37.2", "1.6.20", true},
		{"v1.37.2", "1.7.27", true},
		{"v1.36.0", "1.7.27", true},
		{"v1.36.0", "v2.0.0", false},
		{"v1.37.2", "v2.4.2", false},
		{"v1.35.4", "1.7.27", false},
		{"v1.35.4", "1.6.20", false},
		{"v1.26.0", "1.5.18", true},
		{"v1.25.9", "1.5.18", false},
		{"v1.37.2", "", false},
		{"", "1.6.20", false},
	}
	for _, tt := range tests {
		t.Run(tt.kubelet+"/"+tt.containerd, func(t *testing.T) {
			nodes := labNodes()
			if tt.containerd != "" {
				find(nodes, "node-103").Facts.Versions = map[string]string{ContainerdFact: tt.containerd}
			}
			p := Compute(Input{Desired: clusters(labCluster()), Nodes: nodes, Render: render.Options{KubernetesVersion: tt.kubelet}})
			i := slices.IndexFunc(p.Blocking, func(i Issue) bool { return i.Code == CodeContainerdUnsupported })
			if (i >= 0) != tt.blocked {
				t.Fatalf("blocked %v, want %v: %v", i >= 0, tt.blocked, codes(p.Blocking))
			}
			if i >= 0 {
				is := p.Blocking[i]
				if is.Node != "node-103" || is.Path != "spec.workerNodes[0].nodeId" || !strings.Contains(is.Message, "the node has "+tt.containerd) || !strings.Contains(is.Fix, "install containerd") {
					t.Errorf("issue %+v", is)
				}
			}
		})
	}
}

// TestRuntimeSupportTable: every row parses, rows do not overlap, and the
// kubelets the lab runs are covered.
func TestRuntimeSupportTable(t *testing.T) {
	var prevHi [2]int
	for i, p := range RuntimeSupport() {
		lo, ok1 := minorOf(p.KubeletMin)
		_, ok2 := minorOf(p.ContainerdMin)
		if !ok1 || !ok2 || p.Why == "" {
			t.Fatalf("row %d does not parse: %+v", i, p)
		}
		if i > 0 && !less(prevHi, lo) {
			t.Errorf("row %d overlaps the one before", i)
		}
		hi, bounded := minorOf(p.KubeletMax)
		if !bounded && i != len(RuntimeSupport())-1 {
			t.Errorf("row %d is open-ended but not last", i)
		}
		prevHi = hi
	}
	for _, v := range []string{"v1.36.3", "v1.37.2"} {
		kv, _ := minorOf(v)
		if p, ok := runtimePairFor(kv); !ok || p.ContainerdMin != "2.0" {
			t.Errorf("kubelet %s: %+v, %v", v, p, ok)
		}
	}
}

// TestMirrorChangeRestartsNothing: editing registryMirrors of a running
// cluster changes containerd's registry hosts and restarts no unit.
func TestMirrorChangeRestartsNothing(t *testing.T) {
	c := with(labCluster(), func(c *api.KubernetesCluster) {
		c.Spec.RegistryMirrors = []api.RegistryMirror{{Registry: "registry.k8s.io", Endpoints: []string{"https://10.77.0.1:5000"}}}
	})
	p := Compute(Input{Desired: clusters(c), Stored: clusters(stored(labCluster(), api.PhaseReady)), Nodes: labNodes()})
	if len(p.Blocking) > 0 || len(p.Clusters) != 1 || p.Clusters[0].Action != ActionUpdate {
		t.Fatalf("plan: %+v", p)
	}
	steps := p.Clusters[0].Steps
	if len(steps) != 3 {
		t.Fatalf("%d steps, want one per node", len(steps))
	}
	for _, s := range steps {
		if s.Component != ComponentContainerd || s.Disruption != DisruptionNone || !strings.Contains(s.Detail, "without a restart") {
			t.Errorf("step %+v", s)
		}
		for _, it := range s.Changes {
			if it.Kind != KindFile || it.Name != render.ContainerdHostsPath("registry.k8s.io") {
				t.Errorf("%s: change %+v", s.Node, it)
			}
		}
	}
}
