package rollout

import (
	"slices"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
)

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"1.37.2", "1.37.2", true},
		{"v1.37.2", "1.37.2", true},
		{"Kubernetes v1.37.2", "1.37.2", true},
		{"3.7.3+kcore", "3.7.3", true},
		{"v1.37.0-rc.1", "1.37.0", true},
		{"1.37", "1.37", true},
		{"etcd Version: 3.6.5", "3.6.5", true},
		{"", "", false},
		{"v1", "", false},
		{"unknown", "", false},
	}
	for _, tc := range tests {
		v, ok := parseVersion(tc.in)
		if ok != tc.ok || (ok && v.String() != tc.want) {
			t.Errorf("parseVersion(%q) = %v, %t; want %s, %t", tc.in, v, ok, tc.want, tc.ok)
		}
	}
}

func TestEtcdFor(t *testing.T) {
	tests := []struct {
		k8s, etcd string
		ok        bool
	}{
		{"1.33.4", "3.5", true},
		{"1.34.0", "3.6", true},
		{"1.36.4", "3.6", true},
		{"1.37.2", "3.7", true},
		{"1.38.0", "", false},
		{"1.30.0", "", false},
	}
	for _, tc := range tests {
		k, _ := parseVersion(tc.k8s)
		e, ok := etcdFor(k)
		if ok != tc.ok || (ok && e.String() != tc.etcd) {
			t.Errorf("etcdFor(%s) = %v, %t; want %s, %t", tc.k8s, e, ok, tc.etcd, tc.ok)
		}
	}
}

// TestKubernetesSkewEdges runs the version-skew policy's edge cases on the
// big cluster, every node on from and etcd on etcd.
func TestKubernetesSkewEdges(t *testing.T) {
	tests := []struct {
		name, from, etcd, to string
		blocking, warnings   []string
		order                string
	}{
		{"1.36.4 to 1.37.2", "1.36.4", "3.6.5", "1.37.2", nil, nil, OrderControlPlaneComponentsFirst},
		{"1.35.9 to 1.37.0 skips 1.36", "1.35.9", "3.6.5", "1.37.0", repeat(CodeKubernetesVersionSkew, 8), nil, OrderWorkersFirst},
		{"1.37.2 to 1.37.1 is a patch downgrade", "1.37.2", "3.7.3", "1.37.1", nil, []string{CodeKubernetesPatchDowngrade}, OrderWorkersFirst},
		{"1.37.1 to 1.37.2 is a patch upgrade", "1.37.1", "3.7.3", "1.37.2", nil, nil, OrderControlPlanesFirst},
		{"1.37.2 to 1.36.9 is a minor downgrade", "1.37.2", "3.7.3", "1.36.9", append(repeat(CodeKubernetesVersionSkew, 8), repeat(CodeEtcdUpgradePath, 3)...), nil, OrderWorkersFirst},
		{"2.0.0 is another major", "1.37.2", "3.7.3", "2.0.0", repeat(CodeKubernetesVersionSkew, 8), []string{CodeEtcdVersionUnknown}, OrderWorkersFirst},
		{"1.38.0 has no known etcd", "1.37.2", "3.7.3", "1.38.0", nil, []string{CodeEtcdVersionUnknown}, OrderControlPlaneComponentsFirst},
		{"etcd 3.6 to 3.7 with 1.37", "1.36.4", "3.6.0", "1.37.0", nil, nil, OrderControlPlaneComponentsFirst},
		{"etcd 3.5 to 3.7 skips 3.6", "1.36.4", "3.5.21", "1.37.0", repeat(CodeEtcdUpgradePath, 3), nil, OrderControlPlaneComponentsFirst},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := update(func(s *api.UpdateSpec) { s.TestedOSPins.KubernetesVersion = tc.to })
			p := Plan(Input{Update: u, Clusters: []*api.KubernetesCluster{bigCluster()}, Nodes: bigNodes(tc.from, tc.etcd)})
			if got := codes(p.Blocking); !slices.Equal(got, tc.blocking) {
				t.Errorf("blocking = %v, want %v\n%v", got, tc.blocking, p.Blocking)
			}
			if got := codes(p.Warnings); !slices.Equal(got, tc.warnings) {
				t.Errorf("warnings = %v, want %v", got, tc.warnings)
			}
			if p.Order != tc.order {
				t.Errorf("order = %s, want %s", p.Order, tc.order)
			}
		})
	}
}

// TestWholeNodeMinorUpgradeBreaksSkew shows why a minor upgrade splits the
// control planes: moving whole control-plane nodes first leaves the first
// node's kubelet newer than the API servers not yet upgraded, which the
// projection catches; the split order passes.
func TestWholeNodeMinorUpgradeBreaksSkew(t *testing.T) {
	u := update(func(s *api.UpdateSpec) { s.TestedOSPins.KubernetesVersion = "1.37.2" })
	e := newEnv(Input{Update: u, Clusters: []*api.KubernetesCluster{bigCluster()}, Nodes: bigNodes("1.36.4", "3.6.5")})
	targets, _ := e.targets()
	to, _ := parseVersion("1.37.2")
	tests := []struct {
		order string
		want  string
	}{
		{OrderControlPlanesFirst, "after step 1 (node-01) the kubelet on node-01 would be 1.37.2, newer than the API server on node-02 (1.36.4)"},
		{OrderWorkersFirst, "after step 1 (node-11) the kubelet on node-11 would be 1.37.2, newer than the API server on node-01 (1.36.4)"},
		{OrderControlPlaneComponentsFirst, ""},
	}
	for _, tc := range tests {
		got := checkProjection(e, e.steps(targets, tc.order, 1), to)
		switch {
		case tc.want == "" && len(got) > 0:
			t.Errorf("%s: %v", tc.order, got)
		case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0].Message, tc.want)):
			t.Errorf("%s: got %v, want %q", tc.order, got, tc.want)
		}
	}
}

func TestAPIServersOneMinorApart(t *testing.T) {
	st := skewState{
		api:     map[string]version{"a": {1, 37, 0}, "b": {1, 35, 2}},
		kubelet: map[string]version{},
	}
	if node, msg := st.violation(); node != "b" || !strings.Contains(msg, "more than one minor version apart") {
		t.Errorf("violation = %s, %q", node, msg)
	}
	st.api["b"] = version{1, 36, 2}
	if node, msg := st.violation(); msg != "" {
		t.Errorf("1.37 and 1.36: violation %s, %q", node, msg)
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}
